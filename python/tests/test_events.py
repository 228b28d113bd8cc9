# SPDX-License-Identifier: MIT
"""Scopes, instants, counters, flows, async spans, thread names and arguments, each
read back from the trace."""

import gc
import math
import threading

import pytest

import ringtrace
from conftest import nests


def test_scopes_nest_with_their_names_and_categories(recording):
    recording.start()
    with ringtrace.scope("app", "outer"):
        with ringtrace.scope("io", "middle"):
            with ringtrace.scope("app", "inner"):
                pass
        with ringtrace.scope("app", "second child"):
            pass
    trace = recording.stop()
    outer = trace.one("X", "app", "outer")
    middle = trace.one("X", "io", "middle")
    inner = trace.one("X", "app", "inner")
    second = trace.one("X", "app", "second child")
    assert nests(middle, outer) and nests(inner, middle) and nests(second, outer)
    assert not nests(second, middle)
    assert second["ts"] >= middle["ts"] + middle["dur"]
    for e in (outer, middle, inner, second):
        assert e["pid"] == trace.pid and e["tid"] == threading.get_native_id()
        assert "args" not in e
    assert len(trace.user()) == 4


def test_a_scope_is_recorded_when_its_block_raises(recording):
    recording.start()
    with pytest.raises(ZeroDivisionError):
        with ringtrace.scope("app", "raises"):
            1 / 0
    trace = recording.stop()
    assert len(trace.of("X", "app", "raises")) == 1


def test_a_scope_made_before_start_records_nothing_and_one_object_may_be_reused(recording):
    s = ringtrace.scope("app", "reused")
    with s:
        pass  # stopped: nothing
    recording.start()
    for _ in range(3):
        with s as entered:
            assert entered is s
    trace = recording.stop()
    assert len(trace.of("X", "app", "reused")) == 3


def test_argument_values_of_every_type(recording):
    recording.start()
    values = dict(
        none=None,
        yes=True,
        no=False,
        small=-42,
        i64max=2**63 - 1,
        i64min=-(2**63),
        u64=2**64 - 1,
        huge=2**80,
        negative_huge=-(2**70),
        f=2.5,
        tiny=-1.25e-300,
        nan=math.nan,
        s="plain",
        escapes='quote " backslash \\ newline \n tab \t',
        unicode="żółw 🐢 \u2028",
        empty="",
    )
    with ringtrace.scope("app", "typed", **values):
        pass
    ringtrace.instant("app", "typed instant", **values)
    trace = recording.stop()
    for e in (trace.one("X", "app", "typed"), trace.one("i", "app", "typed instant")):
        args = e["args"]
        assert list(args) == list(values)
        assert args["none"] is None
        assert args["yes"] is True and args["no"] is False
        assert args["small"] == -42 and type(args["small"]) is int
        assert args["i64max"] == 2**63 - 1 and args["i64min"] == -(2**63)
        assert args["u64"] == 2**64 - 1
        assert args["huge"] == str(2**80)  # past 64 bits: the digits, as a string
        assert args["negative_huge"] == str(-(2**70))
        assert args["f"] == 2.5 and type(args["f"]) is float
        assert args["tiny"] == -1.25e-300
        assert args["nan"] is None  # JSON has no NaN
        for k in ("s", "escapes", "unicode", "empty"):
            assert args[k] == values[k]


def test_a_long_string_is_cut_at_max_copy_bytes(recording):
    recording.start()
    ringtrace.instant("app", "long", s="x" * (ringtrace.MAX_COPY + 100))
    trace = recording.stop()
    assert trace.one("i", "app", "long")["args"]["s"] == "x" * ringtrace.MAX_COPY


