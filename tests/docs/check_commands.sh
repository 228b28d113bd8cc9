#!/usr/bin/env bash
# The command manual against the command: for every command in the table of
# `ringtrace --help`, the options its `--help` lists are exactly those of the
# Options table of docs/commands/ringtrace-<command>.md and of the OPTIONS section
# of docs/man/ringtrace-<command>.1, with the same short forms; `ringtrace`'s own
# options (those of its --help that belong to no command) are those of
# docs/commands/ringtrace.md and docs/man/ringtrace.1. Every command has its page
# and man page, linked from the overview, and there is no page of a command that
# does not exist. One line per mismatch, naming the option and the file.
#
#	tests/docs/check_commands.sh RINGTRACE_BINARY [SOURCE_DIR]
set -uo pipefail

bin=${1:?usage: check_commands.sh RINGTRACE_BINARY [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
pages=$src/docs/commands
man=$src/docs/man
errors=0
checked=0

fail() {
	echo "docs: $*" >&2
	errors=$((errors + 1))
}

# Options of a --help text: the lines of its "options:" section that begin, indented
# a little, with a dash (deeper lines are the descriptions going on). One line per
# option, "LONG SHORT" (SHORT "-" when there is none), sorted.
help_options() {
	awk '
		/^options:/ { on = 1; next }
		on && /^[^ ]/ { on = 0 }
		on && match($0, /^ +-/) && RLENGTH <= 9 {
			sub(/^ +/, "")
			sub(/  .*/, "")		# the option column ends at two blanks
			long = "-"; short = "-"
			n = split($0, w, /[ ,]+/)
			for (i = 1; i <= n; i++) {
				if (w[i] ~ /^--[a-z0-9]/) long = w[i]
				else if (w[i] ~ /^-[A-Za-z0-9]$/) short = w[i]
			}
			print long, short
		}' | sort
}

# Options of a page's "## Options" table: the first cell of each row, its backquoted
# words that begin with a dash.
page_options() {
	awk '
		/^## / { on = ($0 == "## Options"); next }
		on && /^\|/ && !/^\|[- |]*$/ {
			split($0, cell, "|")
			c = cell[2]
			if (c ~ /^ *Option *$/) next
			long = "-"; short = "-"; nlong = 0
			while (match(c, /`[^`]*`/)) {
				w = substr(c, RSTART + 1, RLENGTH - 2)
				c = substr(c, RSTART + RLENGTH)
				sub(/ .*/, "", w)
				if (w ~ /^--[a-z0-9]/) { long = w; nlong++ }
				else if (w ~ /^-[A-Za-z0-9]$/) short = w
			}
			if (nlong > 1) print "TWO", long
			print long, short
		}' "$1" | sort
}

# Options of a man page's OPTIONS section: its .It lines, each Fl word.
man_options() {
	awk '
		/^\.Sh / { on = ($2 == "OPTIONS"); next }
		on && /^\.It / {
			long = "-"; short = "-"; nlong = 0
			n = split($0, w, /[ \t]+/)
			for (i = 1; i < n; i++) {
				if (w[i] != "Fl") continue
				if (w[i + 1] ~ /^-[a-z0-9]/) { long = "-" w[i + 1]; nlong++ }
				else if (w[i + 1] ~ /^[A-Za-z0-9]$/) short = "-" w[i + 1]
			}
			if (nlong > 1) print "TWO", long
			if (long != "-" || short != "-") print long, short
		}' "$1" | sort
}

# compare WHAT WANT(file) HAVE(file) WHERE [long-only]: WANT is what --help says.
compare() {
	local what=$1 want=$2 have=$3 where=$4 longonly=${5:-} long short other
	while read -r long short; do
		[[ $long == TWO ]] && { fail "$where: one option per row or item, not two ($short ...)"; continue; }
		other=$(awk -v l="$long" '$1 == l { print $2 }' "$have")
		if [[ -z $other ]]; then
			fail "$where: no option $long, which '$what' lists"
		elif [[ -z $longonly && $other != "$short" ]]; then
			fail "$where: $long has the short form $other, '$what' says $short"
		fi
		checked=$((checked + 1))
	done <"$want"
	while read -r long short; do
		[[ $long == TWO ]] && continue
		if ! awk -v l="$long" '$1 == l { found = 1 } END { exit !found }' "$want"; then
			fail "$where: lists $long, which '$what' does not have"
		fi
	done <"$have"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$bin" --help >"$tmp/top" 2>&1; then
	echo "docs: '$bin --help' failed" >&2
	exit 1
fi
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$tmp/top")
if [[ -z $commands ]]; then
	echo "docs: no commands in '$bin --help'" >&2
	exit 1
fi

: >"$tmp/all-long"
for cmd in $commands; do
	page=$pages/ringtrace-$cmd.md
	mpage=$man/ringtrace-$cmd.1
	if ! "$bin" "$cmd" --help >"$tmp/help-$cmd" 2>&1; then
		fail "'ringtrace $cmd --help' failed"
		continue
	fi
	help_options <"$tmp/help-$cmd" >"$tmp/want-$cmd"
	[[ -s $tmp/want-$cmd ]] || fail "'ringtrace $cmd --help' lists no options"
	awk '{ print $1 }' "$tmp/want-$cmd" >>"$tmp/all-long"
	if [[ ! -f $page ]]; then
		fail "no page docs/commands/ringtrace-$cmd.md for the command $cmd"
	else
		page_options "$page" >"$tmp/page-$cmd"
		compare "ringtrace $cmd --help" "$tmp/want-$cmd" "$tmp/page-$cmd" \
			"docs/commands/ringtrace-$cmd.md (## Options)"
		grep -q "(ringtrace-$cmd.md)" "$pages/ringtrace.md" ||
			fail "docs/commands/ringtrace.md: no link to ringtrace-$cmd.md"
	fi
	if [[ ! -f $mpage ]]; then
		fail "no man page docs/man/ringtrace-$cmd.1 for the command $cmd"
	else
		man_options "$mpage" >"$tmp/man-$cmd"
		compare "ringtrace $cmd --help" "$tmp/want-$cmd" "$tmp/man-$cmd" \
			"docs/man/ringtrace-$cmd.1 (.Sh OPTIONS)"
		grep -q "^\.Xr ringtrace-$cmd 1" "$man/ringtrace.1" ||
			fail "docs/man/ringtrace.1: no .Xr ringtrace-$cmd 1"
	fi
done

# ringtrace's own: the long options of its --help that are no command's, and --help.
{
	echo --help
	grep -o -- '--[a-z][a-z0-9-]*' "$tmp/top"
} | sort -u | grep -vxF -f <(sort -u "$tmp/all-long" | grep -vx -- --help) |
	awk '{ print $1, "-" }' >"$tmp/want-top"
page_options "$pages/ringtrace.md" >"$tmp/page-top"
compare "ringtrace --help" "$tmp/want-top" "$tmp/page-top" "docs/commands/ringtrace.md (## Options)" long-only
man_options "$man/ringtrace.1" >"$tmp/man-top"
compare "ringtrace --help" "$tmp/want-top" "$tmp/man-top" "docs/man/ringtrace.1 (.Sh OPTIONS)" long-only

# No page or man page of a command that is not in the table.
for f in "$pages"/ringtrace-*.md "$man"/ringtrace-*.1; do
	[[ -e $f ]] || continue
	name=${f##*/ringtrace-}
	name=${name%.*}
	grep -qx -- "$name" <<<"$commands" || fail "${f#"$src"/}: no command '$name' in 'ringtrace --help'"
done

if ((errors > 0)); then
	echo "docs: $errors mismatch(es) between the commands' --help and their pages" >&2
	exit 1
fi
echo "docs: $(wc -w <<<"$commands") commands, $checked options: pages and man pages match --help"
