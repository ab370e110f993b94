# A small TAP library for recce's black-box tests (bash). Each tests/cli/*.t
# sources it, then calls the helpers below; `prove tests/cli/` runs them.
#
#   . "$(dirname "$0")/lib.sh"
#   plan 3
#   run "$RECCE" record -o "$T/x.pb.gz" -- "$TARGETS/hot" 1
#   is "$RC" 0 "record exits 0"
#   like "$(cat "$ERR")" 'recce: [0-9]+ samples' "record prints a summary"
#
# Environment: RECCE (the binary, default ./recce at the repo root) and B (the
# build directory holding targets/, default build). Each test file gets its
# own temporary directory $T. Every process started with spawn or
# spawn_recce is killed on exit, however the test ends, and a sysctl changed
# with set_sysctl is restored. Without plan, a file ends with done_testing,
# and the plan is printed at the end: a file that stops before done_testing
# (a crash, an unbound variable, an early exit) fails, whatever it ran.
#
# In CI (CI=true, as .ci/run runs), where scripts/install-deps.sh has put
# every tool in place, a skip is a failure that names what is missing;
# skip_env is for a condition no package gives (a kernel's behaviour).

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
B=${B:-build}
case "$B" in /*) ;; *) B="$ROOT/$B" ;; esac
RECCE=${RECCE:-$ROOT/recce}
case "$RECCE" in /*) ;; *) RECCE="$ROOT/$RECCE" ;; esac
TARGETS=${TARGETS:-$B/targets}
case "$TARGETS" in /*) ;; *) TARGETS="$ROOT/$TARGETS" ;; esac

T=$(mktemp -d "${TMPDIR:-/tmp}/recce-cli.XXXXXX")
# Symbol tables go to the test's own directory, not the machine's cache.
export RECCE_CACHE_DIR="$T/.symcache"
OUT="$T/.out"
ERR="$T/.err"
RC=0
ELAPSED=0

_tap_n=0
_tap_failed=0
_tap_planned=
_tap_done=
_spawned=()
_sysctl_restore=()
_remove=()
_unmount=()
_netns=()
_users=()

# --- cleanup -------------------------------------------------------------

# Restores sysctls first, then kills the process groups of everything spawn
# started (TERM, then KILL after a second) and removes the test's files.
_cleanup()
{
	local p i
	for i in "${_sysctl_restore[@]}"; do
		printf '%s\n' "${i#*=}" >"${i%%=*}" 2>/dev/null
	done
	for p in "${_spawned[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
	done
	for p in "${_spawned[@]}"; do
		for i in 1 2 3 4 5 6 7 8 9 10; do
			_gone "$p" && break
			sleep 0.1
		done
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -f "${_remove[@]}"
	for i in "${_unmount[@]}"; do
		umount "$i" 2>/dev/null
	done
	for i in "${_netns[@]}"; do
		ip netns del "$i" 2>/dev/null
	done
	for i in "${_users[@]}"; do
		pkill -KILL -u "$i" 2>/dev/null
		userdel "$i" 2>/dev/null
	done
	rm -rf "$T"
}

# netns_at_exit NAME...: network namespaces a test made, removed at exit
# (with their veth ends) once its processes are gone.
netns_at_exit()
{
	_netns+=("$@")
}

# make_user: a second user for a test that attacks as someone else, with
# no password, removed at exit with its processes; sets $U to its name.
# The test's directory becomes 0711 so that she reaches the files given
# to her by name: $T/bin (0755, root's, for what she runs) and $T/home
# (hers, 0700). Without root or useradd the run stops: the attacks are
# part of the suite, not optional.
make_user()
{
	U=recce-t$$
	if [ "$(id -u)" -ne 0 ] || ! useradd -M -N -d /nonexistent -s /bin/sh "$U" 2>/dev/null; then
		echo "Bail out! cannot make a second user (useradd, as root) for the attacks"
		exit 255
	fi
	_users+=("$U")
	chmod 0711 "$T"
	mkdir -m 0755 "$T/bin"
	mkdir -m 0700 "$T/home" && chown "$U" "$T/home"
}

# unmount_at_exit DIR...: filesystems a test mounted, unmounted at exit.
unmount_at_exit()
{
	_unmount+=("$@")
}

_on_exit()
{
	local rc=$?
	_cleanup
	if [ -z "$_tap_planned" ]; then
		if [ -z "$_tap_done" ]; then
			_tap_n=$((_tap_n + 1))
			_tap_failed=$((_tap_failed + 1))
			echo "not ok $_tap_n - the file runs to its end (it stopped before done_testing, status $rc)"
		fi
		echo "1..$_tap_n"
	elif [ "$_tap_planned" != "$_tap_n" ] && [ "$_tap_planned" != skip ]; then
		echo "# planned $_tap_planned tests but ran $_tap_n"
		rc=255
	fi
	if [ "$_tap_failed" -gt 0 ]; then
		echo "# failed $_tap_failed of $_tap_n tests"
		rc=1
	fi
	exit "$rc"
}
trap _on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- TAP -----------------------------------------------------------------

plan()
{
	_tap_planned=$1
	echo "1..$1"
}

# done_testing: the last line of a file without a plan.
done_testing()
{
	_tap_done=1
}

# Skips the whole file: the precondition cannot be made on this machine
# (in CI, a failure).
skip_all()
{
	_tap_planned=skip
	if [ "${CI:-}" = true ]; then
		echo "1..1"
		echo "not ok 1 - nothing is skipped in CI, but: $*"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

diag()
{
	printf '%s\n' "$@" | sed 's/^/# /' >&2
}

pass()
{
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1"
}

fail()
{
	_tap_n=$((_tap_n + 1))
	# A "# TODO" test may fail without failing the file.
	case "$1" in *'# TODO'*) ;; *) _tap_failed=$((_tap_failed + 1)) ;; esac
	echo "not ok $_tap_n - $1"
	# Diagnostics go to stderr, which prove shows from files run side by
	# side (-j) too: the check's name first.
	diag "  Failed test $_tap_n '$1'"
	shift
	[ $# -gt 0 ] && diag "$@"
	# The line of the test file that called the outermost helper.
	local n=${#BASH_LINENO[@]}
	diag "  at $(basename "$0") line ${BASH_LINENO[n - 2]}"
	return 1
}

# _skip NAME N REASON STRICT: counts N tests as skipped for REASON (with
# STRICT=1, in CI, as failed); a count that is not a number fails, named
# as NAME's.
_skip()
{
	local i
	case $2 in
	'' | *[!0-9]*)
		fail "$1: the count first, then the reason (got '$2')"
		return
		;;
	esac
	for ((i = 0; i < $2; i++)); do
		if [ "$4" = 1 ] && [ "${CI:-}" = true ]; then
			fail "nothing is skipped in CI, but: $3"
			continue
		fi
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # skip $3"
	done
}

# skip N REASON: counts N tests as skipped (in CI, as failed).
skip()
{
	_skip skip "$1" "$2" 1
}

# skip_env N REASON: skips N tests for a condition of the machine that no
# package gives (a kernel that behaves otherwise), in CI too.
skip_env()
{
	_skip skip_env "$1" "$2" 0
}

# nested LABEL FILE [VAR=VALUE...]: runs another test file with VARs set
# and reports each of its checks as one of this file's ("LABEL: its
# description"), its diagnostics with them; a file that stops before the
# end of its plan fails here too.
nested()
{
	local label=$1 file=$2 tap="$T/nested.tap" line n=0 failed=0 want='' rc
	local re_check='^(not )?ok [0-9]+( - (.*))?$' re_skip='^ok [0-9]+ # skip (.*)$'
	shift 2
	env "$@" bash "$file" >"$tap" 2>&1
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ $re_skip ]]; then
			n=$((n + 1))
			_tap_n=$((_tap_n + 1))
			echo "ok $_tap_n # skip $label: ${BASH_REMATCH[1]}"
		elif [[ $line =~ $re_check ]]; then
			n=$((n + 1))
			if [ -z "${BASH_REMATCH[1]}" ]; then
				pass "$label: ${BASH_REMATCH[3]}"
			else
				failed=$((failed + 1))
				fail "$label: ${BASH_REMATCH[3]}"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			want=${BASH_REMATCH[1]}
		elif [[ $line == '#'* ]]; then
			printf '%s\n' "$line" >&2
		fi
	done <"$tap"
	if { [ "$rc" != 0 ] && [ "$failed" = 0 ]; } || [ "$n" != "${want:-$n}" ]; then
		fail "$label: $(basename "$file") runs to its end" \
			"  status $rc after $n checks of ${want:-an unknown number}" "$(tail -n 5 "$tap")"
	fi
}

# ok DESC CMD...: passes when CMD exits 0.
ok()
{
	local desc=$1
	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc" "  command failed: $*"
	fi
}

# is GOT WANT DESC
is()
{
	if [ "$1" = "$2" ]; then
		pass "$3"
	else
		fail "$3" "       got: '$1'" "  expected: '$2'"
	fi
}

# isnt GOT UNWANTED DESC
isnt()
{
	if [ "$1" != "$2" ]; then
		pass "$3"
	else
		fail "$3" "  got '$1', which it must not be"
	fi
}

# like TEXT ERE DESC: some line of TEXT matches the extended regex.
like()
{
	if printf '%s\n' "$1" | grep -qE -- "$2"; then
		pass "$3"
	else
		fail "$3" "  no line matches /$2/ in:" "$(printf '%s\n' "$1" | head -n 20)"
	fi
}

# unlike TEXT ERE DESC: no line of TEXT matches.
unlike()
{
	local m
	if m=$(printf '%s\n' "$1" | grep -E -- "$2"); then
		fail "$3" "  these lines match /$2/:" "$(printf '%s\n' "$m" | head -n 10)"
	else
		pass "$3"
	fi
}

# cmp_ok A OP B DESC: a numeric comparison, OP one of < <= > >= == !=; A and
# B are numbers or awk expressions of numbers ("$TOTAL * 0.8"). An empty
# side fails.
cmp_ok()
{
	local op=$2
	# test(1)'s operators too: awk would read "-ge" as a subtraction.
	case "$op" in
	-eq) op='==' ;; -ne) op='!=' ;; -lt) op='<' ;; -le) op='<=' ;; -gt) op='>' ;; -ge) op='>=' ;;
	'==' | '!=' | '<' | '<=' | '>' | '>=') ;;
	*)
		fail "$4" "  cmp_ok: unknown operator '$2'"
		return 1
		;;
	esac
	# Numbers and arithmetic only: awk would read a word ("null", an
	# error message) as a variable worth 0, and pass a check that
	# compares nothing.
	case "$1$3" in
	*[A-DF-Za-df-z_]*)
		fail "$4" "  cmp_ok: not a number: '$1' $2 '$3'"
		return 1
		;;
	esac
	if [ -n "$1" ] && [ -n "$3" ] && awk "BEGIN { exit !(($1) $op ($3)) }" 2>/dev/null; then
		pass "$4"
	else
		fail "$4" "  failed: $1 $2 $3"
	fi
}

# share_near GOT WANT N DESC: the check DESC that GOT percent of N samples
# is the WANT percent the target spends, within what sampling allows: four
# standard deviations of a binomial share of N (1 in 15,000 checks of a
# right profile fail), and never less than 1 point. A busy machine gives
# the target fewer samples, not a wrong share; fewer than 100 is a fail.
share_near()
{
	local got=$1 want=$2 n=$3 desc=$4 tol
	for tol in "$got" "$want" "$n"; do
		case "$tol" in
		'' | *[!0-9.]*)
			fail "$desc" "  share_near: not numbers: '$got' '$want' '$n'"
			return 1
			;;
		esac
	done
	tol=$(awk -v p="$want" -v n="$n" 'BEGIN { p /= 100; t = 400 * sqrt(p * (1 - p) / (n > 0 ? n : 1));
		printf "%.2f", t < 1 ? 1 : t }')
	if awk -v g="$got" -v w="$want" -v t="$tol" -v n="$n" \
		'BEGIN { d = g - w; exit !(n >= 100 && d <= t && -d <= t) }'; then
		pass "$desc"
	else
		fail "$desc" "  got $got% of $n samples, want $want% within $tol points"
	fi
}

# query_samples TEXT: how many samples a `recce query` table of a 99 Hz
# agent holds, from its "total: 7.91s cpu" line.
query_samples()
{
	printf '%s\n' "$1" | awk '/^total: / { v = $2; m = 1;
		if (v ~ /ms$/) m = 1e-3; else if (v ~ /us$/) m = 1e-6; else if (v ~ /ns$/) m = 1e-9;
		sub(/[a-z]+$/, "", v); printf "%d\n", v * m * 99 + 0.5; exit }'
}

# --- running things ------------------------------------------------------

# run CMD...: runs CMD with stdout to $OUT and stderr to $ERR (files), its
# status in $RC and its wall time in seconds in $ELAPSED. Bounded by
# RUN_TIMEOUT seconds (default 60): a hang shows as RC 124 or 137.
run()
{
	local t0 t1
	t0=$(date +%s.%N)
	timeout -k 5 "${RUN_TIMEOUT:-60}" "$@" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	t1=$(date +%s.%N)
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	return 0
}

# spawn_ready OUTFILE CMD...: spawn, then waits for the target's "NAME:
# ready" line (a target of tests/targets/ready.h, which then waits for
# SIGUSR1); sets $PID.
# spawn_exec OUT PROGRAM ARGS...: spawn, then waits until the process runs
# PROGRAM (its exec done, its name its own), so that recce finds its
# functions; sets $PID.
spawn_exec()
{
	local name
	name=$(basename "$2" | cut -c1-15)
	spawn "$@"
	wait_for 20 grep -qx "$name" "/proc/$PID/comm" || diag "$name never ran"
}

spawn_ready()
{
	spawn "$@"
	wait_for 60 grep -q ': ready$' "$1" || diag "$2 never said it was ready"
}

# run_go PID[,PID...] ARGS...: runs recce ARGS as run does ($RC, $OUT,
# $ERR) against targets waiting for SIGUSR1 (spawn_ready), and sends it
# once recce says it traces (or captures): what recce sees never depends
# on how fast it attached, however busy the machine.
run_go()
{
	local targets=$1 pid
	shift
	fresh "$OUT" "$ERR"
	setsid env --default-signal=INT "$RECCE" "$@" >"$OUT" 2>"$ERR" </dev/null &
	pid=$!
	_spawned+=("$pid")
	# shellcheck disable=SC2086 # one word per process
	wait_for 60 grep -qE '^recce: (tracing|capturing)' "$ERR" && kill -USR1 ${targets//,/ }
	if wait_exit "${RUN_TIMEOUT:-60}" "$pid"; then
		RC=$WAIT_RC
	else
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		RC=137
	fi
}

# Shows the last run's command output as diagnostics (on failure).
show_run()
{
	diag "exit status $RC after ${ELAPSED}s" "stdout:" "$(head -n 30 "$OUT")" \
		"stderr:" "$(head -n 30 "$ERR")"
}

# fresh FILE...: empties each regular file before a background command is
# started with its output there. The command's own redirection happens in
# the forked child, which a busy machine may run late: a wait for a line
# in FILE would meanwhile find the line a previous command wrote there
# ("recce: tracing", ": ready") and go on before this one said anything.
fresh()
{
	local f
	for f in "$@"; do
		[ -f "$f" ] && : >"$f"
	done
	return 0
}

# start_prometheus: Debian's prometheus (a stripped Go binary) on a
# loopback port of its own, from a temporary config that scrapes nothing,
# until it is ready; sets PROM (its pid) and PROM_URL.
start_prometheus()
{
	printf 'global:\n  scrape_interval: 1h\n' >"$T/prom.yml"
	spawn "$T/prom.log" /usr/bin/prometheus --config.file="$T/prom.yml" \
		--storage.tsdb.path="$T/prom-data" --web.listen-address=127.0.0.1:0
	PROM=$PID
	wait_for 60 grep -q 'Server is ready to receive web requests' "$T/prom.log" ||
		diag "prometheus did not start: $(tail -n 3 "$T/prom.log")"
	PROM_URL=http://$(sed -n 's/.*Listening on.* address=\(127[0-9.:]*\).*/\1/p' "$T/prom.log" | head -n 1)
}