def test_lists_tuples_and_dicts_become_json_arrays_and_objects(recording):
    recording.start()
    values = dict(
        shape=[[2, 3], [4]],
        empty=[[], {}, ()],
        meta={"dtype": "float32", "strides": (3, 1), "ok": True, "none": None},
        mixed=[1, -(2**63), 2**64 - 1, 2**70, 2.5, math.nan, "żółw 🐢", None, False],
        keys={1: "one", "two": 2, "quote \" key": {"deeper": [[[1]]]}},
        plain=7,
    )
    with ringtrace.scope("app", "valued", **values):
        pass
    ringtrace.instant("app", "valued instant", **values)
    ringtrace.async_begin("app", "valued async", 5, meta=values["meta"])
    ringtrace.async_end("app", "valued async", 5)
    trace = recording.stop()
    want = dict(
        shape=[[2, 3], [4]],
        empty=[[], {}, []],
        meta={"dtype": "float32", "strides": [3, 1], "ok": True, "none": None},
        mixed=[1, -(2**63), 2**64 - 1, str(2**70), 2.5, None, "żółw 🐢", None, False],
        keys={"1": "one", "two": 2, 'quote " key': {"deeper": [[[1]]]}},
        plain=7,
    )
    for e in (trace.one("X", "app", "valued"), trace.one("i", "app", "valued instant")):
        assert e["args"] == want
        assert list(e["args"]) == list(want)
        assert list(e["args"]["meta"]) == list(want["meta"])  # order kept
    assert trace.one("b", "app", "valued async")["args"] == {"meta": want["meta"]}


def test_a_value_past_max_copy_is_cut_to_what_fits_and_closed(recording):
    recording.start()
    items = [f"s{i:09d}" for i in range(1000)]  # 15 bytes each: tag, length, 10 bytes
    ringtrace.instant("app", "long", v={"items": items}, after=1)
    small = list(range(100))  # the inline bytes hold this one, the next gets its own
    ringtrace.instant("app", "two", a=small, b=items[:400], c=small)
    trace = recording.stop()
    args = trace.one("i", "app", "long")["args"]
    # built into 4096 bytes, whole items: the object's head (5), the key (4 + 5), the
    # array's head (5), then 271 strings; the 272nd does not fit
    assert args["v"] == {"items": items[:271]}
    assert args["after"] == 1
    args = trace.one("i", "app", "two")["args"]
    assert args == {"a": small, "b": items[:272], "c": small}


def test_values_too_deep_or_of_other_types_are_errors_naming_the_argument(recording):
    recording.start()
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="'loop' nests lists and dicts deeper than 32"):
        ringtrace.instant("app", "x", loop=loop)
    deep = 1
    for _ in range(33):
        deep = [deep]
    with pytest.raises(ValueError, match="'deep' nests"):
        ringtrace.instant("app", "x", deep=deep)
    with pytest.raises(TypeError, match="'obj' is a object"):
        ringtrace.instant("app", "x", obj=object())
    with pytest.raises(TypeError, match="'b' is a bytes"):
        ringtrace.async_begin("app", "x", 1, b=b"x")
    with pytest.raises(TypeError, match="'s' holds a set"):
        ringtrace.scope("app", "x", s=[{1}])
    with pytest.raises(TypeError, match="'k' has a dict key that is a tuple"):
        ringtrace.instant("app", "x", k={(1, 2): 3})
    with pytest.raises(TypeError, match="'k' has a dict key that is a bool"):
        ringtrace.instant("app", "x", k={"a": {True: 3}})
    ringtrace.instant("app", "kept", deep=deep[0])  # 32 lists deep: recorded
    trace = recording.stop()
    assert [e["name"] for e in trace.user()] == ["kept"]
    inner = trace.one("i", "app", "kept")["args"]["deep"]
    for _ in range(31):
        assert isinstance(inner, list) and len(inner) == 1
        inner = inner[0]
    assert inner == [1]


def test_bad_names_and_categories(recording):
    recording.start()
    with pytest.raises(TypeError, match="the category must be a str, not int"):
        ringtrace.scope(1, "x")
    with pytest.raises(TypeError, match="the name must be a str, not bytes"):
        ringtrace.instant("app", b"x")
    with pytest.raises(ValueError, match="NUL character"):
        ringtrace.scope("app", "a\0b")
    with pytest.raises(ValueError, match="NUL character"):
        ringtrace.instant("app", "x", s="a\0b")
    with pytest.raises(UnicodeEncodeError):
        ringtrace.instant("app", "\ud800")
    with pytest.raises(TypeError, match="2 positional arguments"):
        ringtrace.scope("app")
    with pytest.raises(TypeError, match="positional arguments"):
        ringtrace.counter("app", "c")
    trace = recording.stop()
    assert trace.user() == []


