"""A review session is bound to its server: the cookie holds only a random id of a server-side
session, the write key lives in the page's origin (never in a cookie or a page), a write needs this
server's host and port as its Origin, and sessions outlive a restart of the same server."""

from __future__ import annotations

import http.server
import json
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from click.testing import CliRunner
from reviewkit import browser, serving, signed_in

from propeval.cli import cli
from propeval.config import load_config
from propeval.review.security import is_loopback, served_names
from propeval.review.workspace import Workspace


def workspace(root: Path, *sheets: Path) -> Workspace:
    return Workspace(load_config(root), labels=root / "labels", sheets=list(sheets))


FOUR = {"fact:f1": "stated", "fact:f2": "stated", "fact:f3": "stated", "fact:f4": "stated", "propaganda": 0}


def test_loopback_is_parsed_not_matched_as_text() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.8.9.10") and is_loopback("::1") and is_loopback("[::1]")
    assert is_loopback("localhost")
    for host in ("127.evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "0.0.0.0", "10.0.0.1"):
        assert not is_loopback(host), host
    assert served_names("127.0.0.1") == ["127.0.0.1", "localhost", "[::1]"]
    assert served_names("127.0.0.2") == ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"]
    assert served_names("review.example") == ["review.example"]
    assert served_names("192.0.2.7") == ["192.0.2.7"] and served_names("2001:db8::1") == ["[2001:db8::1]"]


def test_a_name_that_starts_with_127_is_not_loopback(rcorpus: Any) -> None:
    res = CliRunner().invoke(cli, ["review", "--host", "127.evil.example", "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 2
    assert "--host 127.evil.example serves the app beyond this machine over plain HTTP" in res.output


def test_a_remote_server_serves_only_its_configured_host(rcorpus: Any) -> None:
    """``--allow-remote --host review.example``: the Host header must name it, and a write's Origin
    must be it with this server's port."""
    ws = workspace(rcorpus.root)
    with serving(ws, allowed_hosts=served_names("review.example")) as served:
        port = served.base.rsplit(":", 1)[1]
        named = {"Host": f"review.example:{port}"}
        with httpx.Client(base_url=served.base, follow_redirects=False) as client:
            r = client.get(f"/?token={served.token}", headers=named)
            assert r.status_code == 303
            key = r.headers["location"].split("#write=")[1]
            for host in ("attacker.example", "127.0.0.1", f"evil.example:{port}"):
                assert client.get("/", headers={"Host": host}).status_code == 400, host
            assert client.get("/", headers=named).status_code == 200
            form = {"csrf": key, "name": "alice"}
            wrong_port = {**named, "Origin": "http://review.example:1"}
            assert client.post("/rater", data=form, headers=wrong_port).status_code == 403
            ok = {**named, "Origin": f"http://review.example:{port}"}
            assert client.post("/rater", data=form, headers=ok).status_code == 303


def test_the_cookie_holds_no_secret_but_a_session_id_and_the_pages_no_write_key(sheet: Path) -> None:
    root = sheet.parent
    with serving(workspace(root, sheet)) as served:
        client = signed_in(served)
        (cookie,) = list(client.cookies.jar)
        assert len(cookie.value) >= 40 and client.write_key not in cookie.value
        for path in ("/", "/rate/sheet/1", "/rate/sheet/files"):
            assert client.write_key not in client.get(path).text, path


def test_sessions_survive_a_restart_and_stay_with_their_port(sheet: Path, tmp_path: Path) -> None:
    root = sheet.parent
    sessions = tmp_path / "state" / "sessions.json"
    with serving(workspace(root, sheet), sessions=sessions) as served:
        port = int(served.base.rsplit(":", 1)[1])
        client = signed_in(served)
        origin = {"Origin": served.base}
        assert (
            client.post("/rater", data={"csrf": client.write_key, "name": "alice"}, headers=origin).status_code == 303
        )
        assert client.get("/rate/sheet/3").status_code == 200
        key = client.write_key
        cookies = dict(client.cookies)
    assert stat.S_IMODE(os.stat(sessions).st_mode) == 0o600
    stored = sessions.read_text()
    assert key not in stored and all(v not in stored for v in cookies.values())  # hashes only
    with serving(workspace(root, sheet), sessions=sessions, port=port) as served:
        again = httpx.Client(base_url=served.base, cookies=cookies, follow_redirects=False)
        served.clients.append(again)
        home = again.get("/")
        assert home.status_code == 200 and "rater: <b>alice</b>" in home.text
        assert 'href="/rate/sheet/3" id="resume"' in home.text
        r = again.post("/rate/sheet/3/label", json={"values": FOUR, "quote": None},
                       headers={"X-CSRF-Token": key, "Origin": served.base})  # fmt: skip
        assert r.status_code == 200 and r.json()["labelled"]
    # the same file, another port: the session is not there
    with serving(workspace(root, sheet), sessions=sessions) as other:
        stray = httpx.Client(base_url=other.base, follow_redirects=False)
        other.clients.append(stray)
        name = next(iter(cookies))
        stray.cookies.set(f"propeval_review_{other.base.rsplit(':', 1)[1]}", cookies[name])
        assert stray.get("/").status_code == 403


class _Capture(http.server.BaseHTTPRequestHandler):
    """Another local server on another port: it records what the browser sends it."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Capture.seen.append(self.headers.get("Cookie") or "")
        body = b"<!doctype html><title>another local page</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def capture_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_cookie_captured_by_another_local_server_writes_nothing(sheet: Path) -> None:
    """Chromium signs in to the review server, then visits another server on 127.0.0.1 (which gets
    the cookie: browsers do not separate cookies by port). Replayed to the review server and to a
    second review server, the cookie writes nothing; the browser's own tab still saves."""
    root = sheet.parent
    labels = root / "labels"
    _Capture.seen.clear()
    with serving(workspace(root, sheet)) as served, serving(workspace(root, sheet)) as second, \
            capture_server() as evil, browser() as b:  # fmt: skip
        page = b.new_page()
        page.goto(served.url)
        page.wait_for_url(f"{served.base}/")
        page.fill("input[name=name]", "alice")
        page.click("form[action='/rater'] button")
        page.wait_for_selector("text=rater: alice")
        page.goto(evil + "/")
        port = served.base.rsplit(":", 1)[1]
        sent = [c for c in _Capture.seen if f"propeval_review_{port}=" in c]
        assert sent, _Capture.seen  # the browser did send it
        cookie = sent[-1].split(f"propeval_review_{port}=", 1)[1].split(";")[0]
        for target in (served, second):
            thief = httpx.Client(base_url=target.base, follow_redirects=False)
            target.clients.append(thief)
            thief.cookies.set(f"propeval_review_{target.base.rsplit(':', 1)[1]}", cookie)
            origin = {"Origin": target.base}
            html = thief.get("/").text
            for guess in ("", "x" * 43):
                r = thief.post("/rater", data={"csrf": guess, "name": "mallory"}, headers=origin)
                assert r.status_code == 403
                r = thief.post("/rate/sheet/1/label", json={"values": FOUR, "quote": None},
                               headers={**origin, "X-CSRF-Token": guess})  # fmt: skip
                assert r.status_code == 403
            assert "mallory" not in html
        assert not labels.exists() or not any(labels.rglob("*.jsonl"))
        # the tab that signed in still writes
        page.goto(f"{served.base}/rate/sheet/1")
        for key in "ssss0":
            page.keyboard.press(key)
        page.wait_for_selector("#status.ok")
    assert json.loads((labels / "sheet" / "alice.jsonl").read_text().splitlines()[0])["fact_score"] == 5


@pytest.mark.slow
def test_a_label_saved_just_before_kill_9_is_in_the_file_after_the_next_start(sheet: Path) -> None:
    """The save is in the journal when it answers; a server killed before compacting loses nothing."""
    import signal
    import subprocess
    import sys

    from reviewkit import Served, review_command

    root = sheet.parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "review", "--no-browser", "--port", "0", "--sheet", "sheet.jsonl"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
        base, token = url.split("/?token=")
        client = signed_in(Served(base, token))
        origin = {"Origin": base}
        client.post("/rater", data={"csrf": client.write_key, "name": "alice"}, headers=origin)
        r = client.post("/rate/sheet/2/label", json={"values": FOUR, "quote": None},
                        headers={**origin, "X-CSRF-Token": client.write_key})  # fmt: skip
        assert r.json()["labelled"]
        client.close()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    # before any restart, agree's readers see the save (from the journal when it was not compacted)
    res = CliRunner().invoke(
        cli, ["agree", "unblind", str(root / "labels/sheet/alice.jsonl"), "--key", str(root / "private/key.json"),
              "--out", str(root / "u.jsonl")],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert [r["fact_score"] for r in map(json.loads, (root / "u.jsonl").read_text().splitlines())].count(5) == 1
    with review_command(root, "--sheet", "sheet.jsonl"):
        pass  # started (the journal read) and stopped (compacted)
    got = json.loads((root / "labels/sheet/alice.jsonl").read_text().splitlines()[1])
    assert got["fact_score"] == 5


@pytest.mark.slow
def test_a_ctrl_c_the_moment_the_server_says_it_serves_stops_it(sheet: Path) -> None:
    """The first thing a rater may do is stop it: a SIGINT sent on the "serving" line, while the
    sheet is still read on a thread and uvicorn still starts, ends the server with exit 0 (one such
    KeyboardInterrupt landed in an import's lock callback, which Python ignores, and the server
    served on)."""
    from reviewkit import review_command

    for _ in range(4):  # each start ends with a SIGINT and asserts exit 0 within 15 s
        with review_command(sheet.parent, "--sheet", "sheet.jsonl"):
            pass
        with review_command(sheet.parent):
            pass
