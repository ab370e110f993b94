#!/bin/bash
# The fleet store on a ClickHouse cluster of two shards, laid out as
# docs/fleet-store.md says (local tables on every shard, Distributed
# tables of the same names in front), each shard a server in a network
# namespace of its own, the two joined by a veth pair; on each, an agent
# of a host of its own name exports there, the host names picked so that
# the samples of each go to another shard. recce query answers through
# either server (a plain IN over two Distributed tables is refused,
# Code 288), with the same table as each agent's local store; each shard
# holds its host's windows, every sample's stack is found across the
# shards; a shard stopped holds the exports of both hosts back (none is
# taken as sent while a shard has not got it), and once it is back each
# window of both local stores is in the cluster once.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/split"
. "$(dirname "$0")/clickhouse.sh"

NS1=recce-ch1-$$
NS2=recce-ch2-$$
A1=10.214.0.1 A2=10.214.0.2
ip netns add "$NS1" 2>/dev/null && netns_at_exit "$NS1" && ip netns add "$NS2" &&
	netns_at_exit "$NS2" &&
	ip link add "rc1-$$" netns "$NS1" type veth peer name "rc2-$$" netns "$NS2" &&
	ip -n "$NS1" addr add "$A1/24" dev "rc1-$$" && ip -n "$NS2" addr add "$A2/24" dev "rc2-$$" &&
	ip -n "$NS1" link set "rc1-$$" up && ip -n "$NS2" link set "rc2-$$" up &&
	ip -n "$NS1" link set lo up && ip -n "$NS2" link set lo up ||
	skip_all "network namespaces cannot be made here (ip netns, as root)"
IN1=(ip netns exec "$NS1")
IN2=(ip netns exec "$NS2")

for i in 1 2; do
	eval "addr=\$A$i"
	# shellcheck disable=SC2154
	ch_config "$T/ch$i" 8123 9000 "$addr" "$A1:9000" "$A2:9000"
done
# sql N QUERY: server N's answer to QUERY, in TabSeparated.
sql()
{
	local addr
	eval "addr=\$A$1"
	ip netns exec "$(eval echo "\$NS$1")" curl -sf --data-binary "$2" "http://$addr:8123/"
}
start_shard()
{
	local addr
	eval "addr=\$A$1"
	eval "ch_start \"\$T/ch$1\" \"http://$addr:8123\" \"\${IN$1[@]}\""
	eval "CH$1=\$CHPID"
}
start_shard 1
start_shard 2
is "$(sql 1 "SELECT count() FROM system.clusters WHERE cluster = 'profiles'")" 2 \
	"two servers in two namespaces, each knowing the cluster of both as its shards"

# The layout of docs/fleet-store.md, but for replication (which wants
# ZooKeeper): the same on both servers.
for i in 1 2; do
	sql "$i" "CREATE DATABASE recce_local" &&
		sql "$i" "CREATE TABLE recce_local.stacks (day Date, stack_hash UInt64,
		functions Array(String), files Array(String), lines Array(UInt32),
		modules Array(String)) ENGINE = ReplacingMergeTree PARTITION BY day ORDER BY stack_hash" &&
		sql "$i" "CREATE TABLE recce_local.samples (day Date, start_ns Int64, end_ns Int64,
		host String, pid UInt32, comm String, exe String, build_id String, cgroup String,
		tid UInt32, thread String, stack_hash UInt64, samples UInt64, cpu_ns Int64)
		ENGINE = MergeTree PARTITION BY day ORDER BY (host, start_ns, comm, stack_hash)" &&
		sql "$i" "CREATE TABLE recce_local.windows (day Date, start_ns Int64, end_ns Int64,
		host String, samples UInt64, lost UInt64, processes UInt64, agent_cpu_ns Int64)
		ENGINE = MergeTree PARTITION BY day ORDER BY (host, start_ns)" &&
		sql "$i" "CREATE DATABASE recce" &&
		sql "$i" "CREATE TABLE recce.samples AS recce_local.samples
		ENGINE = Distributed(profiles, recce_local, samples, cityHash64(host))" &&
		sql "$i" "CREATE TABLE recce.windows AS recce_local.windows
		ENGINE = Distributed(profiles, recce_local, windows, cityHash64(host))" &&
		sql "$i" "CREATE TABLE recce.stacks AS recce_local.stacks
		ENGINE = Distributed(profiles, recce_local, stacks, stack_hash)" ||
		diag "cannot make the tables on server $i"
done

# Host names whose samples go to shard 1 (H1) and shard 2 (H2): the
# shard is the sharding key modulo the shards' weights, 1 each.
H1="" H2=""
for i in $(seq 1 40); do
	case $(sql 1 "SELECT cityHash64('fleet-host-$i') % 2") in
	0) [ -n "$H1" ] || H1=fleet-host-$i ;;
	1) [ -n "$H2" ] || H2=fleet-host-$i ;;
	esac
