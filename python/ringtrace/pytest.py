# SPDX-License-Identifier: MIT
"""The pytest plugin: every test as a slice of the trace, its phases nested.

    pytest -p ringtrace.pytest --ringtrace=trace.json

or, once the package is installed with its entry point, just ``--ringtrace=FILE``
(or ``ringtrace = FILE`` in the ini file). Without either it records nothing and
starts nothing. A test is a complete event named by its node id, in category
``pytest``, with the arguments ``outcome``, ``file`` and ``line``; its ``setup``,
``call`` and ``teardown`` phases are slices inside it with their own ``outcome``.
The fixture ``ringtrace_scope`` opens slices of the test's own inside its call.
See docs/python.md ("pytest").
"""

from typing import Any, Callable, Dict, Generator, Optional, Tuple

import pytest

import ringtrace

CATEGORY = "pytest"
PHASES = ("setup", "call", "teardown")

__all__ = ["CATEGORY", "ringtrace_scope"]


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("ringtrace", "recording the run into a ringtrace trace")
    group.addoption(
        "--ringtrace",
        metavar="FILE",
        default=None,
        help="record every test and its phases into FILE (%%p: the pid); into the "
        "running session when one runs (RINGTRACE_AUTOSTART)",
    )
    parser.addini("ringtrace", "the trace file, as --ringtrace (which overrides it)", default="")


def pytest_configure(config: Any) -> None:
    path = config.getoption("ringtrace") or config.getini("ringtrace")
    if not path or config.pluginmanager.has_plugin(_Recorder.NAME):
        return
    owns = False
    if not ringtrace.stats()["running"]:
        try:
            ringtrace.start(path)
        except (OSError, ValueError, RuntimeError) as err:
            raise pytest.UsageError(f"--ringtrace={path}: {err}") from err
        owns = True
    config.pluginmanager.register(_Recorder(owns), _Recorder.NAME)


def outcome_of(report: Any) -> str:
    """The outcome of a test from the report of one of its phases, as pytest's
    summary counts it: passed, failed, skipped, xfailed, xpassed, or error (a
    setup or teardown that failed)."""
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return "xfailed"
        if report.passed:
            return "xpassed"
    if report.failed and report.when != "call":
        return "error"
    return str(report.outcome)


class _Recorder:
    """Registered by pytest_configure when the run records: the hooks that do."""

    NAME = "ringtrace-recorder"

    def __init__(self, owns: bool) -> None:
        self.owns = owns  # this run started the session, and stops it
        self.times: Dict[str, Tuple[int, int]] = {}  # phase: (start, end) ns
        self.outcome: Optional[str] = None  # the test's, from its phases' reports

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Generator[None, Any, None]:
        self.times.clear()
        self.outcome = None
        start = ringtrace.now_ns()
        yield
        end = ringtrace.now_ns()
        file, line, _ = item.location
        where = {"file": file} if line is None else {"file": file, "line": line + 1}
        ringtrace.complete(
            CATEGORY, item.nodeid, start, end, outcome=self.outcome or "passed", **where
        )

    def timed(self, when: str) -> Generator[None, Any, None]:
        start = ringtrace.now_ns()
        yield
        self.times[when] = (start, ringtrace.now_ns())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: Any) -> Generator[None, Any, None]:
        yield from self.timed("setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: Any) -> Generator[None, Any, None]:
        yield from self.timed("call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any) -> Generator[None, Any, None]:
        yield from self.timed("teardown")

    def pytest_runtest_logreport(self, report: Any) -> None:
        # the report is final here (pytest's own makereport wrappers are done)
        times = self.times.pop(report.when, None)
        if times is None:
            return
        ringtrace.complete(CATEGORY, report.when, times[0], times[1], outcome=report.outcome)
        outcome = outcome_of(report)
        # the setup's, else the call's, else a teardown's error
        if self.outcome is None and (outcome != "passed" or report.when == "call"):
            self.outcome = outcome
        elif self.outcome == "passed" and outcome == "error":
            self.outcome = outcome

    def pytest_unconfigure(self, config: Any) -> None:
        if self.owns:
            ringtrace.stop()


@pytest.fixture
def ringtrace_scope() -> Callable[..., "ringtrace.scope"]:
    """Slices of the test's own: ``with ringtrace_scope("step", i=1):`` records a
    slice named "step" in category "pytest", with the arguments, inside the test's
    call phase (ringtrace.scope with the category given). Records nothing when the
    run does not record."""

    def scope(name: str, /, **args: Any) -> "ringtrace.scope":
        return ringtrace.scope(CATEGORY, name, **args)

    return scope
