#!/bin/bash
# --format chrome: Trace Event JSON built from the timeline, well formed
# (JSON.parse, and speedscope's importer, which reads Chrome traces), one
# track per thread, timestamps that never go back, B and E balanced.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/threads"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
plan 9

need_profile threads
run "$RECCE" report --format chrome -o "$T/trace.json" "$THREADS"
is "$RC" 0 "report --format chrome exits 0" || show_run
cat >"$T/check.js" <<'JS'
const t = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const names = new Map(), last = new Map(), depth = new Map();
let back = 0, unbalanced = 0, spans = 0;
for (const e of t.traceEvents) {
	const k = e.pid + '/' + e.tid;
	if (e.ph === 'M') { names.set(k, e.args.name); continue; }
	if (e.ts < (last.get(k) ?? -Infinity)) back++;
	last.set(k, e.ts);
	const d = (depth.get(k) ?? 0) + (e.ph === 'B' ? 1 : -1);
	if (d < 0) unbalanced++;
	depth.set(k, d);
	if (e.ph === 'B') spans++;
}
for (const d of depth.values()) if (d !== 0) unbalanced++;
const hot = t.traceEvents.filter((e) => e.ph === 'B' && e.name === 'spin_until').length;
console.log([names.size, last.size, back, unbalanced, spans, hot].join(' '));
JS
run node "$T/check.js" "$T/trace.json"
is "$RC" 0 "it is well-formed JSON" || show_run
read -r NAMED TRACKS BACK UNBAL SPANS HOTSPANS <"$OUT"
is "$TRACKS" "$SAMPLED_THREADS" "one track per sampled thread ($SAMPLED_THREADS, as record counted)"
is "$NAMED" "$TRACKS" "every track is named"
is "$BACK" 0 "timestamps never go back on a track"
is "$UNBAL" 0 "every B has its E"
cmp_ok "$SPANS" '<' "$(folded_total "$(folded "$THREADS")") * 3" "consecutive samples of a stack are merged into spans ($SPANS spans)"
cmp_ok "$HOTSPANS" '>=' 1 "the hot function has spans"

# Without a timeline there is no order to show.
perl tests/cli/mkpprof.pl go >"$T/go.pb.gz"
run "$RECCE" report --format chrome -o "$T/go.json" "$T/go.pb.gz"
ok "a profile without a timeline is refused with a message that says why (exit 1)" \
	sh -c "[ $RC = 1 ] && grep -q 'no sample timeline' '$ERR' && grep -q 'record --timeline' '$ERR' && [ ! -e '$T/go.json' ]"