# start_postgres [copy]: Debian's postgres, a cluster of its own in $T/pg
# made by initdb as the postgres user, reached by a socket in $T/pg alone,
# until it is ready; sets PGBIN (Debian's newest server's bin directory)
# and PM (the postmaster's pid). With copy, the server runs from a copy of
# Debian's executable in $T, a file no other postgres maps: recce puts no
# breakpoint in a neighbour that maps the traced file (Debian starts a
# cluster where the package is installed), and then follows the backends
# the test's postmaster forks only from when it reads of them, not from
# their fork. Bails out where it cannot.
PGBIN=$(find /usr/lib/postgresql -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
start_postgres()
{
	id postgres >/dev/null 2>&1 || {
		echo "Bail out! no postgres user (scripts/install-deps.sh installs postgresql)"
		exit 1
	}
	chmod 0711 "$T"
	mkdir -m 0700 "$T/pg" && chown postgres: "$T/pg"
	as_pg "$PGBIN/initdb" -D "$T/pg/data" -A trust -U postgres --no-sync >"$T/initdb.out" 2>&1 ||
		{
			echo "Bail out! initdb failed: $(tail -n 3 "$T/initdb.out")"
			exit 1
		}
	local server=$PGBIN/postgres
	if [ "${1:-}" = copy ]; then
		mkdir -m 0755 "$T/pgbin" && cp "$PGBIN/postgres" "$T/pgbin/postgres" &&
			server=$T/pgbin/postgres
	fi
	spawn "$T/pg.log" setpriv --reuid=postgres --regid=postgres --init-groups -- \
		"$server" -D "$T/pg/data" -k "$T/pg" -c listen_addresses= -c fsync=off \
		-c max_connections=20
	PM=$PID
	ok "postgres starts" wait_for 60 grep -q 'ready to accept connections' "$T/pg.log"
}

# spawn OUTFILE CMD...: starts CMD in the background in its own session and
# process group, stdout and stderr to OUTFILE; sets $PID. The group is
# killed at exit. Returns once the process runs CMD: until the exec of
# setsid and env before it is done, a busy machine shows recce bash's
# functions under $PID, not CMD's.
spawn()
{
	local out=$1
	shift
	fresh "$out"
	setsid env --default-signal=INT "$@" >"$out" 2>&1 </dev/null &
	PID=$!
	_spawned+=("$PID")
	case ${1##*/} in
	bash | setsid) ;; # it would never look past them
	*) wait_for 20 _execed "$PID" || diag "$1 was never run" ;;
	esac
}

