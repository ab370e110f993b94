#!/bin/bash
# librecce's rings proved against a model: random programs (threads one
# after another or all at once, 0-300 events each: events, counters and
# spans, or more names than the file holds; rings of 16-256 events, 1-6
# of them; a child forked writing its own; a clean exit or a SIGKILL)
# write numbered events, and
# `recce events --postmortem` must show, per thread, a run of its last
# events in order, each once, and count every other one in the figures it
# prints; `recce events -p PID --follow`, attached at a random moment
# while the program writes, must show each thread's events in order, each
# once, and count every other one. EVENTS_MODEL_CASES cases (200 here, thousands in `make soak`),
# from a seed printed for a rerun (EVENTS_MODEL_SEED).
. "$(dirname "$0")/lib.sh"
LIBDIR=$(cd "$TARGETS/../lib" && pwd)
need_file "$RECCE" "$LIBDIR/librecce.so"

CASES=${EVENTS_MODEL_CASES:-200}
SEED=${EVENTS_MODEL_SEED:-$RANDOM}
diag "seed $SEED (EVENTS_MODEL_SEED=$SEED reruns these cases)"
# About 50 s here; the timeout only catches a hang, on a busy machine too.
RUN_TIMEOUT=600 run python3 tests/py/events-model.py "$RECCE" "$LIBDIR/librecce.so" "$CASES" "$SEED"
is "$RC" 0 "$CASES random programs: every event shown once, in order, or counted" || show_run
like "$(tail -n 1 "$OUT")" "^model: $CASES cases, [0-9]+ events, 0 failures$" "and the run says so"

done_testing
