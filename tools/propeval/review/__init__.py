"""``propeval review``: the human work of curation in a browser.

Modules, in the order a request meets them:

* :mod:`~propeval.review.server`: binds the socket, makes the token, runs uvicorn;
* :mod:`~propeval.review.security`: the token, the session, same-origin writes, page headers;
* :mod:`~propeval.review.app`: the Starlette routes and the Jinja2 pages (``templates/``, ``static/``);
* :mod:`~propeval.review.workspace`: the one place the app loads the corpus, rubrics and sources;
* :mod:`~propeval.review.rating` and :mod:`~propeval.review.forms`: sheets and gold cases to label,
  each rater's label file, and each rubric kind's form (keys, steps, validation by the kind);
* :mod:`~propeval.review.dedup_view` and :mod:`~propeval.review.dedup_runner`: the one adapter over
  dedup's public result, run in the background;
* :mod:`~propeval.review.actions`: keep both, retire, move, through the CLI commands' own core;
* :mod:`~propeval.review.runs_view`: the run viewer and the answerability ledger.

Nothing here is imported by ``propeval --help``; Starlette, uvicorn and Jinja2 are imported when
the command runs (the ``review`` extra).
"""
