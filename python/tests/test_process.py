# SPDX-License-Identifier: MIT
"""The module in a process: RINGTRACE_AUTOSTART when python3 imports it, the exit
handler, and C code beside Python recording into the same session and file."""

import ctypes
import threading

import ringtrace
from conftest import Trace, fork_under_tsan, run_python


def test_autostart_records_from_import_and_finishes_the_file_at_exit(tmp_path):
    code = (
        "import ringtrace\n"
        "assert ringtrace.stats()['running']\n"
        "with ringtrace.scope('app', 'autostarted', k=1):\n"
        "    ringtrace.instant('app', 'inside')\n"
        "print(ringtrace.trace_path())\n"
    )
    env = {"RINGTRACE_AUTOSTART": "1", "RINGTRACE_FILE": "auto-%p.json"}
    r = run_python(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    files = list(tmp_path.glob("auto-*.json"))
    assert [f.name for f in files] == [r.stdout.strip()]  # the pattern as given, expanded
    trace = Trace(files[0])  # strict JSON: the exit handler stopped the recorder
    assert trace.one("X", "app", "autostarted")["args"] == {"k": 1}
    assert len(trace.of("i", "app", "inside")) == 1
    assert trace.end_marker()["args"]["final"] is True


def test_start_adopts_the_autostarted_session(tmp_path):
    code = (
        "import ringtrace\n"
        "ringtrace.start('ignored.json', flush_ms=7)\n"
        "ringtrace.instant('app', 'adopted')\n"
        "ringtrace.stop()\n"
        "assert not ringtrace.stats()['running']\n"
    )
    env = {"RINGTRACE_AUTOSTART": "1", "RINGTRACE_FILE": "auto.json"}
    r = run_python(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "ignored.json").exists()
    trace = Trace(tmp_path / "auto.json")
    assert len(trace.of("i", "app", "adopted")) == 1
    assert trace.start_marker()["args"]["flush_ms"] == 100  # the environment's session


def test_environment_fills_what_start_is_not_given(tmp_path):
    code = "import ringtrace\nringtrace.start()\nringtrace.instant('app', 'x')\nringtrace.stop()\n"
    env = {"RINGTRACE_FILE": "env.json", "RINGTRACE_ON_FULL": "block", "RINGTRACE_FLUSH_MS": "20"}
    r = run_python(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    args = Trace(tmp_path / "env.json").start_marker()["args"]
    assert args["on_full"] == "block" and args["flush_ms"] == 20


def test_an_unstopped_session_is_finished_at_exit(tmp_path):
    code = "import ringtrace\nringtrace.start('left.json')\nringtrace.instant('app', 'left running')\n"
    r = run_python(code, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    trace = Trace(tmp_path / "left.json")
    assert len(trace.of("i", "app", "left running")) == 1
    assert trace.end_marker()["args"]["final"] is True


def libringtrace():
    """The libringtrace.so the module loaded (the same object, so the same recorder)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libringtrace.so" in line}
    assert len(paths) == 1, paths
    return ctypes.CDLL(paths.pop())


# C strings for the library, alive as long as the module (the library keeps pointers)
C_CAT = ctypes.c_char_p(b"c code")
C_NAME = ctypes.c_char_p(b"from C")


def test_c_code_records_into_the_same_session(recording):
    lib = libringtrace()
    lib.rtr_instant.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    recording.start()
    with ringtrace.scope("app", "python around C"):
        lib.rtr_instant(C_CAT, C_NAME)
    trace = recording.stop()
    c_event = trace.one("i", "c code", "from C")
    around = trace.one("X", "app", "python around C")
    assert c_event["tid"] == around["tid"] == threading.get_native_id()
    assert around["ts"] <= c_event["ts"] <= around["ts"] + around["dur"]
    assert recording.stats["events_recorded"] == 2


@fork_under_tsan
def test_a_forked_child_starts_its_own_session_while_the_parent_records(tmp_path):
    code = (
        "import os, threading, ringtrace\n"
        "ringtrace.start('parent.json')\n"
        "with ringtrace.scope('app', 'parent'):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        assert not ringtrace.stats()['running']  # the child has no recorder\n"
        "        ringtrace.start('child.json')\n"
        "        ringtrace.instant('app', 'child')\n"
        "        ringtrace.stop()\n"
        "        os._exit(0)\n"
        "    assert os.waitpid(pid, 0)[1] == 0\n"
        "ringtrace.stop()\n"
    )
    r = run_python(code, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    parent, child = Trace(tmp_path / "parent.json"), Trace(tmp_path / "child.json")
    assert len(parent.of("X", "app", "parent")) == 1 and parent.of("i", "app", "child") == []
    assert len(child.of("i", "app", "child")) == 1 and child.of("X", "app", "parent") == []
