"""The run viewer (``/runs``, ``/runs/<run>/<rubric>``) and the answerability ledger (``/ledger``,
``/ledger/judge``): filtered, searched and paged on the server, over views kept while their files
stay unchanged."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from propeval.errors import PropevalError
from propeval.review.pages import Pages, paged


def routes(pages: Pages) -> list[Route]:
    workspace = pages.workspace

    def runs_list(request: Request) -> Response:
        from propeval.review.runs_view import graded_files

        return pages.page(request, "runs.html.j2", files=graded_files(workspace.config), humans=workspace.humans)

    def run_page(request: Request) -> Response:
        from propeval.review.runs_view import STATUSES, graded_files, row_text

        run, rubric = request.path_params["run"], request.path_params["rubric"]
        found = [g for g in graded_files(workspace.config) if g.run == run and g.rubric == rubric]
        if not found:
            return pages.error(request, 404, f"no graded run {run} under {rubric}")
        status = request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            return pages.error(request, 400, f"status must be one of {', '.join(STATUSES)}")
        human_name = request.query_params.get("human") or None
        human = next((h for h in workspace.humans if workspace.shown_path(h) == human_name), None)
        if human_name and human is None:
            return pages.error(request, 400, f"{human_name} is not a human label file given with --human")
        disagree = request.query_params.get("disagree") == "1"
        try:
            view = workspace.run_view(found[0], human)
        except PropevalError as e:
            return pages.error(request, 422, str(e))
        texts = workspace.texts(view.rows, row_text)
        kept = [
            (r, t)
            for r, t in zip(view.rows, texts, strict=True)
            if (status is None or (r.truncated if status == "truncated" else r.status == status))
            and (not disagree or r.disagree)
        ]
        rows, row_texts = [r for r, _ in kept], [t for _, t in kept]
        params = {"status": status or "", "human": human_name or "", "disagree": "1" if disagree else ""}
        return pages.page(
            request,
            "run.html.j2",
            view=view,
            shown=paged(request, rows, row_texts, params, total=len(view.rows)),
            status=status,
            statuses=STATUSES,
            humans=[workspace.shown_path(h) for h in workspace.humans],
            human=human_name,
            disagree=disagree,
        )

    def ledger(request: Request) -> Response:
        from propeval.review.runs_view import ledger_text

        try:
            rows, mode = workspace.ledger_rows()
        except PropevalError as e:
            return pages.error(request, 422, str(e))
        state_filter = request.query_params.get("state") or None
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.state] = counts.get(r.state, 0) + 1
        texts = workspace.texts(rows, ledger_text)
        kept = [(r, t) for r, t in zip(rows, texts, strict=True) if state_filter is None or r.state == state_filter]
        shown = paged(
            request, [r for r, _ in kept], [t for _, t in kept], {"state": state_filter or ""}, total=len(rows)
        )
        return pages.page(request, "ledger.html.j2", shown=shown, counts=counts, mode=mode, state_filter=state_filter)

    def ledger_judge(request: Request) -> Response:
        from propeval.review.runs_view import judge_views

        try:
            views = judge_views(workspace.workspace())
        except PropevalError as e:
            return pages.error(request, 422, str(e))
        only = request.query_params.get("disagree") == "1"
        return pages.page(request, "judge.html.j2", views=views, only=only)

    return [
        Route("/runs", runs_list),
        Route("/runs/{run}/{rubric}", run_page),
        Route("/ledger", ledger),
        Route("/ledger/judge", ledger_judge),
    ]
