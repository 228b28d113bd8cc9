#!/bin/bash
# SPDX-License-Identifier: MIT
# The OMPT tool's cost per parallel region and per task: bench_omp_cost run RUNS
# times each way, alternating: without a tool, with an OMPT tool that records nothing
# (libbench_omp_null_tool: the runtime's own OMPT work) and with libringtrace-omp
# (OMP_TOOL_LIBRARIES; RINGTRACE_ON_FULL=block, so that nothing is dropped; a 128 MiB
# ring that holds a pass, its pages touched before, the writer asleep but for the
# flushes between passes, as in bench_kokkos: the producer's cost); the medians,
# their ratios, and
# what the recording adds over the tool that records nothing, in bare span pairs
# timed in libringtrace-omp's runs (a region records 2 slices, 4 events; a task 5
# events: an instant, a slice and a flow's two ends).
#
#	bench/omp_cost.sh BUILD_DIR [RUNS [REGIONS TASKS THREADS]]
set -eu
build=${1:?usage: omp_cost.sh BUILD_DIR [RUNS [REGIONS TASKS THREADS]]}
runs=${2:-7}
shift $(($# < 2 ? $# : 2))
prog=$build/bench/bench_omp_cost
tool=$build/libringtrace-omp.so
null=$build/bench/libbench_omp_null_tool.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for i in $(seq "$runs"); do
	"$prog" "$@" >>"$out/bare"
	OMP_TOOL_LIBRARIES=$null "$prog" "$@" >>"$out/null"
	OMP_TOOL_LIBRARIES=$tool RINGTRACE_ON_FULL=block RINGTRACE_RING_KB=131072 \
		RINGTRACE_FLUSH_MS=60000 RINGTRACE_FILE=/dev/null "$prog" "$@" >>"$out/tool"
done

median() { # median of column $2 of file $1
	awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
span=$(median "$out/tool" 6)
echo "bare span pair (rtr_begin+rtr_end) in the tool's runs: $span ns (median of $runs)"
for what in region:2:2 task:4:2.5; do
	IFS=: read -r name col pairs <<<"$what"
	b=$(median "$out/bare" "$col") z=$(median "$out/null" "$col") t=$(median "$out/tool" "$col")
	awk -v n="$name" -v b="$b" -v z="$z" -v t="$t" -v s="$span" -v p="$pairs" 'BEGIN {
		printf "%-7s no tool %8.1f ns   null tool %8.1f ns   ringtrace %8.1f ns   ratio %5.2f   +%.1f ns over the null tool: %.2fx %s bare span pairs\n",
			n, b, z, t, t / b, t - z, (t - z) / (p * s), p }'
done
