#!/bin/bash
# Attacks on root's symbol cache by a second user the test makes: she runs
# a copy of root's program with its names rewritten (same build-id, same
# sections, same sizes, other bytes), root records her process first and
# his own program next; his report must name his program's functions, not
# hers. And root's cache is his alone: directories 0700, tables 0600, so
# she reads no names of his private binaries.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"
make_user
cp "$TARGETS/hot" "$T/bin/hot"
export RECCE_CACHE_DIR="$T/cache"

# Her copy: every burn_cpu becomes EVIL_CPU, byte for byte.
runuser -u "$U" -- sh -c "sed 's/burn_cpu/EVIL_CPU/g' '$T/bin/hot' > '$T/home/hot' && chmod 0755 '$T/home/hot'"
is "$(readelf -n "$T/home/hot" | sed -n 's/.*Build ID: //p')" "$(readelf -n "$T/bin/hot" | sed -n 's/.*Build ID: //p')" \
	"her binary claims the build-id of root's"
is "$(stat -c %s "$T/home/hot")" "$(stat -c %s "$T/bin/hot")" "and has its size"

spawn "$T/her.out" runuser -u "$U" -- "$T/home/hot" 60
RUNUSER=$PID
wait_for 10 pgrep -P "$RUNUSER" -x hot > /dev/null || diag "her program did not start"
HERS=$(pgrep -P "$RUNUSER" -x hot)
run "$RECCE" record -p "$HERS" -d 1 -o "$T/hers.pb.gz"
is "$RC" 0 "root records her process" || show_run
run "$RECCE" report -n 3 "$T/hers.pb.gz"
like "$(cat "$OUT")" 'EVIL_CPU' "her profile shows her names"

spawn "$T/his.out" "$T/bin/hot" 60
HIS=$PID
run "$RECCE" record -p "$HIS" -d 1 -o "$T/his.pb.gz"
is "$RC" 0 "root records his own program next" || show_run
run "$RECCE" report -n 3 "$T/his.pb.gz"
like "$(cat "$OUT")" 'burn_cpu' "his profile names his function"
unlike "$(cat "$OUT")" 'EVIL_CPU' "never one of hers, from the table her file left in the cache"

tables=$(find "$T/cache" -name '*.sym' | wc -l)
ok "the cache kept tables ($tables)" test "$tables" -gt 0
is "$(find "$T/cache" -type d ! -perm 0700 | wc -l)" 0 "every directory of root's cache is 0700"
is "$(find "$T/cache" -type f ! -perm 0600 | wc -l)" 0 "every table is 0600"
chmod 0755 "$T/cache" # even with the top opened by mistake
one=$(find "$T/cache" -name '*.sym' | head -n 1)
run runuser -u "$U" -- cat "$one"
isnt "$RC" 0 "she cannot read a table of root's"

done_testing
