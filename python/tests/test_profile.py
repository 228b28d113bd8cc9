# SPDX-License-Identifier: MIT
"""Function tracing: ringtrace.profile and `python -m ringtrace run`. Every call of
the workload below is counted by name, nesting, thread, file and line from the trace."""

import asyncio
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import ringtrace
from conftest import Trace, fork_under_tsan, nests

WORKLOAD = textwrap.dedent(
    """
    import asyncio, time

    def inner(x):
        return x + 1

    def outer(n):
        return [inner(i) for i in range(n)]

    class Shape:
        def area(self):
            return self.side()

        def side(self):
            return 2

        @staticmethod
        def unit():
            return 1

        @classmethod
        def make(cls):
            return cls()

    def raiser(depth):
        if depth == 0:
            raise ValueError("deep")
        return raiser(depth - 1)

    def catcher():
        try:
            raiser(2)
        except ValueError:
            return "caught"

    def gen(n):
        for i in range(n):
            yield i

    def consume():
        return list(gen(2))

    async def step(name, n):
        for _ in range(n):
            await asyncio.sleep(0)
        return name

    async def both():
        return await asyncio.gather(step("a", 2), step("b", 2))

    def recurse(n):
        return 0 if n == 1 else recurse(n - 1)

    def slow():
        time.sleep(0.02)

    def fast():
        return 1

    def calls_c(items):
        items.append(len(items))
        return items
    """
)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    """The workload as pkg.mod, imported from a folder of the test's own."""
    root = tmp_path_factory.mktemp("workload")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(WORKLOAD)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("pkg.mod")
    finally:
        sys.path.remove(str(root))


def profiled(tmp_path, body, **options):
    """Run body() under ringtrace.profile into a file of its own; the parsed Trace."""
    path = tmp_path / "profile.json"
    with ringtrace.profile(path, **options) as p:
        assert p.path == str(path)
        body()
    assert not ringtrace.stats()["running"]  # the profile's own session, stopped
    return Trace(path)


def slices(trace, prefix="pkg.mod."):
    return [e for e in trace.of("X") if e["name"].startswith(prefix)]


def names(trace, prefix="pkg.mod."):
    counts = {}
    for e in slices(trace, prefix):
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts


def assert_properly_nested(events):
    """Slices of one thread either nest or do not touch (a stack, never a tangle)."""
    ns = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in events)
    for i, (a0, a1) in enumerate(ns):
        for b0, b1 in ns[i + 1 :]:
            if b0 >= a1:
                break
            assert b1 <= a1, f"slices overlap without nesting: {(a0, a1)} {(b0, b1)}"


def test_nested_calls_counted_with_file_and_line(tmp_path, mod):
    trace = profiled(tmp_path, lambda: mod.outer(3))
    assert names(trace) == {"pkg.mod.outer": 1, "pkg.mod.outer.<locals>.<listcomp>": 1,
                            "pkg.mod.inner": 3}
    outer = trace.one("X", "python", "pkg.mod.outer")
    comp = trace.one("X", "python", "pkg.mod.outer.<locals>.<listcomp>")
    assert nests(comp, outer)
    for e in trace.of("X", "python", "pkg.mod.inner"):
        assert nests(e, comp) and e["tid"] == outer["tid"] == threading.get_native_id()
        assert e["args"] == {"file": mod.__file__, "line": inspect.getsourcelines(mod.inner)[1]}
    assert outer["args"] == {"file": mod.__file__, "line": inspect.getsourcelines(mod.outer)[1]}
    assert_properly_nested(trace.of("X"))


def test_methods_are_named_by_module_and_qualified_name(tmp_path, mod):
    def body():
        mod.Shape().area()
        mod.Shape.unit()
        mod.Shape.make()

    trace = profiled(tmp_path, body)
    assert names(trace) == {"pkg.mod.Shape.area": 1, "pkg.mod.Shape.side": 1,
                            "pkg.mod.Shape.unit": 1, "pkg.mod.Shape.make": 1}
    assert nests(trace.one("X", "python", "pkg.mod.Shape.side"),
                 trace.one("X", "python", "pkg.mod.Shape.area"))


