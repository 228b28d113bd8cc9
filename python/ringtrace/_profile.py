# SPDX-License-Identifier: MIT
"""Function tracing: ringtrace.profile and `python -m ringtrace run` (docs/python.md).

The C profiling hook (_ringtrace._profile_enable) records every call as a complete
event; this file starts the session when none runs, puts the hook on threads
started later (threading.setprofile), and keeps a child recording into a file of its
own, finished also when the child leaves through os._exit: a forked child through
os.register_at_fork, a multiprocessing child started by `spawn` or `forkserver` (a
fresh interpreter, or a fork of the fork server) through what its parent pickles
for it (_ChildProfile).
"""

import atexit
import os
import signal
import threading
from typing import Any, Iterable, Optional

from . import _ringtrace

_real_exit = os._exit
# The active profile when it owns the session: (path pattern, config, hook options).
_state = None


def _child_pattern(path):
    """The pattern a forked child records into: the parent's when it has %p, else
    with -%p before the extension."""
    path = os.fspath(path)
    if "%p" in path:
        return path
    head, tail = os.path.split(path)
    stem, dot, ext = tail.partition(".")
    return os.path.join(head, stem + "-%p" + dot + ext)


def _finish():
    """Finish the child's file on its way out, SIGTERM and SIGINT waiting meanwhile
    (the writer thread blocks every signal): a pool ends its workers with SIGTERM,
    which may come while a worker that already took its sentinel is finishing its
    file; the process then exits with its own status."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        _ringtrace._profile_end_open()
        _ringtrace._profile_disable()
        _ringtrace.stop()
    except BaseException:
        pass


def _exit_finishing(code):
    """os._exit while profiling: finish the file (atexit does not run), then exit."""
    _finish()
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


def _start_child_session(path, config):
    """A child's own session into the parent's pattern; whether it started."""
    if config.get("signals") is None and not os.environ.get("RINGTRACE_SIGNALS"):
        # a pool ends its workers with SIGTERM: finish the file then
        config = dict(config, signals="TERM")
    try:
        _ringtrace.start(_child_pattern(path), **config)
    except Exception:
        return False  # no file of its own: the child records nothing
    return True


def _after_fork_child():
    global _state
    try:
        if not _ringtrace._profile_after_fork() or _state is None:
            return
        if not _start_child_session(*_state[:2]):
            _ringtrace._profile_disable()
            _state = None
    finally:
        _restore_mask()


os.register_at_fork(
    before=_before_fork, after_in_parent=_restore_mask, after_in_child=_after_fork_child
)


# ------------------------------------------------------------------------------------
# multiprocessing's spawn and forkserver children
#
# Such a child does not inherit the profile: it is a fresh interpreter (spawn), or a
# fork of the fork server, which never profiled. What it first reads from its parent
# is the pickled preparation data, then the pickled process object; while a profile
# owns the session, the parent adds to each an object whose unpickling acts in the
# child:
#  - first in the preparation data, signal.pthread_sigmask() blocks SIGTERM and
#    SIGINT (a builtin: nothing to import first), so that a pool ending a worker
#    that is still starting does not kill it before its file is begun. Before that a
#    signal still kills the child: a fork server's child between its fork and its
#    first read, a spawned one while its interpreter starts (a mask blocked in the
#    parent does not reach it: the launch clears it before the exec);
#  - on the process object, read after prepare() gave the child its parent's
#    sys.path and __main__, _start_spawned_child() starts the child's session and
#    profile, like a forked child's, and lets the two signals through again. The
#    process's _bootstrap (the target's call) comes after, and is recorded.


class _ChildProfile:
    """On a process object being launched: unpickled in the child, it starts the
    child's session and profile with the parent's options."""

    def __init__(self, state):
        self._args = state

    def __reduce__(self):
        return (_start_spawned_child, self._args)


class _BlockSignals:
    """First in the preparation data: unpickled in the child, blocks SIGTERM and
    SIGINT until _start_spawned_child() lets them through."""

    def __reduce__(self):
        return (signal.pthread_sigmask, (signal.SIG_BLOCK, sorted(map(int, _FINISHING_SIGNALS))))


def _start_spawned_child(path, config, options):
    """In a spawn or forkserver child: its own session into the parent's pattern, the
    profile with the parent's options, os._exit finishing the file, and the two
    signals let through."""
    global _state
    try:
        if _ringtrace._profile_stats()["active"] or not _start_child_session(path, config):
            return None
        threading.setprofile(_ringtrace._profile_thread_bootstrap)
        _ringtrace._profile_enable(*options)
        _state = (path, config, options)
        os._exit = _exit_finishing
        # a spawned child's sys.exit: the file is finished before the interpreter's
        # own exit handlers (multiprocessing's, registered before) run, unprofiled
        atexit.register(_finish)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _FINISHING_SIGNALS)
    return None


def _launching(launch):
    """A Popen._launch that carries the profile into the child."""

    def _launch(self, process_obj):
        if _state is None:
            return launch(self, process_obj)
        process_obj._ringtrace_profile = _ChildProfile(_state)
        _launching_here.profiled = True  # for _preparing(), in this launch only
        try:
            return launch(self, process_obj)
        finally:
            _launching_here.profiled = False
            del process_obj._ringtrace_profile

    return _launch


_launching_here = threading.local()  # .profiled: a launch carries the profile


def _preparing(get_preparation_data):
    """A get_preparation_data whose data blocks the two signals first in a child whose
    process object starts its profile (which lets them through)."""

    def preparation_data(name):
        data = get_preparation_data(name)
        if not getattr(_launching_here, "profiled", False):
            return data
        return {"ringtrace_block_signals": _BlockSignals(), **data}  # unpickled first

    return preparation_data


_launches_patched = False


def _patch_launches():
    """Wrap multiprocessing's spawn and forkserver launches, once per process. Their
    modules are imported here (about 15 ms when multiprocessing is not yet)."""
    global _launches_patched
    if _launches_patched or os.name != "posix":
        return
    _launches_patched = True
    from multiprocessing import popen_forkserver, popen_spawn_posix, spawn

    spawn.get_preparation_data = _preparing(spawn.get_preparation_data)
    popen_spawn_posix.Popen._launch = _launching(popen_spawn_posix.Popen._launch)
    popen_forkserver.Popen._launch = _launching(popen_forkserver.Popen._launch)


class profile:
    """Record every Python function call (and with c_calls=True every C call) as a
    slice on its thread, named ``module.qualname`` with ``file`` and ``line`` as
    arguments, in category "python" ("python.c" for C calls).

    ``include``/``exclude``: prefixes of the qualified name (module or
    ``module.Class.method``, matched at a dot); ``min_ns``: calls shorter are not
    recorded; ``max_depth``: calls deeper on the thread's stack are not recorded
    (0: no limit). When the recorder is not running, the profile starts a session
    with ``path`` and ``config`` (start()'s options) and stops it at the end; then a
    child (forked, or a multiprocessing child started by spawn or forkserver) records
    into its own file (%p) with the same options and finishes it at exit and at
    os._exit.
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
            _patch_launches()  # before the hook: its imports are not the program's calls
        self.path = _ringtrace.trace_path()
        threading.setprofile(_ringtrace._profile_thread_bootstrap)
        if enable:
            try:
                _ringtrace._profile_enable(*self._hook_options())
            except BaseException:
                self.__exit__(None, None, None)
                raise
        _state = (self._path, self._config, self._hook_options()) if self._owned else None
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
