#!/bin/bash
# recce as an ordinary user: at kernel.perf_event_paranoid=2 it records
# user-space code only and says so; where the kernel refuses outright
# (paranoid 3 on Debian's kernels), it names the sysctl and CAP_PERFMON.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

PARANOID=/proc/sys/kernel/perf_event_paranoid
[ "$(id -u)" = 0 ] || skip_all "needs root to run recce as another user"
command -v setpriv >/dev/null || skip_all "needs setpriv (util-linux)"
if [ "$(cat "$PARANOID")" != 2 ]; then
	set_sysctl "$PARANOID" 2 && [ "$(cat "$PARANOID")" = 2 ] ||
		skip_all "kernel.perf_event_paranoid is $(cat "$PARANOID") and cannot be set to 2"
fi

# The user nobody needs a directory to write in and the way to it.
mkdir -m 0777 "$T/nobody"
chmod o+x "$T"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${NOBODY[@]}" test -x "$RECCE" || skip_all "the user nobody cannot run $RECCE"

P="$T/nobody/user.pb.gz"
run "${NOBODY[@]}" "$RECCE" record -o "$P" -- "$TARGETS/hot" 1
is "$RC" 0 "at perf_event_paranoid=2 an ordinary user records its own command" || show_run
like "$(cat "$ERR")" 'warning: .*perf_event_paranoid.*user' \
	"recce warns that it records user-space code only"
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$FOLDED" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.9" "burn_cpu is the leaf of the samples ($BURN of $TOTAL)"
unlike "$FOLDED" 'asm_sysvec|entry_SYSCALL|irqentry|\[kernel' "no kernel frames are claimed"
run "$RECCE" report "$P"
like "$(cat "$OUT")" '^kernel-frames: none' "the profile says it has no kernel frames"

# Paranoid 3: Debian's kernels refuse unprivileged perf_event_open; upstream
# kernels treat 3 as 2.
if set_sysctl "$PARANOID" 3 && [ "$(cat "$PARANOID")" = 3 ]; then
	run "${NOBODY[@]}" "$RECCE" record -o "$T/nobody/p3.pb.gz" -- "$TARGETS/hot" 1
	if [ "$RC" = 0 ]; then
		skip_env 3 "this kernel does not refuse perf_event_open at paranoid 3"
	else
		is "$RC" 1 "at perf_event_paranoid=3 the refusal is a runtime error" || show_run
		like "$(cat "$ERR")" 'perf_event_paranoid' "the message names kernel.perf_event_paranoid"
		like "$(cat "$ERR")" 'CAP_PERFMON' "and CAP_PERFMON"
	fi
else
	skip 3 "kernel.perf_event_paranoid cannot be set to 3 here"
fi

done_testing
