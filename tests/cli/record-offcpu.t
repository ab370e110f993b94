#!/bin/bash
# recce record --event offcpu and --event wall: where threads wait, weighted
# by how long they wait, checked against a target that times its own waits
# (tests/targets/blocker.c); the reason each wait is given; on-CPU and
# off-CPU time summing to the elapsed time per thread; C++ with exceptions,
# a Rust-named function and Go; go tool pprof reading the sample types; and
# the hint an idle target gets under the default --event cpu.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/blocker" "$TARGETS/blocker-cxx"

# snapshot N FILE: the Nth block of "NAME NS" lines the blocker printed.
snapshot()
{
	awk -v want="$1" '/^--$/ { n++; next } n == want - 1 && NF == 2 { print }' "$2"
}

# --- offcpu: shares of the waiting time, against the target's own clock --

spawn "$T/blk.out" "$TARGETS/blocker" 600
BLK=$PID
wait_for 30 grep -q "^ready" "$T/blk.out" || diag "the blocker did not start"
P="$T/off.pb.gz"
spawn_recce "$T/rec.out" "$T/rec.err" record -p "$BLK" --event offcpu --call-graph dwarf \
	-d 3 -o "$P"
REC=$PID
wait_for 30 grep -q 'recording process off-CPU' "$T/rec.err" || diag "record did not start"
kill -USR1 "$BLK"
if wait_exit 20 "$REC"; then
	is "$WAIT_RC" 0 "record --event offcpu -p exits 0" || diag "$(cat "$T/rec.err")"
else
	fail "record --event offcpu -p exits 0" "still running after 20 s"
fi
kill -USR1 "$BLK"
wait_for 30 sh -c "[ \$(grep -c '^--\$' '$T/blk.out') -ge 2 ]" || diag "no second snapshot"
like "$(cat "$T/rec.err")" 'recce: [0-9]+ switches in 3\.[0-9] s, [0-9.]+ s off-CPU, from 8 threads' \
	"the summary counts switches, off-CPU seconds and the 8 threads"