done
[ -n "$H1" ] && [ -n "$H2" ] || diag "no host names for both shards: '$H1' '$H2'"

# start_agent N: the agent of host HN in namespace NSN (a UTS namespace
# of its own names it), exporting to the server there; its store in
# $T/storeN, its metrics at METRICSN (reached from NSN).
start_agent()
{
	local host addr
	eval "host=\$H$1 addr=\$A$1"
	eval "spawn \"\$T/agent$1.err\" \"\${IN$1[@]}\" unshare --uts sh -c 'hostname \"\$0\" && exec \"\$@\"' \
		\"$host\" \"\$RECCE\" agent --continuous --socket \"\$T/a$1/a.sock\" --store \"\$T/store$1\" \
		--window 1s --rate 99 --http 127.0.0.1:0 --export \"clickhouse://$addr:8123/recce\" \
		--export-retain 7d"
	eval "AGENT$1=\$PID"
	wait_for 15 grep -q 'metrics at http' "$T/agent$1.err" || diag "$(cat "$T/agent$1.err")"
	eval "METRICS$1=\$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' \"\$T/agent$1.err\")"
}
# metric N NAME: agent N's metric NAME.
metric()
{
	local url
	eval "url=\$METRICS$1"
	eval "\"\${IN$1[@]}\"" curl -s --max-time 20 "$url/metrics" | sed -n "s/^recce_agent_$2 //p"
}
# exported_past N COUNT: agent N has exported more than COUNT windows.
exported_past() { [ "$(metric "$1" windows_exported_total)" -gt "$2" ] 2>/dev/null; }
# next_export N: waits for agent N's next window in the cluster.
next_export()
{
	local n
	n=$(metric "$1" windows_exported_total)
	wait_for 60 exported_past "$1" "${n:-0}"
}
start_agent 1
start_agent 2
like "$(cat "$T/agent1.err")" "exporting every window to ClickHouse at $A1:8123/recce" \
	"the first host's agent exports to the server of its namespace"
next_export 1 || diag "agent 1 exported nothing: $(cat "$T/agent1.err")"
next_export 2 || diag "agent 2 exported nothing: $(cat "$T/agent2.err")"
like "$(cat "$T/agent1.err")" "cannot drop the old days of $A1:8123/recce \\(--export-retain\\): recce\\.(samples|stacks|windows) is a Distributed table: retention drops days from the tables that hold the rows \\(on each shard" \
	"--export-retain over Distributed tables says to drop days on each shard"

T0=$(date +%s.%N)
# The split target under a name of its own: clickhouse.t, beside this
# file in make check, runs split too, and both agents see every process.
cp "$TARGETS/split" "$T/clsplit"
spawn "$T/split.out" "$T/clsplit" 6
SPLIT=$PID
wait_exit 30 "$SPLIT"
is "$WAIT_RC" 0 "the split target ran to its end"
END=$(date +%s.%N)
# The window holding END, from both.
next_export 1 && next_export 1 || diag "agent 1's windows stopped"
next_export 2 && next_export 2 || diag "agent 2's windows stopped"

# --- read through either server ---------------------------------------

for i in 1 2; do
	eval "host=\$H$i addr=\$A$i"
	# shellcheck disable=SC2154
	run "${IN1[@]}" "$RECCE" query --clickhouse "clickhouse://$A1:8123/recce" --from "@$T0" \
		--to "@$END" --host "$host" --comm clsplit -n 0
	is "$RC" 0 "query --clickhouse through Distributed tables exits 0 (host $i)" || show_run
	cp "$OUT" "$T/fleet$i.txt"
	A=$(awk '$4 == "work_a" { sub("%", "", $2); print $2; exit }' "$OUT")
	N=$(query_samples "$(cat "$OUT")")
	share_near "$A" 75 "$N" "host $i: work_a has 75% of split's $N samples in the cluster ($A%)" ||
		diag "$(cat "$OUT")"
	run "$RECCE" query --store "$T/store$i" --from "@$T0" --to "@$END" --comm clsplit -n 0
	is "$(grep -E '^ +[0-9]' "$OUT" | awk '{ print $1, $2, $3, $4 }')" \
		"$(grep -E '^ +[0-9]' "$T/fleet$i.txt" | awk '{ print $1, $2, $3, $4 }')" \
		"host $i: the cluster gives the same table as the agent's own store" ||
		diag "$(diff "$OUT" "$T/fleet$i.txt" | head -n 20)"
