#!/bin/bash
# `recce record` of a CPython: every sample carries the Python frames its
# thread ran at that moment, read by a BPF program at the sample, each
# `module.qualname` at the line it runs, in place of the interpreter's
# native frame that ran them, the C code under a Python call (OpenSSL
# under hashlib) above it; off-CPU samples show the Python function that
# waits. On Debian's python3.11 (stripped), and on pyenv's 3.11, 3.12
# (layouts) and 3.13 (the offsets it publishes) where this machine has
# them, an older one said to be unread; attached (-p), launched (-- CMD)
# and system-wide (-a).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/python3.11
SRC=tests/py/record-target.py
FILE=$PWD/$SRC # as Python names a script it runs
at() { echo "$FILE:$(source_line "$SRC" "# mark: $1")"; }

# samples_of ERR: the sample count a recording's last line says.
samples_of() { sed -n 's/^recce: \([0-9]*\) samples in .*/\1/p' "$1"; }

# start_target PYTHON: the target run by PYTHON, ready; sets P, its
# version V and its threads HASHER, NAPPER and WAITER.
start_target()
{
	V=$(python_version "$1")
	spawn "$T/$V.out" "$1" "$SRC"
	P=$PID
	ok "$V: the target is ready" wait_for 60 grep -q ready "$T/$V.out"
	HASHER=$(sed -n 's/^hasher //p' "$T/$V.out")
	NAPPER=$(sed -n 's/^napper //p' "$T/$V.out")
	WAITER=$(sed -n 's/^waiter //p' "$T/$V.out")
}

# python_record: record the target for a second, attached.
python_record()
{
	local v=$V hasher=$HASHER
	run "$RECCE" record -p "$P" -d 1 -o "$T/$v.pb.gz"
	is "$RC" 0 "$v: record exits 0" || show_run
	cp "$ERR" "$T/$v.err"
	local n
	n=$(samples_of "$T/$v.err")
	cmp_ok "${n:-0}" '>' 0 "$v: samples were taken"
	# Every sample has its thread's Python frames, or is counted among
	# those shown with native frames only: its frames were not matched to
	# it (rare: one in 53 on a loaded machine), or did not fit its native
	# stack. Its stack is then native, never wrong.
	local m u
	m=$(sed -n "s/^recce: Python $v: \([0-9]*\) samples with Python frames, 0 of threads running no Python code\$/\1/p" "$T/$v.err")
	u=$(sed -n 's/^recce: warning: \([0-9]*\) samples\{0,1\} of Python processes shows\{0,1\} native frames only.*/\1/p' "$T/$v.err" |
		awk '{ n += $1 } END { print n + 0 }')
	is "$((${m:-0} + ${u:-0}))" "$n" \
		"$v: every sample has its thread's Python frames, read at the sample, or is counted without them" ||
		diag "$(cat "$T/$v.err")"
	cmp_ok "$((${u:-0} * 10))" '<' "$n" "$v: nearly all have them (${u:-0} of $n without)"
	# Every CPU is sampled and only the target's samples kept, by the
	# same program that reads the Python frames: none of hot's, spinning
	# beside it.
	is "$("$RECCE" report "$T/$v.pb.gz" --pid "$P" --format folded | awk '{ n += $NF } END { print n + 0 }')" \
		"$("$RECCE" report "$T/$v.pb.gz" --format folded | awk '{ n += $NF } END { print n + 0 }')" \
		"$v: every sample is of the target, none of the process beside it"

	"$RECCE" report "$T/$v.pb.gz" --format folded > "$T/$v.folded"
	cmp_ok "$(grep -c '_PyEval_EvalFrameDefault' "$T/$v.folded")" '<=' "${u:-0}" \
		"$v: each C call of the interpreter is replaced by the Python frames it ran (but in those counted)"
	"$RECCE" report "$T/$v.pb.gz" --tid "$P" --format folded > "$T/$v.main"
	cmp_ok "$(wc -l < "$T/$v.main")" '>' 0 "$v: the main thread was sampled"
	MAIN_RE=';__main__\.<module>;__main__\.outer;__main__\.Worker\.run;([^;]+;)+__main__\.spin( |;)'
	cmp_ok "$(grep -vEc "$MAIN_RE" "$T/$v.main")" '<=' "${u:-0}" \
		"$v: every stack of the main thread runs spin() from sorted()'s C code from Worker.run() from outer() from the script's own code (__main__.<module>, named from its globals where its function has no __module__), in that order" ||
		diag "$(grep -vE "$MAIN_RE" "$T/$v.main")"
	is "$("$RECCE" report "$T/$v.pb.gz" --tid "$P" -n 0 | awk '$4 == "__main__.spin" { print $5 }')" \
		"$(at spin)" "$v: spin() at the line it runs"
	is "$("$RECCE" report "$T/$v.pb.gz" --tid "$P" -n 0 | awk '$4 == "__main__.Worker.run" { print $5 }')" \
		"$(at run)" "$v: its caller at the line of the call"

	"$RECCE" report "$T/$v.pb.gz" --format speedscope -o "$T/$v.speedscope.json"
	python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"].split(" (pid")[0])' "$T/$v.speedscope.json" > "$T/$v.threads"
	# (The napper thread, asleep, may be sampled too on a busy machine.)
	is "$(grep -E " tid ($hasher|$P)\$" "$T/$v.threads" | sort)" \
		"$(printf '%s\n' "hasher-ü tid $hasher" "main-ü tid $P" | sort)" \
		"$v: the hasher thread named by its threading.Thread's name, the main thread by threading's" ||
		diag "$(cat "$T/$v.threads")"

	"$RECCE" report "$T/$v.pb.gz" --tid "$hasher" --format folded > "$T/$v.hasher"
	cmp_ok "$(wc -l < "$T/$v.hasher")" '>' 0 "$v: the hasher thread was sampled"
	is "$(grep -Evc ';__main__\.hasher( |;)' "$T/$v.hasher")" 0 \
		"$v: every stack of the hasher thread is under hasher(), the GIL let go or not" ||
		diag "$(grep -Ev ';__main__\.hasher( |;)' "$T/$v.hasher")"
	like "$(cat "$T/$v.hasher")" ';__main__\.hasher;([^;]*;)*SHA256_Update' \
		"$v: OpenSSL's C code under the Python call that runs it"
	if [ "${v%.*}" = 3.11 ]; then
		# Between two runs of the comprehension the thread is in hasher()
		# alone.
		cmp_ok "$(grep -c '<listcomp>' "$T/$v.hasher")" '>' 0 "$v: the comprehension was sampled"
		is "$(grep '<listcomp>' "$T/$v.hasher" | grep -Evc ';__main__\.hasher;__main__\.hasher\.<locals>\.<listcomp>( |;)')" 0 \
			"$v: the comprehension's frame named after its module, read at the sample (its function is freed at its end)" ||
			diag "$(grep '<listcomp>' "$T/$v.hasher" | grep -Ev ';__main__\.hasher;__main__\.hasher\.<locals>\.<listcomp>( |;)')"
	fi
}

# python_offcpu: where the target's threads wait, with their Python
# frames, read at each switch off the CPU.
python_offcpu()
{
	local v=$V napper=$NAPPER
	run "$RECCE" record -p "$P" -e offcpu -d 1 -o "$T/$v-off.pb.gz"
	is "$RC" 0 "$v offcpu: record exits 0" || show_run
	like "$(cat "$ERR")" "recce: Python $v: [1-9][0-9]* samples with Python frames" \
		"$v offcpu: the switches carry Python frames"
	"$RECCE" report "$T/$v-off.pb.gz" --tid "$napper" --format folded > "$T/$v-off.napper"
	cmp_ok "$(wc -l < "$T/$v-off.napper")" '>' 0 "$v offcpu: the sleeping thread was seen"
	# A thread off its CPU as the recording starts, whose stack could not
	# be read then (it was not waiting in a system call), is "before the
	# recording", with no stack at all.
	is "$(grep -v '^\[off-CPU: before the recording\] ' "$T/$v-off.napper" | grep -vc ';__main__\.napper;')" 0 \
		"$v offcpu: every wait of the sleeping thread is in napper(), found waiting as the recording starts or switched off its CPU since" ||
		diag "the others: $(grep -v '^\[off-CPU: before the recording\] ' "$T/$v-off.napper" | grep -v ';__main__\.napper;' | head -n 3)"
	like "$(cat "$T/$v-off.napper")" ';__main__\.napper;(.*;)?\[off-CPU: sleep\] ' \
		"$v offcpu: ... asleep"
	is "$("$RECCE" report "$T/$v-off.pb.gz" --tid "$napper" -n 0 | awk '$4 == "__main__.napper" { print $5 }')" \
		"$(at nap)" "$v offcpu: napper() at the line that sleeps"
	# A thread that waits from start to end: seen as the recording
	# starts, never at a sample of its own, and named then.
	"$RECCE" report "$T/$v-off.pb.gz" --format speedscope -o "$T/$v-off.speedscope.json"
	is "$(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"].split(" (pid")[0])' "$T/$v-off.speedscope.json" | grep " tid $WAITER\$")" \
		"waiter-ü tid $WAITER" "$v offcpu: a thread off its CPU from start to end named by its Python name" ||
		diag "$(cat "$T/$v-off.speedscope.json" | head -c 600)"
	like "$("$RECCE" report "$T/$v-off.pb.gz" --tid "$WAITER" --format folded)" ';__main__\.waiter;' \
		"$v offcpu: its wait under waiter()"
}

