#!/bin/bash
# recce record -a: every process on every CPU, a process that starts and
# exits during the recording named like any other; every stack under a
# root frame of its process, [COMM PID], and report --comm picking by
# name; beside a process making thousands of threads a second, record -a
# and the continuous agent keep its samples and lose no record; and
# --cgroup: only the processes of one cgroup (v2, made and removed by the
# test).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/spinner"

# --- -a -------------------------------------------------------------------

# Copies under names of their own: the other tests' hot and spinner
# processes, sampled too, are not taken for these by name.
cp "$TARGETS/hot" "$T/hot-all"
cp "$TARGETS/spinner" "$T/spinner-all"
spawn "$T/hot.out" "$T/hot-all"
HOT=$PID
P="$T/all.pb.gz"
spawn_recce "$T/rec.out" "$T/rec.err" record -a -o "$P"
REC=$PID
wait_for 20 grep -q 'recording every process' "$T/rec.err" || diag "record -a did not start"
# A process that starts after the recording began and is gone before it
# ends (Ctrl-C, once it has gone and the busy one has run a while more).
"$T/spinner-all" 0.8 >"$T/short.out" 2>&1 &
SHORT=$!
wait "$SHORT"
ran_cpu "$HOT" 20 || diag "the busy process used no CPU while recorded"
kill -INT "$REC"
if wait_exit 20 "$REC"; then
	is "$WAIT_RC" 0 "record -a ended by Ctrl-C exits 0" || diag "$(cat "$T/rec.err")"
else
	fail "record -a ended by Ctrl-C exits 0" "still running 20 s after SIGINT"
fi
like "$(cat "$T/rec.err")" 'recce: [0-9]+ samples in [0-9]+\.[0-9] s \([0-9.]+/s; 99 Hz requested per CPU\) from [0-9]+ threads of [0-9]+ processes \([0-9]+ idle samples left out\)' \
	"the summary counts threads, processes and idle samples"
perl tests/cli/pprof-labels.pl "$P" >"$T/labels"
cmp_ok "$(awk '{ print $2 }' "$T/labels" | sort -u | wc -l)" '>=' 2 "samples of several processes"
FOLDED=$(folded "$P" --pid "$HOT")
cmp_ok "$(folded_count "$FOLDED" '(^|;)burn_cpu(;|$)')" '>' "$(folded_total "$FOLDED") * 0.8" \
	"the busy process is there, named: burn_cpu"
FOLDED=$(folded "$P" --pid "$SHORT")
cmp_ok "$(folded_total "$FOLDED")" '>' 10 "the short-lived process has samples"
cmp_ok "$(folded_count "$FOLDED" '(^|;)spin(_step)?(;|$)')" '>' \
	"$(folded_total "$FOLDED") * 0.5" "and its code is named, though it exited first" ||
	diag "$(printf '%s\n' "$FOLDED" | head -n 3)"
# Each process is a tower of its own, under a root frame "[COMM PID]"
# (the test's shell forked it: a sample before its exec is the shell's).
is "$(printf '%s\n' "$FOLDED" | grep -vEc "^\[(spinner-all|bash) $SHORT\];")" 0 \
	"every stack of the short-lived process is under [spinner-all PID], or [bash PID] before its exec" ||
	diag "$(printf '%s\n' "$FOLDED" | head -n 3)"
FOLDED=$(folded "$P")
is "$(folded_count "$FOLDED" "^\\[hot-all $HOT\\];")" "$(folded_total "$(folded "$P" --pid "$HOT")")" \
	"the busy one's under [hot-all PID], all of its samples and no other's"
cmp_ok "$(printf '%s\n' "$FOLDED" | grep -vc '^\[[^];]* [0-9]*\];')" '==' 0 \
	"every stack has its process's root frame"
is "$(folded_total "$(folded "$P" --comm hot-all,spinner-all)")" \
	"$(folded_total "$(folded "$P" --pid "$HOT,$SHORT" | grep -v "^\[bash $SHORT\];")")" \
	"report --comm picks processes by command name"
run "$RECCE" report -n 1 "$P"
like "$(cat "$OUT")" '^target: every process \(system-wide\), [0-9]+ of them sampled$' \
	"the profile says it is system-wide"
ok "the busy process still runs" kill -0 "$HOT"

# --- -a beside a process that makes thousands of threads a second ---------
# A spinner (one thread spinning, one creating and joining up to 20,000
# threads a second, each gone in microseconds; 5 s) starts once the recording
# has and ends before it: nothing is lost, and its samples are its CPU
# time, as the kernel counted it for the reaped process (bash's times:
# user and system), at 99 Hz, within 25%: a tick goes to whichever thread
# runs, and beside thousands of short threads on a busy machine a 5 s
# share drifts by a tenth or more (perf record -a's the same); samples of
# new threads dropped, as a reader falling behind drops them, cost half.

# churn NAME: runs that spinner to its end; sets CHURN (its pid), MADE
# (the threads it made) and WANT (its CPU time x 99 Hz).
churn()
{
	bash -c '"$@" >"$0.out" & echo $! >"$0.pid"; wait $!; times' "$T/$1" "$TARGETS/spinner" 5 1 20000 \
		>"$T/$1.times"
	CHURN=$(cat "$T/$1.pid")
	MADE=$(awk '/threads/ { n += $4 } END { print n + 0 }' "$T/$1.out")
	# times' second line: the children's user and system time, "0m1.234s 0m0.567s".
	local cpu_ns
	cpu_ns=$(tail -n 1 "$T/$1.times" | awk '{ n = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
		printf "%.0f", n * 1e9 }')
	WANT=$((cpu_ns / 10101010))
}

