#!/bin/bash
# Bad input: each case gets one clear message and the documented status (1
# runtime error, 2 usage error), never a crash, a hang or a half-written file.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/deny-perf"

# expect STATUS DESC: checks the last run's status; a crash (>= 128) or a
# timeout shows in the diagnostics.
expect()
{
	is "$RC" "$1" "$2" || show_run
}

# one_message DESC: stderr has a message, and a short one (no dump, no
# repeated errors).
one_message()
{
	local n
	n=$(grep -c . "$ERR")
	cmp_ok "$n" '>=' 1 "$1: a message on stderr"
	cmp_ok "$n" '<=' 3 "$1: a short one ($n lines)" || diag "$(head -n 10 "$ERR")"
}

# left_running SECONDS: a hot started with this unique argument still runs.
left_running()
{
	pgrep -f -- "$TARGETS/hot $1\$" >/dev/null
}

# --- record: which process --------------------------------------------------

BAD=$(unused_pid)
run "$RECCE" record -p "$BAD" -d 1 -o "$T/x.pb.gz"
expect 1 "record -p UNKNOWN_PID: status 1"
like "$(cat "$ERR")" "$BAD" "the message names PID $BAD"
like "$(cat "$ERR")" '[Nn]o (such )?process|not (found|running)|does not exist|exited' "and says there is no such process"
ok "no profile is written" test ! -e "$T/x.pb.gz"

run "$RECCE" record -p "$$,$BAD" -d 1 -o "$T/x.pb.gz"
expect 1 "record -p GOOD,UNKNOWN: status 1"
like "$(cat "$ERR")" "$BAD" "the message names the unknown PID $BAD"

mkdir "$T/plain-dir"
run "$RECCE" record --cgroup "$T/plain-dir" -d 1 -o "$T/x.pb.gz"
expect 1 "record --cgroup of a directory that is no cgroup: status 1"
like "$(cat "$ERR")" "'$T/plain-dir' is a directory, but not of a cgroup file system" \
	"and says so, not 'Bad file descriptor'"

# Selectors: one that matches nothing is an error of this moment, one
# with nothing to match a usage error; a good one says what it chose.
run "$RECCE" record -p comm:no-such-program-here -d 1 -o "$T/x.pb.gz"
expect 1 "record -p comm:NAME of nothing running: status 1"
like "$(cat "$ERR")" 'no running process matches comm:no-such-program-here' "and says so"
ok "no profile is written for it" test ! -e "$T/x.pb.gz"
run "$RECCE" record -p exe: -d 1 -o "$T/x.pb.gz"
expect 2 "record -p exe: (no pattern): status 2"
like "$(cat "$ERR")" 'a selector is comm:NAME or exe:PATH' "and says what a selector is"
spawn "$T/sel.out" sleep 600
SEL=$PID
run "$RECCE" trace -p "exe:*/sl?ep" --count 1 --time 1 nanosleep_not_there_at_all
like "$(cat "$ERR")" "recce: exe:\\*/sl\\?ep is process(es)? ([0-9]+, )*$SEL(,|\$)" \
	"exe:PATTERN names the processes it chose, this sleep among them"
kill "$SEL"

# A process that exits without running on a CPU (during the attach, or
# while idle): an empty profile, said so, status 1.
# It ends once recce says it records (a shell that waits on a FIFO).
# Sampled per thread: its few ms of waking up and exiting are then never
# sampled (every CPU sampled, one of them may be).
mkfifo "$T/idle"
sh -c 'read x <"$0"' "$T/idle" &
SLEEPER=$!
spawn_recce "$T/idle.out" "$T/idle.err" record -p "$SLEEPER" --per-thread -d 60 -o "$T/empty.pb.gz"
recording "$T/idle.err" || diag "recce never said it records"
echo >"$T/idle"
wait "$SLEEPER"
REC=$PID
if wait_exit 60 "$REC"; then RC=$WAIT_RC; else RC="still running 60 s after"; fi
OUT=$T/idle.out
ERR=$T/idle.err
expect 1 "record -p of a process that exits idle: status 1"
# A zombie until this shell reaps it, which on a loaded machine may come
# after recce looked.
like "$(cat "$ERR")" "process $SLEEPER exited( \\(it is a zombie\\))? without running on a CPU while recorded: the profile is empty" \
	"saying it exited and the profile is empty"