# _execed PID: whether PID is past the bash, setsid and env that spawn runs
# before its command (a process gone is past them too).
_execed()
{
	local exe
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 0
	case ${exe##*/} in
	bash | setsid | env) return 1 ;;
	esac
}

# spawn_recce STDOUT STDERR ARGS...: starts recce in the background in its
# own process group, with SIGINT at its default (as in a terminal: bash
# would have a background job ignore it); sets $PID. Killed at exit.
spawn_recce()
{
	local out=$1 err=$2
	shift 2
	fresh "$out" "$err"
	setsid env --default-signal=INT "$RECCE" "$@" >"$out" 2>"$err" </dev/null &
	PID=$!
	_spawned+=("$PID")
}

# wait_for SECONDS CMD...: polls CMD every 0.05 s until it succeeds; returns
# 1 if it never did. SECONDS counts the pauses between tries, so that the
# time CMD itself takes on a busy machine is added, not taken away; a CMD
# that is slow every time (a curl to a socket nobody answers) ends the
# wait after 4 x SECONDS of the clock (at least SECONDS + 60) all the same.
wait_for()
{
	local end cap
	end=$(awk -v s="$1" 'BEGIN { print int(s * 20) }')
	cap=$(awk -v s="$1" -v now="${EPOCHREALTIME//[!0-9]/}" \
		'BEGIN { c = 4 * s; if (c < s + 60) c = s + 60; printf "%.0f", now + c * 1e6 }')
	shift
	while [ "$end" -gt 0 ]; do
		"$@" && return 0
		[ "${EPOCHREALTIME//[!0-9]/}" -lt "$cap" ] || return 1
		sleep 0.05
		end=$((end - 1))
	done
	return 1
}