def test_threads_started_before_and_after_profiling(tmp_path, mod):
    go = threading.Event()
    ids = {}

    def early():
        go.wait()
        ids["early"] = threading.get_native_id()
        mod.outer(2)

    def late():
        ids["late"] = threading.get_native_id()
        mod.outer(1)

    before = threading.Thread(target=early)
    before.start()

    def body():
        after = threading.Thread(target=late)
        after.start()
        after.join()
        go.set()
        before.join()

    trace = profiled(tmp_path, body)
    by_tid = {}
    for e in trace.of("X", "python", "pkg.mod.inner"):
        by_tid[e["tid"]] = by_tid.get(e["tid"], 0) + 1
    assert by_tid == {ids["early"]: 2, ids["late"]: 1}
    assert [e["tid"] for e in trace.of("X", "python", "pkg.mod.outer")].count(ids["late"]) == 1
    for tid in by_tid:
        assert_properly_nested([e for e in trace.of("X") if e["tid"] == tid])


def test_exceptions_end_every_unwound_slice(tmp_path, mod):
    trace = profiled(tmp_path, mod.catcher)
    assert names(trace) == {"pkg.mod.catcher": 1, "pkg.mod.raiser": 3}
    catcher = trace.one("X", "python", "pkg.mod.catcher")
    raisers = sorted(trace.of("X", "python", "pkg.mod.raiser"), key=lambda e: e["ts"])
    assert nests(raisers[0], catcher)
    assert nests(raisers[1], raisers[0]) and nests(raisers[2], raisers[1])
    assert_properly_nested(trace.of("X"))


def test_generator_steps_are_slices_inside_the_consumer(tmp_path, mod):
    trace = profiled(tmp_path, mod.consume)
    # two yields and the end of the iteration: three resumptions
    assert names(trace) == {"pkg.mod.consume": 1, "pkg.mod.gen": 3}
    consume = trace.one("X", "python", "pkg.mod.consume")
    assert all(nests(e, consume) for e in trace.of("X", "python", "pkg.mod.gen"))
    assert_properly_nested(trace.of("X"))


def test_coroutine_steps_interleave_as_nested_slices(tmp_path, mod):
    trace = profiled(tmp_path, lambda: asyncio.run(mod.both()))
    counts = names(trace)
    # each coroutine: its first step, two resumptions after sleep(0)
    assert counts["pkg.mod.step"] == 6 and counts["pkg.mod.both"] >= 2
    assert_properly_nested(trace.of("X"))


def test_include_and_exclude_by_prefix(tmp_path, mod):
    def body():
        mod.outer(2)
        mod.Shape().area()

    trace = profiled(tmp_path, body, include=["pkg.mod.Shape"])
    assert {e["name"] for e in trace.of("X")} == {"pkg.mod.Shape.area", "pkg.mod.Shape.side"}
    (tmp_path / "profile.json").unlink()
    trace = profiled(tmp_path, body, include=["pkg"], exclude=["pkg.mod.inner", "pkg.mod.Shape.side"])
    assert {e["name"] for e in trace.of("X")} == {
        "pkg.mod.outer", "pkg.mod.outer.<locals>.<listcomp>", "pkg.mod.Shape.area"}
    (tmp_path / "profile.json").unlink()
    trace = profiled(tmp_path, body, include=["pkg.mo"])  # a prefix ends at a dot
    assert trace.of("X") == []


def test_min_ns_drops_short_calls(tmp_path, mod):
    def body():
        for _ in range(3):
            mod.fast()
        mod.slow()

    trace = profiled(tmp_path, body, min_ns=5_000_000)
    assert names(trace) == {"pkg.mod.slow": 1}
    assert trace.one("X", "python", "pkg.mod.slow")["dur"] >= 5000


def test_max_depth_counts_from_where_profiling_began(tmp_path, mod):
    trace = profiled(tmp_path, lambda: mod.recurse(6), max_depth=3)
    # the lambda is depth 1, recurse(6) 2, recurse(5) 3
    events = sorted(trace.of("X", "python", "pkg.mod.recurse"), key=lambda e: e["ts"])
    assert len(events) == 2 and nests(events[1], events[0])
    assert names(trace, "test_profile.") == {
        "test_profile.test_max_depth_counts_from_where_profiling_began.<locals>.<lambda>": 1}


def test_c_calls_only_when_asked(tmp_path, mod):
    trace = profiled(tmp_path, lambda: mod.calls_c([]), c_calls=True)
    caller = trace.one("X", "python", "pkg.mod.calls_c")
    for name in ("builtins.len", "list.append"):
        e = trace.one("X", "python.c", name)
        assert nests(e, caller) and "args" not in e
    (tmp_path / "profile.json").unlink()
    trace = profiled(tmp_path, lambda: mod.calls_c([]))
    assert trace.of("X", "python.c") == [] and len(trace.of("X", "python", "pkg.mod.calls_c")) == 1


