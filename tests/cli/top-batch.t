#!/bin/bash
# recce top in batch mode (-b): thread rows with CPU, names and the hot
# function, threads appearing, targets exiting, system-wide process rows,
# JSON output, the targets' samples picked in the kernel, and the
# /proc-only fallback when perf_event_open is refused.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/topmix" "$TARGETS/exits" "$TARGETS/deny-perf" "$TARGETS/spinner" \
	"$TARGETS/threads"
perl -MJSON::PP -e 1 2>/dev/null || skip_all "perl JSON::PP is missing"

# jrow FILE SNAPSHOT NAME FIELD: FIELD of the row named NAME in the
# SNAPSHOT-th JSON line of FILE (the last one when SNAPSHOT is 0). NAME
# may be pid:PID, for the row of that process among others of its name
# (another test's topmix).
jrow()
{
	perl -MJSON::PP -e '
		my ($file, $n, $name, $field) = @ARGV;
		open my $fh, "<", $file or exit 1;
		my @l = grep { /^\{/ } <$fh>;
		my $s = decode_json($n ? $l[$n - 1] : $l[-1]);
		for my $r (@{ $s->{rows} }) {
			if ($name =~ /^pid:(\d+)$/) {
				next unless $r->{pid} == $1;
			} else {
				next unless $r->{name} eq $name;
			}
			my $v = $r->{$field};
			print defined $v ? $v : "null", "\n";
			exit 0;
		}' "$@"
}

spawn "$T/mix.out" "$TARGETS/topmix" 60
MIX=$PID
wait_for 5 grep -q 'topmix: ready' "$T/mix.out" || diag "topmix never got ready"

# --- thread rows of one process ---------------------------------------------

run "$RECCE" top -b -n 2 --json -p "$MIX"
is "$RC" 0 "top -b -n 2 --json exits 0" || show_run
is "$(grep -c '^{' "$OUT")" 2 "two snapshots, one JSON object per line"
ok "every line is valid JSON" perl -MJSON::PP -ne 'decode_json($_)' "$OUT"
BUSY_CPU=$(jrow "$OUT" 0 busy cpu)
cmp_ok "$BUSY_CPU" '>' 5 "the busy thread shows CPU use ($BUSY_CPU%)"
is "$(jrow "$OUT" 0 busy hot)" busy_spin "the busy thread's hot function is busy_spin"
HOT_SHARE=$(jrow "$OUT" 0 busy hot_share)
cmp_ok "$HOT_SHARE" '>=' 0.9 "and it holds nearly all of its samples ($HOT_SHARE)"
is "$(jrow "$OUT" 0 busy last)" busy_spin "the busy thread's last function is busy_spin"
cmp_ok "$(jrow "$OUT" 0 idle cpu)" '==' 0 "the idle thread shows 0% CPU"
is "$(jrow "$OUT" 0 idle samples)" 0 "and no samples"
is "$(jrow "$OUT" 0 idle hot)" null "and no hot function"
is "$(jrow "$OUT" 0 idle state)" S "the idle thread sleeps (state S)"
is "$(jrow "$OUT" 0 topmix tid)" "$MIX" "the main thread's row has its TID"
like "$(head -n 1 "$OUT")" '"targets":\{"processes":1,"threads":3,' "the header counts 1 process, 3 threads"
like "$(head -n 1 "$OUT")" '"load":\[[0-9.]+,[0-9.]+,[0-9.]+\]' "the header has the load"
like "$(head -n 1 "$OUT")" '"cpus":\[[0-9.]+(,[0-9.]+)*\]' "the header has per-core CPU use"

# Text output: the same rows as a table.
run "$RECCE" top -b -n 1 -p "$MIX"
is "$RC" 0 "top -b -n 1 exits 0" || show_run
like "$(cat "$OUT")" '^recce top - up [0-9]' "the text header starts with the uptime"
like "$(cat "$OUT")" "^ *$MIX +[0-9]+ busy +R .*busy_spin \\([0-9]+%\\) +busy_spin\$" \
	"the text row of the busy thread names busy_spin, share and last"
like "$(cat "$OUT")" "^ *$MIX +[0-9]+ idle +S +0\\.0 " "the idle thread's text row shows 0.0% CPU"

# --- a thread created while top runs ----------------------------------------

spawn_recce "$T/late.out" "$T/late.err" top -b -n 4 -d 0.5 --json -p "$MIX"
TOP=$PID
wait_for 10 grep -qs '^{' "$T/late.out" || diag "top printed no snapshot"
is "$(jrow "$T/late.out" 1 late tid)" "" "no thread named late in the first snapshot"
kill -USR1 "$MIX"
wait_exit 20 "$TOP" || diag "top -n 4 did not end"
is "$(jrow "$T/late.out" 0 late hot)" late_spin "the thread created mid-run appears, in late_spin"
LATE_TID=$(jrow "$T/late.out" 0 late tid)
ok "with its real thread id" test -d "/proc/$MIX/task/$LATE_TID"

# --- threads that come and go: their /proc files kept open, then closed ------
# top keeps each thread's stat and status files open between snapshots.
# The threads target makes a wave of two threads every quarter second,
# each ended and joined: once 50 snapshots have read dozens of them, the
# files top holds are those of the threads it read last, not of all it
# ever saw.
spawn "$T/waves.out" "$TARGETS/threads" 60
WAVES=$PID
wait_for 10 grep -q 'early wave done' "$T/waves.out" || diag "the threads target never started"
spawn_recce "$T/waves-top.out" "$T/waves-top.err" top -b -n 80 -d 0.1 --json -p "$WAVES"
TOP=$PID
wait_for 120 eval '[ "$(grep -c "^{" "$T/waves-top.out")" -ge 50 ]' ||
	diag "top did not get to 50 snapshots"
# kept_files KIND: top's descriptors of /proc/WAVES/task/TID/KIND.
kept_files() { ls -l "/proc/$TOP/fd" 2>/dev/null | grep -c "/proc/$WAVES/task/[0-9]*/$1\$"; }
STATS=$(kept_files stat) STATUSES=$(kept_files status)
SEEN=$(grep -o '"tid":[0-9]*' "$T/waves-top.out" | sort -u | wc -l)
cmp_ok "$SEEN" '>' 15 "top saw the threads come and go ($SEEN thread ids)"
cmp_ok "$STATS" '>=' 1 "it keeps the stat files of the threads it reads open ($STATS)"
cmp_ok "$STATS" '<' 8 "and closes those of the threads gone ($STATS kept of $SEEN seen)"
cmp_ok "$STATUSES" '<' 8 "and their status files ($STATUSES kept)"
wait_exit 60 "$TOP" || diag "top -n 80 did not end"
kill "$WAVES"

# --- a target exiting ---------------------------------------------------------

# The target waits on a FIFO until top has shown a snapshot of it, then
# runs half a second and exits: however long top takes to start.
# exiting_target NAME: spawns it, in $EX; go_exit NAME lets it go.
exiting_target()
{
	mkfifo "$T/$1.go"
	spawn "$T/$1.out" sh -c 'read x <"$0"; exec "$1" 0.5' "$T/$1.go" "$TARGETS/exits"
	EX=$PID
}
go_exit()
{
	echo go >"$T/$1.go"
}

exiting_target ex1
spawn_recce "$T/ex1.top" "$T/ex1.err" top -b -d 0.5 --json -p "$MIX,$EX" -n 8
TOP=$PID
wait_for 60 grep -q '^{' "$T/ex1.top" || diag "top showed no snapshot"
go_exit ex1
wait_exit 60 "$TOP" || diag "top -n 8 did not end"
RC=$WAIT_RC OUT=$T/ex1.top ERR=$T/ex1.err
is "$RC" 0 "top -p A,B exits 0 when one of them exits" || show_run
like "$(cat "$OUT")" "\"events\":\\[\"process $EX exited\"\\]" "a line says the process exited"
is "$(jrow "$OUT" 0 exits pid)" "" "its rows are gone from the last snapshot"
is "$(jrow "$OUT" 0 busy hot)" busy_spin "the other process is still watched"
is "$(grep -c '^{' "$OUT")" 8 "all 8 snapshots were shown"

exiting_target ex2
spawn_recce "$T/ex2.top" "$T/ex2.err" top -b -d 0.5 -p "$EX"
TOP=$PID
wait_for 60 grep -q '^recce top' "$T/ex2.top" || diag "top showed no snapshot"
go_exit ex2
wait_exit 60 "$TOP" || diag "top did not end"
RC=$WAIT_RC OUT=$T/ex2.top ERR=$T/ex2.err
is "$RC" 0 "top without -n ends when its only target exits" || show_run
like "$(cat "$OUT")" "^process $EX exited\$" "the text output says it exited"
like "$(cat "$ERR")" 'every watched process has exited' "and stderr says none is left"

# --- every process ------------------------------------------------------------

run "$RECCE" top -b -n 1 --json
is "$RC" 0 "top -b without -p exits 0" || show_run
is "$(jrow "$OUT" 0 "pid:$MIX" name)" topmix "rows are processes: topmix has a row"
is "$(jrow "$OUT" 0 "pid:$MIX" threads)" 4 "with its thread count (main, busy, idle, late)"
like "$(jrow "$OUT" 0 "pid:$MIX" hot)" '^(busy|late)_spin$' "and the function its threads run most"

# --- a machine too busy to read every thread on time ------------------------
# 200 threads spin on every CPU, so recce reads their /proc files late and
# unevenly: the process's CPU % still never exceeds what the CPUs can give
# (it read 1004 % on 2 CPUs when rates divided by the nominal interval).
spawn "$T/wide.out" "$TARGETS/spinner" 30 200
WIDE=$PID
wait_for 10 grep -q '^rate' "$T/wide.out" || diag "the spinner never started"
run "$RECCE" top -b -n 5 -d 0.5 --json
is "$RC" 0 "top -b beside 200 spinning threads exits 0" || show_run
MAXCPU=$(($(nproc) * 100))
for n in 2 3 4 5; do
	cpu=$(jrow "$OUT" "$n" "pid:$WIDE" cpu)
	cmp_ok "${cpu:-0}" '<=' "$MAXCPU * 1.1" \
		"snapshot $n: the spinner's CPU ($cpu %) is at most $MAXCPU % (every CPU)"
	cmp_ok "${cpu:-0}" '>' 5 "and it shows the CPU it takes"
done
kill "$WIDE"

# --- perf_event_open refused --------------------------------------------------

run "$TARGETS/deny-perf" EACCES "$RECCE" top -b -n 1 -p "$MIX"
is "$RC" 0 "top runs when perf_event_open is refused" || show_run
like "$(cat "$OUT")" '^sampling off: perf_event_open refused.*perf_event_paranoid' \
	"a line says why there are no function columns"
like "$(cat "$OUT")" "^ *$MIX +[0-9]+ busy +R +[0-9.]+ .* - +-\$" \
	"the rows keep their /proc columns, without functions"

# --- bad input ----------------------------------------------------------------

run "$RECCE" top -b -n 1 -p "$(unused_pid)"
is "$RC" 1 "a PID that does not exist: exit 1"
like "$(cat "$ERR")" 'no process with PID' "and says so"
run "$RECCE" top -b -d 0
is "$RC" 2 "-d 0 is a usage error"
run "$RECCE" top --json
is "$RC" 2 "--json without -b is a usage error"

# A process whose work runs in threads that start and end between two
# refreshes (8 ms of CPU each, as a thread per request): no listed thread
# holds their CPU time. It is the row of the process's ended threads,
# with their samples, and the targets' CPU counts it.
spawn "$T/brief.out" "$TARGETS/brief" 600 # killed below
BRIEF=$PID
wait_for 10 grep -q '^ready' "$T/brief.out" || diag "brief did not start"
run "$RECCE" top -b -n 3 -d 1 --json -p "$BRIEF"
is "$RC" 0 "brief threads: top -b -n 3 exits 0" || show_run
LAST=$(tail -n 1 "$OUT")
ENDED=$(printf '%s\n' "$LAST" | grep -o '{"pid":'"$BRIEF"',"tid":0,[^}]*}')
like "$ENDED" '"name":"\[ended threads\]","state":"X","cpu":[0-9]*[1-9][0-9]*\.[0-9]' \
	"brief threads: their CPU is the row of the ended threads" || diag "$LAST"
like "$ENDED" '"threads":0,"samples":[1-9][0-9]*,' "brief threads: with their samples" ||
	diag "$LAST"
# Each row's CPU and the targets' are rounded to a tenth apart.
ROWS=$(printf '%s\n' "$LAST" | grep -o '"cpu":[0-9.]*' | tail -n +3 | cut -d: -f2 | paste -sd+)
TARGETS_CPU=$(printf '%s\n' "$LAST" | grep -o '"targets":{[^}]*}' | grep -o '"cpu":[0-9.]*' | cut -d: -f2)
cmp_ok "$(awk "BEGIN { d = ($ROWS) - (${TARGETS_CPU:-0}); print (d < 0 ? -d : d) <= 0.2 }")" '==' 1 \
	"brief threads: the targets' CPU ($TARGETS_CPU) is their rows', the ended row's included ($ROWS)"
run "$RECCE" top -b -n 2 -d 1 -p "$BRIEF"
like "$(cat "$OUT")" " +$BRIEF +- \[ended threads\] X +[0-9.]+ " \
	"brief threads: the text row says - for its TID" || show_run

# Beside a spinning neighbour: top -p picks its targets' samples in the
# kernel, so that no other process's stack is copied and read (a busy
# machine's would crowd the targets' out of the rings).
spawn "$T/neighbour.out" "$TARGETS/spinner" 30 200
NEIGHBOUR=$PID
wait_for 10 grep -q '^rate' "$T/neighbour.out" || diag "the spinner never started"
run "$RECCE" top -b -n 2 -d 1 --json -p "$BRIEF"
is "$RC" 0 "beside a neighbour: top -b -n 2 exits 0" || show_run
LAST=$(tail -n 1 "$OUT")
like "$LAST" '"samples":[1-9][0-9]*,' "beside a neighbour: the target is sampled" || diag "$LAST"
like "$LAST" '"lost":[0-9]+,"others_dropped":0,' \
	"beside a neighbour: no sample of another process reaches recce" || diag "$LAST"
kill -TERM "$NEIGHBOUR" "$BRIEF"

done_testing
