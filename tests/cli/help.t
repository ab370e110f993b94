#!/bin/bash
# Help: `recce help CMD`, `recce CMD --help` and `recce CMD -h` print the very
# page docs/recce-CMD.md holds, as plain text (scripts/md-text.awk: no #,
# ** or backticks left, not a word lost), so help and docs cannot drift
# apart; --version; unknown commands are usage errors.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"

run "$RECCE" --version
is "$RC" 0 "recce --version exits 0"
VERSION=$(sed -n 's/^#define RECCE_VERSION "\(.*\)"$/\1/p' src/util/version.h)
is "$(cat "$OUT")" "recce $VERSION" "it prints 'recce $VERSION' (src/util/version.h)"

# The overview: docs/recce.md, then the list of commands.
awk -f scripts/md-text.awk docs/recce.md >"$T/want"
run "$RECCE" help
is "$RC" 0 "recce help exits 0"
is "$(head -n "$(wc -l <"$T/want")" "$OUT")" "$(cat "$T/want")" "recce help starts with docs/recce.md"
cp "$OUT" "$T/help"
run "$RECCE" --help
is "$(cat "$OUT")" "$(cat "$T/help")" "recce --help prints the same"
is "$(grep -c 'recce \[--version\]' "$T/help")" 1 "one usage line, the page's"
run "$RECCE"
is "$RC" 2 "recce alone: usage error"
is "$(grep 'recce \[--version\]' "$ERR" | sed 's/^usage: *//')" \
	"$(grep 'recce \[--version\]' "$T/help" | sed 's/^ *//')" "its usage line is the page's"
for cmd in record report query view top trace capture replay symbolize addr2line events seq tasks agent files fetch certs patch help; do
	like "$(cat "$T/help")" "^ +$cmd +[a-z]" "recce help lists '$cmd'"
done
# Every listed command has its page.
LISTED=$(sed -n '/^commands:/,/^$/s/^ \{1,\}\([a-z][a-z-]*\) .*/\1/p' "$T/help")
for cmd in $LISTED; do
	ok "the listed command '$cmd' has a page docs/recce-$cmd.md" test -f "docs/recce-$cmd.md"
done

# Each page, three ways.
for page in docs/recce-*.md; do
	cmd=${page#docs/recce-}
	cmd=${cmd%.md}
	awk -f scripts/md-text.awk "$page" >"$T/want"
	run "$RECCE" help "$cmd"
	is "$RC" 0 "recce help $cmd exits 0"
	is "$(cat "$OUT")" "$(cat "$T/want")" "recce help $cmd prints $page as text"
	# Plain text: markup outside code blocks is gone...
	is "$(grep -v '^    ' "$OUT" | grep -c -e '^#' -e '`' -e '\*\*')" 0 \
		"recce help $cmd shows no #, \` or ** markup"
	# ...and every word of the page is still there, in order.
	grep -v '^```' "$page" | sed 's/^#* //; s/`//g; s/[*][*]//g' | tr -s ' \n' '\n\n' >"$T/words.md"
	tr -s ' \n' '\n\n' <"$OUT" | tr '[:upper:]' '[:lower:]' >"$T/words.out"
	tr '[:upper:]' '[:lower:]' <"$T/words.md" >"$T/words.want"
	ok "recce help $cmd keeps every word of $page" cmp -s "$T/words.want" "$T/words.out"
	run "$RECCE" "$cmd" --help
	is "$RC" 0 "recce $cmd --help exits 0"
	is "$(cat "$OUT")" "$(cat "$T/want")" "recce $cmd --help prints the same page"
	run "$RECCE" "$cmd" -h
	is "$(cat "$OUT")" "$(cat "$T/want")" "recce $cmd -h prints the same page"
done
for cmd in record report; do
	ok "docs/recce-$cmd.md exists" test -f "docs/recce-$cmd.md"
done

# A --help after -- belongs to the profiled command, not to recce.
if [ -f docs/recce-record.md ] && [ -x "$TARGETS/hot" ]; then
	run "$RECCE" record -o "$T/x.pb.gz" -- "$TARGETS/hot" 0.2 --help
	is "$RC" 0 "record -- CMD --help profiles CMD (its --help is its own)"
	ok "and writes the profile" test -s "$T/x.pb.gz"
fi

run "$RECCE" help no-such-command
is "$RC" 2 "recce help UNKNOWN: usage error"
like "$(cat "$ERR")" 'no-such-command' "the message names it"
run "$RECCE" no-such-command --help
is "$RC" 2 "recce UNKNOWN --help: usage error"
run "$RECCE" no-such-command
is "$RC" 2 "recce UNKNOWN: usage error"
like "$(cat "$ERR")" 'no-such-command' "the message names it"

done_testing