spawn "$T/neighbour.out" "$TARGETS/hot" # spins beside the first recording
NEIGHBOUR=$PID
start_target /usr/bin/python3.11
python_record
kill "$NEIGHBOUR"
python_offcpu

# The interpreter's unlikely code: while Python calls are traced, CPython
# runs each line through its tracing path, which GCC moved out of
# _PyEval_EvalFrameDefault into its cold part (named
# _PyEval_EvalFrameDefault.cold in the stripped python3.11, after the
# function that jumps into it). Samples there get their Python frames in
# place of that part as well: never above the root of the native stack.
spawn "$T/traced.err" "$RECCE" trace -p "$P" 'py:nothing_is_called_this' --time 120
TRACER=$PID
ok "3.11 traced: the trace is on" wait_for 60 grep -q '^recce: tracing' "$T/traced.err"
run "$RECCE" record -p "$P" -F 499 -d 1 -o "$T/traced.pb.gz"
is "$RC" 0 "3.11 traced: record exits 0" || show_run
kill -INT "$TRACER"
"$RECCE" report "$T/traced.pb.gz" --tid "$P" --format folded >"$T/traced.main"
cmp_ok "$(grep -c ';__main__\.spin;' "$T/traced.main")" '>' 0 \
	"3.11 traced: samples in the native code under spin() (its tracing path)" || diag "$(cat "$T/traced.main")"
