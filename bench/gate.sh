#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The benchmark gate's proof (bench/RESULTS.md, "The benchmark gate"): how often
# `ringtrace diff --fail-above 0` fails on identical code (A/A), and how often it
# finds a known slowdown injected into one span (A/B), on this machine with its noise.
#
#   bench/gate.sh [BUILD_DIR]        (default build/release; bench_gate and ringtrace built)
#
# Each comparison is RUNS fresh processes of bench_gate a side, A and B interleaved
# (A1 B1 A2 B2 ...: a drift of the machine falls on both sides). A/A: AA comparisons,
# no slowdown. A/B: AB comparisons, B with `--slow SPAN:PCT`, SPAN drawn (seeded) from
# parse, compute, encode, checksum. A failure is exit 1 of the gate; a detection is the
# injected span among the failing keys ("unit", the parent of every span, may fail
# with it: it is slower too). Last, `diff --calibrate` on the 2 RUNS runs of the first
# A/A comparison. Environment: AA (20), AB (20), RUNS (5), PCT (10), UNITS (2000),
# SEED (1), GATE_OPTS (extra diff options), OUT (a directory kept; default a temporary
# one, removed).
set -eu
BUILD=${1:-build/release}
BIN=$BUILD/bench/bench_gate
RT=$BUILD/tools/ringtrace
AA=${AA:-20}
AB=${AB:-20}
RUNS=${RUNS:-5}
PCT=${PCT:-10}
UNITS=${UNITS:-2000}
SEED=${SEED:-1}
GATE_OPTS=${GATE_OPTS:-}
for f in "$BIN" "$RT"; do
	[ -x "$f" ] || { echo "gate.sh: $f not built" >&2; exit 2; }
done
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	KEEP=1
else
	OUT=$(mktemp -d)
	KEEP=0
fi

# The injected spans, drawn once from the seed.
SLOWS=$(awk -v n="$AB" -v seed="$SEED" 'BEGIN { srand(seed); split("parse compute encode checksum", s, " ");
	for (i = 0; i < n; i++) printf "%s ", s[int(rand() * 4) + 1] }')

# One comparison: name, the B side's --slow argument (empty: none). Prints
# "exit failing-keys".
compare() {
	d=$OUT/$1
	mkdir -p "$d/a" "$d/b"
	i=1
	while [ "$i" -le "$RUNS" ]; do
		"$BIN" --units "$UNITS" --out "$d/a/run$i.json"
		if [ -n "$2" ]; then
			"$BIN" --units "$UNITS" --out "$d/b/run$i.json" --slow "$2"
		else
			"$BIN" --units "$UNITS" --out "$d/b/run$i.json"
		fi
		i=$((i + 1))
	done
	set +e
	# shellcheck disable=SC2086 # GATE_OPTS: options, split on purpose
	"$RT" diff --fail-above 0 --json --top 0 $GATE_OPTS "$d/a" "$d/b" >"$d/diff.json" 2>/dev/null
	rc=$?
	set -e
	keys=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(r["key"] + "%+.1f%%" % r["shift_pct"] for r in d["rows"] if r["fails"]) or "-")' "$d/diff.json")
	echo "$rc $keys"
}

false_fail=0
n=1
echo "# A/A: $AA comparisons of $RUNS runs a side, bench_gate --units $UNITS; load $(cut -d' ' -f1-3 /proc/loadavg)"
while [ "$n" -le "$AA" ]; do
	set -- $(compare "aa$n" "")
	[ "$1" = 1 ] && false_fail=$((false_fail + 1))
	echo "aa$n exit $1 failing $2 load $(cut -d' ' -f1 /proc/loadavg)"
	n=$((n + 1))
done
found=0
wrong=0
n=1
echo "# A/B: $AB comparisons, B $PCT % slower in one span; load $(cut -d' ' -f1-3 /proc/loadavg)"
for span in $SLOWS; do
	set -- $(compare "ab$n" "$span:$PCT")
	hit=0
	case ",$2," in *",$span+"*) hit=1 ;; esac
	found=$((found + hit))
	# a failing key other than the injected span and its parent "unit"
	other=$(echo "$2" | tr ',' '\n' | grep -v -e "^$span+" -e '^unit+' -e '^-$' | head -1 || true)
	[ -n "$other" ] && wrong=$((wrong + 1))
	echo "ab$n slow $span exit $1 failing $2 found $hit load $(cut -d' ' -f1 /proc/loadavg)"
	n=$((n + 1))
done
"$RT" diff --calibrate --fail-above 0 $GATE_OPTS "$OUT"/aa1/a "$OUT"/aa1/b | sed 's/^/calibrate: /'
echo "A/A false failures: $false_fail of $AA"
echo "A/B detected: $found of $AB ($PCT % slowdowns); comparisons with another span failing: $wrong"
[ "$KEEP" = 1 ] || rm -rf "$OUT"
