#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs gbench_spans (<ringtrace/benchmark.hpp>) with --ringtrace=FILE, its JSON on
stdout and in --benchmark_out, and checks them against each other: one slice per
benchmark named as Google Benchmark names it, with its arguments, iterations and times;
the program's spans inside their benchmark's slice (copy inside step); the counters of
each benchmark equal to the spans of its slice in the trace (count, p50 and p99 within
the sketch's 1 %); the same counters in both outputs; without --ringtrace, Google
Benchmark's output alone and no file. Usage: check_gbench.py BINARY DIR"""
import json
import os
import subprocess
import sys

binary, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
trace_path = os.path.join(work, "gbench.json")
out_path = os.path.join(work, "gbench_out.json")
for p in (trace_path, out_path):
    if os.path.exists(p):
        os.remove(p)
env = dict(os.environ)
env.pop("RINGTRACE_FILE", None)
env["RINGTRACE_ON_FULL"] = "block"  # every span: the counts exact
run = subprocess.run([binary, "--benchmark_min_time=0.002", "--ringtrace=" + trace_path,
                      "--benchmark_format=json", "--benchmark_out=" + out_path,
                      "--benchmark_out_format=json"],
                     env=env, capture_output=True, text=True, check=True)
shown = json.loads(run.stdout)
with open(out_path) as f:
    written = json.load(f)

events = []
with open(trace_path) as f:
    for line in f:
        line = line.strip().rstrip(",")
        if line in ("[", "]", ""):
            continue
        events.append(json.loads(line))

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def nearest_rank(values, q):
    values = sorted(values)
    k = max(1, -(-int(q * 100) * len(values) // 100))  # ceil(q n), q in hundredths
    return values[k - 1]


slices = [e for e in events if e.get("ph") == "X" and e.get("cat") == "benchmark"]
spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "app"]
names = sorted(e["name"] for e in slices)
want = sorted(["BM_copy/8", "BM_copy/64", "BM_sum/16", "BM_plain"])
expect(names == want, "benchmark slices %s, want %s" % (names, want))
end = [e for e in events if e.get("name") == "ringtrace: end"]
expect(len(end) == 1, "one end marker")
runs = {b["name"]: b for b in shown["benchmarks"]}
expect(sorted(runs) == want, "benchmarks shown %s" % sorted(runs))
eps = 0.0015  # the trace's µs have three decimals

inside_any = set()
for s in slices:
    name = s["name"]
    r = runs.get(name, {})
    a = s.get("args", {})
    expect(a.get("args") == name.partition("/")[2], "%s args %s" % (name, a.get("args")))
    expect(a.get("iterations") == r.get("iterations"), "%s iterations %s vs %s" %
           (name, a.get("iterations"), r.get("iterations")))
    for key in ("real_time", "cpu_time"):
        expect(abs(a.get(key, -1) - r.get(key, 0)) <= 1e-6 * abs(r.get(key, 0)) + 1e-9,
               "%s %s %s vs %s" % (name, key, a.get(key), r.get(key)))
    expect(a.get("time_unit") == r.get("time_unit"), "%s time_unit" % name)
    lo, hi = s["ts"], s["ts"] + s["dur"]
    mine = [e for e in spans if e["tid"] == s["tid"] and e["ts"] >= lo - eps and
            e["ts"] + e["dur"] <= hi + eps]
    inside_any.update(id(e) for e in mine)
    by = {}
    for e in mine:
        by.setdefault(e["name"], []).append(e)
    # copy lies inside a step, both in BM_copy only; sum in BM_sum only
    expected = {"BM_copy": {"step": "step", "copy": "step>copy"}, "BM_sum": {"sum": "sum"},
                "BM_plain": {}}[name.split("/")[0]]
    expect(sorted(by) == sorted(expected), "%s spans %s" % (name, sorted(by)))
    if "copy" in by:
        steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in by["step"])
        import bisect
        starts = [t for t, _ in steps]
        for c in by["copy"]:
            i = bisect.bisect_right(starts, c["ts"] + eps) - 1
            expect(i >= 0 and steps[i][1] >= c["ts"] + c["dur"] - eps,
                   "%s copy at %s outside a step" % (name, c["ts"]))
    expect(r.get("ringtrace.dropped") == 0, "%s dropped %s" % (name, r.get("ringtrace.dropped")))
    counted = sorted(k[:-2] for k in r if k.endswith(".n"))
    expect(counted == sorted(expected.values()), "%s counters %s" % (name, counted))
    for span, key in expected.items():
        durs = [round(e["dur"] * 1000) for e in by.get(span, [])]
        expect(r.get(key + ".n") == len(durs), "%s %s.n %s, trace %d" %
               (name, key, r.get(key + ".n"), len(durs)))
        expect(len(durs) >= r.get("iterations", 0), "%s: fewer %s than iterations" % (name, span))
        for q, field in ((0.5, ".p50_ns"), (0.99, ".p99_ns")):
            exact = nearest_rank(durs, q) if durs else 0
            got = r.get(key + field, -1)
            expect(abs(got - exact) <= 0.01 * exact + 1,
                   "%s %s%s %s, trace %s" % (name, key, field, got, exact))
    w = [b for b in written["benchmarks"] if b["name"] == name]
    expect(len(w) == 1 and all(w[0].get(k) == r.get(k) for k in r if "." in k),
           "%s counters differ in --benchmark_out" % name)
expect(len(inside_any) == len(spans), "%d spans outside every benchmark" %
       (len(spans) - len(inside_any)))
expect(len(spans) > 0, "spans recorded")
# repetitions reported as aggregates only: the slice recorded at the aggregates' report,
# the counters on the mean and the median (not on the stddev and cv)
agg_path = os.path.join(work, "gbench_agg.json")
agg = subprocess.run([binary, "--benchmark_min_time=0.001", "--ringtrace=" + agg_path,
                      "--benchmark_filter=BM_sum", "--benchmark_repetitions=2",
                      "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                     env=env, capture_output=True, text=True, check=True)
agg_runs = {b["aggregate_name"]: b for b in json.loads(agg.stdout)["benchmarks"]}
with open(agg_path) as f:
    agg_events = [json.loads(x.strip().rstrip(",")) for x in f if x.strip() not in ("[", "]")]
agg_slices = [e for e in agg_events if e.get("ph") == "X" and e.get("cat") == "benchmark"]
agg_sums = [e for e in agg_events if e.get("ph") == "X" and e.get("name") == "sum"]
expect([e["name"] for e in agg_slices] == ["BM_sum/16"], "aggregates only: the slices %s" %
       [e["name"] for e in agg_slices])
expect(agg_slices and agg_slices[0]["args"].get("repetitions") == 2, "aggregates: repetitions")
for which in ("mean", "median"):
    expect(agg_runs.get(which, {}).get("sum.n") == len(agg_sums),
           "aggregates: %s sum.n %s, trace %d" % (which, agg_runs.get(which, {}).get("sum.n"),
                                                  len(agg_sums)))
expect("sum.n" not in agg_runs.get("stddev", {"sum.n": 0}), "a count on the stddev row")

# without --ringtrace (nor RINGTRACE_FILE): Google Benchmark's output alone, no file
plain_env = {k: v for k, v in env.items() if not k.startswith("RINGTRACE_")}
before = sorted(os.listdir(work))
plain = subprocess.run([binary, "--benchmark_min_time=0.001", "--benchmark_format=json"],
                       env=plain_env, capture_output=True, text=True, check=True)
plain_runs = json.loads(plain.stdout)["benchmarks"]
expect(sorted(b["name"] for b in plain_runs) == want, "unrecorded run's benchmarks")
expect(all("." not in k for b in plain_runs for k in b), "counters in an unrecorded run")
expect(sorted(os.listdir(work)) == before, "an unrecorded run wrote a file")
profile = trace_path + ".profile.json"
expect(os.path.exists(profile), "the profile beside the trace")

if failures:
    print("\n".join(failures[:40]))
    sys.exit(1)
print("ok: %d slices, %d spans" % (len(slices), len(spans)))
