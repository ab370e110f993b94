#!/bin/bash
# recce addr2line, and the symbol cache under it: for every address inside
# the functions of a C, a C++ (inlines, .cold parts, exceptions), a Go and
# a stripped target with separate debug info, the answers through a table
# built now, through a table read back, and without a table are the same
# bytes, and the same files and lines GNU addr2line gives. A table that is
# corrupt, truncated or built before the debug info was there is rebuilt;
# the cache stays under its size cap; an unwritable cache costs nothing.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/shop" "$TARGETS/throws" "$TARGETS/calls" \
	"$TARGETS/hot-stripped" "$TARGETS/hot-minidebug"
command -v addr2line >/dev/null || skip_all "needs GNU addr2line (binutils)"

export RECCE_CACHE_DIR=$T/symcache
unset RECCE_CACHE_MAX

# every_address BIN [STEP]: every STEP-th address inside a code symbol with
# a size, in hexadecimal, one a line.
every_address()
{
	nm -S --defined-only "$1" | perl -ane '
		next unless @F == 4 && $F[2] =~ /^[tTwW]$/;
		my ($a, $s) = (hex $F[0], hex $F[1]);
		for (my $x = $a; $x < $a + $s; $x += '"${2:-1}"') {
			printf "%x\n", $x unless $seen{$x}++;
		}'
}

# table_of BIN: the cache file of BIN's build-id.
table_of()
{
	local bid
	bid=$(readelf -n "$1" | awk '/Build ID/ { print $3 }')
	echo "$RECCE_CACHE_DIR/symbols/${bid:0:2}/${bid:2}.sym"
}

no_discriminators() { sed 's/ (discriminator [0-9]*)//'; }

# same_three NAME BIN ADDRS: no table, a table built now and one read back
# give the same bytes.
same_three()
{
	local name=$1 bin=$2 addrs=$3
	rm -rf "$RECCE_CACHE_DIR"
	"$RECCE" addr2line --no-cache -a -f -i -C -e "$bin" <"$addrs" >"$T/direct"
	ok "$name: --no-cache writes no table" test ! -e "$(table_of "$bin")"
	"$RECCE" addr2line -a -f -i -C -e "$bin" <"$addrs" >"$T/cold"
	ok "$name: the first run keeps a table" test -s "$(table_of "$bin")"
	"$RECCE" addr2line -a -f -i -C -e "$bin" <"$addrs" >"$T/warm"
	ok "$name: answers without a table are not empty" test "$(grep -c . "$T/direct")" -gt \
		"$(wc -l <"$addrs")"
	ok "$name: a table built now answers as no table does" cmp -s "$T/cold" "$T/direct"
	ok "$name: a table read back answers as no table does" cmp -s "$T/warm" "$T/direct"
}

for t in hot calls shop throws; do
	bin=$TARGETS/$t
	every_address "$bin" >"$T/$t.addrs"
	same_three "$t" "$bin" "$T/$t.addrs"
	# Files and lines, inlined callers included, as GNU addr2line says.
	"$RECCE" addr2line -a -i -e "$bin" <"$T/$t.addrs" >"$T/ours"
	addr2line -a -i -e "$bin" <"$T/$t.addrs" | no_discriminators >"$T/gnu"
	is "$(diff "$T/ours" "$T/gnu" | grep -c '^<')" 0 \
		"$t: file:line of every frame of $(wc -l <"$T/$t.addrs") addresses as GNU addr2line"
	# Function names: GNU addr2line names the caller at the first byte
	# of some inlined calls, and a .cold part by its parent.
	"$RECCE" addr2line -a -f -i -C -e "$bin" <"$T/$t.addrs" >"$T/ours"
	addr2line -a -f -i -C -e "$bin" <"$T/$t.addrs" | no_discriminators >"$T/gnu"
	lines=$(wc -l <"$T/gnu")
	differ=$(diff "$T/ours" "$T/gnu" | grep -c '^<')
	ok "$t: function names as GNU addr2line in 99% of $lines lines ($differ differ)" \
		test $((differ * 100)) -le "$lines"
done

