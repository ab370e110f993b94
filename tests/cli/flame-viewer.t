#!/bin/bash
# The flamegraph viewer is a real JavaScript file (src/writers/
# flame-viewer.js) that the build embeds: Node parses it, it defines the
# globals the SVG tests call, and an SVG's script is that file with the
# line of settings in place of its marker, byte for byte.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
JS=src/writers/flame-viewer.js

run node --check "$JS"
is "$RC" 0 "node parses $JS" || show_run
for fn in searchFrames resetSearch zoom resetZoom; do
	ok "it defines $fn()" grep -q "^function $fn(" "$JS"
done
ok "it has the settings marker" grep -qx '/\* @CONFIG@ \*/' "$JS"
ok "it holds no ']]>', which would end the CDATA section" sh -c "! grep -q ']]>' '$JS'"

run "$RECCE" record -o "$T/p.pb.gz" -d 0.5 -- "$TARGETS/hot"
run "$RECCE" report --format svg -o "$T/f.svg" "$T/p.pb.gz"
is "$RC" 0 "report --format svg exits 0" || show_run
# The script between CDATA's markers, the settings line put back as the marker.
sed -n '/<!\[CDATA\[/,/\]\]><\/script>/p' "$T/f.svg" | sed '1d;$d' |
	sed 's|^const config = { icicle: .*};$|/* @CONFIG@ */|' >"$T/got.js"
is "$(cmp "$T/got.js" "$JS" && echo same)" "same" "the SVG carries the file, with its settings line in place"
like "$(grep -c '^const config = { icicle: false' "$T/f.svg")" '^1$' "and one settings line"

done_testing