is "$(grep -c '_PyEval_EvalFrameDefault' "$T/traced.main")" 0 \
	"3.11 traced: every C call of the interpreter replaced by its Python frames, its cold part too" ||
	diag "$(grep '_PyEval_EvalFrameDefault' "$T/traced.main" | head -n 3)"
is "$(grep -vEc '^_start;([^;]+;)+__main__\.outer;__main__\.Worker\.run;([^;]+;)+__main__\.spin( |;)' "$T/traced.main")" 0 \
	"3.11 traced: every stack of the main thread runs spin() from sorted() from Worker.run() from outer(), all from the program's root" ||
	diag "$(grep -vE '^_start;([^;]+;)+__main__\.outer;__main__\.Worker\.run;([^;]+;)+__main__\.spin( |;)' "$T/traced.main" | head -n 3)"
kill "$P"

# Shares: a() runs unit() once for each three times b() does, so a
# quarter of the CPU time under either is a()'s, whatever the load (the
# samples count CPU time). 2 s at 999 Hz: about 2,000 samples, the
# share's spread a point. A unit lasts some milliseconds, many sampling
# periods: a loop much shorter than the period would be seen at a few
# phases of it only (31% for a() at 3,000 iterations).
run "$RECCE" record -F 999 -d 2 -o "$T/shares.pb.gz" -- /usr/bin/python3.11 -c '
def unit():
    for i in range(200000):
        pass

def a():
    unit()

def b():
    unit()
    unit()
    unit()

while True:
    a()
    b()'
