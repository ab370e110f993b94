#!/bin/bash
# `recce trace` of USDT probes and of Python calls through CPython's:
# exact calls, in order, with file and line, paired with their ends
# (an exception, a generator's yields and resumes, recursion past the
# depth kept); a threaded server's requests under a bounded load; the probes' semaphores raised while traced and lowered
# however recce ends (SIGKILL included), in both probe mechanisms; a
# USDT argument in memory copied at the hit; libstdc++'s throw probe on
# a C++ program; and a Python without probes said so.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/python3.11 "$TARGETS/throws"
PY=/usr/bin/python3.11
SRC=tests/py/trace-target.py
FILE=$PWD/$SRC # as Python names the script it runs
line() { source_line "$SRC" "# mark: $1"; }

# The file argument as a call line shows it: 47 bytes at most, "..."
# after a longer path.
if [ "${#FILE}" -gt 47 ]; then SHOWN="\"${FILE:0:47}\"..."; else SHOWN="\"$FILE\""; fi
call() { echo "py:trace-target.$1(file=$SHOWN, line=$(line "$2"))"; }

# start: the target, ready and waiting for SIGUSR1; sets P.
start()
{
	spawn_ready "$T/target.out" "$PY" "$SRC"
	P=$PID
}

# trace ARGS...: recce trace -p $P ARGS... until the target has made its
# calls and exited; the event lines, without their time and thread, in
# $T/lines.
trace()
{
	start
	run_go "$P" trace -p "$P" "$@"
	cut -d' ' -f3- "$OUT" > "$T/lines"
}

# trace_late ARGS...: as trace, but recce is stopped from the moment it
# is tracing until the target has made its calls and exited: whatever
# recce did not copy at a hit, it can no longer read. Its messages in
# $T/late.err.
trace_late()
{
	local r
	start
	fresh "$T/late.out" "$T/late.err"
	setsid "$RECCE" trace -p "$P" "$@" >"$T/late.out" 2>"$T/late.err" </dev/null &
	r=$!
	_spawned+=("$r")
	wait_for 60 grep -q '^recce: tracing' "$T/late.err" || diag "recce did not attach: $(cat "$T/late.err")"
	kill -STOP "$r"
	kill -USR1 "$P"
	wait_exit 60 "$P" || diag "the target did not exit"
	kill -CONT "$r"
	wait_exit 60 "$r" || diag "recce did not end"
	cut -d' ' -f3- "$T/late.out" >"$T/lines"
}

# The semaphore at file address $2 of the python3.11 process $1 (not
# position-independent: its addresses are its file's).
is "$(readelf -h "$PY" | awk '/Type:/ { print $2 }')" EXEC "Debian's python3.11 is not position-independent"
sema_addr() { readelf -n "$PY" | awk -v n="$1" '$1 == "Name:" { name = $2 } $1 == "Location:" && name == n { print $6 }'; }
semaphore() { dd if="/proc/$1/mem" bs=1 skip=$(($2)) count=2 2>/dev/null | od -An -tu2 | tr -d ' '; }
ENTRY_SEMA=$(sema_addr function__entry)
LINE_SEMA=$(sema_addr line)
like "$ENTRY_SEMA $LINE_SEMA" '^0x[0-9a-f]+ 0x[0-9a-f]+$' "the probes' semaphores are found"

# 1. Calls of one function and their ends: the 20 handle() calls, each
# at its def line, no other function shown.
trace 'py:handle' --return --count 100
is "$RC" 0 "trace py:handle exits 0" || show_run
# (trace-events-bpf.t runs this file again with RECCE_NO_LINKS=1.)
MECH="BPF links"
[ -z "${RECCE_NO_LINKS:-}" ] || MECH="BPF on perf uprobe events"
like "$(cat "$ERR")" "recce: tracing Python calls in process [0-9]+ with $MECH" \
	"the first line says Python calls are traced"
like "$(cat "$ERR")" "CPython fires its function probes only in its line-tracing mode" \
	"what tracing costs a CPython is said"
