#!/usr/bin/env bash
# The injector against every state a thread can be in (tests/targets/
# torture.c, which lists them): in each, `recce patch` + `--undo` and
# `recce trace --fast --return` run TORTURE_RUNS times (2 here, `make
# soak` runs 20), and recce is SIGKILLed at a random moment of each
# TORTURE_KILLS times (1 here, 20 in soak); TORTURE_MODES="lazy jobstop"
# picks states. After every state: the target runs on, every thread
# found its registers, results and errno as it left them (the target
# aborts otherwise), every result was right, no thread is left stopped,
# and its code equals its files. A target under a seccomp filter that
# would kill it for a call injection makes is refused and left alone; a
# stopped one (job control) is refused a call and still has its code
# put back.
. "$(dirname "$0")/lib.sh"

need_file "$TARGETS/torture" "$TARGETS/fixes/torture-fix.so" "$TARGETS/libs/lazy.so"
command -v strace >/dev/null || {
	echo "Bail out! strace is missing (scripts/install-deps.sh installs it)"
	exit 1
}
RUNS=${TORTURE_RUNS:-2}
KILLS=${TORTURE_KILLS:-1}
FIX="$TARGETS/fixes/torture-fix.so"
REG="$T/registry"

# last FILE KEY: KEY's value on FILE's last counters line.
last()
{
	grep calls= "$1" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# moves FILE KEY: waits until KEY of FILE's counters goes up.
moves()
{
	_file=$1 _key=$2
	_first=$(last "$1" "$2")
	wait_for 20 _moved
}
_moved()
{
	local now
	now=$(last "$_file" "$_key")
	[ "${now:-0}" -gt "${_first:-0}" ]
}

# stopped PID: the number of PID's threads stopped (t or T).
stopped()
{
	cat /proc/"$1"/task/*/stat 2>/dev/null | awk '{ sub(/^.*\) /, ""); print $1 }' |
		grep -c '[tT]'
}

# A moment 5 to 300 ms after a start.
moment() { awk -v s="$RANDOM" 'BEGIN { printf "%.3f", 0.005 + (s % 296) / 1000 }'; }

listed() { "$RECCE" patch -p "$1" --registry "$REG" --list 2>/dev/null | grep -q '^work '; }

# clean_up PID: undoes a patch a killed recce wrote down (the record
# comes before the code, so every patch that happened is there), then
# waits for the code to equal the files again (librecce-fast puts it
# back by itself when recce dies). Counts in $left what stays listed.
clean_up()
{
	if listed "$1"; then
		"$RECCE" patch -p "$1" --registry "$REG" --undo work >/dev/null 2>&1
		listed "$1" && left=$((left + 1))
	fi
	wait_for 20 python3 tests/cli/code-bytes.py "$1" --padding 512 >/dev/null
}

# jobstop: SIGSTOP and SIGCONT of the whole process, a few ms apart, all
# through the runs and kills (job control by a shell, a supervisor).
jobstops()
{
	while kill -STOP "$1" 2>/dev/null; do
		sleep "0.00$((RANDOM % 9 + 1))"
		kill -CONT "$1"
		sleep "0.0$((RANDOM % 5 + 1))"
	done
}

# refused: whether the last run was refused, as it must be, because
# the jobstop target was stopped when recce began.
refused()
{
	[ "$mode" = jobstop ] && [ "$RC" = 1 ] &&
		grep -q "process $P is stopped (job control); continue it first" "$ERR"
}

for mode in ${TORTURE_MODES:-spin libc vdso lazy read sleep sleeponly relsleep wait signals fork churn \
	seccomp-ok jobstop}; do
	case $mode in
	lazy) spawn "$T/$mode.out" env LD_BIND_NOT=1 "$TARGETS/torture" lazy "$TARGETS/libs/lazy.so" ;;
	jobstop) spawn "$T/$mode.out" "$TARGETS/torture" libc ;;
	*) spawn "$T/$mode.out" "$TARGETS/torture" "$mode" ;;
	esac
	P=$PID
	wait_for 20 grep -q ready "$T/$mode.out" || diag "$(cat "$T/$mode.out")"
	if [ "$mode" = jobstop ]; then
		jobstops "$P" &
		STOPPER=$!
	fi
	fails=0 done=0
	for i in $(seq "$RUNS"); do
		run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
		if [ "$RC" = 0 ]; then
			moves "$T/$mode.out" new || { fails=$((fails + 1)); diag "$mode: no new calls"; }
			run "$RECCE" patch -p "$P" --registry "$REG" --undo work
			[ "$RC" = 0 ] || { fails=$((fails + 1)); show_run; }
			done=$((done + 1))
		elif ! refused; then
			fails=$((fails + 1))
			show_run
		fi
		run "$RECCE" trace --fast -p "$P" work --return --count 20 --time 60
		if [ "$RC" = 0 ]; then
			[ "$(grep -c 'work(' "$OUT")" -ge 20 ] || {
				fails=$((fails + 1))
				diag "$mode: trace --fast showed fewer than 20 calls"
			}
			done=$((done + 1))
		elif ! refused; then
			fails=$((fails + 1))
			show_run
		fi
	done
	what="$mode: $RUNS runs of patch, undo and trace --fast each succeed"
	[ "$mode" = jobstop ] && what="$what or are refused as stopped"
	is "$fails" 0 "$what"
	[ "$mode" = jobstop ] && diag "jobstop: $done of $((2 * RUNS)) went through"
	left=0
	for k in $(seq "$KILLS"); do
		spawn_recce "$T/kp.out" "$T/kp.err" patch -p "$P" --registry "$REG" \
			"work=$FIX:fast_work"
		sleep "$(moment)"
		kill_quietly "$PID"
		clean_up "$P"
		spawn_recce "$T/kf.out" "$T/kf.err" trace --fast -p "$P" work --return --time 60
		sleep "$(moment)"
		kill_quietly "$PID"
		clean_up "$P"
	done
	is "$left" 0 "$mode: every patch a killed recce left is listed and undone"
	if [ "$mode" = jobstop ]; then
		kill "$STOPPER"
		wait "$STOPPER"
		kill -CONT "$P"
	fi
	# A recce killed between making its shared file and loading the
	# library leaves the file; the next trace --fast removes it.
	run "$RECCE" trace --fast -p "$P" work --count 1 --time 60
	is "$(find /dev/shm -maxdepth 1 -name "recce-fast-$P-*" | wc -l)" 0 \
		"$mode: no file of a killed recce is left in /dev/shm once the next trace ran"
	ok "$mode: the target runs on after $KILLS SIGKILLs of each" moves "$T/$mode.out" calls
	is "$(last "$T/$mode.out" bad)" 0 "$mode: every result was right"
	is "$(stopped "$P")" 0 "$mode: no thread is left stopped"
	run python3 tests/cli/code-bytes.py "$P" --padding 512
	is "$RC" 0 "$mode: its code equals its files" || show_run
	is "$(grep 'torture:' "$T/$mode.out")" "" \
		"$mode: no thread saw a register, result or errno change"
	kill_quietly "$P"
done

# A thread recce borrowed from a timed sleep (one the kernel resumes
# from its record: relsleep has no other) goes back into that very
# sleep, whatever happens to its call: recce killed while the thread is
# in it (gate-fix.so's constructor holds it there), another recce
# taking threads and leaving meanwhile, the thread left to come back by
# itself, and the next recce taking away the stub the killed one left.
spawn "$T/gate.log" env GATE_FIX="$T/g" "$TARGETS/torture" relsleep
P=$PID
wait_for 20 grep -q ready "$T/gate.log"
touch "$T/g"
spawn_recce "$T/ga.out" "$T/ga.err" patch -p "$P" --registry "$REG" \
	"work=$TARGETS/fixes/gate-fix.so:gated_work"
ok "gate: a thread taken from its sleep waits in recce's call" wait_for 20 test -e "$T/g.in"
kill_quietly "$PID"
# The next recce's dlopen waits for the loader's lock, which the thread
# in the killed one's call holds (a futex wait, system call 202).
in_lock() { grep -qs '^202 ' /proc/"$P"/task/*/syscall; }
spawn_recce "$T/gb.out" "$T/gb.err" trace --fast -p "$P" work --count 20 --time 60
TR=$PID
ok "gate: recce killed, another takes a thread meanwhile" wait_for 20 in_lock
rm "$T/g"
ok "gate: the call goes on" wait_for 20 test -e "$T/g.out"
wait "$TR"
is "$?" 0 "gate: and the other recce traces" || diag "$(cat "$T/gb.err")"
for k in calls s0 s2; do
	ok "gate: and the thread counting $k ends its sleeps again" moves "$T/gate.log" "$k"
done
run "$RECCE" trace --fast -p "$P" work --count 1 --time 60
run python3 tests/cli/code-bytes.py "$P" --padding 0
is "$RC" 0 "gate: the next recce took away the stub the killed one left" || show_run
is "$(grep 'torture:' "$T/gate.log")" "" "gate: no sleep ended early, or with EINTR"
kill_quietly "$P"

# A child forked during trace --fast is traced too, and keeps none of its
# jumps after the trace: its own watchdog puts them back, or recce does
# when the child is stopped; or its watchdog when recce is killed.
spawn "$T/ff.out" "$TARGETS/torture" forkwork
FP=$PID
wait_for 20 grep -q ready "$T/ff.out"
spawn_recce "$T/fft.out" "$T/fft.err" trace --fast -p "$FP" work --return --count 0 --time 60
TR=$PID
ok "forkwork: trace --fast runs" wait_for 20 grep -q 'work(' "$T/fft.out"
kill -USR1 "$FP"
ok "forkwork: the target forks a child" wait_for 20 grep -q '^child ' "$T/ff.out"
K1=$(sed -n 's/^child //p' "$T/ff.out")
ok "forkwork: the child's calls are traced" wait_for 20 grep -q "<$K1> .*work(" "$T/fft.out"
ok "forkwork: and their returns" wait_for 20 grep -q "<$K1> .*work.* --> " "$T/fft.out"
run python3 tests/cli/code-bytes.py "$K1"
is "$RC" 1 "forkwork: the child keeps the jumps while the trace runs"
kill -USR1 "$FP"
ok "forkwork: a second child is forked" wait_for 20 eval '[ "$(grep -c "^child " "$T/ff.out")" = 2 ]'
K2=$(sed -n 's/^child //p' "$T/ff.out" | tail -n 1)
ok "forkwork: its calls are traced" wait_for 20 grep -q "<$K2> .*work(" "$T/fft.out"
kill -STOP "$K2"
kill -INT "$TR"
wait "$TR"
is "$?" 0 "forkwork: the trace ends well"
for k in "$K1" "$K2" "$FP"; do
	run python3 tests/cli/code-bytes.py "$k"
	is "$RC" 0 "forkwork: process $k's code equals its files after the trace" || show_run
done
unlike "$(cat "$T/fft.err")" 'not traced|hold recce|could not confirm|not recorded' \
	"forkwork: recce says of no child left out, or call lost"
is "$(grep -c 'unwound' "$T/fft.out")" 0 "forkwork: no return made up as unwound"
kill -CONT "$K2"
ok "forkwork: the children run on" kill -0 "$K1" "$K2"
spawn_recce "$T/fk9.out" "$T/fk9.err" trace --fast -p "$FP" work --count 0 --time 60
TR=$PID
ok "forkwork: traced again" wait_for 20 grep -q 'work(' "$T/fk9.out"
kill -USR1 "$FP"
ok "forkwork: a third child is forked" wait_for 20 eval '[ "$(grep -c "^child " "$T/ff.out")" = 3 ]'
K3=$(sed -n 's/^child //p' "$T/ff.out" | tail -n 1)
ok "forkwork: it is traced" wait_for 20 grep -q "<$K3> .*work(" "$T/fk9.out"
kill -KILL "$TR"
wait "$TR" 2>/dev/null
ok "forkwork: recce killed, the child's watchdog puts its code back" \
	wait_for 20 python3 tests/cli/code-bytes.py "$K3"
ok "forkwork: and the target's" wait_for 20 python3 tests/cli/code-bytes.py "$FP"
ok "forkwork: the three children run on" kill -0 "$K1" "$K2" "$K3"
kill_quietly "$K1" "$K2" "$K3" "$FP"

# A child forked from a patched process has the patch too: listed there,
# undone there alone, or with its parent's.
spawn "$T/fw.out" "$TARGETS/torture" forkwork
P=$PID
wait_for 20 grep -q ready "$T/fw.out"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 0 "forkwork: patched" || show_run
kill -USR1 "$P"
ok "forkwork: a child is forked" wait_for 20 eval '[ "$(grep -c "^child " "$T/fw.out")" = 1 ]'
C2=$(sed -n 's/^child //p' "$T/fw.out" | tail -n 1)
run "$RECCE" patch -p "$C2" --registry "$REG" --list
like "$(cat "$OUT")" "^work .* active .*fast_work \\(inherited from process $P\\)" \
	"forkwork: --list in the child shows the patch it inherited"
run "$RECCE" patch -p "$C2" --registry "$REG" --undo work
is "$RC" 0 "forkwork: undone in the child" || show_run
run python3 tests/cli/code-bytes.py "$C2"
is "$RC" 0 "forkwork: the child's code equals its files" || show_run
run "$RECCE" patch -p "$P" --registry "$REG" --list
like "$(cat "$OUT")" '^work .* active' "forkwork: the parent's patch stays"
kill -USR1 "$P"
ok "forkwork: a second child is forked" wait_for 20 eval '[ "$(grep -c "^child " "$T/fw.out")" = 2 ]'
C3=$(sed -n 's/^child //p' "$T/fw.out" | tail -n 1)
run "$RECCE" patch -p "$P" --registry "$REG" --undo work
is "$RC" 0 "forkwork: undone in the parent" || show_run
like "$(cat "$OUT")" 'children +1 forked from it had the patch: undone in 1' \
	"forkwork: and in the one child that still had it"
for pid in "$P" "$C3"; do
	run python3 tests/cli/code-bytes.py "$pid"
	is "$RC" 0 "forkwork: process $pid's code equals its files" || show_run
done
ok "forkwork: the children run on" kill -0 "$C2" "$C3"
kill_quietly "$C2" "$C3" "$P"

# One recce at a time changes a process's code: a second --fast and a
# patch wait, then refuse, naming the recce that has it.
spawn "$T/lk.out" "$TARGETS/torture" read
P=$PID
wait_for 20 grep -q ready "$T/lk.out"
spawn_recce "$T/lkt.out" "$T/lkt.err" trace --fast -p "$P" work --count 0 --time 60
TR=$PID
ok "lock: a first trace --fast runs" wait_for 20 grep -q 'work(' "$T/lkt.out"
run "$RECCE" trace --fast -p "$P" now_ns --count 5 --time 60
is "$RC" 1 "lock: a second trace --fast, of another function, refuses"
like "$(cat "$ERR")" "another recce \\(process $TR\\) is changing the code of process $P" \
	"lock: naming the recce that traces"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 1 "lock: a patch refuses too"
like "$(cat "$ERR")" "another recce \\(process $TR\\) is changing the code of process $P" \
	"lock: saying why"
kill -INT "$TR"
wait "$TR"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 0 "lock: once the trace is over, the patch goes through" || show_run
run "$RECCE" patch -p "$P" --registry "$REG" --undo work
is "$RC" 0 "lock: and is undone" || show_run

# A neighbour who may not change the target's code cannot keep recce out
# by holding the lock.
make_user
printf '%s\n' 'import fcntl, os, sys, time' \
	'fd = os.open("/proc/" + sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)' \
	'fcntl.flock(fd, fcntl.LOCK_EX)' 'print("held", flush=True)' 'time.sleep(600)' \
	>"$T/bin/hold.py"
spawn "$T/hold.out" runuser -u "$U" -- python3 "$T/bin/hold.py" "$P"
ok "lock: another user holds the lock on the target" wait_for 20 grep -q held "$T/hold.out"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 0 "lock: a patch goes through all the same" || show_run
run "$RECCE" patch -p "$P" --registry "$REG" --undo work
is "$RC" 0 "lock: and is undone" || show_run
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 0 "lock: the target's code equals its files" || show_run
kill_quietly "$P"

# A process stopped by job control: a patch (a call in it) is refused
# until it is continued.
spawn "$T/js.out" "$TARGETS/torture" read
P=$PID
wait_for 20 grep -q ready "$T/js.out"
kill -STOP "$P"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 1 "stopped: patch refuses"
like "$(cat "$ERR")" "process $P is stopped \\(job control\\); continue it first" "stopped: saying so"
kill -CONT "$P"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 0 "stopped: once continued, it is patched" || show_run
# An undo, and the end of a trace --fast, write code and run none of the
# target's: they go through while it is stopped, and leave it stopped.
# all_stopped: whether every thread of P is stopped, their number in $threads.
all_stopped()
{
	threads=$(ls "/proc/$P/task" | wc -l)
	[ "$(stopped "$P")" = "$threads" ]
}
kill -STOP "$P"
ok "stopped: every thread stops" wait_for 20 all_stopped
run "$RECCE" patch -p "$P" --registry "$REG" --undo work
is "$RC" 0 "stopped: a patch is undone while the process is stopped" || show_run
run python3 tests/cli/code-bytes.py "$P" --padding 0
is "$RC" 0 "stopped: its code equals its files, no stub left" || show_run
is "$(stopped "$P")" "$threads" "stopped: and every thread is still stopped"
kill -CONT "$P"
spawn_recce "$T/jt.out" "$T/jt.err" trace --fast -p "$P" work --return --count 0 --time 60
TR=$PID
ok "stopped: trace --fast runs" wait_for 20 grep -q 'work(' "$T/jt.out"
kill -STOP "$P"
ok "stopped: every thread stops" wait_for 20 all_stopped
kill -INT "$TR"
wait "$TR"
is "$?" 0 "stopped: the trace ends cleanly while the process is stopped"
like "$(cat "$T/jt.err")" 'all probes removed' "stopped: saying its probes are removed"
run python3 tests/cli/code-bytes.py "$P" --padding 0
is "$RC" 0 "stopped: and they are: its code equals its files" || show_run
is "$(stopped "$P")" "$threads" "stopped: every thread is still stopped"
kill -CONT "$P"
ok "stopped: once continued it runs on" moves "$T/js.out" calls
kill_quietly "$P"

# A process traced by strace (or a debugger): refused, nothing changed.
spawn "$T/st.out" "$TARGETS/torture" read
P=$PID
wait_for 20 grep -q ready "$T/st.out"
spawn "$T/strace.out" strace -p "$P" -o /dev/null
traced() { grep -q 'TracerPid:[[:space:]]*[1-9]' "/proc/$P/status"; }
ok "strace: strace traces the target" wait_for 20 traced
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 1 "strace: patch refuses"
like "$(cat "$ERR")" "process $P is traced by process [0-9]+ .*detach it first" "strace: saying why"
run "$RECCE" trace --fast -p "$P" work --count 5 --time 60
is "$RC" 1 "strace: trace --fast refuses"
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 0 "strace: no byte of its code changed" || show_run
kill_quietly "$P"

# A filter that kills the process on openat, which dlopen makes.
spawn "$T/sk.out" "$TARGETS/torture" seccomp-kill
P=$PID
wait_for 20 grep -q ready "$T/sk.out"
run "$RECCE" patch -p "$P" --registry "$REG" "work=$FIX:fast_work"
is "$RC" 1 "seccomp-kill: patch refuses"
like "$(cat "$ERR")" 'seccomp filter that would kill it' "saying why"
run "$RECCE" trace --fast -p "$P" work --count 5 --time 60
is "$RC" 1 "seccomp-kill: trace --fast refuses"
like "$(cat "$ERR")" 'seccomp filter that would kill it.*trace without --fast' \
	"saying why and what to do"
ok "seccomp-kill: the target runs on" moves "$T/sk.out" calls
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 0 "seccomp-kill: no byte of its code changed" || show_run
kill_quietly "$P"

done_testing