def test_more_than_max_args_keeps_the_first_and_counts_the_event(recording):
    recording.start()
    many = {f"k{i:02}": i for i in range(ringtrace.MAX_ARGS + 4)}
    ringtrace.instant("app", "many", **many)
    with ringtrace.scope("app", "many", **many):
        pass
    trace = recording.stop()
    want = {f"k{i:02}": i for i in range(ringtrace.MAX_ARGS)}
    assert trace.one("i", "app", "many")["args"] == want
    assert trace.one("X", "app", "many")["args"] == want
    assert recording.stats["events_args_cut"] == 2
    assert trace.end_marker()["args"]["args_cut"] == 2


def test_names_made_at_run_time_are_kept_after_their_strings_die(recording):
    recording.start(on_full="block")
    want = []
    for i in range(200):
        cat = "".join(["cat", str(i % 7)])
        name = "".join(["name ", str(i)])
        key = "".join(["key", str(i % 3)])
        want.append((cat, name, key, i))
        with ringtrace.scope(cat, name, **{key: i}):
            ringtrace.instant(cat, name + " i")
        del cat, name, key
        gc.collect()
        # fresh strings, likely where the dead ones were
        junk = ["".join(["X" * 9, str(j)]) for j in range(50)]
        del junk
    trace = recording.stop()
    got = [(e["cat"], e["name"], *e["args"].items()) for e in trace.of("X")]
    assert got == [(c, n, (k, i)) for c, n, k, i in want]
    assert [e["name"] for e in trace.of("i", None, None) if e.get("cat")] == [
        n + " i" for _, n, _, _ in want
    ]


def test_equal_names_are_interned_once():
    ringtrace.instant("app", "interned-once-a")  # stopped: still interned (checked early)
    before = ringtrace._ringtrace._intern_counts()
    for i in range(100):
        name = "".join(["interned-once-", "b"])
        ringtrace.instant("app", name)
        with ringtrace.scope("app", name):
            pass
    after = ringtrace._ringtrace._intern_counts()
    assert after[0] - before[0] == 1  # one new string
    assert after[1] - before[1] == 1  # one new site: (app, interned-once-b)


def test_counters_int_float_and_past_64_bits(recording):
    recording.start()
    ringtrace.counter("app", "queue", 3)
    ringtrace.counter("app", "queue", -7)
    ringtrace.counter("app", "load", 0.75)
    ringtrace.counter("app", "big", 2**70)
    ringtrace.counter("app", "flag", True)
    with pytest.raises(TypeError, match="int or a float, not str"):
        ringtrace.counter("app", "queue", "3")
    trace = recording.stop()
    assert [e["args"]["value"] for e in trace.of("C", "app", "queue")] == [3, -7]
    assert trace.one("C", "app", "load")["args"]["value"] == 0.75
    assert trace.one("C", "app", "big")["args"]["value"] == float(2**70)
    assert trace.one("C", "app", "flag")["args"]["value"] == 1


def test_flows_between_threads(recording):
    recording.start()
    ids = [ringtrace.flow_id() for _ in range(3)]
    assert len(set(ids)) == 3 and all(0 < i < 2**64 for i in ids)
    flow = ids[0]
    with ringtrace.scope("app", "send"):
        ringtrace.flow_begin("app", "message", flow)

    def receiver():
        with ringtrace.scope("app", "relay"):
            ringtrace.flow_step("app", "message", flow)
        with ringtrace.scope("app", "receive"):
            ringtrace.flow_end("app", "message", flow)

    t = threading.Thread(target=receiver)
    t.start()
    t.join()
    with pytest.raises(ValueError, match="0 to 2\\*\\*64 - 1"):
        ringtrace.flow_begin("app", "message", -1)
    with pytest.raises(TypeError, match="an id must be an int"):
        ringtrace.flow_end("app", "message", "1")
    trace = recording.stop()
    s = trace.one("s", "app", "message")
    step = trace.one("t", "app", "message")
    f = trace.one("f", "app", "message")
    assert s["id"] == step["id"] == f["id"] == hex(flow)
    assert f["bp"] == "e"
    assert s["tid"] == threading.get_native_id()
    assert step["tid"] == f["tid"] == t.native_id != s["tid"]
    send, receive = trace.one("X", "app", "send"), trace.one("X", "app", "receive")
    assert send["ts"] <= s["ts"] <= send["ts"] + send["dur"]
    assert receive["ts"] <= f["ts"] <= receive["ts"] + receive["dur"]


