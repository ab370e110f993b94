#!/bin/bash
# A deleted binary (a deploy replaced it): frames still get names, or at
# worst an honest module+offset, never a crash or a wrong name.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

read -r a s <<<"$(nm -S "$TARGETS/hot" | awk '$4 == "burn_cpu" { print $1, $2 }')"
BURN_LO=$((16#$a))
BURN_HI=$((16#$a + 16#$s))

# 1. Deleted during the recording, the process keeps running.
cp "$TARGETS/hot" "$T/hot-copy"
spawn "$T/copy.out" "$T/hot-copy"
TGT=$PID
P="$T/during.pb.gz"
spawn_recce "$T/rec.out" "$T/rec.err" record -p "$TGT" -d 2 -o "$P"
REC=$PID
recording "$T/rec.err" || diag "recce never said it records"
ran_cpu "$TGT" 20 || diag "the target used no CPU while recorded"
rm "$T/hot-copy"
if wait_exit 10 "$REC"; then
	is "$WAIT_RC" 0 "binary deleted during record -p: status 0" || diag "$(cat "$T/rec.err")"
else
	fail "binary deleted during record -p: status 0" "still running after 10 s"
fi
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "burn_cpu is still named in most samples ($BURN of $TOTAL)"
kill -TERM "$TGT"

# 2. Deleted during the recording, and the process exits before it ends:
#    the binary is gone from the disk and from memory when recce stops.
cp "$TARGETS/hot" "$T/hot-copy2"
spawn "$T/copy2.out" "$T/hot-copy2" 1.5
TGT=$PID
P="$T/exited.pb.gz"
spawn_recce "$T/rec2.out" "$T/rec2.err" record -p "$TGT" -d 5 -o "$P"
REC=$PID
recording "$T/rec2.err" || diag "recce never said it records"
ran_cpu "$TGT" 20 || diag "the target used no CPU while recorded"
rm "$T/hot-copy2"
if wait_exit 10 "$REC"; then
	is "$WAIT_RC" 0 "binary deleted, then the process exited: status 0" ||
		diag "$(cat "$T/rec2.err")"
else
	fail "binary deleted, then the process exited: status 0" "still running after 10 s"
fi
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "burn_cpu is still named in most samples ($BURN of $TOTAL)"

# 3. Deleted before recce attaches: names (read through /proc) or an honest
#    hot-copy3+0xOFFSET inside burn_cpu.
cp "$TARGETS/hot" "$T/hot-copy3"
spawn "$T/copy3.out" "$T/hot-copy3"
TGT=$PID
runs_copy3()
{
	[ "$(readlink "/proc/$1/exe")" = "$T/hot-copy3" ]
}
wait_for 5 runs_copy3 "$TGT" || diag "hot-copy3 did not start"
rm "$T/hot-copy3"
P="$T/before.pb.gz"
run "$RECCE" record -p "$TGT" -d 1 -o "$P"
is "$RC" 0 "binary deleted before record -p: status 0" || show_run
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
LEAF=$(folded_top "$FOLDED" | sed 's/ [0-9]*$//' | awk -F';' '{ print $NF }')
diag "the heaviest leaf: $LEAF"
case "$LEAF" in
burn_cpu)
	pass "the heaviest leaf is burn_cpu" ;;
hot-copy3*+0x*)
	h=${LEAF##*+0x}
	[[ $h =~ ^[0-9a-f]+$ ]] || h=0
	cmp_ok $((16#$h)) '>=' "$BURN_LO" "the heaviest leaf is honestly $LEAF, inside burn_cpu"
	cmp_ok $((16#$h)) '<' "$BURN_HI" "(upper bound)" ;;
*)
	fail "the heaviest leaf is burn_cpu or hot-copy3+0xOFFSET" "it is '$LEAF'" ;;
esac
kill -TERM "$TGT"

done_testing