wait "$SLEEPER" 2>/dev/null

for arg in abc 0 -5 1,,2; do
	run "$RECCE" record -p "$arg" -d 1 -o "$T/x.pb.gz"
	expect 2 "record -p '$arg': usage error"
done

run "$RECCE" record -d 1 -o "$T/x.pb.gz"
expect 2 "record without -p or a command: usage error"
one_message "record without a target"

# A command beside -p times the recording only after -- (record-beside.t);
# a word after -p without it is taken for a mistake.
run "$RECCE" record -p "$$" -d 1 -o "$T/x.pb.gz" "$TARGETS/hot" 1
expect 2 "record with -p and a command not after --: usage error"
one_message "record -p PID CMD"

# --- record: options --------------------------------------------------------

MAX=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
run "$RECCE" record -F 0 -d 1 -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
expect 2 "record -F 0: usage error"
like "$(cat "$ERR")" '-F' "the message is about -F"
run "$RECCE" record -F $((MAX + 1)) -d 1 -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
expect 2 "record -F $((MAX + 1)) (above perf_event_max_sample_rate): usage error"
like "$(cat "$ERR")" "$MAX|perf_event_max_sample_rate" "the message gives the limit ($MAX)"
for arg in abc -10 99x; do
	run "$RECCE" record -F "$arg" -d 1 -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
	expect 2 "record -F '$arg': usage error"
done
for arg in abc -1 ''; do
	run "$RECCE" record -d "$arg" -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
	expect 2 "record -d '$arg': usage error"
done
for arg in foo dwarf,abc dwarf,0 fp,100; do
	run "$RECCE" record --call-graph "$arg" -d 1 -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
	expect 2 "record --call-graph '$arg': usage error"
done
run "$RECCE" record --bogus-option -d 1 -- "$TARGETS/hot" 1
expect 2 "record --bogus-option: usage error"
like "$(cat "$ERR")" 'bogus-option' "the message names the option"
run "$RECCE" record -o
expect 2 "record -o without its argument: usage error"
ok "no stray profile was written by the usage errors" test ! -e "$T/x.pb.gz"

# --- record: output path ----------------------------------------------------

# Refused before recording: long before -d 5 elapses, and the target is
# left alone.
spawn "$T/hot.out" "$TARGETS/hot"
HOT=$PID
run "$RECCE" record -p "$HOT" -d 5 -o /nonexistent-dir/x.pb.gz
expect 1 "record -o /nonexistent-dir/x.pb.gz: status 1"
like "$(cat "$ERR")" '/nonexistent-dir/x.pb.gz' "the message names the path"
unlike "$(cat "$ERR")" 'recording|samples in' "the path is refused before recording (${ELAPSED}s, -d 5)"
ok "the target still runs" kill -0 "$HOT"

run "$RECCE" record -d 5 -o /nonexistent-dir/x.pb.gz -- "$TARGETS/hot" 5.001
expect 1 "record -o /nonexistent-dir/x.pb.gz -- CMD: status 1"
unlike "$(cat "$OUT")" 'hot: checksum' "refused before the command runs its 5 s (${ELAPSED}s)"
ok "the command is not left running" eval '! left_running 5.001'


run "$RECCE" record -p "$HOT" -d 5 -o "$T"
expect 1 "record -o DIRECTORY: status 1"
unlike "$(cat "$ERR")" 'recording|samples in' "refused before recording (${ELAPSED}s)"

# --- record: a refused perf_event_open ---------------------------------------

