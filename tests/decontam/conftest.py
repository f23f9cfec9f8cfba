"""One real Dask cluster for the session: a scheduler and two worker processes on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[str]:
    """The scheduler address of a LocalCluster with two single-threaded worker processes (no dashboard).

    Started once a module (about 2.5 CPU-s), shared by the tests that need it, and stopped after
    them: its idle scheduler and workers kept burning CPU until the end of the session (seen: 13
    CPU-s in one run)."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # no dashboard; its HTTP server on any free port, never 8787
        scheduler_kwargs={"dashboard": False},
        host="127.0.0.1",
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
