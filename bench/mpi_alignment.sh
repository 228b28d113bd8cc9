#!/usr/bin/env bash
# How well `ringtrace merge` aligns MPI ranks whose clocks disagree: the
# halo example under mpirun -np 4 on one host, each rank's recorder clock shifted by
# RINGTRACE_CLOCK_OFFSET_NS (rank 0: 0, ranks 1 and 3: +50 ms, rank 2: -50 ms), so the
# true offset of every rank to rank 0 is known. Per run:
#	- the alignment error: each clock sync measurement's offset_ns minus the true
#	  offset (the merge maps each rank by these measurements, interpolated between
#	  them, so its error anywhere is within the largest of theirs);
#	- error_ns, the bound each measurement gives itself;
#	- the merge's count of messages received before they were sent after the
#	  clock map (before the controlled logical clock moves them).
#
#	bench/mpi_alignment.sh [BUILD_DIR [RUNS [STEPS]]]	defaults: build/release 5 200
set -euo pipefail
build=${1:-build/release}
runs=${2:-5}
steps=${3:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

printf '%-4s %-14s %-14s %-14s %-10s %s\n' run 'max |error|' 'median |error|' 'max bound' \
	messages 'received before sent'
for ((i = 1; i <= runs; i++)); do
	rm -f "$dir"/*.json
	mpirun --allow-run-as-root --oversubscribe -np 4 -x RINGTRACE_FILE="$dir/h-%r.json" \
		sh -c 'case $OMPI_COMM_WORLD_RANK in 0) o=0 ;; 2) o=-50000000 ;; *) o=50000000 ;; esac
		       RINGTRACE_CLOCK_OFFSET_NS=$o exec "$0" "$1"' "$build/mpi_halo" "$steps" >/dev/null
	# The true offset of rank r to rank 0: inj(0) - inj(r).
	errors=$(grep -h '"ringtrace: clock sync"' "$dir"/h-*.json | awk '
		{
			match($0, /"rank":[0-9]+/); r = substr($0, RSTART + 7, RLENGTH - 7)
			match($0, /"offset_ns":-?[0-9]+/); off = substr($0, RSTART + 12, RLENGTH - 12)
			match($0, /"error_ns":[0-9]+/); b = substr($0, RSTART + 11, RLENGTH - 11)
			if (r == 0) next
			want = r == 2 ? 50000000 : -50000000
			e = off - want; if (e < 0) e = -e
			print e, b
		}' | sort -n)
	max=$(tail -n 1 <<<"$errors" | cut -d' ' -f1)
	n=$(wc -l <<<"$errors")
	median=$(sed -n "$(((n + 1) / 2))p" <<<"$errors" | cut -d' ' -f1)
	bound=$(cut -d' ' -f2 <<<"$errors" | sort -n | tail -n 1)
	report=$("$build/tools/ringtrace" merge -o "$dir/merged.json" "$dir"/h-*.json 2>&1)
	joined=$(sed -n 's/.*messages: \([0-9]*\) joined.*/\1/p' <<<"$report")
	before=$(sed -n 's/.*; \([0-9]*\) received before they were sent.*/\1/p' <<<"$report")
	printf '%-4s %-14s %-14s %-14s %-10s %s\n' "$i" "$max ns" "$median ns" "$bound ns" \
		"$joined" "$before"
done
