#!/bin/bash
# Debug info by build-id from a real debuginfod server, started here on
# loopback and stopped by its PID at the end, serving the unstripped twin
# of a stripped target. recce asks a server only when told to
# (RECCE_DEBUGINFOD=1 beside DEBUGINFOD_URLS): Debian sets DEBUGINFOD_URLS
# in every login shell, and a profile must not wait on a network unasked.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot-stripped" "$TARGETS/hot"
command -v debuginfod >/dev/null || skip_all "needs debuginfod (Debian package debuginfod)"
command -v curl >/dev/null || skip_all "needs curl"

mkdir "$T/served" "$T/cache"
cp "$TARGETS/hot" "$T/served/"
BID=$(readelf -n "$TARGETS/hot-stripped" | awk '/Build ID/ { print $3 }')
like "$BID" '^[0-9a-f]{40}$' "the stripped target has a build-id"

# A free port: try a few at random until the server starts.
for try in 1 2 3 4 5; do
	PORT=$((20000 + RANDOM % 30000))
	spawn "$T/server.log" debuginfod -F "$T/served" -p "$PORT" -d "$T/db.sqlite"
	SERVER=$PID
	URL=http://127.0.0.1:$PORT
	if wait_for 20 sh -c "curl -sf -o /dev/null '$URL/buildid/$BID/debuginfo'"; then
		break
	fi
	kill "$SERVER" 2>/dev/null
	SERVER=
done
[ -n "$SERVER" ] || { diag "$(tail -5 "$T/server.log")"; fail "debuginfod starts" "it did not"; exit 1; }
pass "debuginfod serves the debug info of build-id $BID"

export DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/cache
RECCE_DEBUGINFOD=1 run "$RECCE" record -o "$T/p.pb.gz" -- "$TARGETS/hot-stripped" 0.5
is "$RC" 0 "record of the stripped target with RECCE_DEBUGINFOD=1 exits 0" || show_run
run "$RECCE" report --folded "$T/p.pb.gz"
like "$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')" ';main;burn_cpu$' \
	"its functions are named from the server's debug info"
run "$RECCE" report "$T/p.pb.gz"
like "$(cat "$OUT")" 'burn_cpu +[^ ]*hot\.c:[0-9]+' "with their source lines"
ok "the debug file is in the cache given" test -e "$T/cache/$BID/debuginfo"

# Unasked, recce does not go to the network even with DEBUGINFOD_URLS set
# (nor finds the names in the symbol table kept by the run before).
rm -rf "$T/cache" "$RECCE_CACHE_DIR"
run "$RECCE" record -o "$T/q.pb.gz" -- "$TARGETS/hot-stripped" 0.5
is "$RC" 0 "record without RECCE_DEBUGINFOD exits 0" || show_run
run "$RECCE" report --folded "$T/q.pb.gz"
unlike "$(cat "$OUT")" 'burn_cpu' "and names nothing from the server"
ok "nor fills the cache" test ! -e "$T/cache/$BID"
kill "$SERVER"
