#!/bin/bash
# JIT code without a perf map: Debian's node run plainly keeps none, and
# its compiled JavaScript is one frame, [JIT: node], not a row per
# address, with a note that says how to name it (--perf-basic-prof);
# started with that flag, the functions are named from its map.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/node
plan 13

cat >"$T/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
console.log("ready");
for (;;) fib(25);
JS

spawn "$T/plain.out" env -C "$T" /usr/bin/node "$T/fib.js"
NODE=$PID
ok "node runs fib" wait_for 60 grep -q ready "$T/plain.out"
run "$RECCE" record -p "$NODE" -d 2 -o "$T/plain.pb.gz"
is "$RC" 0 "record -p node exits 0" || show_run
like "$(cat "$ERR")" "^recce: node \(pid $NODE\) runs JIT code it keeps no perf map of, shown as \[JIT: node\]; restart it with node --perf-basic-prof to see its functions$" \
	"the note names the process and the flag that names its JIT code"
F=$(folded "$T/plain.pb.gz")
cmp_ok "$(folded_count "$F" '(^|;)\[JIT: node\](;|$)')" '>' 0 "its compiled code is [JIT: node]"
is "$(printf '%s\n' "$F" | grep -c 'anon+0x')" 0 "and no frame is an address in anonymous memory"
# trace of a JavaScript function: JIT code, said so, whatever C names are near.
run "$RECCE" trace -p "$NODE" fib
is "$RC" 1 "trace -p node fib: exit 1"
like "$(cat "$ERR")" "process $NODE is node, which keeps no perf map: if 'fib' is code its JIT compiled, recce trace cannot probe it .*--perf-basic-prof" \
	"says fib may be JIT code, and how to see it"
kill "$NODE"

# With its perf map, the functions by name, and no note for them.
# (In $T: node leaves its isolate-*-v8.log where it runs.)
spawn "$T/prof.out" env -C "$T" /usr/bin/node --perf-basic-prof "$T/fib.js"
NODE=$PID
remove_at_exit "/tmp/perf-$NODE.map"
ok "node --perf-basic-prof runs fib" wait_for 60 grep -q ready "$T/prof.out"
ok "and lists fib in its map" wait_for 60 grep -qs ' [A-Za-z]*:\*\?fib ' "/tmp/perf-$NODE.map"
run "$RECCE" record -p "$NODE" -d 2 -o "$T/prof.pb.gz"
is "$RC" 0 "record -p node --perf-basic-prof exits 0" || show_run
F=$(folded "$T/prof.pb.gz")
cmp_ok "$(folded_count "$F" ':\*?fib ')" '>' 0 "fib is named from the perf map" ||
	diag "$(folded_top "$F" 3)"
run "$RECCE" trace -p "$NODE" fib
is "$RC" 1 "trace -p node fib, with its map: exit 1"
like "$(cat "$ERR")" "it names JIT code of process $NODE \(JS:.fib $T/fib.js:[0-9:]+, in /tmp/perf-$NODE.map\)" \
	"names the JIT code in the map that the pattern means"
kill "$NODE"
