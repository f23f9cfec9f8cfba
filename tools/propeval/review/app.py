"""The review app: Starlette routes over the workspace, Jinja2 pages (autoescaped), one script.

Views, one module each: rating (:mod:`propeval.review.rate_routes`: ``/``, ``/rate/...``), dedup
(:mod:`propeval.review.dedup_routes`), runs and the ledger (:mod:`propeval.review.runs_routes`).
A rating session (a workspace with sheets) is blind by construction: it has the rating routes only,
so no page of it can show a model, a verdict or an item id. Writes are POSTs checked by
:mod:`propeval.review.security`; every write goes through propeval's own writers
(:mod:`propeval.review.rating`, :mod:`propeval.review.actions`).

Each handler is a plain function (Starlette runs it on its thread pool), since the work is file
reading and writing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from propeval.review import rate_routes, security
from propeval.review.pages import HERE, Pages
from propeval.review.workspace import Workspace

if TYPE_CHECKING:
    from propeval.review.dedup_runner import DedupRunner


def build_app(
    workspace: Workspace,
    *,
    token: str,
    port: int,
    allowed_hosts: list[str] | None = None,
    dedup: DedupRunner | None = None,
    sessions: Path | None = None,
) -> Starlette:
    """The ASGI app. ``allowed_hosts`` (default: the loopback names) are the Host names served;
    ``sessions`` is the file that keeps the sessions over a restart (none: in memory only)."""
    pages = Pages(workspace)
    routes: list[BaseRoute] = [*rate_routes.routes(pages)]
    if not workspace.blind:  # a rating session never imports the other views
        from propeval.review import dedup_routes, runs_routes
        from propeval.review.dedup_runner import DedupRunner

        routes += dedup_routes.routes(pages, dedup or DedupRunner(workspace.config))
        routes += runs_routes.routes(pages)
    routes.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))
    names = allowed_hosts or security.LOOPBACK_HOSTS
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=names),
        Middleware(security.Guard, token=token, port=port, store=security.SessionStore(sessions), names=names),
    ]

    async def bug(request: Request, exc: Exception) -> Response:
        """An unexpected exception is a bug: its traceback goes to a file, the page says where."""
        from propeval import crash

        line = crash.bug_line(exc, crash.write_report(exc))
        return PlainTextResponse(line + "\n", status_code=500)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(workspace.flush)  # every save is in its label file when the server stops

    return Starlette(routes=routes, middleware=middleware, exception_handlers={Exception: bug}, lifespan=lifespan)
