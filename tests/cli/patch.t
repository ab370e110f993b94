#!/usr/bin/env bash
# recce patch: a function of a running process replaced by one from a
# shared object while four threads run it, in C, C++ (exceptions thrown
# through the patched function) and a Rust-named function; every byte of
# code back as its file after undo; each refusal with its reason.
. "$(dirname "$0")/lib.sh"

need_file "$TARGETS/patchee" "$TARGETS/patchee-cxx" "$TARGETS/fixes/fib-fix.so" \
	"$TARGETS/fixes/basket-fix.so" "$TARGETS/ratchet-ipa-ra" "$TARGETS/keeper" \
	"$TARGETS/fixes/keeper-fix.so" "$TARGETS/fixes/ratchet-fix.so"
FIX="$TARGETS/fixes/fib-fix.so"
REG="$T/registry"

# counts FILE: the last "old=.. new=.. bad=.." line, as shell assignments.
counts()
{
	tail -n 1 "$1" | tr ' ' '\n' | grep '=' | sed 's/^/C_/'
}

# grows FILE NAME: waits (up to 60 s) until counter NAME of FILE's lines
# moves.
grows()
{
	local first
	eval "$(counts "$1")"
	first=$(eval echo "\$C_$2")
	wait_for 60 _grown "$1" "$2" "$first"
}

_grown()
{
	eval "$(counts "$1")"
	[ "$(eval echo "\$C_$2")" -gt "$3" ]
}

# --- C: four threads inside slow_fib while it is replaced ---------------------
spawn "$T/c.out" "$TARGETS/patchee"
C=$PID
wait_for 5 grep -q old= "$T/c.out"
run "$RECCE" patch -p "$C" --registry "$REG" "slow_fib=$FIX:fast_fib"
is "$RC" 0 "patch exits 0" || show_run
like "$(cat "$OUT")" 'patched slow_fib in process [0-9]+: calls now go to fast_fib in fib-fix.so' \
	"patch says what now runs"
like "$(cat "$OUT")" 'signature +long long unsigned int \(unsigned int, int \*\), the same in both' \
	"patch shows the signature both sides share"
ok "new calls run the replacement" grows "$T/c.out" new
eval "$(counts "$T/c.out")"
is "$C_bad" 0 "no call returned a wrong result, the ones running during the patch included"

run "$RECCE" patch -p "$C" --registry "$REG" "payroll::total=$FIX"
is "$RC" 0 "a Rust-named function is patched by its demangled name" || show_run
ok "calls of payroll::total run the replacement" grows "$T/c.out" rust_new

run "$RECCE" patch -p "$C" --registry "$REG" --list
like "$(cat "$OUT")" 'slow_fib +0x[0-9a-f]+ +active .*fib-fix.so:fast_fib' "--list shows slow_fib active"
like "$(cat "$OUT")" 'payroll::total +0x[0-9a-f]+ +active' "--list shows payroll::total active"

# A uprobe steps the file's instruction, not the jump the process has.
run "$RECCE" trace -p "$C" slow_fib --count 3 --time 2
is "$RC" 1 "trace refuses a patched function"
like "$(cat "$ERR")" 'slow_fib.*its code in the process differs from its file \(patched' \
	"saying it is patched"
eval "$(counts "$T/c.out")"
is "$C_bad" 0 "and the target computes right on"

run "$RECCE" patch -p "$C" --registry "$REG" "slow_fib=$FIX:fast_fib"
is "$RC" 1 "patching a patched function exits 1"
like "$(cat "$ERR")" 'slow_fib is already patched.*--undo slow_fib' "and says to undo it first"

run "$RECCE" patch -p "$C" --registry "$REG" --undo slow_fib
is "$RC" 0 "undo exits 0" || show_run
run "$RECCE" patch -p "$C" --registry "$REG" --undo payroll::total
is "$RC" 0 "undo of the second patch exits 0" || show_run
ok "after undo, calls run the old code" grows "$T/c.out" old
eval "$(counts "$T/c.out")"
before=$C_new
ok "the old code goes on being called" grows "$T/c.out" old
eval "$(counts "$T/c.out")"
is "$C_new" "$before" "and none the replacement any more"
is "$C_bad" 0 "no wrong result at any time"
is "$C_eintr" 0 "the main thread never saw its sleep cut short (EINTR)"
run python3 tests/cli/code-bytes.py "$C"
is "$RC" 0 "every byte of code in the process equals its file again" || show_run
run "$RECCE" patch -p "$C" --registry "$REG" --list
like "$(cat "$ERR")" "process $C has no patches" "--list after undo: none"
ok "the target still runs" kill -0 "$C"

