#!/bin/sh
# ringtrace report, stats and merge as a job grows: bench/gen_ranks writes N rank traces
# (a halo on a ring, an Allreduce a step, a Barrier every 5, a late sender, a slow rank
# and an imbalanced region injected) into %h/%R directories with a manifest, for each
# N; then each command reads the manifest at -j 1 and -j 2 (report also with --hold 0:
# every file read twice), and report and stats under mpirun -np 2 and 4 (when there is
# one), RUNS times each in turn. Prints the medians of wall time and of peak RSS
# (/usr/bin/time), and whether report found exactly what was injected (expected.json
# against report --json).
#
#	[ITERATIONS=I] bench/report_scale.sh BUILD_DIR [RUNS] [N...]
#
# Defaults: 3 runs, N = 4 16 100 1000; 50 iterations a rank (one Allreduce each, a
# Barrier every 5: 60 collective instances).
set -eu
build=$(realpath "$1")
shift
runs=${1:-3}
[ $# -gt 0 ] && shift
ns=${*:-4 16 100 1000}
tool=$build/tools/ringtrace
gen=$build/bench/gen_ranks
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun=$(command -v mpirun || true)

# median of the numbers on stdin
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# run LABEL CMD...: RUNS times, prints LABEL, median s, median MiB
run() {
	label=$1
	shift
	: >"$tmp/t"
	i=0
	while [ $i -lt "$runs" ]; do
		/usr/bin/time -f "%e %M" -o "$tmp/one" "$@" >/dev/null 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; exit 1; }
		tail -n 1 "$tmp/one" >>"$tmp/t"
		i=$((i + 1))
	done
	s=$(cut -d' ' -f1 "$tmp/t" | median)
	kib=$(cut -d' ' -f2 "$tmp/t" | median)
	printf '%-6s %-28s %8.2f s %8.1f MiB\n' "$n" "$label" "$s" "$(echo "$kib / 1024" | bc -l)"
}

printf '%-6s %-28s %10s %12s\n' N command wall "peak RSS"
for n in $ns; do
	dir=$tmp/n$n
	mkdir -p "$dir"
	slow=$((n / 2))
	"$gen" -n "$n" -i "${ITERATIONS:-50}" -o "$dir/%h/%R/t-%r.json" --manifest --expected "$dir/expected.json" \
		--late-sender "1:10:5" --slow-rank "$slow:3" --imbalance "assemble:0.2" --quiet
	m=$dir/t-job.manifest.json
	mb=$(du -sm "$dir" | cut -f1)
	echo "# N=$n: $mb MB of traces"
	for j in 1 2; do
		run "report -j $j" "$tool" report -j $j "$m"
		run "report -j $j --hold 0" "$tool" report -j $j --hold 0 "$m"
		run "stats -j $j" "$tool" stats --jobs $j "$m"
	done
	run "merge" "$tool" merge -o "$tmp/merged.json" "$m"
	rm -f "$tmp/merged.json"
	if [ -n "$mpirun" ] && [ -e "$build/libringtrace-tools-mpi.so" ]; then
		for k in 2 4; do
			run "mpirun -np $k report" "$mpirun" --allow-run-as-root --oversubscribe \
				-np $k "$tool" report -j 1 "$m"
			run "mpirun -np $k stats" "$mpirun" --allow-run-as-root --oversubscribe \
				-np $k "$tool" stats --jobs 1 "$m"
		done
	fi
	"$tool" report --json --top 0 "$m" >"$dir/report.json"
	python3 - "$dir/expected.json" "$dir/report.json" <<'EOF'
import json, sys
exp = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
noise = exp["noise_ns"]
# the waits above the generator's noise: (kind, waiting rank, causing rank)
found = {(w["kind"], w["rank"], w["cause_rank"]) for w in rep["waits"]
	 if w["ns"] > noise * w["count"]}
want = set()
for inj in exp["injected"]:
	if inj["kind"] == "late_sender":
		# its receiver, late itself, reaches that iteration's Allreduce last; the
		# sender, as late, just before it
		want.add(("late_sender", inj["receiver"], inj["rank"]))
		want |= {("collective", r, inj["receiver"]) for r in range(exp["ranks"])
			 if r not in (inj["receiver"], inj["rank"])}
	elif inj["kind"] == "slow_rank":
		want |= {("collective", r, inj["rank"]) for r in range(exp["ranks"])
			 if r != inj["rank"]}
	elif inj["kind"] == "imbalance":
		path = [p for p in rep["paths"] if p["path"] == inj["call_path"]]
		ok = path and path[0]["max_rank"] == inj["max_rank"] and \
			abs(path[0]["imbalance"] - inj["imbalance"]) < 1e-3
		print("# imbalance of %s: %s" % (inj["call_path"], "found" if ok else "MISSED"))
print("# waits: %d found, %d injected, %s" % (len(found), len(want),
      "exactly the injected" if found == want else "DIFFERENT: %s" % sorted(found ^ want)[:5]))
EOF
done
