#!/bin/sh
# Runs a command while every core is kept busy at nice 0 by a shell loop
# of ours, as a developer's or a user's machine is: `make check-loaded`.
# The loops end with the command, however it ends.
set -u
n=$(nproc)
pids=""
i=0
while [ "$i" -lt "$n" ]; do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done
trap 'kill $pids 2>/dev/null' EXIT INT TERM
echo "with-load: $n busy loops at nice 0 while: $*"
"$@"