# --- recce killed while the target's thread is inside dlopen -------------------
# The thread borrowed for the call (a worker: the main thread sleeps in a
# call the kernel would resume, which recce leaves alone) must come back by
# itself within a second: the library loaded, and every worker computing.

# busy_threads PID: how many threads but the main one used CPU in 0.5 s.
busy_threads()
{
	local before after t n=0
	before=$(for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(cut -d' ' -f14 "$t/stat")"; done)
	sleep 0.5
	after=$(for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(cut -d' ' -f14 "$t/stat")"; done)
	while read -r t u; do
		[ "$t" = "$1" ] && continue
		b=$(printf '%s\n' "$before" | awk -v t="$t" '$1 == t { print $2 }')
		[ -n "$b" ] && [ "$u" -gt "$b" ] && n=$((n + 1))
	done <<<"$after"
	echo "$n"
}

spawn "$T/k.out" env SLOW_FIX_DONE="$T/slow-loaded" SLOW_FIX_GATE="$T/slow-gate" "$TARGETS/patchee"
K=$PID
wait_for 5 grep -q old= "$T/k.out"
spawn_recce "$T/kill.out" "$T/kill.err" patch -p "$K" --registry "$REG" \
	"slow_fib=$TARGETS/fixes/slow-fix.so:slow_loading_fib"
KR=$PID
wait_for 5 grep -q slow-fix.so "/proc/$K/maps"
ok "the slow library is being loaded when recce is killed" grep -q slow-fix.so "/proc/$K/maps"
kill_quietly "$KR"
touch "$T/slow-gate" # the library's constructor returns only now
ok "the call finishes in the target without recce" wait_for 5 test -e "$T/slow-loaded"
# The stub waits about a second for recce's ack, then returns.
all_busy() { [ "$(busy_threads "$K")" = 4 ]; }
ok "all four workers compute again, the borrowed one included" wait_for 5 all_busy
eval "$(counts "$T/k.out")"
is "$C_eintr" 0 "no sleep of the main thread was cut short (EINTR)"
is "$C_bad" 0 "no wrong result"
ok "the target still runs" kill -0 "$K"
run python3 tests/cli/code-bytes.py "$K" --padding 512
is "$RC" 0 "no code changed but the call stub left in a segment's padding" || show_run
run "$RECCE" patch -p "$K" --registry "$REG" --list
like "$(cat "$ERR")" "process $K has no patches" "and nothing was patched"

# --- refusals ------------------------------------------------------------------
run "$RECCE" patch -p "$C" --registry "$REG" "tiny=$FIX:wrong_fib" --force
is "$RC" 1 "a 3-byte function is refused"
like "$(cat "$ERR")" 'tiny is 3 bytes long, shorter than the 5-byte jump' "with its length"
run "$RECCE" patch -p "$C" --registry "$REG" "slow_fib=$FIX:wrong_fib"
is "$RC" 1 "a different signature is refused"
like "$(cat "$ERR")" "signatures differ: slow_fib is 'long long unsigned int \(unsigned int, int \*\)', its replacement 'int \(int\)'; give --force" \
	"with both signatures"
run "$RECCE" patch -p "$C" --registry "$REG" "no_such_function=$FIX:fast_fib"
is "$RC" 1 "an unknown function is refused"
like "$(cat "$ERR")" "no object mapped by process $C defines a function no_such_function" "by name"
run "$RECCE" patch -p "$C" --registry "$REG" "slow_fib=$T/missing.so"
is "$RC" 1 "a missing object is refused"
run "$RECCE" patch -p "$C" --registry "$REG" --undo slow_fib
is "$RC" 1 "undo of a function not patched exits 1"
like "$(cat "$ERR")" "recce has no patch of slow_fib in process $C" "and says so"
run "$RECCE" patch -p "$C" slow_fib
is "$RC" 2 "a spec without = is a usage error"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$RECCE" patch -p "$C" \
		--registry "$T/nobody" "slow_fib=$FIX:fast_fib"
	is "$RC" 1 "another user's process is refused"
	like "$(cat "$ERR")" "not allowed to ptrace process $C: run recce as its user or as root" \
		"with what would allow it"
else
	skip 2 "needs root and setpriv"
fi
run python3 tests/cli/code-bytes.py "$C"
is "$RC" 0 "refusals changed no byte of code" || show_run

# --- Callers that keep registers across the call (-fipa-ra, on at -O2) -------
# keeper's step() leaves a pointer in rsi for its tail call, where
# slow_sum() left it; the replacement changes every register it may.
spawn "$T/keeper.out" "$TARGETS/keeper"
K=$PID
wait_for 5 grep -q old= "$T/keeper.out"
KFIX="$TARGETS/fixes/keeper-fix.so"
run "$RECCE" patch -p "$K" --registry "$REG" "slow_sum=$KFIX:fast_sum"
is "$RC" 0 "a function whose caller keeps a register across it is patched" || show_run
like "$(cat "$OUT")" "through recce's register-keeping thunk" "through the thunk that keeps them"
# Arguments on the stack, a result in xmm0, a result in memory.
for f in many ratio trio; do
	run "$RECCE" patch -p "$K" --registry "$REG" "$f=$KFIX:fast_$f"
	is "$RC" 0 "$f is patched" || show_run
done
ok "calls run the replacements" grows "$T/keeper.out" new || diag "$(tail -n 3 "$T/keeper.out")"
ok "and go on" grows "$T/keeper.out" new
eval "$(counts "$T/keeper.out")"
is "$C_bad" 0 "every result is right and callers find their registers as they left them"
ok "the target still runs" kill -0 "$K"
for f in slow_sum many ratio trio; do
	run "$RECCE" patch -p "$K" --registry "$REG" --undo "$f"
	is "$RC" 0 "$f undone" || show_run
done
run python3 tests/cli/code-bytes.py "$K"
is "$RC" 0 "every byte of keeper's code equals its file again" || show_run
ok "old calls run again" grows "$T/keeper.out" old

# ratchet as GCC builds it by default: its handler reads a register
# after calling old_fibonacci, which old_fibonacci left alone.
spawn "$T/r.out" "$TARGETS/ratchet-ipa-ra" 0 1
R=$PID
wait_for 5 grep -q listening "$T/r.out"
RPORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$T/r.out")
run "$RECCE" patch -p "$R" --registry "$REG" \
	"old_fibonacci=$TARGETS/fixes/ratchet-fix.so:fast_fibonacci"
is "$RC" 0 "ratchet built with -fipa-ra is patched" || show_run
answers=$(for n in 10 20 30 40; do
	curl -s --max-time 20 "http://127.0.0.1:$RPORT/fibonacci?n=$n"
done)
is "$answers" "fibonacci(10) = 55
fibonacci(20) = 6765
fibonacci(30) = 832040
fibonacci(40) = 102334155" "it answers right after the patch"
ok "ratchet still runs" kill -0 "$R"

# --- C++: exceptions thrown through the patched method --------------------------
spawn "$T/x.out" "$TARGETS/patchee-cxx"
X=$PID
wait_for 5 grep -q old= "$T/x.out"
run "$RECCE" patch -p "$X" --registry "$REG" "shop::Basket::total=$TARGETS/fixes/basket-fix.so"
is "$RC" 0 "a C++ method is patched" || show_run
ok "calls run the new method" grows "$T/x.out" new
ok "exceptions thrown by the new method are still caught by the caller" grows "$T/x.out" thrown
eval "$(counts "$T/x.out")"
is "$C_bad" 0 "every total is right"
run "$RECCE" patch -p "$X" --registry "$REG" --undo shop::Basket::total
is "$RC" 0 "and undone" || show_run
run python3 tests/cli/code-bytes.py "$X"
is "$RC" 0 "every byte of its code equals its file again" || show_run
ok "the C++ target still runs" kill -0 "$X"

# --- Go: refused, with the reason ----------------------------------------------
spawn_go offcpu "$T/go.out" 30
case $? in
0)
	G=$PID
	run "$RECCE" patch -p "$G" --registry "$REG" "main.main=$FIX:fast_fib" --force
	is "$RC" 1 "a Go program is refused"
	like "$(cat "$ERR")" 'it is a Go program' "with the reason"
	ok "the Go program still runs" kill -0 "$G"
	;;
2) skip 3 "go is missing" ;;
*) skip 3 "the Go target did not build" ;;
esac

done_testing
