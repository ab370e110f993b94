#!/bin/sh
# bench/run.sh: `make bench`. Measures recce against its anchors (`perf
# record`, addr2line, a bare kernel uprobe, procps top) on the workloads in
# bench/workloads/, each case several times with the tools interleaved
# (none, perf, recce, none, perf, recce, ...) so that the drift of a shared
# machine falls on all of them alike, then writes
# bench/results/latest.md and latest.json (medians, min-max spreads, ratios
# to the anchors, PASS/MISS per budget) through bench/summarize.awk.
#
#     sh bench/run.sh            after `make`; B=DIR for another build dir
#
# Settings (environment):
#   BENCH_REPS   repetitions of every case (default 3)
#   BENCH_CASES  which groups to run (default: all of them)
#                slowdown deep tenk split threads symbolize trace top events offcpu alloc
#                patch continuous agent libuv fast python binaries fleet
#                (fleet: bench/fleet-store.sh, the fleet store with a
#                host simulator; its own table in results/fleet-store.md)
#   RECCE        the recce binary (default $B/recce)
#
# Raw measurements, one tab-separated key=value line per run, are kept in
# bench/results/tmp/raw.txt; every other file there is scratch.

# The sh -c scripts below are in single quotes on purpose: they get their
# paths as arguments.
# shellcheck disable=SC2016
set -eu

cd "$(dirname "$0")/.."

B=${B:-build}
RECCE=${RECCE:-$B/recce}
REPS=${BENCH_REPS:-3}
CASES=${BENCH_CASES:-"slowdown persample deep tenk split threads symbolize trace top events offcpu alloc patch continuous agent libuv fast python binaries fleet"}
CC=${CC:-cc}

OUT=bench/results
TMP=$OUT/tmp
BIN=$B/bench
RAW=$TMP/raw.txt

HZ_LOW=99
HZ_HIGH=999
STACK_BYTES=8192
CPU2_SECONDS=3      # the cpu2 workload, per thread
DEEP_SECONDS=2      # the deep workload
PS_HZ=20000         # the persample group's rate, a thread
PS_SECONDS=1        # ... and its cpu2 workload, per thread
TENK_SAMPLES=10000  # the recording of the "10,000 samples" flamegraph budget
SPLIT_SECONDS=4     # the split workload (accuracy)
THREADS_SECONDS=3   # how long the profilers follow the threads workloads
SYM_FUNCS=4000      # functions in the generated binary
SYM_ADDRS=100000    # addresses given to recce's symbolizer and addr2line
SYM_EU_ADDRS=5000   # the first ones of them given to eu-addr2line (slow with -i)
TRACE_SECONDS=2     # the calls workload under each tracer
BREAKER=1000/100    # recce trace --limit of the recovery case
FAST_BURSTS=40      # bursts of 8192 calls under recce trace --fast, uftrace, alone
SLOW_BURSTS=8       # ... and under uprobes
TOP_SNAPSHOTS=5     # recce top -b -n, one a second
TOP_THREADS=500     # threads of the workload top watches
TOP_WORK_US=10      # each working this long every 10 ms: half a core in all
TOP_HZ=49           # recce top's default rate
EV_FAST=50000000    # iterations of the events loop for librecce, the clock, the bare loop
EV_SLOW=5000000     # ... and for LTTng-UST and uftrace, a call of which costs more
OFF_ROUNDS=300000   # round trips of the switches workload (two switches each)
ALLOC_STEPS=200000  # steps of the allocs workload (a malloc and a free each, 1 us alone)
CONT_SECONDS=60     # how long the busy processes run under each system-wide profiler
CONT_IDLE=200       # idle processes beside them
CONT_HZ=19          # the continuous agent's default rate, and perf's -F
AGENT_IDLE=30       # seconds the agent's idle cost is measured over
AGENT_EVENTS=200000 # calls in the trace file replayed through the agent
AGENT_RECORD=5      # seconds of the record run locally and through the agent
LIBUV_SECONDS=3     # the uvloop workload's callbacks, after a second's wait
BINS=${BENCH_BINARIES:-500} # distinct programs the binaries group runs at once
BINS_SECONDS=90     # how long the continuous agent profiles them

say() { echo "bench: $*"; }
die() { echo "bench: error: $*" >&2; exit 1; }

# The value of KEY in a file of key=value fields (tab- or line-separated).
field() { tr '\t' '\n' < "$1" | sed -n "s/^$2=//p" | tail -n 1; }

# Arithmetic: calc 'EXPR' prints its value.
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# A file of key=value lines as one tab-separated line.
joined() { tr '\n' '\t' < "$1" | sed 's/\t*$//'; }

# The events recce trace --fast said it did not record, from its stderr
# FILE (empty when it said none).
#     fast_lost FILE
fast_lost() {
	sed -n 's/.*recce: warning: \([0-9]*\) calls or returns were not recorded.*/\1/p' "$1"
}

