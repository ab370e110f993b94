#!/bin/sh
# Every mutant of tests/mutants still names a line of its file exactly
# once (the rule scripts/mutate.sh applies, leading and trailing blanks
# aside): a mutant whose line was moved or reworded would only ever be
# reported as a survivor of `make mutate`, never as the check it names.
status=0 n=0
for m in tests/mutants/*.mut; do
	n=$((n + 1))
	file=$(sed -n 's/^file //p' "$m")
	if [ ! -f "$file" ]; then
		echo "check-mutants: $m: $file is not there" >&2
		status=1
		continue
	fi
	at=$(FIND=$(sed -n 's/^find //p' "$m") perl -ne '
		s/^\s+|\s+$//g; $n++ if $_ eq $ENV{FIND}; END { print $n + 0 }' "$file")
	if [ "$at" != 1 ]; then
		echo "check-mutants: $m: its find line is in $file $at times, not once" >&2
		status=1
	fi
done
[ $status = 0 ] && echo "check-mutants: each of the $n mutants names one line of its file"
exit $status
