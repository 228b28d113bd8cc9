# SPDX-License-Identifier: MIT
"""start()'s options: the fields of struct rtr_config by name, enumerations as the
words of the RINGTRACE_* variables; bad ones raise and start nothing."""

import os

import pytest

import ringtrace
from conftest import Trace, run_python

# A valid value for every option (the field names of struct rtr_config), besides path.
VALID = {
    "ring_bytes": 65536,
    "on_full": "block",
    "flush_ms": 250,
    "io": "sync",
    "process_name": "pyproc",
    "clock": "monotonic",
    "compress": "none",
    "categories": "app,other",
    "cache_mb": 8,
    "stop_timeout_ms": 5000,
    "max_mb": 0,
    "max_seconds": 0,
    "keep": 0,
    "mode": "stream",
    "flight_mb": 4,
    "flight_at_exit": True,
    "signals": "USR1",
    "snapshot_signal": "USR2",
    "format": "json",
    "open_timeout_ms": 0,
    "pf_compress": False,
    "profile": False,
}


def not_running():
    return ringtrace.stats()["running"] is False


def test_every_option_is_taken_and_reaches_the_library(recording):
    recording.start(**VALID)
    with ringtrace.scope("app", "kept"):
        pass
    with ringtrace.scope("left out", "dropped"):
        pass
    trace = recording.stop()
    args = trace.start_marker()["args"]
    assert args["ring_bytes"] == 65536
    assert args["on_full"] == "block"
    assert args["flush_ms"] == 250
    assert args["io"] == "write"
    assert args["clock"] == "monotonic"
    assert args["compress"] == "none"
    assert args["categories"] == "app,other"
    assert trace.of("M", None, "process_name")[0]["args"]["name"] == "pyproc"
    assert len(trace.of("X", "app", "kept")) == 1
    assert trace.of("X", "left out") == []


def test_enumerations_take_the_environment_words(tmp_path):
    for mode, words in {
        "on_full": ["drop", "block"],
        "io": ["auto", "uring", "io_uring", "sync"],
        "clock": ["auto", "monotonic", "tsc"],
        "compress": ["auto", "none", "gzip", "gzip-members"],
        "mode": ["stream", "flight"],
        "format": ["auto", "json", "perfetto", "pftrace"],
    }.items():
        for w in words:
            ringtrace.Session(**{mode: w})  # checks as start() does, starts nothing
    assert not_running()


def test_gzip_and_perfetto_files(tmp_path):
    import gzip
    import json

    path = str(tmp_path / "t.json.gz")
    ringtrace.start(path)
    ringtrace.instant("app", "zipped")
    ringtrace.stop()
    with gzip.open(path, "rt") as f:
        events = json.load(f)
    assert [e["name"] for e in events if e.get("cat") == "app"] == ["zipped"]
    path = str(tmp_path / "t.pftrace")
    ringtrace.start(path)
    ringtrace.instant("app", "proto")
    ringtrace.stop()
    data = open(path, "rb").read()
    assert data[:1] == b"\x0a"  # a TracePacket (field 1, length-delimited), not "["
    assert b"proto" in data or ringtrace.stats()["bytes_uncompressed"] > 0


@pytest.mark.parametrize(
    "config, pattern",
    [
        ({"flsh_ms": 5}, "'flsh_ms' is not an option"),
        ({"flush_ms": "100"}, "flush_ms must be 1 .. 60000, not str"),
        ({"flush_ms": 1.5}, "flush_ms must be 1 .. 60000, not float"),
        ({"flush_ms": True}, "flush_ms must be 1 .. 60000, not bool"),
        ({"on_full": 1}, "on_full must be 'drop' or 'block', not int"),
        ({"process_name": 3}, "process_name must be a str, not int"),
        ({"path": 3}, "path must be a path pattern"),
    ],
)
def test_bad_names_and_types_are_type_errors(tmp_path, config, pattern):
    with pytest.raises(TypeError, match=pattern):
        ringtrace.start(**config)
    assert not_running()