# Waits until FILE has a line matching PATTERN, at most TICKS times 50 ms.
#     wait_line FILE PATTERN TICKS
wait_line() {
	i=0
	while ! grep -q "$2" "$1" 2> /dev/null && [ "$i" -lt "$3" ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# ---------------------------------------------------------------------------
# Build the workloads and helpers.

build() {
	[ -x "$RECCE" ] || die "no recce at '$RECCE': run make first"
	[ -f "$B/librecce-core.a" ] || die "no $B/librecce-core.a: run make first"
	command -v perf > /dev/null || die "perf is missing: apt-get install linux-perf"
	mkdir -p "$BIN" "$TMP"
	wflags="-std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra"
	for w in cpu2 split deep threads calls switches allocs; do
		# shellcheck disable=SC2086
		$CC $wflags -o "$BIN/$w" "bench/workloads/$w.c"
	done
	# As Debian builds its packages: the continuous case's whole stacks
	# come from its unwind tables, not a frame-pointer chain.
	# shellcheck disable=SC2086
	$CC $(echo "$wflags" | sed 's/-fno-omit/-fomit/') -o "$BIN/cpu2-nofp" bench/workloads/cpu2.c
	# shellcheck disable=SC2086
	$CC $wflags -O1 -o "$BIN/patchee" tests/targets/patchee.c
	# shellcheck disable=SC2086
	$CC $wflags -o "$BIN/uvloop" bench/workloads/uvloop.c -luv
	$CC -O1 -g -fPIC -shared -o "$BIN/fib-fix.so" tests/targets/fixes/fib-fix.c
	$CC -O1 -g -fPIC -shared -o "$BIN/torture-fix.so" tests/targets/fixes/torture-fix.c
	# shellcheck disable=SC2086
	$CC $wflags -O1 -o "$BIN/torture" tests/targets/torture.c
	# shellcheck disable=SC2086
	$CC $wflags -o "$BIN/tight" tests/targets/tight.c
	$CC -std=gnu11 -O2 -g -fPIC -shared -o "$BIN/calls-fix.so" bench/workloads/calls-fix.c
	$CC -std=gnu11 -O2 -Wall -Wextra -o "$BIN/measure" bench/measure.c
	$CC -std=gnu11 -O2 -Wall -Wextra -o "$BIN/uprobe-bare" bench/uprobe-bare.c
}

# The generated binary takes a while to compile (tens of seconds), so it is
# kept between runs and rebuilt when its generator or size changes.
build_bigbin() {
	stamp="$BIN/bigbin.stamp"
	want="$SYM_FUNCS $(cksum < bench/gen-bigbin.sh)"
	if [ -x "$BIN/bigbin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return
	fi
	say "generating and compiling a binary of $SYM_FUNCS functions (once)"
	rm -rf "$BIN/bigbin-src"
	sh bench/gen-bigbin.sh "$BIN/bigbin-src" "$SYM_FUNCS"
	find "$BIN/bigbin-src" -name '*.c' -print0 |
		xargs -0 -P "$(nproc)" -I{} "$CC" -O2 -g -c -o {}.o {}
	$CC -o "$BIN/bigbin" "$BIN/bigbin-src"/*.o
	echo "$want" > "$stamp"
}

machine() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	tree=clean
	git diff --quiet HEAD -- src Makefile 2> /dev/null || tree=modified
	printf 'kind=machine\tcpu=%s\tcores=%s\tkernel=%s\tperf=%s\trecce=%s\tcommit=%s\ttree=%s\tmax_stack=%s\tdate=%s\treps=%s\tloadavg_start=%s\n' \
		"$cpu" "$(nproc)" "$(uname -r)" "$(perf --version | sed 's/^perf version //')" \
		"$("$RECCE" --version | sed 's/^recce //')" \
		"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$tree" \
		"$(cat /proc/sys/kernel/perf_event_max_stack)" \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$REPS" "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RAW"
}

# ---------------------------------------------------------------------------
# One run of a workload, alone or under a profiler that launches it.
#
#     record CASE TOOL HZ CALLGRAPH REP WORKLOAD [ARGS...]
#
# Appends a line to $RAW with the workload's own times (from its stats),
# the profiler process's CPU time (its wait4 total minus the workload's own
# CPU), its sample count and file size, and the time from the end of the
# workload's work to a flamegraph: the profiler's exit after that instant
# ("tail": perf finishing perf.data and its build-ids; recce symbolizing
# and writing the profile) plus the flamegraph step (`recce report --flame`
# against `perf script | awk -f bench/stackcollapse.awk`).

record() {
	c=$1 tool=$2 hz=$3 cg=$4 rep=$5 samples=
	shift 5
	rm -f "$TMP/stats" "$TMP/perf.data" "$TMP/recce.pb.gz" "$TMP/err" "$TMP/extra"
	case $cg in
	fp) pcg="-g" rcg="fp" ;;
	dwarf) pcg="--call-graph dwarf,$STACK_BYTES" rcg="dwarf,$STACK_BYTES" ;;
	# perf has no auto: its dwarf mode, the same copy, is the anchor.
	auto) pcg="--call-graph dwarf,$STACK_BYTES" rcg="auto,$STACK_BYTES" ;;
	esac
	status=0
	case $tool in
	none)
		BENCH_STATS=$TMP/stats "$BIN/measure" "$TMP/run" -- "$@" \
			> /dev/null 2> "$TMP/err" || status=$?
		;;
	perf)
		# shellcheck disable=SC2086
		BENCH_STATS=$TMP/stats "$BIN/measure" "$TMP/run" -- perf record -e cpu-clock \
			-F "$hz" $pcg -o "$TMP/perf.data" -- "$@" > /dev/null 2> "$TMP/err" || status=$?
		;;
	recce)
		BENCH_STATS=$TMP/stats "$BIN/measure" "$TMP/run" -- "$RECCE" record -F "$hz" \
			--call-graph "$rcg" -o "$TMP/recce.pb.gz" -- "$@" \
			> /dev/null 2> "$TMP/err" || status=$?
		;;
	esac
	if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ]; then
		say "$c $tool rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=run\tcase=%s\ttool=%s\trep=%s\tstatus=failed\n' "$c" "$tool" "$rep" >> "$RAW"
		return
	fi

	line=$(printf 'kind=run\tcase=%s\ttool=%s\trep=%s\thz=%s\tcg=%s\tstatus=ok\t%s' \
		"$c" "$tool" "$rep" "$hz" "$cg" "$(joined "$TMP/stats")")
	wl_cpu=$(field "$TMP/stats" cpu_s)
	wl_end=$(field "$TMP/stats" end_ns)
	if [ "$tool" != none ]; then
		run_cpu=$(field "$TMP/run" cpu_s)
		run_end=$(field "$TMP/run" end_ns)
		if [ "$tool" = perf ]; then
			samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/err" | tail -n 1)
			lost=$(sed -n 's/.*Processed .* and lost \([0-9]*\) chunks.*/\1/p' "$TMP/err" | tail -n 1)
			file=$TMP/perf.data
			"$BIN/measure" "$TMP/flame" -- sh -c \
				'perf script -i "$1" 2> /dev/null | awk -f bench/stackcollapse.awk > "$2"' \
				sh "$file" "$TMP/perf.folded" || true
			folded=$TMP/perf.folded
			skip_root=1 # stackcollapse puts the process name first
		else
			samples=$(sed -n 's/^recce: \([0-9]*\) samples in.*/\1/p' "$TMP/err" | tail -n 1)
			lost=$(sed -n 's/^recce: .* \([0-9]*\) lost,.*/\1/p' "$TMP/err" | tail -n 1)
			file=$TMP/recce.pb.gz
			"$BIN/measure" "$TMP/flame" -- "$RECCE" report "$file" \
				--flame "$TMP/flame.svg" 2> /dev/null || true
			"$RECCE" report "$file" --folded --value samples -o "$TMP/recce.folded" ||
				: > "$TMP/recce.folded"
			folded=$TMP/recce.folded
			skip_root=0
		fi
		depth=$(awk -v s="$skip_root" '{ n = split($0, f, ";") - s; if (n > m) m = n } END { print m + 0 }' "$folded")
		line=$(printf '%s\tprof_cpu_s=%s\tprof_wall_s=%s\tprof_maxrss_kb=%s\tsamples=%s\tlost=%s\tsize_bytes=%s\ttail_s=%s\tflame_s=%s\tflame_status=%s\tmax_depth=%s' \
			"$line" "$(calc "$run_cpu - $wl_cpu")" "$(field "$TMP/run" wall_s)" \
			"$(field "$TMP/run" maxrss_kb)" "${samples:-0}" "${lost:-0}" \
			"$(stat -c %s "$file")" "$(calc "($run_end - $wl_end) / 1e9")" \
			"$(field "$TMP/flame" wall_s)" "$(field "$TMP/flame" status)" "$depth")
		if [ "$c" = split ]; then
			line=$(printf '%s\t%s' "$line" "$(awk -f bench/shares.awk \
				-v true_a="$(field "$TMP/stats" true_a)" -v true_b="$(field "$TMP/stats" true_b)" \
				-v true_c="$(field "$TMP/stats" true_c)" -v true_d="$(field "$TMP/stats" true_d)" \
				"$folded")")
		fi
	fi
	echo "$line" >> "$RAW"
	say "$c $tool rep $rep: workload $(field "$TMP/stats" wall_s) s wall${samples:+, $samples samples}"
}

# One run of a profiler attached by PID to a threads workload that is
# already running, for THREADS_SECONDS: peak RSS and CPU of the profiler
# process alone (the workload is not its child).
#
#     attach CASE TOOL REP WORKLOAD-ARGS...
attach() {
	c=$1 tool=$2 rep=$3
	shift 3
	rm -f "$TMP/stats" "$TMP/err"
	BENCH_STATS=$TMP/stats "$BIN/threads" "$@" > /dev/null 2>&1 &
	wpid=$!
	sleep 0.5
	status=0
	if [ "$tool" = perf ]; then
		"$BIN/measure" "$TMP/run" -- perf record -e cpu-clock -F "$HZ_LOW" -g -p "$wpid" \
			-o "$TMP/perf.data" -- sleep "$THREADS_SECONDS" > /dev/null 2> "$TMP/err" || status=$?
		samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/err" | tail -n 1)
		file=$TMP/perf.data
	else
		"$BIN/measure" "$TMP/run" -- "$RECCE" record -F "$HZ_LOW" -p "$wpid" \
			-d "$THREADS_SECONDS" -o "$TMP/recce.pb.gz" > /dev/null 2> "$TMP/err" || status=$?
		samples=$(sed -n 's/^recce: \([0-9]*\) samples in.*/\1/p' "$TMP/err" | tail -n 1)
		file=$TMP/recce.pb.gz
	fi
	wait "$wpid" || true
	if [ "$status" -ne 0 ]; then
		say "$c $tool rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=attach\tcase=%s\ttool=%s\trep=%s\tstatus=failed\n' "$c" "$tool" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=attach\tcase=%s\ttool=%s\trep=%s\tstatus=ok\thz=%s\tseconds=%s\t%s\tprof_cpu_s=%s\tprof_wall_s=%s\tprof_maxrss_kb=%s\tsamples=%s\tsize_bytes=%s\n' \
		"$c" "$tool" "$rep" "$HZ_LOW" "$THREADS_SECONDS" "$(joined "$TMP/stats")" \
		"$(field "$TMP/run" cpu_s)" "$(field "$TMP/run" wall_s)" \
		"$(field "$TMP/run" maxrss_kb)" "${samples:-0}" "$(stat -c %s "$file")" >> "$RAW"
	say "$c $tool rep $rep: peak RSS $(field "$TMP/run" maxrss_kb) KiB, ${samples:-0} samples"
}

# ---------------------------------------------------------------------------
# The groups of cases.

# One run of the events workload: ev TOOL N COMMAND... runs COMMAND N;
# with READER=1 `recce events -f` follows it from its first event to its
# end.
ev() {
	tool=$1 n=$2
	shift 2
	env BENCH_WAIT_MS=300 GMON_OUT_PREFIX="$TMP/gmon" "$@" "$n" > "$TMP/ev.out" 2>&1 &
	pid=$!
	if [ "${READER:-0}" = 1 ]; then
		i=0
		while ! grep -q ready "$TMP/ev.out" && [ $i -lt 100 ]; do sleep 0.01; i=$((i + 1)); done
		"$RECCE" events -p "$pid" -f --format json -o /dev/null 2> "$TMP/ev.reader" || true
	fi
	if wait "$pid" && v=$(sed -n 's/^ns_per_iter=//p' "$TMP/ev.out") && [ -n "$v" ]; then
		printf 'kind=ev\ttool=%s\trep=%s\titerations=%s\tns_per_iter=%s\tstatus=ok\n' \
			"$tool" "$rep" "$n" "$v" >> "$RAW"
	else
		printf 'kind=ev\tcase=events\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
	fi
}

# start_waiting MS OUT CMD [ARGS...]: starts a workload that waits MS
# milliseconds after printing "ready" (BENCH_WAIT_MS), its output into OUT,
# and returns once it is ready, with its pid in $pid.
start_waiting() {
	ms=$1 wout=$2
	shift 2
	BENCH_WAIT_MS=$ms "$@" > "$wout" 2>&1 &
	pid=$!
	i=0
	while ! grep -q ready "$wout" && [ $i -lt 100 ]; do sleep 0.01; i=$((i + 1)); done
}

# One run of the switches workload under an off-CPU profiler attached by
# pid while it waits to start: off TOOL (none, recce or perf).
off() {
	tool=$1
	rm -f "$TMP/off.err" "$TMP/perf.data" "$TMP/recce.pb.gz"
	start_waiting 500 "$TMP/off.out" "$BIN/switches" "$OFF_ROUNDS"
	events=
	case $tool in
	recce)
		"$RECCE" record -e offcpu -p "$pid" -o "$TMP/recce.pb.gz" 2> "$TMP/off.err" || true
		events=$(sed -n 's/^recce: \([0-9]*\) switches in.*/\1/p' "$TMP/off.err")
		;;
	perf)
		perf record -e sched:sched_switch -g -p "$pid" -o "$TMP/perf.data" \
			> /dev/null 2> "$TMP/off.err" || true
		events=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/off.err" | tail -n 1)
		;;
	esac
	if wait "$pid" && v=$(sed -n 's/^ns_per_iter=//p' "$TMP/off.out") && [ -n "$v" ]; then
		printf 'kind=off\ttool=%s\trep=%s\trounds=%s\tns_per_iter=%s\tswitches_per_s=%s\tevents=%s\tstatus=ok\n' \
			"$tool" "$rep" "$OFF_ROUNDS" "$v" "$(sed -n 's/^switches_per_s=//p' "$TMP/off.out")" \
			"${events:-0}" >> "$RAW"
	else
		printf 'kind=off\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
	fi
	say "offcpu $tool rep $rep: $v ns a round trip${events:+, $events events}"
}

# Off-CPU recording of a target that switches as fast as it can: its
# slowdown under recce record --event offcpu and under perf recording the
# sched:sched_switch tracepoint with call stacks.
group_offcpu() {
	for rep in $(seq "$REPS"); do
		off none
		off recce
		off perf
	done
	rm -f "$TMP/perf.data" "$TMP/recce.pb.gz"
}

# One run of the allocs workload under an allocation profiler attached by
# pid while it waits to start: alloc TOOL (none, recce or bpftrace).
alloc() {
	tool=$1
	rm -f "$TMP/alloc.err" "$TMP/recce.pb.gz"
	wait_ms=500
	[ "$tool" = bpftrace ] && wait_ms=5000 # its compiler starts first
	start_waiting "$wait_ms" "$TMP/alloc.out" "$BIN/allocs" "$ALLOC_STEPS"
	events=
	case $tool in
	recce)
		"$RECCE" record -e alloc -p "$pid" -o "$TMP/recce.pb.gz" 2> "$TMP/alloc.err" || true
		events=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$TMP/alloc.err")
		;;
	recce-fast)
		# In the process: recce's library and jumps on the allocator.
		"$RECCE" record -e alloc --fast -p "$pid" -o "$TMP/recce.pb.gz" 2> "$TMP/alloc.err" || true
		events=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$TMP/alloc.err")
		;;
	recce-returns)
		# As on a kernel without uprobe sessions (before 6.13): every
		# allocator call's return probed as well.
		RECCE_ALLOC_NO_SESSIONS=1 "$RECCE" record -e alloc -p "$pid" -o "$TMP/recce.pb.gz" \
			2> "$TMP/alloc.err" || true
		events=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$TMP/alloc.err")
		;;
	recce-events)
		# As on a kernel without uprobe_multi links (before 6.6): a
		# perf uprobe event at every entry and return.
		RECCE_NO_LINKS=1 "$RECCE" record -e alloc -p "$pid" -o "$TMP/recce.pb.gz" \
			2> "$TMP/alloc.err" || true
		events=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$TMP/alloc.err")
		;;
	bpftrace)
		# A stack and a sum at every malloc, a count at every free: what
		# a bpftrace user writes for an allocation profile.
		libc=$(sed -n 's|.* \(/[^ ]*/libc\.so\.6\)$|\1|p' "/proc/$pid/maps" | head -n 1)
		bpftrace -p "$pid" -e "uprobe:$libc:malloc { @bytes[ustack] = sum(arg0); }
			uprobe:$libc:free { @frees = count(); }" > /dev/null 2> "$TMP/alloc.err" &
		bpid=$!
		;;
	esac
	if wait "$pid" && v=$(sed -n 's/^ns_per_iter=//p' "$TMP/alloc.out") && [ -n "$v" ]; then
		printf 'kind=alloc\ttool=%s\trep=%s\tsteps=%s\tns_per_iter=%s\tallocs_per_s=%s\tevents=%s\tstatus=ok\n' \
			"$tool" "$rep" "$ALLOC_STEPS" "$v" "$(sed -n 's/^allocs_per_s=//p' "$TMP/alloc.out")" \
			"${events:-0}" >> "$RAW"
	else
		printf 'kind=alloc\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
	fi
	if [ "$tool" = bpftrace ]; then
		kill -INT "$bpid" 2> /dev/null || true
		wait "$bpid" 2> /dev/null || true
	fi
	say "alloc $tool rep $rep: $v ns a step${events:+, $events samples}"
}