# wait_exit SECONDS PID: waits for a child of this shell to exit; sets
# $WAIT_RC to its status, or returns 1 if it is still running.
wait_exit()
{
	if ! wait_for "$1" _gone "$2"; then
		return 1
	fi
	wait "$2" 2>/dev/null
	WAIT_RC=$?
	return 0
}

# kill_quietly PID...: SIGKILL to spawned processes, reaped without the
# shell's "Killed" line.
kill_quietly()
{
	{
		kill -KILL "$@"
		wait "$@"
	} 2>/dev/null
	return 0
}

_gone()
{
	# A zombie child still answers kill -0; look at its state.
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# has_perf_events PID: PID holds at least one perf_event file descriptor
# (recce has attached and is sampling).
has_perf_events()
{
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = 'anon_inode:[perf_event]' ] && return 0
	done
	return 1
}

# recording ERR: waits until recce record says on ERR that it records
# (every event of every target is open by then); 1 if it never did.
recording()
{
	wait_for 20 grep -q '^recce: recording ' "$1"
}

# record_turns TARGET_OUT ARGS...: `recce record ARGS` of an allocs target
# (tests/targets/allocs.c) writing to TARGET_OUT, stopped once the
# target has turned its ring of kept blocks three times since recce
# said it records: what is then in use is one whole turn of the ring, all
# seen, however busy the machine, and at least two whole turns (8,192
# rounds) are sampled, enough that each site's share of the bytes stays
# within 5 points of the truth (after one turn and a part, as when it
# waited for two, a simulation of the sampling puts a site past that in
# up to 2 runs in 100). Sets $RC and fills $OUT and $ERR as run does.
record_turns()
{
	local tout=$1 rp turns
	shift
	spawn_recce "$OUT" "$ERR" "$@"
	rp=$PID
	recording "$ERR" || diag "recce never said it records"
	turns=$(grep -c '^turned' "$tout")
	wait_for 120 lines_at_least "$tout" '^turned' $((turns + 3)) ||
		diag "the target's ring did not turn three times"
	kill -INT "$rp"
	wait_exit 60 "$rp" || diag "recce did not stop when told"
	RC=$WAIT_RC
}

