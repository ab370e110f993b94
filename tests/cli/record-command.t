#!/bin/bash
# `recce record -- CMD`: launch a program with a known hot function, profile
# it, and find that function, with its file:line, in the report.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/brief"

SRC=tests/targets/hot.c
HOT_LINE=$(source_line "$SRC" '/* HOT-LINE */')
P="$T/hot.pb.gz"

# The target's output without recce, to compare with its output under recce.
run "$TARGETS/hot" 0.3
WANT_OUT=$(cat "$OUT")

run "$RECCE" record -o "$P" -- "$TARGETS/hot" 2
is "$RC" 0 "record -- hot 2 exits 0" || show_run
is "$(cat "$OUT")" "$WANT_OUT" "the command's own output passes through unchanged"
ok "the profile is a gzip file" gzip -t "$P"
like "$(cat "$ERR")" "^recce: [0-9]+ samples .*wrote $P " \
	"the summary line gives the sample count and the file written"
N=$(summary_samples)
# hot says how much CPU time it had: at 99 Hz of CPU time, the samples.
CPU=$(sed -n 's/^hot: cpu \([0-9.]*\) s$/\1/p' "$ERR")
WANT=$(awk -v c="$CPU" 'BEGIN { printf "%d", c * 99 }')
ok "the samples match the command's CPU time x 99 Hz ($N for ${CPU}s, ~$WANT)" near "${N:-0}" "$WANT" 0.2
# However little CPU a loaded machine gave hot, some (the count itself is
# checked against its CPU time above).
cmp_ok "${N:-0}" '>' 0 "and there are some ($N)"
like "$(cat "$ERR")" '99 Hz requested per CPU' "the summary gives the default rate, 99 Hz, per CPU"
like "$(cat "$ERR")" ', [0-9]+ records lost, [0-9]+ throttled' \
	"the summary counts the kernel's lost records and throttled samples"

FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
is "$TOTAL" "$N" "the folded stacks hold every sample of the summary"
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "burn_cpu is the leaf of most samples ($BURN of $TOTAL)"
like "$FOLDED" '(^|;)main;burn_cpu [0-9]+$' "frame-pointer stacks run from main to burn_cpu"

run "$RECCE" report "$P"
is "$RC" 0 "report exits 0" || show_run
REPORT=$(cat "$OUT")
TOP=$(table_rows "$REPORT" | head -n 1)
like "$TOP" "^ *[0-9.]+% +[0-9.]+% +[0-9.]+m?s +burn_cpu +(.*/)?hot\.c:$HOT_LINE\$" \
	"the top row is burn_cpu with its hottest line, hot.c:$HOT_LINE"
like "$REPORT" '^rate-requested: 99 Hz$' "the header gives the requested rate from the profile's comments"
like "$REPORT" "^samples: $N\$" "and the sample count"
like "$REPORT" "^command: .*hot 2\$" "and the command"

run "$RECCE" report --lines "$P"
TOP=$(table_rows "$(cat "$OUT")" | head -n 1)
like "$TOP" "hot\.c:$HOT_LINE +burn_cpu\$" "report --lines puts burn_cpu's loop line (hot.c:$HOT_LINE) on top"

# Without -o, the profile is recce.pb.gz in the current directory, and
# report reads it by default.
mkdir "$T/cwd"
(cd "$T/cwd" && run "$RECCE" record -- "$TARGETS/hot" 0.5 && echo "$RC" >rc)
is "$(cat "$T/cwd/rc")" 0 "record without -o exits 0"
ok "record without -o writes ./recce.pb.gz" test -s "$T/cwd/recce.pb.gz"
(cd "$T/cwd" && run "$RECCE" report --folded && cp "$OUT" folded && echo "$RC" >rc)
is "$(cat "$T/cwd/rc")" 0 "report without FILE reads ./recce.pb.gz"
like "$(cat "$T/cwd/folded")" 'burn_cpu [0-9]+$' "and finds burn_cpu in it"

# The recording stops when the command ends, not at some later deadline.
run "$RECCE" record -o "$T/short.pb.gz" -- "$TARGETS/hot" 0.5
run "$RECCE" report -n 1 "$T/short.pb.gz"
like "$(cat "$OUT")" '^stopped-by: targets exited' "record -- CMD ends with the command, and the profile says so"

# A command that fails is still recorded; recce says how it ended, and
# ends the same way (as perf record does), so that scripts see it fail.
run "$RECCE" record -o "$T/false.pb.gz" -- sh -c 'exit 3'
is "$RC" 3 "the recording of a command that exits 3 exits 3"
ok "and its profile is written" gzip -t "$T/false.pb.gz"
like "$(cat "$ERR")" 'status 3' "and the summary gives its status"
run "$RECCE" record -o "$T/killed.pb.gz" -- sh -c 'kill -TERM $$'
is "$RC" 143 "a command killed by SIGTERM: 128 + 15, as a shell says it"
run "$RECCE" record -o "$T/nocmd.pb.gz" -- "$T/no-such-command"
is "$RC" 1 "a command that cannot be run: status 1"
like "$(cat "$ERR")" 'no-such-command' "the message names it"

