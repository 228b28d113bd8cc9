# SPDX-License-Identifier: MIT
"""Function tracing in multiprocessing children started by `spawn` and `forkserver`:
each child (pool workers, and one leaving through os._exit) writes its own finished
file, with the parent's options, its slices counted by name, nesting and thread."""

import os
import subprocess
import sys
import textwrap

import pytest

import ringtrace
from conftest import Trace, fork_under_tsan, nests

POOL = textwrap.dedent(
    """
    import multiprocessing, os, sys

    def square(x):
        return x * x

    def leave(code):
        sys.stdout.flush()
        os._exit(code)

    def ready(barrier):
        barrier.wait()

    if __name__ == "__main__":
        ctx = multiprocessing.get_context(sys.argv[1])
        barrier = ctx.Barrier(3)
        with ctx.Pool(2, initializer=ready, initargs=(barrier,)) as pool:
            # both workers recording: the pool's end (SIGTERM) cannot find one starting
            barrier.wait()
            print(sum(pool.map(square, range(10), chunksize=1)))
        p = ctx.Process(target=leave, args=(3,))
        p.start()
        p.join()
        print(p.pid, p.exitcode)
    """
)


def run(args, cwd, **env_extra):
    env = dict(os.environ, **env_extra)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def traces(tmp_path, parent_pid):
    """pid -> Trace of every file the run left; each parsed as strict JSON (finished),
    its events all of its own process, its end marker final."""
    found = {}
    for f in tmp_path.glob("pool-*.json"):
        pid = int(f.name[len("pool-"):-len(".json")])
        trace = Trace(f)
        assert {e["pid"] for e in trace.events} == {pid}, f
        assert trace.end_marker()["args"]["final"] is True, f
        assert trace.end_marker()["args"]["dropped"] == 0, f
        assert trace.start_marker()["args"]["on_full"] == "block", f
        found[pid] = trace
    assert parent_pid in found
    return found


def counts(trace):
    names = {}
    for e in trace.of("X"):
        names[e["name"]] = names.get(e["name"], 0) + 1
    return names


@fork_under_tsan
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_pool_workers_and_a_leaver_write_their_own_finished_files(tmp_path, method):
    (tmp_path / "pool.py").write_text(POOL)
    # block mode from the environment, which the children inherit: nothing dropped
    r = run(["-m", "ringtrace", "run", "-o", "pool-%p.json", "pool.py", method], tmp_path,
            RINGTRACE_ON_FULL="block")
    assert r.returncode == 0, r.stderr
    total, leaver = r.stdout.split("\n")[:2]
    assert total == "285"
    leaver_pid, leaver_status = map(int, leaver.split())
    assert leaver_status == 3
    # the parent's file: the one with the script's <module>
    parents = [pid for pid, t in traces(tmp_path, leaver_pid).items()
               if counts(t).get("__main__.<module>") == 1]
    assert len(parents) == 1
    found = traces(tmp_path, parents[0])
    assert len(found) == 4  # the parent, two pool workers, the leaver
    squares = 0
    for pid, trace in found.items():
        names = counts(trace)
        for e in trace.of("X"):
            assert e["tid"] == pid or pid == parents[0]  # a child records on its main thread
            assert not e["name"].startswith("__mp_main__")  # named as in the parent
        for e in trace.of("X", "python", "__main__.square"):
            # a child imports the script by its absolute path
            assert e["args"] == {"file": str(tmp_path / "pool.py"), "line": 4}
        squares += names.get("__main__.square", 0)
        if pid == parents[0]:
            assert names.get("__main__.square", 0) == 0
        elif pid == leaver_pid:
            # left through os._exit inside leave(): its open calls end there
            leave = trace.one("X", "python", "__main__.leave")
            boot = trace.one("X", "python", "multiprocessing.process.BaseProcess._bootstrap")
            assert nests(leave, boot) and leave["args"]["line"] == 7
            assert names.get("__main__.ready", 0) == 0
            assert names.get("__main__.<module>", 0) == 0  # the script's import in prepare()
        else:
            # a pool worker, ended by SIGTERM (maybe still inside ready(): the last to
            # reach the barrier returns from it while the others work): its
            # initializer entered the barrier once; the script's import in prepare()
            # came before the profile began
            assert names.get("threading.Barrier._enter") == 1
            assert names.get("__main__.ready", 0) <= 1
            assert names.get("__main__.<module>", 0) == 0
            assert names.get("__main__.leave", 0) == 0
    assert squares == 10


INLINE = textwrap.dedent(
    """
    import multiprocessing, sys
    import ringtrace

    def square(x):
        return sum(i * i for i in range(x))

    if __name__ == "__main__":
        ctx = multiprocessing.get_context(sys.argv[1])
        barrier = ctx.Barrier(4)
        with ringtrace.profile("pool-%p.json", include=["__main__.square"], on_full="block"):
            with ctx.Pool(3, initializer=barrier.wait) as pool:
                barrier.wait()  # every worker recording before the pool ends them
                print(sum(pool.map(square, range(12), chunksize=1)))
        print(ringtrace.trace_path())
    """
)


@fork_under_tsan
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_profile_in_the_program_carries_its_options_to_the_children(tmp_path, method):
    (tmp_path / "inline.py").write_text(INLINE)
    r = run(["inline.py", method], tmp_path)
    assert r.returncode == 0, r.stderr
    total, path = r.stdout.split("\n")[:2]
    assert int(total) == sum(sum(i * i for i in range(x)) for x in range(12))
    parent_pid = int(path[len("pool-"):-len(".json")])
    found = traces(tmp_path, parent_pid)
    assert len(found) == 4  # the parent and three workers
    squares = steps = 0
    genexpr = "__main__.square.<locals>.<genexpr>"
    for pid, trace in found.items():
        # include=["__main__.square"]: the function and what is inside it, nothing else
        assert set(counts(trace)) <= {"__main__.square", genexpr}
        assert trace.start_marker()["args"]["on_full"] == "block"
        squares += len(trace.of("X", "python", "__main__.square"))
        steps += len(trace.of("X", "python", genexpr))
        for step in trace.of("X", "python", genexpr):
            assert any(nests(step, sq) for sq in trace.of("X", "python", "__main__.square"))
    assert counts(found[parent_pid]) == {}
    assert squares == 12
    assert steps == sum(x + 1 for x in range(12))  # a generator step per value, and its end


@fork_under_tsan
def test_a_profile_inside_a_running_session_leaves_spawned_children_alone(tmp_path):
    code = textwrap.dedent(
        """
        import multiprocessing, ringtrace

        def square(x):
            return x * x

        if __name__ == "__main__":
            ringtrace.start("pool-%p.json")
            with ringtrace.profile(include=["__main__"]):
                with multiprocessing.get_context("spawn").Pool(2) as pool:
                    print(sum(pool.map(square, range(4))))
            ringtrace.stop()
        """
    )
    (tmp_path / "inside.py").write_text(code)
    r = run(["inside.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "14\n"
    assert len(list(tmp_path.glob("pool-*.json"))) == 1  # the parent's session only