# cpu_ticks PID: the CPU time PID's threads have used, in clock ticks
# (1/100 s), from /proc/PID/stat; empty once PID is gone.
cpu_ticks()
{
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# ran_cpu PID TICKS: waits until PID has used TICKS more clock ticks of
# CPU from now (up to 60 s): a moment of the target's work that a busy
# machine cannot shorten, where a sleep would. 1 if it never did.
ran_cpu()
{
	local base
	base=$(cpu_ticks "$1")
	[ -n "$base" ] || return 1
	wait_for 60 _ran_since "$1" $((base + $2))
}

_ran_since()
{
	local now
	now=$(cpu_ticks "$1")
	[ -n "$now" ] && [ "$now" -ge "$2" ]
}

# agent_metric URL NAME [CURL-ARGS...]: the value of recce_agent_NAME in
# the /metrics of the continuous agent serving URL.
agent_metric()
{
	local url=$1 name=$2
	shift 2
	curl -s --max-time 20 "$@" "$url/metrics" | sed -n "s/^recce_agent_$name //p"
}

# windows_written URL [CURL-ARGS...]: how many windows that agent has
# written to its store.
windows_written()
{
	local url=$1
	shift
	agent_metric "$url" windows_written_total "$@"
}

# next_window URL [CURL-ARGS...]: waits (up to 60 s) until that agent has
# written a window after now, the one holding what ran until now: what a
# test ran is in the store then, however busy the machine. 1 if it never
# was. next_count NAME URL [CURL-ARGS...] does so for any counter of it
# (windows_exported_total: in ClickHouse).
next_window()
{
	next_count windows_written_total "$@"
}

next_count()
{
	local w
	w=$(agent_metric "$2" "$1" "${@:3}")
	[ -n "$w" ] || return 1
	wait_for 60 _count_past "$w" "$@"
}

_count_past()
{
	local n
	n=$(agent_metric "$3" "$2" "${@:4}")
	[ -n "$n" ] && [ "$n" -gt "$1" ]
}

# remove_at_exit PATH...: files outside $T that the test causes to exist.
remove_at_exit()
{
	_remove+=("$@")
}

# set_sysctl FILE VALUE: writes a /proc/sys file, restored at exit.
set_sysctl()
{
	local old
	old=$(cat "$1") || return 1
	_sysctl_restore+=("$1=$old")
	printf '%s\n' "$2" >"$1" 2>/dev/null
}

# --- recce specifics -------------------------------------------------------

# need_file PATH...: stops the whole run (TAP "Bail out!") unless every PATH
# exists: the binary or a target was not built, and nothing would be tested.
need_file()
{
	local f
	for f in "$@"; do
		if [ ! -e "$f" ]; then
			_tap_planned=skip
			echo "Bail out! $f is missing (make recce targets builds it)"
			exit 1
		fi
	done
}

# folded_total TEXT: the sum of the counts of folded lines.
folded_total()
{
	printf '%s\n' "$1" | awk '{ n += $NF } END { print n + 0 }'
}

# folded_count TEXT ERE: the sum of the counts of the folded lines whose
# stack matches ERE.
folded_count()
{
	printf '%s\n' "$1" | awk -v re="$2" '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s);
		if (s ~ re) n += c } END { print n + 0 }'
}

