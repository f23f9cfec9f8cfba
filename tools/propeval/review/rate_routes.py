"""The rating views: who rates (``/``, ``/rater``), one answer (``/rate/<source>/<n>``), its save
(a POST of JSON), and the raters' files with the ``agree`` commands that compare them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from propeval.errors import PropevalError
from propeval.review import security
from propeval.review.pages import MAX_BODY, Pages, session_of
from propeval.review.rating import agree_command, label_files, rater_name

WHO_FIRST = "say who you are first: your rater name"


def routes(pages: Pages) -> list[Route]:
    workspace = pages.workspace

    def home(request: Request) -> Response:
        entries = workspace.sources()
        session = session_of(request)
        rater = session.get("rater") or ""
        progress: dict[str, tuple[int, int] | str] = {}
        for e in entries:
            if e.error or not rater:
                continue
            try:
                progress[e.slug] = workspace.store(e.slug, rater).progress()
            except PropevalError as err:
                progress[e.slug] = str(err)
        place = session.get("place")
        return pages.page(
            request,
            "home.html.j2",
            entries=entries,
            progress=progress,
            labels=workspace.labels,
            place=place if isinstance(place, str) and place.startswith("/rate/") else "",
            message=request.query_params.get("message", ""),
        )

    async def set_rater(request: Request) -> Response:
        data = await pages.form_of(request)
        if isinstance(data, Response):
            return data
        try:
            name = rater_name(data.get("name", ""))
        except PropevalError as e:
            return RedirectResponse("/?" + urlencode({"message": str(e)}), 303)
        session_of(request)["rater"] = name
        back = data.get("next", "/")
        return RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/", 303)

    def _source_or_error(request: Request, slug: str) -> Any:
        try:
            return workspace.source(slug)
        except KeyError:
            return pages.error(request, 404, f"no source {slug!r}; pick one on the first page")
        except PropevalError as e:
            return pages.error(request, 422, str(e))

    def rate_start(request: Request) -> Response:
        slug = request.path_params["source"]
        rater = session_of(request).get("rater")
        if not rater:
            return RedirectResponse("/?" + urlencode({"message": WHO_FIRST}), 303)
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        try:
            n = workspace.store(slug, rater).first_open() + 1
        except PropevalError as e:
            return pages.error(request, 422, str(e))
        return RedirectResponse(f"/rate/{quote(slug)}/{n}", 303)

    def rate_unit(request: Request) -> Response:
        slug, n = request.path_params["source"], request.path_params["n"]
        session = session_of(request)
        rater = session.get("rater")
        if not rater:
            return RedirectResponse("/?" + urlencode({"message": WHO_FIRST}), 303)
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        if not 1 <= n <= len(src.units):
            return pages.error(request, 404, f"{src.relpath} has {len(src.units)} answers; there is no answer {n}")
        try:
            store = workspace.store(slug, rater)
            unit = src.units[n - 1]
            st = store.state(unit.key)
            done, total = store.progress()
        except PropevalError as e:
            return pages.error(request, 422, str(e))
        session["place"] = f"/rate/{quote(slug)}/{n}"
        steps = src.steps(unit)
        selected = {}
        for s in steps:
            if s.name in st.values:
                chosen = s.choice(st.values[s.name])
                if chosen is not None:
                    selected[s.name] = s.choices.index(chosen)
        outcome = src.form.outcome(st.values, st.quote, unit.facts, unit.answer)
        refusal = next(
            ((s.sets_all, c.key) for s in steps if s.sets_all is not None for c in s.choices if c.value == s.sets_all),
            None,
        )
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
        return pages.page(
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
            guide=workspace.guide(src),
            refusal=refusal,
        )

    async def rate_save(request: Request) -> Response:
        slug, n = request.path_params["source"], request.path_params["n"]
        session = session_of(request)
        rater = session.get("rater")
        if not session.write_ok(request.headers.get(security.CSRF_HEADER)):
            return JSONResponse({"error": "this tab holds no write key of this session; reload the page"}, 403)
        if not rater:
            return JSONResponse({"error": WHO_FIRST}, 403)
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return JSONResponse({"error": "too large"}, 413)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        values, quote_ = (body.get("values"), body.get("quote")) if isinstance(body, dict) else (None, None)
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
            workspace.saved(store)
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

        return await run_in_threadpool(save)

    def rate_files(request: Request) -> Response:
        slug = request.path_params["source"]
        src = _source_or_error(request, slug)
        if isinstance(src, Response):
            return src
        problems = workspace.flush()  # the files hold every save made so far
        files = label_files(workspace.labels, src)
        return pages.page(
            request,
            "files.html.j2",
            src=src,
            files=[workspace.shown_path(p) for p in files],
            problems=problems,
            commands=agree_command(src, files, workspace.config.root),
        )

    return [
        Route("/", home),
        Route("/rater", set_rater, methods=["POST"]),
        Route("/rate/{source}", rate_start),
        Route("/rate/{source}/files", rate_files),
        Route("/rate/{source}/{n:int}", rate_unit),
        Route("/rate/{source}/{n:int}/label", rate_save, methods=["POST"]),
    ]
