#!/bin/sh
# bench/fleet-store.sh: the fleet store at fleet scale, for the numbers of
# docs/fleet-store.md. A real agent profiles this machine for 70 s in
# windows of 10 s at 19 Hz (its default) while redis-server serves
# redis-benchmark and a Python loop runs; then bench/fleet-sim sends its
# last windows again as 1,000 and 10,000 hosts, each window alone
# (--export-batch 1, one round of 10 s) and six at a time (--export-batch
# 6, one round of a minute), 8 senders at once, into a ClickHouse server
# run here from a temporary config. For each: what the fleet asks of the
# server (rows and INSERTs a second), how long the server took to take a
# round against the span the round stands for, and the bytes a host-day
# takes on disk once parts are merged; and how long the fleet page takes
# to load ten minutes of 1,000 hosts, its answers alone and drawn in
# headless Chromium. Writes bench/results/fleet-store.md.
#
#     sh bench/fleet-store.sh        after `make all build/bench/fleet-sim`
#
# FLEET_HOSTS lists the fleet sizes (' ': none, the page alone); FLEET_OUT
# names the file written.
set -eu
B=${B:-build}
RECCE=${RECCE:-$B/recce}
SIM=$B/bench/fleet-sim
OUT=${FLEET_OUT:-bench/results/fleet-store.md}
HOSTS=${FLEET_HOSTS:-1000 10000}
SENDERS=8

die() {
	echo "fleet-store: $*" >&2
	exit 1
}
if [ ! -x "$RECCE" ] || [ ! -x "$SIM" ]; then
	die "run make all $B/bench/fleet-sim first"
fi
for t in clickhouse-server redis-server redis-benchmark redis-cli curl python3 node; do
	command -v "$t" >/dev/null || die "$t is missing: sh scripts/install-deps.sh"
