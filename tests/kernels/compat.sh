#!/bin/bash
# The kernel-compatibility suite: every subcommand that touches a kernel
# interface, run once on a real target, judged by what a user relies on
# (the names and counts the 6.18 tests check), and said in one line:
#
#   FEATURE|works|how (with BPF links, with perf uprobe events, ...)
#   FEATURE|falls back|to what, as recce said it
#   FEATURE|refused|recce's one message
#   FEATURE|FAILS|what was wrong
#
# A refusal is a pass only when recce says why in one message and exits 1;
# anything else that does not give the right answer FAILS. Run by
# scripts/check-kernels.sh on this machine's kernel and inside a VM on
# each kernel it boots; runnable alone: tests/kernels/compat.sh [OUT].
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
RECCE=${RECCE:-$ROOT/recce}
TARGETS=${TARGETS:-$ROOT/build/targets}
RESULTS=${1:-/dev/stdout}
T=$(mktemp -d "${TMPDIR:-/tmp}/recce-compat.XXXXXX")
export RECCE_CACHE_DIR="$T/.symcache"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
: >"$RESULTS"

# say FEATURE STATUS DETAIL: one result line (the detail on one line).
say()
{
	local detail
	detail=$(printf '%s' "$3" | tr '\n|' ' /' | cut -c1-300)
	printf '%s|%s|%s\n' "$1" "$2" "$detail" >>"$RESULTS"
	printf 'compat: %s: %s %s\n' "$1" "$2" "$detail" >&2
}

# start OUT CMD...: CMD in the background, its output in OUT; PID.
start()
{
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	PID=$!
	PIDS+=("$PID")
}