# Allocation sampling of a target allocating a million times a second: its
# slowdown under recce record --event alloc (uprobes; --fast: in the
# process) and under bpftrace probing malloc and free.
group_alloc() {
	has_bpftrace=0
	command -v bpftrace > /dev/null && has_bpftrace=1
	[ $has_bpftrace = 1 ] || say "bpftrace is missing (Debian package bpftrace): its figure is left out"
	for rep in $(seq "$REPS"); do
		alloc none
		alloc recce
		alloc recce-fast
		alloc recce-returns
		alloc recce-events
		[ $has_bpftrace = 0 ] || alloc bpftrace
	done
	rm -f "$TMP/recce.pb.gz"
}

# Milliseconds since the epoch, for the wall time of a command.
now_ms() { date +%s%3N; }

# One patch and undo by recce, as TOOL, of FUNC=FIX in the process CMD...
# starts: how long it stays stopped.
patch_recce() {
	tool=$1 func=$2 fix=$3
	shift 3
	"$@" > /dev/null &
	pid=$!
	sleep 0.3
	t0=$(now_ms)
	"$RECCE" patch -p "$pid" --registry "$TMP/patches" "$func=$fix" > "$TMP/patch.out" 2>&1 || true
	t1=$(now_ms)
	"$RECCE" patch -p "$pid" --registry "$TMP/patches" --undo "$func" > "$TMP/undo.out" 2>&1 || true
	load=$(sed -n 's/^  stopped *\([0-9.]*\) ms to load.*/\1/p' "$TMP/patch.out")
	write=$(sed -n 's/.*ms), \([0-9.]*\) ms to write.*/\1/p' "$TMP/patch.out")
	undo=$(sed -n 's/.*own code again (stopped \([0-9.]*\) ms).*/\1/p' "$TMP/undo.out")
	kill "$pid" 2> /dev/null || true
	wait "$pid" 2> /dev/null || true
	if [ -n "$load" ] && [ -n "$write" ] && [ -n "$undo" ]; then
		printf 'kind=patch\ttool=%s\trep=%s\tload_stop_ms=%s\twrite_stop_ms=%s\tstop_ms=%s\tundo_stop_ms=%s\twall_ms=%s\tstatus=ok\n' \
			"$tool" "$rep" "$load" "$write" "$(calc "$load + $write")" "$undo" "$((t1 - t0))" >> "$RAW"
		say "patch $tool rep $rep: stopped $load + $write ms, undo $undo ms"
	else
		printf 'kind=patch\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
		say "patch $tool rep $rep failed: $(head -n 1 "$TMP/patch.out")"
	fi
}

# One patch and undo of a target whose four threads run the function
# being replaced (tests/targets/patchee.c), one of a target whose every
# thread sits in a timed sleep (tests/targets/torture.c sleeponly: recce
# borrows a sleeping thread and puts it back into its sleep), and the
# same library loaded by hand with gdb: how long the process stays
# stopped.
patch_once() {
	patch_recce recce slow_fib "$BIN/fib-fix.so:fast_fib" "$BIN/patchee"
	patch_recce recce-sleeper work "$BIN/torture-fix.so:fast_work" "$BIN/torture" sleeponly
	command -v gdb > /dev/null || return 0
	"$BIN/patchee" > /dev/null &
	pid=$!
	sleep 0.3
	t0=$(now_ms)
	gdb -p "$pid" -batch -nx -ex "call (void *) dlopen(\"$BIN/fib-fix.so\", 2)" > "$TMP/gdb.out" 2>&1 || true
	t1=$(now_ms)
	if grep -q '^\$1 = (void \*) 0x' "$TMP/gdb.out" && kill -0 "$pid" 2> /dev/null; then
		printf 'kind=patch\ttool=gdb\trep=%s\tstop_ms=%s\twall_ms=%s\tstatus=ok\n' \
			"$rep" "$((t1 - t0))" "$((t1 - t0))" >> "$RAW"
		say "patch gdb rep $rep: stopped $((t1 - t0)) ms"
	else
		printf 'kind=patch\ttool=gdb\trep=%s\tstatus=failed\n' "$rep" >> "$RAW"
	fi
	kill "$pid" 2> /dev/null || true
	wait "$pid" 2> /dev/null || true
}

# Waits (5 s at most) for bench/workloads/calls.c, started with
# --bursts-signal into $TMP/calls.out, to say it is ready.
calls_ready() { wait_line "$TMP/calls.out" ready 100; }

# What a call of a patched function costs: bench/workloads/calls.c's
# bursts of calls of traced(), as they are and with traced() patched to
# the same code in calls-fix.so (the jump, the veneer and the thunk that
# keeps every register the old function left alone).
thunk_once() {
	for tool in call-plain call-patched; do
		rm -f "$TMP/stats"
		status=0
		BENCH_STATS=$TMP/stats "$BIN/calls" --bursts-signal "$FAST_BURSTS" > "$TMP/calls.out" &
		w=$!
		calls_ready
		if [ $tool = call-patched ]; then
			"$RECCE" patch -p "$w" --registry "$TMP/patches" \
				"traced=$BIN/calls-fix.so:fast_traced" > "$TMP/thunk.out" 2>&1 || status=$?
		fi
		kill -USR1 "$w"
		wait "$w" || status=$?
		if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ]; then
			say "patch $tool rep $rep failed (status $status): $(head -n 1 "$TMP/thunk.out")"
			printf 'kind=patch\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
			continue
		fi
		ns=$(field "$TMP/stats" ns_per_call)
		printf 'kind=patch\ttool=%s\trep=%s\tns_per_call=%s\tstatus=ok\n' "$tool" "$rep" "$ns" \
			>> "$RAW"
		say "patch $tool rep $rep: $ns ns a call"
	done
}

group_patch() {
	command -v gdb > /dev/null || say "gdb is missing (Debian package gdb): its figure is left out"
	for rep in $(seq "$REPS"); do
		patch_once
		thunk_once
	done
}

# Every process of the machine profiled for a minute: two busy processes
# (cpu2 built without frame pointers, two threads each, so both cores
# are full) and CONT_IDLE sleeping ones, under nothing, `perf record -a
# -F 19` with `-g` or `--call-graph dwarf`, or `recce agent --continuous`
# (its default unwinder). What the profiler costs: its own CPU time (wait4
# of it and everything it reaped) and peak memory, the busy processes'
# CPU time for a fixed amount of work, and the bytes it wrote; what it
# got: the share of the busy processes' samples whose stack is whole.
continuous_once() {
	tool=$1
	idle=""
	for i in $(seq "$CONT_IDLE"); do
		sleep 3600 &
		idle="$idle $!"
	done
	rm -rf "$TMP/store" "$TMP/perf.data" "$TMP/run" "$TMP/agent"
	ppid=""
	case $tool in
	perf | perf-dwarf)
		cg=-g
		[ "$tool" = perf-dwarf ] && cg="--call-graph=dwarf"
		"$BIN/measure" "$TMP/run" -- perf record -a -F "$CONT_HZ" "$cg" -o "$TMP/perf.data" \
			> /dev/null 2> "$TMP/err" &
		ppid=$!
		;;
	recce)
		"$BIN/measure" "$TMP/run" -- "$RECCE" agent --continuous --store "$TMP/store" \
			--socket "$TMP/agent/a.sock" --rate "$CONT_HZ" --http off > /dev/null 2> "$TMP/err" &
		ppid=$!
		;;
	esac
	sleep 2
	: > "$TMP/stats"
	BENCH_STATS=$TMP/stats "$BIN/cpu2-nofp" "$units" > /dev/null &
	b1=$!
	BENCH_STATS=$TMP/stats "$BIN/cpu2-nofp" "$units" > /dev/null &
	b2=$!
	wait "$b1" "$b2" || true
	bytes=0
	if [ -n "$ppid" ]; then
		pkill -INT -P "$ppid" || true
		wait "$ppid" || true
		[ "$tool" = recce ] && bytes=$(du -sb "$TMP/store" | cut -f1)
		[ "$tool" = recce ] || bytes=$(stat -c %s "$TMP/perf.data" 2> /dev/null || echo 0)
	fi
	# The busy processes' stacks, folded: whole where main or the
	# thread's start leads to the worker.
	: > "$TMP/cont.folded"
	case $tool in
	perf*)
		perf script -i "$TMP/perf.data" --comm cpu2-nofp 2> /dev/null |
			awk -f bench/stackcollapse.awk > "$TMP/cont.folded" || true
		;;
	recce)
		"$RECCE" query --store "$TMP/store" --comm cpu2-nofp --from -10m --to now \
			-o "$TMP/cont.pb.gz" > /dev/null 2>&1 &&
			"$RECCE" report --folded "$TMP/cont.pb.gz" > "$TMP/cont.folded" 2> /dev/null || true
		;;
	esac
	whole=$(awk '/unit_of_work/ { n += $NF; if (/main;worker_left;|thread_right;worker_right;/ && !/\[unknown\]/) w += $NF }
		END { printf "%.2f", n ? 100 * w / n : 0 }' "$TMP/cont.folded")
	# shellcheck disable=SC2086
	kill $idle 2> /dev/null || true
	wait 2> /dev/null || true
	busy_cpu=$(awk -F'\t' '{ for (i = 1; i <= NF; i++) if ($i ~ /^cpu_s=/) s += substr($i, 7) } END { printf "%.3f", s }' "$TMP/stats")
	busy_wall=$(awk -F'\t' '{ for (i = 1; i <= NF; i++) if ($i ~ /^wall_s=/ && substr($i, 8) > w) w = substr($i, 8) } END { printf "%.3f", w }' "$TMP/stats")
	prof_cpu=0 prof_rss=0
	[ -n "$ppid" ] && prof_cpu=$(field "$TMP/run" cpu_s) prof_rss=$(field "$TMP/run" maxrss_kb)
	prof_wall=$busy_wall
	[ -n "$ppid" ] && prof_wall=$(field "$TMP/run" wall_s)
	printf 'kind=cont\ttool=%s\trep=%s\tbusy_cpu_s=%s\tbusy_wall_s=%s\tprof_cpu_s=%s\tprof_wall_s=%s\tprof_maxrss_kb=%s\tbytes=%s\twhole_pct=%s\tstatus=ok\n' \
		"$tool" "$rep" "$busy_cpu" "$busy_wall" "$prof_cpu" "$prof_wall" "$prof_rss" "$bytes" "$whole" >> "$RAW"
	say "continuous $tool rep $rep: busy $busy_cpu s CPU in $busy_wall s, profiler $prof_cpu s CPU, $prof_rss KiB, $bytes bytes, $whole% whole stacks"
}