done
run "${IN2[@]}" "$RECCE" query --clickhouse "clickhouse://$A2:8123/recce" --from "@$T0" \
	--to "@$END" --host "$H1" --comm clsplit -n 0
is "$RC $(grep -E '^ +[0-9]' "$OUT" | awk '{ print $1, $2, $3, $4 }')" \
	"0 $(grep -E '^ +[0-9]' "$T/fleet1.txt" | awk '{ print $1, $2, $3, $4 }')" \
	"the other server answers the same for host 1" || show_run

is "$(sql 1 "SELECT DISTINCT host FROM recce_local.samples") $(sql 2 "SELECT DISTINCT host FROM recce_local.samples")" \
	"$H1 $H2" "each shard holds the samples of its host alone"
is "$(sql 1 "SELECT DISTINCT host FROM recce_local.windows") $(sql 2 "SELECT DISTINCT host FROM recce_local.windows")" \
	"$H1 $H2" "and its windows"
S1=$(sql 1 "SELECT count() FROM recce_local.stacks")
S2=$(sql 2 "SELECT count() FROM recce_local.stacks")
cmp_ok "$(((${S1:-0} > 0) + (${S2:-0} > 0)))" '==' 2 "the stacks are spread over both shards ($S1 and $S2)"
is "$(sql 1 "SELECT count() FROM recce.samples WHERE stack_hash GLOBAL NOT IN (SELECT stack_hash FROM recce.stacks)")" 0 \
	"every sample's stack is in the cluster"

# --- a shard away and back ----------------------------------------------

# fleet_windows N: host N's windows in the cluster, as local_windows
# gives its store's.
fleet_windows()
{
	local host
	eval "host=\$H$1"
	sql 1 "SELECT start_ns, n FROM (SELECT start_ns FROM recce.windows WHERE host = '$host')
	     ANY LEFT JOIN (SELECT start_ns, sum(samples) AS n FROM recce.samples
	     WHERE host = '$host' GROUP BY start_ns) USING start_ns ORDER BY start_ns FORMAT TSV" |
		tr '\t' ' '
}

# pending_past N COUNT: agent N has more than COUNT windows waiting.
pending_past() { [ "$(metric "$1" windows_export_pending)" -gt "$2" ] 2>/dev/null; }

# A shard that answers but takes no stacks (as one with a full disk or
# too many parts does; here a view that throws on every row): agent 1's
# server is up, and its windows wait. An INSERT into a Distributed table
# that returned before its rows reached their shards would have them
# counted as sent, and lost.
sql 2 "CREATE MATERIALIZED VIEW recce_local.refuse ENGINE = Null
	AS SELECT throwIf(stack_hash != 0) AS refused FROM recce_local.stacks" ||
	diag "cannot make server 2 refuse stacks"
ok "a shard that takes no stacks: the first host's windows wait" wait_for 60 pending_past 1 1
ok "and the second host's" wait_for 60 pending_past 2 1
# Windows wait from the first refused insert, and more while it is
# answered: the warning comes with its answer, maybe after them.
wait_for 60 grep -q "warning: cannot export a window to $A1:8123/recce" "$T/agent1.err" ||
	diag "agent 1 said nothing of its export yet"
like "$(cat "$T/agent1.err")" "warning: cannot export a window to $A1:8123/recce: ClickHouse answered 500: .*throwIf.*: windows wait in $T/store1" \
	"the first host's agent says why, in ClickHouse's words"
sql 2 "DROP TABLE recce_local.refuse" || diag "cannot make server 2 take stacks again"
wait_for 60 eval '! pending_past 1 0' || diag "agent 1's windows still wait: $(metric 1 windows_export_pending)"

# A shard stopped: the same.
kill -TERM "$CH2"
wait_exit 30 "$CH2"
ok "a shard stopped: the first host's windows wait" wait_for 60 pending_past 1 1
ok "and the second host's" wait_for 60 pending_past 2 1
start_shard 2
for i in 1 2; do
	wait_for 60 eval '[ "$(metric '$i' windows_export_pending)" = 0 ]' ||
		diag "agent $i: windows still wait: $(metric $i windows_export_pending)"
	eval "kill -INT \$AGENT$i"
	eval "wait_exit 10 \$AGENT$i"
	is "$WAIT_RC" 0 "agent $i stops with status 0"
	local_windows "$T/store$i" >"$T/local$i"
	fleet_windows "$i" >"$T/cluster$i"
	is "$(cat "$T/cluster$i")" "$(cat "$T/local$i")" \
		"the cluster has every window of host $i's local store once, each with the same samples" ||
		diag "$(diff "$T/local$i" "$T/cluster$i" | head -n 10)"
	cmp_ok "$(grep -c . "$T/local$i")" '>=' 8 "host $i's store has the run's windows"
done

done_testing