# A folded stack of a process's exit taken once its memory was released
# (exit_mmap), or of its exec once its old program was gone: no user
# frames are left to walk, only the kernel's.
AT_EXIT='^entry_SYSCALL_64_after_hwframe;do_syscall_64;(x64_sys_call;)?__x64_sys_exit_group;'
AT_EXEC='^entry_SYSCALL_64_after_hwframe;do_syscall_64;(x64_sys_call;)?__x64_sys_execve(at)?;'

# deep_grown LABEL TEXT: the folded stacks of the deep target (40 frames
# of 1 KiB, no process frame) after the stack copy grew: some whole from
# _start to bottom (their count in WHOLE), every other one cut where a
# smaller copy ended.
deep_grown()
{
	WHOLE=$(folded_count "$2" "^_start;__libc_start_main;__libc_start_call_main;main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)")
	cmp_ok "$WHOLE" '>' 0 "$1: whole stacks after it grew ($WHOLE)"
	is "$((WHOLE + $(folded_count "$2" '^\[stack copy ended\];')))" "$(folded_total "$2")" \
		"$1: every other stack was cut where a smaller copy ended" ||
		diag "$(printf '%s\n' "$2" | grep -Ev '^(_start;|\[stack copy ended\];)' | head -3)"
}

# folded_user TEXT: TEXT's folded stacks with the kernel's frames above
# each user-space leaf taken off (names /proc/kallsyms holds), so that a
# sample the kernel took while it ran on the thread's behalf counts for
# the user function it interrupted: on a busy machine many samples of a
# spinning function end in irqentry_exit_to_user_mode, where the thread
# is preempted on its way back. A user function named as a kernel one
# (memcpy) is taken off too: only a check of another leaf may use it.
folded_user()
{
	printf '%s\n' "$1" | awk 'NR == FNR { k[$3] = 1; next }
		NF { c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		     while (n > 1 && (f[n] in k)) n--
		     out = f[1]; for (i = 2; i <= n; i++) out = out ";" f[i]
		     print out " " c }' /proc/kallsyms -
}

