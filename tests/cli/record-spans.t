#!/bin/bash
# Profiles per request: record labels each sample of a librecce program with
# the span it fell in (span_name) and the trace id its thread carried
# (trace_id), and report --tag selects them. The target's truth is exact:
# the core of parse_work runs only inside the span "parse", of render_work
# only inside "render", of gap_work in none, tens of microseconds from any
# edge of a span, so a sample's stack says which label it must have. Then the same with the
# rings overwritten between recce's reads: what recce could not see is
# labelled [unknown], never a span the thread was not in.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/ev-spans"
plan 36

start_spans()
{
	spawn "$T/spans.out" "$@"
	wait_for 60 grep -q '^ev-spans: ready$' "$T/spans.out" || diag "ev-spans never got ready"
}

# The folded stacks of the samples with label $2 in profile $1.
tagged() { folded "$1" --tag "$2"; }

start_spans "$TARGETS/ev-spans"
P="$T/spans.pb.gz"
run "$RECCE" record -p "$PID" -d 2 -F 499 -o "$P"
kill_quietly "$PID"
is "$RC" 0 "record -p of a program with spans exits 0" || show_run
like "$(cat "$ERR")" 'samples fell in librecce spans, [0-9]+ carried a trace id: labelled span_name and trace_id' \
	"it says how many samples fell in spans"
unlike "$(cat "$ERR")" 'warning' "and nothing was lost"

ALL=$(folded "$P")
PARSE=$(tagged "$P" span_name=parse)
RENDER=$(tagged "$P" span_name=render)
# The cores of the steps (their own spin, not the edges'), whose labels
# are exact.
n_parse=$(folded_count "$ALL" ';parse_work;spin$')
n_render=$(folded_count "$ALL" ';render_work;spin$')
cmp_ok "$n_parse" '>' 10 "parse_work is sampled ($n_parse samples in its core)"
cmp_ok "$n_render" '>' 10 "render_work is sampled ($n_render samples in its core)"
is "$(folded_count "$PARSE" ';parse_work;spin$')" "$n_parse" "every sample of parse_work's core is labelled span_name=parse"
is "$(folded_count "$RENDER" ';render_work;spin$')" "$n_render" "every sample of render_work's core is labelled span_name=render"
is "$(folded_count "$PARSE" ';render_work(;|$)|;gap_work;spin$')" 0 \
	"no sample of render_work or of the gaps' core is labelled span_name=parse"
is "$(folded_count "$RENDER" ';parse_work(;|$)|;gap_work;spin$')" 0 \
	"no sample of parse_work or of the gaps' core is labelled span_name=render"
is "$(folded_total "$(tagged "$P" 'span_name=[unknown]')")" 0 "no sample is of an unknown span"
is "$(folded_total "$(folded "$P" --tag span_name=parse --tag span_name=render)")" \
	"$(folded_total "$PARSE" | awk -v r="$(folded_total "$RENDER")" '{ print $1 + r }')" \
	"two values of one key: the samples of either"
both=$(folded_total "$(folded "$P" --tag span_name=parse --tag thread=worker-2)")
is "$(folded_total "$(folded "$P" --tag thread=worker-2 --tag span_name=parse)")" "$both" \
	"two keys: the samples with both, in either order"
ok "which are fewer than parse's ($both of $(folded_total "$PARSE")) and more than none" \
	awk -v a="$both" -v b="$(folded_total "$PARSE")" 'BEGIN { exit !(a > 0 && a < b) }'
is "$(folded_total "$(folded "$P" --tag span_name=parse --tag pid="$PID")")" \
	"$(folded_total "$PARSE")" "a number label is matched by its value"


# The trace ids: each one the target's own, and one request's samples
# are of one thread.
perl "$(dirname "$0")/pprof-labels.pl" "$P" >"$T/labels"
sed -n 's/.*trace_id=\([0-9a-f]*\).*/\1/p' "$T/labels" | sort -u >"$T/ids"
sed -n 's/^id //p' "$T/spans.out" | sort -u >"$T/printed"
n_ids=$(wc -l <"$T/ids")
cmp_ok "$n_ids" '>' 10 "the samples carry the trace ids of many requests ($n_ids)"
is "$(comm -23 "$T/ids" "$T/printed" | wc -l)" 0 "every trace id is one the program's requests had"
# The threads serve requests all the time: a sample lacks a trace id
# only within a few microseconds of a request's edges.
with_id=$(grep -c 'trace_id=' "$T/labels")
ok "nearly every sample carries one ($with_id of $(wc -l <"$T/labels"))" \
	awk -v a="$with_id" -v b="$(wc -l <"$T/labels")" 'BEGIN { exit !(a >= 0.99 * b) }'