# churn_samples DESC GOT: GOT samples of the spinner are its WANT, within 25%.
churn_samples()
{
	ok "$1 ($2, ~$WANT)" \
		awk -v g="$2" -v w="$WANT" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * 0.25 + 3) }'
}

spawn_recce "$T/churn-rec.out" "$T/churn.err" record -a -o "$T/churn.pb.gz"
REC=$PID
wait_for 20 grep -q 'recording every process' "$T/churn.err" || diag "record -a did not start"
churn churn
kill -INT "$REC"
wait_exit 20 "$REC"
is "$WAIT_RC" 0 "record -a beside thread churn exits 0" || diag "$(cat "$T/churn.err")"
cmp_ok "$MADE" '>' 1000 "the spinner made thousands of threads ($MADE)"
churn_samples "its samples are its CPU time x 99 Hz" \
	"$(folded_total "$(folded "$T/churn.pb.gz" --pid "$CHURN")")"
like "$(cat "$T/churn.err")" ', 0 records lost, ' "no record lost"

# The continuous agent beside the same churn: its windows keep the
# spinner's samples as record -a does, and the kernel lost none of its
# records.
spawn_recce "$T/ca.out" "$T/ca.err" agent --continuous --socket "$T/ca/a.sock" \
	--store "$T/cstore" --window 1s --rate 99 --http 127.0.0.1:0
CAGENT=$PID
wait_for 15 grep -q 'metrics at http' "$T/ca.err" || diag "the agent did not start: $(cat "$T/ca.err")"
CURL=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$T/ca.err")
churn cchurn
next_window "$CURL" || diag "the agent wrote no window after the spinner ended"
is "$(agent_metric "$CURL" records_lost_total)" 0 "the agent beside thread churn lost no record"
kill -INT "$CAGENT"
wait_exit 20 "$CAGENT"
is "$WAIT_RC" 0 "the agent stops with status 0" || diag "$(cat "$T/ca.err")"
# The store keeps CPU time: each sample stands for 1/99 s.
run "$RECCE" query --store "$T/cstore" --from -10m --pid "$CHURN" --format folded
churn_samples "the agent's samples of it are its CPU time x 99 Hz" \
	"$(folded_total "$(cat "$OUT")" | awk '{ printf "%.0f", $1 / 10101010 }')"

# --- --cgroup -------------------------------------------------------------

CG=
for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ -f "$root/cgroup.procs" ] && grep -q cgroup2 /proc/mounts &&
		mkdir "$root/recce-test-$$" 2>/dev/null; then
		CG="$root/recce-test-$$"
		break
	fi
done
if [ -n "$CG" ]; then
	spawn "$T/inside.out" "$TARGETS/spinner"
	INSIDE=$PID
	echo "$INSIDE" >"$CG/cgroup.procs"
	run "$RECCE" record --cgroup "recce-test-$$" -d 1.5 -o "$T/cg.pb.gz"
	is "$RC" 0 "record --cgroup NAME (under the cgroup mount) exits 0" || show_run
	like "$(cat "$ERR")" "recording every process of cgroup recce-test-$$" "it says what it records"
	perl tests/cli/pprof-labels.pl "$T/cg.pb.gz" >"$T/cg.labels"
	cmp_ok "$(wc -l <"$T/cg.labels")" '>' 0 "it has samples"
	is "$(awk -v p="$INSIDE" '$2 != "pid=" p' "$T/cg.labels" | wc -l)" 0 \
		"every one of them from the process in the cgroup, none from the busy one outside"
	kill_quietly "$INSIDE"
	# A cgroup's stacks deeper than the copy, without frame pointers
	# (deep: 41 KiB): the copy grows, as for -p and -a, and every stack
	# after is whole.
	spawn "$T/deep.out" "$(dirname "$TARGETS")/targets-nofp/deep" 600 # killed below
	DEEP=$PID
	echo "$DEEP" >"$CG/cgroup.procs"
	run "$RECCE" record --cgroup "recce-test-$$" -F 499 -d 3 -o "$T/cg-deep.pb.gz"
	is "$RC" 0 "record --cgroup of deep exits 0" || show_run
	like "$(cat "$ERR")" 'the stack copy grew from 8192 to 65528 bytes: ' "the copy grew to 64 KiB" ||
		show_run
	deep_grown "deep in a cgroup" "$(folded "$T/cg-deep.pb.gz" | sed 's/^[^;]*;//')"
	kill_quietly "$DEEP"
	# The cgroup goes when its last process has.
	wait_for 5 sh -c "! [ -s '$CG/cgroup.procs' ]"
	rmdir "$CG" 2>/dev/null || diag "could not remove $CG"
else
	skip 8 "no writable cgroup v2 mount here"
fi
run "$RECCE" record --cgroup no-such-cgroup-here -d 1
is "$RC" 1 "an unknown cgroup: exit 1"
like "$(cat "$ERR")" "no cgroup 'no-such-cgroup-here'" "it says so"
run "$RECCE" record -a -p "$HOT" -d 1
is "$RC" 2 "-a with -p: a usage error"
run "$RECCE" record -a --event offcpu -d 1
is "$RC" 2 "-a with --event offcpu: a usage error"
kill -TERM "$HOT"

done_testing
