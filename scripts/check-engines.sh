#!/bin/bash
# Checks the rule of docs/internals.md that engines (every folder of src/
# but cli/) never print, exit or read the environment, and that only the
# event loop waits with poll() (in src/cli/ too): each such call must be
# listed, with why, in scripts/engine-calls.allow, by file, call and
# count. A new one fails the check, and so does one that went away (the
# list must say what is true: lower its count). Prints each difference,
# or one line when the list and the code agree.
set -eu
cd "$(dirname "$0")/.."

# call NAME PATTERN: "FILE NAME COUNT" for each engine file with lines
# matching the extended regular expression PATTERN.
call()
{
	for f in src/*/*.[ch]; do
		case "$f" in src/cli/*) [ "$1" = poll ] || continue ;; esac
		# Code only: comments (one-line, and the lines of a block's
		# body, which start with "*") left out.
		n=$(sed -e 's|/\*.*\*/||g' -e '/^[[:space:]]*\(\/\*\|\*\)/d' "$f" |
			grep -cE "$2" || true)
		[ "$n" -gt 0 ] && echo "$f $1 $n"
	done
	return 0
}

found=$(
	{
		call getenv '(^|[^a-z_])getenv[[:space:]]*\('
		call exit '(^|[^a-z_])_?exit[[:space:]]*\('
		call printf '(^|[^a-z_.>])(printf|puts|perror)[[:space:]]*\('
		call stderr 'fprintf[[:space:]]*\([[:space:]]*stderr'
		call poll '(^|[^a-z_])poll[[:space:]]*\('
	} | sort
)
allowed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/engine-calls.allow |
	awk '{ print $1, $2, $3 }' | sort)
if [ "$found" != "$allowed" ]; then
	echo "check-engines: engine calls differ from scripts/engine-calls.allow (- listed, + in the code):" >&2
	diff <(echo "$allowed") <(echo "$found") | grep '^[<>]' |
		sed -e 's/^</  -/' -e 's/^>/  +/' >&2 || true
	exit 1
fi
echo "check-engines: engines print, exit, read the environment and poll only where scripts/engine-calls.allow says ($(echo "$found" | grep -c .) entries)"