# Ctrl-C in a terminal sends SIGINT to recce and the command together: the
# command ends its own way and the profile is still written.
spawn_recce "$T/int.out" "$T/int.err" record -o "$T/int.pb.gz" -- "$TARGETS/hot"
REC=$PID
if wait_for 5 has_perf_events "$REC"; then
	# Once the command has run a third of a second on a CPU, sampled.
	ran_cpu "$(pgrep -P "$REC" | head -n 1)" 30 || diag "the command never ran"
	kill -INT -- "-$REC"
	if wait_exit 5 "$REC"; then
		is "$WAIT_RC" 0 "Ctrl-C ends record -- CMD with status 0"
	else
		fail "Ctrl-C ends record -- CMD with status 0" "still running 5 s after SIGINT"
	fi
else
	fail "Ctrl-C ends record -- CMD with status 0" "recce never opened a perf event" \
		"$(cat "$T/int.err")"
fi
is "$(cat "$T/int.out")" "$WANT_OUT" "the command handled its SIGINT and printed its checksum"
ok "the profile is written after Ctrl-C" gzip -t "$T/int.pb.gz"
like "$(folded "$T/int.pb.gz")" '(^|;)burn_cpu [0-9]+$' "and it names burn_cpu"

# -F sets the rate: ten times more samples at 999 Hz, each worth 1/999 s.
# On a busy virtual machine the kernel's timer misses some of its 1 ms
# points (a CI run kept 253 samples for 0.357 s of CPU): the bound tells
# 999 Hz from any other rate, not a sampler that keeps every point.
run "$RECCE" record -F 999 -o "$T/f999.pb.gz" -- "$TARGETS/hot" 0.5
is "$RC" 0 "record -F 999 exits 0" || show_run
N=$(summary_samples)
CPU=$(sed -n 's/^hot: cpu \([0-9.]*\) s$/\1/p' "$ERR")
WANT=$(awk -v c="$CPU" 'BEGIN { printf "%d", c * 999 }')
ok "-F 999: the samples match the CPU time x 999 Hz ($N for ${CPU}s, ~$WANT)" near "${N:-0}" "$WANT" 0.4
like "$(cat "$ERR")" '999 Hz requested per CPU' "the summary gives the requested 999 Hz"
run "$RECCE" report --folded --value cpu "$T/f999.pb.gz"
NS=$(folded_total "$(cat "$OUT")")
ok "each sample weighs about 1/999 s of CPU ($NS ns for $N samples)" near "$NS" "${N:-0} * 1001001" 0.25

# A command's children are recorded too: sh forks hot (the "; true" keeps
# sh from exec'ing it).
run "$RECCE" record -o "$T/child.pb.gz" -- sh -c '"$0" 1; true' "$TARGETS/hot"
is "$RC" 0 "record -- sh -c 'hot; true' exits 0" || show_run
FOLDED=$(folded "$T/child.pb.gz")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "the forked child's burn_cpu is recorded ($BURN of $TOTAL)"

# A command whose work runs in threads shorter than a sampling period of
# CPU time (brief: 8 ms each, against 10.1 ms at 99 Hz) is sampled per
# CPU, as -p: a thread's own event would never sample them.
run "$RECCE" record -o "$T/brief.pb.gz" -- "$TARGETS/brief" 2
is "$RC" 0 "record -- brief exits 0" || show_run
BW=$(folded_count "$(folded_user "$(folded "$T/brief.pb.gz")")" '(^|;)brief_work$')
cmp_ok "$BW" '>' 0 "brief threads of a command are sampled ($BW)"
run "$RECCE" record --per-thread -o "$T/brief-threads.pb.gz" -- "$TARGETS/hot" 0.3
is "$RC" 0 "record --per-thread -- CMD exits 0" || show_run
like "$(cat "$ERR")" '99 Hz requested per thread on a CPU' "--per-thread samples a command's threads by their own events"

# The profile's header keeps the shell's quoting: the command line in it
# can be pasted back into a terminal.
run "$RECCE" record -o "$T/quoted.pb.gz" -- sh -c 'echo "it'\''s" > /dev/null'
run "$RECCE" report "$T/quoted.pb.gz"
like "$(cat "$OUT")" "command: sh -c 'echo \"it'\\\\''s\" > /dev/null'" \
	"the command: line is quoted as a shell reads it" || show_run
like "$(cat "$OUT")" "recorded-by: recce record -o [^ ]+ -- sh -c 'echo" "and so is recorded-by:"

done_testing