# A query of one hour of one host: the store of the last recce run, its
# minute copied back 59 times (sqlite3), merged into one profile.
continuous_query() {
	[ -f "$TMP/store/store.db" ] || return 0
	command -v sqlite3 > /dev/null || { say "sqlite3 is missing: the query figure is left out"; return 0; }
	sqlite3 "$TMP/store/store.db" "
		WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 59)
		INSERT INTO profiles SELECT p.start_ns - k.n * 60000000000, p.end_ns - k.n * 60000000000,
			host, pid, comm, exe, build_id, cgroup, samples, cpu_ns, pprof FROM profiles p, k;
		WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 59)
		INSERT INTO windows SELECT w.start_ns - k.n * 60000000000, w.end_ns - k.n * 60000000000,
			host, samples, lost, idle, processes, agent_cpu_ns FROM windows w, k;"
	rows=$(sqlite3 "$TMP/store/store.db" "SELECT count(*) FROM profiles")
	for rep in $(seq "$REPS"); do
		"$BIN/measure" "$TMP/q" -- "$RECCE" query --store "$TMP/store" --from -61m --to now \
			-o "$TMP/hour.pb.gz" > /dev/null 2>&1 || true
		printf 'kind=cont\ttool=query\trep=%s\tquery_s=%s\trows=%s\tstatus=ok\n' \
			"$rep" "$(field "$TMP/q" wall_s)" "$rows" >> "$RAW"
		say "continuous query rep $rep: one hour ($rows process windows) in $(field "$TMP/q" wall_s) s"
	done
}

group_continuous() {
	units=$("$BIN/cpu2-nofp" --calibrate "$(calc "$CONT_SECONDS / 2")")
	for rep in $(seq "$REPS"); do
		for tool in none perf perf-dwarf recce; do
			continuous_once "$tool"
		done
	done
	continuous_query
}

# recce agent over TLS (--listen on loopback, certificates of `recce
# certs init`): what it costs idle (its CPU from schedstat, in ns, and its
# resident memory); how many trace events a second its stream carries to
# a client (`recce replay` of a file of AGENT_EVENTS calls, printed here
# through TLS, through the local socket, and locally with no agent); and
# what it adds to `record -d AGENT_RECORD` against the same run locally.
group_agent() {
	a=$(pwd)/$TMP/agent
	rm -rf "$a"
	mkdir -p "$a"
	"$RECCE" certs init "$a/tls" > /dev/null 2>&1 || die "recce certs init failed"
	"$RECCE" trace traced --count "$AGENT_EVENTS" --time 0 --limit 0 -o "$a/calls.rtr" \
		-- "$BIN/calls" 60 > /dev/null 2> "$a/trace.err" || true
	[ -s "$a/calls.rtr" ] || die "no trace file to replay: $(tail -n 3 "$a/trace.err")"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$RECCE" agent --socket "$a/a.sock" --listen "127.0.0.1:$port" --tls "$a/tls" \
		> /dev/null 2> "$a/agent.err" &
	apid=$!
	i=0
	while ! grep -q 'serving on' "$a/agent.err" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	node=127.0.0.1:$port
	"$BIN/calls" 3600 > /dev/null &
	target=$!
	for rep in $(seq "$REPS"); do
		# Idle: nothing asked of it for AGENT_IDLE seconds.
		c0=$(cut -d' ' -f1 "/proc/$apid/schedstat")
		sleep "$AGENT_IDLE"
		c1=$(cut -d' ' -f1 "/proc/$apid/schedstat")
		rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$apid/status")
		printf 'kind=agent\ttool=idle\trep=%s\tcpu_pct=%s\trss_kb=%s\tstatus=ok\n' "$rep" \
			"$(calc "($c1 - $c0) / 1e9 / $AGENT_IDLE * 100")" "$rss" >> "$RAW"
		say "agent rep $rep: idle $(calc "($c1 - $c0) / 1e6") ms CPU in $AGENT_IDLE s, RSS $rss kB"
		# The stream: one replay each way, events a second.
		for how in local unix tls; do
			case $how in
			local) set -- "$RECCE" ;;
			unix) set -- "$RECCE" --node "unix:$a/a.sock" ;;
			tls) set -- "$RECCE" --tls "$a/tls" --node "$node" ;;
			esac
			"$BIN/measure" "$a/run" -- "$@" replay "$a/calls.rtr" > "$a/replay.out" 2> "$a/replay.err" || true
			lines=$(wc -l < "$a/replay.out")
			wall=$(field "$a/run" wall_s)
			st=ok
			[ "$lines" -ge "$AGENT_EVENTS" ] || st=failed
			printf 'kind=agent\ttool=stream-%s\trep=%s\tevents=%s\twall_s=%s\tevents_per_s=%s\tstatus=%s\n' \
				"$how" "$rep" "$lines" "$wall" "$(calc "$lines / $wall")" "$st" >> "$RAW"
			say "agent rep $rep: replay $how: $lines events in $wall s ($st)"
			[ "$st" = ok ] || tail -n 3 "$a/replay.err" >&2
		done
		# record -d AGENT_RECORD of the busy target, here and through TLS.
		for how in local tls; do
			case $how in
			local) set -- "$RECCE" ;;
			tls) set -- "$RECCE" --tls "$a/tls" --node "$node" ;;
			esac
			rm -f "$a/rec.pb.gz"
			"$BIN/measure" "$a/run" -- "$@" record -p "$target" -d "$AGENT_RECORD" -o "$a/rec.pb.gz" \
				> /dev/null 2> "$a/rec.err" || true
			st=ok
			[ -s "$a/rec.pb.gz" ] || st=failed
			printf 'kind=agent\ttool=record-%s\trep=%s\twall_s=%s\tstatus=%s\n' "$how" "$rep" \
				"$(field "$a/run" wall_s)" "$st" >> "$RAW"
			say "agent rep $rep: record -d $AGENT_RECORD $how: $(field "$a/run" wall_s) s"
		done
	done
	kill "$target" 2> /dev/null || true
	kill -INT "$apid" 2> /dev/null || true
	wait 2> /dev/null || true
}

# recce tasks --libuv on a loop that turns as fast as it can (uvloop's
# idle callback): what each callback costs under it (the loop's turn,
# minus the turn with nothing attached), beside a bare uprobe and
# uretprobe on the same callback function (uprobe-bare, the floor of any
# probe), and whether recce counted every callback.
libuv_run() {
	tool=$1 rep=$2 seen=""
	rm -f "$TMP/stats" "$TMP/err"
	case $tool in
	none) BENCH_STATS=$TMP/stats "$BIN/uvloop" 1 "$LIBUV_SECONDS" ;;
	bare)
		BENCH_STATS=$TMP/stats "$BIN/uprobe-bare" "$BIN/uvloop" idle_work -- \
			"$BIN/uvloop" 1 "$LIBUV_SECONDS" > /dev/null 2> "$TMP/err" || true
		;;
	recce)
		BENCH_STATS=$TMP/stats "$BIN/uvloop" 1 "$LIBUV_SECONDS" &
		w=$!
		sleep 0.3 # its libuv loaded; it waits a second before its callbacks
		"$RECCE" tasks --libuv -p "$w" --limit 0 --json -i 100 -d $((LIBUV_SECONDS + 5)) \
			> "$TMP/tasks.json" 2> "$TMP/err" &
		r=$!
		wait "$w" || true
		kill -INT "$r" 2> /dev/null || true
		wait "$r" || true
		seen=$(tail -n 1 "$TMP/tasks.json" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
print(next((t["runs"] for t in d.get("types", []) if t["type"] == "idle_work"), 0))' 2> /dev/null || echo 0)
		;;
	esac
	if [ ! -s "$TMP/stats" ]; then
		say "libuv $tool rep $rep failed:"
		tail -n 3 "$TMP/err" >&2 || true
		printf 'kind=uvtasks\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=uvtasks\ttool=%s\trep=%s\tcallbacks=%s\tns_per_callback=%s\tseen=%s\tstatus=ok\n' \
		"$tool" "$rep" "$(field "$TMP/stats" callbacks)" "$(field "$TMP/stats" ns_per_callback)" \
		"$seen" >> "$RAW"
	say "libuv $tool rep $rep: $(field "$TMP/stats" callbacks) callbacks, $(field "$TMP/stats" ns_per_callback) ns each${seen:+, recce saw $seen}"
}

group_libuv() {
	for rep in $(seq "$REPS"); do
		for tool in none bare recce; do
			libuv_run "$tool" "$rep"
		done
	done
}

# bench/workloads/events.c with librecce, as $BIN/ev-recce: the events
# group's writer, and the clock loop both it and the fast group time.
build_ev_recce() {
	lib=$B/lib/librecce.a
	[ -f "$lib" ] || die "no $lib: run make first"
	$CC -std=gnu11 -O2 -g -Iinclude -DWITH_RECCE -o "$BIN/ev-recce" bench/workloads/events.c \
		"$lib" -pthread
}

