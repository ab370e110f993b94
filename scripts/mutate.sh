#!/bin/sh
# make mutate: puts each small bug of tests/mutants/*.mut into a copy of
# the tree, one at a time, builds it, and runs the tests the mutant names;
# a mutant is killed when one of them fails. Prints one line per mutant
# and the score, and exits 1 if any survived.
#
# A mutant file:
#   # what the bug is (the first line, shown)
#   file src/DIR/FILE.c
#   find TEXT           (a whole line of FILE, exactly once, tabs aside)
#   replace TEXT        (what the line becomes)
#   test tests/cli/NAME.t | build/tests/test-NAME   (one or more)
#
# MUTANTS="a b" runs only those (by file name, without .mut).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${MUTATE_DIR:-/tmp/recce-mutate.$(id -u)}
LOG="$WORK/log"

rm -rf "$WORK"
mkdir -p "$WORK"
# One copy of the tree, built once; each mutant changes one file in it,
# rebuilds (the make rules see the change), runs its tests and is undone.
git ls-files -z | (cd "$ROOT" && xargs -0 tar cf -) | (cd "$WORK" && mkdir tree && cd tree && tar xf -)
TREE="$WORK/tree"
echo "mutate: building a copy of the tree in $TREE"
(cd "$TREE" && make -j"$(nproc)" all targets >"$LOG" 2>&1) || {
	echo "mutate: the unmutated tree does not build (see $LOG)" >&2
	exit 1
}

killed=0 total=0 survivors=""
for m in tests/mutants/*.mut; do
	name=$(basename "$m" .mut)
	if [ -n "${MUTANTS:-}" ]; then
		case " $MUTANTS " in *" $name "*) ;; *) continue ;; esac
	fi
	total=$((total + 1))
	what=$(sed -n '1s/^# *//p' "$m")
	file=$(sed -n 's/^file //p' "$m")
	tests=$(sed -n 's/^test //p' "$m")
	cp "$TREE/$file" "$WORK/orig"
	if ! FIND=$(sed -n 's/^find //p' "$m") REPLACE=$(sed -n 's/^replace //p' "$m") \
		perl -e '
			my ($path) = @ARGV;
			open(my $f, "<", $path) or die; my @l = <$f>; close($f);
			my ($find, $repl) = ($ENV{FIND}, $ENV{REPLACE});
			my @at = grep { my $s = $l[$_]; $s =~ s/^\s+|\s+$//g; $s eq $find } 0 .. $#l;
			die "matches " . scalar(@at) . " lines, not 1\n" if @at != 1;
			my ($indent) = $l[$at[0]] =~ /^(\s*)/;
			$l[$at[0]] = "$indent$repl\n";
			open($f, ">", $path) or die; print $f @l; close($f);
		' "$TREE/$file" 2>"$WORK/apply.err"; then
		echo "mutate: $name: cannot apply: $(cat "$WORK/apply.err")"
		survivors="$survivors $name"
		continue
	fi
	# Rebuilt a second later than the original, so that make sees it.
	touch "$TREE/$file"
	result=survived
	if ! (cd "$TREE" && make -j"$(nproc)" all targets >>"$LOG" 2>&1); then
		result="killed (does not build)"
	else
		for t in $tests; do
			case "$t" in
			*.t) (cd "$TREE" && B=build prove "$t" >>"$LOG" 2>&1) || result="killed by $t" ;;
			# A unit test is built again: make all builds none.
			*) (cd "$TREE" && make "$t" >>"$LOG" 2>&1 && "./$t" >>"$LOG" 2>&1) ||
				result="killed by $t" ;;
			esac
			[ "$result" = survived ] || break
		done
	fi
	cp "$WORK/orig" "$TREE/$file"
	touch "$TREE/$file"
	case "$result" in
	killed*) killed=$((killed + 1)) ;;
	*) survivors="$survivors $name" ;;
	esac
	echo "mutate: $name: $result: $what"
done
(cd "$TREE" && make -j"$(nproc)" all targets >>"$LOG" 2>&1) || true
echo "mutate: $killed of $total mutants killed${survivors:+; survived:$survivors}"
[ "$killed" = "$total" ]
