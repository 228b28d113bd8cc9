# SPDX-License-Identifier: MIT
"""A Python program recording scopes on two threads under ringtrace.profile(), killed
with SIGKILL after it has recorded a while. What the library promises for that
(docs/format.md, "A killed run"): the writer writes whole lines only and closes
every write with a provisional end marker and "]", cut off again before the next
write; so a kill between two writes leaves strict JSON whose end marker says
"final": false and counts what precedes it, and a kill during a write leaves the
file cut after its last whole line (rarely inside a line longer than a page), which
the hand repair of format.md (drop a partial last line and the trailing comma, close
with "]") and `ringtrace check --repair` make strict JSON. Either way every event
recorded before the program's last flush() is in the file, whole: checked here by
name, arguments, thread and nesting, with no gap in each thread's sequence."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ringtrace
from conftest import nests

PROGRAM = textwrap.dedent(
    """
    import sys, threading, time
    import ringtrace

    done = [-1, -1]  # the last i whose outer scope each thread has recorded
    paced = True  # until both threads have recorded a while (sys.argv[2]: then not)

    def step(t, i):
        return t + i

    both = threading.Barrier(2)

    def worker(t):
        ringtrace.thread_name(f"worker {t}")
        both.wait()
        i = 0
        while True:
            with ringtrace.scope("kill", "outer", t=t, i=i):
                with ringtrace.scope("kill", "inner", t=t, i=i):
                    step(t, i)
            done[t] = i
            i += 1
            if paced:
                time.sleep(0)  # lets the GIL go: the two threads move at one pace

    with ringtrace.profile(sys.argv[1], include=["__main__.step"], on_full="block"):
        for t in range(2):
            threading.Thread(target=worker, args=(t,), daemon=True).start()
        while True:
            seen = list(done)
            ringtrace.flush()  # everything recorded before it is in the file
            print(seen[0], seen[1], flush=True)
            if min(seen) >= int(sys.argv[2]):
                paced = False  # full speed: the writer always writing
            time.sleep(0.01)
    """
)

STEP_LINE = PROGRAM.splitlines().index("def step(t, i):") + 1
MIN_RECORDED = 3000  # outer scopes per thread flushed before the kill


def record_until_killed(tmp_path, full_speed):
    """Run PROGRAM until both threads' flushed counts pass MIN_RECORDED (and with
    full_speed, two lines more at full speed), SIGKILL it; the last counts it printed
    (each line printed after its flush returned)."""
    (tmp_path / "killed.py").write_text(PROGRAM)
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    pace_until = MIN_RECORDED if full_speed else 2**62
    proc = subprocess.Popen([sys.executable, "killed.py", "killed.json", str(pace_until)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    flushed = None
    lines_after = 0
    deadline = time.monotonic() + 240
    try:
        for line in proc.stdout:
            flushed = tuple(map(int, line.split()))
            if min(flushed) >= MIN_RECORDED:
                lines_after += 1
            if lines_after > (2 if full_speed else 0) or time.monotonic() > deadline:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        stderr = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, stderr
    assert flushed is not None and min(flushed) >= MIN_RECORDED, (flushed, stderr)
    return tmp_path / "killed.json", flushed


def repaired_by_hand(text):
    """format.md's repair: drop a partial last line, drop the trailing comma, close."""
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    body = text.rstrip()
    assert body.endswith(","), body[-200:]
    return json.loads(body[:-1] + "]")


def ringtrace_repair(path):
    """`ringtrace check --repair` of the file, parsed; None without the tool."""
    tool = os.environ.get("RTR_TEST_RINGTRACE")
    if not tool:
        return None
    out = path.with_name("killed.repaired.json")
    # the tool is a program of its own: no sanitizer runtime preloaded into it
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([tool, "check", "--repair", "-o", str(out), str(path)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with open(out, encoding="utf-8") as f:
        return json.load(f)  # strict JSON


def check_every_flushed_event(events, flushed):
    """Each worker's outer scopes are 0..n with n at least its flushed count, each with
    its inner scope and its profiled step nested inside, on the worker's thread."""
    workers = {e["args"]["name"]: e["tid"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    for t in range(2):
        tid = workers[f"worker {t}"]
        mine = [e for e in events if e.get("tid") == tid and e["ph"] == "X"]
        assert {e["name"] for e in mine} <= {"outer", "inner", "__main__.step"}
        outer = {e["args"]["i"]: e for e in mine if e["name"] == "outer"}
        inner = {e["args"]["i"]: e for e in mine if e["name"] == "inner"}
        steps = sorted((e for e in mine if e["name"] == "__main__.step"), key=lambda e: e["ts"])
        # no gap, no duplicate: every outer scope up to the last written one
        n = max(outer)
        assert sorted(outer) == list(range(n + 1)) and n >= flushed[t]
        assert len([e for e in mine if e["name"] == "outer"]) == n + 1
        # the inner of an outer not yet written may be there (recorded first)
        assert sorted(inner) in (list(range(n + 1)), list(range(n + 2)))
        assert len(steps) in (n + 1, n + 2)
        for i in range(n + 1):
            o, s = outer[i], inner[i]
            assert o["cat"] == s["cat"] == "kill"
            assert o["args"] == s["args"] == {"t": t, "i": i}
            assert nests(s, o) and nests(steps[i], s)
            assert steps[i]["cat"] == "python" and steps[i]["args"]["line"] == STEP_LINE


@pytest.mark.parametrize("full_speed", [False, True], ids=["paced", "full-speed"])
def test_a_killed_program_leaves_every_flushed_event_whole(tmp_path, full_speed):
    # paced: the writer mostly idle, the kill likely between two writes; full speed:
    # the writer always writing (block mode), the kill likely during a write
    path, flushed = record_until_killed(tmp_path, full_speed)
    text = path.read_text(encoding="utf-8")
    try:
        events = json.loads(text)
        strict = True
    except json.JSONDecodeError:
        strict = False
    if strict:
        # killed between two writes: the provisional close is the file's end
        end = events[-1]
        assert end["name"] == "ringtrace: end" and end["args"]["final"] is False
        assert end["args"]["dropped"] == 0
        written = [e for e in events if e["ph"] != "M" and not e["name"].startswith("ringtrace: ")]
        assert end["args"]["events"] == len(written) + 2  # the two thread_name calls
    else:
        # killed during a write: cut after a whole line (or inside one past a page)
        events = repaired_by_hand(text)
        assert not any(e["name"] == "ringtrace: end" for e in events)
    assert events[0]["name"] == "ringtrace: start"
    assert {e["pid"] for e in events} == {events[0]["pid"]}
    check_every_flushed_event(events, flushed)

    repaired = ringtrace_repair(path)
    if repaired is None:
        return  # a build without the ringtrace command
    end = repaired[-1]
    assert end["name"] == "ringtrace: end" and end["args"]["final"] is True
    assert end["args"]["repaired"] is True
    check_every_flushed_event(repaired, flushed)
    # the same events, but for the end markers
    def same(es):
        return [e for e in es if e["name"] != "ringtrace: end"]

    assert same(repaired) == same(events)