# The cost of one in-process event: librecce with a reader attached, with
# none and switched off; an LTTng-UST tracepoint with a session recording
# it and with none; a call recorded by uftrace; the CPU's clock read alone
# and the bare loop, which every figure is taken relative to.
group_events() {
	build_ev_recce
	lttng_ok=0
	if command -v lttng-sessiond > /dev/null &&
		$CC -std=gnu11 -O2 -g -Ibench/workloads -DWITH_LTTNG -o "$BIN/ev-lttng" \
			bench/workloads/events.c -llttng-ust -ldl -pthread 2> "$TMP/lttng.err"; then
		lttng_ok=1
	else
		say "LTTng-UST is missing (liblttng-ust-dev, lttng-tools): its figures are left out"
	fi
	uftrace_ok=0
	if command -v uftrace > /dev/null && $CC -std=gnu11 -O2 -g -pg -o "$BIN/ev-pg" \
		bench/workloads/events.c; then
		uftrace_ok=1
	fi
	export LTTNG_HOME="$TMP/lttng-home"
	if [ $lttng_ok = 1 ]; then
		# A session daemon of the run's own, stopped by its pid at the end.
		mkdir -p "$LTTNG_HOME"
		lttng-sessiond --no-kernel > /dev/null 2>&1 &
		sessiond=$!
		i=0
		while ! lttng list > /dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	fi
	for rep in $(seq "$REPS"); do
		# The clock first: the bare loop's first run of a repetition came
		# out slow, as if the CPU were still waking up.
		ev clock "$EV_FAST" "$BIN/ev-recce" clock
		ev base "$EV_FAST" "$BIN/ev-recce" base
		ev recce-off "$EV_FAST" env RECCE_EVENTS=off "$BIN/ev-recce" recce
		ev recce-noreader "$EV_FAST" "$BIN/ev-recce" recce
		READER=1 ev recce "$EV_FAST" "$BIN/ev-recce" recce
		READER=1 ev recce-task "$EV_FAST" "$BIN/ev-recce" task
		if [ $lttng_ok = 1 ]; then
			ev lttng-off "$EV_SLOW" "$BIN/ev-lttng" lttng
			rm -rf "$TMP/lttng-trace"
			lttng create recce-bench --output="$TMP/lttng-trace" > /dev/null &&
				lttng enable-event -u 'recce_bench:tick' > /dev/null &&
				lttng start > /dev/null &&
				ev lttng "$EV_SLOW" "$BIN/ev-lttng" lttng
			lttng destroy recce-bench > /dev/null 2>&1 || true
		fi
		if [ $uftrace_ok = 1 ]; then
			ev uftrace "$EV_SLOW" uftrace record --no-libcall -d "$TMP/uftrace.data" \
				"$BIN/ev-pg" call
		fi
		say "events rep $rep done"
	done
	if [ $lttng_ok = 1 ]; then
		kill "$sessiond" 2> /dev/null || true
		wait "$sessiond" 2> /dev/null || true
		rm -rf "$TMP/lttng-trace" "$LTTNG_HOME"
	fi
	rm -rf "$TMP/uftrace.data"
	unset LTTNG_HOME
}

# recce trace --fast: what a traced call costs the target (the calls
# workload's own time per call) with recce's library loaded into it and a
# jump on the function's entry (and with --return, its exit), against the same calls traced through
# uprobes by recce (calls only, as --fast), a bare uprobe and uretprobe
# pair (bench/uprobe-bare.c) and uftrace recording a -pg build of the
# workload (every function's entry and return). Then the time from
# starting `recce trace --fast -p PID traced --count 1` on the busy
# workload to its exit after the first event: injection, trampolines and
# jumps, the first event, and the jumps taken out again.
#
#     fast_run TOOL REP
fast_run() {
	tool=$1 rep=$2 events= lost=0
	rm -f "$TMP/stats" "$TMP/err" "$TMP/fast.trace"
	status=0
	case $tool in
	fast | fast-ret | fast-slow)
		# fast-slow: the flight recorder with no call slow enough, which
		# must cost what --return does and write nothing.
		out="-o $TMP/fast.trace" ret=
		[ "$tool" = fast-ret ] && ret=--return
		[ "$tool" = fast-slow ] && ret="--slow 10s" out=
		BENCH_STATS=$TMP/stats "$BIN/calls" --bursts-signal "$FAST_BURSTS" > "$TMP/calls.out" &
		w=$!
		calls_ready
		# shellcheck disable=SC2086 # options split on purpose
		"$RECCE" trace --fast -p "$w" traced $ret --count 0 --time 0 --limit 0 \
			$out > "$TMP/fast.out" 2> "$TMP/err" &
		r=$!
		wait_line "$TMP/err" 'with jumps' 200
		kill -USR1 "$w"
		wait "$w" || status=$?
		sleep 1 # recce reads what is left in the rings
		kill -INT "$r" 2> /dev/null || true
		wait "$r" || status=$?
		events=$(sed -n 's/^recce: stopped after \([0-9]*\) events.*/\1/p' "$TMP/err")
		lost=$(fast_lost "$TMP/err")
		[ "$tool" = fast-slow ] && [ -s "$TMP/fast.out" ] &&
			say "fast-slow rep $rep: it wrote $(wc -l < "$TMP/fast.out") lines, none expected" &&
			status=1
		;;
	*)
		# A uprobe costs microseconds: fewer bursts give as many digits.
		n=$FAST_BURSTS
		case $tool in
		none) set -- "$BIN/calls" ;;
		uprobe) set -- "$RECCE" trace traced --count 0 --time 0 --limit 0 -o "$TMP/fast.trace" \
			-- "$BIN/calls" && n=$SLOW_BURSTS ;;
		bare) set -- "$BIN/uprobe-bare" "$BIN/calls" traced -- "$BIN/calls" && n=$SLOW_BURSTS ;;
		uftrace) set -- uftrace record --no-libcall -d "$TMP/uftrace.data" "$BIN/calls-pg" ;;
		esac
		BENCH_STATS=$TMP/stats "$BIN/measure" "$TMP/run" -- "$@" --bursts "$n" \
			> /dev/null 2> "$TMP/err" || status=$?
		events=$(sed -n 's/^recce: stopped after \([0-9]*\) events.*/\1/p' "$TMP/err")
		;;
	esac
	rm -rf "$TMP/uftrace.data" "$TMP/fast.trace"
	if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ]; then
		say "fast $tool rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=fast\tcase=calls\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=fast\tcase=calls\ttool=%s\trep=%s\tstatus=ok\t%s\tevents=%s\tlost=%s\n' \
		"$tool" "$rep" "$(joined "$TMP/stats")" "${events:-0}" "${lost:-0}" >> "$RAW"
	say "fast $tool rep $rep: $(field "$TMP/stats" ns_per_call) ns a call${events:+, $events events}"
}

# One read of the CPU's time-stamp counter (bench/workloads/events.c's
# clock loop), which each event of --fast makes: the floor under a call
# and its return is two of them.
fast_clock() {
	rep=$1
	if "$BIN/ev-recce" clock "$EV_FAST" > "$TMP/ev.out" 2>&1 &&
		v=$(sed -n 's/^ns_per_iter=//p' "$TMP/ev.out") && [ -n "$v" ]; then
		printf 'kind=fast\tcase=clock\ttool=clock\trep=%s\tstatus=ok\tns_per_read=%s\n' \
			"$rep" "$v" >> "$RAW"
	fi
}

# Start of `recce trace --fast --count 1` on the busy workload to its exit.
fast_first() {
	rep=$1
	"$BIN/calls" 10 > /dev/null &
	w=$!
	sleep 0.3
	t0=$(date +%s%N)
	"$RECCE" trace --fast -p "$w" traced --count 1 > /dev/null 2> "$TMP/err" || true
	t1=$(date +%s%N)
	kill "$w" 2> /dev/null || true
	wait "$w" 2> /dev/null || true
	ms=$(calc "($t1 - $t0) / 1e6")
	printf 'kind=fast\tcase=first\ttool=first\trep=%s\tstatus=ok\tfirst_ms=%s\n' "$rep" "$ms" >> "$RAW"
	say "fast first event rep $rep: $ms ms from start to exit"
}

# recce trace --fast's reader: 4 threads making 1,000,000 calls a second
# together for 3 s (tests/targets/tight paced), traced to a trace file
# (calls; calls and returns) and to the terminal's text (into a file):
# the events recce kept against those made, the ones it says it lost, the
# file's bytes per event, and recce's CPU time.
#
#     fast_reader MODE REP
FAST_READER_CALLS=750000 # a thread's calls: 3 s at 250,000 a second
fast_reader() {
	mode=$1 rep=$2
	rm -f "$TMP/reader.trace" "$TMP/reader.err" "$TMP/reader.out" "$TMP/tight.out"
	"$BIN/tight" "$FAST_READER_CALLS" 4 1000000 > "$TMP/tight.out" &
	w=$!
	wait_line "$TMP/tight.out" ready 100
	set --
	made=$((4 * FAST_READER_CALLS))
	case $mode in
	*-ret) set -- --return && made=$((2 * made)) ;;
	esac
	case $mode in
	file*) set -- "$@" -o "$TMP/reader.trace" ;;
	esac
	"$RECCE" trace --fast -p "$w" step --count 0 --time 0 --limit 0 "$@" \
		> "$TMP/reader.out" 2> "$TMP/reader.err" &
	r=$!
	wait_line "$TMP/reader.err" 'with jumps' 200
	kill -USR1 "$w"
	wait_line "$TMP/tight.out" '^done' 600
	sleep 0.5 # recce reads what is left in the rings
	# utime and stime, in clock ticks, after the command's name
	cpu=$(sed 's/.*) //' "/proc/$r/stat" | awk '{ print ($12 + $13) / 100 }')
	kill -INT "$r"
	status=0
	wait "$r" || status=$?
	kill "$w" 2> /dev/null || true
	wait "$w" 2> /dev/null || true
	lost=$(fast_lost "$TMP/reader.err")
	if [ "$mode" = text ]; then
		kept=$(wc -l < "$TMP/reader.out")
		bytes=
	else
		kept=$(sed -n 's/^recce: wrote \([0-9]*\) events.*/\1/p' "$TMP/reader.err")
		bytes=$(calc "($(stat -c %s "$TMP/reader.trace") - 64) / ${kept:-1}")
	fi
	rm -f "$TMP/reader.trace"
	if [ "$status" -ne 0 ] || [ -z "$kept" ]; then
		say "fast reader $mode rep $rep failed (status $status):"
		tail -n 5 "$TMP/reader.err" >&2
		printf 'kind=fast\tcase=reader\ttool=reader-%s\trep=%s\tstatus=failed\n' "$mode" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=fast\tcase=reader\ttool=reader-%s\trep=%s\tstatus=ok\tmade=%s\tkept=%s\tlost=%s\tbytes=%s\tcpu_s=%s\n' \
		"$mode" "$rep" "$made" "$kept" "${lost:-0}" "$bytes" "$cpu" >> "$RAW"
	say "fast reader $mode rep $rep: kept $kept of $made events, ${lost:-0} lost${bytes:+, $bytes bytes an event}, recce $cpu s of CPU"
}

