# SPDX-License-Identifier: MIT
"""Function tracing: ringtrace.profile and `python -m ringtrace run` (docs/python.md).

The C profiling hook (_ringtrace._profile_enable) records every call as a complete
event; this file starts the session when none runs, puts the hook on threads
started later (threading.setprofile), and keeps a forked child recording into a
file of its own, finished also when the child leaves through os._exit.
"""

import os
import signal
import threading
from typing import Any, Iterable, Optional

from . import _ringtrace

_real_exit = os._exit
_state = None  # the active profile: (path pattern, config) when it owns the session


def _child_pattern(path):
    """The pattern a forked child records into: the parent's when it has %p, else
    with -%p before the extension."""
    path = os.fspath(path)
    if "%p" in path:
        return path
    head, tail = os.path.split(path)
    stem, dot, ext = tail.partition(".")
    return os.path.join(head, stem + "-%p" + dot + ext)


def _exit_finishing(code):
    """os._exit while profiling: finish the file (atexit does not run), then exit.

    SIGTERM and SIGINT wait meanwhile (the writer thread blocks every signal): a pool
    ends its workers with SIGTERM, which may come while a worker that already took
    its sentinel is finishing its file on the way out; the process then exits with
    its own status."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        _ringtrace._profile_end_open()
        _ringtrace._profile_disable()
        _ringtrace.stop()
    except BaseException:
        pass
    _real_exit(code)


_FINISHING_SIGNALS = {signal.SIGTERM, signal.SIGINT}
_mask_before_fork = None


def _before_fork():
    """While profiling into a session of its own, the child is born with SIGTERM and
    SIGINT blocked, until its session (which finishes the file at SIGTERM) runs: a
    pool may end a worker that is still starting."""
    global _mask_before_fork
    if _state is not None:
        _mask_before_fork = signal.pthread_sigmask(signal.SIG_BLOCK, _FINISHING_SIGNALS)


def _restore_mask():
    global _mask_before_fork
    if _mask_before_fork is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_fork)
        _mask_before_fork = None


def _after_fork_child():
    global _state
    try:
        if not _ringtrace._profile_after_fork() or _state is None:
            return
        path, config = _state
        if config.get("signals") is None and not os.environ.get("RINGTRACE_SIGNALS"):
            # a pool ends its workers with SIGTERM: finish the file then
            config = dict(config, signals="TERM")
        try:
            _ringtrace.start(_child_pattern(path), **config)
        except Exception:
            _ringtrace._profile_disable()  # no file of its own: the child records nothing
            _state = None
    finally:
        _restore_mask()


os.register_at_fork(
    before=_before_fork, after_in_parent=_restore_mask, after_in_child=_after_fork_child
)


class profile:
    """Record every Python function call (and with c_calls=True every C call) as a
    slice on its thread, named ``module.qualname`` with ``file`` and ``line`` as
    arguments, in category "python" ("python.c" for C calls).

    ``include``/``exclude``: prefixes of the qualified name (module or
    ``module.Class.method``, matched at a dot); ``min_ns``: calls shorter are not
    recorded; ``max_depth``: calls deeper on the thread's stack are not recorded
    (0: no limit). When the recorder is not running, the profile starts a session
    with ``path`` and ``config`` (start()'s options) and stops it at the end; a forked
    child records into its own file (%p) and finishes it at exit and at os._exit.
    """

    def __init__(
        self,
        path: Any = None,
        *,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        min_ns: int = 0,
        max_depth: int = 0,
        c_calls: bool = False,
        **config: Any,
    ) -> None:
        self._include = [str(p) for p in include]
        self._exclude = [str(p) for p in exclude]
        if min_ns < 0 or max_depth < 0:
            raise ValueError("ringtrace.profile: min_ns and max_depth are >= 0")
        self._options = (int(min_ns), int(max_depth), bool(c_calls))
        if path is None:
            path = os.environ.get("RINGTRACE_FILE") or "ringtrace-%p.json"
        _ringtrace._check_config(path, **config)
        self._path = path
        self._config = config
        self._owned = False
        self.path: Optional[str] = None

    def __enter__(self) -> "profile":
        return self._begin(enable=True)

    def _begin(self, enable):
        """Start the session when none runs, hook threads started later, and (enable)
        put the hook on every thread; the CLI enables it in _exec() instead."""
        global _state
        if not _ringtrace.stats()["running"]:
            _ringtrace.start(self._path, **self._config)
            self._owned = True
        self.path = _ringtrace.trace_path()
        threading.setprofile(_ringtrace._profile_thread_bootstrap)
        if enable:
            try:
                _ringtrace._profile_enable(*self._hook_options())
            except BaseException:
                self.__exit__(None, None, None)
                raise
        _state = (self._path, self._config) if self._owned else None
        os._exit = _exit_finishing
        return self

    def _hook_options(self):
        return (self._include, self._exclude) + self._options

    def _exec(self, code, globals_):
        """Run a script's code with the hook on from its first frame."""
        _ringtrace._profile_exec(code, globals_, *self._hook_options())

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        global _state
        _ringtrace._profile_disable()
        threading.setprofile(None)
        os._exit = _real_exit
        _state = None
        if self._owned:
            self._owned = False
            _ringtrace.stop()
        return None