def test_profile_inside_a_running_session_records_into_it(tmp_path, mod, recording):
    recording.start()
    with ringtrace.profile(include=["pkg.mod.inner"]):
        mod.outer(2)
    assert ringtrace.stats()["running"]  # not the profile's session: left running
    ringtrace.instant("app", "after")
    trace = recording.stop()
    assert names(trace) == {"pkg.mod.inner": 2}
    assert len(trace.of("i", "app", "after")) == 1


def test_options_are_checked(tmp_path):
    with pytest.raises(ValueError):
        ringtrace.profile(tmp_path / "x.json", min_ns=-1)
    with pytest.raises(TypeError):
        ringtrace.profile(tmp_path / "x.json", not_an_option=1)
    with pytest.raises(TypeError):
        with ringtrace.profile(tmp_path / "x.json", include=5):
            pass
    assert not ringtrace.stats()["running"]


def run_module(args, cwd):
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "ringtrace", "run", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


SCRIPT = textwrap.dedent(
    """
    import sys

    def work(n):
        return sum(range(n))

    def main():
        for n in range(4):
            work(n)
        print(" ".join(sys.argv))
        sys.exit(int(sys.argv[1]))

    main()
    """
)


def test_run_passes_arguments_and_exit_status(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    r = run_module(["-o", "run.json", "--include", "__main__", "script.py", "3", "--x"],
                   tmp_path)
    assert r.returncode == 3, r.stderr
    assert r.stdout == "script.py 3 --x\n"
    trace = Trace(tmp_path / "run.json")
    counts = {}
    for e in trace.of("X"):
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    assert counts == {"__main__.<module>": 1, "__main__.main": 1, "__main__.work": 4}
    for e in trace.of("X", "python", "__main__.work"):
        assert e["args"] == {"file": "script.py", "line": 4}
    assert trace.end_marker()["args"]["final"] is True


def test_run_options(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    r = run_module(["-o", "run.json", "--exclude", "__main__.work", "--max-depth", "3",
                    "--min-ns", "0", "--c-calls", "script.py", "0"], tmp_path)
    assert r.returncode == 0, r.stderr
    trace = Trace(tmp_path / "run.json")
    assert {e["name"] for e in trace.of("X", "python")} == {"__main__.<module>", "__main__.main"}
    c_names = {e["name"] for e in trace.of("X", "python.c")}
    assert "builtins.print" in c_names and "builtins.sum" not in c_names  # depth 3


POOL = textwrap.dedent(
    """
    import multiprocessing, os, sys

    def square(x):
        return x * x

    def leave(code):
        sys.stdout.flush()
        os._exit(code)

    if __name__ == "__main__":
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(2) as pool:
            print(sum(pool.map(square, range(10), chunksize=1)))
        p = ctx.Process(target=leave, args=(0,))
        p.start()
        p.join()
        print(p.pid, p.exitcode)
    """
)


@fork_under_tsan
def test_fork_pool_children_write_their_own_finished_files(tmp_path):
    (tmp_path / "pool.py").write_text(POOL)
    r = run_module(["-o", "pool-%p.json", "pool.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    total, leaver = r.stdout.split("\n")[:2]
    assert total == "285"
    leaver_pid, leaver_status = map(int, leaver.split())
    assert leaver_status == 0
    files = {int(f.stem.split("-")[1]): f for f in tmp_path.glob("pool-*.json")}
    assert leaver_pid in files and len(files) == 4  # the parent, two workers, the leaver
    squares = 0
    for pid, f in files.items():
        trace = Trace(f)  # strict JSON: every file finished
        assert {e["pid"] for e in trace.events} == {pid}
        end = trace.end_marker()["args"]
        assert end["final"] is True
        squares += len(trace.of("X", "python", "__main__.square"))
        if pid == leaver_pid:  # left through os._exit inside leave(): its open calls end there
            leave = trace.one("X", "python", "__main__.leave")
            boot = trace.one("X", "python", "multiprocessing.process.BaseProcess._bootstrap")
            assert nests(leave, boot)
    assert squares == 10


def test_calls_past_the_stack_are_counted_not_recorded(tmp_path, mod):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(5000)
    before = ringtrace._ringtrace._profile_stats()["frames_past_stack"]
    try:
        trace = profiled(tmp_path, lambda: mod.recurse(1100))
    finally:
        sys.setrecursionlimit(limit)
    # the lambda is depth 1, recurse(1100) .. recurse(1) depths 2 .. 1101; 1024 are kept
    assert len(trace.of("X", "python", "pkg.mod.recurse")) == 1023
    assert ringtrace._ringtrace._profile_stats() == {
        "active": False, "frames_past_stack": before + 1101 - 1024}