# folded_share FOLDED ERE: the percentage of FOLDED's total under stacks matching ERE.
folded_share()
{
	awk -v n="$(folded_count "$1" "$2")" -v t="$(folded_total "$1")" \
		'BEGIN { printf "%.2f", (t > 0 ? 100 * n / t : 0) }'
}

# python_version PYTHON: the version a python prints of itself.
python_version() { "$1" -c 'import platform; print(platform.python_version())'; }

# pyenv_pythons: the python3.X of each of pyenv's CPython 3 builds on this
# machine (none is required: pyenv is not a Debian package), one a line.
pyenv_pythons()
{
	local root py
	root=$(pyenv root 2>/dev/null || true)
	for py in "$root"/versions/3.*/bin/python3.[0-9]*; do
		[[ -x "$py" && "$py" =~ python3\.[0-9]+$ ]] && echo "$py"
	done
	return 0
}

# source_line FILE MARKER: the line number of the line holding MARKER.
source_line()
{
	grep -n -F -- "$2" "$1" | head -n 1 | cut -d: -f1
}

# table_rows TEXT: the rows of `recce report`'s table (they start with the
# self and total percentages).
table_rows()
{
	printf '%s\n' "$1" | grep -E '^ *[0-9]+(\.[0-9]+)?% +[0-9]+(\.[0-9]+)?% '
}

# summary_samples: the sample count from record's summary line in $ERR.
summary_samples()
{
	sed -n 's/.*recce: \([0-9][0-9]*\) samples.*/\1/p' "$ERR" | tail -n 1
}

# A PID that no process has, nor will soon.
unused_pid()
{
	local p max
	max=$(cat /proc/sys/kernel/pid_max)
	# Just below the last pid handed out: the kernel hands pids out
	# upwards, so it comes back here only after a whole round. (The top
	# of the range, free as the count nears it, is the next to go: with
	# pid_max 32768 and tests that make thousands of threads, a check
	# that it "does not exist" found a process there.)
	read -r p </proc/sys/kernel/ns_last_pid
	p=$((p - 1))
	while [ "$p" -le 300 ] || [ -e "/proc/$p" ]; do
		if [ "$p" -le 300 ]; then p=$((max - 1)); else p=$((p - 1)); fi
	done
	echo "$p"
}

# unwind_check NAME HZ CMD...: record CMD with --call-graph dwarf at HZ,
# both unwinders on every sample (RECCE_UNWIND_CHECK=1), into
# $T/check-NAME.pb.gz (a checked run's profile is libdwfl's unwind):
# none of the stacks may differ, enough are compared, and the fast path
# does nearly all. Four checks.
unwind_check()
{
	local name=$1 hz=$2 check samples fast
	shift 2
	RECCE_UNWIND_CHECK=1 run "$RECCE" record --call-graph dwarf -F "$hz" \
		-o "$T/check-$name.pb.gz" -- "$@"
	is "$RC" 0 "$name: record --call-graph dwarf, checking the unwinder, exits 0" || show_run
	check=$(grep '^recce: unwind check:' "$ERR")
	like "$check" ' 0 stacks differ$' "$name: the fast path agrees with libdwfl ($check)"
	samples=$(sed -n 's/.*check: \([0-9]*\) samples.*/\1/p' <<<"$check")
	fast=$(sed -n 's/.*, \([0-9]*\) by the fast path.*/\1/p' <<<"$check")
	# A second of CPU at 499 Hz is about 500 samples; a busy machine,
	# which starves recce while the rings fill, has left 90.
	cmp_ok "${samples:-0}" '>' 50 "$name: enough samples were compared" ||
		diag "recce said:" "$(cat "$ERR")"
	cmp_ok "${fast:-0}" '>=' "${samples:-0} * 0.9" "$name: the fast path did nearly all"
}

