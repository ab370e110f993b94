#!/bin/bash
# --format chrome: Trace Event JSON built from the timeline, well formed
# (JSON.parse, and speedscope's importer, which reads Chrome traces), one
# track per thread, timestamps that never go back, B and E balanced.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/threads" "$TARGETS/hot"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
plan 12

need_profile threads
run "$RECCE" report --format chrome -o "$T/trace.json" "$THREADS"
is "$RC" 0 "report --format chrome exits 0" || show_run
cat >"$T/check.js" <<'JS'
const t = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const names = new Map(), last = new Map(), open = new Map(), closed = new Map();
let back = 0, unbalanced = 0, reopened = 0, long = 0;
const same = (a, b) => a.name === b.name && a.file === b.file && a.line === b.line;
for (const e of t.traceEvents) {
	const k = e.pid + '/' + e.tid;
	if (e.ph === 'M') { names.set(k, e.args.name); continue; }
	if (e.ts < (last.get(k) ?? -Infinity)) back++;
	last.set(k, e.ts);
	const o = open.get(k) ?? [];
	open.set(k, o);
	if (e.ph === 'B') {
		const f = { name: e.name, file: e.args?.file, line: e.args?.line, ts: e.ts };
		// A frame closed at this very time, at this depth, opened again:
		// two samples in a row of one frame not merged into one span.
		const c = closed.get(k);
		if (c && c.ts === e.ts && c.frames[o.length] && same(c.frames[o.length], f)) reopened++;
		o.push(f);
	} else {
		if (!o.length) { unbalanced++; continue; }
		const f = o.pop();
		let c = closed.get(k);
		if (!c || c.ts !== e.ts) closed.set(k, (c = { ts: e.ts, frames: [] }));
		c.frames[o.length] = f;
		if (e.ts - f.ts > 1.5e6 / 99) long++;
	}
}
for (const o of open.values()) if (o.length) unbalanced++;
const hot = t.traceEvents.filter((e) => e.ph === 'B' && e.name === 'spin_until').length;
console.log([names.size, last.size, back, unbalanced, reopened, long, hot].join(' '));
JS
run node "$T/check.js" "$T/trace.json"
is "$RC" 0 "it is well-formed JSON" || show_run
read -r NAMED TRACKS BACK UNBAL REOPENED LONG HOTSPANS <"$OUT"
is "$TRACKS" "$SAMPLED_THREADS" "one track per sampled thread ($SAMPLED_THREADS, as record counted)"
is "$NAMED" "$TRACKS" "every track is named"
is "$BACK" 0 "timestamps never go back on a track"
is "$UNBAL" 0 "every B has its E"
is "$REOPENED" 0 "consecutive samples of a stack are merged: no frame closes and reopens at one time"
# A sample right after another on its thread extends the frames they
# share; where the thread was off the CPU in between, its frames close
# and open apart in time. On a busy machine a thread of many is rarely
# on the CPU for two samples in a row: one busy thread at nice -20 is.
run "$RECCE" record --timeline -o "$T/alone.pb.gz" -- nice -n -20 "$TARGETS/hot" 1
is "$RC" 0 "record --timeline of one busy thread at nice -20" || show_run
run "$RECCE" report --format chrome -o "$T/alone.json" "$T/alone.pb.gz"
run node "$T/check.js" "$T/alone.json"
read -r _ _ _ _ REOPENED LONG _ <"$OUT"
is "$REOPENED" 0 "there too, no frame closes and reopens at one time"
cmp_ok "$LONG" '>=' 1 "and samples in a row make spans longer than one sample ($LONG spans)"
cmp_ok "$HOTSPANS" '>=' 1 "the hot function has spans"

# Without a timeline there is no order to show.
perl tests/cli/mkpprof.pl go >"$T/go.pb.gz"
run "$RECCE" report --format chrome -o "$T/go.json" "$T/go.pb.gz"
ok "a profile without a timeline is refused with a message that says why (exit 1)" \
	sh -c "[ $RC = 1 ] && grep -q 'no sample timeline' '$ERR' && grep -q 'record --timeline' '$ERR' && [ ! -e '$T/go.json' ]"