done
TMP=$(mktemp -d)
CHPID=""
VIEW=""
cleanup() {
	[ -z "$VIEW" ] || kill "$VIEW" 2>/dev/null || true
	[ -z "$CHPID" ] || { kill "$CHPID" 2>/dev/null && wait "$CHPID" 2>/dev/null; } || true
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HPORT=$(port)
TPORT=$(port)
RPORT=$(port)

CH_MAX_MEMORY=4000000000 sh scripts/clickhouse-config.sh "$TMP/ch" "$HPORT" "$TPORT" 127.0.0.1
(cd "$TMP/ch" && exec clickhouse-server --config-file="$TMP/ch/config.xml" >"$TMP/ch/out" 2>&1) &
CHPID=$!
sql() { curl -sf --data-binary "$1" "http://127.0.0.1:$HPORT/"; }
i=0
until sql "SELECT 1" >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || die "clickhouse-server did not start: $(tail -n 3 "$TMP/ch/error.log")"
	sleep 0.1
done

# --- one real host's windows ----------------------------------------------

echo "fleet-store: profiling this machine for 70 s (redis-benchmark, a Python loop)" >&2
redis-server --port "$RPORT" --save "" --appendonly no >/dev/null 2>&1 &
sleep 0.5
timeout 75 redis-benchmark -p "$RPORT" -q -l -n 100000 >/dev/null 2>&1 &
LOAD1=$!
timeout 75 python3 -c 'while True: sum(i * i for i in range(1000))' &
LOAD2=$!
timeout -s INT 70 "$RECCE" agent --continuous --socket "$TMP/agent.sock" --store "$TMP/store" \
	--http off >/dev/null 2>"$TMP/agent.err" || true
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1 || true

# --- the fleet --------------------------------------------------------------

event() { sql "SELECT value FROM system.events WHERE event = '$1'" || echo 0; }
{
	echo "# The fleet store at fleet scale"
	echo
	echo "\`sh bench/fleet-store.sh\`, $(date -u +%Y-%m-%d), ClickHouse $(sql 'SELECT version()'),"
	echo "$(nproc) CPUs; the windows of a real agent (10 s, 19 Hz) on this machine under"
	echo "redis-benchmark and a Python loop, sent as HOSTS hosts by $SENDERS senders at once."
	echo "A round is one window of every host (batch 1) or six (batch 6); it keeps up"
	echo "when the server takes it in less than the span it stands for."
	echo
	echo "| hosts | batch | rows a host-window | fleet rows/s | fleet INSERTs/s | round took | span | keeps up | bytes a host-day |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT.tmp"
for hosts in $HOSTS; do
	for batch in 1 6; do
		db=fleet_${hosts}_$batch
		ins0=$(event InsertQuery)
		line=$("$SIM" "$TMP/store" "clickhouse://127.0.0.1:$HPORT/$db" "$hosts" "$batch" "$SENDERS") ||
			die "the simulator failed: $line"
		ins1=$(event InsertQuery)
		secs=$(echo "$line" | sed 's/.*seconds=\([0-9.]*\).*/\1/')
		rows=$(sql "SELECT count() FROM $db.samples")
		for t in samples windows stacks; do
			sql "OPTIMIZE TABLE $db.$t FINAL" >/dev/null
		done
		bytes=$(sql "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '$db' AND active")
		awk -v h="$hosts" -v b="$batch" -v r="$rows" -v s="$secs" -v i="$((ins1 - ins0))" \
			-v by="$bytes" 'BEGIN {
			span = 10 * b
			printf "| %d | %d | %.0f | %.0f | %.0f | %.1f s | %d s | %.2fx | %.0f KiB |\n",
				h, b, r / (h * b), r / span, i / span, s, span, span / s,
				by / (h * b) * 8640 / 1024 }' >>"$OUT.tmp"
		echo "fleet-store: $line" >&2
		sql "DROP DATABASE $db" >/dev/null
	done
done
# --- the fleet page ---------------------------------------------------------

# Ten minutes of PAGE_HOSTS hosts (ten rounds of six windows), then the
# requests the fleet page makes for them (recce view --clickhouse): the
# chart, the flamegraph and the top table, each alone; and a load as the
# page makes it: the chart, then the flamegraph and the top table at once
# (the second of the pair answered from the profile the first read); for
# the fleet and for one host; best of three of each.
PAGE_HOSTS=${FLEET_PAGE_HOSTS:-1000}
db=fleet_page
line=$("$SIM" "$TMP/store" "clickhouse://127.0.0.1:$HPORT/$db" "$PAGE_HOSTS" 6 "$SENDERS" 1 10) ||
	die "the simulator failed: $line"
echo "fleet-store: page: $line" >&2
"$RECCE" view --clickhouse "clickhouse://127.0.0.1:$HPORT/$db" 2>"$TMP/view.err" &
VIEW=$!
i=0
until grep -q 'token=' "$TMP/view.err"; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || die "recce view did not start: $(cat "$TMP/view.err")"
	sleep 0.1
done
PAGE=$(sed -n 's/.* on \(http:\/\/[0-9.:]*\/\)?token=\([0-9a-f]*\).*/\1 \2/p' "$TMP/view.err")
TOKEN=${PAGE#* }
PAGE=${PAGE% *}
range=$(sql "SELECT min(start_ns), max(end_ns) FROM $db.windows" | awk '{ printf "from=%s&to=%s", $1, $2 }')
# took PATH: the best of three times of PATH's answer, in seconds (each
# asked apart: n= makes it no pair's).
took()
{
	for i in 1 2 3; do
		curl -sf -o /dev/null -w '%{time_total}\n' "$PAGE$1&n=$i$2&$range&token=$TOKEN" ||
			die "the page's $1 failed"
	done | sort -n | head -n 1
}
# load QUERY: the best of three loads of the page: the chart, then the
# flamegraph and the top table at once, in seconds.
load()
{
	for i in 1 2 3; do
		q="x=1&l=$i$1&$range&token=$TOKEN"
		t0=$(date +%s.%N)
		curl -sf -o /dev/null "${PAGE}api/series?$q" || die "the page's chart failed"
		curl -sf -Z -o /dev/null -o /dev/null "${PAGE}api/flame?$q" "${PAGE}api/top?$q" ||
			die "the page's flamegraph or top table failed"
		t1=$(date +%s.%N)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
	done | sort -n | head -n 1
}
rows=$(sql "SELECT count() FROM $db.samples")
{
	echo
	echo "The fleet page (\`recce view --clickhouse\`) over ten minutes of $PAGE_HOSTS hosts"
	echo "($rows rows of samples): each request's time alone, best of three; a load of the page"
	echo "is the chart, then the flamegraph and the top table asked at once, as the page asks"
	echo "(one merge in ClickHouse answers both), best of three."
	echo
	echo "| range of | chart | flamegraph | top table | page load |"
	echo "|---|---:|---:|---:|---:|"
	for who in fleet one; do
		h=""
		[ "$who" = one ] && h="&host=sim-00001"
		c=$(took "api/series?x=1" "$h")
		f=$(took "api/flame?x=1" "$h")
		t=$(took "api/top?x=1" "$h")
		l=$(load "$h")
		awk -v w="$who" -v n="$PAGE_HOSTS" -v c="$c" -v f="$f" -v t="$t" -v l="$l" 'BEGIN {
			printf "| %s | %.2f s | %.2f s | %.2f s | %.2f s |\n",
				w == "fleet" ? n " hosts" : "one host", c, f, t, l }'
	done
} >>"$OUT.tmp"
# The same loads in headless Chromium (bench/page-load.js): the answers,
# the pickers' lists and the page's drawing of them, to a frame painted.
shown=$(node bench/page-load.js "$PAGE?token=$TOKEN") || die "the page in Chromium: $shown"
echo "$shown" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print()
print("In headless Chromium (bench/page-load.js, best of three, each in a fresh browser), from")
print("the navigation to the first frame painted after the chart, the flamegraph (%d frames)" % r["frames"])
print("and the top table are drawn: %.2f s for the fleet; and after the pickers of hosts and" % r["drawn_s"])
print("cgroups, asked then, are filled: %.2f s. From a pick of one host in the host picker to" % r["loaded_s"])
print("its frame painted: %.2f s." % r["host_s"])' >>"$OUT.tmp"
kill -INT "$VIEW" 2>/dev/null || true
wait "$VIEW" 2>/dev/null || true
sql "DROP DATABASE $db" >/dev/null

wait "$LOAD1" "$LOAD2" 2>/dev/null || true
mv "$OUT.tmp" "$OUT"
cat "$OUT"