# folded_top TEXT [N]: the N (default 1) heaviest folded lines.
folded_top()
{
	printf '%s\n' "$1" | awk 'NF { print $NF "\t" $0 }' | sort -t"$(printf '\t')" -k1,1 -n -r |
		head -n "${2:-1}" | cut -f2-
}

# folded FILE [ARGS...]: runs `recce report --folded --value samples FILE
# ARGS...` (sample counts, whatever the profile's default value) and prints
# its output.
folded()
{
	local f=$1
	shift
	run "$RECCE" report --folded --value samples "$@" "$f"
	[ "$RC" = 0 ] || diag "report --folded $f $*: status $RC: $(head -n 3 "$ERR")" >&2
	cat "$OUT"
}

# spawn_go DIR OUT [ARGS...]: builds the Go target tests/go/DIR (GOPATH
# mode) and spawns it with ARGS, its output into OUT,
# waiting up to 5 s for its "ready" line; $PID is its pid. Returns 0; 1
# when it did not build (a failed test says why); 2 when go is missing.
spawn_go()
{
	local dir=$1 out=$2
	shift 2
	command -v go >/dev/null 2>&1 || return 2
	export GO111MODULE=off GOFLAGS= GOPATH="$T/gopath"
	if ! go build -o "$T/go-$dir" "tests/go/$dir/main.go" 2>"$T/go.err"; then
		fail "go build of tests/go/$dir" "$(cat "$T/go.err")"
		return 1
	fi
	spawn "$out" "$T/go-$dir" "$@"
	wait_for 5 grep -q '^ready' "$out" || diag "the Go target tests/go/$dir did not start"
	return 0
}

# value_folded FILE TYPE [ARGS...]: runs `recce report --folded --value
# TYPE ARGS... FILE` (that sample type: offcpu, alloc_space...) and prints
# its output.
value_folded()
{
	local f=$1 v=$2
	shift 2
	run "$RECCE" report --folded --value "$v" "$@" "$f"
	[ "$RC" = 0 ] || diag "report --folded --value $v $f: status $RC: $(head -n 3 "$ERR")" >&2
	cat "$OUT"
}

# profile_seconds FILE: the time FILE's recording covered, in seconds, as
# recce report's header gives it (to the millisecond).
profile_seconds()
{
	"$RECCE" report "$1" 2>/dev/null | sed -n 's/^duration: \([0-9.]*\) s$/\1/p'
}

# near A B TOLERANCE: A is within TOLERANCE (a fraction) of B; A and B are
# numbers or awk expressions of numbers.
near()
{
	[ -n "$1" ] && [ -n "$2" ] &&
		awk "BEGIN { a = ($1); b = ($2); d = a - b; if (d < 0) d = -d; exit !(d <= ($3) * b) }" 2>/dev/null
}

# rate_min FILE N: the smallest of the last N "rate N" lines of the
# spinner target's output (tests/targets/spinner.c).
rate_min()
{
	grep '^rate ' "$1" | tail -n "$2" | awk 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }'
}

# rate_median FILE N: the median of the last N "rate" lines' rates: a
# target slowed for good is slow in all of them, one the machine starved
# for a window or two (a busy machine) is not.
rate_median()
{
	grep '^rate ' "$1" | tail -n "$2" | awk '{ print $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] + 0 : 0 }'
}

# lines_at_least FILE REGEX N: whether FILE has N lines that match REGEX
# (for wait_for, which runs its command again each time: a count taken
# in its arguments would be taken once).
lines_at_least() { [ "$(grep -c -E -e "$2" "$1" 2>/dev/null)" -ge "$3" ]; }

# rates FILE: how many "rate" lines such a target has printed.
rates() { grep -c '^rate ' "$1"; }

# rates_past FILE N K: whether FILE has K rate lines past its first N (for
# wait_for: time by the target's own clock).
rates_past() { [ "$(rates "$1")" -ge $(($2 + $3)) ]; }
