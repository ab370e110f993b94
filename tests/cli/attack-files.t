#!/bin/bash
# Attacks on the files of a root agent and of its clients, by a second
# user the test makes: she reaches the agent's socket, and while her
# command runs she swaps the command's directory for a link to a root
# directory, or plants links in it from her own command; the agent must
# neither send her root's files, nor remove them, nor move them. Then
# root's own `--node -o FILE` in a directory she may write: a link she
# planted at FILE.part is not followed, and a device given as FILE is
# written in place, not replaced by a regular file.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"
make_user
cp "$RECCE" "$TARGETS/hot" "$T/bin/"
mkdir -m 0700 "$T/victim"
echo "root secret" > "$T/victim/secret.txt"
echo "root other" > "$T/victim/other.txt"

mkdir -m 0755 "$T/sock"
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$T/sock/agent.sock" --files "$T/files"
AGENT=$PID
wait_for 10 grep -q 'serving on' "$T/agent.err" || diag "the agent did not start: $(cat "$T/agent.err")"
chmod 0666 "$T/sock/agent.sock" # an admin let every user in

# as_her CMD...: CMD as the second user, in her directory.
as_her()
{
	run runuser -u "$U" -- env -C "$T/home" HOME="$T/home" "$@"
}

spawn "$T/busy.out" runuser -u "$U" -- "$T/bin/hot" 120
RUNUSER=$PID
wait_for 10 pgrep -P "$RUNUSER" -x hot > /dev/null || diag "her target did not start"
BUSY=$(pgrep -P "$RUNUSER" -x hot)

# --- the command's directory swapped for a link --------------------------

# Her loop: every agent directory in /tmp (and the command's own inside
# it) that is hers is moved away and replaced by a link to root's
# directory, until the test says stop.
cat > "$T/bin/swap.sh" <<EOF
#!/bin/sh
while [ ! -e "$T/home/stop" ]; do
	for d in /tmp/recce-agent-*; do
		for x in "\$d" "\$d/work"; do
			[ -O "\$x" ] && [ ! -L "\$x" ] || continue
			mv "\$x" "\$x.moved" 2>/dev/null && ln -s "$T/victim" "\$x" && echo "swapped \$x" >> "$T/home/swapped"
		done
	done
	sleep 0.01
done
EOF
chmod 0755 "$T/bin/swap.sh"
spawn "$T/swap.out" runuser -u "$U" -- "$T/bin/swap.sh"
as_her "$T/bin/recce" --node "unix:$T/sock/agent.sock" record -p "$BUSY" -d 2 -o secret.txt
touch "$T/home/stop"
diag "her swaps: $(cat "$T/home/swapped" 2>/dev/null | wc -l)"
ok "she is never sent root's file through a swapped directory" bash -c "! grep -qs 'root secret' '$T/home/secret.txt'"
is "$(cat "$T/victim/secret.txt" "$T/victim/other.txt" 2>&1)" "root secret
root other" "root's files are still there, unchanged"
ok "the agent's directory was hers to change in no way" test ! -e "$T/home/swapped"
rm -rf /tmp/recce-agent-*.moved /tmp/recce-agent-*/work.moved

# --- links planted by her own command -------------------------------------

as_her "$T/bin/recce" --node "unix:$T/sock/agent.sock" record -d 1 -o secret.txt -- \
	sh -c "ln -s '$T/victim/secret.txt' secret.txt; ln -s '$T/victim' dir; ln -s '$T/victim/other.txt' other.txt; exec '$T/bin/hot' 1"
ok "a link her command planted under the output's name is not followed" bash -c "! grep -qs 'root secret' '$T/home/secret.txt'"
is "$(cat "$T/victim/secret.txt" "$T/victim/other.txt" 2>&1)" "root secret
root other" "and removing her directory removed her links, not root's files"
as_her "$T/bin/recce" --node "unix:$T/sock/agent.sock" trace -p "$BUSY" burn_cpu --count 1 -o kept --wrap 1M,2
as_her "$T/bin/recce" --node "unix:$T/sock/agent.sock" files
unlike "$(cat "$OUT")" "secret|other" "nothing of root's is kept as her files"

# --- root's --node -o in a directory she may write ------------------------

mkdir -m 0777 "$T/shared"
echo "root's file" > "$T/root-file"
runuser -u "$U" -- ln -s "$T/root-file" "$T/shared/out.pb.gz.part"
run "$RECCE" --node "unix:$T/sock/agent.sock" record -p "$BUSY" -d 0.5 -o "$T/shared/out.pb.gz"
is "$RC" 0 "root's record through the agent writes its profile" || show_run
is "$(head -c 11 "$T/root-file" | tr -d '\0')" "root's file" "a link she planted at FILE.part is not followed"
ok "the profile is a regular file at FILE" test -f "$T/shared/out.pb.gz" -a ! -L "$T/shared/out.pb.gz"
run "$RECCE" report -n 1 "$T/shared/out.pb.gz"
is "$RC" 0 "and it is whole" || show_run
mknod "$T/null" c 1 3
run "$RECCE" --node "unix:$T/sock/agent.sock" record -p "$BUSY" -d 0.5 -o "$T/null"
is "$RC" 0 "-o a device through the agent exits 0" || show_run
ok "the device is written in place, not replaced by a regular file" test -c "$T/null"

ok "the agent still runs" kill -0 "$AGENT"

done_testing
