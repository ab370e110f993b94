#!/bin/bash
# The continuous agent's memory over a simulated day (`make soak`, never
# in `make check`: it takes an hour, AGENT_SOAK_SECONDS to change it):
# processes and binaries coming and going as on a build host or under
# deploys, ten a second, each program a fresh copy (a new file, one
# build-id) that runs 50 ms of CPU and is deleted, every other one built
# as Debian builds its packages (-O2, no frame pointers: its stacks come
# from its CFI, which the unwinder reads and caches for each new binary);
# beside them a process making a thousand threads a second. The sampler's
# resident
# memory and open descriptors, read at a quarter of the run and at its
# end, stay flat; the windows keep being written, the copies named.
. "$(dirname "$0")/../cli/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/spinner" "$NOFP/qsort"
SECONDS_RUN=${AGENT_SOAK_SECONDS:-3600}

spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$T/store" --window 2s --http off
AGENT=$PID
wait_for 30 grep -q 'profiling every process' "$T/agent.err" ||
	diag "the agent did not start: $(cat "$T/agent.err")"
# The sampler is the agent's child (the one that is not a command it serves).
wait_for 10 pgrep -P "$AGENT" >/dev/null
SAMPLER=$(pgrep -P "$AGENT" | head -n 1)
ok "the agent runs its sampler ($SAMPLER)" test -n "$SAMPLER"

mkdir -p "$T/bin"
spawn "$T/churn.out" bash -c "i=0
	while :; do
		i=\$((i + 1))
		if [ \$((i % 2)) = 0 ]; then
			cp '$NOFP/qsort' '$T/bin/prog-'\$i
		else
			cp '$TARGETS/hot' '$T/bin/prog-'\$i
		fi
		'$T/bin/prog-'\$i 0.05 >/dev/null 2>&1
		rm -f '$T/bin/prog-'\$i
		echo \$i > '$T/churned'
		sleep 0.05
	done"
CHURN=$PID
# And a process that makes and joins a thousand threads a second.
spawn "$T/threads.out" "$TARGETS/spinner" "$((SECONDS_RUN + 60))" 1 1000

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SAMPLER/status" 2>/dev/null; }
fds() { ls "/proc/$SAMPLER/fd" 2>/dev/null | wc -l; }

sleep "$((SECONDS_RUN / 4))"
RSS1=$(rss) FDS1=$(fds) MADE1=$(cat "$T/churned")
sleep "$((SECONDS_RUN - SECONDS_RUN / 4))"
RSS2=$(rss) FDS2=$(fds) MADE2=$(cat "$T/churned")
kill "$CHURN"
diag "sampler: RSS $RSS1 kB and $FDS1 descriptors after $MADE1 programs," \
	"$RSS2 kB and $FDS2 descriptors after $MADE2"
ok "the sampler is alive" kill -0 "$SAMPLER"
cmp_ok "${MADE2:-0}" '>' "${MADE1:-0} * 3" "the churn went on all along ($MADE2 programs)"
cmp_ok "${RSS2:-0}" '<=' "${RSS1:-0} * 1.2 + 8192" \
	"its resident memory stays flat (${RSS1:-?} kB, then ${RSS2:-?} kB)"
cmp_ok "${FDS2:-0}" '<=' "${FDS1:-0} + 64" \
	"and so do its open descriptors (${FDS1:-?}, then ${FDS2:-?})"

run "$RECCE" query --store "$T/store" --from -2m --windows --json
is "$RC" 0 "the store answers at the end" || show_run
like "$(cat "$OUT")" '"samples": *[1-9]' "with the last windows' samples"
run "$RECCE" query --store "$T/store" --from -2m -n 0
like "$(cat "$OUT")" ' burn_cpu +[^ ]*tests/targets/hot\.c' \
	"and the deleted copies' CPU named, burn_cpu in hot.c" || show_run
like "$(cat "$OUT")" ' slow_compare +[^ ]*tests/targets/qsort\.c' \
	"and those without frame pointers, slow_compare in qsort.c" || show_run
run "$RECCE" query --store "$T/store" --from -2m --format folded -o -
F=$(grep 'slow_compare' "$OUT")
cmp_ok "$(printf '%s\n' "$F" | grep -c .)" '>' 0 "the store holds their stacks" || show_run
is "$(printf '%s\n' "$F" | grep -Evc '^([^;]*;)?_start;__libc_start_main;__libc_start_call_main;main;sort_batch;')" 0 \
	"each whole, from _start through main and sort_batch" ||
	diag "$(printf '%s\n' "$F" | grep -Ev '^([^;]*;)?_start;' | head -5)"

kill -INT "$AGENT"
wait_exit 30 "$AGENT"
is "$WAIT_RC" 0 "the agent stops cleanly" || cat "$T/agent.err"
done_testing
