# ClickHouse servers for the fleet store's tests (sourced after lib.sh):
# Debian's clickhouse-server, each from a config made here in a
# directory of its own, on loopback or in a network namespace.
CH_SERVER=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
[ -x "$CH_SERVER" ] || skip_all "clickhouse-server is not installed (Debian package clickhouse-server)"
command -v curl >/dev/null || skip_all "curl is not installed"

# ch_config DIR HTTP_PORT TCP_PORT ADDR [SHARD...]: the config of a
# server in DIR that listens on ADDR. Its users, from loopback and ADDR's
# /24: default, without a password, and recce, with fleet-pw-3141, their
# queries in system.query_log. With
# SHARDs (HOST:PORT of each one's native interface), the cluster
# 'profiles' of those shards, one replica each.
ch_config()
{
	local dir=$1 http=$2 tcp=$3 addr=$4 shard nets="<ip>127.0.0.1</ip>"
	shift 4
	[ "$addr" = 127.0.0.1 ] || nets+="<ip>${addr%.*}.0/24</ip>"
	mkdir -p "$dir"
	{
		cat <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/server.log</log><errorlog>$dir/error.log</errorlog></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>$addr</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
XML
		if [ $# -gt 0 ]; then
			echo "  <remote_servers><profiles>"
			for shard; do
				echo "    <shard><replica><host>${shard%:*}</host><port>${shard##*:}</port></replica></shard>"
			done
			echo "  </profiles></remote_servers>"
		fi
		echo "</yandex>"
	} >"$dir/config.xml"
	cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage><log_queries>1</log_queries></default></profiles>
  <users><default><password></password><networks>$nets</networks>
    <profile>default</profile><quota>default</quota></default>
    <recce><password>fleet-pw-3141</password><networks>$nets</networks>
    <profile>default</profile><quota>default</quota></recce></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
XML
}

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
