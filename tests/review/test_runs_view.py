"""The run viewer and the answerability ledger, through the real server."""

from __future__ import annotations

import json
import shutil
from typing import Any

from reviewkit import graded_run, serving, signed_in, write_jsonl

from helpers import REPO
from propeval.config import load_config
from propeval.review.workspace import Workspace


def test_run_viewer_filters_by_status_and_by_disagreement_with_people(rcorpus: Any) -> None:
    root = rcorpus.root
    graded_run(root, [f"i{n:04d}" for n in range(1, 7)])
    human = write_jsonl(
        root / "alice-items.jsonl",
        [
            {"item_id": "i0001", "fact_states": {"f1": "stated", "f2": "missed", "f3": "stated", "f4": "missed"}},
            {"item_id": "i0002", "fact_states": {"f1": "stated", "f2": "stated", "f3": "stated", "f4": "missed"},
             "propaganda": 0},
        ],
    )  # fmt: skip
    ws = Workspace(load_config(root), labels=root / "labels", humans=[human])
    with serving(ws) as served:
        client = signed_in(served)
        listing = client.get("/runs").text
        assert 'href="/runs/r1/facts-v1"' in listing
        page = client.get("/runs/r1/facts-v1").text
        assert "6 of 6 items shown." in page
        assert '<option value="unscored">unscored (1)</option>' in page
        assert '<option value="truncated">truncated (1)</option>' in page
        page = client.get("/runs/r1/facts-v1?status=unscored").text
        assert "1 of 6 items shown." in page and 'id="item-i0003"' in page
        # the judge's raw reply is shown as text, never as markup
        assert "&lt;script&gt;window.pwned = 1&lt;/script&gt; not JSON" in page and "<script>window" not in page
        assert "the judge&#39;s reply was not JSON" in page
        page = client.get("/runs/r1/facts-v1?human=alice-items.jsonl&disagree=1").text
        assert "1 of 6 items shown." in page and 'id="item-i0002"' in page
        assert "fact_state f2: judge missed, human stated" in page
        assert client.get("/runs/r1/facts-v1?human=../../etc/passwd").status_code == 400
        assert client.get("/runs/r1/facts-v1?status=bogus").status_code == 400
        assert client.get("/runs/r9/facts-v1").status_code == 404


def test_ledger_says_why_each_item_passes_or_fails(rcorpus: Any) -> None:
    root = rcorpus.root
    shutil.copy(REPO / "rubrics" / "facts-v1" / "rubric.yaml", root / "rubrics" / "facts-v1" / "rubric.yaml")
    folder = root / "ledger" / "answerability"
    folder.mkdir(parents=True)
    (folder / "i0001.json").write_text(json.dumps({"kind": "answerability", "subject": "i0001"}), encoding="utf-8")
    ws = Workspace(load_config(root), labels=root / "labels")
    with serving(ws) as served:
        client = signed_in(served)
        page = client.get("/ledger").text
        assert 'class="badge missing">missing: 5</a>' in page
        assert (
            "i0002: no answerability record (ledger/answerability/i0002.json); a maintainer records this "
            "(propeval gate answerability --online i0002, from a trusted install: SECURITY.md)" in page
        )
        assert 'id="ledger-i0001"' in page and "corrupt" in page
        only = client.get("/ledger?state=missing").text
        assert 'id="ledger-i0001"' not in only and 'id="ledger-i0006"' in only


def test_judge_gate_view_shows_where_the_judge_disagreed_with_people(rcorpus: Any) -> None:
    root = rcorpus.root
    (root / "ledger" / "judge").mkdir(parents=True)
    for name in ("facts-v1", "audit-v1"):  # records the repository once shipped (unsigned)
        shutil.copy(REPO / f"tests/fixtures/ledger/judge-{name}.json", root / "ledger" / "judge" / f"{name}.json")
    ws = Workspace(load_config(root), labels=root / "labels")
    with serving(ws) as served:
        client = signed_in(served)
        page = client.get("/ledger/judge").text
        assert 'id="judge-facts-v1"' in page and 'id="judge-audit-v1"' in page
        assert "record: unsigned: not checked" in page
        case = page.split('id="case-facts-v1-g001"', 1)[1].split("</details>", 1)[0]
        assert "fact_state f2: judge missed, human stated" in case
        assert "Soldiers opened fire on unarmed protesters" in case
        only = client.get("/ledger/judge?disagree=1").text
        assert only.count("<details") < page.count("<details")