@pytest.mark.parametrize(
    "config, pattern",
    [
        ({"on_full": "sometimes"}, "on_full='sometimes' is not 'drop' or 'block'"),
        ({"io": "fast"}, "io='fast' is not"),
        ({"clock": "rdtscp"}, "clock='rdtscp' is not"),
        ({"compress": "zstd"}, "compress='zstd' is not"),
        ({"mode": "ring"}, "mode='ring' is not"),
        ({"format": "xml"}, "format='xml' is not"),
        ({"flush_ms": 0}, "flush_ms=0 is not 1 .. 60000"),
        ({"flush_ms": 60001}, "flush_ms=60001 is not"),
        ({"flush_ms": -1}, "flush_ms=-1 is not"),
        ({"ring_bytes": 4095}, "ring_bytes=4095 is not 4096 .. 2\\*\\*30"),
        ({"ring_bytes": 2**30 + 1}, "ring_bytes"),
        ({"cache_mb": 2**20 + 1}, "cache_mb"),
        ({"stop_timeout_ms": 3600001}, "stop_timeout_ms"),
        ({"max_mb": 2**20 + 1}, "max_mb"),
        ({"max_seconds": 31536001}, "max_seconds"),
        ({"keep": 1000001}, "keep"),
        ({"flight_mb": 0}, "flight_mb"),
        ({"flight_at_exit": 2}, "flight_at_exit"),
        ({"open_timeout_ms": 3600001}, "open_timeout_ms"),
        ({"pf_compress": 2}, "pf_compress"),
        ({"process_name": "a\0b"}, "process_name"),
    ],
)
def test_bad_values_are_value_errors(tmp_path, config, pattern):
    path = str(tmp_path / "never.json")
    with pytest.raises(ValueError, match=pattern):
        ringtrace.start(path, **config)
    assert not_running()
    assert not os.path.exists(path)


@pytest.mark.parametrize(
    "config",
    [{"categories": "a*"}, {"signals": "NOSUCH"}, {"snapshot_signal": "USR1,USR2"},
     {"signals": "USR2", "snapshot_signal": "USR2"}],
)
def test_lists_the_library_refuses_are_value_errors(tmp_path, config):
    path = str(tmp_path / "never.json")
    with pytest.raises(ValueError, match="refused the configuration"):
        ringtrace.start(path, **config)
    assert not_running()
    assert not os.path.exists(path)


def test_the_limits_of_each_range_are_taken(recording):
    recording.start(ring_bytes=4096, flush_ms=60000, cache_mb=0, stop_timeout_ms=3600000)
    recording.stop()
    recording.start(ring_bytes=2**30, flush_ms=1, stop_timeout_ms=0, open_timeout_ms=3600000)
    ringtrace.instant("app", "x")
    trace = recording.stop()
    assert trace.start_marker()["args"]["flush_ms"] == 1


def test_none_leaves_the_environment_or_the_default(recording):
    recording.start(flush_ms=None, on_full=None, process_name=None)
    trace = recording.stop()
    args = trace.start_marker()["args"]
    assert args["flush_ms"] == int(os.environ.get("RINGTRACE_FLUSH_MS", "100"))
    assert args["on_full"] == "drop"


def test_signals_reach_the_library(tmp_path):
    code = (
        "import os, signal, ringtrace\n"
        "ringtrace.start('sig.json', signals='TERM')\n"
        "ringtrace.instant('app', 'before the signal')\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    r = run_python(code, {}, tmp_path)
    assert r.returncode == -15, r.stderr  # the signal took its course
    trace = Trace(tmp_path / "sig.json")  # finished: strict JSON
    assert len(trace.of("i", "app", "before the signal")) == 1
    end = trace.end_marker()["args"]
    assert end["final"] is True
    assert end["signal"] == 15, end


def test_path_given_twice_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="path given twice"):
        ringtrace.start(str(tmp_path / "a.json"), path=str(tmp_path / "b.json"))
    assert not_running()
