#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The room map of docs/design.md against the tree: check_rooms.sh SOURCE_DIR
#
#  - layers: a room of src/ includes only rooms below it (the order is the map's),
#    and the two formats never include each other;
#  - no circle between the files of src/, tools/ or python/src/: a module (a .c and
#    its .h) includes nothing that includes it back, however far round;
#  - long rooms: no file of those over 800 lines, no function over 120,
#    unless the file's header says why (a line "Long: <the reason>").
#
# Each failure is one line naming the file; the exit status is 1 if there is any.
set -u
root=${1:?usage: check_rooms.sh SOURCE_DIR}
cd "$root" || exit 2
fail=0

# The rooms of src/, lowest first: a room may include those ranked below it.
declare -A rank=(
	[common]=0 [clock]=1 [record]=1 [ring]=2 [producer]=3
	[sink]=4 [path]=4 [writer]=5 [format]=6 [session]=7 [mpi]=8 [instrument]=8 [omp]=9 [itt]=8 [nvtx]=8 [kokkos]=8
)

room_of() { # src/writer/drain.c -> writer; src/format/json/x.c -> format/json
	local p=${1#src/}
	case $p in
	format/*/*) echo "${p%/*}" ;;
	*/*) echo "${p%%/*}" ;;
	*) echo "" ;;
	esac
}

files=$(git ls-files 'src/*.[ch]' 'tools/*.[ch]' 'python/src/*.[ch]' 2>/dev/null)
[ -n "$files" ] || files=$(find src tools python/src -name '*.[ch]' | sort)

# --- layers ---------------------------------------------------------------
for f in $(grep -l '^#include "' $(printf '%s\n' $files | grep '^src/')); do
	from=$(room_of "$f")
	[ -n "$from" ] || continue
	while read -r inc; do
		to=$(room_of "src/$inc")
		[ -n "$to" ] && [ "$to" != "$from" ] || continue
		rf=${rank[${from%%/*}]:-} rt=${rank[${to%%/*}]:-}
		if [ -z "$rf" ] || [ -z "$rt" ]; then
			echo "$f: room $from or $to is not on the map (tests/docs/check_rooms.sh)"
			fail=1
		elif [ "${from%%/*}" = format ] && [ "${to%%/*}" = format ]; then
			echo "$f: $from includes $to: one format never includes another"
			fail=1
		elif [ "$rt" -ge "$rf" ]; then
			echo "$f: $from includes $inc, of $to, which is not below it"
			fail=1
		fi
	done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$f")
done

# --- circles ------------------------------------------------------------------
# Edges between modules; an include is resolved against the including file's
# folder, then the tree's include roots. A module is a .c and its .h, and the parts
# named after it: tally_nest.c and trace_internal.h are the tally's and the trace's.
module_of() { # tools/lib/tally_nest.c -> tools/lib/tally
	local m=${1%.[ch]} dir base
	dir=${m%/*} base=${m##*/}
	while [[ $base == *_* ]]; do
		base=${base%_*}
		if [ -f "$dir/$base.c" ] || [ -f "$dir/$base.h" ]; then
			m=$dir/$base
		fi
	done
	echo "$m"
}
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in $files; do
	dir=${f%/*}
	from=$(module_of "$f")
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
		for cand in "$dir/$inc" "src/$inc" "tools/$inc" tools/*/"$inc"; do
			if [ -f "$cand" ]; then
				to=$(module_of "$(realpath --relative-to=. "$cand")")
				[ "$to" != "$from" ] && echo "$from $to"
				break
			fi
		done
	done
done | sort -u >"$edges"
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
	sed -n 's/^tsort: //p' "$edges.err" | grep -v 'input contains a loop' |
		sed 's/^/circle through: /' | head -n 24
	echo "files include each other in a circle (above; tsort names each circle's members)"
	fail=1
fi
rm -f "$edges.err"

# --- long rooms -------------------------------------------------------------
for f in $files; do
	grep -q '^ \* Long: ' "$f" && continue
	n=$(wc -l <"$f")
	if [ "$n" -gt 800 ]; then
		echo "$f: $n lines: cut it along its seams, or say why in its header (\" * Long: ...\")"
		fail=1
	fi
	# a function's body: from a "{" alone at the left margin to the next "}" there
	awk -v f="$f" '
		/^{$/ { start = NR; name = prev; next }
		/^}/ && start { if (NR - start > 120) { print f ":" start ": " name ": " NR - start " lines"; bad = 1 } start = 0 }
		{ prev = $0 }
		END { exit bad }' "$f" || {
		echo "$f: a function over 120 lines (above): cut it, or say why in the file's header"
		fail=1
	}
done

[ "$fail" = 0 ] && echo "rooms: $(echo "$files" | wc -l) files of src/, tools/ and python/src/: layers, no circle, none too long"
exit "$fail"
