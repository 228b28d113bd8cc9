# SPDX-License-Identifier: MIT
"""ringtrace.Track: lanes of pseudo-processes with times in their own clock, each
event read back from the trace with its lane, time, arguments and metadata."""

import threading

import pytest

import ringtrace
from conftest import run_python

PSEUDO_BASE = 0x40000000  # pseudo pids and tids start above any Linux pid


def origin_ns(trace):
    return int(trace.start_marker()["args"]["origin_monotonic_ns"])


def ns(e, trace):
    """An event's time as the now_ns() value it was written from."""
    return round(e["ts"] * 1000) + origin_ns(trace)


def meta(trace, name, pid, tid=None):
    """The args of the M event `name` of pid (and tid)."""
    found = [e["args"] for e in trace.of("M", None, name)
             if e["pid"] == pid and (tid is None or e["tid"] == tid)]
    assert len(found) == 1, (name, pid, tid, found)
    return found[0]


def test_events_on_a_track_carry_its_lane_times_and_arguments(recording):
    recording.start()
    gpu = ringtrace.Track("GPU 0", "stream 7", label="H100", process_sort_index=3,
                          lane_sort_index=2)
    assert (gpu.process, gpu.lane, gpu.label) == ("GPU 0", "stream 7", "H100")
    assert repr(gpu) == "<ringtrace.Track 'GPU 0'/'stream 7'>"
    host0 = ringtrace.now_ns()
    gpu.clock_offset(host0 - 5_000)  # track time 5000 is host0
    gpu.complete("gpu", "kernel", 5_000, 2_000, grid=64, name="axpy", block=[256, 1, 1],
                 launch={"stream": 7, "sync": False})
    gpu.instant("gpu", "launch", 5_500, queue="q0")
    gpu.counter("gpu", "occupancy", 6_000, 0.75)
    gpu.counter("gpu", "usage", 6_100, used=12, free=2.5)
    flow = ringtrace.flow_id()
    gpu.flow_start("gpu", "copy", 5_000, flow)
    gpu.complete("gpu", "after", 8_000, 100)
    gpu.flow_end("gpu", "copy", 8_000, flow)
    trace = recording.stop()

    kernel = trace.one("X", "gpu", "kernel")
    pid, tid = kernel["pid"], kernel["tid"]
    assert pid > PSEUDO_BASE and tid > PSEUDO_BASE and pid != trace.pid
    assert ns(kernel, trace) == host0 and kernel["dur"] == 2.0
    assert kernel["args"] == {"grid": 64, "name": "axpy", "block": [256, 1, 1],
                              "launch": {"stream": 7, "sync": False}}
    launch = trace.one("i", "gpu", "launch")
    assert (launch["pid"], launch["tid"]) == (pid, tid)
    assert ns(launch, trace) == host0 + 500 and launch["args"] == {"queue": "q0"}
    occupancy = trace.one("C", "gpu", "occupancy")
    assert occupancy["pid"] == pid and ns(occupancy, trace) == host0 + 1_000
    assert occupancy["args"] == {"value": 0.75}
    usage = trace.one("C", "gpu", "usage")
    assert usage["args"] == {"used": 12, "free": 2.5} and ns(usage, trace) == host0 + 1_100
    start, end = trace.one("s", "gpu", "copy"), trace.one("f", "gpu", "copy")
    assert start["id"] == end["id"] == hex(flow)
    assert ns(start, trace) == host0 and ns(end, trace) == host0 + 3_000
    assert (start["pid"], start["tid"], end["pid"], end["tid"]) == (pid, tid, pid, tid)
    assert ns(trace.one("X", "gpu", "after"), trace) == host0 + 3_000

    assert meta(trace, "process_name", pid)["name"] == "GPU 0"
    assert meta(trace, "process_labels", pid)["labels"] == "H100"
    assert meta(trace, "process_sort_index", pid)["sort_index"] == 3
    assert meta(trace, "thread_name", pid, tid)["name"] == "stream 7"
    assert meta(trace, "thread_sort_index", pid, tid)["sort_index"] == 2 * 8  # lanes of 8
    assert len(trace.user()) == 7


def test_clock_pair_and_the_default_clock(recording):
    recording.start()
    paired = ringtrace.Track("device", "paired")
    host = ringtrace.now_ns()
    paired.clock_pair(10**12, host)  # device time 10^12 is `host`
    paired.instant("dev", "at pair", 10**12)
    paired.instant("dev", "later", 10**12 + 12_345)
    plain = ringtrace.Track("device", "plain")
    t = ringtrace.now_ns()
    plain.instant("dev", "host time", t)
    trace = recording.stop()
    assert ns(trace.one("i", "dev", "at pair"), trace) == host
    assert ns(trace.one("i", "dev", "later"), trace) == host + 12_345
    on_plain = trace.one("i", "dev", "host time")
    assert ns(on_plain, trace) == t
    # two lanes of one pseudo-process
    assert on_plain["pid"] == trace.one("i", "dev", "at pair")["pid"]
    assert on_plain["tid"] != trace.one("i", "dev", "at pair")["tid"]


def test_an_overlapping_slice_goes_to_an_overflow_lane(recording):
    recording.start()
    lane = ringtrace.Track("overlaps", "stream 1")
    t = ringtrace.now_ns()
    lane.complete("gpu", "first", t, 1_000)
    lane.complete("gpu", "nested", t + 100, 200)  # inside: same lane
    lane.complete("gpu", "crossing", t + 500, 1_000)  # partly over "first"
    trace = recording.stop()
    first, nested, crossing = (trace.one("X", "gpu", n) for n in ("first", "nested", "crossing"))
    assert first["tid"] == nested["tid"] != crossing["tid"]
    assert meta(trace, "thread_name", crossing["pid"], crossing["tid"])["name"] == "stream 1 (2)"


