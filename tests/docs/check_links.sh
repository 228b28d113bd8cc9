#!/usr/bin/env bash
# Every relative link of the Markdown pages resolves: README.md, docs/ and the other
# pages of the tree (build directories left out). A link names a file or directory
# that exists; a link with #anchor into a Markdown page names one of its headings,
# made into an anchor as GitHub does (lowercase; punctuation dropped; blanks to
# hyphens; -1, -2, ... for repeats). Links inside code are not links.
#
#	tests/docs/check_links.sh [SOURCE_DIR]
set -uo pipefail

src=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
errors=0
links=0

# The anchors of a Markdown page, one per line.
anchors() {
	LC_ALL=C awk '
		/^ ? ? ?(```|~~~)/ { code = !code; next }
		code { next }
		/^#+ / {
			h = $0
			sub(/^#+ +/, "", h)
			sub(/ +#* *$/, "", h)
			h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { n = seen[h]++; h = h "-" n }
			else seen[h] = 1
			print h
		}' "$1"
}

# The links of a Markdown page: "LINE TARGET", code blocks and code spans left out.
links_of() {
	LC_ALL=C awk '
		/^ ? ? ?(```|~~~)/ { code = !code; next }
		code { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^) ]+\)/)) {
				print NR, substr(line, RSTART + 2, RLENGTH - 3)
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while IFS= read -r -d '' page; do
	rel=${page#"$src"/}
	dir=$(dirname "$page")
	while read -r line target; do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		links=$((links + 1))
		path=${target%%#*}
		anchor=
		[[ $target == *#* ]] && anchor=${target#*#}
		if [[ -z $path ]]; then
			file=$page
		else
			file=$dir/$path
		fi
		if [[ ! -e $file ]]; then
			echo "docs: $rel:$line: link to $target: no such file" >&2
			errors=$((errors + 1))
			continue
		fi
		if [[ -n $anchor && $file == *.md && -f $file ]]; then
			anchors "$file" >"$tmp/anchors"
			if ! grep -qxF -- "$anchor" "$tmp/anchors"; then
				echo "docs: $rel:$line: link to $target: no heading with that anchor in ${file#"$src"/}" >&2
				errors=$((errors + 1))
			fi
		fi
	done < <(links_of "$page")
done < <(find "$src" \( -name build -o -name .git -o -name out -o -name node_modules \) -prune -o \
	-name '*.md' -type f -print0)

if ((errors > 0)); then
	echo "docs: $errors broken link(s)" >&2
	exit 1
fi
echo "docs: $links relative links resolve"
