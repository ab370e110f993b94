# ClickHouse servers for the fleet store's tests (sourced after lib.sh):
# Debian's clickhouse-server, each from a config made here in a
# directory of its own, on loopback or in a network namespace.
CH_SERVER=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
[ -x "$CH_SERVER" ] || skip_all "clickhouse-server is not installed (Debian package clickhouse-server)"
command -v curl >/dev/null || skip_all "curl is not installed"

# ch_config DIR HTTP_PORT TCP_PORT ADDR [SHARD...]: the config of a
# server in DIR that listens on ADDR (scripts/clickhouse-config.sh).
ch_config() { sh "$ROOT/scripts/clickhouse-config.sh" "$@"; }

# local_windows STORE: each window's start and its processes' samples,
# one line each, in the agent's local store in STORE.
local_windows()
{
	python3 - "$1/store.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = ("SELECT w.start_ns, coalesce((SELECT sum(samples) FROM profiles p"
     " WHERE p.start_ns = w.start_ns), 0) FROM windows w ORDER BY w.start_ns")
for start, n in db.execute(q):
    print(start, n)
PY
}

# ch_start DIR URL [PREFIX...]: the server of DIR's config, run under
# PREFIX (ip netns exec NS), until URL/ping answers there; sets CHPID.
ch_start()
{
	local dir=$1 url=$2
	shift 2
	spawn "$dir/out" "$@" "$CH_SERVER" --config-file="$dir/config.xml"
	CHPID=$PID
	wait_for 60 "$@" curl -sf "$url/ping" -o /dev/null ||
		diag "clickhouse-server did not answer: $(tail -n 5 "$dir/error.log" "$dir/out" 2>&1)"
}
