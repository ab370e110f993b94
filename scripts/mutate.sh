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
# MUTATE_JOBS=N runs N mutants at a time, each in its own copy of the
# tree (the test files are written to run side by side, as in make
# check); a mutant whose tests are in tests/cli/serial.list runs after
# the others, alone, as those files do in make check.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${MUTATE_DIR:-/tmp/recce-mutate.$(id -u)}
JOBS=${MUTATE_JOBS:-1}

rm -rf "$WORK"
mkdir -p "$WORK"

# One copy of the tree per job, built once; each mutant changes one file
# in it, rebuilds (the make rules see the change), runs its tests and is
# undone.
copy_tree() { # N
	git ls-files -z | (cd "$ROOT" && xargs -0 tar cf -) |
		(mkdir -p "$WORK/$1/tree" && cd "$WORK/$1/tree" && tar xf -)
	echo "mutate: building a copy of the tree in $WORK/$1/tree"
	(cd "$WORK/$1/tree" && make -j"$(nproc)" all targets >"$WORK/$1/log" 2>&1) || {
		echo "mutate: the unmutated tree does not build (see $WORK/$1/log)" >&2
		return 1
	}
}

# Applies mutant $2 in copy $1, prints its line and appends "killed NAME"
# or "survived NAME" to the copy's results.
run_one() { # N NAME
	dir="$WORK/$1" tree="$WORK/$1/tree" log="$WORK/$1/log" name=$2
	m="$tree/tests/mutants/$name.mut"
	what=$(sed -n '1s/^# *//p' "$m")
	file=$(sed -n 's/^file //p' "$m")
	tests=$(sed -n 's/^test //p' "$m")
	cp "$tree/$file" "$dir/orig"
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
		' "$tree/$file" 2>"$dir/apply.err"; then
		echo "mutate: $name: cannot apply: $(cat "$dir/apply.err")"
		echo "survived $name" >>"$dir/results"
		return 0
	fi
	# Rebuilt a second later than the original, so that make sees it.
	touch "$tree/$file"
	result=survived
	if ! (cd "$tree" && make -j"$(nproc)" all targets >>"$log" 2>&1); then
		result="killed (does not build)"
	else
		for t in $tests; do
			case "$t" in
			*.t) (cd "$tree" && B=build prove "$t" >>"$log" 2>&1) || result="killed by $t" ;;
			# A unit test is built again: make all builds none.
			*) (cd "$tree" && make "$t" >>"$log" 2>&1 && "./$t" >>"$log" 2>&1) ||
				result="killed by $t" ;;
			esac
			[ "$result" = survived ] || break
		done
	fi
	cp "$dir/orig" "$tree/$file"
	touch "$tree/$file"
	case "$result" in
	killed*) echo "killed $name" >>"$dir/results" ;;
	*) echo "survived $name" >>"$dir/results" ;;
	esac
	echo "mutate: $name: $result: $what"
}

i=1 pids=""
while [ $i -le "$JOBS" ]; do
	copy_tree $i &
	pids="$pids $!"
	i=$((i + 1))
done
fail=0
for p in $pids; do wait "$p" || fail=1; done
[ $fail = 0 ] || exit 1

# The mutants to run (as the copies have them, whatever changes in the
# tree meanwhile), those of the serial files apart.
parallel="" serial=""
for m in "$WORK/1/tree"/tests/mutants/*.mut; do
	name=$(basename "$m" .mut)
	if [ -n "${MUTANTS:-}" ]; then
		case " $MUTANTS " in *" $name "*) ;; *) continue ;; esac
	fi
	alone=no
	for t in $(sed -n 's/^test //p' "$m"); do
		grep -qx "$(basename "$t")" "$WORK/1/tree/tests/cli/serial.list" && alone=yes
	done
	if [ $alone = yes ]; then serial="$serial $name"; else parallel="$parallel $name"; fi
done

# Mutant k goes to copy k mod JOBS; the copies run side by side.
i=1
while [ $i -le "$JOBS" ]; do
	(
		k=0
		for name in $parallel; do
			[ $((k % JOBS + 1)) = $i ] && run_one $i "$name"
			k=$((k + 1))
		done
	) &
	i=$((i + 1))
done
wait
for name in $serial; do run_one 1 "$name"; done

i=1
while [ $i -le "$JOBS" ]; do
	(cd "$WORK/$i/tree" && make -j"$(nproc)" all targets >>"$WORK/$i/log" 2>&1) || true
	i=$((i + 1))
done
cat "$WORK"/*/results >"$WORK/results" 2>/dev/null || true
total=$(wc -l <"$WORK/results")
killed=$(grep -c '^killed ' "$WORK/results" || true)
survivors=$(sed -n 's/^survived //p' "$WORK/results" | tr '\n' ' ')
echo "mutate: $killed of $total mutants killed${survivors:+; survived: $survivors}"
[ "$killed" = "$total" ]