# recce trace --fast --tree over every function of Debian's redis-server
# (a real server, built without frame pointers) under redis-benchmark: the
# requests a second (SET and GET, their mean) alone and under the trace,
# and the events recce showed and those it counted lost.
#
#     fast_tree REP
FAST_TREE_REQUESTS=200000
fast_tree() {
	rep=$1 dir=$TMP/redis
	if ! command -v redis-server > /dev/null || ! command -v redis-benchmark > /dev/null; then
		say "redis is missing (apt-get install redis-server redis-tools): --tree on it left out"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	port=$((20000 + $$ % 10000))
	printf 'port %s\nbind 127.0.0.1\nsave ""\nappendonly no\ndir %s\n' "$port" "$dir" \
		> "$dir/redis.conf"
	redis-server "$dir/redis.conf" > "$dir/log" 2>&1 &
	srv=$!
	wait_line "$dir/log" 'Ready to accept' 100
	for tool in alone tree; do
		events='' lost=''
		if [ $tool = tree ]; then
			"$RECCE" trace --fast -p "$srv" 'redis-server:*' --max-probes 5000 --tree \
				--count 0 --limit 0 --time 0 > /dev/null 2> "$dir/err" &
			r=$!
			wait_line "$dir/err" 'with jumps' 600
		fi
		rps=$(redis-benchmark -p "$port" -n "$FAST_TREE_REQUESTS" -c 20 -t set,get --csv \
			2> /dev/null | awk -F'"' '$2 == "SET" || $2 == "GET" { s += $4; n++ }
				END { if (n) printf "%.0f", s / n }')
		if [ $tool = tree ]; then
			kill -INT "$r"
			wait "$r" || true
			events=$(sed -n 's/^recce: stopped after \([0-9]*\) events.*/\1/p' "$dir/err")
			lost=$(fast_lost "$dir/err")
			fns=$(sed -n 's/^recce: tracing \([0-9]*\) functions.*/\1/p' "$dir/err")
		fi
		if [ -z "$rps" ]; then
			say "fast tree-$tool rep $rep failed:"
			tail -n 5 "$dir/err" "$dir/log" >&2
			printf 'kind=fast\tcase=tree\ttool=tree-%s\trep=%s\tstatus=failed\n' "$tool" "$rep" \
				>> "$RAW"
			continue
		fi
		printf 'kind=fast\tcase=tree\ttool=tree-%s\trep=%s\tstatus=ok\trps=%s\tevents=%s\tlost=%s\tfunctions=%s\n' \
			"$tool" "$rep" "$rps" "$events" "${lost:-0}" "${fns:-}" >> "$RAW"
		say "fast tree-$tool rep $rep: $rps requests a second${events:+, $events events, ${lost:-0} lost}"
	done
	kill "$srv" 2> /dev/null || true
	wait "$srv" 2> /dev/null || true
}

group_fast() {
	build_ev_recce
	uftrace_ok=0
	if command -v uftrace > /dev/null && $CC -std=gnu11 -O2 -g -pg -o "$BIN/calls-pg" \
		bench/workloads/calls.c; then
		uftrace_ok=1
	else
		say "uftrace is missing: its figures are left out"
	fi
	for rep in $(seq "$REPS"); do
		for tool in none fast fast-ret fast-slow uprobe bare uftrace; do
			[ $tool = uftrace ] && [ $uftrace_ok = 0 ] && continue
			fast_run "$tool" "$rep"
		done
		fast_first "$rep"
		fast_clock "$rep"
		for mode in file file-ret text; do
			fast_reader "$mode" "$rep"
		done
		fast_tree "$rep"
	done
}

group_trace() {
	for rep in $(seq "$REPS"); do
		for tool in none bare recce uret stack-fp stack bpftrace; do
			trace_run "$tool" "$rep"
		done
		trace_recovery "$rep"
	done
}

group_top() {
	units=$("$BIN/cpu2" --calibrate "$CPU2_SECONDS")
	for rep in $(seq "$REPS"); do
		for c in top-pid top-system; do
			for tool in procps recce; do
				top_cost "$c" "$tool" "$rep"
			done
		done
		for tool in none recce; do
			top_slowdown "$tool" "$rep" "$units"
		done
	done
}

group_slowdown() {
	units=$("$BIN/cpu2" --calibrate "$CPU2_SECONDS")
	for rep in $(seq "$REPS"); do
		for setting in "$HZ_LOW fp" "$HZ_HIGH fp" "$HZ_LOW dwarf" "$HZ_HIGH dwarf" \
			"$HZ_LOW auto" "$HZ_HIGH auto"; do
			# shellcheck disable=SC2086
			set -- $setting
			for tool in none perf recce; do
				record "cpu2-$1-$2" "$tool" "$1" "$2" "$rep" "$BIN/cpu2" "$units"
			done
		done
	done
}

# Debian's python3.11 running Python code, alone and recorded: recce reads
# its Python frames at every sample (a BPF program), perf does not, so the
# difference is what the frames cost. py-spy, the tool Python users reach
# for, is not a Debian package, and this machine installs from Debian
# only: it is not measured.
group_python() {
	py=/usr/bin/python3.11
	[ -x "$py" ] || die "python: $py is missing (scripts/install-deps.sh installs it)"
	units=$("$py" bench/workloads/pywork.py --calibrate "$CPU2_SECONDS")
	for rep in $(seq "$REPS"); do
		for hz in "$HZ_LOW" "$HZ_HIGH"; do
			for tool in none perf recce; do
				record "python-$hz-auto" "$tool" "$hz" auto "$rep" "$py" \
					bench/workloads/pywork.py "$units"
			done
		done
		python_bpf_once "$rep" "$units"
		python_trace_once "$rep" $((units / 100 > 0 ? units / 100 : 1))
		python_dump_once "$rep"
	done
}

# The Python frame program's own time at the samples of a recording at
# HZ_LOW, as the kernel counts it (kernel.bpf_stats_enabled: a program's
# run_time_ns and run_cnt, read with bpftool while recce records, the
# last reading kept; recce's program is the newest of its name): what
# recce adds inside the target to the sampling perf does too, measured
# exactly where the target's CPU time alone varies here by more than
# the 1% budget.
python_bpf_once() {
	pb_rep=$1 pb_units=$2
	command -v bpftool > /dev/null || die "bpftool is missing: sh scripts/install-deps.sh"
	pb_was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	rm -f "$TMP/pybpf" "$TMP/stats"
	BENCH_STATS=$TMP/stats "$RECCE" record -F "$HZ_LOW" -o "$TMP/pybpf.pb.gz" -- "$py" \
		bench/workloads/pywork.py "$pb_units" > /dev/null 2> "$TMP/err" &
	pb_pid=$!
	while kill -0 "$pb_pid" 2> /dev/null; do
		bpftool -j prog show 2> /dev/null | "$py" -c '
import json, sys
ps = [p for p in json.load(sys.stdin) if p.get("name") == "recce_py"]
if ps:
    p = max(ps, key=lambda p: p["id"])
    print("runs=%d\trun_ns=%d" % (p.get("run_cnt", 0), p.get("run_time_ns", 0)))' \
			> "$TMP/pybpf.now" 2> /dev/null && [ -s "$TMP/pybpf.now" ] && mv "$TMP/pybpf.now" "$TMP/pybpf"
		sleep 0.1
	done
	status=0
	wait "$pb_pid" || status=$?
	sysctl -qw kernel.bpf_stats_enabled="$pb_was"
	if [ "$status" -ne 0 ] || [ ! -s "$TMP/pybpf" ] || [ ! -s "$TMP/stats" ]; then
		say "pybpf rep $pb_rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=pybpf\ttool=recce\trep=%s\tstatus=failed\n' "$pb_rep" >> "$RAW"
		return
	fi
	printf 'kind=pybpf\ttool=recce\trep=%s\tstatus=ok\thz=%s\t%s\tcpu_s=%s\n' "$pb_rep" "$HZ_LOW" \
		"$(cat "$TMP/pybpf")" "$(field "$TMP/stats" cpu_s)" >> "$RAW"
}

# `recce trace 'py:...'` matching none of pywork's functions: every
# Python call still traps (function__entry), and CPython runs in its
# line-tracing mode while traced, which its function probes need. The
# workload's time alone and traced, for docs/recce-trace.md's figure,
# and traced with --caller, which has the probe's program read the
# thread's Python frames at every call; a hundredth of the calibrated
# work, since traced it runs many times slower. No budget: the cost is
# the interpreter's design, and said.
python_trace_once() {
	pt_rep=$1 pt_units=$2
	for tool in none recce recce-caller; do
		rm -f "$TMP/stats"
		status=0
		case $tool in
		none)
			BENCH_STATS=$TMP/stats "$py" bench/workloads/pywork.py "$pt_units" \
				> /dev/null 2> "$TMP/err" || status=$?
			;;
		recce)
			BENCH_STATS=$TMP/stats "$RECCE" trace 'py:no_such_function' --limit 0 \
				--count 0 --time 3600 -- "$py" bench/workloads/pywork.py "$pt_units" \
				> /dev/null 2> "$TMP/err" || status=$?
			;;
		recce-caller)
			BENCH_STATS=$TMP/stats "$RECCE" trace 'py:no_such_function' --caller --limit 0 \
				--count 0 --time 3600 -- "$py" bench/workloads/pywork.py "$pt_units" \
				> /dev/null 2> "$TMP/err" || status=$?
			;;
		esac
		if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ]; then
			say "pytrace $tool rep $pt_rep failed (status $status):"
			tail -n 5 "$TMP/err" >&2
			printf 'kind=pytrace\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$pt_rep" >> "$RAW"
			continue
		fi
		printf 'kind=pytrace\ttool=%s\trep=%s\tstatus=ok\tunits=%s\t%s\n' "$tool" "$pt_rep" \
			"$pt_units" "$(joined "$TMP/stats")" >> "$RAW"
	done
}

# `recce dump -p PID` of a CPython with 100 threads waiting a few calls
# deep (bench/workloads/pythreads.py): the median of five dumps' wall
# times a repetition, each stopping every thread, reading its stack and
# Python frames and letting it go.
python_dump_once() {
	pd_rep=$1
	"$py" bench/workloads/pythreads.py 100 > "$TMP/pythreads.out" 2>&1 &
	pt=$!
	for _ in $(seq 600); do
		grep -q ready "$TMP/pythreads.out" && break
		sleep 0.05
	done
	: > "$TMP/dump.times"
	for _ in 1 2 3 4 5; do
		status=0
		"$BIN/measure" "$TMP/run" -- "$RECCE" dump -p "$pt" > "$TMP/dump.out" 2> "$TMP/err" ||
			status=$?
		threads=$(grep -c '^thread ' "$TMP/dump.out")
		if [ "$status" -ne 0 ] || [ "$threads" -ne 100 ]; then
			say "pydump rep $pd_rep failed (status $status, $threads threads):"
			tail -n 5 "$TMP/err" >&2
			break
		fi
		field "$TMP/run" wall_s >> "$TMP/dump.times"
	done
	kill "$pt"
	wait "$pt" 2> /dev/null || true
	if [ "$(wc -l < "$TMP/dump.times")" -ne 5 ]; then
		printf 'kind=pydump\ttool=recce\trep=%s\tstatus=failed\n' "$pd_rep" >> "$RAW"
		return
	fi
	printf 'kind=pydump\ttool=recce\trep=%s\tstatus=ok\tthreads=100\twall_s=%s\n' "$pd_rep" \
		"$(sort -n "$TMP/dump.times" | sed -n 3p)" >> "$RAW"
}

