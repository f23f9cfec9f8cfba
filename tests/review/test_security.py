"""The review server keeps to its one user: the token, the Host check, same-origin writes with the
session's CSRF token, escaped text and the page headers; and `review` refuses a public address."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from reviewkit import csrf_of, review_command, serving, signed_in, write_jsonl

from propeval.cli import cli
from propeval.config import load_config
from propeval.review.workspace import Workspace

EVIL = "<script>window.pwned = 1</script><img src=x onerror=alert(1)>"


def hostile_sheet(root: Path) -> Path:
    facts = [{"id": "f1", "text": f"fact {EVIL}"}, {"id": "f2", "text": "two"}]
    rows = [
        {"row": "r001", "prompt": f"What about {EVIL}?", "answer": f"An answer {EVIL} with words enough to quote.",
         "language": "en", "facts": facts, "frame_markers": [{"language": "en", "text": EVIL}],
         "fact_states": None, "fact_score": None, "propaganda": None, "frame_adopted": None}
    ]  # fmt: skip
    return write_jsonl(root / "evil.jsonl", rows)


def test_nothing_is_served_without_the_token(rcorpus: Any) -> None:
    ws = Workspace(load_config(rcorpus.root), labels=rcorpus.root / "labels")
    with serving(ws) as served, httpx.Client(base_url=served.base) as anon:
        for path in ("/", "/rate/facts-v1-gold/1", "/ledger", "/dedup/status", "/static/review.js"):
            r = anon.get(path)
            assert r.status_code == 403, path
            assert "open the URL that `propeval review` printed" in r.text
        assert anon.get("/?token=not-the-token").status_code == 403
        r = anon.get(f"/ledger?token={served.token}")
        # the token leaves the address bar; the write key goes to the page in the fragment
        assert r.status_code == 303 and r.headers["location"].startswith("/ledger#write=")
        cookie = r.headers["set-cookie"]
        assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        assert anon.get("/ledger").status_code == 200


def test_dns_rebinding_and_cross_site_writes_are_refused(rcorpus: Any) -> None:
    ws = Workspace(load_config(rcorpus.root), labels=rcorpus.root / "labels")
    with serving(ws) as served:
        client = signed_in(served)
        assert client.get("/", headers={"Host": "attacker.example"}).status_code == 400
        csrf = csrf_of(client)
        form = {"csrf": csrf, "name": "mallory"}
        assert client.post("/rater", data=form).status_code == 403  # no Origin at all
        assert client.post("/rater", data=form, headers={"Origin": "http://attacker.example"}).status_code == 403
        same = {"Origin": served.base}
        r = client.post("/rater", data={"name": "mallory"}, headers=same)
        assert r.status_code == 403 and "this tab holds no write key of this server's session" in r.text
        r = client.post("/rater", data={"csrf": "x" * 43, "name": "mallory"}, headers=same)
        assert r.status_code == 403
        r = client.post("/rate/facts-v1-gold/1/label", json={"values": {}}, headers=same)
        assert r.status_code == 403 and "write key" in r.json()["error"]
        assert client.post("/rater", data=form, headers=same).status_code == 303
        # another session's token is not this session's
        other = signed_in(served)
        r = other.post("/rater", data=form, headers=same)
        assert r.status_code == 403


def test_text_from_files_renders_as_text(rcorpus: Any) -> None:
    sheet = hostile_sheet(rcorpus.root)
    ws = Workspace(load_config(rcorpus.root), labels=rcorpus.root / "labels", sheets=[sheet])
    with serving(ws) as served:
        client = signed_in(served)
        csrf = csrf_of(client)
        client.post("/rater", data={"csrf": csrf, "name": "alice"}, headers={"Origin": served.base})
        r = client.get("/rate/evil/1")
        assert r.status_code == 200
        assert "<script>window" not in r.text and "<img" not in r.text
        assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in r.text
        data = r.text.split('id="unit-data">', 1)[1].split("</script>", 1)[0]
        assert "<" not in data  # the JSON for the script escapes '<' too
        headers = r.headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"


def test_review_refuses_a_public_address_without_the_flag(rcorpus: Any) -> None:
    res = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 2
    assert res.output.startswith("propeval: error: --host 0.0.0.0 serves the app beyond this machine over plain HTTP")
    assert "Say so with --allow-remote (the token is the only lock)" in res.output


def test_review_says_when_the_port_is_taken(rcorpus: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = CliRunner().invoke(cli, ["review", "--port", str(port), "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 2
    assert res.output == (
        f"propeval: error: port {port} on 127.0.0.1 is in use (another propeval review?); pass --port N, "
        "or --port 0 for any free one\n"
    )


def test_a_short_fixed_token_is_refused(rcorpus: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("PROPEVAL_REVIEW_TOKEN", "short")
    res = CliRunner().invoke(cli, ["review", "--port", "0", "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 2 and "$PROPEVAL_REVIEW_TOKEN must be at least 16 characters" in res.output


@pytest.mark.slow
def test_the_command_serves_and_stops_on_ctrl_c(rcorpus: Any) -> None:
    """The real command in a subprocess: it prints the URL, serves with the token, exits 0 on Ctrl-C."""
    with review_command(rcorpus.root) as served:
        assert httpx.get(f"{served.base}/").status_code == 403
        client = signed_in(served)
        page = client.get("/").text
        assert "facts-v1: gold set (gold.jsonl)" in page and "audit-v1: gold set (gold.jsonl)" in page


@pytest.mark.slow
def test_the_command_opens_the_browser_at_the_url_it_prints(rcorpus: Any, tmp_path: Path) -> None:
    """webbrowser runs $BROWSER with the URL: here a command that writes it to a file."""
    opened = tmp_path / "opened.txt"
    env = {"BROWSER": f"sh -c 'echo \"$0\" > {opened}' %s", "DISPLAY": ""}
    with review_command(rcorpus.root, env=env, open_browser=True) as served:
        deadline = time.monotonic() + 60  # a loaded machine may take seconds to start the shell
        while time.monotonic() < deadline and not (opened.exists() and opened.read_text()):
            time.sleep(0.05)
        assert opened.read_text().strip() == served.url
