# Shared by tests/cli/format-*.t (and the page's tests, page.t and
# clickhouse.t): records the profiles the format tests convert, once per
# test file, finds the npm test tools, and reads what the page's check in
# Chromium saw.
#
#   need_profile hot   -> $HOT, a --timeline profile of tests/targets/hot
#   need_profile threads -> $THREADS, of tests/targets/threads
#   (both set $SAMPLED_THREADS, the threads record says it sampled)
#   need_js            -> installs tests/js (npm ci, offline when present)
#   page_check WHAT URL SHOT [FROM TO] -> $F, what the page in Chromium
#                        did (tests/js/page-check.js), a line a fact

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

# page_check WHAT URL SHOT [FROM TO [CGROUP]]: tests/js/page-check.js on the page
# at URL (WHAT names it in the check that Chromium opened it), its facts
# in $F and $T/facts, one a line, for like().
page_check()
{
	local what=$1
	shift
	RUN_TIMEOUT=120 run node tests/js/page-check.js "$@"
	is "$RC" 0 "Chromium opens $what" || show_run
	facts "$OUT" >"$T/facts"
	F=$(cat "$T/facts")
}

# facts JSON: one line per fact tests/js/page-check.js reported.
facts()
{
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("error:", d.get("error", "none"))
print("errors:", len(d.get("errors", [])))
print("title:", d.get("title"))
print("asked:", " ".join(d.get("asked", [])))
print("comms:", " ".join(d.get("comms", [])))
print("chart:", d.get("chartShown"))
print("gaps:", " ".join("%d-%d" % (a, b) for a, b in d.get("gaps", [])) or "none")
print("whole:", " ".join(d.get("whole", [])))
print("range:", " ".join(d.get("range", [])))
print("top:", d.get("top", "").replace("\n", " | "))
print("matched:", round(d.get("matched", 0)))
print("highlighted:", d.get("highlighted", 0))
print("zoomed:", d.get("widthAfter", 0) >= 0.97 * d.get("fullWidth", 1))
dl = d.get("deltas", {})
print("grew:", " ".join(sorted(k for k, v in dl.items() if v > 0)))
print("shrank:", " ".join(sorted(k for k, v in dl.items() if v < 0)))
print("diff status:", d.get("diffStatus", ""))
print("compare after:", d.get("deltasAfter", "none"))
print("compare button:", d.get("compareShown"))
print("bottom-up:", " ".join(d.get("bottomUp", [])))
print("callees:", " ".join(d.get("callees", [])))
print("callers:", " ".join(d.get("callers", [])))
print("callers title:", d.get("callersTitle", ""))
print("focus label:", d.get("focusLabel", ""))
print("callers hidden after:", d.get("callersHidden"))
print("flame again:", " ".join(d.get("flameAgain", [])))
print("side by side:", d.get("sideBySide"))
print("comm options:", " ".join(d.get("commOptions", [])))
print("comm status:", d.get("commStatus", ""))
print("comm whole:", " ".join(d.get("commWhole", [])))
print("by host:", " ".join(d.get("byHost", [])))
print("hosts:", " ".join(d.get("hosts", [])))
print("host status:", d.get("hostStatus", ""))
print("host whole:", " ".join(d.get("hostWhole", [])))
print("cgroups:", " | ".join(d.get("cgroups", [])))
print("cgroup status:", d.get("cgroupStatus", ""))
print("cgroup whole:", " ".join(d.get("cgroupWhole", [])))
PY
}