snapshot 1 "$T/blk.out" >"$T/truth.a"
snapshot 2 "$T/blk.out" >"$T/truth.b"
# Each function's share of the waiting the target timed in the window.
TRUTH=$(awk 'NR == FNR { a[$1] = $2; next } { d[$1] = $2 - a[$1]; s += d[$1] }
	END { for (k in d) printf "%s %.2f\n", k, 100 * d[k] / s }' "$T/truth.a" "$T/truth.b")
FOLDED=$(value_folded "$P" offcpu)
TOTAL=$(folded_total "$FOLDED")
cmp_ok "$TOTAL" '>' 18e9 "off-CPU time adds up to more than 18 s (8 threads, 6.5 of them waiting, 3 s)"
for f in nap wait_pipe pace take_lock hold rest doze main_wait; do
	want=$(printf '%s\n' "$TRUTH" | awk -v f="$f" '$1 == f { print $2 }')
	got=$(awk -v n="$(folded_count "$FOLDED" "(^|;)$f;")" -v t="$TOTAL" \
		'BEGIN { printf "%.2f", 100 * n / t }')
	cmp_ok "($got) - ($want)" '<=' 5 "$f: $got% of the off-CPU time, the target timed $want%"
	cmp_ok "($want) - ($got)" '<=' 5 "... within 5 points either way"
done

# Why each one waited: the marker at the leaf of its stacks.
share_of()
{
	awk -v a="$(folded_count "$FOLDED" "$1")" -v b="$(folded_count "$FOLDED" "$2")" \
		'BEGIN { print (b > 0 ? a / b : 0) }'
}
for pair in nap:sleep pace:sleep hold:sleep doze:sleep wait_pipe:io take_lock:lock \
	main_wait:wait; do
	f=${pair%%:*} why=${pair#*:}
	cmp_ok "$(share_of "(^|;)$f;.*\\[off-CPU: $why\\]\$" "(^|;)$f;")" '>=' 0.9 \
		"$f waits as [off-CPU: $why]"
done
like "$FOLDED" '(^|;)spin;[^ ]*\[off-CPU: runnable\] [0-9]+' \
	"a spinning thread taken off its CPU is [off-CPU: runnable]"
like "$FOLDED" ';(hrtimer_nanosleep|do_nanosleep);' "the kernel's side of the wait is in the stack"

# The profile says what it holds, and go tool pprof reads its types.
run "$RECCE" report -n 3 "$P"
like "$(cat "$OUT")" '^event: offcpu$' "the profile's comments say event: offcpu"
like "$(cat "$OUT")" 'total: [0-9.]+s offcpu' "report totals the offcpu time"
if command -v go >/dev/null 2>&1; then
	export GOCACHE="$T/gocache"
	run go tool pprof -top "$P"
	like "$(cat "$OUT")" 'Type: offcpu' "go tool pprof shows the default type offcpu" || show_run
	like "$(grep -E 'Total samples|Showing' "$OUT")" 'Total samples = [0-9.]+(ms|s|mins|hrs)' "... in time"
	run go tool pprof -sample_index=switches -top "$P"
	like "$(cat "$OUT")" 'Type: switches' "... and switches as the other type" || show_run
else
	skip 3 "go is not installed (Debian package golang-go)"
fi

# --- wall: on-CPU and off-CPU time sum to the elapsed time per thread ----

# The target's own clock of its dozes, snapshots 3 and 4, taken as the
# recording starts and the 2 s it records later: a time span, not a wait
# for an event. (Taken once record has ended, snapshot 4 would weigh in
# the time record takes to write its profile, seconds under a sanitizer
# on a busy machine, when the thread's dozes run later than recorded.)
P="$T/wall.pb.gz"
spawn_recce "$T/wall.out" "$T/wall.err" record -p "$BLK" --event wall -d 2 -o "$P"
REC=$PID
recording "$T/wall.err" || diag "record did not start"
T1=$(date +%s%N)
kill -USR1 "$BLK"
sleep 2 # the span recorded: a time apart, not a wait
T2=$(date +%s%N)
kill -USR1 "$BLK"
if wait_exit 30 "$REC"; then RC=$WAIT_RC; else RC="still running after 30 s"; fi
wait_for 10 sh -c "[ \$(grep -c '^--\$' '$T/blk.out') -ge 4 ]" || diag "no fourth snapshot"
OUT=$T/wall.out
ERR=$T/wall.err
is "$RC" 0 "record --event wall exits 0" || show_run
like "$(cat "$ERR")" 'recce: [0-9]+ samples \([0-9]+ switches, [0-9.]+ s off-CPU\) in 2\.[0-9] s' \
	"the summary gives samples and the off-CPU part"
perl tests/cli/pprof-labels.pl "$P" | sed -n 's/.* tid=\([0-9]*\) thread=\([^ ]*\).*/\1 \2/p' |
	sort -u >"$T/threads"
is "$(wc -l <"$T/threads")" 8 "every thread of the target is in the profile"
while read -r tid name; do
	sum=$(folded_total "$(value_folded "$P" wall --tid "$tid")")
	ok "$name: on-CPU and off-CPU time sum to the 2 s recorded ($sum ns)" near "$sum" 2e9 0.05
done <"$T/threads"
SPIN=$(awk '$2 == "spinner" { print $1 }' "$T/threads")
FOLDED=$(value_folded "$P" wall --tid "$SPIN")
# On its CPU, or preempted while it could run: either way, in spin.
cmp_ok "$(folded_count "$FOLDED" '(^|;)spin(;|$)')" '>' "$(folded_total "$FOLDED") * 0.9" \
	"the spinner's wall time is in spin, on the CPU or runnable" ||
	diag "$(printf '%s\n' "$FOLDED" | grep -Ev '(^|;)spin(;|$)' | awk '{ print $NF "\t" $0 }' | sort -nr | cut -f2 | head -n 5)"
cmp_ok "$(folded_count "$FOLDED" '(^|;)spin(;clock_gettime)*$')" '>' 0 "... some of it on the CPU"
MIXED=$(awk '$2 == "mixed" { print $1 }' "$T/threads")
FOLDED=$(value_folded "$P" wall --tid "$MIXED")
DOZE=$(folded_count "$FOLDED" '(^|;)doze;.*\[off-CPU: sleep\]$')
# Half of it when sleeps end on time; more on a busy machine, where they
# wake late: the target timed its own.
TIMED=$(awk -v a="$(snapshot 3 "$T/blk.out" | awk '$1 == "doze" { print $2 }')" \
	-v b="$(snapshot 4 "$T/blk.out" | awk '$1 == "doze" { print $2 }')" -v w=$((T2 - T1)) \
	'BEGIN { printf "%.3f", (b - a) / w }')
GOT=$(awk -v d="$DOZE" 'BEGIN { printf "%.3f", d / 2e9 }')
ok "the mixed thread sleeps in doze for the share of its time it timed itself ($GOT, timed $TIMED)" \
	awk "BEGIN { d = $GOT - $TIMED; exit !(d <= 0.1 && d >= -0.1 && $TIMED > 0) }"
kill -TERM "$BLK"

# --- C++ with exceptions, a Rust-named function ---------------------------

spawn "$T/cxx.out" "$TARGETS/blocker-cxx" 600
CXX=$PID
wait_for 30 grep -q "^ready" "$T/cxx.out" || diag "blocker-cxx did not start"
P="$T/cxx.pb.gz"
run "$RECCE" record -p "$CXX" --event offcpu --call-graph dwarf -d 1.5 -o "$P"
is "$RC" 0 "record --event offcpu of a C++ target exits 0" || show_run
FOLDED=$(value_folded "$P" offcpu)
TOTAL=$(folded_total "$FOLDED")
WAIT=$(folded_count "$FOLDED" 'waiting::Waiter::wait_turn\(\);.*\[off-CPU: lock\]$')
ok "a condition variable wait between throws is [off-CPU: lock] under Waiter::wait_turn ($WAIT ns)" \
	near "$WAIT" 1.5e9 0.1
PARK=$(folded_count "$FOLDED" '(^|;)service::worker::park;.*\[off-CPU: sleep\]$')
ok "a Rust-named function's sleep is [off-CPU: sleep] under service::worker::park ($PARK ns)" \
	near "$PARK" 1.5e9 0.1
ok "the target still runs" kill -0 "$CXX"
kill -TERM "$CXX"

# --- Go -------------------------------------------------------------------

spawn_go offcpu "$T/go.out" 30
case $? in
0)
	GOP=$PID
	P="$T/go.pb.gz"
	run "$RECCE" record -p "$GOP" --event offcpu -d 1.5 -o "$P"
	is "$RC" 0 "record --event offcpu of a Go program exits 0" || show_run
	FOLDED=$(value_folded "$P" offcpu)
	# Each thread waits nearly all the 1.5 s, but between its waits it
	# runs Go's own code to leave and enter the system call, every
	# 10-13 ms, which a loaded or sanitized run makes long (a sanitized
	# readGo waited 1.34 s): the band holds the attribution, not a time.
	NAP=$(folded_count "$FOLDED" '(^|;)main\.napGo;.*\[off-CPU: sleep\]$')
	ok "Go: main.napGo sleeps, [off-CPU: sleep] ($NAP ns)" near "$NAP" 1.5e9 0.4
	READ=$(folded_count "$FOLDED" '(^|;)main\.readGo;.*\[off-CPU: io\]$')
	ok "Go: main.readGo waits on a pipe, [off-CPU: io] ($READ ns)" near "$READ" 1.5e9 0.4
	ok "the Go program still runs" kill -0 "$GOP"
	;;
1) skip 4 "no Go target" ;;
*) skip 5 "go is not installed (Debian package golang-go)" ;;
esac

