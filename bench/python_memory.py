#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Memory stays flat while Python records: 10^7 scope events, the process's resident
set (RSS, from /proc/self/statm) sampled every 10^6 events.

    PYTHONPATH=build/release/python python3 bench/python_memory.py \\
        [--events 10000000] [--every 1000000] [--path FILE] [--json]

Each event is `with ringtrace.scope("bench", "step", i=i):` (one complete event with
an integer argument: a scope object made, its argument converted, one record), in
block mode, so that every event is written. The file is a temporary one (deleted at
the end; about 90 bytes an event) unless --path names one; /dev/null takes the
disk out, and RSS does not count the page cache either way. It prints one line per
sample (events, RSS in MiB; the first as the session started), then the RSS at the first sample and at the last and
the growth between them, and the recorder's counts; --json prints that as one JSON
object instead (python/tests/test_flat.py reads it).
"""

import argparse
import json
import os
import sys
import tempfile
import time

import ringtrace

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE  # resident pages


def record(n, scope=ringtrace.scope):
    for i in range(n):
        with scope("bench", "step", i=i):
            pass


def run(path, events, every):
    samples = []  # (events so far, RSS bytes)
    t0 = time.perf_counter()
    with ringtrace.Session(path, on_full="block") as session:
        started = rss_bytes()
        done = 0
        while done < events:
            n = min(every, events - done)
            record(n)
            done += n
            samples.append((done, rss_bytes()))
    wall = time.perf_counter() - t0
    return started, samples, session.stats, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--every", type=int, default=1_000_000)
    ap.add_argument("--path", default=None, help="the trace file (default: a temporary one)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args()

    if args.path is None:
        with tempfile.TemporaryDirectory() as tmp:
            started, samples, st, wall = run(os.path.join(tmp, "memory.json"), args.events,
                                             args.every)
    else:
        started, samples, st, wall = run(args.path, args.events, args.every)
    first, last = samples[0], samples[-1]
    result = {
        "rss_started": started,
        "samples": samples,
        "rss_first": first[1],
        "rss_last": last[1],
        "growth": last[1] - first[1],
        "wall_s": wall,
        "recorded": st["events_recorded"],
        "written": st["events_written"],
        "dropped": st["events_dropped"],
        "waited": st["events_waited_full"],
    }
    if args.json:
        json.dump(result, sys.stdout)
        print()
        return
    mib = 1 << 20
    print(f"python {sys.version.split()[0]}, ringtrace {ringtrace.version()}, "
          f"clock {st['clock']}, io {st['io_method']}")
    print(f"{'events':>12} {'RSS MiB':>9}")
    print(f"{0:12} {started / mib:9.2f}  (the session started)")
    for n, rss in samples:
        print(f"{n:12} {rss / mib:9.2f}")
    print(f"RSS at {first[0]} events {first[1] / mib:.2f} MiB, at {last[0]} "
          f"{last[1] / mib:.2f} MiB: {result['growth'] / mib:+.2f} MiB "
          f"({last[1] / first[1]:.3f}x); {wall:.2f} s")
    print(f"events recorded {st['events_recorded']}, written {st['events_written']}, "
          f"dropped {st['events_dropped']}; waited for the writer "
          f"{st['events_waited_full']} ({st['waited_ns'] / 1e6:.1f} ms)")


if __name__ == "__main__":
    main()
