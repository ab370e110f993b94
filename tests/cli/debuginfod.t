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

# On a terminal, each download shows a line while it runs.
rm -rf "$T/cache" "$RECCE_CACHE_DIR"
if command -v script >/dev/null; then
	RECCE_DEBUGINFOD=1 run script -qec "'$RECCE' record -o '$T/tty.pb.gz' -- '$TARGETS/hot-stripped' 0.5" /dev/null
	like "$(tr '\r' '\n' <"$OUT")" 'Downloading from http://127\.0\.0\.1' "on a terminal, a download shows a line"
else
	skip 1 "no script(1)"
fi

# Unasked, recce does not go to the network even with DEBUGINFOD_URLS set
# (nor finds the names in the symbol table kept by the run before).
rm -rf "$T/cache" "$RECCE_CACHE_DIR"
run "$RECCE" record -o "$T/q.pb.gz" -- "$TARGETS/hot-stripped" 0.5
is "$RC" 0 "record without RECCE_DEBUGINFOD exits 0" || show_run
run "$RECCE" report --folded "$T/q.pb.gz"
unlike "$(cat "$OUT")" 'burn_cpu' "and names nothing from the server"
ok "nor fills the cache" test ! -e "$T/cache/$BID"

# Late: recorded without names and without the server, named afterwards
# by recce symbolize from the server's debug info (the symbol table kept
# while recording had none, and is rebuilt with it).
rm -rf "$T/cache" "$RECCE_CACHE_DIR"
run "$RECCE" record --no-symbolize -o "$T/r.pb.gz" -- "$TARGETS/hot-stripped" 0.5
is "$RC" 0 "record --no-symbolize of the stripped target exits 0" || show_run
RECCE_DEBUGINFOD=1 run "$RECCE" symbolize "$T/r.pb.gz"
is "$RC" 0 "symbolize with RECCE_DEBUGINFOD=1 exits 0" || show_run
run "$RECCE" report "$T/r.pb.gz"
like "$(cat "$OUT")" 'burn_cpu +[^ ]*hot\.c:[0-9]+' "it names the profile from the server's debug info"
kill "$SERVER"

# A server that accepts and never answers: recce gives up on it after
# one timeout (no retries), says so, asks no server again in that run,
# and still writes the profile.
for try in 1 2 3 4 5; do
	PORT=$((20000 + RANDOM % 30000))
	spawn "$T/silent.log" perl -MIO::Socket::INET -e '
		$| = 1;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1:$ARGV[0]", Listen => 16,
			ReuseAddr => 1) or die "listen: $!\n";
		print "listening\n";
		my @keep;
		while (my $c = $s->accept) { push @keep, $c; print "accepted\n" }' "$PORT"
	wait_for 5 grep -q listening "$T/silent.log" && break
done
rm -rf "$T/cache" "$RECCE_CACHE_DIR"
RECCE_DEBUGINFOD=1 DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_TIMEOUT=2 \
	run "$RECCE" record -o "$T/s.pb.gz" -- "$TARGETS/hot-stripped" 0.5
is "$RC" 0 "record with a server that never answers exits 0" || show_run
ok "and writes the profile" test -s "$T/s.pb.gz"
like "$(cat "$ERR")" 'a debuginfod server sent nothing for 2 s \(DEBUGINFOD_TIMEOUT\): recce stopped asking' \
	"it says it gave up on the server"
is "$(grep -c accepted "$T/silent.log")" 1 "after asking it once"

done_testing