# The kernel refuses perf_event_open under a strict kernel.perf_event_paranoid
# or without CAP_PERFMON; deny-perf makes it refuse (EACCES, then EPERM)
# for recce alone, without touching the system's settings.
for e in EACCES EPERM; do
	run "$TARGETS/deny-perf" "$e" "$RECCE" record -d 2 -o "$T/denied.pb.gz" -- "$TARGETS/hot" 5.002
	expect 1 "perf_event_open refused with $e: status 1"
	ok "the command is not left running ($e)" eval '! left_running 5.002'
	like "$(cat "$ERR")" 'perf_event_paranoid' "the message names kernel.perf_event_paranoid ($e)"
	like "$(cat "$ERR")" 'CAP_PERFMON' "and CAP_PERFMON ($e)"
	unlike "$(cat "$OUT")" 'hot: checksum' "it gives up at once: the command never ran its 5 s (${ELAPSED}s)"
	ok "no profile is written ($e)" test ! -e "$T/denied.pb.gz"

	run "$TARGETS/deny-perf" "$e" "$RECCE" record -p "$HOT" -d 2 -o "$T/denied.pb.gz"
	expect 1 "record -p refused with $e: status 1"
	like "$(cat "$ERR")" 'perf_event_paranoid.*|CAP_PERFMON' "the message says what to do ($e, -p)"
	ok "the target still runs" kill -0 "$HOT"
done

# An unprivileged user may not profile another user's process.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -m 0777 "$T/nobody"
	chmod o+x "$T"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RECCE" record -p "$HOT" -d 2 -o "$T/nobody/x.pb.gz"
	expect 1 "an unprivileged user recording root's process: status 1"
	like "$(cat "$ERR")" 'CAP_PERFMON|perf_event_paranoid|permission|not allowed' \
		"the message says it is a matter of permission"
	# Lowering kernel.perf_event_paranoid does not help here (the kernel
	# checks the right to ptrace first): the message must say what does.
	like "$(cat "$ERR")" 'ptrace|another user|same user|owned by' \
		"and that another user's process needs the right to ptrace it"
	ok "the target still runs" kill -0 "$HOT"
else
	skip 4 "needs root and setpriv to run recce as another user"
fi
STATE=$(awk '{ print $3 }' "/proc/$HOT/stat" 2>/dev/null)
like "$STATE" '^[RS]$' "after all this the target is not stopped (state $STATE)"

# --- report: bad files -----------------------------------------------------

# A real profile to cut.
run "$RECCE" record -o "$T/good.pb.gz" -- "$TARGETS/hot" 0.5
is "$RC" 0 "a real profile to corrupt is recorded" || show_run

# report_fails FILE DESC: status exactly 1 (not a signal), one message.
report_fails()
{
	run "$RECCE" report "$1"
	is "$RC" 1 "report of $2: status 1" || show_run
	one_message "report of $2"
	run "$RECCE" report --folded "$1"
	is "$RC" 1 "report --folded of $2: status 1" || show_run
}

run "$RECCE" report "$T/missing.pb.gz"
expect 1 "report of a missing file: status 1"
like "$(cat "$ERR")" 'missing\.pb\.gz' "the message names the file"

SIZE=$(stat -c %s "$T/good.pb.gz")
for n in 0 2 10 $((SIZE / 2)) $((SIZE - 9)) $((SIZE - 1)); do
	head -c "$n" "$T/good.pb.gz" >"$T/cut-$n.pb.gz"
	report_fails "$T/cut-$n.pb.gz" "a profile cut to $n of $SIZE bytes"
done
like "$(cat "$ERR")" "cut-$((SIZE - 1))" "the message names the file"

# Valid gzip around a cut protobuf message. A message cut between two
# fields is a shorter message that is still valid, so the cut goes inside
# a string of the string table: its declared length then overruns the end.
gzip -dc "$T/good.pb.gz" >"$T/raw.pb"
AT=$(grep -a -b -o burn_cpu "$T/raw.pb" | head -n 1 | cut -d: -f1)
like "$AT" '^[0-9]+$' "the raw profile holds the string burn_cpu"
head -c $((AT + 4)) "$T/raw.pb" | gzip >"$T/cutmsg.pb.gz"
report_fails "$T/cutmsg.pb.gz" "a gzip file holding a cut protobuf message"

head -c 4096 /dev/urandom >"$T/random.bin"
report_fails "$T/random.bin" "random bytes"
head -c 4096 /dev/urandom | gzip >"$T/random.gz"
report_fails "$T/random.gz" "gzip of random bytes"
printf 'this is not a profile\n' | gzip >"$T/text.gz"
report_fails "$T/text.gz" "gzip of text"

# Valid protobuf whose references point nowhere (a location, a function,
# a string, a mapping that does not exist; too many values).
for kind in bad-location bad-function bad-string bad-values bad-mapping; do
	perl tests/cli/mkpprof.pl "$kind" >"$T/$kind.pb.gz"
	report_fails "$T/$kind.pb.gz" "a profile with a $kind reference"
	like "$(cat "$ERR")" "$kind\.pb\.gz" "the message names the file"