# Names as GNU prints them, mangled or not, for addresses given as
# arguments; -p and -s.
a=$(nm "$TARGETS/shop" | awk '$3 == "_ZN4shop5quoteEl" { print $1 }')
run "$RECCE" addr2line -e "$TARGETS/shop" -f "0x$a"
is "$(head -1 "$OUT")" "_ZN4shop5quoteEl" "without -C the linkage name"
run "$RECCE" addr2line -e "$TARGETS/shop" -fCps "$a"
like "$(cat "$OUT")" '^shop::quote\(long\) at shop\.cpp:[0-9]+$' "-C -p -s: one line, demangled, base name"
is "$(cat "$OUT")" "$(addr2line -e "$TARGETS/shop" -fCps "$a")" "the same line as GNU addr2line"
rust=$(nm "$TARGETS/shop" | awk '/hot6engine4rank/ { print $1 }')
run "$RECCE" addr2line -e "$TARGETS/shop" -fC "$rust"
is "$(head -1 "$OUT")" "hot::engine::rank" "a Rust symbol demangled, its hash dropped"
run "$RECCE" addr2line -e "$TARGETS/shop" -a -f 0 zz
is "$(cat "$OUT")" "$(printf '0x0000000000000000\n??\n??:0\n0x0000000000000000\n??\n??:0')" \
	"an address nothing covers, or no address, prints ?? as GNU does"

# Go, built here: its own DWARF and runtime.
# Go's linker writes a GNU build-id (what the cache is keyed by) when given one.
if command -v go >/dev/null &&
	go build -ldflags="-B 0x$(sha1sum tests/go/main.go | cut -c1-40)" -o "$T/goprof" tests/go/main.go 2>"$T/go.err"; then
	every_address "$T/goprof" 7 >"$T/go.addrs"
	same_three "go" "$T/goprof" "$T/go.addrs"
	like "$(cat "$T/warm")" 'main\.main' "go: main.main is named"
else
	skip 7 "no Go toolchain"
fi

# A stripped binary whose debug info is in a separate file (debuglink).
# Before the file is there the table knows functions only; once it is
# there, the table is rebuilt with lines.
cp "$TARGETS/hot" "$T/hot"
objcopy --only-keep-debug "$T/hot" "$T/hot.debug"
strip --strip-debug "$T/hot"
objcopy --add-gnu-debuglink="$T/hot.debug" "$T/hot"
mv "$T/hot.debug" "$T/hot.debug.away"
every_address "$T/hot" >"$T/s.addrs"
rm -rf "$RECCE_CACHE_DIR"
"$RECCE" addr2line -f -e "$T/hot" <"$T/s.addrs" >"$T/nodebug"
like "$(cat "$T/nodebug")" 'burn_cpu' "stripped of debug info: functions named from the symbol table"
unlike "$(cat "$T/nodebug")" 'hot\.c:' "and no lines yet"
mv "$T/hot.debug.away" "$T/hot.debug"
every_address "$T/hot" >"$T/s.addrs"
"$RECCE" addr2line -a -f -i -e "$T/hot" <"$T/s.addrs" >"$T/cold"
like "$(cat "$T/cold")" 'hot\.c:[0-9]+' "with the debug file there, the table is rebuilt with lines"
"$RECCE" addr2line --no-cache -a -f -i -e "$T/hot" <"$T/s.addrs" >"$T/direct"
ok "and answers as no table does" cmp -s "$T/cold" "$T/direct"
"$RECCE" addr2line -a -f -i -e "$T/hot" <"$T/s.addrs" >"$T/warm"
ok "as does the table read back" cmp -s "$T/warm" "$T/direct"