like "$(cat "$ERR")" 'stopped after 20 events: the target exited' "20 events, then the target's exit"
unlike "$(cat "$ERR")" 'no pattern named' "a pattern that named calls is not told the names"
is "$(grep -cxF "$(call handle handle)" "$T/lines")" 20 "each of the 20 calls of handle(), at its line"
is "$(grep -cx 'py:trace-target.handle --> ended  ([0-9.]* [mun]*s)' "$T/lines")" 20 \
	"each with its end and duration"
is "$(wc -l < "$T/lines")" 40 "and nothing else: leaf(), called by each, is not shown"
is "$(awk 'NR % 2 == 1' "$T/lines" | sort -u | wc -l) $(awk 'NR % 2 == 0' "$T/lines" | grep -c -- '-->')" "1 20" \
	"calls and ends alternate"

# 2. A glob with a dot names module.function; without --return, calls
# only.
trace 'py:trace-target.l*' --count 100
is "$RC" 0 "trace py:trace-target.l* exits 0" || show_run
is "$(grep -cxF "$(call leaf leaf)" "$T/lines") $(wc -l < "$T/lines")" "20 20" \
	"the 20 calls of leaf(), named module.function, and nothing else"

# 3. --if on an argument and on the function's name.
trace 'py:*' --if "line == $(line leaf)" --count 100
is "$(grep -cxF "$(call leaf leaf)" "$T/lines") $(wc -l < "$T/lines")" "20 20" \
	"--if on the line selects leaf()'s 20 calls"
trace 'py:*' --if 'function == "trace-target.boom"' --count 100
is "$(cat "$T/lines")" "$(call boom boom)" "--if on the function's name selects boom()"

# 4. An exception, a generator, recursion.
trace 'py:catcher' 'py:boom' --return --count 100
is "$(sed 's/  (.*//' "$T/lines")" "$(call catcher catcher)
$(call boom boom)
py:trace-target.boom --> ended
py:trace-target.catcher --> ended" "boom() raising inside catcher(): both end, in order"
trace 'py:gen' --return --count 100
is "$(sed 's/  (.*//' "$T/lines")" "$(call gen gen)
py:trace-target.gen --> ended
$(call gen yield)
py:trace-target.gen --> ended
$(call gen yield)
py:trace-target.gen --> ended
$(call gen yield)
py:trace-target.gen --> ended" "a generator: its start, three resumes at the yield, each paired"
trace 'py:rec' --return --count 1000 --limit 0
is "$(grep -cxF "$(call rec rec)" "$T/lines")" 71 "the 71 nested calls of rec()"
is "$(grep -c 'py:trace-target.rec --> ended' "$T/lines")" 64 \
	"the 64 kept (the depth kept counts shown calls only) ended"
like "$(cat "$ERR")" 'warning: 7 calls nested deeper than 64' \
	"the 7 past it are said, their ends not invented" || show_run

# --hist: a histogram per Python function.
trace 'py:handle' 'py:leaf' --hist --count 0
is "$(grep -E '^[a-z0-9:.-]+: count ' "$OUT" | sed 's/, min .*//' | sort)" "py:trace-target.handle: count 20
py:trace-target.leaf: count 20" "--hist: one histogram per Python function, each of its 20 calls" || show_run

# --stack and --caller: the Python callers of each call, read at the
# hit, in place of the interpreter's native frame that runs them.
# stacks: per call shown in $OUT, its first caller, its Python callers
# (those in the script), its last and the count of frames not named,
# "|" between them.
stacks()
{
	awk -v file="$FILE" '
		function done() { if (have) print first "|" py "|" last "|" unknown; have = 0 }
		/^    at / { f = substr($0, 8); if (first == "") first = f; last = f
			   if (index(f, "(" file ":")) py = py (py == "" ? "" : ";") f
			   if (f == "[unknown Python code]") unknown++; next }
		{ done() }
		/^[0-9:.]+ <[0-9]+> / { have = 1; first = ""; py = ""; last = ""; unknown = 0 }
		END { done() }' "$OUT"
}
at() { echo "__main__.$1 ($FILE:$(line "$2"))"; }
# trace_held ARGS...: as trace, with a target that waits after its calls
# until recce has ended (the code objects named from its memory are
# still there when recce reads the hits), then is let go.
trace_held()
{
	spawn_ready "$T/target.out" "$PY" "$SRC" hold
	P=$PID
	run_go "$P" trace -p "$P" "$@"
	kill -USR1 "$P"
	wait_exit 60 "$P" || diag "the target did not exit"
	cut -d' ' -f3- "$OUT" > "$T/lines"
}
# A glob of the name recce record gives (module.qualname; the script is
# __main__): each call's own frame is read at the call, and names it
# (its code read while the target lives: held).
trace_held 'py:__main__.l*' --count 20
is "$RC" 0 "trace py:__main__.l* exits 0" || show_run
is "$(grep -cxF "py:__main__.leaf(file=$SHOWN, line=$(line leaf))" "$T/lines") $(wc -l < "$T/lines")" "20 20" \
	"the 20 calls of leaf(), named as recce record names them, and nothing else"
