#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two builds of the bench preset, before and after a change, timed in one session
# with the runs alternating (the machines drift by 10-20% over an hour):
#
#	bench/ab.sh BEFORE/build/bench AFTER/build/bench [RUNS]
#
# Prints, per build, the median and range of RUNS processes (default 7): the hot
# path's ns per event (bench_hotpath, each process's median of 3 repetitions, TSC
# clock), and the writer's events per second end to end (bench_e2e, one thread to
# /dev/null, JSON and Perfetto; two threads of the mix to a file in /tmp).
# Nothing else should run meanwhile.
set -euo pipefail

before=${1:?usage: bench/ab.sh BEFORE_BUILD AFTER_BUILD [RUNS]}
after=${2:?usage: bench/ab.sh BEFORE_BUILD AFTER_BUILD [RUNS]}
runs=${3:-7}
out=$(mktemp -d)
trap 'rm -rf "$out" /tmp/ringtrace-ab.json' EXIT

hotpath() { # BUILD TAG
	RINGTRACE_CLOCK=tsc "$1/bench/bench_hotpath" --benchmark_repetitions=3 \
		--benchmark_report_aggregates_only=true --benchmark_format=json \
		--benchmark_filter='threads:1|clock/rtr_now_ns|stopped/instant' 2>/dev/null |
		python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("aggregate_name") == "median":
        name = b["name"].split("/iterations")[0]
        print(sys.argv[1], "hotpath", name, b.get("ns_per_event", b["real_time"]))
' "$2" >>"$out/rows"
}

e2e() { # BUILD TAG CASE FORMAT THREADS EVENTS MIX PATH
	local line
	line=$(RINGTRACE_CLOCK=monotonic RINGTRACE_FORMAT=$4 "$1/bench/bench_e2e" \
		--threads "$5" --events "$6" --mix "$7" --path "$8" 2>&1)
	rm -f "$8" 2>/dev/null || true
	echo "$2 e2e $3 $(sed -n 's/.*writer_events_per_s=\([0-9]*\).*/\1/p' <<<"$line")" >>"$out/rows"
}

for ((i = 0; i < runs; i++)); do
	for tag in before after; do
		[ "$tag" = before ] && b=$before || b=$after
		hotpath "$b" "$tag"
		for fmt in json perfetto; do
			for mix in spans mix arg; do
				e2e "$b" "$tag" "$fmt/$mix/1thread/null" "$fmt" 1 4000000 "$mix" /dev/null
			done
		done
		sync
		e2e "$b" "$tag" "json/mix/2threads/file" json 2 4000000 mix /tmp/ringtrace-ab.json
	done
done

python3 - "$out/rows" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    tag, kind, case, value = line.split()
    rows.setdefault((kind, case), {}).setdefault(tag, []).append(float(value))
print(f"{'case':52} {'before':>22} {'after':>22} {'after/before':>12}")
for (kind, case), tags in rows.items():
    unit = "ns" if kind == "hotpath" else "M ev/s"
    scale = 1 if kind == "hotpath" else 1e-6
    cells = []
    for tag in ("before", "after"):
        v = sorted(x * scale for x in tags.get(tag, []))
        cells.append((statistics.median(v), v[0], v[-1]) if v else (float("nan"),) * 3)
    fmt = lambda c: f"{c[0]:.2f} ({c[1]:.2f}-{c[2]:.2f})"
    ratio = cells[1][0] / cells[0][0] if cells[0][0] else float("nan")
    print(f"{kind + ' ' + case + ' ' + unit:52} {fmt(cells[0]):>22} {fmt(cells[1]):>22} {ratio:12.2f}")
EOF
