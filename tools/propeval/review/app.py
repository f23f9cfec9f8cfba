"""The review app: Starlette routes over the workspace, Jinja2 pages (autoescaped), one script.

Pages: ``/`` (what there is to do), ``/rate/<source>/<n>`` (one answer), ``/dedup`` (the queue) and
``/dedup/pair`` (one pair), ``/runs`` and ``/runs/<run>/<rubric>`` (the run viewer), ``/ledger`` (the
answerability ledger). Writes are POSTs checked by :mod:`propeval.review.security`; every write goes
through propeval's own writers (:mod:`propeval.review.rating`, :mod:`propeval.review.actions`).

Each handler is a plain function (Starlette runs it on its thread pool), since the work is file
reading and writing; data reaches a page only through a template (escaped) or as JSON read by the
script with ``textContent`` (never ``innerHTML``).
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from propeval.errors import PropevalError
from propeval.review import security
from propeval.review.dedup_runner import DedupRunner
from propeval.review.rating import agree_command, label_files, rater_name
from propeval.review.workspace import Workspace

HERE = Path(__file__).parent
MAX_BODY = 1 << 20  # a label or a form is a few hundred bytes
MAX_REASON = 2000


@dataclass
class ReviewApp:
    """What the routes share: the workspace, the dedup runner, the results of recent actions."""

    workspace: Workspace
    dedup: DedupRunner
    token: str
    results: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _env() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: data is text, never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["qs"] = lambda d: urlencode({k: v for k, v in d.items() if v not in (None, "")})
    env.filters["url"] = lambda s: quote(str(s), safe="")
    env.filters["pretty"] = lambda v: json.dumps(v, ensure_ascii=False, indent=1)  # text, escaped on output
    env.filters["num"] = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    return env


def build_app(
    workspace: Workspace,
    *,
    token: str,
    port: int,
    allowed_hosts: list[str] | None = None,
    dedup: DedupRunner | None = None,
) -> Starlette:
    """The ASGI app. ``allowed_hosts`` (default: the loopback names) are the Host headers served."""
    env = _env()
    state = ReviewApp(workspace, dedup or DedupRunner(workspace.config), token)

    def page(request: Request, name: str, http_status: int = 200, **context: Any) -> HTMLResponse:
        session = request.session
        context.update(
            csrf=security.csrf_token(session),
            rater=session.get("rater") or "",
            nav=name.split(".")[0],
        )
        return HTMLResponse(env.get_template(name).render(**context), status_code=http_status)

    def error(request: Request, status: int, message: str) -> HTMLResponse:
        return page(request, "error.html.j2", http_status=status, message=message)

    async def form_of(request: Request) -> dict[str, str] | Response:
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return PlainTextResponse("the form is too large\n", status_code=413)
        form = await request.form(max_files=0, max_fields=20)
        data = {k: v for k, v in form.items() if isinstance(v, str)}
        if not security.csrf_ok(request.session, data.get(security.CSRF_FIELD)):
            return PlainTextResponse(
                "propeval review: the form's CSRF token is missing or stale; reload the page\n", status_code=403
            )
        return data

    # ------------------------------------------------------------------ home and rater

    def home(request: Request) -> Response:
        entries = workspace.sources()
        rater = request.session.get("rater") or ""
        progress: dict[str, tuple[int, int] | str] = {}
        for e in entries:
            if e.error or not rater:
                continue
            try:
                progress[e.slug] = workspace.store(e.slug, rater).progress()
            except PropevalError as err:
                progress[e.slug] = str(err)
        return page(
            request,
            "home.html.j2",
            entries=entries,
            progress=progress,
            labels=workspace.labels,
            message=request.query_params.get("message", ""),
        )

    async def set_rater(request: Request) -> Response:
        data = await form_of(request)
        if isinstance(data, Response):
            return data
        try:
            name = rater_name(data.get("name", ""))
        except PropevalError as e:
            return RedirectResponse("/?" + urlencode({"message": str(e)}), 303)
        request.session["rater"] = name
        back = data.get("next", "/")
        return RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/", 303)

    # ------------------------------------------------------------------ rating

    def _source_or_error(request: Request, slug: str) -> Any:
        try:
            return workspace.source(slug)
        except KeyError:
            return error(request, 404, f"no source {slug!r}; pick one on the first page")
        except PropevalError as e:
            return error(request, 422, str(e))

    def rate_start(request: Request) -> Response:
        slug = request.path_params["source"]
        rater = request.session.get("rater")
        if not rater:
            return RedirectResponse("/?" + urlencode({"message": "say who you are first: your rater name"}), 303)
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        try:
            n = workspace.store(slug, rater).first_open() + 1
        except PropevalError as e:
            return error(request, 422, str(e))
        return RedirectResponse(f"/rate/{quote(slug)}/{n}", 303)

    def rate_unit(request: Request) -> Response:
        slug, n = request.path_params["source"], request.path_params["n"]
        rater = request.session.get("rater")
        if not rater:
            return RedirectResponse("/?" + urlencode({"message": "say who you are first: your rater name"}), 303)
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        if not 1 <= n <= len(src.units):
            return error(request, 404, f"{src.relpath} has {len(src.units)} answers; there is no answer {n}")
        try:
            store = workspace.store(slug, rater)
            unit = src.units[n - 1]
            st = store.state(unit.key)
            done, total = store.progress()
        except PropevalError as e:
            return error(request, 422, str(e))
        steps = src.steps(unit)
        selected = {}
        for s in steps:
            if s.name in st.values:
                chosen = s.choice(st.values[s.name])
                if chosen is not None:
                    selected[s.name] = s.choices.index(chosen)
        outcome = src.form.outcome(st.values, st.quote, unit.facts, unit.answer)
        data = {
            "save": f"/rate/{quote(slug)}/{n}/label",
            "next": f"/rate/{quote(slug)}/{n + 1}" if n < total else None,
            "prev": f"/rate/{quote(slug)}/{n - 1}" if n > 1 else None,
            "steps": [
                {
                    "name": s.name,
                    "choices": [{"value": c.value, "key": c.key} for c in s.choices],
                    "sets_all": s.sets_all,
                }
                for s in steps
            ],
            "values": st.values,
            "quote": st.quote,
            "done": st.done,
            "labelled": outcome.fields is not None,
            "finish": f"/rate/{quote(slug)}/files",
            "quote_step": "propaganda" if any(s.name == "propaganda" for s in steps) else None,
        }
        return page(
            request,
            "rate.html.j2",
            src=src,
            unit=unit,
            n=n,
            total=total,
            done=done,
            steps=steps,
            state=st,
            outcome=outcome,
            data=data,
            selected=selected,
        )

    async def rate_save(request: Request) -> Response:
        slug, n = request.path_params["source"], request.path_params["n"]
        rater = request.session.get("rater")
        if not security.csrf_ok(request.session, request.headers.get(security.CSRF_HEADER)):
            return JSONResponse({"error": "the CSRF token is missing or stale; reload the page"}, 403)
        if not rater:
            return JSONResponse({"error": "say who you are first: your rater name"}, 403)
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return JSONResponse({"error": "too large"}, 413)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        values, quote_ = body.get("values") if isinstance(body, dict) else None, body.get("quote")
        if not isinstance(values, dict) or not (quote_ is None or isinstance(quote_, str)):
            return JSONResponse({"error": "send {values: {...}, quote: text or null}"}, 400)

        def save() -> Response:
            try:
                src = workspace.source(slug)
                if not 1 <= n <= len(src.units):
                    return JSONResponse({"error": f"no answer {n}"}, 404)
                store = workspace.store(slug, rater)
                result = store.save(src.units[n - 1].key, values, quote_ or None)
            except KeyError:
                return JSONResponse({"error": f"no source {slug!r}"}, 404)
            except PropevalError as e:
                return JSONResponse({"error": str(e)}, 422)
            return JSONResponse(
                {
                    "labelled": result.outcome.fields is not None,
                    "done": result.state.done,
                    "complete": result.outcome.complete,
                    "errors": result.outcome.errors,
                    "needs_quote": result.outcome.needs_quote,
                    "labels": result.outcome.fields,
                    "progress": [result.done, len(src.units)],
                }
            )

        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(save)

    def rate_files(request: Request) -> Response:
        slug = request.path_params["source"]
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        files = label_files(workspace.labels, src)
        return page(
            request,
            "files.html.j2",
            src=src,
            files=[workspace.shown_path(p) for p in files],
            commands=agree_command(src, files, workspace.config.root),
        )

    # ------------------------------------------------------------------ dedup

    def dedup_queue(request: Request) -> Response:
        state.dedup.ensure()
        return page(request, "dedup.html.j2", run=state.dedup.status)

    def dedup_status(request: Request) -> Response:
        st = state.dedup.status
        q = st.queue
        return JSONResponse(
            {"state": st.state, "done": st.done, "total": st.total, "pairs": len(q.pairs) if q else None}
        )

    async def dedup_rerun(request: Request) -> Response:
        data = await form_of(request)
        if isinstance(data, Response):
            return data
        state.dedup.start()
        return RedirectResponse("/dedup", 303)

    def dedup_pair(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        q = state.dedup.status.queue
        pair = q.find(a, b) if q else None
        if pair is None:
            return error(request, 404, f"no flagged pair {a} / {b} in the last dedup run")
        corpus = workspace.corpus()
        items = {i: corpus.items.get(i) for i in pair.ids}
        return page(
            request,
            "pair.html.j2",
            pair=pair,
            diff=pair.diff(),
            items=items,
            settled=state.dedup.status.settled,
            queue=q,
        )

    async def dedup_action(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        from propeval.review import actions

        data = await form_of(request)
        if isinstance(data, Response):
            return data
        action = request.path_params["action"]
        reason = data.get("reason", "").strip()
        if len(reason) > MAX_REASON:
            return error(request, 422, f"the reason is over {MAX_REASON} characters")
        config = workspace.config
        if action == "keep":
            reviewer = request.session.get("rater") or ""
            if not reviewer:
                return error(request, 422, "say who you are first (your name on the first page): it is the reviewer")
            result = await run_in_threadpool(
                actions.keep_both, config, data.get("a", ""), data.get("b", ""), reason=reason, reviewer=reviewer
            )
            done = "kept both (unsigned, waiting for a maintainer's signature)"
        elif action == "retire":
            result = await run_in_threadpool(actions.retire_item, config, data.get("item", ""), reason=reason)
            done = "retired"
        elif action == "move":
            result = await run_in_threadpool(
                actions.move_item,
                config,
                data.get("item", ""),
                to_claim=data.get("to_claim", ""),
                translation_of=data.get("translation_of") or None,
            )
            done = "moved"
        else:
            return error(request, 404, f"no action {action!r}")
        if result.ok:
            state.dedup.settle(result.changed, done)
        key = secrets.token_urlsafe(8)
        with state.lock:
            if len(state.results) > 200:
                state.results.clear()
            state.results[key] = (result, data.get("a", ""), data.get("b", ""))
        return RedirectResponse(f"/dedup/result/{key}", 303)

    def dedup_result(request: Request) -> Response:
        found = state.results.get(request.path_params["key"])
        if found is None:
            return error(request, 404, "that result is gone (the server restarted); see the queue")
        result, a, b = found
        return page(request, "result.html.j2", result=result, a=a, b=b)

    # ------------------------------------------------------------------ runs and ledger

    def runs_list(request: Request) -> Response:
        from propeval.review.runs_view import graded_files

        return page(request, "runs.html.j2", files=graded_files(workspace.config), humans=workspace.humans)

    def run_page(request: Request) -> Response:
        from propeval.review.runs_view import STATUSES, graded_files, run_view

        run, rubric = request.path_params["run"], request.path_params["rubric"]
        found = [g for g in graded_files(workspace.config) if g.run == run and g.rubric == rubric]
        if not found:
            return error(request, 404, f"no graded run {run} under {rubric}")
        status = request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            return error(request, 400, f"status must be one of {', '.join(STATUSES)}")
        human_name = request.query_params.get("human") or None
        human = next((h for h in workspace.humans if workspace.shown_path(h) == human_name), None)
        if human_name and human is None:
            return error(request, 400, f"{human_name} is not a human label file given with --human")
        try:
            view = run_view(
                workspace.config,
                workspace.corpus(),
                found[0],
                status=status,
                human=human,
                disagree_only=request.query_params.get("disagree") == "1",
            )
        except PropevalError as e:
            return error(request, 422, str(e))
        return page(
            request,
            "run.html.j2",
            view=view,
            status=status,
            statuses=STATUSES,
            humans=[workspace.shown_path(h) for h in workspace.humans],
            human=human_name,
            disagree=request.query_params.get("disagree") == "1",
        )

    def ledger(request: Request) -> Response:
        from propeval.review.runs_view import answerability_rows

        try:
            rows, mode = answerability_rows(workspace.workspace())
        except PropevalError as e:
            return error(request, 422, str(e))
        state_filter = request.query_params.get("state") or None
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.state] = counts.get(r.state, 0) + 1
        shown = [r for r in rows if state_filter is None or r.state == state_filter]
        return page(request, "ledger.html.j2", rows=shown, counts=counts, mode=mode, state_filter=state_filter)

    def ledger_judge(request: Request) -> Response:
        from propeval.review.runs_view import judge_views

        try:
            views = judge_views(workspace.workspace())
        except PropevalError as e:
            return error(request, 422, str(e))
        only = request.query_params.get("disagree") == "1"
        return page(request, "judge.html.j2", views=views, only=only)

    routes = [
        Route("/", home),
        Route("/rater", set_rater, methods=["POST"]),
        Route("/rate/{source}", rate_start),
        Route("/rate/{source}/files", rate_files),
        Route("/rate/{source}/{n:int}", rate_unit),
        Route("/rate/{source}/{n:int}/label", rate_save, methods=["POST"]),
        Route("/dedup", dedup_queue),
        Route("/dedup/status", dedup_status),
        Route("/dedup/rerun", dedup_rerun, methods=["POST"]),
        Route("/dedup/pair", dedup_pair),
        Route("/dedup/result/{key}", dedup_result),
        Route("/dedup/{action}", dedup_action, methods=["POST"]),
        Route("/runs", runs_list),
        Route("/runs/{run}/{rubric}", run_page),
        Route("/ledger", ledger),
        Route("/ledger/judge", ledger_judge),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or security.LOOPBACK_HOSTS),
        Middleware(
            SessionMiddleware,
            secret_key=secrets.token_urlsafe(32),
            session_cookie=f"propeval_review_{port}",
            same_site="strict",
            https_only=False,
            max_age=None,
        ),
        Middleware(security.Guard, token=token),
    ]

    async def bug(request: Request, exc: Exception) -> Response:
        """An unexpected exception is a bug: its traceback goes to a file, the page says where."""
        from propeval import crash

        line = crash.bug_line(exc, crash.write_report(exc))
        return PlainTextResponse(line + "\n", status_code=500)

    return Starlette(routes=routes, middleware=middleware, exception_handlers={Exception: bug})