unlike "$(cat "$ERR")" 'named by their file' "each call's own frame was read"
trace_held 'py:leaf' --stack --count 20
is "$RC" 0 "trace py:leaf --stack exits 0" || show_run
want="$(at handle calls-leaf);$(at burst calls-handle);$(at '<module>' calls-burst)"
is "$(stacks | sort | uniq -c | sed 's/^ *//')" "20 $(at handle calls-leaf)|$want|_start|0" \
	"--stack: each of leaf()'s 20 calls under handle(), burst() and the module's code, at the lines that call them, then the native frames to _start" || show_run
is "$(grep -c '_PyEval_EvalFrameDefault' "$OUT")" 0 \
	"the interpreter's frames are replaced by the Python frames they ran"
trace_held 'py:gen' --stack --count 4
is "$(stacks | grep -c "|$(at burst calls-gen);$(at '<module>' calls-burst)|_start|0$")" 4 \
	"a generator's start and resumes, called from C (list()): burst() and the module's code under the C frames"
like "$(stacks | head -n 1 | cut -d'|' -f1)" '^[^_]' \
	"... and the first caller is one of those C frames, not a Python one" || show_run
trace_held 'py:leaf' 'py:gen' --caller --count 24
is "$(sed 's/.* <- //' "$T/lines" | sort | uniq -c | sed 's/^ *//')" "4 __main__.burst
20 __main__.handle" "--caller: a Python call's caller is the Python function that called it" || show_run
# --stack of a C function in a CPython: zlib's deflate, under the
# Python code that called zlib.compress.
trace_held 'deflate' --stack --count 1
is "$(stacks | cut -d'|' -f2-)" "$(at burst calls-compress);$(at '<module>' calls-burst)|_start|0" \
	"--stack of a C function (deflate) in a CPython: burst() and the module's code, at their lines, under the C frames" || show_run
# A target that exits at once: frames whose code was gone when recce read
# the call are unknown, and counted, never named wrongly.
trace 'py:leaf' --stack --count 100
unknown=$(grep -c '^    at \[unknown Python code\]$' "$OUT")
said=$(sed -n 's/^recce: warning: \([0-9]*\) Python frames of the stacks shown could not be named.*/\1/p' "$ERR")
is "${said:-0}" "$unknown" "an exited target: the frames not named are said, each of them ($unknown)" || show_run
is "$(stacks | grep -v '|[1-9][0-9]*$' | grep -vc "|$want|_start|0$")" 0 \
	"... and those named are the right ones"
# A command's first Python call comes before recce has read its
# interpreter (it reads it at that call): shown without its Python
# callers, and said.
run "$RECCE" trace 'py:*' --stack --count 1 --limit 0 -- "$PY" -c pass
is "$RC" 0 "trace py:* --stack -- python3.11 exits 0" || show_run
like "$(cat "$ERR")" 'warning: 1 Python calls were shown without their Python callers: recce had not read' \
	"a command's first call: shown without its Python callers, and said so" || show_run
# Without BPF, the interpreter's frames, and why.
RECCE_NO_BPF=1 trace_held 'py:leaf' --stack --count 20
is "$(stacks | cut -d'|' -f2 | sort -u)" "" "without BPF: no Python frames in the stacks"
like "$(cat "$ERR")" "the stacks show the interpreter's C functions, not the Python callers" \
	"and why is said" || show_run

