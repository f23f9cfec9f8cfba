"""The dedup views: the queue of flagged pairs (``/dedup``, run in the background), one pair side by
side (``/dedup/pair``), and the actions on it (keep both, retire, move), with their results."""

from __future__ import annotations

import secrets
import threading
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from propeval.review.dedup_runner import DedupRunner
from propeval.review.dedup_view import pair_text, stale_entries
from propeval.review.pages import Pages, paged, session_of

MAX_REASON = 2000
MAX_RESULTS = 200


def routes(pages: Pages, runner: DedupRunner) -> list[Route]:
    workspace = pages.workspace
    results: dict[str, Any] = {}
    undo: list[Any] = []  # the last action's snapshot, while it can be undone
    lock = threading.Lock()

    def dedup_queue(request: Request) -> Response:
        runner.ensure()
        q = runner.status.queue
        pairs = q.pairs if q else []
        shown = paged(request, pairs, workspace.texts(pairs, pair_text))
        return pages.page(
            request,
            "dedup.html.j2",
            run=runner.status,
            shown=shown,
            stale=stale_entries(q) if q else [],
            undo=undo[0].what if undo else "",
        )

    def dedup_status(request: Request) -> Response:
        st = runner.status
        q = st.queue
        return JSONResponse(
            {"state": st.state, "done": st.done, "total": st.total, "pairs": len(q.pairs) if q else None}
        )

    async def dedup_rerun(request: Request) -> Response:
        data = await pages.form_of(request)
        if isinstance(data, Response):
            return data
        runner.start()
        return RedirectResponse("/dedup", 303)

    def dedup_pair(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        q = runner.status.queue
        pair = q.find(a, b) if q else None
        if pair is None:
            return pages.error(request, 404, f"no flagged pair {a} / {b} in the last dedup run")
        corpus = workspace.corpus()
        items = {i: corpus.items.get(i) for i in pair.ids}
        return pages.page(
            request,
            "pair.html.j2",
            pair=pair,
            diff=pair.diff(),
            items=items,
            settled=runner.status.settled,
            queue=q,
        )

    def remember(result: Any, a: str, b: str) -> RedirectResponse:
        key = secrets.token_urlsafe(8)
        with lock:
            if len(results) > MAX_RESULTS:
                results.clear()
            results[key] = (result, a, b)
        return RedirectResponse(f"/dedup/result/{key}", 303)

    async def dedup_action(request: Request) -> Response:
        from propeval.review import actions

        data = await pages.form_of(request)
        if isinstance(data, Response):
            return data
        action = request.path_params["action"]
        reason = data.get("reason", "").strip()
        if len(reason) > MAX_REASON:
            return pages.error(request, 422, f"the reason is over {MAX_REASON} characters")
        config = workspace.config
        a, b, item = data.get("a", ""), data.get("b", ""), data.get("item", "")
        if action in ("retire", "move") and data.get("confirm") != "1":
            # files change at once and for everyone: say what will happen, and ask
            fields = {k: v for k, v in data.items() if k in ("a", "b", "item", "reason", "to_claim", "translation_of")}
            return pages.page(request, "confirm.html.j2", action=action, fields=fields, a=a, b=b, item=item)
        if action == "keep":
            reviewer = session_of(request).get("rater") or ""
            if not reviewer:
                return pages.error(
                    request, 422, "say who you are first (your name on the first page): it is the reviewer"
                )
            snap = await run_in_threadpool(actions.snapshot, config, f"kept {a} / {b}", (), ())
            result = await run_in_threadpool(actions.keep_both, config, a, b, reason=reason, reviewer=reviewer)
            done = "kept both (unsigned, waiting for a maintainer's signature)"
        elif action == "retire":
            snap = await run_in_threadpool(actions.snapshot, config, f"retired {item}", (item,), ())
            result = await run_in_threadpool(actions.retire_item, config, item, reason=reason)
            done = "retired"
        elif action == "move":
            to_claim = data.get("to_claim", "")
            what = f"moved {item} to {to_claim}"
            snap = await run_in_threadpool(actions.snapshot, config, what, (item,), (to_claim,))
            result = await run_in_threadpool(
                actions.move_item, config, item, to_claim=to_claim, translation_of=data.get("translation_of") or None
            )
            done = "moved"
        elif action == "unallow":
            snap = await run_in_threadpool(actions.snapshot, config, f"deleted the entry {a} / {b}", (), ())
            result = await run_in_threadpool(actions.remove_allow_entry, config, a, b)
            done = "its allowlist entry deleted"
        else:
            return pages.error(request, 404, f"no action {action!r}")
        if result.ok:
            workspace.invalidate()
            runner.settle(result.changed, done)
            with lock:
                undo[:] = [snap]
        return remember(result, a, b)

    async def dedup_undo(request: Request) -> Response:
        from propeval.review.actions import ActionResult

        data = await pages.form_of(request)
        if isinstance(data, Response):
            return data
        with lock:
            snap = undo.pop() if undo else None
        if snap is None:
            return pages.error(request, 409, "there is no action to undo (only the last one can be, once)")
        lines = await run_in_threadpool(snap.restore)
        workspace.invalidate()
        runner.start()
        return remember(ActionResult(f"(undo) {snap.what}", True, lines), "", "")

    def dedup_result(request: Request) -> Response:
        found = results.get(request.path_params["key"])
        if found is None:
            return pages.error(request, 404, "that result is gone (the server restarted); see the queue")
        result, a, b = found
        return pages.page(request, "result.html.j2", result=result, a=a, b=b, undo=undo[0].what if undo else "")

    return [
        Route("/dedup", dedup_queue),
        Route("/dedup/status", dedup_status),
        Route("/dedup/rerun", dedup_rerun, methods=["POST"]),
        Route("/dedup/pair", dedup_pair),
        Route("/dedup/result/{key}", dedup_result),
        Route("/dedup/undo", dedup_undo, methods=["POST"]),
        Route("/dedup/{action}", dedup_action, methods=["POST"]),
    ]
