# SPDX-License-Identifier: MIT
"""Fixtures of the ringtrace Python tests: a recording session into a file of the
test's own, stopped and parsed back with json after the test body."""

import json
import os
import subprocess
import sys

import pytest

import ringtrace

# Forking a process whose recorder's writer thread runs: under ThreadSanitizer the
# runtime preloaded into the interpreter (GCC's: clang's does not start) stops the
# child ("dup thread with used id"). The C tests cover fork under TSan (test_threads).
fork_under_tsan = pytest.mark.skipif(
    os.environ.get("RTR_TEST_SANITIZER", "").find("thread") >= 0,
    reason="fork with a running writer thread: the preloaded TSan runtime stops the child",
)


class Trace:
    """A stopped trace file, parsed: every event, and views of it."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.events = json.load(f)  # strict JSON after a clean stop
        self.pid = os.getpid()

    def of(self, ph=None, cat=None, name=None):
        """The events of a phase, category and name (None: any), in file order."""
        return [
            e
            for e in self.events
            if (ph is None or e["ph"] == ph)
            and (cat is None or e.get("cat") == cat)
            and (name is None or e.get("name") == name)
        ]

    def one(self, ph, cat, name):
        found = self.of(ph, cat, name)
        assert len(found) == 1, f"{ph} {cat}/{name}: {len(found)} events: {found}"
        return found[0]

    def user(self):
        """The events the test recorded: not metadata, not the start and end markers."""
        return [
            e
            for e in self.events
            if e["ph"] != "M" and not e.get("name", "").startswith("ringtrace: ")
        ]

    def end_marker(self):
        return self.one("i", None, "ringtrace: end")

    def start_marker(self):
        return self.one("i", None, "ringtrace: start")

    def thread_names(self):
        return {e["tid"]: e["args"]["name"] for e in self.of("M", None, "thread_name")}


class Recording:
    """start() into tmp_path; stop() returns the Trace."""

    def __init__(self, tmp_path):
        self.path = str(tmp_path / "trace.json")
        self.stats = None

    def start(self, **config):
        ringtrace.start(self.path, **config)
        return self

    def stop(self):
        ringtrace.stop()
        self.stats = ringtrace.stats()
        return Trace(self.path)


@pytest.fixture
def recording(tmp_path):
    rec = Recording(tmp_path)
    yield rec
    ringtrace.stop()  # a test that failed midway leaves nothing running


def nests(inner, outer):
    """Whether the X event inner lies within the X event outer (ts and dur in us,
    three decimals: compare in whole nanoseconds)."""
    i0, i1 = round(inner["ts"] * 1000), round((inner["ts"] + inner["dur"]) * 1000)
    o0, o1 = round(outer["ts"] * 1000), round((outer["ts"] + outer["dur"]) * 1000)
    return o0 <= i0 and i1 <= o1


def run_python(code, env_extra, cwd):
    """Run code in a fresh interpreter with this one's environment plus env_extra."""
    env = dict(os.environ)
    # the package this interpreter imported, wherever PYTHONPATH said it was
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
        timeout=120,
    )
