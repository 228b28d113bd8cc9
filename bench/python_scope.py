#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost of an empty `with ringtrace.scope(...)` against an empty `with` of a
trivial Python context manager and of contextlib.nullcontext() (issue 28's target:
a scope at most 1.5x the trivial context manager), per statement, the empty loop
subtracted, medians over several runs, all measured in the same process.

    PYTHONPATH=build/release/python python3 bench/python_scope.py [--runs 9] [--n 1000000]

The recorder writes to a temporary file in block mode with a 64 MiB ring, so that
nothing is lost and the writer's pace does not enter the figures; the events that
waited for the writer are printed (should be 0). The scope is also measured with
the recorder stopped (a load and a branch in __enter__, nothing in __exit__).
"""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time

import ringtrace


class Trivial:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return None


# Each body runs n times; every variant's names are locals of its function, so
# each pays the same lookups (the module attribute form is its own variant).
BODIES = {
    "empty loop": "pass",
    "with Trivial()": "with Trivial():\n            pass",
    "with nullcontext()": "with nullcontext():\n            pass",
    "with scope(cat, name)": 'with scope("bench", "empty"):\n            pass',
    "with ringtrace.scope(cat, name)": 'with ringtrace.scope("bench", "empty"):\n            pass',
    "with scope(cat, name, i=1)": 'with scope("bench", "args", i=1):\n            pass',
}


def compile_loop(body):
    src = (
        "def loop(n, Trivial=Trivial, nullcontext=contextlib.nullcontext,"
        " scope=ringtrace.scope, ringtrace=ringtrace):\n"
        "    for _ in range(n):\n"
        f"        {body}\n"
    )
    env = {"Trivial": Trivial, "contextlib": contextlib, "ringtrace": ringtrace}
    exec(src, env)
    return env["loop"]


def per_statement(loops, n, runs):
    """Median ns per iteration of each loop, the runs interleaved."""
    samples = {k: [] for k in loops}
    for _ in range(runs):
        for name, loop in loops.items():
            t0 = time.perf_counter_ns()
            loop(n)
            samples[name].append((time.perf_counter_ns() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--n", type=int, default=1000000)
    args = ap.parse_args()

    loops = {k: compile_loop(v) for k, v in BODIES.items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        stopped = per_statement({"with scope, recorder stopped": loops["with scope(cat, name)"],
                                 "empty loop": loops["empty loop"]}, args.n, args.runs)
        with ringtrace.Session(path, on_full="block", ring_bytes=64 << 20) as session:
            med = per_statement(loops, args.n, args.runs)
        st = session.stats
    base = med["empty loop"]
    cost = {k: v - base for k, v in med.items() if k != "empty loop"}
    cost["with scope, recorder stopped"] = stopped["with scope, recorder stopped"] - stopped["empty loop"]
    trivial = cost["with Trivial()"]
    print(f"python {sys.version.split()[0]}, ringtrace {ringtrace.version()}, "
          f"n={args.n}, runs={args.runs}, clock {st['clock']}")
    print(f"{'statement':36} {'ns':>8} {'x Trivial':>10}")
    print(f"{'empty loop (subtracted)':36} {base:8.1f}")
    for k, v in cost.items():
        print(f"{k:36} {v:8.1f} {v / trivial:10.2f}")
    print(f"events recorded {st['events_recorded']}, written {st['events_written']}, "
          f"dropped {st['events_dropped']}; waited for the writer {st['events_waited_full']} "
          f"({st['waited_ns'] / 1e6:.1f} ms)")


if __name__ == "__main__":
    main()
