#!/bin/sh
# Checks that src/ and lib/ call none of the C library's unbounded string
# writers (sprintf, vsprintf, strcpy, stpcpy, strcat, gets): each write
# names its bound (snprintf, memcpy with a length). Prints each offending
# line and exits 1; prints one line and exits 0 when none is left.
set -eu
cd "$(dirname "$0")/.."

bad=$(grep -nE '(^|[^a-z_])(sprintf|vsprintf|strcpy|stpcpy|strcat|gets)[[:space:]]*\(' \
	src/*/*.[ch] lib/*.[ch] lib/*/*.[ch] 2>/dev/null || true)
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/check-calls: an unbounded string write: /' >&2
	exit 1
fi
echo "check-calls: no unbounded string writes in src/ and lib/"