# Cold parts in a stripped file, where the dynamic symbol table names a
# function but not the unlikely blocks GCC moved out of it: named
# FUNC.cold, as the full symbol table names them (blocker at -O2, kept
# with only its functions' names). A function that another reaches by a
# jump, not a call (tails' cond_tail jumps into odd_leaf), is a function
# of its own, not a part: without its name it stays a range.
O2=${TARGETS%/*}/targets-O2/blocker
strip -s -K start -K wait_pipe -K writer -K main -o "$T/blocker-dynsym" "$O2"
nm "$O2" | awk '$3 ~ /\.cold$/ { print "0x" $1, $3 }' | sort -k2 >"$T/colds"
is "$(wc -l <"$T/colds")" 3 "blocker -O2 has 3 cold parts: start, wait_pipe, writer"
cut -d' ' -f1 "$T/colds" | "$RECCE" addr2line --no-cache -f -e "$T/blocker-dynsym" |
	awk 'NR % 2 == 1' >"$T/cold-names"
is "$(cat "$T/cold-names")" "$(cut -d' ' -f2 "$T/colds")" "stripped, each named FUNC.cold after its function"
strip -s -K cond_tail -K main -o "$T/tails-dynsym" "$TARGETS/tails"
leaf=$(nm "$TARGETS/tails" | awk '$3 == "odd_leaf" { print $1 }')
run "$RECCE" addr2line --no-cache -f -e "$T/tails-dynsym" "$leaf"
like "$(head -1 "$OUT")" '^tails-dynsym!0x[0-9a-f]+-0x[0-9a-f]+$' \
	"a function only jumped into is no cold part: still its range"

# Copies of one binary (one build-id) with other symbols have tables of
# their own: the stripped copy's does not hide MiniDebugInfo's names.
burn=$(nm "$TARGETS/hot" | awk '$3 == "burn_cpu" { print $1 }')
rm -rf "$RECCE_CACHE_DIR"
run "$RECCE" addr2line -f -e "$TARGETS/hot-stripped" "$burn"
like "$(head -1 "$OUT")" '^hot-stripped!0x[0-9a-f]+-0x[0-9a-f]+$' "the stripped copy: named by .eh_frame"
run "$RECCE" addr2line -f -e "$TARGETS/hot-minidebug" "$burn"
is "$(head -1 "$OUT")" "burn_cpu" "the copy with MiniDebugInfo, same build-id, after it: burn_cpu"
run "$RECCE" addr2line -f -e "$TARGETS/hot-stripped" "$burn"
like "$(head -1 "$OUT")" '^hot-stripped!' "and the stripped copy again: its own answer"

# A damaged table is never trusted: rebuilt, to the same bytes.
bin=$TARGETS/shop
tab=$(table_of "$bin")
rm -rf "$RECCE_CACHE_DIR"
"$RECCE" addr2line --no-cache -a -f -i -e "$bin" <"$T/shop.addrs" >"$T/direct"
"$RECCE" addr2line -a -f -i -e "$bin" <"$T/shop.addrs" >/dev/null
cp "$tab" "$T/good.sym"
size=$(stat -c %s "$tab")
damage()
{
	local what=$1
	shift
	"$@"
	"$RECCE" addr2line -a -f -i -e "$bin" <"$T/shop.addrs" >"$T/after"
	ok "$what: the answers are unchanged" cmp -s "$T/after" "$T/direct"
	ok "$what: the table was rebuilt" cmp -s "$tab" "$T/good.sym"
}
flip() { printf '\xff' | dd of="$tab" bs=1 seek=$(($1)) conv=notrunc status=none; }
damage "a byte flipped in the middle" flip $((size / 2))
damage "a byte flipped in the last string" flip $((size - 2))
damage "a wrong count in the header" flip 200
damage "truncated" truncate -s $((size / 3)) "$tab"
damage "empty" truncate -s 0 "$tab"
damage "another binary's table in its place" sh -c "cp '$(table_of "$TARGETS/hot")' '$tab' 2>/dev/null || echo x >'$tab'"
damage "written by someone else (mode 666)" chmod 666 "$tab"

# The size cap: room for the newer of two tables only.
rm -rf "$RECCE_CACHE_DIR"
"$RECCE" addr2line -e "$TARGETS/shop" 0 >/dev/null
s1=$(stat -c %s "$(table_of "$TARGETS/shop")")
touch -d '2 days ago' "$(table_of "$TARGETS/shop")"
RECCE_CACHE_MAX=$((s1 + 100)) run "$RECCE" addr2line -e "$TARGETS/hot" 0
is "$RC" 0 "a run that goes over the cap exits 0"
ok "the least recently used table is removed" test ! -e "$(table_of "$TARGETS/shop")"
ok "the new one is kept" test -s "$(table_of "$TARGETS/hot")"

# A cache that cannot be written changes nothing but the speed.
RECCE_CACHE_DIR=/proc/no-such-dir "$RECCE" addr2line -a -f -i -e "$bin" <"$T/shop.addrs" \
	>"$OUT" 2>"$ERR"
RC=$?
is "$RC" 0 "an unwritable cache directory: exit 0"
ok "and the same answers" cmp -s "$OUT" "$T/direct"
is "$(cat "$ERR")" "" "and nothing on standard error"

# A co-process: each answer comes as soon as its address is read. Its
# pid is kept: bash unsets A2L_PID once the co-process has exited.
coproc A2L { "$RECCE" addr2line -f -e "$TARGETS/shop"; }
a2l_pid=$A2L_PID
echo "$a" >&"${A2L[1]}"
IFS= read -r -t 10 fn <&"${A2L[0]}"
IFS= read -r -t 10 loc <&"${A2L[0]}"
is "$fn" "_ZN4shop5quoteEl" "as a co-process, the answer comes while standard input stays open"
like "$loc" 'shop\.cpp:[0-9]+$' "with its line"
exec {A2L[1]}>&-
wait "$a2l_pid"

# Bad input: one message, exit 1 (2 for usage).
run "$RECCE" addr2line -e "$T/no-such-binary" 0
is "$RC" 1 "a missing binary: exit 1"
like "$(cat "$ERR")" "cannot open '$T/no-such-binary': No such file" "which says so"
run "$RECCE" addr2line -e "$T/s.addrs" 0
is "$RC" 1 "a text file: exit 1"
like "$(cat "$ERR")" "is not an executable or shared object" "which says what to give"
run "$RECCE" addr2line --bogus
is "$RC" 2 "an unknown option: exit 2"

done_testing
