# Shared by tests/cli/format-*.t: records the profiles the format tests
# convert, once per test file, and finds the npm test tools.
#
#   need_profile hot   -> $HOT, a --timeline profile of tests/targets/hot
#   need_profile threads -> $THREADS, of tests/targets/threads
#   (both set $SAMPLED_THREADS, the threads record says it sampled)
#   need_js            -> installs tests/js (npm ci, offline when present)

need_profile()
{
	case "$1" in
	hot)
		HOT="$T/hot.pb.gz"
		run "$RECCE" record --timeline -o "$HOT" -- "$TARGETS/hot" 1
		;;
	threads)
		THREADS="$T/threads.pb.gz"
		run "$RECCE" record --timeline -o "$THREADS" -- "$TARGETS/threads"
		;;
	esac
	[ "$RC" = 0 ] || { show_run; echo "Bail out! cannot record $1"; exit 1; }
	# record's own count of the threads it sampled, from its summary.
	SAMPLED_THREADS=$(sed -n 's/.* from \([0-9]*\) threads\{0,1\},.*/\1/p' "$ERR" | tail -n 1)
}

# The npm packages of tests/js (speedscope, playwright-core), installed from
# its lockfile when missing; skips the file when npm cannot get them.
need_js()
{
	command -v node >/dev/null 2>&1 || skip_all "node is not installed"
	if [ ! -d "$ROOT/tests/js/node_modules/$1" ]; then
		npm ci --prefix "$ROOT/tests/js" --no-audit --no-fund >"$T/npm.log" 2>&1 ||
			skip_all "npm ci --prefix tests/js failed: $(tail -n 1 "$T/npm.log")"
	fi
}
