#!/bin/bash
# `recce trace` on Debian's own postgres (run from a copy of its
# executable, which no postgres the machine runs already maps: recce puts
# no breakpoint in such a neighbour, so it would follow each backend only
# from when it read of it), through its postmaster, under
# `pgbench -C` (a new connection, so a new backend forked, for each
# query): every query of every backend forked while traced, each with its
# return and none made up as unwound, with jumps (--fast) and with
# uprobes; with --fast, also while recce itself is stopped (the backends
# that exited leave their rings to the next without recce); no backend
# keeps recce's jumps after the trace, one still connected included; its
# USDT probes in every backend.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$PGBIN/initdb" "$PGBIN/postgres" "$PGBIN/pgbench" "$PGBIN/psql"
start_postgres copy
echo 'SELECT 1;' >"$T/q.sql"

# bench N: 2 clients, N queries each, a connection for each query.
bench()
{
	"$PGBIN/pgbench" -h "$T/pg" -U postgres -C -n -c 2 -t "$1" -f "$T/q.sql" postgres \
		>"$T/bench.out" 2>&1
	sed -n 's/^number of transactions actually processed: //p' "$T/bench.out"
}

# counts OUT: "calls returns unwound processes" of pg_parse_query.
counts()
{
	echo "$(grep -c 'pg_parse_query()' "$1")" "$(grep -c 'pg_parse_query.* --> ' "$1")" \
		"$(grep -c 'unwound\|return lost' "$1")" \
		"$(grep 'pg_parse_query()' "$1" | awk '{ print $2 }' | sort -u | wc -l)"
}

# trace_pm NAME ARGS...: trace on the postmaster, attached; $R.
trace_pm()
{
	local name=$1
	shift
	spawn_recce "$T/$name.out" "$T/$name.err" trace -p "$PM" pg_parse_query --return \
		--count 0 --time 600 "$@"
	R=$PID
	ok "$name: trace attaches" wait_for 60 grep -q '^recce: tracing' "$T/$name.err"
}

for mode in fast uprobe; do
	args=()
	[ "$mode" = fast ] && args=(--fast)
	trace_pm "$mode" "${args[@]}"
	is "$(bench 101)" 202/202 "$mode: pgbench ran 202 queries, each on a new backend"
	kill -INT "$R"
	wait "$R"
	is "$?" 0 "$mode: trace exits 0"
	is "$(counts "$T/$mode.out")" "202 202 0 202" \
		"$mode: every query of the 202 backends, each with its return, none unwound"
	# (Another postgres on the machine is named as an outsider: recce
	# follows the new backends of this one all the same.)
	unlike "$(grep -v 'not of the target.s family' "$T/$mode.err")" 'warning' \
		"$mode: and nothing said lost" || diag "$(cat "$T/$mode.err")"
done

# Its USDT probes (Debian builds postgres with them): each query's start
# and end in every backend forked while traced, their semaphores raised
# in each; query__start's argument typed as a string, read at the hit;
# query__done's, in memory, copied at the hit.
spawn_recce "$T/usdt.out" "$T/usdt.err" trace -p "$PM" 'usdt:postgresql:query__start(query:str)' \
	'usdt:postgresql:query__done' --count 0 --time 600
R=$PID
ok "usdt: trace attaches" wait_for 60 grep -q '^recce: tracing 2 USDT probes' "$T/usdt.err"
is "$(bench 50)" 100/100 "usdt: pgbench ran 100 queries, each on a new backend"
kill -INT "$R"
wait "$R"
is "$?" 0 "usdt: trace exits 0"
is "$(grep -c 'postgres:postgresql:query__start(query="SELECT 1;")$' "$T/usdt.out") $(grep -c 'postgres:postgresql:query__done(arg0=0x[0-9a-f]*)$' "$T/usdt.out")" \
	"100 100" "usdt: the start of every query with its text (typed str), its end with its pointer" ||
	diag "$(head -n 5 "$T/usdt.out")" "$(cat "$T/usdt.err")"
is "$(grep 'query__start' "$T/usdt.out" | awk '{ print $2 }' | sort -u | wc -l)" 100 \
	"usdt: in the 100 backends"

# --fast, recce stopped while the backends come and go: more backends
# than rings, each taking the ring of one that exited.
trace_pm stopped --fast
kill -STOP "$R"
is "$(bench 40)" 80/80 "stopped: pgbench ran 80 queries"
kill -CONT "$R"
kill -INT "$R"
wait "$R"
is "$(counts "$T/stopped.out")" "80 80 0 80" \
	"stopped: every query of the 80 backends, recorded while recce did not read"
unlike "$(cat "$T/stopped.err")" 'warning' "stopped: nothing said lost" ||
	diag "$(cat "$T/stopped.err")"

# A backend forked during the trace and still connected at its end: its
# own watchdog puts its code back; the postmaster's is put back by recce.
trace_pm held --fast
mkfifo "$T/held.in"
spawn "$T/held.sql" "$PGBIN/psql" -h "$T/pg" -U postgres -tA -f "$T/held.in" postgres
exec 3>"$T/held.in"
echo 'SELECT pg_backend_pid();' >&3
ok "held: a connection made during the trace" wait_for 60 grep -q '^[0-9]' "$T/held.sql"
BK=$(head -n 1 "$T/held.sql")
ok "held: its query is traced" wait_for 60 grep -q "<$BK> .*pg_parse_query()" "$T/held.out" ||
	diag "$(cat "$T/held.out" "$T/held.err")"
run python3 tests/cli/code-bytes.py "$BK"
is "$RC" 1 "held: the backend has recce's jumps while traced"
kill -INT "$R"
wait "$R"
run python3 tests/cli/code-bytes.py "$BK"
is "$RC" 0 "held: the backend's code equals its files after the trace" || show_run
run python3 tests/cli/code-bytes.py "$PM"
is "$RC" 0 "held: and the postmaster's" || show_run
echo 'SELECT 2;' >&3
exec 3>&-
ok "held: the connection still answers" wait_for 60 grep -q '^2$' "$T/held.sql"

done_testing