def test_async_spans_by_hand(recording):
    recording.start()
    a, b = ringtrace.flow_id(), ringtrace.flow_id()
    ringtrace.async_begin("net", "request", a, url="/a")
    ringtrace.async_begin("net", "request", b, url="/b")
    ringtrace.async_instant("net", "headers", a, status=200)
    ringtrace.async_end("net", "request", a)
    ringtrace.async_end("net", "request", b)
    trace = recording.stop()
    got = [(e["ph"], e["name"], e["id"], e.get("args")) for e in trace.of(cat="net")]
    assert got == [
        ("b", "request", hex(a), {"url": "/a"}),
        ("b", "request", hex(b), {"url": "/b"}),
        ("n", "headers", hex(a), {"status": 200}),
        ("e", "request", hex(a), None),
        ("e", "request", hex(b), None),
    ]


def test_complete_records_a_slice_with_its_times_and_arguments(recording):
    recording.start()
    start = ringtrace.now_ns()
    end = start + 2_500_000  # 2.5 ms later, in the future: the times are taken as given
    ringtrace.complete("app", "known times", start, end, outcome="passed", line=7)
    ringtrace.complete("app", "empty", end, end)
    for bad, err in (
        ((start, start - 1), ValueError),  # ends before it starts
        ((-1, end), ValueError),
        ((start, 2**64), ValueError),
        ((True, end), TypeError),
        ((float(start), end), TypeError),
    ):
        with pytest.raises(err):
            ringtrace.complete("app", "bad", *bad)
    with pytest.raises(TypeError):
        ringtrace.complete("app", "too few", start)
    with pytest.raises(TypeError):
        ringtrace.complete("app", "bad arg", start, end, value={1})
    trace = recording.stop()
    known = trace.one("X", "app", "known times")
    assert round(known["dur"] * 1000) == 2_500_000
    assert known["args"] == {"outcome": "passed", "line": 7}
    assert known["tid"] == threading.get_native_id()
    empty = trace.one("X", "app", "empty")
    assert empty["dur"] == 0 and "args" not in empty
    assert round(empty["ts"] * 1000) == round(known["ts"] * 1000) + 2_500_000
    assert len(trace.user()) == 2


def test_threads_record_on_their_own_tid_with_their_names(recording):
    recording.start(on_full="block")
    n_threads, per_thread = 4, 500
    tids = {}
    barrier = threading.Barrier(n_threads)

    def work(k):
        ringtrace.thread_name(f"worker {k}")
        tids[k] = threading.get_native_id()
        barrier.wait()
        for i in range(per_thread):
            with ringtrace.scope("work", "item", worker=k, i=i):
                ringtrace.counter("work", f"progress {k}", i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace = recording.stop()
    names = trace.thread_names()
    for k in range(n_threads):
        assert names[tids[k]] == f"worker {k}"
        items = [e for e in trace.of("X", "work", "item") if e["args"]["worker"] == k]
        assert [e["args"]["i"] for e in items] == list(range(per_thread))
        assert {e["tid"] for e in items} == {tids[k]}
        counts = trace.of("C", "work", f"progress {k}")
        assert [e["args"]["value"] for e in counts] == list(range(per_thread))
    assert recording.stats["events_dropped"] == 0
    assert recording.stats["threads"] == n_threads


def test_category_filter_applies_to_every_call(recording):
    recording.start(categories="-noisy")
    for cat in ("app", "noisy"):
        with ringtrace.scope(cat, "scope"):
            pass
        with ringtrace.scope(cat, "scope with args", k=1):
            pass
        ringtrace.instant(cat, "instant")
        ringtrace.counter(cat, "counter", 1)

        @ringtrace.trace(cat=cat, name="traced")
        def f():
            return 1

        f()
    trace = recording.stop()
    assert trace.of(cat="noisy") == []
    assert len(trace.of(cat="app")) == 5
    assert recording.stats["events_recorded"] == 5  # filtered: not recorded, not dropped
    assert recording.stats["events_dropped"] == 0


def test_calls_while_stopped_record_nothing(tmp_path):
    ringtrace.stop()
    with ringtrace.scope("app", "stopped", k=1):
        ringtrace.instant("app", "stopped")
        ringtrace.counter("app", "stopped", 1)
        ringtrace.async_begin("app", "stopped", 1)
    path = str(tmp_path / "after.json")
    ringtrace.start(path)
    ringtrace.stop()
    from conftest import Trace

    assert Trace(path).user() == []
