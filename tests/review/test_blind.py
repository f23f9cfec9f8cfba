"""A rating session (`--sheet`) is blind by construction: it serves the sheet and nothing else, so
no page of it names a model, a judge's verdict or an item id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewkit import serving, signed_in
from starlette.routing import Mount, Route

from propeval.config import load_config
from propeval.review.app import build_app
from propeval.review.workspace import Workspace

SECRETS = ("secret-model-x", "judge-model-y", "i0001", "i0002", "i0003", "facts-v1-gold", "audit-v1")


def _paths(app: Any) -> list[tuple[str, str]]:
    """Every route of an app, as (method, a path that matches it)."""
    fill = {"{source}": "sheet", "{n:int}": "1", "{run}": "r1", "{rubric}": "facts-v1", "{key}": "k",
            "{action}": "retire"}  # fmt: skip
    out = []
    for route in app.routes:
        if isinstance(route, Mount):
            out.append(("GET", route.path + "/review.css"))
        elif isinstance(route, Route):
            path = route.path
            for k, v in fill.items():
                path = path.replace(k, v)
            out += [(m, path) for m in sorted(route.methods or ["GET"]) if m != "HEAD"]
    return out


def test_a_rating_session_serves_the_sheet_and_nothing_else(sheet: Path) -> None:
    root = sheet.parent
    config = load_config(root)
    full = _paths(build_app(Workspace(config, labels=root / "labels"), token="t" * 32, port=1))
    rating = {("GET", "/"), ("POST", "/rater"), ("GET", "/rate/sheet"), ("GET", "/rate/sheet/files"),
              ("GET", "/rate/sheet/1"), ("POST", "/rate/sheet/1/label"), ("GET", "/static/review.css")}  # fmt: skip
    others = [p for p in full if p not in rating]
    assert {p for _, p in others} >= {"/dedup", "/runs", "/ledger", "/ledger/judge", "/runs/r1/facts-v1"}
    ws = Workspace(config, labels=root / "labels", sheets=[sheet])
    with serving(ws) as served:
        client = signed_in(served)
        origin = {"Origin": served.base}
        client.post("/rater", data={"csrf": client.write_key, "name": "alice"}, headers=origin)
        for method, path in others:
            r = client.request(method, path, headers={**origin, "X-CSRF-Token": client.write_key},
                               data={"csrf": client.write_key})  # fmt: skip
            assert r.status_code == 404, (method, path, r.status_code)
        assert client.get("/rate/facts-v1-gold/1").status_code == 404  # the gold cases are not offered
        pages = [client.get(p).text for p in ("/", "/rate/sheet/1", "/rate/sheet/2", "/rate/sheet/files")]
        for text in pages:
            assert not [s for s in SECRETS if s in text], [s for s in SECRETS if s in text]
            assert 'href="/runs"' not in text and 'href="/ledger"' not in text and 'href="/dedup"' not in text


def test_a_maintainer_session_without_a_sheet_serves_every_view(rcorpus: Any) -> None:
    ws = Workspace(load_config(rcorpus.root), labels=rcorpus.root / "labels")
    with serving(ws) as served:
        client = signed_in(served)
        for path in ("/runs", "/ledger", "/rate/facts-v1-gold/1"):
            assert client.get(path).status_code in (200, 303), path


def test_labels_and_key_folders_are_ignored_by_git() -> None:
    from helpers import REPO

    lines = (REPO / ".gitignore").read_text().splitlines()
    assert "labels/" in lines and "private/" in lines and "*.key.json" in lines


def test_the_key_goes_outside_the_repository_by_default(rcorpus: Any) -> None:
    from click.testing import CliRunner
    from platformdirs import user_data_dir
    from reviewkit import graded_run

    from propeval.cli import cli

    root = rcorpus.root
    graded_run(root, [f"i{n:04d}" for n in range(1, 7)])
    args = ["agree", "sample", "runs/r1/grades-facts-v1.jsonl", "--fraction", "1", "--seed", "7",
            "--field", "propaganda", "--out", "sheet.jsonl"]  # fmt: skip
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    key = Path(res.output.split("key in ", 1)[1].split(" (keep it", 1)[0])
    assert key.is_file() and key.is_relative_to(Path(user_data_dir("propeval")) / "keys")
    assert not key.resolve().is_relative_to(root.resolve())
    assert "i0001" in key.read_text()
