#!/bin/bash
# SPDX-License-Identifier: MIT
# The OMPT tool's cost per parallel region and per task: bench_omp_cost run RUNS
# times without a tool and RUNS times with libringtrace-omp (OMP_TOOL_LIBRARIES,
# RINGTRACE_ON_FULL=block so that nothing is dropped), alternating; the medians and
# their ratios.
#
#	bench/omp_cost.sh BUILD_DIR [RUNS [REGIONS TASKS THREADS]]
set -eu
build=${1:?usage: omp_cost.sh BUILD_DIR [RUNS [REGIONS TASKS THREADS]]}
runs=${2:-7}
shift $(($# < 2 ? $# : 2))
prog=$build/bench/bench_omp_cost
tool=$build/libringtrace-omp.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for i in $(seq "$runs"); do
	"$prog" "$@" >>"$out/bare"
	OMP_TOOL_LIBRARIES=$tool RINGTRACE_ON_FULL=block RINGTRACE_FILE=$out/t.json \
		"$prog" "$@" >>"$out/tool"
	rm -f "$out/t.json"
done

median() { # median of column $2 of file $1
	awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
for what in region:2 task:4; do
	name=${what%:*} col=${what#*:}
	b=$(median "$out/bare" "$col") t=$(median "$out/tool" "$col")
	awk -v n="$name" -v b="$b" -v t="$t" -v r="$runs" 'BEGIN {
		printf "%-7s no tool %9.1f ns   tool %9.1f ns   ratio %5.2f   +%.1f ns (median of %d)\n",
			n, b, t, t / b, t - b, r }'
done
