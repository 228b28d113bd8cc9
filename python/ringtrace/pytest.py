# SPDX-License-Identifier: MIT
"""The pytest plugin: every test as a slice of the trace, its phases nested.

    pytest -p ringtrace.pytest --ringtrace=trace.json

or, once the package is installed with its entry point, just ``--ringtrace=FILE``
(or ``ringtrace = FILE`` in the ini file). Without either it records nothing and
starts nothing. A test is a complete event named by its node id, in category
``pytest``, with the arguments ``outcome``, ``file`` and ``line``; its ``setup``,
``call`` and ``teardown`` phases are slices inside it with their own ``outcome``.
The fixture ``ringtrace_scope`` opens slices of the test's own inside its call;
``ringtrace_benchmark`` wraps pytest-benchmark's ``benchmark``: each benchmark a
slice with the spans it caused nested, their count, p50 and p99 in its
``extra_info`` (docs/benchmark.md). See docs/python.md ("pytest").
"""

from typing import Any, Callable, Dict, Generator, List, Optional, Tuple

import pytest

import ringtrace

CATEGORY = "pytest"
PHASES = ("setup", "call", "teardown")

BENCHMARK_CATEGORY = "benchmark"

__all__ = ["BENCHMARK_CATEGORY", "CATEGORY", "ringtrace_benchmark", "ringtrace_scope"]


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
        # with pytest-benchmark, the profile beside the trace: ringtrace_benchmark's
        # statistics come from it
        profile = bool(config.pluginmanager.hasplugin("benchmark")) or None
        try:
            ringtrace.start(path, profile=profile)
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


def span_statistics(calls: Optional[List[Dict[str, Any]]], name: str) -> Dict[str, Dict[str, int]]:
    """The call paths inside the benchmark slice named name (ringtrace.profile_walk()'s
    list): {path: {"count", "p50_ns", "p99_ns"}}, a nested span's path joined by ">".
    The slice at the top level is preferred (the running benchmark's: its test's
    slices are recorded after it)."""
    if not calls:
        return {}
    found = [
        i for i, c in enumerate(calls) if c["name"] == name and c["cat"] == BENCHMARK_CATEGORY
    ]
    found.sort(key=lambda i: calls[i]["depth"])
    if not found:
        return {}
    top = calls[found[0]]["depth"]
    spans: Dict[str, Dict[str, int]] = {}
    path: List[str] = []
    for c in calls[found[0] + 1 :]:
        if c["depth"] <= top:
            break
        del path[c["depth"] - top - 1 :]
        path.append(c["name"])
        spans[">".join(path)] = {k: c[k] for k in ("count", "p50_ns", "p99_ns")}
    return spans


class RecordedBenchmark:
    """pytest-benchmark's fixture, each run of it recorded: ``ringtrace_benchmark(f,
    *args)`` and ``ringtrace_benchmark.pedantic(...)`` as ``benchmark``'s, and every
    other attribute is ``benchmark``'s own."""

    def __init__(self, benchmark: Any) -> None:
        self._benchmark = benchmark

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._benchmark, attr)

    def __call__(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._recorded(self._benchmark, function, *args, **kwargs)

    def pedantic(self, *args: Any, **kwargs: Any) -> Any:
        return self._recorded(self._benchmark.pedantic, *args, **kwargs)

    def _recorded(self, run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not ringtrace.stats()["running"]:
            return run(*args, **kwargs)
        dropped = ringtrace.stats()["events_dropped"]
        start = ringtrace.now_ns()
        try:
            return run(*args, **kwargs)
        finally:
            end = ringtrace.now_ns()
            self._record(start, end, dropped)

    def _record(self, start: int, end: int, dropped: int) -> None:
        bench = self._benchmark
        name = str(bench.name)
        figures: Dict[str, Any] = {}
        stats = getattr(getattr(bench, "stats", None), "stats", None)
        for key in ("min", "median", "mean", "max"):
            value = getattr(stats, key, None)
            if isinstance(value, (int, float)):
                figures[key + "_ns"] = round(value * 1e9)
        for key in ("rounds", "iterations"):
            value = getattr(stats, key, getattr(getattr(bench, "stats", None), key, None))
            if isinstance(value, int):
                figures[key] = value
        ringtrace.flush()  # the rings drained: room for the slice
        ringtrace.complete(BENCHMARK_CATEGORY, name, start, end, **figures)
        info = {
            "spans": span_statistics(ringtrace.profile_walk(), name),
            "dropped": ringtrace.stats()["events_dropped"] - dropped,
        }
        bench.extra_info["ringtrace"] = info


@pytest.fixture
def ringtrace_benchmark(benchmark: Any) -> RecordedBenchmark:
    """pytest-benchmark's ``benchmark``, recorded when the run records: each benchmark a
    slice named as pytest-benchmark names it, in category "benchmark", with its rounds,
    iterations and min/median/mean/max ns; the spans it caused nested in it, and per
    call path inside it the count, p50 and p99 in ``extra_info["ringtrace"]["spans"]``
    (``"dropped"``: events lost meanwhile). Needs pytest-benchmark (Debian:
    python3-pytest-benchmark)."""
    return RecordedBenchmark(benchmark)