done

run "$RECCE" report "$T"
expect 1 "report of a directory: status 1"

# Two samples of INT64_MAX nanoseconds: sums stick at the largest value
# instead of wrapping to a negative total.
perl tests/cli/mkpprof.pl huge >"$T/huge.pb.gz"
run "$RECCE" report "$T/huge.pb.gz"
expect 0 "report of a profile whose values overflow a sum: status 0"
like "$(head -1 "$OUT")" '^total: 9223372036\.85s cpu$' "the total is the largest value, not negative"
run "$RECCE" report --folded "$T/huge.pb.gz"
unlike "$(cat "$OUT")" ' -[0-9]' "no folded line has a negative sum"

# A device is refused at once, not read until the size cap.
run "$RECCE" report /dev/zero
expect 1 "report of /dev/zero: status 1"
like "$(cat "$ERR")" "'/dev/zero' is not a valid pprof profile: it is a device" "at once, saying why"

# A gzip bomb: 5 MB that inflate to 1.1 GiB of zeros. Refused once the
# cap (1 GiB) is reached, with a message, not read until memory runs out.
head -c 1100M /dev/zero | gzip -1 >"$T/bomb.pb.gz"
run "$RECCE" report "$T/bomb.pb.gz"
expect 1 "report of a gzip bomb: status 1"
like "$(cat "$ERR")" "bomb\.pb\.gz' is refused: it inflates to more than 1024 MiB" \
	"saying that it inflates past the cap"
rm -f "$T/bomb.pb.gz"

# Small files that hold millions of elements. More samples than recce
# reads: refused by their count before any is decoded.
perl tests/cli/mkpprof.pl too-many-samples >"$T/many.pb.gz"
run "$RECCE" report "$T/many.pb.gz"
expect 1 "report of 8 KB holding 4,194,305 samples: status 1"
like "$(cat "$ERR")" 'it has 4194305 samples, more than recce reads \(4194304\)' \
	"the message says how many and the limit"
# Four million samples of 1 ns (24 MB inflated) are read, in memory that
# follows what they hold: under 700 MB of address space, where decoding
# one protobuf object per sample needed over 1 GB. (Not under ASan, which
# reserves terabytes of address space for itself.)
perl tests/cli/mkpprof.pl many-samples >"$T/many.pb.gz"
(
	[ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 700000
	exec "$RECCE" report -n 3 "$T/many.pb.gz"
) >"$T/many.out" 2>"$T/many.err"
is "$?" 0 "4 million samples are read within 700 MB" || diag "$(cat "$T/many.err")"
is "$(head -1 "$T/many.out")" 'total: 354.00ms cpu' "and every one counts in the total (350 ms + 4 ms)"
rm -f "$T/many.pb.gz"

# --- report: options --------------------------------------------------------

for re in '(' '[a-' '*x'; do
	run "$RECCE" report --focus "$re" "$T/good.pb.gz"
	expect 2 "report --focus '$re' (a bad regex): usage error"
	run "$RECCE" report --ignore "$re" "$T/good.pb.gz"
	expect 2 "report --ignore '$re' (a bad regex): usage error"
done
like "$(cat "$ERR")" '--ignore|\*x' "the message names the option or the regex"
for args in "-n abc" "-n -1" "--tid abc" "--pid x1" "--value bogus" "--bogus-option"; do
	# shellcheck disable=SC2086
	run "$RECCE" report $args "$T/good.pb.gz"
	expect 2 "report $args: usage error"
done
run "$RECCE" report --flame /nonexistent-dir/f.svg "$T/good.pb.gz"
expect 1 "report --flame /nonexistent-dir/f.svg: status 1"
run "$RECCE" report -o /nonexistent-dir/r.txt "$T/good.pb.gz"
expect 1 "report -o /nonexistent-dir/r.txt: status 1"

# --- the program -----------------------------------------------------------

run "$RECCE" frobnicate
expect 2 "an unknown command: usage error"
like "$(cat "$ERR")" 'frobnicate' "the message names the command"
run "$RECCE"
expect 2 "no command: usage error"

done_testing