ID=$(head -n 1 "$T/ids")
ONE=$(tagged "$P" "trace_id=$ID")
cmp_ok "$(folded_total "$ONE")" '>' 0 "report --tag trace_id=ID shows that request's samples"
is "$(grep "trace_id=$ID" "$T/labels" | sed 's/.* tid=\([0-9]*\).*/\1/' | sort -u | wc -l)" 1 \
	"all on one thread"
run "$RECCE" report "$P" --tag span_name=parse
is "$(table_rows "$(cat "$OUT")" | awk '$NF ~ /ev-spans\.c/ { print $4 }' | grep -c -x render_work)" 0 \
	"report --tag span_name=parse: a table without render_work"
like "$(table_rows "$(cat "$OUT")")" ' parse_work ' "with parse_work"

# A real consumer of the labels: pprof lists them.
run go tool pprof -tags "$P"
like "$(cat "$OUT")" 'span_name: Total' "go tool pprof -tags lists span_name"
like "$(cat "$OUT")" '%\): parse$' "with the spans' names"

# -- CMD: the program's event file appears after recce started.
run "$RECCE" record -d 2 -F 499 -o "$T/cmd.pb.gz" -- "$TARGETS/ev-spans"
is "$RC" 0 "record -- a program with spans exits 0" || show_run
cmp_ok "$(folded_total "$(tagged "$T/cmd.pb.gz" span_name=render)")" '>' 0 \
	"the samples of a command recce started are labelled too"

# Bad input.
run "$RECCE" report "$P" --tag span_name
is "$RC" 2 "--tag without a value is a usage error"
like "$(cat "$ERR")" '--tag wants KEY=VALUE' "which says what --tag wants"

# Losses: rings of 16 events and 3,000 events in each gap go round
# between recce's reads. What fell where events were lost is [unknown];
# no sample is given a span its thread was not in.
start_spans env RECCE_RING_EVENTS=16 "$TARGETS/ev-spans" 3000
L="$T/lost.pb.gz"
run "$RECCE" record -p "$PID" -d 2 -F 499 -o "$L"
kill_quietly "$PID"
is "$RC" 0 "record -p of a program that overwrites its rings exits 0" || show_run
like "$(cat "$ERR")" 'samples fell where their thread.s librecce events were overwritten before recce read them \([0-9]+ events lost\)' \
	"it says how many samples fell where events were lost"
cmp_ok "$(folded_total "$(tagged "$L" 'span_name=[unknown]')")" '>' 0 "those are labelled span_name=[unknown]"
is "$(folded_count "$(tagged "$L" span_name=parse)" ';render_work(;|$)|;gap_work;spin$')" 0 \
	"no sample of render_work or the gaps' core is labelled parse"
is "$(folded_count "$(tagged "$L" span_name=render)" ';parse_work(;|$)|;gap_work;spin$')" 0 \
	"no sample of parse_work or the gaps' core is labelled render"

# A process that stops letting its user read it (undumpable, as a
# program that drops privileges makes itself), recorded by that user:
# recce cannot look for its events, and says so, not that it read them
# in part; the samples are written.
make_user
cat >"$T/bin/undumpable.py" <<'PY'
import ctypes, os, signal
def undumpable(*_):
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    print("undumpable", flush=True)
signal.signal(signal.SIGUSR1, undumpable)
print(os.getpid(), flush=True)
while True:
    sum(range(10000))
PY
chmod 644 "$T/bin/undumpable.py"
HER=(setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups)
spawn "$T/undumpable.out" "${HER[@]}" /usr/bin/python3 "$T/bin/undumpable.py"
wait_for 20 test -s "$T/undumpable.out" || diag "the undumpable target did not start"
NDPID=$(head -n 1 "$T/undumpable.out")
fresh "$T/nd.out" "$T/nd.err"
setsid env --default-signal=INT "${HER[@]}" "$RECCE" record -p "$NDPID" -o "$T/home/nd.pb.gz" >"$T/nd.out" 2>"$T/nd.err" </dev/null &
REC=$!
_spawned+=("$REC")
recording "$T/nd.err" || diag "her record did not start: $(cat "$T/nd.err")"
kill -USR1 "$NDPID"
wait_for 20 grep -q '^undumpable$' "$T/undumpable.out" || diag "the target did not say it is undumpable"
kill -INT "$REC"
wait_exit 30 "$REC"
kill_quietly "$NDPID"
is "$WAIT_RC" 0 "her record of her process that became undumpable exits 0" || diag "$(cat "$T/nd.err")"
like "$(cat "$T/nd.err")" "warning: cannot look for the librecce events of process $NDPID \\(Permission denied\\): if it writes any, its samples have no span labels" \
	"it says it could not look for the process's librecce events"
unlike "$(cat "$T/nd.err")" 'read to the end' "not that it read them in part"
like "$(cat "$T/nd.err")" "wrote $T/home/nd\\.pb\\.gz" "and writes the profile"
