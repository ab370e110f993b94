#!/bin/bash
# The systemd units of contrib/: each one systemd-analyze verify accepts;
# the continuous agent's sandboxed (its exposure as systemd-analyze
# security rates it, offline) and able to profile with exactly the
# capabilities it keeps: its ExecStart run as root under its bounding
# set and no new privileges (setpriv), the unit's paths moved into the
# test's directory, its options from contrib/agent.conf, stores windows
# of a target's CPU; without CAP_PERFMON, it says why it cannot.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"
command -v systemd-analyze >/dev/null && command -v setpriv >/dev/null ||
	skip_all "needs systemd-analyze (systemd) and setpriv (util-linux)"

mkdir -p "$T/prefix/bin"
ln -s "$RECCE" "$T/prefix/bin/recce"
for u in recce-agent recce-agent-continuous; do
	sed -e "s|@PREFIX@|$T/prefix|" "contrib/$u.service.in" >"$T/$u.service"
	run systemd-analyze verify --man=no "$T/$u.service"
	is "$RC" 0 "systemd-analyze verify accepts $u.service" || show_run
done
U="$T/recce-agent-continuous.service"
run systemd-analyze security --offline=true "$U"
level=$(sed -n 's/.*Overall exposure level for recce-agent-continuous.service: \([0-9.]*\).*/\1/p' "$OUT")
ok "the continuous agent's unit is sandboxed: exposure $level of 10, below 5" \
	perl -e "exit(('$level' ne '' && '$level' < 5) ? 0 : 1)" || show_run

# The unit's ExecStart and capabilities, as systemd would run them.
exec_start=$(sed -n 's/^ExecStart=//p' "$U")
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$U" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
like "$caps" '\+perfmon' "it keeps CAP_PERFMON ($caps)"
mkdir -p "$T/etc" "$T/run" "$T/lib"
sed 's/^http .*/http 127.0.0.1:0/' contrib/agent.conf >"$T/etc/agent.conf"
chmod 0644 "$T/etc/agent.conf"
# shellcheck disable=SC2206
args=($(printf '%s' "$exec_start" | sed "s|/etc/recce|$T/etc|g; s|/run/recce|$T/run|g; s|/var/lib/recce|$T/lib|g"))
args=("${args[@]:1}") # recce, through the prefix

spawn "$T/hot.out" "$TARGETS/hot"
spawn "$T/agent.err" setpriv --bounding-set "-all,$caps" --inh-caps -all --no-new-privs -- \
	"$RECCE" "${args[@]}" --window 2s
AGENT=$PID
ok "the agent starts under the unit's capabilities" \
	wait_for 30 grep -q 'profiling every process\|error' "$T/agent.err"
like "$(cat "$T/agent.err")" "profiling every process at 19 Hz per CPU in windows of 2s into $T/lib/store" \
	"with the unit's store and contrib/agent.conf's rate" || diag "$(cat "$T/agent.err")"
_hot_stored() { "$RECCE" query --store "$T/lib/store" --comm hot -n 1 2>/dev/null | grep -q burn_cpu; }
ok "a window of the target's CPU is stored" wait_for 60 _hot_stored
kill -INT "$AGENT"
wait_exit 10 "$AGENT"
is "$WAIT_RC" 0 "and the agent stops with status 0"

run setpriv --bounding-set "-all,${caps//+perfmon,/}" --inh-caps -all --no-new-privs -- \
	"$RECCE" "${args[@]}" --window 2s --store "$T/lib/store2"
is "$RC" 1 "without CAP_PERFMON it exits 1"
like "$(cat "$ERR")" 'perf_event_open refused system-wide sampling' "and says why"

done_testing
