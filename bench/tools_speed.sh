#!/bin/sh
# The ringtrace command's speed against simdjson's on-demand parser, in one run.
#
#   bench/tools_speed.sh BUILD_DIR BENCH_BUILD_DIR FILE [RUNS]
#
# bench_reader_speed (BENCH_BUILD_DIR, the bench preset: it needs simdjson) runs RUNS
# rounds (default 5); in each, the tools' reader, simdjson's on-demand parser, then
# each subcommand of BUILD_DIR's ringtrace on FILE (output to /dev/null or a scratch
# folder), so that the commands and the yardstick take turns. It prints, per command,
# the median wall time, MB/s and its ratio to simdjson's median MB/s of the same
# rounds, and peak RSS (through /usr/bin/time when there is one). The window is the
# middle 5 % of the trace (from its start marker to its end marker's ts): its time
# against stats' is the figure to read for it. MB is 10^6 bytes of FILE.
set -eu
build=$1 bench=$2 file=$3 runs=${4:-5}
tool=$(realpath "$build/tools/ringtrace")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The trace's span in us: its end marker's ts (the start marker is at 0).
span=$(tail -c 65536 "$file" | grep -o '"name":"ringtrace: end","ts":[0-9]*' | tail -n 1 |
	sed 's/.*://')
from=$((span * 95 / 200))
to=$((span * 105 / 200))

"$bench/bench/bench_reader_speed" --runs "$runs" --tool "$tool" \
	--command "check -q" \
	--command "stats" \
	--command "convert -o $tmp/out.json" \
	--command "merge -o $tmp/out.json" \
	--command "split --max-mb 100 -o $tmp/piece" \
	--command "window --from ${from}us --to ${to}us -o $tmp/window.json" \
	"$file"