group_deep() {
	units=$("$BIN/deep" --calibrate "$DEEP_SECONDS")
	for rep in $(seq "$REPS"); do
		for cg in fp dwarf auto; do
			for tool in none perf recce; do
				record "deep-$HZ_HIGH-$cg" "$tool" "$HZ_HIGH" "$cg" "$rep" "$BIN/deep" "$units"
			done
		done
	done
}

# The cost of a sample to the target, by how its stack is taken: the
# workload's own CPU time over the same work alone, per sample, at a rate
# high enough (PS_HZ a thread, both threads busy) for a microsecond a
# sample to stand well out of the noise. The kernel's sample with no stack
# (perf record without -g) is the floor every way pays; the rest is the
# stack: the kernel's frame-pointer walk (perf -g, recce fp), the 8 KiB
# copy (perf --call-graph dwarf), and recce's default, auto (the walk and
# the copy, unwound by recce).
#     persample_once MODE REP UNITS
persample_once() {
	mode=$1 rep=$2 units=$3 samples= status=0
	rm -f "$TMP/stats" "$TMP/err" "$TMP/perf.data" "$TMP/recce.pb.gz"
	case $mode in
	none)
		BENCH_STATS=$TMP/stats "$BIN/cpu2" "$units" > /dev/null 2> "$TMP/err" || status=$?
		;;
	perf-*)
		case $mode in
		perf-nostack) pcg= ;;
		perf-fp) pcg=-g ;;
		perf-dwarf) pcg="--call-graph dwarf,$STACK_BYTES" ;;
		esac
		# shellcheck disable=SC2086
		BENCH_STATS=$TMP/stats perf record -e cpu-clock -F "$PS_HZ" $pcg -o "$TMP/perf.data" \
			-- "$BIN/cpu2" "$units" > /dev/null 2> "$TMP/err" || status=$?
		samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/err" | tail -n 1)
		;;
	recce-*)
		rcg=${mode#recce-}
		[ "$rcg" = fp ] || rcg=$rcg,$STACK_BYTES
		BENCH_STATS=$TMP/stats "$RECCE" record -F "$PS_HZ" --call-graph "$rcg" \
			-o "$TMP/recce.pb.gz" -- "$BIN/cpu2" "$units" > /dev/null 2> "$TMP/err" || status=$?
		samples=$(sed -n 's/^recce: \([0-9]*\) samples in.*/\1/p' "$TMP/err" | tail -n 1)
		;;
	esac
	if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ] || { [ "$mode" != none ] && [ -z "$samples" ]; }; then
		say "persample $mode rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=persample\ttool=%s\trep=%s\tstatus=failed\n' "$mode" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=persample\ttool=%s\trep=%s\tstatus=ok\thz=%s\tsamples=%s\t%s\n' \
		"$mode" "$rep" "$PS_HZ" "${samples:-0}" "$(joined "$TMP/stats")" >> "$RAW"
}

group_persample() {
	units=$("$BIN/cpu2" --calibrate "$PS_SECONDS")
	for rep in $(seq "$REPS"); do
		for mode in none perf-nostack perf-fp perf-dwarf recce-fp recce-auto; do
			persample_once "$mode" "$rep" "$units"
		done
	done
}

# cpu2 long enough for TENK_SAMPLES samples at HZ_HIGH over its two threads.
group_tenk() {
	units=$("$BIN/cpu2" --calibrate "$(calc "$TENK_SAMPLES / $HZ_HIGH / 2")")
	for rep in $(seq "$REPS"); do
		for tool in perf recce; do
			record "tenk-$HZ_HIGH-fp" "$tool" "$HZ_HIGH" fp "$rep" "$BIN/cpu2" "$units"
		done
	done
}

group_split() {
	for rep in $(seq "$REPS"); do
		for tool in perf recce; do
			record split "$tool" "$HZ_HIGH" fp "$rep" "$BIN/split" "$SPLIT_SECONDS"
		done
	done
}

group_threads() {
	t=$(calc "$THREADS_SECONDS + 2")
	for rep in $(seq "$REPS"); do
		for tool in perf recce; do
			attach threads-200 "$tool" "$rep" "$t" 200
			attach threads-churn "$tool" "$rep" --churn "$t"
		done
	done
}

group_symbolize() {
	build_bigbin
	big=$BIN/bigbin
	# Random addresses inside the functions of the binary (nm's text
	# symbols with a size), the same list for every tool.
	nm -S --defined-only "$big" | awk -v n="$SYM_ADDRS" '
		function hex(s,    i, v) {
			v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		$3 ~ /^[tT]$/ && hex($2) > 0 { start[++k] = hex($1); size[k] = hex($2) }
		END {
			srand(42)
			for (i = 0; i < n; i++) {
				j = int(rand() * k) + 1
				printf "%x\n", start[j] + int(rand() * size[j])
			}
		}' > "$TMP/addrs"
	head -n "$SYM_EU_ADDRS" "$TMP/addrs" > "$TMP/addrs-eu"
	sed 's/^/0x/' "$TMP/addrs" > "$TMP/addrs-0x"   # llvm-symbolizer wants the 0x
	funcs=$(nm --defined-only "$big" | grep -c ' [tT] f[0-9]')
	for rep in $(seq "$REPS"); do
		# recce addr2line three ways: building the binary's table in a
		# new cache (cold), reading it back (warm), and without one.
		rm -rf "$TMP/symcache"
		for tool in recce-cold recce recce-nocache; do
			case $tool in
			recce-nocache) flags=--no-cache ;;
			*) flags= ;;
			esac
			# shellcheck disable=SC2016
			RECCE_CACHE_DIR=$TMP/symcache "$BIN/measure" "$TMP/run" -- \
				sh -c '"$1" addr2line $2 -a -f -i -e "$3" < "$4" > "$5"' sh \
				"$RECCE" "$flags" "$big" "$TMP/addrs" "$TMP/out-$tool"
			printf 'kind=sym\ttool=%s\trep=%s\taddresses=%s\tfunctions=%s\t%s\n' "$tool" "$rep" \
				"$SYM_ADDRS" "$funcs" "$(joined "$TMP/run")" >> "$RAW"
		done
		"$BIN/measure" "$TMP/run" -- sh -c 'addr2line -a -f -i -e "$1" < "$2" > "$3"' sh \
			"$big" "$TMP/addrs" "$TMP/out-addr2line"
		printf 'kind=sym\ttool=addr2line\trep=%s\taddresses=%s\t%s\n' "$rep" "$SYM_ADDRS" \
			"$(joined "$TMP/run")" >> "$RAW"
		"$BIN/measure" "$TMP/run" -- sh -c 'eu-addr2line -a -f -i -e "$1" < "$2" > "$3"' sh \
			"$big" "$TMP/addrs-eu" "$TMP/out-eu-addr2line"
		printf 'kind=sym\ttool=eu-addr2line\trep=%s\taddresses=%s\t%s\n' "$rep" "$SYM_EU_ADDRS" \
			"$(joined "$TMP/run")" >> "$RAW"
		if command -v llvm-symbolizer > /dev/null; then
			"$BIN/measure" "$TMP/run" -- sh -c \
				'llvm-symbolizer --obj="$1" --output-style=GNU -a -f -i < "$2" > "$3"' sh \
				"$big" "$TMP/addrs-0x" "$TMP/out-llvm-symbolizer"
			printf 'kind=sym\ttool=llvm-symbolizer\trep=%s\taddresses=%s\t%s\n' "$rep" \
				"$SYM_ADDRS" "$(joined "$TMP/run")" >> "$RAW"
		fi
		say "symbolize rep $rep done"
	done
	# Does recce say what addr2line says, frame for frame? And is the
	# answer through the table the one without it?
	same=$(awk -f bench/compare-frames.awk "$TMP/out-recce" "$TMP/out-addr2line")
	cached=$(awk -f bench/compare-frames.awk "$TMP/out-recce" "$TMP/out-recce-nocache")
	table=$(find "$TMP/symcache" -name '*.sym' -exec stat -c %s {} + | awk '{ n += $1 } END { print n + 0 }')
	printf 'kind=symcheck\tsame_frames_pct=%s\ttable_same_pct=%s\ttable_bytes=%s\tlines_recce=%s\tlines_addr2line=%s\n' \
		"$same" "$cached" "$table" "$(wc -l < "$TMP/out-recce")" "$(wc -l < "$TMP/out-addr2line")" >> "$RAW"
}

# The calls workload alone, under a bare uprobe and uretprobe on traced()
# (bench/uprobe-bare.c), and under `recce trace traced --return` with every
# limit off, its returns probed on the function's exits (recce) or, as
# before, with a uretprobe (uret): the target's own time per call.
#
#     trace_run TOOL REP
trace_run() {
	tool=$1 rep=$2 events= lost=0
	rm -f "$TMP/stats" "$TMP/err"
	status=0
	case $tool in
	none) set -- ;;
	bare) set -- "$BIN/uprobe-bare" "$BIN/calls" traced -- ;;
	recce) set -- "$RECCE" trace traced --return --count 0 --time 0 --limit 0 -- ;;
	uret) set -- env RECCE_RETURN_URETPROBE=1 "$RECCE" trace traced --return --count 0 --time 0 \
		--limit 0 -- ;;
	# Each call's callers: the kernel's frame-pointer walk, or the stack
	# copied (8 KiB) and unwound; bpftrace's ustack (a frame-pointer walk
	# into a stack map) beside them.
	stack-fp) set -- "$RECCE" trace traced --stack --call-graph fp --count 0 --time 0 --limit 0 -- ;;
	stack) set -- "$RECCE" trace traced --stack --count 0 --time 0 --limit 0 -- ;;
	bpftrace)
		# shellcheck disable=SC2016 # for the inner shell
		set -- sh -c 'p=$1; shift; exec bpftrace -q -e "$p" -c "$*"' sh \
			"uprobe:$BIN/calls:traced { @[ustack] = count(); }"
		;;
	esac
	BENCH_STATS=$TMP/stats "$BIN/measure" "$TMP/run" -- "$@" "$BIN/calls" "$TRACE_SECONDS" \
		> /dev/null 2> "$TMP/err" || status=$?
	if [ "$status" -ne 0 ] || [ ! -s "$TMP/stats" ]; then
		say "trace $tool rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=trace\tcase=calls\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
		return
	fi
	case $tool in
	bare)
		# A call is two hits, its entry and its return.
		events=$(sed -n 's/^uprobe-bare: \([0-9]*\) hits, \([0-9]*\) lost$/\1/p' "$TMP/err")
		events=$((events / 2))
		lost=$(sed -n 's/^uprobe-bare: \([0-9]*\) hits, \([0-9]*\) lost$/\2/p' "$TMP/err")
		;;
	recce | uret | stack-fp | stack)
		events=$(sed -n 's/^recce: stopped after \([0-9]*\) events.*/\1/p' "$TMP/err")
		lost=$(sed -n 's/.*the kernel dropped \([0-9]*\) events.*/\1/p' "$TMP/err")
		;;
	esac
	printf 'kind=trace\tcase=calls\ttool=%s\trep=%s\tstatus=ok\t%s\tprof_cpu_s=%s\tevents=%s\tlost=%s\n' \
		"$tool" "$rep" "$(joined "$TMP/stats")" \
		"$(calc "$(field "$TMP/run" cpu_s) - $(field "$TMP/stats" cpu_s)")" \
		"${events:-0}" "${lost:-0}" >> "$RAW"
	say "trace $tool rep $rep: $(field "$TMP/stats" ns_per_call) ns a call"
}

