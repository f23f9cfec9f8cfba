"""What every view of the review app shares: the templates, the page and error responses, the
checked form of a POST, and the page of rows a list view shows (filtered and searched on the server).

Data reaches a page only through a template (autoescaped) or as JSON read by the script with
``textContent`` (never ``innerHTML``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from propeval.review import security
from propeval.review.workspace import Workspace

HERE = Path(__file__).parent
MAX_BODY = 1 << 20  # a label or a form is a few hundred bytes
PAGE_SIZE = 50
MAX_SEARCH = 200
T = TypeVar("T")


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
    env.filters["lang"] = lang_tag
    return env


def lang_tag(code: Any) -> str:
    """A BCP 47 tag for a corpus language code (``zh``, ``ru``, ``en``...), or ``""`` when unknown,
    for the ``lang`` attribute of a text in that language."""
    text = str(code or "").strip()
    return text if text and len(text) <= 35 and all(c.isalnum() or c == "-" for c in text) else ""


@dataclass
class Paged(Generic[T]):
    """One page of a list: its rows, the filtered count, the page number and count, and the query."""

    rows: list[T]
    matched: int
    total: int
    page: int
    pages: int
    query: str
    params: dict[str, str]

    def link(self, page: int) -> str:
        return "?" + urlencode({k: v for k, v in {**self.params, "q": self.query, "page": str(page)}.items() if v})


def paged(
    request: Request,
    rows: Sequence[T],
    texts: Sequence[str],
    params: dict[str, str] | None = None,
    *,
    total: int | None = None,
) -> Paged[T]:
    """The page ``?page=`` of ``rows`` whose text (``texts``, case-folded, one per row) holds every
    word of ``?q=``; ``total`` is what the list holds before any filter (default: ``rows``)."""
    query = request.query_params.get("q", "")[:MAX_SEARCH].strip()
    words = query.casefold().split()
    kept = [r for r, t in zip(rows, texts, strict=True) if all(w in t for w in words)] if words else list(rows)
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    try:
        page = min(max(1, int(request.query_params.get("page", "1"))), pages)
    except ValueError:
        page = 1
    shown = kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return Paged(shown, len(kept), len(rows) if total is None else total, page, pages, query, params or {})


class Pages:
    """The templates and the responses every view builds on."""

    def __init__(self, workspace: Workspace) -> None:
        self.env = _env()
        self.workspace = workspace

    def page(self, request: Request, name: str, http_status: int = 200, **context: Any) -> HTMLResponse:
        session = request.scope.get("session") or {}
        context.update(rater=session.get("rater") or "", nav=name.split(".")[0], blind=self.workspace.blind)
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=http_status)

    def error(self, request: Request, status: int, message: str) -> HTMLResponse:
        return self.page(request, "error.html.j2", http_status=status, message=message)

    async def form_of(self, request: Request) -> dict[str, str] | Response:
        """The POSTed form, once its write key is the session's; else the 403 or 413 to send."""
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return PlainTextResponse("the form is too large\n", status_code=413)
        form = await request.form(max_files=0, max_fields=20)
        data = {k: v for k, v in form.items() if isinstance(v, str)}
        if not session_of(request).write_ok(data.get(security.CSRF_FIELD)):
            return PlainTextResponse(
                "propeval review: this tab holds no write key of this server's session; open the URL that "
                "`propeval review` printed\n",
                status_code=403,
            )
        return data


def session_of(request: Request) -> security.Session:
    session = request.scope["session"]
    assert isinstance(session, security.Session)
    return session
