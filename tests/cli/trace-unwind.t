#!/bin/bash
# `recce trace --return` on programs that leave functions without
# returning and on Go, whose runtime checks return addresses: the target
# runs to its end with the same output and exit status as untraced, and
# every call is paired exactly with its return or shown "(unwound)".
# Returns are probed on the functions' exits, so nothing on the target's
# stack changes; RECCE_RETURN_URETPROBE=1 (the older method) kills the
# C++ target, which the first test shows is what the default avoids.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/throws" "$TARGETS/jumps" "$TARGETS/tails"

# trace_to_end NAME TARGET ARGS... -- PATTERNS...: runs the target once
# untraced (its output in $T/NAME.want), then again under recce trace
# --return until it exits; its output in $T/NAME.got, its status in
# $WAIT_RC, recce's events in $T/NAME.trc.
trace_to_end()
{
	local name=$1 args=() pats=()
	shift
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	pats=("$@")
	"${args[@]/#@GO@/0}" >"$T/$name.want" 2>&1
	local targs=("${args[@]/#@GO@/go}")
	spawn_ready "$T/$name.got" "${targs[@]}"
	local target=$PID
	run_go "$target" trace -p "$target" "${pats[@]}" --return --count 0 --time 60 \
		--limit 100000/1000
	cp "$OUT" "$T/$name.trc"
	wait_exit 60 "$target" || WAIT_RC=running
	sed -i '/: ready$/d' "$T/$name.got"
}

# C++: fill_map throws on i = 0, 7, ..., 196 (29 of 200 calls); the
# exception passes through restock and is caught in main.
trace_to_end cxx "$TARGETS/throws" 200 @GO@ 7 -- '*fill_map*' '*restock*'
is "$RC" 0 "trace of a throwing C++ function exits 0" || show_run
is "$WAIT_RC" 0 "the C++ target exits 0"
is "$(cat "$T/cxx.got")" "$(cat "$T/cxx.want")" "with the same output as untraced"
is "$(grep -c 'fill_map[^ ]*(i=' "$T/cxx.trc")" 200 "every call of fill_map is traced"
is "$(grep -c 'fill_map[^ ]* --> [0-9]' "$T/cxx.trc")" 171 "171 return with their value"
is "$(grep -c 'fill_map[^ ]* --> (unwound)' "$T/cxx.trc")" 29 "29 are shown unwound"
is "$(grep -c 'restock[^ ]* --> (unwound)' "$T/cxx.trc")" 29 \
	"the exception unwinds their caller too"
is "$(grep -c 'restock[^ ]* --> [0-9]' "$T/cxx.trc")" 171 "whose other calls return"
like "$(grep -m1 'fill_map[^ ]*(i=1,' -A1 "$T/cxx.trc" | tail -1)" 'fill_map[^ ]* --> 4  \(' \
	"a long return shows its value (3 * 1 + 1)"

# The last call threw, and nothing came after it on its thread: when the
# trace ends with the program, that call still gets its end.
trace_to_end cxx-last "$TARGETS/throws" 8 @GO@ 7 -- '*fill_map*' '*restock*'
is "$WAIT_RC" 0 "the C++ target exits 0"
is "$(grep -c 'fill_map[^ ]*(i=' "$T/cxx-last.trc") $(grep -c 'fill_map[^ ]* --> ' "$T/cxx-last.trc")" \
	"8 8" "8 calls of fill_map, 8 ends: none left open"
is "$(grep -c 'fill_map[^ ]* --> (unwound)' "$T/cxx-last.trc")" 2 \
	"both throws (i = 0, 7) unwound, the last one too, closed when the program ended" ||
	cat "$T/cxx-last.trc"
is "$(grep -c 'restock[^ ]* --> (unwound)' "$T/cxx-last.trc")" 2 "and their callers"