# wait_line FILE ERE [SECONDS]: until FILE has a line matching ERE, for
# at most SECONDS (default 120) by the clock: an emulated machine is slow.
wait_line()
{
	local end=$((SECONDS + ${3:-120}))
	while ((SECONDS < end)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# rec NAME ARGS...: recce ARGS with output in $T/NAME.out and .err; RC.
rec()
{
	local name=$1
	shift
	timeout -s INT -k 30 600 "$RECCE" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}

# refused_or_fails FEATURE NAME WHY: after a run that did not give the
# answer: a refusal (exit 1, one "recce: error:" message that names the
# kernel, as a user must be told why) or a failure.
refused_or_fails()
{
	local msg
	msg=$(grep -m 1 '^recce: error:' "$T/$2.err")
	if [ "$RC" = 1 ] && printf '%s' "$msg" | grep -qE 'Linux [0-9]|kernel'; then
		say "$1" refused "${msg#recce: error: }"
	else
		say "$1" FAILS "$3 (status $RC: $(grep -v '^recce: [0-9]* samples' "$T/$2.err" | head -n 3))"
	fi
}

# folded FILE: the profile's stacks, one folded line each, of its first
# value (samples, off-CPU time, bytes).
folded() { "$RECCE" report --folded "$1" 2>/dev/null; }

# share FOLDED ERE: the percentage of samples whose stack matches ERE.
share()
{
	printf '%s\n' "$1" | awk -v re="$2" '{ n = $NF; all += n; if ($0 ~ re) hit += n }
		END { printf "%d", all ? 100 * hit / all : 0 }'
}

# how NAME: the unwinder or probe kind recce said it used, if it did.
how()
{
	sed -n 's/^recce: tracing .* with \(.*\); limits.*/with \1/p' "$T/$1.err" | head -n 1
}

# fell_back NAME: why run NAME traced without links, when it did and was
# not told to; nothing when it used links or was told.
fell_back()
{
	[ -z "${RECCE_NO_BPF:-}${RECCE_NO_LINKS:-}" ] || return 0
	case $(how "$1") in
	"with perf uprobe events" | "with BPF on perf uprobe events")
		echo "to $(how "$1" | sed 's/^with //'): this kernel makes no BPF uprobe_multi links"
		;;
	esac
}

# --- the targets -----------------------------------------------------------

start "$T/hot.out" "$TARGETS/hot"
HOT=$PID
start "$T/blocker.out" "$TARGETS/blocker"
BLOCKER=$PID
start "$T/allocs.out" "$TARGETS/allocs"
ALLOCS=$PID
sleep 0.5 # nothing to wait for: they run from their start

# --- record ----------------------------------------------------------------

# record_cpu FEATURE ARGS...: hot's CPU, burn_cpu under main in most samples.
record_cpu()
{
	local feature=$1 name=${1//[^a-z0-9]/_}
	shift
	rec "$name" record -d 2 -o "$T/$name.pb.gz" "$@"
	local f pct
	f=$(folded "$T/$name.pb.gz")
	pct=$(share "$f" 'main;.*burn_cpu')
	if [ "$RC" = 0 ] && [ "$pct" -ge 50 ]; then
		say "$feature" works "burn_cpu under main in $pct% of samples"
	else
		refused_or_fails "$feature" "$name" "burn_cpu under main in $pct% of samples"
	fi
}
record_cpu "record cpu (auto)" -p "$HOT"
record_cpu "record cpu --call-graph fp" -p "$HOT" --call-graph fp
record_cpu "record cpu --call-graph dwarf" -p "$HOT" --call-graph dwarf
record_cpu "top-level record -- CMD" -- "$TARGETS/hot" 2

# Go: tests/go/main.go, built by this machine's Go (make check-kernels
# builds it before the VMs start, whose root is read-only), its CPU in
# main.burnGoCPU under runtime.main, named from the runtime's own tables.
GO_TARGET=${RECCE_GO_TARGET:-$T/goprof}
if [ ! -x "$GO_TARGET" ]; then
	GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath" \
		go build -o "$GO_TARGET" "$ROOT/tests/go/main.go" >"$T/gobuild.err" 2>&1 ||
		cat "$T/gobuild.err" >&2
fi
#
# Judged by the unwinding: of the samples in burnGoCPU, the share walked
# to runtime.main. Its share of all samples is the program's own: in an
# emulated VM beside the busy targets, its start (paged in over 9p) and
# pprof's writer take half its CPU (runs read 35% to 61%).
rec go record -o "$T/go.pb.gz" -- "$GO_TARGET" "$T/go.pprof" 2
f=$(folded "$T/go.pb.gz")
n=$(printf '%s\n' "$f" | awk '/main\.burnGoCPU/ { n++ } END { print n + 0 }')
pct=$(share "$(printf '%s\n' "$f" | grep 'main\.burnGoCPU')" 'runtime\.main;main\.main;main\.burnGoCPU')
if [ "$RC" = 0 ] && [ "$n" -gt 0 ] && [ "$pct" -ge 90 ]; then
	say "record cpu, Go" works "main.burnGoCPU under runtime.main in $pct% of its samples"
else
	refused_or_fails "record cpu, Go" go "main.burnGoCPU under runtime.main in $pct% of its samples (of $n stacks)"
fi

# Python: Debian's python3.11 running tests/py/record-target.py, its main
# thread in spin() under outer(), each sample given the frames the BPF
# program read at it (Linux 5.17), paired with it by time: none without.
start "$T/pytarget.out" /usr/bin/python3.11 "$ROOT/tests/py/record-target.py"
PY=$PID
wait_line "$T/pytarget.out" '^ready'
rec py record -p "$PY" -d 2 -o "$T/py.pb.gz"
kill "$PY" # its two busy threads would slow the targets after it
pct=$(share "$(folded "$T/py.pb.gz")" '__main__\.outer;.*__main__\.spin')
alone=$(sed -n 's/^recce: warning: \([0-9]*\) samples\{0,1\} of Python processes.*/\1/p' "$T/py.err")
if [ "$RC" = 0 ] && [ "$pct" -ge 30 ] && [ "${alone:-0}" = 0 ]; then
	say "record cpu, Python" works "__main__.spin under __main__.outer in $pct% of samples"
else
	refused_or_fails "record cpu, Python" py \
		"__main__.spin under __main__.outer in $pct% of samples, ${alone:-0} without their Python frames"
fi

# record -a: hot's samples among every process's.
rec all record -a -d 2 -o "$T/all.pb.gz"
f=$(folded "$T/all.pb.gz")
n=$(printf '%s\n' "$f" | grep -c 'burn_cpu')
if [ "$RC" = 0 ] && [ "$n" -gt 0 ]; then
	say "record -a" works "burn_cpu among every process's stacks"
else
	refused_or_fails "record -a" all "no stack of burn_cpu"
fi

# record --cgroup: hot moved into a cgroup (v2) of its own.
CG=
for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ "$(stat -f -c %T "$root" 2>/dev/null)" = cgroup2fs ] && mkdir "$root/recce-compat-$$"; then
		CG=$root/recce-compat-$$
		break
	fi
done
if [ -n "$CG" ] && echo "$HOT" >"$CG/cgroup.procs"; then
	rec cgroup record --cgroup "$CG" -d 2 -o "$T/cgroup.pb.gz"
	pct=$(share "$(folded "$T/cgroup.pb.gz")" 'burn_cpu')
	if [ "$RC" = 0 ] && [ "$pct" -ge 50 ]; then
		say "record --cgroup" works "burn_cpu in $pct% of the cgroup's samples"
	else
		refused_or_fails "record --cgroup" cgroup "burn_cpu in $pct% of samples"
	fi
	echo "$HOT" >"${CG%/*}/cgroup.procs"
	rmdir "$CG"
else
	say "record --cgroup" FAILS "no cgroup v2 mount to make a cgroup in"
fi

# record -e offcpu and wall: blocker's threads wait in known functions.
for ev in offcpu wall; do
	rec "$ev" record -e "$ev" -p "$BLOCKER" -d 2 -o "$T/$ev.pb.gz"
	f=$(folded "$T/$ev.pb.gz")
	missing=""
	for fn in nap wait_pipe take_lock; do
		printf '%s\n' "$f" | grep -q "$fn" || missing="$missing $fn"
	done
	if [ "$RC" = 0 ] && [ -z "$missing" ]; then
		say "record -e $ev" works "nap, wait_pipe, take_lock each named"
	else
		refused_or_fails "record -e $ev" "$ev" "not named:$missing"
	fi
done

# alloc_sites FEATURE NAME: record -e alloc of allocs, one sample per 16K:
# alloc_kept's share of the bytes allocated, 40%. In an emulated VM, the
# program under probes makes some 3,000 allocations in the 2 s: about 300
# samples, the share 3 points from the truth at one standard deviation
# (at 64K, 75 samples and 6 points: runs read 30% and 47%). A fallback
# recce chose is said; one the environment forced (RECCE_NO_LINKS, to
# keep this check true on a newer kernel) is not.
alloc_sites()
{
	local feature=$1 name=$2 f pct how=''
	rec "$name" record -e alloc --alloc-interval 16K -p "$ALLOCS" -d 2 -o "$T/$name.pb.gz"
	f=$("$RECCE" report --folded --value alloc_space "$T/$name.pb.gz" 2>/dev/null)
	pct=$(share "$f" 'main;round_of;alloc_kept;posix_memalign')
	if [ -z "${RECCE_NO_LINKS:-}" ]; then
		if grep -q 'perf uprobe events' "$T/$name.err"; then
			how="to perf uprobe events at entries and returns (no uprobe_multi links)"
		elif grep -q 'entry and return probes' "$T/$name.err"; then
			how="to entry and return probes (no uprobe sessions)"
		fi
	fi
	if [ "$RC" = 0 ] && [ "$pct" -ge 35 ] && [ "$pct" -le 45 ]; then
		if [ -n "$how" ]; then
			say "$feature" "falls back" "$how: alloc_kept has $pct% of the bytes (40%)"
		else
			say "$feature" works "main;round_of;alloc_kept;posix_memalign has $pct% of the bytes (40%)"
		fi
	else
		refused_or_fails "$feature" "$name" "alloc_kept has $pct% of the bytes, not 40%"
	fi
}
alloc_sites "record -e alloc" alloc
RECCE_NO_LINKS=1 alloc_sites "record -e alloc (perf uprobe events)" alloc_events

# record -e alloc --fast: in the process, no kernel interface but ptrace
# and perf events: the same sites, with whole stacks. One sample per 64K
# (about 1,000 in the 2 s): at the default 512K, some 140 samples put
# the share 4 points from the truth at one standard deviation, and a run
# read 34%.
rec alloc_fast record -e alloc --fast --alloc-interval 64K -p "$ALLOCS" -d 2 \
	-o "$T/alloc-fast.pb.gz"
f=$("$RECCE" report --folded --value alloc_space "$T/alloc-fast.pb.gz" 2>/dev/null)
pct=$(share "$f" 'main;round_of;alloc_kept;posix_memalign')
if [ "$RC" = 0 ] && [ "$pct" -ge 35 ] && [ "$pct" -le 45 ]; then
	say "record -e alloc --fast" works "main;round_of;alloc_kept;posix_memalign has $pct% of the bytes (40%)"
else
	refused_or_fails "record -e alloc --fast" alloc_fast "alloc_kept has $pct% of the bytes, not 40%"
	cat "$T/alloc_fast.err" >&2
fi

# --- top -------------------------------------------------------------------

rec top top -b -n 2 -p "$HOT"
if [ "$RC" = 0 ] && grep -q burn_cpu "$T/top.out"; then
	say "top -b" works "hot's thread in burn_cpu"
else
	refused_or_fails "top -b" top "burn_cpu not shown"
fi

# --- trace -----------------------------------------------------------------

# traced NAME PATTERN ARGS... -- TARGET...: TARGET (it says "ready" and
# waits for SIGUSR1 once recce is in) traced by PATTERN with ARGS from its
# first call to its exit; recce's output in $T/NAME.out and .err; RC.
traced()
{
	local name=$1 pattern=$2 args=()
	shift 2
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	start "$T/$name.target" "$@"
	local target=$PID
	wait_line "$T/$name.target" 'ready'
	timeout -s INT -k 30 900 "$RECCE" trace -p "$target" "$pattern" --count 1000 --time 600 \
		"${args[@]}" >"$T/$name.out" 2>"$T/$name.err" &
	local tracer=$!
	# The trace ends by itself when the target exits, 0.5 s after its
	# last call: a Ctrl-C then could meet recce on its way out.
	if wait_line "$T/$name.err" '^recce: (tracing|error)' 600 &&
		grep -q '^recce: tracing' "$T/$name.err"; then
		kill -USR1 "$target"
	else
		kill -INT "$tracer" 2>/dev/null
	fi
	wait "$tracer"
	RC=$?
	kill "$target" 2>/dev/null
}

# trace_calls FEATURE CHECK ARGS...: the calls target's 20 add_pair calls.
trace_calls()
{
	local feature=$1 check=$2 name=${1//[^a-z0-9]/_}
	shift 2
	traced "$name" add_pair "$@" -- "$TARGETS/calls" 20 go
	local got
	got=$($check "$T/$name.out")
	if [ "$RC" = 0 ] && [ "$got" = ok ] && [ -n "$(fell_back "$name")" ]; then
		say "$feature" "falls back" "$(fell_back "$name")"
	elif [ "$RC" = 0 ] && [ "$got" = ok ]; then
		say "$feature" works "$(how "$name")"
	else
		refused_or_fails "$feature" "$name" "$got $(how "$name")"
	fi
}
# Twenty calls add_pair(i, 2i), each once.
calls_20()
{
	local n
	n=$(grep -c 'add_pair(a=[0-9]*, b=[0-9]*)' "$1")
	[ "$n" = 20 ] && echo ok || echo "$n of 20 calls"
}
# ... and each returns 3i.
returns_20()
{
	local n
	n=$(awk '/add_pair\/?[0-9]* --> / { for (i = 1; i <= NF; i++) if ($i == "-->") v = $(i + 1);
		if (v % 3 == 0) n++ } END { print n + 0 }' "$1")
	[ "$n" = 20 ] && [ "$(calls_20 "$1")" = ok ] && echo ok || echo "$n of 20 returns"
}
# ... each with a stack through main.
stacks_20()
{
	local n
	n=$(grep -c 'main' "$1")
	[ "$n" -ge 20 ] && [ "$(calls_20 "$1")" = ok ] && echo ok || echo "$n stacks with main"
}
trace_calls "trace" calls_20
trace_calls "trace --return" returns_20 --return
trace_calls "trace --stack" stacks_20 --stack
trace_calls "trace --fast" calls_20 --fast
trace_calls "trace --fast --return" returns_20 --fast --return
RECCE_NO_BPF=1 trace_calls "trace (perf uprobe events)" calls_20
RECCE_NO_LINKS=1 trace_calls "trace (BPF on perf uprobe events)" calls_20

# C++ that throws, traced with --return: shop::restock's 28 calls, the 4
# an exception leaves (i = 0, 7, 14, 21) said to be unwound, and the
# program catching exactly what it catches untraced.
"$TARGETS/throws" 28 0 7 >"$T/throws.alone" 2>&1
traced throws 'shop::restock' --return -- "$TARGETS/throws" 28 go 7
calls=$(grep -c 'shop::restock(i=' "$T/throws.out")
unwound=$(grep -c 'shop::restock/2 --> (unwound)' "$T/throws.out")
alone=$(grep '^throws: calls' "$T/throws.alone")
if [ "$RC" = 0 ] && [ "$calls" = 28 ] && [ "$unwound" = 4 ] &&
	[ "$(grep '^throws: calls' "$T/throws.target")" = "$alone" ]; then
	what="28 calls, 4 left by exceptions, the program's own count the same ($alone)"
	if [ -n "$(fell_back throws)" ]; then
		say "trace --return, C++ throwing" "falls back" "$(fell_back throws): $what"
	else
		say "trace --return, C++ throwing" works "$what $(how throws)"
	fi
else
	refused_or_fails "trace --return, C++ throwing" throws \
		"$calls of 28 calls, $unwound of 4 unwound, the program said: $(grep '^throws: calls' "$T/throws.target")"
fi

# trace_py FEATURE PATTERN CHECK ARGS...: Debian's python3.11 running
# tests/py/trace-target.py, traced from its first call (it waits for
# SIGUSR1 once recce is in) to its exit, through the interpreter's USDT
# probes and their semaphores.
trace_py()
{
	local feature=$1 pattern=$2 check=$3 name=${1//[^a-z0-9]/_}
	shift 3
	traced "$name" "$pattern" "$@" -- /usr/bin/python3.11 "$ROOT/tests/py/trace-target.py"
	local got
	got=$($check "$T/$name.out" "$T/$name.err")
	if [ "$RC" = 0 ] && [ "$got" = ok ] && [ -n "$(fell_back "$name")" ]; then
		say "$feature" "falls back" "$(fell_back "$name")"
	elif [ "$RC" = 0 ] && [ "$got" = ok ]; then
		say "$feature" works "$(how "$name")"
	elif [ "$RC" = 0 ] && [ "${got%% *}" = partly ]; then
		say "$feature" "falls back" "${got#partly } $(how "$name")"
	else
		refused_or_fails "$feature" "$name" "$got $(how "$name")"
	fi
}
# The 20 calls of handle(), each with its end; without copies at the hit
# (perf uprobe events) a call may go unnamed, and is said so.
py_handle_20()
{
	local n e lost
	n=$(grep -c 'py:trace-target.handle(file=' "$1")
	e=$(grep -c 'py:trace-target.handle --> ended' "$1")
	lost=$(sed -n 's/^recce: warning: \([0-9]*\) Python calls could not be named.*/\1/p' "$2")
	if [ "$n" = 20 ] && [ "$e" = 20 ]; then
		echo ok
	elif [ $((n + ${lost:-0})) -ge 20 ] && [ "$n" = "$e" ]; then
		echo "partly $n of 20 calls named (the names read late, the rest said unnamed)"
	else
		echo "$n of 20 calls, $e ends"
	fi
}
# gc.collect(1): its generation, a memory operand copied at the hit.
gc_start_1()
{
	if grep -qx '.*python3.11:python:gc__start(arg0=1)' "$1"; then
		echo ok
	elif grep -qx '.*python3.11:python:gc__start(arg0=?)' "$1"; then
		echo "partly the generation shown unknown (nothing copies it at the hit)"
	else
		echo "no gc__start: $(head -c 200 "$1")"
	fi
}
trace_py "trace py: (USDT semaphores)" 'py:handle' py_handle_20 --return
trace_py "trace usdt: (an argument in memory)" 'usdt:python:gc__start' gc_start_1
# --stack of Python calls: their Python callers, read at the call by the
# hit program's Python build (a BPF loop); the target held after its
# calls, so that their code is there to be named.
traced py_stack 'py:leaf' --stack --count 20 -- /usr/bin/python3.11 "$ROOT/tests/py/trace-target.py" hold
n=$(grep -c 'py:trace-target.leaf(file=' "$T/py_stack.out")
under=$(grep -c '^    at __main__.burst (' "$T/py_stack.out")
if [ "$RC" = 0 ] && [ "$n" = 20 ] && [ "$under" = 20 ] && [ -n "$(fell_back py_stack)" ]; then
	say "trace py: --stack" "falls back" "$(fell_back py_stack): each of 20 calls of leaf() under __main__.handle and __main__.burst"
elif [ "$RC" = 0 ] && [ "$n" = 20 ] && [ "$under" = 20 ]; then
	say "trace py: --stack" works "each of 20 calls of leaf() under __main__.handle and __main__.burst $(how py_stack)"
elif [ "$RC" = 0 ] && [ "$n" = 20 ] && grep -q "the stacks show the interpreter's C functions" "$T/py_stack.err"; then
	say "trace py: --stack" "falls back" "to the interpreter's frames: $(grep -o 'reading them at the call.*' "$T/py_stack.err")"
else
	refused_or_fails "trace py: --stack" py_stack "$n of 20 calls, $under under __main__.burst $(how py_stack)"
fi

# --- capture, tasks, patch, agent ------------------------------------------

start "$T/req.out" "$TARGETS/requests" 600
REQ=$PID
wait_line "$T/req.out" '^handle'
rec capture capture -p "$REQ" handle --calls 3 --format folded -o "$T/capture.folded"
if [ "$RC" = 0 ] && grep -q 'handle' "$T/capture.folded"; then
	say "capture" works "3 calls of handle"
else
	refused_or_fails "capture" capture "no stack of handle"
fi

start "$T/uv.out" "$TARGETS/uv-loop"
UV=$PID
wait_line "$T/uv.out" ready
timeout -s INT -k 30 600 "$RECCE" tasks --libuv -p "$UV" --json -d 4 -i 4 >"$T/uv-tasks.out" \
	2>"$T/uv-tasks.err" &
TASKS=$!
wait_line "$T/uv-tasks.err" '^recce: (following|error)' 600
kill -USR1 "$UV"
wait "$TASKS"
RC=$?
if [ "$RC" = 0 ] && grep -q tick_fast "$T/uv-tasks.out"; then
	say "tasks --libuv" works "tick_fast seen"
else
	refused_or_fails "tasks --libuv" uv-tasks "tick_fast not seen"
fi

start "$T/patchee.out" "$TARGETS/patchee"
PATCHEE=$PID
wait_line "$T/patchee.out" 'old='
rec patch patch -p "$PATCHEE" --registry "$T/registry" "slow_fib=$TARGETS/fixes/fib-fix.so:fast_fib"
if [ "$RC" = 0 ] && wait_line "$T/patchee.out" 'new=' 60; then
	say "patch" works "calls go to fast_fib"
else
	refused_or_fails "patch" patch "no call reached fast_fib"
fi

mkdir -p "$T/agent"
timeout -s INT -k 30 900 "$RECCE" agent --continuous --socket "$T/agent/a.sock" --store "$T/store" \
	--window 2s >"$T/agent.out" 2>"$T/agent.err" &
AGENT=$!
PIDS+=("$AGENT")
wait_line "$T/agent.err" 'profiling every process|error' 600
ok=""
end=$((SECONDS + 600))
while ((SECONDS < end)); do
	"$RECCE" query --store "$T/store" --comm hot --format folded -o - >"$T/query.out" 2>"$T/query.err" &&
		grep -q burn_cpu "$T/query.out" && ok=1 && break
	sleep 1
done
kill -INT "$AGENT"
wait "$AGENT"
RC=$?
if [ "$RC" = 0 ] && [ -n "$ok" ]; then
	say "agent --continuous" works "a window of hot's burn_cpu stored and queried"
else
	refused_or_fails "agent --continuous" agent "no window with burn_cpu"
fi
exit 0
