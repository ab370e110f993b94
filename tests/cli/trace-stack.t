#!/bin/bash
# recce trace --stack through code without frame pointers: a comparator
# that libc's qsort calls (Debian's libc keeps no frame pointers) shows its
# whole caller chain, qsort's internals, sort_batch and main, by default
# (the copied stack unwound) and with --call-graph dwarf, through BPF
# links and through perf uprobe events; the kernel's frame-pointer walk
# (--call-graph fp) stops inside libc. Debian's own redis-server (no frame
# pointers at all) shows each command's path from main through aeMain. A
# frame larger than the copy, or over pages never in memory, ends the
# stack at a frame that says so; a larger copy goes past both, and by
# default the copy grows to reach a deep stack's end.
# And the usage errors of --call-graph.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/qsort" /usr/bin/redis-server /usr/bin/redis-cli

# The callers --stack printed under each call, one line a call, the
# innermost first, separated by ';'.
callers()
{
	awk '/^    at / { sub(/^    at /, ""); sub(/ .*/, ""); s = s (s == "" ? "" : ";") $0; next }
		{ if (s != "") print s; s = "" } END { if (s != "") print s }' "$1"
}

# The whole chain of a comparator call: libc's sort (msort_with_tmp,
# qsort_r: names the libc build may inline differently), then sort_batch
# and main.
CHAIN='^([^;]*(msort|qsort)[^;]*;)+sort_batch;main(;|$)'

spawn "$T/qsort.out" "$TARGETS/qsort" 120
Q=$PID
for mode in auto dwarf; do
	for mech in links events; do
		env=()
		[ "$mech" = events ] && env=(RECCE_NO_BPF=1)
		args=(--call-graph "$mode")
		[ "$mode" = auto ] && args=()
		run env "${env[@]}" "$RECCE" trace -p "$Q" --stack "${args[@]}" --count 5 slow_compare
		is "$RC" 0 "$mode, $mech: trace --stack exits 0" || show_run
		want="BPF links"
		[ "$mech" = events ] && want="perf uprobe events"
		like "$(cat "$ERR")" "^recce: tracing 1 function .* with $want;" "$mode, $mech: with $want"
		callers "$OUT" >"$T/callers"
		is "$(wc -l <"$T/callers")" 5 "$mode, $mech: each of the 5 calls has its callers" ||
			diag "$(head -c 1500 "$OUT")"
		is "$(grep -cE "$CHAIN" "$T/callers")" 5 \
			"$mode, $mech: every chain runs qsort's internals, sort_batch, main" ||
			diag "$(head -n 3 "$T/callers")"
	done
done

# A command recce starts maps its libraries after recce first read its
# mappings, at its exec.
run "$RECCE" trace --stack --count 5 slow_compare -- "$TARGETS/qsort" 1
is "$RC" 0 "a command: trace --stack exits 0" || show_run
callers "$OUT" >"$T/callers"
is "$(grep -cE "$CHAIN" "$T/callers")" 5 "a command: every chain runs through libc to main" ||
	diag "$(head -n 3 "$T/callers")"

# The frame-pointer walk alone cannot pass libc's frames: the comparator's
# caller (the return address at its entry) and no more.
run "$RECCE" trace -p "$Q" --stack --call-graph fp --count 5 slow_compare
is "$RC" 0 "fp: trace --stack exits 0" || show_run
callers "$OUT" >"$T/callers"
is "$(grep -c 'sort_batch' "$T/callers")" 0 "fp: no chain gets past libc to sort_batch" ||
	diag "$(head -n 3 "$T/callers")"
is "$(grep -cE '^[^;]*(msort|qsort)' "$T/callers")" 5 "fp: each names the caller in libc"
kill "$Q"

# --- Debian's redis-server ---------------------------------------------------

spawn "$T/redis.log" /usr/bin/redis-server --port 0 --unixsocket "$T/redis.sock" \
	--save '' --appendonly no --daemonize no
REDIS=$PID
ok "redis-server starts" wait_for 30 test -S "$T/redis.sock"
spawn "$T/cli.out" sh -c "while :; do /usr/bin/redis-cli -s '$T/redis.sock' ping || exit 1; done"
run "$RECCE" trace -p "$REDIS" --stack --count 5 processCommand
is "$RC" 0 "redis-server: trace --stack processCommand exits 0" || show_run
callers "$OUT" >"$T/callers"
is "$(grep -cE '(^|;)aeMain;(.*;)?main(;|$)' "$T/callers")" 5 \
	"redis-server: each command runs from main through aeMain" ||
	diag "$(head -n 3 "$T/callers")"
kill "$REDIS"

# --- a frame larger than the copy ---------------------------------------------

# deep's wide() holds 20 KiB: with the 8 KiB copy the walk of bottom()'s
# callers ends in it, at a frame that says so, and the run says what
# copies more; a copy of 24 KiB holds it, and the walk reaches _start.
frames() { grep '^    at ' "$OUT" | sed 's/^    at //; s/ (.*//' | paste -sd';'; }
run "$RECCE" trace --stack --call-graph dwarf --count 1 bottom -- "$TARGETS/deep" 0.2 wide
is "$RC" 0 "deep wide: trace --stack --call-graph dwarf exits 0" || show_run
is "$(frames)" "wide;[stack copy ended]" "dwarf,8192: bottom under wide, then the copy's end, said" ||
	show_run
