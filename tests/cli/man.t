#!/bin/bash
# Man pages: `make install` puts one page per docs/recce*.md into
# share/man/man1, made by scripts/md-man.awk. Each renders without a groff
# warning, has the NAME line whatis and apropos read, a SYNOPSIS, and
# every option of its subcommand's table; `man recce-CMD` finds it.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
cd "$ROOT" || exit 1

run make -s install B="$B" DESTDIR="$T/root" PREFIX=/usr
is "$RC" 0 "make install exits 0" || show_run
MAN="$T/root/usr/share/man"
for page in docs/recce*.md; do
	name=$(basename "$page" .md)
	cmd=${name#recce}
	cmd=${cmd#-}
	file="$MAN/man1/$name.1"
	ok "$name.1 is installed" test -s "$file" || continue
	run groff -man -Tutf8 -ww -z "$file"
	is "$(cat "$ERR")" "" "$name.1: groff has no warning"
	run lexgrog "$file"
	like "$(cat "$OUT")" "\"$name - [a-z]" "$name.1: whatis reads its NAME line"
	MANWIDTH=100 MANPAGER=cat run man -M "$MAN" "$name"
	is "$RC" 0 "man -M ... $name exits 0"
	cp "$OUT" "$T/$name.txt"
	like "$(cat "$T/$name.txt")" "^SYNOPSIS" "$name: has a SYNOPSIS"
	unlike "$(cat "$T/$name.txt")" '`|\*\*' "$name: no Markdown markup is left"
	[ -n "$cmd" ] || continue
	# Every option of the subcommand's table is on its page.
	missing=""
	while IFS=$'\t' read -r names _; do
		for o in $names; do
			o=${o%,}
			case "$o" in -*) grep -qF -- "$o" "$T/$name.txt" || missing="$missing $o" ;; esac
		done
	done < <("$RECCE" "$cmd" --list-options 2>/dev/null)
	is "$missing" "" "$name: every option of 'recce $cmd' is on the page"
done

done_testing
