#!/bin/sh
# Checks that every skip and skip_env in the test scripts names its count
# first, then its reason (tests/cli/lib.sh): reversed, the call aborts
# its file the day it fires, which is seldom. Prints each offending line
# and exits 1; prints one line and exits 0 when none is left.
set -eu
cd "$(dirname "$0")/.."

bad=$(grep -nE '(^|[;&|{(]|then|else|do)[[:space:]]*(skip|skip_env)[[:space:]]+[^0-9$[:space:]]' \
	tests/cli/*.t tests/cli/lib.sh tests/soak/*.t 2>/dev/null |
	grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' || true)
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/check-skips: a skip whose count is not first: /' >&2
	exit 1
fi
echo "check-skips: every skip names its count, then its reason"