# A call still running when the trace ends says so, with how long so far.
spawn "$T/bl.out" "$TARGETS/blocker" 600
BL=$PID
wait_for 20 grep -q '^ready' "$T/bl.out"
spawn_recce "$T/bl.trc" "$T/bl.err" trace -p "$BL" main_wait --return --time 60
R=$PID
wait_for 20 grep -q '^recce: tracing' "$T/bl.err" || fail "the trace of blocker starts" "$(cat "$T/bl.err")"
kill -USR1 "$BL"
# It prints its totals, then waits in main_wait (rt_sigtimedwait, 128)
# again: that call is in flight.
wait_for 20 grep -q '^--' "$T/bl.out" || fail "blocker prints its totals" "$(cat "$T/bl.out")"
ok "blocker's main thread waits in main_wait again" wait_for 20 grep -q '^128 ' "/proc/$BL/syscall"
kill -INT "$R"
wait_exit 20 "$R" || fail "the trace ends on SIGINT" "still running"
like "$(tail -n 1 "$T/bl.trc")" 'blocker:main_wait/1 --> \(still running at exit\)  \([0-9.]+ [mun]?s so far\)$' \
	"the call in flight ends the trace as still running, with its time so far" || cat "$T/bl.trc"
kill_quietly "$BL"

# The older method, for contrast: the unwinder meets the uretprobe's
# trampoline, finds no unwind entry and the program aborts. Its own copy
# of the program: the kernel arms a uretprobe in every process where a
# breakpoint at its function fires, another tracer's too, so one on the
# shared file would kill the other tests' targets traced at that moment.
cp "$TARGETS/throws" "$T/throws"
spawn_ready "$T/old.got" "$T/throws" 30 go 7
OLD=$PID
RECCE_RETURN_URETPROBE=1 run_go "$OLD" trace -p "$OLD" '*fill_map*' --return --count 0 --time 60
wait_exit 20 "$OLD" || WAIT_RC=running
isnt "$WAIT_RC" 0 "with uretprobes (RECCE_RETURN_URETPROBE=1) the same target dies"

# C: leap longjmps back to main on i = 0, 5, ..., 195 (40 of 200 calls).
trace_to_end c "$TARGETS/jumps" 200 @GO@ 5 -- hop leap
is "$RC" 0 "trace across longjmp exits 0" || show_run
is "$WAIT_RC" 0 "the C target exits 0"
is "$(cat "$T/c.got")" "$(cat "$T/c.want")" "with the same output as untraced"
is "$(grep -c 'leap(i=' "$T/c.trc")" 200 "every call of leap is traced"
is "$(grep -c 'leap/2 --> (unwound)' "$T/c.trc")" 40 "40 are unwound by longjmp"
is "$(grep -c 'hop/2 --> (unwound)' "$T/c.trc")" 40 "with their callers"
is "$(grep -c 'leap/2 --> [0-9]' "$T/c.trc")" 160 "the other 160 return"
is "$(grep -c 'hop/2 --> [0-9]' "$T/c.trc")" 160 "and so do their callers"

# LLVM's code for size: cond_tail leaves by "jne odd_leaf" on odd i
# (100 of 200 calls), ptr_tail always by "jmp *(table)", and switchy's
# jump table stays inside it. Each exit is decided from the registers
# where the target stopped on it: no call is left unpaired.
trace_to_end tails "$TARGETS/tails" 200 @GO@ -- cond_tail ptr_tail switchy
is "$RC $WAIT_RC" "0 0" "trace of functions leaving by jumps, and the target, exit 0" || show_run
is "$(cat "$T/tails.got")" "$(cat "$T/tails.want")" "the target's output is unchanged"
is "$(grep -c 'cond_tail/1 --> (tail call)' "$T/tails.trc")" 100 \
	"the 100 odd calls of cond_tail leave by the conditional jump"
is "$(grep -c 'cond_tail/1 --> [0-9]' "$T/tails.trc")" 100 "the even ones return their value"
like "$(grep -m1 'cond_tail(x=4)' -A1 "$T/tails.trc" | tail -1)" 'cond_tail/1 --> 8  ' \
	"an even call returns 2 * x"