# The circuit breaker: recce trace attached to a calls workload that times
# every call, with --limit BREAKER. The trace's last event is the last one
# before the trip; the workload says when its calls stopped being slow.
trace_recovery() {
	rep=$1
	rm -f "$TMP/stats" "$TMP/err"
	BENCH_STATS=$TMP/stats "$BIN/calls" --recovery 2 > /dev/null 2>&1 &
	wpid=$!
	sleep 0.5
	status=0
	"$RECCE" trace -p "$wpid" traced --count 0 --time 0 --limit "$BREAKER" --format json \
		> "$TMP/trace.json" 2> "$TMP/err" || status=$?
	wait "$wpid" || true
	last=$(tail -n 1 "$TMP/trace.json" | sed -n 's/^{"time_ns":\([0-9]*\),.*/\1/p')
	if [ "$status" -ne 0 ] || [ -z "$last" ] || ! grep -q 'circuit breaker' "$TMP/err"; then
		say "breaker rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=trace\tcase=breaker\ttool=recce\trep=%s\tstatus=failed\n' "$rep" >> "$RAW"
		return
	fi
	printf 'kind=trace\tcase=breaker\ttool=recce\trep=%s\tstatus=ok\tlimit=%s\t%s\tevents=%s\ttrip_ns=%s\trecovery_ms=%s\n' \
		"$rep" "$BREAKER" "$(joined "$TMP/stats")" "$(wc -l < "$TMP/trace.json")" "$last" \
		"$(calc "($(field "$TMP/stats" probe_end_ns) - $last) / 1e6")" >> "$RAW"
	say "breaker rep $rep: calls at full speed $(calc "($(field "$TMP/stats" probe_end_ns) - $last) / 1e6") ms after the last event"
}

# What watching costs: recce top or procps top (top -H, one row a thread)
# on TOP_THREADS threads, refreshing every second, by PID (case top-pid) or
# over the whole system (top-system). The steady cost is the tool's run
# time (schedstat, every thread of it) over TOP_SNAPSHOTS seconds once it
# has started and drawn its first snapshot; its start-up is the rest of
# its CPU.
#
#     top_cost CASE TOOL REP
top_cost() {
	c=$1 tool=$2 rep=$3
	rm -f "$TMP/stats" "$TMP/run"
	BENCH_STATS=$TMP/stats "$BIN/threads" "$((TOP_SNAPSHOTS + 6))" "$TOP_THREADS" \
		"$TOP_WORK_US" > /dev/null 2>&1 &
	wpid=$!
	sleep 1
	case $c in top-pid) set -- -p "$wpid" ;; *) set -- ;; esac
	n=$((TOP_SNAPSHOTS + 3))
	if [ "$tool" = procps ]; then
		"$BIN/measure" "$TMP/run" -- top -b -H -d 1 -n "$n" "$@" > "$TMP/top.out" 2> "$TMP/err" &
	else
		"$BIN/measure" "$TMP/run" -- "$RECCE" top -b -d 1 -n "$n" "$@" > "$TMP/top.out" 2> "$TMP/err" &
	fi
	mpid=$!
	sleep 1.5
	tpid=$(pgrep -P "$mpid" | head -n 1)
	r1=$(runtime_ns "$tpid") w1=$(date +%s%N)
	sleep "$TOP_SNAPSHOTS"
	r2=$(runtime_ns "$tpid") w2=$(date +%s%N)
	status=0
	wait "$mpid" || status=$?
	wait "$wpid" || true
	if [ "$status" -ne 0 ] || [ -z "$r1" ] || [ -z "$r2" ]; then
		say "$c $tool rep $rep failed (status $status):"
		tail -n 5 "$TMP/err" >&2
		printf 'kind=top\tcase=%s\ttool=%s\trep=%s\tstatus=failed\n' "$c" "$tool" "$rep" >> "$RAW"
		return
	fi
	steady=$(calc "100 * ($r2 - $r1) / ($w2 - $w1)")
	printf 'kind=top\tcase=%s\ttool=%s\trep=%s\tstatus=ok\tthreads=%s\tsteady_seconds=%s\tsteady_cpu_pct=%s\tstartup_cpu_s=%s\tprof_cpu_s=%s\tprof_wall_s=%s\tprof_maxrss_kb=%s\n' \
		"$c" "$tool" "$rep" "$TOP_THREADS" "$TOP_SNAPSHOTS" "$steady" \
		"$(calc "$(field "$TMP/run" cpu_s) - ($r2 - $r1) / 1e9 * $n / $TOP_SNAPSHOTS")" \
		"$(field "$TMP/run" cpu_s)" "$(field "$TMP/run" wall_s)" "$(field "$TMP/run" maxrss_kb)" >> "$RAW"
	say "$c $tool rep $rep: $steady% of a core"
}

# Nanoseconds of CPU a process has run, all its threads together.
runtime_ns() {
	[ -n "$1" ] || return 0
	cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ s += $1 } END { if (NR) printf "%d", s }'
}

# The cpu2 workload alone, and watched by `recce top -b -p PID` at its
# default 49 Hz for the whole run: the target's own times.
#
#     top_slowdown TOOL REP UNITS
top_slowdown() {
	tool=$1 rep=$2 units=$3
	rm -f "$TMP/stats"
	BENCH_STATS=$TMP/stats "$BIN/cpu2" "$units" > /dev/null 2>&1 &
	wpid=$!
	tpid=
	if [ "$tool" = recce ]; then
		"$RECCE" top -b -d 1 -F "$TOP_HZ" -p "$wpid" > /dev/null 2>&1 &
		tpid=$!
	fi
	wait "$wpid" || true
	[ -z "$tpid" ] || wait "$tpid" || true
	if [ ! -s "$TMP/stats" ]; then
		printf 'kind=topslow\tcase=cpu2-top\ttool=%s\trep=%s\tstatus=failed\n' "$tool" "$rep" >> "$RAW"
		return
	fi
	printf 'kind=topslow\tcase=cpu2-top\ttool=%s\trep=%s\thz=%s\tcg=top\tstatus=ok\t%s\n' \
		"$tool" "$rep" "$TOP_HZ" "$(joined "$TMP/stats")" >> "$RAW"
	say "cpu2-top $tool rep $rep: workload $(field "$TMP/stats" cpu_s) s CPU"
}

# What the continuous agent's memory costs a machine with many distinct
# programs: BINS processes at once, each waking every second to burn 2 ms
# (about half a core in all), profiled for BINS_SECONDS at the agent's
# default 19 Hz; once all running one program, once each its own (built
# with its own code and build-id, bench/workloads/binvariant.c). From
# /metrics after the last window: the profiler's resident memory and the
# binaries it holds open; the difference over the binaries is the cost of
# one.
binaries_once() {
	how=$1
	a=$TMP/bins-agent
	rm -rf "$a"
	mkdir -p "$a"
	"$RECCE" agent --continuous --store "$a/store" --socket "$a/a.sock" \
		--http 127.0.0.1:0 > /dev/null 2> "$a/err" &
	apid=$!
	i=0
	until grep -q 'metrics at' "$a/err" || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	url=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$a/err")
	pids=""
	for i in $(seq "$BINS"); do
		b=$BIN/bins/b-0
		[ "$how" = distinct ] && b=$BIN/bins/b-$i
		"$b" &
		pids="$pids $!"
	done
	sleep "$BINS_SECONDS"
	curl -s "$url/metrics" > "$a/metrics" || true
	# shellcheck disable=SC2086
	kill $pids 2> /dev/null || true
	kill -INT "$apid" 2> /dev/null || true
	wait 2> /dev/null || true
	m() { sed -n "s/^recce_agent_$1 //p" "$a/metrics"; }
	printf 'kind=bins\ttool=%s\trep=%s\tprocesses=%s\trss_bytes=%s\tfiles_open=%s\tsamples=%s\tstatus=ok\n' \
		"$how" "$rep" "$BINS" "$(m profiler_resident_bytes)" "$(m profiler_files_open)" \
		"$(m samples_total)" >> "$RAW"
	say "binaries $how rep $rep: RSS $(m profiler_resident_bytes) bytes, $(m profiler_files_open) files open, $(m samples_total) samples"
}

group_binaries() {
	command -v curl > /dev/null || die "curl is missing: sh scripts/install-deps.sh"
	mkdir -p "$BIN/bins"
	say "binaries: building $BINS programs of their own"
	for i in $(seq 0 "$BINS"); do
		[ "$BIN/bins/b-$i" -nt bench/workloads/binvariant.c ] || echo "$i"
	done | xargs -r -P "$(nproc)" -I{} $CC -std=gnu11 -O2 -g -DVARIANT={} -Ibench/workloads \
		-o "$BIN/bins/b-{}" bench/workloads/binvariant.c
	for rep in $(seq "$REPS"); do
		for how in same distinct; do
			binaries_once "$how"
		done
	done
}

# ---------------------------------------------------------------------------

build
: > "$RAW"
machine
start=$(date +%s)
for g in $CASES; do
	case $g in
	slowdown | persample | deep | tenk | split | threads | symbolize | trace | top | events | offcpu | alloc | patch | continuous | agent | libuv | fast | python | binaries) "group_$g" ;;
	fleet) B=$B RECCE=$RECCE sh bench/fleet-store.sh >/dev/null || say "fleet: bench/fleet-store.sh failed" ;;
	*) die "unknown case group '$g' in BENCH_CASES" ;;
	esac
done
printf 'kind=end\tloadavg_end=%s\tseconds=%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" \
	"$(($(date +%s) - start))" >> "$RAW"

awk -f bench/summarize.awk -v json="$OUT/latest.json" "$RAW" > "$OUT/latest.md"
find "$TMP" -type f ! -name raw.txt -exec rm -f {} + # perf.data files are large
say "wrote $OUT/latest.md and $OUT/latest.json ($(($(date +%s) - start)) s)"
