#!/bin/bash
# Options and their pages cannot drift apart: every option in a
# subcommand's table (`recce CMD --list-options`, which the bash
# completion reads too) has a bullet in the Options section of
# docs/recce-CMD.md, and every option a bullet there names is in the
# table. Then the parsing itself as users of perf and git expect it:
# long options abbreviated, --opt=value, a missing value and an unknown
# option as usage errors (exit 2).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"

# The option names of a bullet: backticked -x and --long before its "`:".
doc_names()
{
	awk '/^## /{sec=$0} sec ~ /^## Options/ && /^- `/' "docs/recce-$1.md" |
		sed 's/`:.*//' | grep -o '`--\?[a-zA-Z][a-z-]*' | tr -d '`' | sort -u
}

table_names()
{
	"$RECCE" "$1" --list-options | cut -f1 | grep -oE '(^|, )--?[a-zA-Z][a-z-]*' |
		sed 's/^, //' | sort -u
}

for cmd in record report query view top trace capture replay symbolize addr2line events seq tasks agent fetch certs patch; do
	run "$RECCE" "$cmd" --list-options
	is "$RC" 0 "recce $cmd --list-options exits 0"
	ok "it lists options, each with its help" test "$(grep -c "	." "$OUT")" -ge 1
	table=$(table_names "$cmd")
	docs=$(doc_names "$cmd")
	is "$(comm -23 <(echo "$table") <(echo "$docs") | tr '\n' ' ')" "" \
		"every option of recce $cmd is documented in docs/recce-$cmd.md"
	is "$(comm -13 <(echo "$table") <(echo "$docs") | tr '\n' ' ')" "" \
		"every option docs/recce-$cmd.md documents is in recce $cmd's table"
done

# The -g of perf: the same as --call-graph fp.
ok "record's table has -g" grep -q '^-g	' <("$RECCE" record --list-options)

# Parsing as getopt_long users expect.
run "$RECCE" trace --bogus x -p 1
is "$RC" 2 "an unknown long option is a usage error (exit 2)"
like "$(cat "$ERR")" "unknown option '--bogus'" "which names it"
run "$RECCE" top -b -Z
is "$RC" 2 "an unknown short option is a usage error"
like "$(cat "$ERR")" "unknown option '-Z'" "which names it"
run "$RECCE" record -p
is "$RC" 2 "a missing value is a usage error"
like "$(cat "$ERR")" "option '-p' needs a value" "which names the option"
run "$RECCE" trace --max-probes=0 -p 1 foo
is "$RC" 2 "--opt=value is checked like --opt value"
like "$(cat "$ERR")" "--max-probes wants 1 to 100000, not '0'" "with the option's own message"
run "$RECCE" trace --max-pro 0 -p 1 foo
like "$(cat "$ERR")" "--max-probes wants" "a long option may be abbreviated"

# The bash completion reads the same tables.
complete_words()
{
	bash -c '. contrib/recce.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _recce; echo "${COMPREPLY[*]}"' _ "$@"
}
is "$(complete_words "$RECCE" trace --ret)" "--return" "bash completes 'recce trace --ret' to --return"
is "$(complete_words "$RECCE" record --call)" "--call-graph" "and 'recce record --call' to --call-graph"
like "$(complete_words "$RECCE" tr)" "^(trace|trace .*)$" "and a subcommand's name"

done_testing
