#!/bin/sh
# The ringtrace command's speed against simdjson's on-demand parser.
#
#   bench/tools_speed.sh BUILD_DIR BENCH_BUILD_DIR FILE [RUNS]
#
# Runs bench_reader_speed (the reader against simdjson, RUNS interleaved rounds) and
# then each subcommand RUNS times on FILE, interleaved, with /usr/bin/time; prints
# each one's median wall time, MB/s and peak RSS, and the ratio of its MB/s to
# simdjson's median from the same run. MB is 10^6 bytes of FILE.
set -eu
build=$1 bench=$2 file=$3 runs=${4:-3}
tool=$build/tools/ringtrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mb=$(stat -c %s "$file" | awk '{ printf "%.1f", $1 / 1e6 }')

"$bench/bench/bench_reader_speed" --runs "$runs" "$file" | tee "$tmp/yardstick"
sj=$(sed -n 's/.*simdjson \([0-9.]*\) MB\/s.*/\1/p' "$tmp/yardstick")

run() { # name, command...
	name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$@" >/dev/null 2>&1 || true
	tail -n 1 "$tmp/t" >>"$tmp/$name" # after "Command exited with non-zero status"
}
for i in $(seq "$runs"); do
	run check "$tool" check -q "$file"
	run stats "$tool" stats "$file"
	run convert "$tool" convert -o "$tmp/out.json" "$file"
	run merge "$tool" merge -o "$tmp/out.json" "$file"
	run split "$tool" split --max-mb 100 -o "$tmp/piece" "$file"
	rm -f "$tmp"/piece*
done
printf '| subcommand | wall s | MB/s | against simdjson (%s MB/s) | peak RSS MiB |\n|---|---|---|---|---|\n' "$sj"
for name in check stats convert merge split; do
	sort -n "$tmp/$name" | awk -v n="$name" -v mb="$mb" -v sj="$sj" '
		{ t[NR] = $1; m[NR] = $2 }
		END { k = int((NR + 1) / 2); r = mb / t[k];
		      printf "| `%s` | %.2f | %.0f | %.2f | %.1f |\n", n, t[k], r, r / sj, m[k] / 1024 }'
done