like "$(cat "$ERR")" 'recce: 1 stacks shown end early, at a frame that says why: 1 \[stack copy ended\] \(--call-graph dwarf,24576 copies more\)' \
	"the run counts it and names the option that copies enough" || show_run
run "$RECCE" trace --stack --call-graph dwarf,24576 --count 1 bottom -- "$TARGETS/deep" 0.2 wide
is "$RC" 0 "deep wide: --call-graph dwarf,24576 exits 0" || show_run
like "$(frames)" '^wide;main;(.*;)?_start$' "dwarf,24576: bottom under wide and main, to _start" ||
	show_run
unlike "$(cat "$ERR")" 'end early' "and says nothing of ends"

# deep's hole(): 16 KiB on a fresh thread's stack, its middle pages
# never touched, so no probe can read them. The 8 KiB copy ends at the
# first: the stack ends there, said, with the copy that goes on; the
# copy of 24 KiB goes on past them, and the walk reaches clone3.
run "$RECCE" trace --stack --call-graph dwarf --count 1 bottom -- "$TARGETS/deep" 0.2 hole
is "$RC" 0 "deep hole: trace --stack --call-graph dwarf exits 0" || show_run
is "$(frames)" "hole;[stack not in memory]" "dwarf,8192: bottom under hole, then the page not in memory, said" ||
	show_run
like "$(cat "$ERR")" 'recce: 1 stacks shown end early, at a frame that says why: 1 \[stack not in memory\] .*a larger one reaches the callers above it, --call-graph dwarf,24576' \
	"the run counts it and names the copy that goes past it" || show_run
run "$RECCE" trace --stack --call-graph dwarf,24576 --count 1 bottom -- "$TARGETS/deep" 0.2 hole
is "$RC" 0 "deep hole: --call-graph dwarf,24576 exits 0" || show_run
like "$(frames)" '^hole;hole_thread;start_thread;clone3$' \
	"dwarf,24576: the copy goes past the pages not in memory, to clone3" || show_run

# --- a copy that grows --------------------------------------------------------

# deep built without frame pointers, 14 frames of 1 KiB over clock_gettime:
# deeper than the 8 KiB copy. By default (auto without BYTES) the copy
# grows once calls are cut where it ended, and every call after reaches
# _start. A copy given stays as it is.
NOFP=$(dirname "$TARGETS")/targets-nofp
run "$RECCE" trace --stack --count 1000 --limit 0 clock_gettime -- "$NOFP/deep" 5 14
is "$RC" 0 "deep 14: trace --stack exits 0" || show_run
like "$(cat "$ERR")" 'recce: the stack copy grew from 8192 to 16384 bytes: [0-9]+ of the [0-9]+ calls taken with smaller copies were cut where it ended \(--call-graph auto,16384 copies that much from the start\)' \
	"deep 14: the run says the copy grew, and the option that copies that much" || show_run
callers "$OUT" >"$T/grow.callers"
CUT=$(grep -c '^    at \[stack copy ended\]$' "$OUT")
WHOLE=$(grep -c ';_start$' "$T/grow.callers")
DEEP=$(grep -Ec '^now;(descend;){14}main;.*;_start$' "$T/grow.callers")
cmp_ok "$DEEP" '>' 0 "deep 14: calls after the copy grew reach _start from 14 frames down ($DEEP)" ||
	diag "$(head -3 "$T/grow.callers")"
is "$((CUT + WHOLE))" 1000 "deep 14: every other call was cut where a smaller copy ended ($CUT)" ||
	diag "$(grep -Ev ';(_start|\[stack)$' "$T/grow.callers" | head -3)"
like "$(cat "$ERR")" "recce: $CUT stacks shown end early, at a frame that says why: $CUT \\[stack copy ended\\] \\(each with a copy before it grew\\)" \
	"deep 14: the stacks cut are counted as those of the smaller copies"
run "$RECCE" trace --stack --call-graph auto,8192 --count 20 clock_gettime -- "$NOFP/deep" 2 14
is "$RC" 0 "deep 14, auto,8192: trace --stack exits 0" || show_run
unlike "$(cat "$ERR")" 'grew' "deep 14: a copy given does not grow"
cmp_ok "$(grep -c '^    at \[stack copy ended\]$' "$OUT")" '>' 0 "deep 14: and its calls stay cut"

# --- usage -------------------------------------------------------------------

run "$RECCE" trace --call-graph dwarf -p 1 main
is "$RC" 2 "--call-graph without --stack is a usage error"
like "$(cat "$ERR")" 'add --stack, or leave --call-graph out' "that says what to do"
run "$RECCE" trace --stack --call-graph dwarf,40000 -p 1 main
is "$RC" 2 "a copy larger than a call can carry is a usage error"
like "$(cat "$ERR")" 'at most 24576 bytes' "that names the largest"
run "$RECCE" trace --stack --call-graph frames -p 1 main
is "$RC" 2 "an unknown walk is a usage error"
like "$(cat "$ERR")" 'must be auto, fp or dwarf' "that names the walks"

done_testing