is "$RC" 0 "shares: record exits 0" || show_run
"$RECCE" report "$T/shares.pb.gz" --format folded > "$T/shares.folded"
A=$(folded_count "$(cat "$T/shares.folded")" ';__main__\.a(;|$)')
B=$(folded_count "$(cat "$T/shares.folded")" ';__main__\.b(;|$)')
SHARE=$(awk -v a="$A" -v b="$B" 'BEGIN { printf "%.1f", a + b ? 100 * a / (a + b) : 0 }')
N=$(((A + B) / 1001001)) # the folded counts are CPU time: 1,001,001 ns a sample
share_near "$SHARE" 25 "$N" "shares: a() has 25% of the $N samples under a() and b() ($SHARE%)"
is "$(grep -E ';__main__\.(a|b);' "$T/shares.folded" | grep -Evc ';__main__\.<module>;__main__\.(a|b);')" 0 \
	"shares: a() and b() under the command's own code, named __main__.<module> at the sample (3.11 gives it no __module__)" ||
	diag "$(grep -E ';__main__\.(a|b);' "$T/shares.folded" | grep -Ev ';__main__\.<module>;__main__\.(a|b);' | head -5)"
# A code object freed and another made in its place, both module code
# ("<module>", one interned string), named by the globals each ran in:
# late's never under early's name (tests/py/code-reuse.py).
run "$RECCE" record -F 999 -o "$T/reuse.pb.gz" -- /usr/bin/python3.11 tests/py/code-reuse.py
is "$RC" 0 "code reuse: record exits 0" || show_run
F=$(folded "$T/reuse.pb.gz")
cmp_ok "$(folded_count "$F" ';__main__\.phase_one;(.*;)?early\.<module>(;|$)')" '>' 0 \
	"code reuse: early's module code sampled"
cmp_ok "$(folded_count "$F" ';__main__\.phase_two;(.*;)?late\.<module>(;|$)')" '>' 0 \
	"code reuse: late's module code sampled, under its own name"
is "$(folded_count "$F" ';__main__\.phase_two;(.*;)?early\.<module>(;|$)')" 0 \
	"code reuse: none of late's samples named after the code that was there before" ||
	diag "$(folded_top "$F" 3)"

# The loop is two lines: FOR_ITER and STORE_FAST at 3, JUMP_BACKWARD at
# 4. Which has more self time varies between runs of the interpreter
# (from 42% and 7% to 27% and 20% under load here), but every sample of
# unit() is at one of them: none at its def, none elsewhere.
is "$("$RECCE" report "$T/shares.pb.gz" --lines -n 0 | awk '$5 == "__main__.unit" { print $4 }' |
	sort | tr '\n' ' ')" "<string>:3 <string>:4 " "shares: unit()'s samples are at the two lines of its loop"
like "$("$RECCE" report "$T/shares.pb.gz" -n 0 | awk '$4 == "__main__.unit" { print $5 }')" '^<string>:[34]$' \
	"shares: its row shows one of them"

# Module code made while recording: each run of the loop compiles the
# module anew and runs it with globals of its own, named "burner" (both
# kept, as a module's are, each code object at its own address). 3.11
# gives module code no __module__: the frame program reads the frame's
# globals at the sample, for recce to name it from their __name__; most
# of these code objects are met first there.
run "$RECCE" record -F 999 -d 2 -o "$T/burner.pb.gz" -- /usr/bin/python3.11 -c '
SRC = "x = 0\nfor i in range(300000):\n    x += i\n"
kept = []
while True:
    kept.append((compile(SRC, "<burner>", "exec"), {"__name__": "burner"}))
    exec(*kept[-1])'
is "$RC" 0 "module code: record exits 0" || show_run
"$RECCE" report "$T/burner.pb.gz" --format folded > "$T/burner.folded"
cmp_ok "$(grep -c ';burner\.<module>' "$T/burner.folded")" '>' 0 \
	"module code: the code made while recording named burner.<module>, from its globals"
is "$(grep -c ';<module>' "$T/burner.folded")" 0 \
	"module code: none named <module> alone" || diag "$(grep ';<module>' "$T/burner.folded" | head -3)"

# pyenv's builds where this machine has them (not a Debian package: none
# is required): 3.11 to 3.13 read; an older one said to be unread.
tried=""
mapfile -t PYENV < <(pyenv_pythons)
for py in "${PYENV[@]}"; do
	v=$(python_version "$py")
	tried="$tried $v"
	case "$v" in
	3.11.* | 3.12.* | 3.13.*)
		start_target "$py"
		python_record
		python_offcpu
		kill "$P"
		;;
	3.10.*)
		spawn "$T/$v.out" "$py" -c 'print("ready", flush=True)
