#!/bin/sh
# The config of a ClickHouse server (Debian's clickhouse-server, 18.16)
# for the fleet store's tests and bench/fleet-store.sh, in a directory of
# its own:
#
#     sh scripts/clickhouse-config.sh DIR HTTP_PORT TCP_PORT ADDR [SHARD...]
#
# writes DIR/config.xml and DIR/users.xml for a server that listens on
# ADDR, keeps its data, logs and temporary files in DIR, and has two
# users, from loopback and ADDR's /24: default, without a password, and
# recce, with fleet-pw-3141, their queries in system.query_log. With
# SHARDs (HOST:PORT of each one's native interface), the cluster
# 'profiles' of those shards, one replica each. A query may use
# CH_MAX_MEMORY bytes (2 GB unless said).
set -eu
[ $# -ge 4 ] || {
	echo "usage: clickhouse-config.sh DIR HTTP_PORT TCP_PORT ADDR [SHARD...]" >&2
	exit 2
}
dir=$1 http=$2 tcp=$3 addr=$4
shift 4
nets="<ip>127.0.0.1</ip>"
[ "$addr" = 127.0.0.1 ] || nets="$nets<ip>${addr%.*}.0/24</ip>"
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
  <profiles><default><max_memory_usage>${CH_MAX_MEMORY:-2000000000}</max_memory_usage><log_queries>1</log_queries></default></profiles>
  <users><default><password></password><networks>$nets</networks>
    <profile>default</profile><quota>default</quota></default>
    <recce><password>fleet-pw-3141</password><networks>$nets</networks>
    <profile>default</profile><quota>default</quota></recce></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
XML
