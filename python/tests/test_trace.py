# SPDX-License-Identifier: MIT
"""@ringtrace.trace: functions as slices, coroutines and generators as async spans."""

import asyncio
import functools
import inspect
import pickle
import threading

import pytest

import ringtrace
from conftest import nests


@ringtrace.trace
def plain(a, b=2, *rest, c=3, **kw):
    """Adds."""
    return a + b + c + sum(rest) + sum(kw.values())


@ringtrace.trace(cat="app", name="fib")
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@ringtrace.trace(cat="app")
def raises():
    raise LookupError("from a traced function")


class Widget:
    def __init__(self, k):
        self.k = k

    @ringtrace.trace(cat="app")
    def method(self, x):
        return self.k * x

    @staticmethod
    @ringtrace.trace(cat="app")
    def static(x):
        return -x

    @classmethod
    def make(cls):
        return cls(5)


def test_a_function_call_is_a_slice_named_module_qualname(recording):
    recording.start()
    assert plain(1) == 6
    assert plain(1, 2, 3, 4, c=5, d=6) == 21
    trace = recording.stop()
    calls = trace.of("X", "python", f"{__name__}.plain")
    assert len(calls) == 2
    assert all(e["tid"] == threading.get_native_id() for e in calls)


def test_the_wrapper_looks_like_the_function():
    assert plain.__name__ == "plain"
    assert plain.__qualname__ == "plain"
    assert plain.__doc__ == "Adds."
    assert plain.__module__ == __name__
    assert plain.__wrapped__.__name__ == "plain"
    assert str(inspect.signature(plain)) == "(a, b=2, *rest, c=3, **kw)"
    assert Widget.method.__qualname__ == "Widget.method"


def test_a_traced_function_pickles_by_name():
    assert pickle.loads(pickle.dumps(plain)) is plain
    assert pickle.loads(pickle.dumps(Widget.method)) is Widget.method
    assert pickle.loads(pickle.dumps(worker)) is worker


def test_recursion_nests(recording):
    recording.start(on_full="block")
    assert fib(6) == 8
    trace = recording.stop()
    calls = trace.of("X", "app", "fib")
    assert len(calls) == 25  # the calls fib(6) makes, itself included
    outer = max(calls, key=lambda e: e["dur"])
    assert all(nests(e, outer) for e in calls)
    assert trace.of("X", "app", "fib")[-1] is outer  # an X is written at its end


def test_an_exception_passes_through_and_the_call_is_recorded(recording):
    recording.start()
    with pytest.raises(LookupError, match="from a traced function"):
        raises()
    trace = recording.stop()
    assert len(trace.of("X", "app", f"{__name__}.raises")) == 1


def test_methods_bind(recording):
    recording.start()
    w = Widget.make()
    assert w.method(3) == 15
    bound = w.method
    assert bound(4) == 20
    assert Widget.method(w, 2) == 10
    assert Widget.static(7) == -7
    assert w.static(8) == -8
    trace = recording.stop()
    assert len(trace.of("X", "app", f"{__name__}.Widget.method")) == 3
    assert len(trace.of("X", "app", f"{__name__}.Widget.static")) == 2


def test_a_traced_function_on_threads(recording):
    recording.start(on_full="block")

    @ringtrace.trace(cat="app", name="job")
    def job(i):
        return i * i

    results = {}

    def run(k):
        results[k] = [job(i) for i in range(100)]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace = recording.stop()
    assert all(results[k] == [i * i for i in range(100)] for k in range(3))
    by_tid = {}
    for e in trace.of("X", "app", "job"):
        by_tid[e["tid"]] = by_tid.get(e["tid"], 0) + 1
    assert by_tid == {t.native_id: 100 for t in threads}


async def _step(log, who, n):
    for i in range(n):
        log.append((who, i))
        await asyncio.sleep(0)


@ringtrace.trace(cat="aio")
async def worker(log, who, n):
    await _step(log, who, n)
    return who


@ringtrace.trace(cat="aio", name="parent")
async def parent(log):
    return await asyncio.gather(worker(log, "a", 3), worker(log, "b", 3))


def test_interleaving_coroutines_are_async_spans(recording):
    recording.start()
    log = []
    assert asyncio.run(parent(log)) == ["a", "b"]
    trace = recording.stop()
    # the coroutines did interleave on this one thread
    assert [w for w, _ in log] == ["a", "b", "a", "b", "a", "b"]
    name = f"{__name__}.worker"
    begins, ends = trace.of("b", "aio", name), trace.of("e", "aio", name)
    assert len(begins) == len(ends) == 2
    ids = [e["id"] for e in begins]
    assert len(set(ids)) == 2 and sorted(e["id"] for e in ends) == sorted(ids)
    # the spans overlap: both began before either ended
    assert max(e["ts"] for e in begins) <= min(e["ts"] for e in ends)
    for e in begins + ends:
        assert e["tid"] == threading.get_native_id()
    # the parent's span encloses both, with an id of its own
    pb, pe = trace.one("b", "aio", "parent"), trace.one("e", "aio", "parent")
    assert pb["id"] == pe["id"] and pb["id"] not in ids
    assert pb["ts"] <= min(e["ts"] for e in begins)
    assert pe["ts"] >= max(e["ts"] for e in ends)
    assert trace.of("X", "aio") == []  # no slice that could mis-nest


def test_a_coroutine_that_raises_ends_its_span(recording):
    @ringtrace.trace(cat="aio", name="failing")
    async def failing():
        await asyncio.sleep(0)
        raise ValueError("inside")

    recording.start()
    with pytest.raises(ValueError, match="inside"):
        asyncio.run(failing())
    trace = recording.stop()
    b, e = trace.one("b", "aio", "failing"), trace.one("e", "aio", "failing")
    assert b["id"] == e["id"]


def test_a_traced_coroutine_function_stays_one():
    assert inspect.iscoroutinefunction(worker)
    assert worker.__name__ == "worker"


def test_a_generator_is_an_async_span_over_its_iteration(recording):
    @ringtrace.trace(cat="gen", name="counting")
    def counting(n):
        got = yield "ready"
        for i in range(n):
            got = yield got * i

    recording.start()
    g = counting(3)
    assert inspect.isgenerator(g)
    assert next(g) == "ready"
    assert [g.send(10), g.send(20), g.send(30)] == [0, 20, 60]
    with pytest.raises(StopIteration):
        next(g)
    trace = recording.stop()
    b, e = trace.one("b", "gen", "counting"), trace.one("e", "gen", "counting")
    assert b["id"] == e["id"] and b["ts"] <= e["ts"]


def test_async_generators_are_refused():
    with pytest.raises(TypeError, match="async generator"):

        @ringtrace.trace
        async def agen():
            yield 1


def test_trace_needs_a_callable_and_str_names():
    with pytest.raises(TypeError, match="not callable"):
        ringtrace.trace(3)
    with pytest.raises(TypeError):
        ringtrace.trace(cat=3)(lambda: None)
    partial = functools.partial(plain, 1)
    traced = ringtrace.trace(partial, cat="app", name="partial")
    assert traced() == 6
