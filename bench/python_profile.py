#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost of function tracing (ringtrace.profile) against cProfile, the standard
library's C profiler, on a call-heavy workload (issue 28's target: function tracing
slows it no more than cProfile does), medians over several runs, the three variants
interleaved in the same process.

    PYTHONPATH=build/release/python python3 bench/python_profile.py [--runs 9] [--depth 22]

The workload is a recursive Fibonacci (fib(depth): about 1.6 * 1.618^depth calls)
with a method call and a generator step per call, so nearly all its time is
calls. ringtrace records into a temporary file in block mode with a 64 MiB ring:
nothing is lost, and the events that waited for the writer are printed.
"""

import argparse
import cProfile
import os
import statistics
import sys
import tempfile
import time

import ringtrace


class Node:
    def __init__(self, v):
        self.v = v

    def value(self):
        return self.v


def one(v):
    yield v


def fib(n):
    if n < 2:
        return next(one(Node(n).value()))
    return fib(n - 1) + fib(n - 2)


def untraced(depth):
    fib(depth)


def under_cprofile(depth):
    p = cProfile.Profile()
    p.enable()
    fib(depth)
    p.disable()


def under_ringtrace(depth):
    with ringtrace.profile():
        fib(depth)


def count_calls(depth):
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    fib(depth)
    sys.setprofile(None)
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--depth", type=int, default=22)
    args = ap.parse_args()

    variants = {"untraced": untraced, "cProfile": under_cprofile, "ringtrace.profile": under_ringtrace}
    samples = {k: [] for k in variants}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        with ringtrace.Session(path, on_full="block", ring_bytes=64 << 20) as session:
            for _ in range(args.runs):
                for name, run in variants.items():
                    t0 = time.perf_counter_ns()
                    run(args.depth)
                    samples[name].append(time.perf_counter_ns() - t0)
        st = session.stats
    calls = count_calls(args.depth)
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med["untraced"]
    print(f"python {sys.version.split()[0]}, ringtrace {ringtrace.version()}, "
          f"fib({args.depth}): {calls} calls per run, runs={args.runs}, clock {st['clock']}")
    print(f"{'variant':20} {'ms':>9} {'x untraced':>11} {'ns/call added':>14}")
    for k, v in med.items():
        print(f"{k:20} {v / 1e6:9.2f} {v / base:11.2f} {(v - base) / calls:14.1f}")
    print(f"ringtrace / cProfile slowdown: {(med['ringtrace.profile'] - base) / (med['cProfile'] - base):.2f}")
    print(f"events recorded {st['events_recorded']}, written {st['events_written']}, "
          f"dropped {st['events_dropped']}; waited for the writer {st['events_waited_full']} "
          f"({st['waited_ns'] / 1e6:.1f} ms)")


if __name__ == "__main__":
    main()
