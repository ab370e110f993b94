#!/bin/bash
# --format svg in headless Chromium (playwright-core driving
# /usr/bin/chromium): the hot frame is drawn, a click zooms it to the full
# width, the search highlights it; the screenshot is kept as an artifact
# ($B/artifacts/format-svg.png) and must not be blank. Also --icicle and
# --title, and --flame as an alias.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/threads"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (Debian package chromium)"
need_js playwright-core
plan 12

need_profile threads
run "$RECCE" report --format svg -o "$T/flame.svg" "$THREADS"
is "$RC" 0 "report --format svg exits 0" || show_run
run "$RECCE" report --flame "$T/alias.svg" "$THREADS"
is "$(cat "$T/alias.svg")" "$(cat "$T/flame.svg")" "--flame OUT writes the same SVG"

mkdir -p "$B/artifacts"
SHOT="$B/artifacts/format-svg.png"
rm -f "$SHOT"
RUN_TIMEOUT=120 run node tests/js/svg-check.js "$T/flame.svg" early_worker_spin "$SHOT"
is "$RC" 0 "Chromium opens the SVG" || show_run
J=$(cat "$OUT")
like "$J" '"present":true' "the frame early_worker_spin is drawn"
like "$J" '"widthAfter":1180,"fullWidth":1180' "a click on it zooms it to the full width"
like "$J" '"highlighted":[1-9][0-9]*,"highlightedFill":"rgb\(230,0,230\)"' "the search highlights it"
like "$J" '"errors":\[\]' "the page's script raises no error"
# Not blank: the PNG's pixels are not all one colour.
COLOURS=$(python3 - "$SHOT" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    if kind == b'IHDR':
        w = struct.unpack('>I', data[pos + 8:pos + 12])[0]
    if kind == b'IDAT':
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
print(len(set(raw[i:i + 3] for i in range(1, len(raw) - 3, 97))))
PY
)
cmp_ok "${COLOURS:-0}" '>' 10 "the screenshot is not blank ($COLOURS colours sampled)"

run "$RECCE" report --format svg --icicle --title 'Threads <test>' -o "$T/icicle.svg" "$THREADS"
is "$RC" 0 "--icicle --title exits 0"
like "$(cat "$T/icicle.svg")" '<text id="title" [^>]*>Threads &lt;test&gt;</text>' "--title sets the title, escaped"
like "$(cat "$T/icicle.svg")" 'data-icicle="1"' "--icicle draws top-down"
ROOT_Y=$(grep -o '<g class="frame" data-name="all"[^>]*>.*' "$T/icicle.svg" | sed -n 's/.*<rect x="[^"]*" y="\([0-9]*\)".*/\1/p')
LEAF_Y=$(grep -o '<g class="frame" data-name="spin_until"[^>]*>.*' "$T/icicle.svg" | head -n 1 | sed -n 's/.*<rect x="[^"]*" y="\([0-9]*\)".*/\1/p')
cmp_ok "${ROOT_Y:-0}" '<' "${LEAF_Y:-0}" "the root is above its callees"
