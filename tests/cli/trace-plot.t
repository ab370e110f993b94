#!/bin/bash
# recce trace --plot and recce replay --plot: a scatter of one value
# against another, one point a traced call. add_pair(i, 2i) returns 3i,
# so the points of a:ret are known exactly; a:duration has one point a
# return; the SVG opened in headless Chromium shows every point inside
# its axes, with the labels; replay draws the same from a trace file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/calls"

run "$RECCE" trace --plot a:ret -o "$T/ret.svg" --count 100 add_pair -- "$TARGETS/calls" 25 200 1
is "$RC" 0 "trace --plot a:ret exits 0" || show_run
like "$(cat "$ERR")" "plotted 25 points of ret against a in '$T/ret.svg'" "25 points, said"
is "$(grep -c '<circle class="point"' "$T/ret.svg")" 25 "25 points in the SVG"
want=$(for i in $(seq 0 24); do echo "$i $((3 * i))"; done)
got=$(grep -o 'data-x="[^"]*" data-y="[^"]*"' "$T/ret.svg" | sed 's/data-x="\([^"]*\)" data-y="\([^"]*\)"/\1 \2/')
is "$got" "$want" "each point is (a, 3a): add_pair(i, 2i) returned 3i"
like "$(cat "$OUT")" "add_pair" "the calls are still printed"

run "$RECCE" trace --plot a:duration -o "$T/dur.svg" --count 100 add_pair -- "$TARGETS/calls" 25 200 1
is "$RC" 0 "trace --plot a:duration exits 0"
is "$(grep -c '<circle class="point"' "$T/dur.svg")" 25 "a point for each of the 25 returns"
like "$(grep -o '<text class="ylabel"[^<]*' "$T/dur.svg")" '>duration \((ns|us|ms)\)$' \
	"the duration axis is labelled in a unit of time"

# replay draws the same from a trace file.
run "$RECCE" trace -o "$T/calls.trace" --return --count 100 add_pair -- "$TARGETS/calls" 25 200 1
run "$RECCE" replay "$T/calls.trace" --plot a:ret -o "$T/replay.svg" --if 'a >= 10'
is "$RC" 0 "replay --plot exits 0" || show_run
is "$(grep -c '<circle class="point"' "$T/replay.svg")" 15 "--if a >= 10 keeps 15 points"
is "$(grep -o 'data-x="[^"]*" data-y="[^"]*"' "$T/replay.svg" | head -1)" 'data-x="10" data-y="30"' \
	"the first is (10, 30)"

need_js playwright-core
RUN_TIMEOUT=120 run node tests/js/plot-check.js "$T/ret.svg" "$T/ret.png"
is "$RC" 0 "headless Chromium opens the plot" || show_run
J=$(cat "$OUT")
check() { printf '%s' "$J" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const o=JSON.parse(s);console.log($1)})"; }
is "$(check 'o.points')" 25 "Chromium draws 25 points"
is "$(check 'o.inside')" 25 "every one inside the axes"
is "$(check 'o.xlabel + " / " + o.ylabel')" "a / ret" "the axes are labelled a and ret"
like "$(check 'o.title')" "add_pair: ret against a" "the title names the function"
is "$(check 'o.errors.length')" 0 "without a page error"
ok "a screenshot was taken" test -s "$T/ret.png"

# Bad input.
run "$RECCE" trace --plot a -o "$T/x.svg" add_pair -- "$TARGETS/calls" 1 0 1
is "$RC" 2 "--plot without a colon is a usage error"
run "$RECCE" trace --plot a:ret add_pair -- "$TARGETS/calls" 1 0 1
is "$RC" 2 "--plot without -o is a usage error"
run "$RECCE" replay "$T/calls.trace" --plot a:ret
is "$RC" 2 "replay --plot without -o is a usage error"
run "$RECCE" trace --plot a:ret -o /nonexistent/x.svg add_pair -- "$TARGETS/calls" 1 0 1
is "$RC" 1 "an unwritable plot is refused before tracing"
like "$(cat "$ERR")" "cannot write '/nonexistent/x.svg'" "and says so"

done_testing