def test_the_same_names_give_the_same_track_which_outlives_its_object(recording):
    a = ringtrace.Track("queue", "in")  # made while stopped
    recording.start()
    a.instant("q", "a", ringtrace.now_ns())
    del a
    ringtrace.Track("queue", "in").instant("q", "again", ringtrace.now_ns())
    ringtrace.Track("queue", "in").instant("q", "third", ringtrace.now_ns())
    trace = recording.stop()
    lanes = {(e["pid"], e["tid"]) for e in trace.user()}
    assert len(lanes) == 1 and len(trace.user()) == 3
    pid = lanes.pop()[0]
    assert [e["args"]["name"] for e in trace.of("M", None, "process_name")
            if e["pid"] == pid] == ["queue"]


def test_any_thread_records_on_a_track_and_a_stopped_recorder_records_nothing(recording):
    worker = ringtrace.Track("remote", "worker 1")
    worker.instant("w", "stopped", 1)  # nothing: not recording
    recording.start()

    def record(k):
        for i in range(100):
            worker.complete("w", "task", ringtrace.now_ns(), 1, thread=k, i=i)

    threads = [threading.Thread(target=record, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    trace = recording.stop()
    tasks = trace.of("X", "w", "task")
    assert sorted((e["args"]["thread"], e["args"]["i"]) for e in tasks) == [
        (k, i) for k in range(3) for i in range(100)]
    assert {e["pid"] for e in tasks} == {tasks[0]["pid"]} and tasks[0]["pid"] > PSEUDO_BASE
    assert trace.of("i", "w", "stopped") == []
    assert recording.stats["events_recorded"] == 300


def test_the_category_filter_applies_to_tracks(recording):
    recording.start(categories="-hidden")
    t = ringtrace.Track("filtered", "lane")
    t.instant("hidden", "no", ringtrace.now_ns())
    t.counter("hidden", "no", ringtrace.now_ns(), 1)
    t.instant("shown", "yes", ringtrace.now_ns())
    trace = recording.stop()
    assert [e["name"] for e in trace.user()] == ["yes"]


def test_bad_names_times_and_values_raise(recording):
    with pytest.raises(TypeError, match="process name must be a str"):
        ringtrace.Track(1, "lane")
    with pytest.raises(ValueError, match="1 to 63 UTF-8 bytes"):
        ringtrace.Track("p", "x" * 64)
    with pytest.raises(ValueError, match="1 to 63 UTF-8 bytes"):
        ringtrace.Track("", "lane")
    with pytest.raises(ValueError, match="1 to 63 UTF-8 bytes"):
        ringtrace.Track("p", "a\0b")
    with pytest.raises(ValueError, match="1 to 63 UTF-8 bytes"):
        ringtrace.Track("p", "lane", label="é" * 32)  # 64 bytes
    with pytest.raises(TypeError):
        ringtrace.Track("p", "lane", "positional label")
    with pytest.raises(TypeError):
        ringtrace.Track("p", "lane", process_sort_index="1")
    ringtrace.Track("p" * 63, "é" * 31)  # 63 and 62 bytes: fine
    recording.start()
    t = ringtrace.Track("errors", "lane")
    with pytest.raises(ValueError, match=r"Track.complete\(\): ts is an int from 0"):
        t.complete("c", "n", -1, 1)
    with pytest.raises(TypeError, match=r"Track.complete\(\): dur must be an int, not float"):
        t.complete("c", "n", 1, 1.5)
    with pytest.raises(TypeError, match=r"Track.instant\(\) takes 3 positional"):
        t.instant("c", "n")
    with pytest.raises(TypeError, match="must be a str"):
        t.instant("c", 5, 1)
    with pytest.raises(TypeError, match="argument 'v'"):
        t.instant("c", "n", 1, v=object())
    with pytest.raises(TypeError, match=r"\(cat, name, ts, value\) or"):
        t.counter("c", "n", 1, 2, extra=3)
    with pytest.raises(TypeError, match=r"\(cat, name, ts, value\) or"):
        t.counter("c", "n", 1)
    with pytest.raises(TypeError, match="series v must be an int or a float, not str"):
        t.counter("c", "n", 1, v="3")
    with pytest.raises(TypeError, match="an id must be an int"):
        t.flow_start("c", "n", 1, "id")
    with pytest.raises(TypeError, match="takes no keyword"):
        t.flow_end("c", "n", 1, 2, k=1)
    with pytest.raises(ValueError, match=r"Track.clock_pair\(\): host_ns"):
        t.clock_pair(0, -5)
    with pytest.raises(ValueError, match="offset_ns is an int from -2\\*\\*63"):
        t.clock_offset(2**63)
    with pytest.raises(TypeError):
        t.clock_offset(1.0)
    t.counter("c", "big", 7, 2**70)  # past 64 bits: a float, as counter()
    trace = recording.stop()
    assert [e["name"] for e in trace.user()] == ["big"]
    assert trace.one("C", "c", "big")["args"] == {"value": float(2**70)}


def test_tracks_past_the_librarys_table_raise(tmp_path):
    code = (
        "import ringtrace\n"
        "made = 0\n"
        "try:\n"
        "    while True:\n"
        "        ringtrace.Track('p%d' % (made % 7), 'lane %d' % made)\n"
        "        made += 1\n"
        "except RuntimeError as e:\n"
        "    print(made, e)\n"
        "ringtrace.Track('p0', 'lane 0')  # an existing one is still found\n"
    )
    r = run_python(code, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    made, message = r.stdout.split(" ", 1)
    assert int(made) == 1024 and "already has 1024 tracks" in message
