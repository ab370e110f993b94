#!/bin/bash
# A stripped binary: no symbols, no debug info. The report must be honest
# and useful: its frames are the functions .eh_frame describes, shown as
# module!0xSTART-0xEND (one row per function, not one per address), with
# exactly the ranges the unstripped twin's symbols have and no made-up
# names; libc frames keep their names. A twin with MiniDebugInfo gets its
# names back from it.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot-stripped" "$TARGETS/hot" "$TARGETS/hot-minidebug"

# The unstripped twin has the same code at the same offsets: it tells where
# burn_cpu and main are.
range()
{
	local a s
	read -r a s <<<"$(nm -S "$TARGETS/hot" | awk -v f="$1" '$4 == f { print $1, $2 }')"
	echo $((16#$a)) $((16#$a + 16#$s))
}
read -r BURN_LO BURN_HI <<<"$(range burn_cpu)"
read -r MAIN_LO MAIN_HI <<<"$(range main)"

P="$T/stripped.pb.gz"
run "$RECCE" record -o "$P" -- "$TARGETS/hot-stripped" 1.5
is "$RC" 0 "record -- hot-stripped exits 0" || show_run
run "$RECCE" report --folded --value samples "$P"
is "$RC" 0 "report --folded of it exits 0" || show_run
FOLDED=$(cat "$OUT")
diag "the most frequent stacks:" "$(folded_top "$FOLDED" 3)"

TOTAL=$(folded_total "$FOLDED")
STRIPPED=$(folded_count "$(folded_user "$FOLDED")" '(^|;)hot-stripped!0x[0-9a-f]+-0x[0-9a-f]+$')
cmp_ok "$STRIPPED" '>' "$TOTAL * 0.8" "most leaves are hot-stripped!0xSTART-0xEND frames ($STRIPPED of $TOTAL)"

# The leaf and its caller of the heaviest stack are burn_cpu and main,
# with the very ranges their symbols have: file addresses a user can give
# to objdump --start-address.
TOP=$(folded_top "$FOLDED" | sed 's/ [0-9]*$//')
LEAF=$(printf '%s\n' "$TOP" | awk -F';' '{ print $NF }')
CALLER=$(printf '%s\n' "$TOP" | awk -F';' 'NF > 1 { print $(NF - 1) }')
span()
{
	local lo hi
	read -r lo hi <<<"$(printf '%s\n' "$1" | sed -n 's/^hot-stripped!0x\([0-9a-f]*\)-0x\([0-9a-f]*\)$/\1 \2/p')"
	[ -n "$hi" ] && echo $((16#$lo)) $((16#$hi))
}
is "$(span "$LEAF")" "$BURN_LO $BURN_HI" "the leaf ($LEAF) is burn_cpu's range"
is "$(span "$CALLER")" "$MAIN_LO $MAIN_HI" "its caller ($CALLER) is main's range"

# No name is invented for code of the stripped binary: every frame between
# libc's start code and the leaf is a module!range.
unlike "$FOLDED" '(^|;)(burn_cpu|main|_init|_fini|_start|frame_dummy|register_tm_clones)(;| )' \
	"no symbol names are made up for the stripped binary's code"

run "$RECCE" report "$P"
is "$RC" 0 "the default report of it exits 0" || show_run
TOPROW=$(table_rows "$(cat "$OUT")" | head -n 1)
like "$TOPROW" 'hot-stripped!0x[0-9a-f]+-0x[0-9a-f]+' "its top row is a hot-stripped!range frame"
like "$(cat "$OUT")" '__libc_start_call_main|__libc_start_main' "libc frames still have names"

# MiniDebugInfo (Fedora's way of shipping symbols): fully stripped, but an
# xz-compressed .gnu_debugdata section holds the function symbols, and
# they name the code.
is "$(nm "$TARGETS/hot-minidebug" 2>&1)" "nm: $TARGETS/hot-minidebug: no symbols" \
	"the MiniDebugInfo twin has no symbol table of its own"
run "$RECCE" record -o "$T/mini.pb.gz" -- "$TARGETS/hot-minidebug" 0.5
is "$RC" 0 "record -- hot-minidebug exits 0" || show_run
run "$RECCE" report --folded "$T/mini.pb.gz"
like "$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')" ';main;burn_cpu$' \
	"its heaviest stack names main and burn_cpu from .gnu_debugdata"

# Go stripped as distributions ship it (-ldflags=-s -w): no symbol table,
# but the runtime keeps its own function table, .gopclntab, and recce
# names the code from it, at exactly the twin's addresses. The build is
# offline, in GOPATH mode, with a GNU build-id as Debian gives its Go
# programs (so that the symbol cache keeps a table of it).
export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
run go build -ldflags="-s -w -B 0x$(sha1sum "$ROOT/tests/go/main.go" | cut -c1-40)" \
	-o "$T/goprof-s" "$ROOT/tests/go/main.go"
is "$RC" 0 "the Go program builds stripped" || show_run
run go build -o "$T/goprof" "$ROOT/tests/go/main.go"
is "$RC" 0 "... and with its symbols" || show_run
is "$(nm "$T/goprof-s" 2>&1)" "nm: $T/goprof-s: no symbols" "the stripped one has no symbol table"
run "$RECCE" record -o "$T/go.pb.gz" -- "$T/goprof-s" "$T/go.pprof" 1
is "$RC" 0 "record -- the stripped Go program exits 0" || show_run
run "$RECCE" report --folded "$T/go.pb.gz"
like "$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')" '^runtime\.goexit;runtime\.main;main\.main;main\.burnGoCPU$' \
	"its heaviest stack runs from runtime.goexit to main.burnGoCPU, named by .gopclntab" || show_run
# (A walk that stopped says where, "[no unwind info: goprof-s+0x...]": a
# marker, not a frame. Go's time.now moves SP to the thread's stack to
# call the vDSO, and is left to libdwfl, which stops there.)
unlike "$(cat "$OUT")" '(^|;)goprof-s[+!]' "no frame of it is left as an offset or a range" || show_run
# The program profiled itself too (runtime/pprof): Go's own traceback
# of the same run has the same heaviest stack, starting below goexit.
# Where the machine is busy, Go preempts burnGoCPU often, and its own
# profile puts most of the samples in runtime.asyncPreempt, the call
# the preemption pushes at whatever instruction burnGoCPU was at: that
# time is burnGoCPU's.
TOP=$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')
run "$RECCE" report --folded "$T/go.pprof"
GO_OWN=$(sed 's/;runtime\.asyncPreempt\( [0-9]*\)$/\1/' "$OUT" |
	awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n[s] += c } END { for (s in n) print s " " n[s] }')
is "$(folded_top "$GO_OWN" | sed 's/ [0-9]*$//')" "${TOP#runtime.goexit;}" \
	"Go's own profile of the run has recce's heaviest stack" || show_run

# Unwound by .gopclntab too: its table of each function's stack offset
# at each instruction steps out of every frame exactly, where frame
# pointers lose the caller of a function that pushed none (leafSpin:
# the walk by rbp goes from it to outer, past middle). Every stack of
# leafSpin is one of the two it has, whole from runtime.goexit, as the
# twin's CFI (Go writes it into .debug_frame, which -w drops) gives
# them; a few samples that a signal handler took on the thread's signal
# stack end at the interrupted leafSpin, marked: the goroutine's stack
# is not in the copy.
run go build -ldflags="-s -w" -o "$T/stacks-s" "$ROOT/tests/go/stacks/main.go"
is "$RC" 0 "the Go program of known stacks builds stripped" || show_run
run go build -o "$T/stacks" "$ROOT/tests/go/stacks/main.go"
is "$RC" 0 "... and with its symbols and CFI" || show_run
CHAINS='^runtime\.goexit(\.abi0)?;(runtime\.main;main\.main;main\.outer|main\.main\.func1;main\.worker);main\.middle;main\.leafSpin(;|$)'
SIGNALLED='^\[interrupted stack not copied\];main\.leafSpin;runtime\.sigreturn(\.abi0)?(;|$)'
declare -A CHAINS_OF
for b in stacks-s stacks; do
	run "$RECCE" record -F 999 -o "$T/$b.pb.gz" -- "$T/$b" 1
	is "$RC" 0 "record -- $b exits 0" || show_run
	F=$(folded_user "$(folded "$T/$b.pb.gz")")
	LEAF=$(folded_count "$F" '(^|;)main\.leafSpin(;|$)')
	cmp_ok "$LEAF" '>' 0 "$b: samples in leafSpin"
	is "$(($(folded_count "$F" "$CHAINS") + $(folded_count "$F" "$SIGNALLED")))" "$LEAF" \
		"$b: every one has its whole stack, but for a signal handler's, marked" ||
		diag "$(printf '%s\n' "$F" | grep leafSpin | grep -vE "$CHAINS|$SIGNALLED" | head -5)"
	# time.now moves SP to the thread's stack to call the vDSO, where the
	# copy is: its callers are the frame-pointer walk's from its rbp, its
	# own frame pointer at the call. As the leaf it ends the stack, marked.
	NOW=$(folded_count "$F" '(^|;)time\.now(;|$)')
	cmp_ok "$NOW" '>' 0 "$b: samples in time.now (clockSpin calls time.Now)"
	NOW_WHOLE=$(folded_count "$F" '^runtime\.goexit(\.abi0)?;(runtime\.main;main\.main|main\.main\.func[0-9]+;main\.(worker|clockSpin));time\.Now;time\.now(;|$)')
	cmp_ok "$NOW_WHOLE" '>' "$NOW / 2" "$b: most are whole through the stack switch ($NOW_WHOLE of $NOW)"
	is "$((NOW_WHOLE + $(folded_count "$F" '^\[[^]]*\];(.*;)?time\.now(;|$)')))" "$NOW" \
		"$b: the others end marked" || diag "$(printf '%s\n' "$F" | grep 'time\.now' | head -5)"
	CHAINS_OF[$b]=$(printf '%s\n' "$F" | sed 's/ [0-9]*$//' | grep -E "$CHAINS" |
		sed 's/\.abi0;/;/; s/;main\.leafSpin;.*/;main.leafSpin/' | sort -u | tr '\n' ' ')
done
WANT="runtime.goexit;main.main.func1;main.worker;main.middle;main.leafSpin runtime.goexit;runtime.main;main.main;main.outer;main.middle;main.leafSpin "
is "${CHAINS_OF[stacks]}" "$WANT" "the twin's CFI gives leafSpin's two stacks"
is "${CHAINS_OF[stacks-s]}" "$WANT" "and so does the stripped binary's table"

# Built as a position-independent executable by the external linker (as
# cgo programs are, Docker's among them), a stripped Go program has no
# .gopclntab section: the table lies inside .data.rel.ro, and recce finds
# it there by its header.
run go build -buildmode=pie -ldflags="-s -w -linkmode=external" -o "$T/goprof-ext" \
	"$ROOT/tests/go/main.go"
is "$RC" 0 "the Go program builds as an externally linked PIE" || show_run
is "$(readelf -SW "$T/goprof-ext" | grep -c '\.gopclntab')" 0 "which has no .gopclntab section"
run "$RECCE" record -o "$T/go-ext.pb.gz" -- "$T/goprof-ext" "$T/go-ext.pprof" 1
is "$RC" 0 "record -- the externally linked Go program exits 0" || show_run
run "$RECCE" report --folded "$T/go-ext.pb.gz"
like "$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')" '^runtime\.goexit;runtime\.main;main\.main;main\.burnGoCPU$' \
	"its heaviest stack runs from runtime.goexit to main.burnGoCPU, named by the table in .data.rel.ro" ||
	show_run
# Its cgo glue is C, stripped, and not in Go's table: below a cgo call a
# range is all there is to name it by, and so is the C function a new
# thread of the runtime starts in (cgo's threadentry, which frees its
# argument). A sample taken while the program handled a signal
# (runtime.sigtramp or a function it called, above libc's restorer) is
# unwound through the signal frame to the interrupted Go function, and
# ends there, marked [interrupted stack not copied]: the handler ran on
# the thread's signal stack, and the goroutine's is not in the copy.
is "$(grep -E '(^|;)goprof-ext[+!]' "$OUT" |
	grep -cvE '(callCgo[A-Za-z]*|asmcgocall|cgocall|^clone3;start_thread);goprof-ext!')" 0 \
	"no Go frame of it is left as an offset or a range" || show_run
# The twin's symbols: burnGoCPU, and main.main right after it.
read -r BURN SIZE NEXT <<<"$(go tool nm -size -sort address "$T/goprof" |
	awk '$4 == "main.burnGoCPU" { a = $1; s = $2; getline; print a, s, $1 }')"
run "$RECCE" addr2line -f -e "$T/goprof-s" "0x$BURN" "$(printf '0x%x' $((16#$BURN + SIZE - 1)))" "0x$NEXT"
is "$(sed -n '1p;3p;5p' "$OUT" | tr '\n' ' ')" "main.burnGoCPU main.burnGoCPU main.main " \
	"burnGoCPU's first and last bytes name it, the next function's first names main.main" || show_run

# Files, lines and inlined calls too, from .gopclntab's tables: at the
# first, the middle and the last byte of every function of the twin,
# (1) the innermost frame's file and line and the outermost frame's
# function are what Go's own addr2line reads from the same table (it
# does not expand inlined calls), and (2) the whole chain of frames is
# what the twin's DWARF says, inlined calls and the lines they were
# called from included.
go tool nm -size "$T/goprof" | awk '$3 == "T" && $2 > 0 { print $1, $2 }' |
	while read -r A S; do
		printf '0x%x\n0x%x\n0x%x\n' $((16#$A)) $((16#$A + S / 2)) $((16#$A + S - 1))
	done >"$T/go.pcs"
go tool addr2line "$T/goprof-s" <"$T/go.pcs" | paste - - >"$T/go.lines.want"
run "$RECCE" addr2line -a -f -i -e "$T/goprof-s" $(cat "$T/go.pcs")
cp "$OUT" "$T/go.chains.got"
# Per address: the last frame's function, the first frame's file:line.
awk '/^0x/ { if (n) print f "\t" l; n = 0; next }
	{ if (n % 2 == 0) f = $0; else if (n == 1) l = $0; n++ }
	END { if (n) print f "\t" l }' "$T/go.chains.got" >"$T/go.lines.got"
cmp_ok "$(wc -l <"$T/go.lines.want")" '>' 3000 "Go's addr2line names thousands of addresses"
is "$(diff "$T/go.lines.want" "$T/go.lines.got" | grep -c '^<')" 0 \
	"recce gives each the same function and innermost file and line, the binary stripped" ||
	diff "$T/go.lines.want" "$T/go.lines.got" | head -5
run "$RECCE" addr2line -a -f -i --no-cache -e "$T/goprof" $(cat "$T/go.pcs")
cp "$OUT" "$T/go.chains.want"
# One line an address: its frames, "function | file:line" each, but for
# the outermost function's name ("*"), which the twin takes from its
# symbol table (hash/crc32.ieeeCLMUL.abi0, type..eq.[2]T) and Go's table
# writes its own way (checked against Go's addr2line above). DWARF's
# wrappers are in "./<autogenerated>".
chains()
{
	sed -e 's|^\./<autogenerated>:|<autogenerated>:|' "$1" |
		awk 'function out() { if (n) { f[n - 2] = "*"; s = f[0]
				for (i = 1; i < n; i++) s = s " | " f[i]; print a "\t" s } }
			/^0x/ { out(); a = $0; n = 0; next } { f[n++] = $0 } END { out() }'
}
chains "$T/go.chains.want" >"$T/go.want.n"
chains "$T/go.chains.got" >"$T/go.got.n"
INLINED=$(awk -F'\t' 'split($2, f, " [|] ") > 2 { k++ } END { print k + 0 }' "$T/go.want.n")
cmp_ok "$INLINED" '>' 100 "the twin's DWARF has inlined calls at hundreds of them ($INLINED)"
# chain_diffs WANT GOT: the addresses whose chains differ. Where they
# may, only at a pointer method's wrapper: DWARF keeps no record of the
# value method inlined into it, Go's table does, at the same line, under
# the wrapper.
chain_diffs()
{
	paste "$1" "$2" | awk -F'\t' '$2 != $4 {
		n = split($4, g, " [|] ")
		if (!(split($2, w, " [|] ") == 2 && n == 4 && g[4] == "<autogenerated>:1" &&
		      g[2] == w[2] && g[3] == w[1])) print $1 "\t" $2 "\t" $4 }'
}
chain_diffs "$T/go.want.n" "$T/go.got.n" >"$T/go.chains.diff"
is "$(wc -l <"$T/go.chains.diff")" 0 \
	"and the stripped binary's inlined calls are the DWARF's, frame by frame" ||
	diag "$(head -n 4 "$T/go.chains.diff")"

# The same for the externally linked PIE, whose table lies in
# .data.rel.ro: its twin linked the same way and a copy stripped by
# strip(1), at the same addresses. The twin's DWARF has .debug_aranges
# for its C units only (runtime/cgo's); its Go functions' lines are
# still theirs, not a C unit's. Only Go's functions are compared: the C
# glue is not in Go's table.
run go build -buildmode=pie -ldflags=-linkmode=external -o "$T/goprof-ext-twin" \
	"$ROOT/tests/go/main.go"
is "$RC" 0 "the externally linked PIE builds with its symbols and DWARF" || show_run
cp "$T/goprof-ext-twin" "$T/goprof-ext-s" && strip --strip-all "$T/goprof-ext-s"
go tool nm -size "$T/goprof-ext-twin" | awk '$3 ~ /^[Tt]$/ && $2 > 0 && $4 ~ /\./ && $4 !~ /\.cold$/ { print $1, $2 }' |
	while read -r A S; do
		printf '0x%x\n0x%x\n0x%x\n' $((16#$A)) $((16#$A + S / 2)) $((16#$A + S - 1))
	done >"$T/go-ext.pcs"
cmp_ok "$(wc -l <"$T/go-ext.pcs")" '>' 3000 "thousands of addresses in its Go functions"
run "$RECCE" addr2line -a -f -i --no-cache -e "$T/goprof-ext-twin" $(cat "$T/go-ext.pcs")
chains "$OUT" >"$T/go-ext.want.n"
is "$(grep -c 'gcc_mmap' "$T/go-ext.want.n")" 0 "the twin's DWARF puts no Go function in a C unit" ||
	diag "$(grep -m4 'gcc_mmap' "$T/go-ext.want.n")"
INLINED=$(awk -F'\t' 'split($2, f, " [|] ") > 2 { k++ } END { print k + 0 }' "$T/go-ext.want.n")
cmp_ok "$INLINED" '>' 100 "the twin's DWARF has inlined calls at hundreds of them ($INLINED)"
run "$RECCE" addr2line -a -f -i --no-cache -e "$T/goprof-ext-s" $(cat "$T/go-ext.pcs")
chains "$OUT" >"$T/go-ext.got.n"
chain_diffs "$T/go-ext.want.n" "$T/go-ext.got.n" >"$T/go-ext.chains.diff"
is "$(wc -l <"$T/go-ext.chains.diff")" 0 \
	"the stripped PIE's inlined calls, from its table in .data.rel.ro, are the DWARF's, frame by frame" ||
	diag "$(head -n 4 "$T/go-ext.chains.diff")"
# The first run built the symbol cache's table of the binary; a second
# reads every answer from it, and one without the cache reads none.
run "$RECCE" addr2line -a -f -i -e "$T/goprof-s" $(cat "$T/go.pcs")
is "$(diff "$T/go.chains.got" "$OUT" | grep -c '^[<>]')" 0 \
	"the same read from the symbol cache's table" ||
	diff "$T/go.chains.got" "$OUT" | head -12
run "$RECCE" addr2line -a -f -i --no-cache -e "$T/goprof-s" $(cat "$T/go.pcs")
is "$(diff "$T/go.chains.got" "$OUT" | grep -c '^[<>]')" 0 \
	"and without the cache" ||
	diff "$T/go.chains.got" "$OUT" | head -12

# trace finds the stripped program's functions by those names too.
spawn_exec "$T/go.out" "$T/goprof-s" "$T/go2.pprof" 60
run "$RECCE" trace -p "$PID" '*burnGo*' --count 2 --return
is "$RC" 0 "trace of the stripped Go program by a pattern exits 0" || show_run
like "$(cat "$ERR")" 'tracing 1 function in process' "the pattern matches the one function" || show_run
is "$(grep -c "goprof-s:main\.burnGoCPU --> " "$OUT")" 2 \
	"both calls and their returns are main.burnGoCPU's, found in .gopclntab" || show_run
like "$(cat "$ERR")" "^recce: goprof-s:main\.burnGoCPU: no DWARF debug info for it: its calls show no arguments and its returns the register rax in hex \(Go's first result, .*\); --args shows the argument registers\$" \
	"and says what its returns show without types" || show_run
# A Go name is found without its package path's directories too, as Go's
# short names give it: runtime/pprof's writer, every 100 ms.
run "$RECCE" trace -p "$PID" 'pprof.(*profileBuilder).addCPUData' --count 1
is "$RC" 0 "trace by a Go name without its package's directories exits 0" || show_run
is "$(grep -c 'goprof-s:runtime/pprof\.(\*profileBuilder)\.addCPUData()$' "$OUT")" 1 \
	"and traces runtime/pprof.(*profileBuilder).addCPUData" || show_run
run "$RECCE" trace -p "$PID" 'pprof.profileWritr' --count 1
is "$RC" 1 "a Go name misspelled exits 1"
like "$(cat "$ERR")" 'the nearest names are: runtime/pprof\.profileWriter, runtime/pprof\.' \
	"and offers the whole names nearest without their directories, of that package first" ||
	show_run
kill_quietly "$PID"

done_testing
