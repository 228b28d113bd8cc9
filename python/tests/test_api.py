# SPDX-License-Identifier: MIT
"""The lifecycle: start, stop, flush, snapshot, stats, Session, the clock, version."""

import json
import os
import pathlib
import re

import pytest

import ringtrace
from conftest import Trace, run_python

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "ringtrace.h"


def stats_fields():
    """The fields of struct rtr_stats, read from the header, less size and version."""
    text = HEADER.read_text()
    body = text[text.index("struct rtr_stats {") : text.index("};", text.index("struct rtr_stats {"))]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = re.findall(r"\b(?:uint64_t|uint32_t|int)\s+(\w+);", body)
    return [n for n in names if n not in ("size", "version")]


def test_version_is_the_library_and_the_header_version():
    text = HEADER.read_text()
    header = re.search(r'#define RTR_VERSION_STRING "([^"]+)"', text).group(1)
    assert ringtrace.version() == header
    assert ringtrace.__version__ == header


def test_now_ns_never_goes_back():
    a = ringtrace.now_ns()
    b = ringtrace.now_ns()
    assert isinstance(a, int) and a > 0
    assert b >= a


def test_stats_are_keyed_like_struct_rtr_stats(recording):
    recording.start()
    running = ringtrace.stats()
    recording.stop()
    assert list(running) == stats_fields()
    assert running["running"] is True
    assert running["io_method"] in ("uring", "sync")
    assert running["clock"] in ("tsc", "monotonic")
    assert ringtrace.stats()["running"] is False


def test_counts_match_what_was_recorded(recording):
    recording.start(on_full="block")
    for i in range(1000):
        with ringtrace.scope("app", "step"):
            pass
    ringtrace.instant("app", "done")
    trace = recording.stop()
    st = recording.stats
    assert len(trace.of("X", "app", "step")) == 1000
    assert len(trace.of("i", "app", "done")) == 1
    assert st["events_recorded"] == 1001
    assert st["events_written"] == 1001
    assert st["events_dropped"] == 0
    assert st["threads"] == 1
    assert st["write_error"] == 0
    end = trace.end_marker()
    assert end["args"]["final"] is True
    assert end["args"]["events"] == 1001
    assert end["args"]["dropped"] == 0
    assert st["bytes_written"] == os.path.getsize(recording.path)


def test_start_twice_is_a_runtime_error_and_stop_when_stopped_is_nothing(recording):
    ringtrace.stop()
    recording.start()
    with pytest.raises(RuntimeError, match="already running"):
        ringtrace.start(recording.path + ".2")
    recording.stop()
    ringtrace.stop()
    assert not os.path.exists(recording.path + ".2")


def test_trace_path_is_the_expanded_pattern(tmp_path):
    pattern = str(tmp_path / "run-%p.json")
    ringtrace.start(pattern)
    try:
        assert ringtrace.trace_path() == str(tmp_path / f"run-{os.getpid()}.json")
    finally:
        ringtrace.stop()
    # after stop: the last session's file
    assert ringtrace.trace_path() == str(tmp_path / f"run-{os.getpid()}.json")
    Trace(ringtrace.trace_path())


def test_trace_path_is_none_before_the_first_start(tmp_path):
    r = run_python("import ringtrace; print(ringtrace.trace_path())", {}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None"


def test_path_may_be_a_pathlike(tmp_path):
    ringtrace.start(tmp_path / "p.json")
    with ringtrace.scope("app", "x"):
        pass
    ringtrace.stop()
    assert len(Trace(tmp_path / "p.json").of("X", "app", "x")) == 1


def test_flush_puts_everything_recorded_so_far_in_the_file(recording):
    recording.start(flush_ms=60000)  # the writer's timer would not write it for a minute
    for i in range(10):
        ringtrace.instant("app", "before flush", i=i)
    ringtrace.flush()
    with open(recording.path, encoding="utf-8") as f:
        mid = json.load(f)  # the provisional close makes it strict JSON
    got = [e["args"]["i"] for e in mid if e.get("name") == "before flush"]
    assert got == list(range(10))
    provisional = [e for e in mid if e.get("name") == "ringtrace: end"]
    assert provisional[0]["args"]["final"] is False
    recording.stop()


def test_session_starts_on_enter_and_stops_on_exit(tmp_path):
    path = str(tmp_path / "s.json")
    session = ringtrace.Session(path, on_full="block")
    assert ringtrace.stats()["running"] is False  # made, not started
    with session as s:
        assert s is session
        assert s.path == path
        assert ringtrace.stats()["running"] is True
        with ringtrace.scope("app", "inside"):
            pass
    assert ringtrace.stats()["running"] is False
    assert session.stats["events_written"] == 1
    trace = Trace(path)
    assert len(trace.of("X", "app", "inside")) == 1
    assert trace.start_marker()["args"]["on_full"] == "block"


def test_session_stops_when_the_block_raises(tmp_path):
    path = str(tmp_path / "s.json")
    with pytest.raises(KeyError):
        with ringtrace.Session(path):
            with ringtrace.scope("app", "failing"):
                raise KeyError("x")
    assert ringtrace.stats()["running"] is False
    trace = Trace(path)
    assert len(trace.of("X", "app", "failing")) == 1
    assert trace.end_marker()["args"]["final"] is True


def test_session_checks_its_options_when_made():
    with pytest.raises(ValueError, match="on_full"):
        ringtrace.Session(on_full="sometimes")
    with pytest.raises(TypeError, match="flsh_ms"):
        ringtrace.Session(flsh_ms=5)
    assert ringtrace.stats()["running"] is False


def test_snapshot_writes_the_flight_window(tmp_path):
    ringtrace.start(str(tmp_path / "f-%s.json"), mode="flight", flight_at_exit=False)
    try:
        for i in range(5):
            ringtrace.instant("app", "in window", i=i)
        snap = str(tmp_path / "snap.json")
        ringtrace.snapshot(snap)
    finally:
        ringtrace.stop()
    trace = Trace(snap)
    assert [e["args"]["i"] for e in trace.of("i", "app", "in window")] == list(range(5))
    assert not list(tmp_path.glob("f-*.json"))  # flight_at_exit=False: nothing at stop


def test_snapshot_needs_flight_or_rotation_and_a_running_recorder(recording):
    ringtrace.stop()
    with pytest.raises(RuntimeError, match="not running"):
        ringtrace.snapshot()
    recording.start()
    with pytest.raises(RuntimeError, match="flight"):
        ringtrace.snapshot()
    recording.stop()


def test_snapshot_with_rotation_ends_the_segment(tmp_path):
    ringtrace.start(str(tmp_path / "seg-%s.json"), max_mb=1024)
    try:
        ringtrace.instant("app", "first")
        ringtrace.snapshot()
        ringtrace.instant("app", "second")
        with pytest.raises(ValueError, match="no path"):
            ringtrace.snapshot(str(tmp_path / "x.json"))
    finally:
        ringtrace.stop()
    first = Trace(tmp_path / "seg-0000.json")
    second = Trace(tmp_path / "seg-0001.json")
    assert len(first.of("i", "app", "first")) == 1 and not first.of("i", "app", "second")
    assert len(second.of("i", "app", "second")) == 1 and not second.of("i", "app", "first")
    assert ringtrace.stats()["files"] == 2


def test_start_failure_is_an_oserror_with_the_path(tmp_path):
    (tmp_path / "a file").write_text("")  # in the way of the directory to make
    bad = str(tmp_path / "a file" / "t.json")
    with pytest.raises(NotADirectoryError) as err:
        ringtrace.start(bad)
    assert err.value.filename == bad
    assert ringtrace.stats()["running"] is False