# --- an idle target under --event cpu, and usage errors -------------------

spawn "$T/sleep.out" sleep 30
run "$RECCE" record -p "$PID" -d 1 -o "$T/idle.pb.gz"
is "$RC" 0 "record of an idle process exits 0" || show_run
like "$(cat "$ERR")" 'the target was idle: it ran 0\.[0-9]% of one CPU in [0-9.]+ s; .*--event offcpu.*--event wall' \
	"an idle target gets a hint: record with --event offcpu or wall"
# Runnable is not idle: a spinning process pinned to one CPU at nice 19
# beside two spinners at nice 0 (in one session, so that nice weighs
# them against each other) runs about 1% of the time and waits for the
# CPU the rest of it.
SLEEPER=$PID
spawn "$T/starved.out" sh -c "taskset -c 0 '$TARGETS/spinner' 60 1 >/dev/null &
	taskset -c 0 '$TARGETS/spinner' 60 1 >/dev/null &
	exec taskset -c 0 nice -n 19 '$TARGETS/spinner' 60 1"
wait_for 10 grep -q rate "$T/starved.out"
run "$RECCE" record -p "$PID" -d 1 -o "$T/starved.pb.gz"
is "$RC" 0 "record of a process starved for CPU exits 0" || show_run
like "$(cat "$ERR")" 'the target was starved for CPU: it ran [0-9.]+% of one CPU in [0-9.]+ s, and its threads waited [0-9.]+ s in all for one' \
	"a runnable process that hardly ran is called starved for CPU, with the time it waited"
unlike "$(cat "$ERR")" 'was idle' "never idle"
kill -KILL -- "-$PID"
kill_quietly "$PID"
PID=$SLEEPER
run "$RECCE" record -p "$PID" -d 1 --event offcpu -o "$T/asleep.pb.gz"
is "$RC" 0 "record --event offcpu of a process asleep throughout exits 0" || show_run
unlike "$(cat "$ERR")" 'idle' "and it gets no idle hint"
# It never ran while recorded: where it sleeps is read from /proc, unwound.
FOLDED=$(value_folded "$T/asleep.pb.gz" offcpu)
SLEPT=$(folded_count "$FOLDED" '(^|;)(clock_)?nanosleep;\[off-CPU: sleep\]$')
# The whole recording, however long it took (a second, more on a busy
# machine): the profile says how long.
SECS=$(profile_seconds "$T/asleep.pb.gz")
ok "its whole recording ($SECS s) is off-CPU in nanosleep, a stack read while it waits ($SLEPT ns)" \
	near "$SLEPT" "$SECS * 1e9" 0.01
like "$FOLDED" '(^|;)__libc_start_main;' "... unwound from the system call up to __libc_start_main"

run "$RECCE" record -p "$PID" --event bogus -d 1
is "$RC" 2 "--event bogus is a usage error"
like "$(cat "$ERR")" '--event must be cpu, offcpu, wall or alloc' "it names the choices"
run "$RECCE" record -p "$PID" --event offcpu -F 999 -d 1
is "$RC" 2 "-F with --event offcpu is a usage error"
like "$(cat "$ERR")" 'offcpu takes a stack at every switch' "it says why"

done_testing