# A threaded server under a bounded load: Debian's python3.11 -m
# http.server on loopback (a thread a request), 10 requests, each
# do_GET() shown with its end, on its own thread.
mkdir -p "$T/www" && echo hello > "$T/www/index.html"
spawn "$T/http.out" "$PY" -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www"
HTTP=$PID
ok "http.server listens" wait_for 60 grep -q 'Serving HTTP on 127.0.0.1 port [0-9]' "$T/http.out"
PORT=$(sed -n 's/.*Serving HTTP on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/http.out" | head -n 1)
spawn_recce "$T/http.trc" "$T/http.err" trace -p "$HTTP" 'py:do_GET' --return --count 0 --limit 0 \
	--time 600
R=$PID
ok "http.server: recce traces" wait_for 60 grep -q '^recce: tracing' "$T/http.err"
got=0
for i in $(seq 10); do
	curl -sf "http://127.0.0.1:$PORT/" | grep -q hello && got=$((got + 1))
done
is "$got" 10 "http.server: 10 requests served"
ok "http.server: the 10 ends shown" wait_for 60 \
	sh -c "[ \$(grep -c 'py:server.do_GET --> ended' '$T/http.trc') -ge 10 ]"
kill -INT "$R"
wait_exit 60 "$R"
is "$(grep -c 'py:server.do_GET(file="/usr/lib/python3.11/http/server.py", line=[0-9]*)$' "$T/http.trc") $(grep -c 'py:server.do_GET --> ended' "$T/http.trc")" \
	"10 10" "http.server: each request's do_GET() with its end, no other" || diag "$(cat "$T/http.trc" "$T/http.err")"
is "$(grep 'do_GET(' "$T/http.trc" | awk '{ print $2 }' | sort -u | wc -l)" 10 \
	"http.server: each on a thread of its own"
kill "$HTTP"

# 5. The breaker counts every Python call, shown or not.
trace 'py:nothing_is_called_this' --limit 10/60000 --count 100
like "$(cat "$ERR")" 'stopped after 0 events: circuit breaker tripped' \
	"calls not shown trip the breaker too" || show_run
like "$(cat "$ERR")" 'each Python call, shown or not, costs the target a trap into the kernel' \
	"and the note says why"
like "$(cat "$ERR")" "warning: no pattern named any of the [0-9]+ Python calls seen \\(such as py:[A-Za-z0-9_.-]+(, py:[A-Za-z0-9_.-]+){0,3}\\): a glob with one dot matches py:MODULE\\.FUNCTION" \
	"a pattern that named no call is told what the calls' names look like"

# 6. Semaphores: raised while traced, lowered when recce ends, even by
# SIGKILL, with links and with perf events.
for mode in links events; do
	start
	if [ $mode = events ]; then export RECCE_NO_BPF=1; fi
	spawn_recce "$T/sema.out" "$T/sema.err" trace -p "$P" 'py:handle' --time 600
	R=$PID
	unset RECCE_NO_BPF
	ok "$mode: recce traces" wait_for 60 grep -q '^recce: tracing' "$T/sema.err"
	is "$(semaphore "$P" "$ENTRY_SEMA") $(semaphore "$P" "$LINE_SEMA")" "1 1" \
		"$mode: function__entry's and line's semaphores are raised while traced"
	kill -KILL "$R"
	ok "$mode: recce is gone" wait_exit 60 "$R"
	# The kernel lowers them as it lets go of recce's probes, which it
	# may do on a work queue after the process is gone (a busy machine's
	# queue runs late).
	lowered() { [ "$(semaphore "$P" "$ENTRY_SEMA") $(semaphore "$P" "$LINE_SEMA")" = "0 0" ]; }
	wait_for 30 lowered
	is "$(semaphore "$P" "$ENTRY_SEMA") $(semaphore "$P" "$LINE_SEMA")" "0 0" \
		"$mode: both are lowered when recce is killed"
	kill -USR1 "$P"
	ok "$mode: the target runs on and exits" wait_exit 60 "$P"
	is "$WAIT_RC" 0 "$mode: with status 0"
done
trace 'py:handle' --count 3
is "$(semaphore "$P" "$ENTRY_SEMA")" "" "(the target has exited)"
start
run "$RECCE" trace -p "$P" 'py:handle' --time 1
is "$(semaphore "$P" "$ENTRY_SEMA") $(semaphore "$P" "$LINE_SEMA")" "0 0" "lowered when a trace ends"
kill -USR1 "$P"

# Without links nothing is copied at the hit: the names are read when
# recce reads the hit, and the target exits at once after its calls.
# Each handle() call is shown, or counted among the calls not named.
RECCE_NO_BPF=1 trace 'py:handle' --count 100
shown=$(grep -cxF "$(call handle handle)" "$T/lines")
unnamed=$(sed -n 's/^recce: warning: \([0-9]*\) Python calls could not be named.*/\1/p' "$ERR")
ok "perf events: the 20 calls of handle() shown ($shown) or said not named (${unnamed:-0})" \
	test $((shown + ${unnamed:-0})) -ge 20
is "$(grep -vcxF "$(call handle handle)" "$T/lines")" 0 "perf events: nothing else shown"
# recce stopped while the target makes its calls and exits: it reads
# every hit once no memory is left to read a name from, and counts each.
RECCE_NO_BPF=1 trace_late 'py:handle' --count 100
is "$(wc -l <"$T/late.out")" 0 "perf events, read late: no call shown" || diag "$(cat "$T/late.out")"
# Every Python call traps, and only its name tells whether it is
# handle()'s: the 20 are among those counted, with the target's others.
unnamed=$(sed -n 's/^recce: warning: \([0-9]*\) Python calls could not be named.*/\1/p' "$T/late.err")
cmp_ok "${unnamed:-0}" '>=' 20 "perf events, read late: every call counted as not named ($unnamed)" ||
	diag "$(cat "$T/late.err")"

# 7. A USDT probe in general: gc__start's generation is in memory
# (-4@112(%rsp)), copied at the hit with links, unknown without.
trace 'usdt:python:gc__start' --count 100
is "$(cat "$T/lines")" "python3.11:python:gc__start(arg0=1)" \
	"gc.collect(1): the probe's argument in memory, read at the hit" || show_run
like "$(cat "$ERR")" 'tracing 1 USDT probe in process' "the first line counts USDT probes"
RECCE_NO_BPF=1 trace 'usdt:python:gc__start' --count 100
is "$(cat "$T/lines")" "python3.11:python:gc__start(arg0=?)" \
	"with perf events, nothing copies it: unknown, not read late" || show_run

# Arguments named and typed by the pattern: two strings read at the
# hit, the target gone when recce reads them (stopped until it is).
trace_late 'usdt:python:function__entry(file:str,function:str,line:int)' --if 'function == "handle"' --count 100
is "$(sort -u "$T/lines")" "python3.11:python:function__entry(file=$SHOWN, function=\"handle\", line=$(line handle))" \
	"the strings named and typed, --if on one" || diag "$(cat "$T/late.err")"
is "$(wc -l < "$T/lines")" 20 "each of the 20 calls of handle()"
run "$RECCE" trace -p "$$" 'usdt:python:function__entry(file:text)'
is "$RC" 2 "an unknown type is a usage error"
like "$(cat "$ERR")" 'types str, int, uint, hex' "which lists the types"

# 8. A probe without a semaphore, in a library: libstdc++'s throw, on
# a C++ program that throws 3 times in 20 calls.
spawn_ready "$T/throws.out" "$TARGETS/throws" 20 go 7
run_go "$PID" trace -p "$PID" 'usdt:libstdcxx:throw' --count 100
is "$RC" 0 "trace usdt:libstdcxx:throw exits 0" || show_run
is "$(grep -Ec '> libstdc\+\+\.so\.6[.0-9]*:libstdcxx:throw\(arg0=0x[0-9a-f]+, arg1=0x[0-9a-f]+\)$' "$OUT")" 3 \
	"each of the 3 throws, with the probe's two arguments"
like "$(cat "$T/throws.out")" 'calls=20 thrown=3' "the program threw 3 times and ran on"

# 9. Mistakes: a probe that is not there, a Python without probes,
# --fast.
start
run "$RECCE" trace -p "$P" 'usdt:python:function_entry'
is "$RC" 1 "an unknown probe: exit 1"
is "$(cat "$ERR")" "recce: error: 'usdt:python:function_entry' matches no USDT probe in process $P (readelf -n FILE lists a file's probes)
the nearest names are: python:function__entry, python:function__return, python:audit, python:gc__done, python:gc__start" \
	"it is said, with the nearest probes"
run "$RECCE" trace -p "$P" --fast 'py:handle'
is "$RC" 2 "--fast with py: is a usage error"
like "$(cat "$ERR")" "--fast puts jumps into functions; 'py:handle' is a probe the kernel traces" \
	"which says why"
kill -USR1 "$P"
run "$RECCE" trace -p "$$" 'py:handle'
is "$RC" 1 "py: on a process without Python: exit 1"
like "$(cat "$ERR")" "runs no Python with USDT probes" "which is said"
for py in $(pyenv_pythons); do
	v=$(python_version "$py")
	spawn_ready "$T/pyenv.out" "$py" "$SRC"
	run "$RECCE" trace -p "$PID" 'py:handle'
	is "$RC" 1 "$v from pyenv: exit 1"
	is "$(cat "$ERR")" "recce: error: 'py:handle': process $PID runs no Python with USDT probes: CPython has them when built with --with-dtrace (Debian's python3 is; pyenv's builds are not); recce record, top and dump show its Python frames without them" \
		"$v from pyenv: built without probes, and what works instead"
	kill -USR1 "$PID"
	break
done

# A flight recorder of Python calls, with what each slow call's thread
# did: the two calls of handle() that sleep 0.3 s in wait_db(), asleep
# under handle and wait_db in the profile (record names the script's
# module __main__; the stacks are cut at handle, known by its file, here
# a path longer than a call's 47 bytes of it). time.sleep's 0.3 s run
# from a deadline it takes before its first call of clock_nanosleep,
# which ld.so binds then: on a busy machine that took 1.6 ms of the
# 0.3 s, so the sleep itself is not quite 0.3 s long, but all of it is
# under wait_db.
LONG=$T/a-directory-whose-name-makes-the-path-long-enough-to-be-cut
mkdir -p "$LONG"
cp tests/py/slow-target.py "$LONG/"
spawn_ready "$T/slow.out" "$PY" "$LONG/slow-target.py"
P=$PID
run_go "$P" trace -p "$P" 'py:handle' --slow 200ms --count 0 --time 60 --profile "$T/slow.pb.gz"
is "$RC" 0 "trace py:handle --slow --profile exits 0" || show_run
is "$(grep -c '^# py:slow-target.handle lasted [0-9.]* ms on thread' "$OUT")" 2 \
	"--slow 200ms: the two slow calls of ten"
SLOW_ERR=$(cat "$ERR")
run "$RECCE" report --folded --value wall "$T/slow.pb.gz"
is "$(awk '{ v = $NF; s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";")
	if (s !~ /\[off-CPU: sleep\]$/) next
	if (s ~ /^slow call [12]: [^;]*;__main__.handle;__main__.wait_db;/) n[f[1]] += v; else k-- }
	END { for (c in n) if (n[c] >= 290000000) k++; print k + 0 }' "$OUT")" 2 \
	"each asleep 0.3 s under handle;wait_db, its stacks cut at handle, no sleep elsewhere" ||
	diag "$(head -c 3000 "$OUT")" "trace said:" "$SLOW_ERR"
# Python frames merged where the interpreter ran them, its unlikely code
# (the probes' path) too: cut at handle, no stack reaches the root.
is "$(grep -cE ';(_start|__libc_start_main|start_thread|clone3?);' "$OUT")" 0 \
	"no Python frame sits above the root of a native stack" ||
	diag "$(grep -E ';(_start|__libc_start_main|start_thread|clone3?);' "$OUT" | head -n 3)"

done_testing
