#!/bin/bash
# `recce trace` shows an argument's value only from where it is: each is
# read from the register the ABI or, where it says so, DWARF gives it; a
# struct passed by value takes the registers its ABI gives it and the
# arguments after it are still exact; a string given as a pointer and a
# length (Go, Rust), and a result that is one, is shown as its text; and
# an argument recce cannot read is "?" in text and null in JSON, with the
# reason, never a number.
# On C built by GCC and by clang, Go, and Rust.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/values"

N=4
FUNCS=(at_point after_named after_big after_mixed after_double after_wide seventh unused_first)

# traced NAME START ARGS... -- CMD...: starts CMD, which prints "ready" and
# waits for START (a signal to send, or a file to make) to begin; traces
# it with ARGS until it exits. The events are in $T/NAME.trc.
traced()
{
	local name=$1 start=$2 args=()
	shift 2
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	spawn "$T/$name.out" "$@"
	local target=$PID
	wait_for 20 grep -q ready "$T/$name.out" || fail "$name starts" "$(cat "$T/$name.out")"
	spawn_recce "$T/$name.trc" "$T/$name.err" trace -p "$target" "${args[@]}" \
		--count 0 --limit 0 --time 120
	local tracer=$PID
	wait_for 20 grep -q '^recce: tracing' "$T/$name.err" ||
		fail "the trace of $name starts" "$(cat "$T/$name.err")"
	case $start in
	/*) : >"$start" ;;
	*) kill "-$start" "$target" ;;
	esac
	wait_exit 60 "$target" || fail "$name exits" "still running"
	wait_exit 60 "$tracer" || fail "the trace of $name ends with it" "still running"
}

# ns FILE FUNCTION ARGS-REGEX: the values of n, in order, of FUNCTION's
# calls whose arguments match ARGS-REGEX (with n=... last).
ns()
{
	sed -n "s/.*:$2($3, n=\\([0-9-]*\\))\$/\\1/p" "$1" | tr '\n' ' '
}

check_c()
{
	local f=$T/$1.trc cc=$1
	is "$(ns "$f" at_point 'p=?')" "0 1 2 3 " "$cc: after an 8-byte struct (one register), n is exact"
	is "$(ns "$f" after_named 'q=?')" "0 1 2 3 " "$cc: after a 16-byte struct (two registers) too"
	is "$(ns "$f" after_big 'b=?')" "0 1 2 3 " "$cc: after a 32-byte struct (in memory, no register) too"
	is "$(ns "$f" after_mixed 'm=?')" "0 1 2 3 " \
		"$cc: after a struct of a double and a long (xmm and one register) too"
	is "$(ns "$f" after_double 'f=?')" "0 1 2 3 " "$cc: after a double (in xmm) too"
	is "$(ns "$f" after_wide 'w=?')" "0 1 2 3 " "$cc: after an __int128 (two registers) too"
	is "$(grep -c 'seventh(a=1, b=2, c=3, d=4, e=5, f=6)$' "$f")" "$N" \
		"$cc: six register arguments exact"
}

traced gcc USR1 "${FUNCS[@]}" -- "$TARGETS/values" "$N"
is "$WAIT_RC" 0 "the target built by GCC exits 0" || show_run
check_c gcc
is "$(ns "$T/gcc.trc" unused_first 'unused=99')" "0 1 2 3 " \
	"gcc: an unused argument GCC kept in place is read where the ABI puts it"

# A string argument is copied when the probe fires: relabel rewrites its
# caller's buffer at once, which a read after the hit would show.
traced gcc-str USR1 relabel -- "$TARGETS/values" "$N"
is "$(sed -n 's/.*:relabel(label="\([^"]*\)", n=[0-9]*)$/\1/p' "$T/gcc-str.trc" | tr '\n' ' ')" \
	"label-0 label-1 label-2 label-3 " \
	"a string argument is its text at the call, though the function rewrites it at once"
# So it is when the hit carries a call chain as well.
traced gcc-str-caller USR1 relabel --caller -- "$TARGETS/values" "$N"
is "$(sed -n 's/.*:relabel(label="\([^"]*\)", n=[0-9]*) <- main$/\1/p' "$T/gcc-str-caller.trc" |
	tr '\n' ' ')" "label-0 label-1 label-2 label-3 " \
	"with --caller, the string is its text at the call, and the caller is main" ||
	diag "$(head -n 8 "$T/gcc-str-caller.trc")"
traced gcc-str-stack USR1 relabel --stack -- "$TARGETS/values" "$N"
is "$(sed -n 's/.*:relabel(label="\([^"]*\)", n=[0-9]*)$/\1/p' "$T/gcc-str-stack.trc" | tr '\n' ' ')" \
	"label-0 label-1 label-2 label-3 " "with --stack, the string is its text at the call too"
is "$(grep -c '^ *at main ' "$T/gcc-str-stack.trc")" "$N" "and each call's stack holds main" ||
	diag "$(head -n 8 "$T/gcc-str-stack.trc")"

# At -O0 DWARF places arguments in stack slots the prologue fills later:
# the ABI's registers are all there is. At -O2, DWARF's places.
for o in O0 O2; do
	need_file "$TARGETS/../targets-$o/values"
	traced "gcc-$o" USR1 "${FUNCS[@]:0:7}" -- "$TARGETS/../targets-$o/values" "$N"
	is "$WAIT_RC" 0 "the target built by GCC at -$o exits 0"
	check_c "gcc-$o"
done

# clang at -O2 drops the unused argument of an internal function, keeps
# the name, and says so only in DWARF.
if clang -O2 -g -o "$T/values-clang" tests/targets/values.c 2>"$T/clang.err"; then
	traced clang USR1 "${FUNCS[@]}" -- "$T/values-clang" "$N"
	is "$WAIT_RC" 0 "the target built by clang exits 0"
	check_c clang
	is "$(ns "$T/clang.trc" unused_first 'unused=?')" "0 1 2 3 " \
		"clang: an argument LLVM dropped is '?', and the one after it is read from where LLVM moved it"
	traced clang-json USR1 at_point unused_first --format json -- "$T/values-clang" "$N"
	like "$(grep -m1 '"function":"values-clang:at_point"' "$T/clang-json.trc")" \
		'"args":\{"p":null,"n":0\},"unread":\{"p":"a struct, slice or interface passed by value"\}' \
		"JSON: a struct by value is null, with the reason" || show_run
	like "$(grep -m1 '"function":"values-clang:unused_first"' "$T/clang-json.trc")" \
		'"args":\{"unused":null,"n":0\},"unread":\{"unused":"optimized out: [^"]*"\}' \
		"JSON: an argument the compiler dropped is null, with the reason"
	unlike "$(cat "$T/clang-json.trc")" '"(p|unused)":"0x' "and never a register's value"
else
	fail "clang -O2 of tests/targets/values.c" "$(cat "$T/clang.err")"
fi

# Go: a string is a pointer and a length in two registers; a slice takes
# three.
export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
if go build -o "$T/govalues" tests/go/values/main.go 2>"$T/go.err"; then
	traced go USR1 main.parse main.sum strconv.Atoi -- "$T/govalues" "$N"
	is "$WAIT_RC" 0 "the Go target exits 0"
	is "$(sed -n 's/.*:main\.parse(s="\([0-9]*\)", base=2)$/\1/p' "$T/go.trc" | tr '\n' ' ')" \
		"0 7 14 21 " "Go: a string argument is its text, and the int after it exact" ||
		show_run
	is "$(sed -n 's/.*:strconv\.Atoi(s="\([0-9]*\)")$/\1/p' "$T/go.trc" | tr '\n' ' ')" \
		"0 7 14 21 " "Go: the standard library's strconv.Atoi too"
	is "$(sed -n 's/.*:main\.sum(xs=?, k=\([0-9]*\))$/\1/p' "$T/go.trc" | tr '\n' ' ')" \
		"0 1 2 3 " "Go: a slice is '?', the int after its three registers exact"
	traced go-results USR1 main.score --return -- "$T/govalues" "$N"
	is "$(sed -n 's/.*:main\.score\/2 --> \(.*\)  ([0-9.]* [mun]*s)$/\1/p' "$T/go-results.trc" |
		sed 's/non-nil(0x[0-9a-f]*)/non-nil(ADDR)/' | head -n 4)" '(0, true, "s0!", nil)
(3, false, "s1!", nil)
(-2, false, "", non-nil(ADDR))
(9, false, "s3!", nil)' "Go: every result of four, a string by its text, an error nil or not" ||
		diag "$(head -n 8 "$T/go-results.trc")"
	traced go-json USR1 main.sum --format json -- "$T/govalues" "$N"
	like "$(head -n 1 "$T/go-json.trc")" \
		'"args":\{"xs":null,"k":0\},"unread":\{"xs":"a struct, slice or interface passed by value"\}' \
		"JSON: the slice is null, with the reason" || show_run
else
	fail "go build of tests/go/values" "$(cat "$T/go.err")"
fi

# Rust: a &str is a pointer and a length; len_only's pointer is dropped.
if rustc -g -O -o "$T/rsvalues" tests/rust/values.rs 2>"$T/rustc.err"; then
	traced rust "$T/rust.go" add_file len_only -- "$T/rsvalues" 6 "$T/rust.go"
	is "$WAIT_RC" 0 "the Rust target exits 0"
	is "$(ns "$T/rust.trc" 'values::add_file' 'path="[a-z.]*"')" \
		"0 1 2 3 4 5 " "Rust: a &str argument is its text, and the u64 after it exact" ||
		show_run
	is "$(grep -o 'add_file(path="[^"]*", n=[0-9]*)' "$T/rust.trc" | sed -n 4p)" \
		'add_file(path="a.txt", n=3)' "each call with its own string"
	is "$(ns "$T/rust.trc" 'values::len_only' 'path=?')" "0 1 2 3 4 5 " \
		"Rust: a string whose pointer LLVM dropped is '?', the u64 after it exact"
	# side's result is used by no caller: LLVM dropped it.
	traced rust-ret "$T/rust-ret.go" side --return -- "$T/rsvalues" 6 "$T/rust-ret.go"
	is "$(grep -c 'values::side/1 --> (not readable here)' "$T/rust-ret.trc")" 6 \
		"Rust: a result LLVM changed (nocall) is not read from rax, not made up" ||
		diag "$(head -n 4 "$T/rust-ret.trc")"
	# pick's &str result: a pointer in rax and a length in rdx, its text
	# copied at the return (the target exits before recce reads).
	traced rust-str "$T/rust-str.go" pick --return -- "$T/rsvalues" 6 "$T/rust-str.go"
	is "$(grep -o 'pick/1 --> .*  (' "$T/rust-str.trc" | sed 's/  ($//' | tr '\n' ' ')" \
		'pick/1 --> "a.txt" pick/1 --> "bb.log" pick/1 --> "config.toml" pick/1 --> "a.txt" pick/1 --> "bb.log" pick/1 --> "config.toml" ' \
		"Rust: a &str result is its text, read at the return" || show_run
else
	fail "rustc of tests/rust/values.rs" "$(cat "$T/rustc.err")"
fi

done_testing
