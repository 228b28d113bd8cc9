#!/usr/bin/env bash
# MPI polls folded, on a real MPI program: HPC Challenge (Debian's hpcc) under
# mpirun -np 4 with libringtrace-mpi.so preloaded, on the input Debian ships as its
# example (N = 1000; a few seconds), once folding the test and probe calls that
# complete nothing (the default) and once with RINGTRACE_MPI_POLLS=all, in turns.
# Per run and rank: the event objects of the file, its bytes, the folded slices, and
# the calls of MPI_Testany and MPI_Test as `ringtrace stats` tells them (folded: its
# "polls folded" table; all: the slices of each name), and the job's wall time.
#
#	bench/mpi_polls.sh [BUILD_DIR [RUNS [N]]]	defaults: build/release 3 1000
set -euo pipefail
build=$(realpath "${1:-build/release}")
runs=${2:-3}
n=${3:-1000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
command -v hpcc >/dev/null || {
	echo "mpi_polls.sh: hpcc is not installed (apt-get install hpcc)" >&2
	exit 2
}

# The Debian example, its problem size set to N.
cat >"$dir/hpccinf.txt" <<EOF
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$n         Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
EOF

printf '%-4s %-5s %-5s %10s %10s %8s %12s %10s %8s\n' run mode rank objects MB folded \
	Testany Test wall_s
for ((i = 1; i <= runs; i++)); do
	for mode in fold all; do
		rm -f "$dir"/rt-*.json
		start=$(date +%s.%N)
		(cd "$dir" && mpirun --allow-run-as-root --oversubscribe -np 4 \
			-x LD_PRELOAD="$build/libringtrace-mpi.so" \
			-x RINGTRACE_FILE="$dir/rt-%r.json" -x RINGTRACE_MPI_POLLS=$mode \
			hpcc >/dev/null 2>&1)
		wall=$(echo "$(date +%s.%N) - $start" | bc)
		for r in 0 1 2 3; do
			f="$dir/rt-$r.json"
			"$build/tools/ringtrace" stats --json --top 0 "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
calls = {}
for row in d["slices"]["rows"]:
	calls[row["key"]] = row["count"]
folded = d["polls"]["slices"]
for row in d["polls"]["rows"]:
	calls[row["name"]] = row["folded_calls"] + (row["completed_calls"] or 0)
print(d["events"], folded, calls.get("MPI_Testany", 0), calls.get("MPI_Test", 0))
' | while read -r objects folded testany test; do
				printf '%-4s %-5s %-5s %10s %10.1f %8s %12s %10s %8.2f\n' "$i" "$mode" \
					"$r" "$objects" "$(echo "$(stat -c %s "$f") / 1048576" | bc -l)" \
					"$folded" "$testany" "$test" "$wall"
			done
		done
	done
done
