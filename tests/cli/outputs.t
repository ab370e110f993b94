#!/bin/bash
# Outputs that another user cannot steer: root's recce writing into a
# sticky world-writable directory (as /tmp) where an ordinary user planted
# a symbolic link, a file, or a temporary at the output's name. The link
# is refused and what it points at stays untouched; a planted file is
# replaced by one that root owns, with root's umask. For record, report,
# trace -o and trace --wrap.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls"
[ "$(id -u)" = 0 ] || skip_all "needs root, to make an ordinary user plant files"
id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 ||
	skip_all "needs the user nobody and setpriv"

chmod 711 "$T" # nobody may pass through to the sticky directory
DIR=$T/sticky
mkdir -m 1777 "$DIR"
VICTIM=$T/victim
echo "root's own data" >"$VICTIM"
chmod 600 "$VICTIM"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# plant NAME: nobody's symbolic link DIR/NAME -> the victim.
plant() { as_nobody ln -sf "$VICTIM" "$DIR/$1"; }
untouched() { is "$(cat "$VICTIM")" "root's own data" "$1: the link's target is untouched"; }

plant p.pb.gz
run "$RECCE" record -o "$DIR/p.pb.gz" -- "$TARGETS/hot" 0.3
is "$RC" 1 "record onto another user's link exits 1" || show_run
like "$(cat "$ERR")" "symbolic link another user owns" "saying why"
untouched record

run "$RECCE" record -o "$T/good.pb.gz" -- "$TARGETS/hot" 0.3
plant folded.txt
run "$RECCE" report --format folded -o "$DIR/folded.txt" "$T/good.pb.gz"
is "$RC" 1 "report -o onto another user's link exits 1" || show_run
untouched report

# It calls for ever once it has SIGUSR1 (run_go sends it where the calls
# are needed: --wrap meets the link only when the first file is full).
spawn_ready "$T/calls.out" "$TARGETS/calls" 5 go 0
CALLS=$PID
plant t.trc
run "$RECCE" trace -p "$CALLS" add_pair --count 2 -o "$DIR/t.trc"
is "$RC" 1 "trace -o onto another user's link exits 1" || show_run
untouched "trace -o"
plant w.trc.1
run_go "$CALLS" trace -p "$CALLS" add_pair --count 0 --time 30 -o "$DIR/w.trc" --wrap 4K,3
is "$RC" 1 "trace --wrap meeting another user's link exits 1" || show_run
untouched "trace --wrap"

# A link the caller owns is followed, as the user asked.
ln -s "$T/mine.pb.gz" "$DIR/mine-link.pb.gz"
run "$RECCE" record -o "$DIR/mine-link.pb.gz" -- "$TARGETS/hot" 0.3
is "$RC" 0 "a link root owns is written through" || show_run
ok "into the file it points at" test -s "$T/mine.pb.gz"

# A file planted at the name, world-writable: replaced by root's own.
as_nobody sh -c "umask 0; echo planted > '$DIR/q.pb.gz'; echo planted > '$DIR/q.trc'"
run "$RECCE" record -o "$DIR/q.pb.gz" -- "$TARGETS/hot" 0.3
is "$RC" 0 "record over a file another user planted exits 0" || show_run
is "$(stat -c '%U %a' "$DIR/q.pb.gz")" "root $(printf '%o' $((0666 & ~0$(umask))))" \
	"the profile is root's, with root's umask, not the planted file's"
run "$RECCE" trace -p "$CALLS" add_pair --count 2 -o "$DIR/q.trc"
is "$RC" 0 "trace -o over a planted file exits 0" || show_run
is "$(stat -c '%U' "$DIR/q.trc")" root "the trace file is root's"
is "$(ls "$DIR" | grep -c '\.[a-z0-9]\{6\}$')" 0 "no temporary file is left beside the outputs"

done_testing
