#!/bin/bash
# --format speedscope, proven by speedscope's own importer (the npm
# package's code, run under Node by tests/js/speedscope-import.js): one
# profile per thread, the expected frames, the right total weight; with a
# timeline its samples are in time order, without one the name says so;
# and a live trace's Chrome trace, each call a frame in its thread's profile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/threads" "$TARGETS/hot" "$TARGETS/tree"
need_js speedscope
plan 11

need_profile threads
run "$RECCE" report --format speedscope -o "$T/th.json" "$THREADS"
is "$RC" 0 "report --format speedscope exits 0" || show_run
run node tests/js/speedscope-import.js "$T/th.json"
is "$RC" 0 "speedscope's importer loads it" || show_run
J=$(cat "$OUT")
COUNT=$(printf '%s' "$J" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).profiles.length))')
is "$COUNT" "$SAMPLED_THREADS" "one profile per sampled thread ($SAMPLED_THREADS, as record counted)"
# A thread's frames list every frame its samples hold: the C library's
# clone3 that started the thread (which the stack's unwind reaches and
# the frame-pointer walk does not) and the three of its loop first, then
# whatever else a sample caught (clock_gettime, an interrupt's kernel
# frames).
like "$J" '"frames":\["clone3","start_thread","early_worker_spin","spin_until"[],]' \
	"a thread's frames are found, root first"
like "$J" '"name":"late-[0-9]+ tid [0-9]+' "profiles are named by thread"
unlike "$J" 'order unknown' "with a timeline, the order is not called unknown"
# The weights add up to the profile's CPU time.
NS=$("$RECCE" report --format folded --value cpu "$THREADS" | awk '{ n += $NF } END { printf "%.0f\n", n }')
SUM=$(printf '%s' "$J" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).profiles.reduce((a,p)=>a+p.total,0)))')
cmp_ok "$SUM" "==" "$NS" "the weights total the CPU time ($SUM ns)"

# Without a timeline: merged stacks, and the name says the order is unknown.
perl tests/cli/mkpprof.pl go >"$T/go.pb.gz"
run "$RECCE" report --format speedscope -o "$T/go.json" "$T/go.pb.gz"
run node tests/js/speedscope-import.js "$T/go.json"
is "$RC" 0 "a profile without a timeline imports too" || show_run
like "$(cat "$OUT")" 'order unknown, merged stacks.*main\.hotLoop' "its name says the order is unknown"

# A live trace's Chrome trace (recce trace --format chrome), which
# speedscope imports as one profile a thread: each call a frame, nested in
# its caller's, from the tree target's 8 requests a thread.
spawn_ready "$T/tree.got" "$TARGETS/tree" 8 go 0
run_go "$PID" trace --fast -p "$PID" 'tree:*' --format chrome --count 0 --time 60
cp "$OUT" "$T/tree.json"
is "$RC" 0 "trace --format chrome exits 0" || show_run
run node tests/js/speedscope-import.js "$T/tree.json"
is "$(node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).profiles;
	console.log(p.length, p.map((q) => q.frames.filter((f) => /^tree:request /.test(f)).length).join(" "))' "$OUT")" \
	"2 8 8" "speedscope imports it: one profile a thread, each with its 8 requests" || diag "$(head -c 1000 "$OUT")"
