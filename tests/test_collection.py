"""What collecting the suite costs: each xdist worker imports every test module."""

from __future__ import annotations


def test_collection_imports_no_heavy_library(heavy_imported_at_collection: dict[str, str]) -> None:
    """Both workers collect every module, whether or not they run its tests, so a library imported at
    a module's top is paid twice a run (seen: scipy.stats about 1.1 CPU-s, scikit-learn with pandas
    0.5 to 1.5). Import it in the tests or fixtures that use it (conftest.py lists the libraries)."""
    found = [
        f"{lib} (while collecting {where}, or its folder's conftest.py)"
        for lib, where in sorted(heavy_imported_at_collection.items())
    ]
    assert not found, "imported at collection; import it in the tests that use it: " + "; ".join(found)
