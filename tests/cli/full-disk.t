#!/bin/bash
# A full disk loses nothing and says so: a profile that cannot be written
# where asked is kept in a private directory elsewhere (and the message
# says where, exit 1); report's outputs onto a full disk say "No space
# left on device", not an I/O error. The disk is a 64 KiB tmpfs the test
# fills. (trace -o onto a full disk: trace-errors.t.)
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"
[ "$(id -u)" = 0 ] || skip_all "needs root to mount a small tmpfs"
mkdir "$T/full" && mount -t tmpfs -o size=64k tmpfs "$T/full" ||
	skip_all "cannot mount a tmpfs"
unmount_at_exit "$T/full"
dd if=/dev/zero of="$T/full/fill" bs=4k count=64 2>/dev/null
is "$(df --output=avail "$T/full" | tail -1 | tr -d ' ')" 0 "the disk is full"
mkdir "$T/tmp"

# record: the check before it starts passes (an empty file still fits), the
# profile does not; it lands under $TMPDIR instead.
TMPDIR=$T/tmp run "$RECCE" record -o "$T/full/p.pb.gz" -- "$TARGETS/hot" 0.3
is "$RC" 1 "record whose disk is full at the end exits 1" || show_run
like "$(cat "$ERR")" "cannot write '.*/full/p\.pb\.gz': No space left on device; the profile is kept in $T/tmp/recce-[A-Za-z0-9]{6}/p\.pb\.gz instead" \
	"saying why and where the profile is"
KEPT=$(sed -n 's/.*kept in \(.*\) instead$/\1/p' "$ERR")
like "$(cat "$ERR")" "wrote $KEPT \\(" "the summary names where it was written"
is "$(stat -c %a "$(dirname "$KEPT")")" 700 "in a directory only its user can enter"
run "$RECCE" report -n 5 "$KEPT"
is "$RC" 0 "the kept profile reads" || show_run
like "$(cat "$OUT")" 'burn_cpu' "with the target's functions" || show_run

# report: each writer's failure gives the reason.
for out in "--flame $T/full/f.svg" "--format pprof -o $T/full/r.pb.gz" \
	"--format callgrind -o $T/full/r.cg" "--folded -o $T/full/r.folded"; do
	# shellcheck disable=SC2086
	run "$RECCE" report $out "$KEPT"
	is "$RC" 1 "report $out onto a full disk exits 1"
	like "$(cat "$ERR")" "No space left on device" "saying the disk is full" || show_run
done
is "$(ls "$T/full")" fill "no partial output or temporary is left on the full disk"

done_testing
