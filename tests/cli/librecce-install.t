#!/bin/bash
# librecce as a user gets it: `make install` into a prefix, then a program
# built with `pkg-config --cflags --libs recce` against the shared
# library, and another against librecce.a; both write events that
# `recce events` reads. Only the API is exported from the shared library.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"

P="$T/prefix"
run make -s -C "$ROOT" install B="$B" PREFIX="$P"
is "$RC" 0 "make install PREFIX=... exits 0" || show_run
ok "recce.h is installed" test -f "$P/include/recce.h"
like "$(cat "$P/lib/systemd/system/recce-agent.service" 2>&1)" "ExecStart=$P/bin/recce agent --socket /run/recce/agent.sock" \
	"the agent's systemd unit is installed, running the installed recce"
ok "librecce.so.0, librecce.so and librecce.a" \
	test -f "$P/lib/librecce.so.0" -a -L "$P/lib/librecce.so" -a -f "$P/lib/librecce.a"
exported=$(nm -D --defined-only "$P/lib/librecce.so.0" | awk '{ print $3 }' | grep -v '^recce_' | tr '\n' ' ')
is "$exported" "" "the shared library exports recce_* and nothing else"
for f in $(sed -n 's/^RECCE_API [a-z0-9_ *]*[ *]\(recce_[a-z_]*\)(.*/\1/p' "$ROOT/include/recce.h"); do
	nm -D --defined-only "$P/lib/librecce.so.0" | grep -q " $f\$" || fail "recce.h declares $f, the library lacks it"
done
pass "every function recce.h declares is exported"

cat >"$T/app.c" <<'C'
#include <recce.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 7; i++) {
		recce_span_begin("handle_request");
		recce_counter("queue_depth", i);
		recce_event("cache_miss");
		recce_span_end("handle_request");
	}
	printf("ready %d %s\n", recce_status(), recce_strerror(recce_status()));
	fflush(stdout);
	pause();
	return 0;
}
C
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
run sh -c "cc -o '$T/app' '$T/app.c' \$(pkg-config --cflags --libs recce)"
is "$RC" 0 "cc app.c \$(pkg-config --cflags --libs recce) builds" || show_run
run sh -c "cc -o '$T/app-static' '$T/app.c' \$(pkg-config --cflags recce) \"\$(pkg-config --variable=libdir recce)/librecce.a\" -pthread"
is "$RC" 0 "and against librecce.a" || show_run
ok "the static build needs no librecce.so" sh -c "! ldd '$T/app-static' | grep -q librecce"

for app in app app-static; do
	LD_LIBRARY_PATH="$P/lib" spawn "$T/$app.out" "$T/$app"
	wait_for 10 grep -q '^ready' "$T/$app.out" || fail "$app did not start" "$(cat "$T/$app.out")"
	is "$(cat "$T/$app.out")" "ready 0 success" "$app: recce_status() is 0"
	remove_at_exit "/dev/shm/recce-$PID.events"
	run "$RECCE" events -p "$PID" --format json
	is "$(grep -c '"kind":"span_end","name":"handle_request"' "$OUT")" 7 "$app: 7 spans"
	is "$(grep -c '"kind":"counter","name":"queue_depth","pid":[0-9]*,"tid":[0-9]*,"thread":"app[-a-z]*",.*"value":6' "$OUT")" 1 \
		"$app: the last queue_depth is 6"
	kill -KILL "$PID"
	wait "$PID" 2>/dev/null
done
true

done_testing
