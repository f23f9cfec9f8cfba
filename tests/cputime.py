"""``--cpu-durations=N``: the N tests that cost the most CPU time (user + system seconds).

Wall time says little on a shared machine; CPU time is what two cores have to give. Each test is
charged the CPU its worker process spent on it (setup, call and teardown) plus that of the child
processes the worker reaped meanwhile (``python -m propeval``, git, make, pre-commit). A session
fixture's cost lands on the first test that asks for it; a server still running at the end of a
test is charged when it is reaped. Works under pytest-xdist: each worker sends its figures to the
controller with the test report.
"""

from __future__ import annotations

import resource
from collections.abc import Generator

import pytest

_KEY = "cpu_seconds"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="show the N tests that cost the most CPU seconds (0 for all)",
    )


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[_START] = _cpu()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    if call.when == "teardown":  # before the report is made: it copies the properties
        item.user_properties.append((_KEY, _cpu() - item.stash[_START]))
    yield


_START = pytest.StashKey[float]()


class _Collector:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == _KEY and report.when == "teardown":
                self.seconds[report.nodeid] = float(value)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        n = config.getoption("--cpu-durations")
        ranked = sorted(self.seconds.items(), key=lambda kv: -kv[1])
        total = sum(self.seconds.values())
        terminalreporter.write_sep("=", f"CPU seconds per test: {total:.1f} s over {len(ranked)} tests")
        for nodeid, seconds in ranked[: n or None]:
            terminalreporter.write_line(f"{seconds:8.2f}  {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--cpu-durations") is not None:
        config.pluginmanager.register(_Collector(), "cpu-durations")
