#!/bin/bash
# Files kept on a node: a trace run through an agent with -o and --wrap
# leaves its files on the node (in the agent's --files directory, per
# client), not here; `recce files` lists them, `recce fetch` brings them
# here byte for byte, and `recce replay` reads them with the exact count
# of calls; --remove deletes them from the node; a name that matches
# nothing, and a usage error, are refused; the audit log has each.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

SOCK="$T/agent/a.sock"
NODE="unix:$SOCK"
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$SOCK" --files "$T/files"
AGENT=$PID
wait_for 5 test -S "$SOCK" || diag "the agent did not make its socket: $(cat "$T/agent.err")"
KEPT="$T/files/uid-$(id -u)"

spawn_exec "$T/calls.out" "$TARGETS/calls" 50 700 0
CALLS=$PID
mkdir -p "$T/here" "$T/there"
cd "$T/here" || exit 1
run "$RECCE" --node "$NODE" trace -p "$CALLS" add_pair --return --count 200 -o calls --wrap 1M,2
is "$RC" 0 "a wrapped trace on the node exits 0" || show_run
like "$(cat "$ERR")" "the files of 'calls' stay on $NODE: 'recce --node $NODE files' lists them, 'recce --node $NODE fetch calls' brings them here" \
	"and says its files stay on the node, and how to get them"
is "$(ls "$T/here")" "" "nothing of them arrives here"
ok "they are on the node, in the client's own directory" test -s "$KEPT/calls.0"
is "$(stat -c %a "$KEPT")" 700 "which is 0700"

run "$RECCE" --node "$NODE" files
is "$RC" 0 "files exits 0" || show_run
like "$(cat "$OUT")" "^calls\\.0 +$(stat -c %s "$KEPT/calls.0") " "it lists them with their sizes"

cd "$T/there" || exit 1
run "$RECCE" --node "$NODE" fetch calls
is "$RC" 0 "fetch exits 0" || show_run
ok "the set arrives" test -s "$T/there/calls.0"
# Byte for byte but for the host record after the header (64 + 152
# bytes), where fetch writes the node's name and clock.
SAME=yes
for f in "$KEPT"/calls.*; do
	cmp -s -n 64 "$f" "$T/there/${f##*/}" && cmp -s -i 216 "$f" "$T/there/${f##*/}" ||
		SAME="no: ${f##*/} differs"
done
is "$SAME" yes "every file is the node's, byte for byte, but for its host record"
run "$RECCE" replay "$T"/there/calls.*
is "$RC" 0 "replay reads the fetched set" || show_run
is "$(grep -c 'add_pair(' "$OUT")" 200 "with exactly the 200 calls traced"
is "$(grep -c 'add_pair/[0-9]* -->' "$OUT")" 200 "and their 200 returns"
ok "fetch leaves them on the node" test -s "$KEPT/calls.0"
run "$RECCE" trace -p "$CALLS" add_pair --count 2 -o "$T/here.trc"
run "$RECCE" replay "$T"/there/calls.* "$T/here.trc"
is "$(grep -c "^$NODE [0-9:.]* .*add_pair(" "$OUT")" 200 \
	"a fetched set names its node: replayed with a file of this host, its lines say so"
is "$(grep -c "^$(hostname) [0-9:.]* .*add_pair(" "$OUT")" 2 "and the file of this host, this host"

rm -f "$T"/there/calls.*
run "$RECCE" --node "$NODE" fetch calls --remove
is "$RC" 0 "fetch --remove exits 0" || show_run
ok "brings them" test -s "$T/there/calls.0"
is "$(ls "$KEPT")" "" "and deletes them from the node"
run "$RECCE" --node "$NODE" files
like "$(cat "$OUT")" 'no files are kept on this node' "files then says there are none"

run "$RECCE" --node "$NODE" fetch calls
is "$RC" 1 "fetching a name that matches nothing exits 1"
like "$(cat "$ERR")" "no file 'calls' is kept on this node: 'recce --node NODE files' lists them" \
	"and says so"
run "$RECCE" --node "$NODE" fetch ../etc/passwd
is "$RC" 1 "a name with a slash is refused"
like "$(cat "$ERR")" 'named by its base name only' "with why"
run "$RECCE" --node "$NODE" fetch
is "$RC" 2 "fetch without a name is a usage error"
run "$RECCE" --node "$NODE" files extra
is "$RC" 2 "files with an argument is a usage error"
run "$RECCE" fetch
is "$RC" 2 "so is a local fetch without a name"

like "$(cat "$T/agent/audit.log")" 'recce fetch calls' "the audit log has the fetches"
like "$(cat "$T/agent/audit.log")" 'recce files' "and the listings"
ok "the target still runs" kill -0 "$CALLS"
kill -INT "$AGENT"
wait_exit 10 "$AGENT"
is "$WAIT_RC" 0 "the agent stops with status 0"

done_testing