while True: pass'
		P=$PID
		ok "$v: the target is ready" wait_for 60 grep -q ready "$T/$v.out"
		run "$RECCE" record -p "$P" -d 0.5 -o "$T/$v.pb.gz"
		is "$RC" 0 "$v: record exits 0" || show_run
		like "$(cat "$ERR")" 'recce: no target is a CPython of a version recce reads at sample time \(3\.11 to 3\.13\)' \
			"$v: a version recce does not read is said"
		kill "$P"
		;;
	esac
done
diag "pyenv's CPython builds tried:${tried:- none on this machine}"

# Launched: the samples before recce names the process a CPython (its
# first read, just after the exec) keep their native frames, counted.
run "$RECCE" record -o "$T/cmd.pb.gz" -- /usr/bin/python3.11 -c '
import threading
def busy():
    s = 0
    for i in range(20000000):
        s += i
t = threading.Thread(target=busy, name="busy-ü")
t.start()
t.join()'
is "$RC" 0 "-- CMD: record exits 0" || show_run
n=$(samples_of "$ERR")
with=$(sed -n 's/^recce: Python [0-9.]*: \([0-9]*\) samples with Python frames, \([0-9]*\) of .*/\1 \2/p' "$ERR")
without=$(sed -n 's/^recce: warning: \([0-9]*\) samples\{0,1\} of Python processes shows\{0,1\} native frames only.*/\1/p' "$ERR")
is "$(( ${with% *} + ${with#* } + ${without:-0} ))" "$n" \
	"-- CMD: samples with Python frames, of no Python code and without them add up to all"
cmp_ok "${with% *}" '>' 0 "-- CMD: the command's samples have its Python frames"
like "$("$RECCE" report "$T/cmd.pb.gz" --format folded)" ';threading\.Thread\.run;([^;]+;)*__main__\.busy( |;)' \
	"-- CMD: its functions named"
"$RECCE" report "$T/cmd.pb.gz" --format speedscope -o "$T/cmd.speedscope.json"
like "$(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"])' "$T/cmd.speedscope.json")" '^busy-ü tid [0-9]+ ' \
	"-- CMD: the thread it starts named by its Python name, found at its samples"

# A thread sampled before its Thread's name can be read (its chain holds
# Thread._bootstrap but not yet _bootstrap_inner, as a thread just
# started does, here for 0.3 s of its CPU) is named once it can be.
run "$RECCE" record -o "$T/late.pb.gz" -- /usr/bin/python3.11 -c '
import threading, time
inner = threading.Thread._bootstrap_inner
def slow_start(self):
    end = time.thread_time() + 0.3
    while time.thread_time() < end:
        pass
    inner(self)
threading.Thread._bootstrap_inner = slow_start
def busy():
    end = time.thread_time() + 0.5
    while time.thread_time() < end:
        pass
t = threading.Thread(target=busy, name="late-name")
t.start()
t.join()'
is "$RC" 0 "a thread named late: record exits 0" || show_run
"$RECCE" report "$T/late.pb.gz" --format speedscope -o "$T/late.speedscope.json"
like "$(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"])' "$T/late.speedscope.json")" '^late-name tid [0-9]+ ' \
	"a thread whose name could not be read at its first samples is named by it"

# System-wide: a CPython among every process.
start_target /usr/bin/python3.11
run "$RECCE" record -a -d 1 -o "$T/all.pb.gz"
is "$RC" 0 "-a: record exits 0" || show_run
# (The line names the first CPython sampled: another on the machine may
# be; the stacks below are the target's own.)
like "$(cat "$ERR")" 'recce: Python 3\.[0-9]+\.[0-9]+: [1-9][0-9]* samples with Python frames' \
	"-a: the CPython found among every process"
"$RECCE" report "$T/all.pb.gz" --tid "$P" --format folded > "$T/all.main"
cmp_ok "$(wc -l < "$T/all.main")" '>' 0 "-a: its main thread was sampled"
is "$(grep -vEc ';__main__\.outer;__main__\.Worker\.run;([^;]+;)*__main__\.spin( |;)' "$T/all.main")" 0 \
	"-a: every stack of its main thread has its Python frames"
kill "$P"

done_testing