is "$(grep -c 'ptr_tail/1 --> (tail call)' "$T/tails.trc")" 200 \
	"every call of ptr_tail leaves through the pointer table"
is "$(grep -c 'switchy/1 --> -\?[0-9]' "$T/tails.trc")" 200 \
	"switchy's table jumps are not exits: 200 returns with values"
is "$(grep -c 'unwound' "$T/tails.trc")" 0 "no call is shown unwound"

# JSON says the same.
spawn_ready "$T/j.got" "$TARGETS/jumps" 20 go 5
J=$PID
run_go "$J" trace -p "$J" leap --return --count 0 --time 60 --format json
is "$(grep -c '"event":"return","function":"jumps:leap".*"unwound":true' "$OUT")" 4 \
	"JSON marks the 4 unwound calls"
unlike "$(grep '"unwound":true' "$OUT")" '"ret"' "and gives them no return value"
wait_exit 20 "$J"

# Go: four goroutines call sortWork 50 times each; every call grows the
# goroutine's stack, which Go copies and checks.
if command -v go >/dev/null 2>&1; then
	export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
	if go build -o "$T/gotrace" tests/go/trace/main.go 2>"$T/go.err"; then
		trace_to_end go "$T/gotrace" 50 @GO@ 4 -- main.sortWork
		is "$RC" 0 "trace of a Go function exits 0" || show_run
		is "$WAIT_RC" 0 "the Go target exits 0"
		is "$(cat "$T/go.got")" "$(cat "$T/go.want")" "with the same output as untraced"
		N=$(grep -c 'main.sortWork(seed=[0-9]*)$' "$T/go.trc")
		SEEDS=$(sed -n 's/.*main.sortWork(seed=\([0-9]*\))$/\1/p' "$T/go.trc" | sort -n)
		if [ -n "${RECCE_NO_BPF:-}" ]; then
			# Perf uprobe events follow a thread the Go runtime makes
			# after the attach only from when recce reads of it: its
			# first calls may be missing, never wrong; and a goroutine
			# may return there, unseen: that return is lost, and said.
			cmp_ok "$N" '<=' 200 "calls are traced ($N of 200)"
			is "$(printf '%s\n' "$SEEDS" | uniq | awk '$1 >= 0 && $1 <= 199' | wc -l)" "$N" \
				"the argument is read from Go's registers: seeds among 0 to 199, each once"
			LOSTR=$(grep -c 'main.sortWork/1 --> (return lost)' "$T/go.trc")
			is "$(($(grep -c 'main.sortWork/1 --> [0-9]*  (' "$T/go.trc") + LOSTR))" "$N" \
				"and every return, with its int result or lost ($LOSTR)"
			is "$(grep -c 'unwound' "$T/go.trc")" 0 "none is shown unwound"
			if [ "$LOSTR" -gt 0 ]; then
				like "$(cat "$ERR")" "recce: warning: $LOSTR goroutine calls? shown with \(return lost\)" \
					"and recce says why the returns were lost"
			else
				pass "no return was lost"
			fi
		else
			is "$N" 200 "every call is traced"
			# Go's register ABI: the seeds are exactly 0..199, each once.
			is "$(printf '%s\n' "$SEEDS" | uniq | wc -l) $(printf '%s\n' "$SEEDS" | head -1) $(printf '%s\n' "$SEEDS" | tail -1)" \
				"200 0 199" "the argument is read from Go's registers: seeds 0 to 199, each once"
			is "$(grep -c 'main.sortWork/1 --> [0-9]*  (' "$T/go.trc")" 200 \
				"and every return, with its int result"
		fi
	else
		fail "go build of tests/go/trace" "$(cat "$T/go.err")"
	fi
else
	skip 6 "go is not installed (Debian package golang-go)"
fi

done_testing
