# SPDX-License-Identifier: MIT
"""Record Python into a ringtrace trace, through the C recorder.

The recorder is libringtrace's: the same file, the same session and the same
promises as the C code in the process (a C extension calling rtr_* records beside
Python). Names and categories are interned once; arguments are read with the GIL
held, and the recording is the library's C hot path. See docs/python.md.

    import ringtrace

    with ringtrace.Session("trace-%p.json", on_full="block"):
        with ringtrace.scope("app", "load", file="a.csv"):
            ...
        ringtrace.counter("app", "queue", 3)
"""

import functools as _functools
import inspect as _inspect
import os as _os
from typing import Any, Callable, Dict, Optional, TypeVar, Union

_F = TypeVar("_F", bound=Callable[..., Any])

from ._ringtrace import (
    MAX_ARGS,
    MAX_COPY,
    MEM_HOST,
    Track,
    async_begin,
    async_end,
    async_instant,
    complete,
    counter,
    flow_begin,
    flow_end,
    flow_id,
    flow_step,
    flush,
    instant,
    mem_alloc,
    mem_free,
    now_ns,
    profile_walk,
    scope,
    snapshot,
    start,
    stats,
    stop,
    thread_name,
    trace_path,
    version,
)
from . import _ringtrace
from ._profile import profile

__all__ = [
    "MAX_ARGS",
    "MAX_COPY",
    "MEM_HOST",
    "Session",
    "Track",
    "async_begin",
    "async_end",
    "async_instant",
    "complete",
    "counter",
    "flow_begin",
    "flow_end",
    "flow_id",
    "flow_step",
    "flush",
    "instant",
    "mem_alloc",
    "mem_free",
    "profile",
    "now_ns",
    "profile_walk",
    "scope",
    "snapshot",
    "start",
    "stats",
    "stop",
    "thread_name",
    "trace",
    "trace_path",
    "version",
]

__version__ = version()

_os.register_at_fork(after_in_child=_ringtrace._after_fork_child)


class Session:
    """A recording session as a context manager: start() on enter, stop() on exit.

    The arguments are start()'s and are checked when the Session is made, so a bad
    option raises there. On enter, ``path`` is the file (the pattern expanded); on
    exit, ``stats`` holds the session's final counters (stats()).
    """

    path: Optional[str]
    stats: Optional[Dict[str, Union[int, bool, str]]]

    def __init__(self, path: Any = None, **config: Any) -> None:
        _ringtrace._check_config(path, **config)
        self._path = path
        self._config = config
        self.path = None
        self.stats = None

    def __enter__(self) -> "Session":
        start(self._path, **self._config)
        self.path = trace_path()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            stop()
        finally:
            self.stats = stats()
        return None


def _name_of(func):
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{module}.{qualname}" if module else qualname


def _async_wrapper(func, cat, name):
    @_functools.wraps(func)
    async def traced_coroutine(*args, **kwargs):
        span = flow_id()
        async_begin(cat, name, span)
        try:
            return await func(*args, **kwargs)
        finally:
            async_end(cat, name, span)

    return traced_coroutine


def _generator_wrapper(func, cat, name):
    @_functools.wraps(func)
    def traced_generator(*args, **kwargs):
        span = flow_id()
        async_begin(cat, name, span)
        try:
            return (yield from func(*args, **kwargs))
        finally:
            async_end(cat, name, span)

    return traced_generator


def trace(
    func: Optional[_F] = None, *, cat: str = "python", name: Optional[str] = None
) -> Any:
    """Record every call of a function: ``@ringtrace.trace`` or
    ``@ringtrace.trace(cat="app", name="load")``.

    A plain function's call is one complete event (a slice on the calling thread),
    as a scope around it. A coroutine function's call is an async span (``b``/``e``
    with an id of its own) from the coroutine's first step to its return, since
    coroutines interleave on one thread and their slices would not nest; a
    generator function's likewise, from the first next() to the end of the
    iteration. The name defaults to ``module.qualname``.
    """

    def decorate(f: _F) -> _F:
        n = name if name is not None else _name_of(f)
        if _inspect.iscoroutinefunction(f):
            return _async_wrapper(f, cat, n)
        if _inspect.isasyncgenfunction(f):
            raise TypeError(
                f"ringtrace.trace: {n} is an async generator function, which trace() "
                "does not support yet"
            )
        if _inspect.isgeneratorfunction(f):
            return _generator_wrapper(f, cat, n)
        return _functools.update_wrapper(_ringtrace.traced(f, cat, n), f)

    if func is not None:
        return decorate(func)
    return decorate
