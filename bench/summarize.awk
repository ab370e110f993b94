# summarize.awk: turns the raw measurements of bench/run.sh (one line per
# run, tab-separated key=value fields) into bench/results/latest.md (on
# standard output) and latest.json (the file named by -v json=PATH): per
# figure the median and the min-max spread over the repetitions, the
# ratios against the anchors (perf record, addr2line), and a PASS or MISS
# per budget, with a plain sentence where recce misses.
#
#     awk -f bench/summarize.awk -v json=latest.json raw.txt > latest.md
#
# Slowdowns are paired: each run under a profiler is compared with the
# run of the workload alone made just before it, and the median is taken
# over those pairs. A budget is judged on the medians; the "noise" of a
# case is how far apart the runs of the workload alone were (max - min, in
# percent of their median), which says how small a difference this machine
# could see that day.

BEGIN { FS = "\t" }

{
	delete rec
	for (i = 1; i <= NF; i++) {
		eq = index($i, "=")
		if (eq)
			rec[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	kind = rec["kind"]
	nlines++
	rawline[nlines] = $0
	if (kind == "machine" || kind == "end" || kind == "symcheck") {
		for (k in rec)
			M[k] = rec[k]
		next
	}
	if (rec["status"] != "ok" && kind != "sym") {
		failed++
		failures = failures (failures == "" ? "" : ", ") rec["case"] " " rec["tool"] " rep " rec["rep"]
		next
	}
	if (kind == "run" || kind == "attach" || kind == "top" || kind == "topslow" || kind == "trace") {
		c = rec["case"]
		if (!((c, "seen") in R)) {
			R[c, "seen"] = 1
			if (kind == "run")
				runcase[++nrun] = c
			else if (kind == "attach")
				attcase[++natt] = c
			else if (kind == "top")
				topcase[++ntop] = c
			R[c, "hz"] = rec["hz"]
			R[c, "cg"] = rec["cg"]
		}
		R[c, rec["tool"]] = 1
		r = rec["rep"] + 0
		if (r > maxrep)
			maxrep = r
		for (k in rec)
			R[c, rec["tool"], r, k] = rec[k]
	} else if (kind == "ev") {
		keep_by_tool(EV, rec)
	} else if (kind == "off") {
		keep_by_tool(OFF, rec)
	} else if (kind == "alloc") {
		keep_by_tool(AL, rec)
	} else if (kind == "patch") {
		keep_by_tool(PA, rec)
	} else if (kind == "cont") {
		keep_by_tool(CO, rec)
	} else if (kind == "bins") {
		keep_by_tool(BI, rec)
	} else if (kind == "agent") {
		keep_by_tool(AG, rec)
	} else if (kind == "uvtasks") {
		keep_by_tool(UV, rec)
	} else if (kind == "fast") {
		keep_by_tool(FA, rec)
	} else if (kind == "sym") {
		keep_by_tool(S, rec)
	} else if (kind == "pytrace") {
		keep_by_tool(PT, rec)
	} else if (kind == "persample") {
		keep_by_tool(PS, rec)
	} else if (kind == "pydump") {
		keep_by_tool(PD, rec)
	} else if (kind == "pybpf") {
		if (rec["runs"] > 0)
			rec["us_per_run"] = rec["run_ns"] / rec["runs"] / 1000
		keep_by_tool(PB, rec)
	}
}

# Keeps a run's fields in A by (tool, rep, field), and A[tool] = 1.
function keep_by_tool(A, rec,    r, k) {
	r = rec["rep"] + 0
	if (r > maxrep)
		maxrep = r
	A[rec["tool"]] = 1
	for (k in rec)
		A[rec["tool"], r, k] = rec[k]
}

# ---------------------------------------------------------------------------
# Statistics over the global array V[1..n].

function sortv(n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = V[i]
		for (j = i - 1; j >= 1 && V[j] > t; j--)
			V[j + 1] = V[j]
		V[j + 1] = t
	}
}

function stats(n) {
	if (n == 0) {
		MED = MIN = MAX = ""
		return 0
	}
	sortv(n)
	MED = n % 2 ? V[(n + 1) / 2] : (V[n / 2] + V[n / 2 + 1]) / 2
	MIN = V[1]
	MAX = V[n]
	NV = n
	return n
}

# V = field f of case c and tool t, one value a repetition.
function get(c, t, f,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((c, t, r, f) in R && R[c, t, r, f] != "")
			V[++n] = R[c, t, r, f] + 0
	return stats(n)
}

# V = percent change of field f of tool t over tool base, paired by rep.
function pct(c, t, base, f,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((c, t, r, f) in R && (c, base, r, f) in R && R[c, base, r, f] > 0)
			V[++n] = 100 * (R[c, t, r, f] / R[c, base, r, f] - 1)
	return stats(n)
}

# V = 1000 * a / b (a per 1,000 of b), or a / b with scale 1.
function per(c, t, a, b, scale,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((c, t, r, a) in R && R[c, t, r, b] > 0)
			V[++n] = scale * R[c, t, r, a] / R[c, t, r, b]
	return stats(n)
}

# V = the sum of fields a and b.
function sum2(c, t, a, b,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((c, t, r, a) in R && (c, t, r, b) in R)
			V[++n] = R[c, t, r, a] + R[c, t, r, b]
	return stats(n)
}

# V = addresses per second (wall) of symbolizer t, or per CPU second.
function rate(t, f,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((t, r, f) in S && S[t, r, f] > 0)
			V[++n] = S[t, r, "addresses"] / S[t, r, f]
	return stats(n)
}

# The noise of case c: spread of the workload-alone runs, in percent.
function noise(c, f) {
	if (!get(c, "none", f) || MED == 0)
		return ""
	return 100 * (MAX - MIN) / MED
}

# ---------------------------------------------------------------------------
# Formatting.

# "median (min..max)" with printf format f, from the last stats().
function spread(f) {
	if (MED == "")
		return "n/a"
	if (NV == 1)
		return sprintf(f, MED)
	return sprintf(f, MED) " (" sprintf(f, MIN) ".." sprintf(f, MAX) ")"
}

function jstats() {
	if (MED == "")
		return "null"
	return sprintf("{\"median\": %s, \"min\": %s, \"max\": %s, \"n\": %d}", jn(MED), jn(MIN), jn(MAX), NV)
}

function abs(x) {
	return x < 0 ? -x : x
}

function jn(x) {
	if (x == "")
		return "null"
	return sprintf("%.6g", x)
}

function js(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	gsub(/\t/, " ", s)
	return "\"" s "\""
}

function bytes(b) {
	if (b == "")
		return "n/a"
	if (b < 1024)
		return sprintf("%d B", b)
	if (b < 1048576)
		return sprintf("%.1f KiB", b / 1024)
	return sprintf("%.1f MiB", b / 1048576)
}

# A readable name for a case: "cpu2-999-dwarf" -> "cpu2, 999 Hz, dwarf".
function label(c,    p, n) {
	n = split(c, p, "-")
	if (p[1] == "tenk")
		return "cpu2 (10k samples), " p[2] " Hz, " p[3]
	if (n == 3)
		return p[1] ", " p[2] " Hz, " p[3]
	if (c == "split")
		return "split, " R[c, "hz"] " Hz, " R[c, "cg"]
	return c
}

function budget(name, bud, measured, ok, sentence) {
	nb++
	B_name[nb] = name
	B_budget[nb] = bud
	B_measured[nb] = measured
	B_verdict[nb] = ok ? "PASS" : "MISS"
	B_sentence[nb] = ok ? "" : sentence
	B_caveat[nb] = ""
}

# A note on the last budget: its verdict is within this machine's noise.
function caveat(s) {
	B_caveat[nb] = s
}

function jappend(section, s) {
	J[section] = J[section] (J[section] == "" ? "" : ",\n    ") s
}

# ---------------------------------------------------------------------------

END {
	print "# recce benchmark: recce against perf record, addr2line, a bare uprobe and top"
	print ""
	printf "Made by `make bench` (bench/run.sh, %d repetitions of every case, tools interleaved", maxrep
	print " none, perf, recce, none, perf, recce ...) on " M["date"] "."
	print ""
	print "| machine | |"
	print "|---|---|"
	print "| CPU | " M["cpu"] " |"
	print "| cores | " M["cores"] " |"
	print "| kernel | " M["kernel"] " |"
	print "| perf | " M["perf"] " |"
	print "| recce | " M["recce"] " (commit " M["commit"] (M["tree"] == "clean" ? "" : ", with uncommitted changes in the tree") ") |"
	print "| load average at start / end | " M["loadavg_start"] " / " M["loadavg_end"] " |"
	print "| bench duration | " M["seconds"] " s |"
	print ""
	print "Each figure is the median over the repetitions, with the smallest and the largest"
	print "value in parentheses. The machine is shared with other work, so look at the spreads"
	print "before reading much into a small difference."
	if (failed)
		print "\n**" failed " runs failed and are left out:** " failures "."
	print ""

	# The sampling cases' figures, where any ran (a run of other groups
	# alone has none).
	if (nrun) {
		figure_slowdown()
		figure_cost()
		figure_size()
		figure_flame()
	}
	figure_accuracy()
	figure_symbolize()
	figure_memory()
	figure_top()
	figure_trace()
	figure_events()
	figure_offcpu()
	figure_alloc()
	figure_patch()
	figure_continuous()
	figure_binaries()
	figure_agent()
	figure_libuv()
	figure_fast()
	figure_python()
	figure_persample()
	print_budgets()
	write_json()
}

# 1. Target slowdown.
function figure_slowdown(    i, c, w, base_w, base_c, nw, nc) {
	print "## 1. Target slowdown"
	print ""
	print "The workload's own wall time and CPU time (getrusage of the whole process, every"
	print "thread), alone and launched by `perf record -e cpu-clock -F HZ` (`-g` or"
	print "`--call-graph dwarf,8192`) or by `recce record -F HZ` (`--call-graph fp` or"
	print "`dwarf,8192`). A change is the run under the profiler against the run alone just"
	print "before it. CPU time is what sampling costs inside the target (interrupts, stack"
	print "walks and stack copies happen in its context); wall time also carries the"
	print "profiler's own CPU competing for this machine's cores and other users' load."
	print "The budgets are judged on CPU time. Noise: spread of the runs alone."
	print ""
	print "| case | alone: wall, CPU | perf: wall | perf: CPU | recce: wall | recce: CPU | recce vs perf: CPU | noise: wall, CPU |"
	print "|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nrun; i++) {
		c = runcase[i]
		if (!((c, "none") in R))
			continue
		get(c, "none", "wall_s"); base_w = MED
		get(c, "none", "cpu_s"); base_c = MED
		nw = noise(c, "wall_s")
		nc = noise(c, "cpu_s")
		line = "| " label(c) " | " sprintf("%.2f s, %.2f s", base_w, base_c)
		js_ = "{\"case\": " js(c) ", \"hz\": " R[c, "hz"] ", \"call_graph\": " js(R[c, "cg"]) \
			", \"alone_wall_s\": " jn(base_w) ", \"alone_cpu_s\": " jn(base_c) \
			", \"noise_wall_pct\": " jn(nw) ", \"noise_cpu_pct\": " jn(nc)
		for (t = 1; t <= 2; t++) {
			tool = t == 1 ? "perf" : "recce"
			pct(c, tool, "none", "wall_s"); line = line " | " spread("%+.2f%%")
			js_ = js_ ", \"" tool "_wall_pct\": " jstats()
			pct(c, tool, "none", "cpu_s"); line = line " | " spread("%+.2f%%")
			js_ = js_ ", \"" tool "_cpu_pct\": " jstats()
			SLOW[c, tool] = MED
		}
		pct(c, "recce", "perf", "cpu_s"); line = line " | " spread("%+.2f%%")
		js_ = js_ ", \"recce_vs_perf_cpu_pct\": " jstats()
		pct(c, "recce", "perf", "wall_s")
		js_ = js_ ", \"recce_vs_perf_wall_pct\": " jstats() "}"
		line = line " | " sprintf("%.1f%%, %.1f%%", nw, nc) " |"
		print line
		jappend("slowdown", js_)
		NOISE[c] = nc

		if (R[c, "hz"] == 99)
			budget("target slowdown at 99 Hz, " R[c, "cg"] " (" label(c) ")", "under 0.5% (CPU time)",
				sprintf("%+.2f%% (perf %+.2f%%; noise %.1f%%)", SLOW[c, "recce"], SLOW[c, "perf"], nc),
				SLOW[c, "recce"] < 0.5,
				sprintf("recce slowed %s by %+.2f%% of CPU time at 99 Hz, above the 0.5%% budget%s.",
					label(c), SLOW[c, "recce"],
					nc >= 0.5 ? sprintf(" (but the runs alone varied by %.1f%%, more than the budget)", nc) : ""))
		if (R[c, "hz"] == 99 && nc >= 0.5)
			caveat(sprintf("%s: the runs of the workload alone varied by %.1f%% of CPU time, " \
				"more than the 0.5%% budget, so this verdict is within the noise of this machine; " \
				"a quiet machine and more repetitions (BENCH_REPS) are needed to resolve it.", label(c), nc))
		if (R[c, "hz"] == 999 && R[c, "cg"] == "fp" && c ~ /^cpu2/)
			budget("target slowdown at 999 Hz, fp (" label(c) ")", "no worse than perf",
				sprintf("recce %+.2f%%, perf %+.2f%% (noise %.1f%%)", SLOW[c, "recce"], SLOW[c, "perf"], nc),
				SLOW[c, "recce"] <= SLOW[c, "perf"],
				sprintf("recce slowed %s by %+.2f%% of CPU time, perf by %+.2f%%%s.", label(c),
					SLOW[c, "recce"], SLOW[c, "perf"],
					SLOW[c, "recce"] - SLOW[c, "perf"] < nc ? sprintf("; the difference is within the %.1f%% noise", nc) : ""))
		if (R[c, "hz"] == 999 && R[c, "cg"] == "fp" && c ~ /^cpu2/ && abs(SLOW[c, "recce"] - SLOW[c, "perf"]) < nc)
			caveat(sprintf("%s: recce and perf differ by %.2f points, less than the %.1f%% the runs alone " \
				"varied by: within the noise of this machine.", label(c), abs(SLOW[c, "recce"] - SLOW[c, "perf"]), nc))
	}
	print ""
}

# 2. Profiler cost.
function figure_cost(    i, c, pm, rm, ps, rs, line, ok, worst, misses, n, nok) {
	print "## 2. Profiler cost"
	print ""
	print "CPU seconds of the whole profiler process per 1,000 samples: its wait4 user + system"
	print "time (children included) minus the workload's own CPU time. perf's includes writing"
	print "perf.data and its build-id pass at the end; recce's includes symbolizing every"
	print "stack and writing the profile at the end. Samples as each tool reports them."
	print ""
	print "| case | perf: samples | perf: CPU s / 1k samples | recce: samples | recce: CPU s / 1k samples | recce / perf | budget |"
	print "|---|---|---|---|---|---|---|"
	for (i = 1; i <= nrun; i++) {
		c = runcase[i]
		if (!((c, "perf") in R) || !((c, "recce") in R))
			continue
		get(c, "perf", "samples"); ps = MED
		get(c, "recce", "samples"); rs = MED
		per(c, "perf", "prof_cpu_s", "samples", 1000); pm = MED; pj = jstats(); line = spread("%.3f")
		per(c, "recce", "prof_cpu_s", "samples", 1000); rm = MED; rj = jstats()
		ok = rm < pm
		n++; nok += ok
		printf "| %s | %d | %s | %d | %s | %.2fx | %s |\n", label(c), ps, line, rs, spread("%.3f"),
			(pm > 0 ? rm / pm : 0), ok ? "PASS" : "MISS"
		jappend("cost", "{\"case\": " js(c) ", \"perf_samples\": " jn(ps) ", \"recce_samples\": " jn(rs) \
			", \"perf_cpu_s_per_1k_samples\": " pj ", \"recce_cpu_s_per_1k_samples\": " rj \
			", \"recce_to_perf\": " jn(pm > 0 ? rm / pm : "") ", \"verdict\": " js(ok ? "PASS" : "MISS") "}")
		if (!ok)
			misses = misses (misses == "" ? "" : "; ") sprintf("%s: %.3f s against perf's %.3f s", label(c), rm, pm)
	}
	print ""
	budget("recce's CPU per 1,000 samples", "less than perf's", sprintf("less in %d of %d cases", nok, n),
		nok == n, "recce used more CPU per 1,000 samples than perf record in " misses ".")
}

# 3. Output size.
function figure_size(    i, c, pb, rb, ratio, ok, n, nok, misses, worst) {
	print "## 3. Output size"
	print ""
	print "recce.pb.gz against perf.data of the same recording (the same runs as above)."
	print "Deepest stack: the most frames in one sample of the flamegraph's input (perf's"
	print "folded stacks without the process name; recce's folded stacks), the deepest run;"
	print "the kernel cuts frame-pointer call chains at kernel.perf_event_max_stack"
	print "(" M["max_stack"] " here) for both tools."
	print ""
	print "| case | perf.data | recce.pb.gz | perf.data / recce.pb.gz | budget (20x) | deepest stack: perf, recce |"
	print "|---|---|---|---|---|---|"
	worst = ""
	for (i = 1; i <= nrun; i++) {
		c = runcase[i]
		if (!((c, "perf") in R) || !((c, "recce") in R))
			continue
		get(c, "perf", "size_bytes"); pb = MED; pj = jstats()
		get(c, "recce", "size_bytes"); rb = MED; rj = jstats()
		ratio = rb > 0 ? pb / rb : 0
		ok = ratio >= 20
		n++; nok += ok
		if (worst == "" || ratio < worst)
			worst = ratio
		get(c, "perf", "max_depth"); pd = MAX
		get(c, "recce", "max_depth"); rd = MAX
		printf "| %s | %s | %s | %.0fx | %s | %d, %d |\n", label(c), bytes(pb), bytes(rb), ratio,
			ok ? "PASS" : "MISS", pd, rd
		jappend("size", "{\"case\": " js(c) ", \"perf_bytes\": " pj ", \"recce_bytes\": " rj \
			", \"perf_to_recce\": " jn(ratio) ", \"verdict\": " js(ok ? "PASS" : "MISS") \
			", \"perf_max_depth\": " jn(pd) ", \"recce_max_depth\": " jn(rd) "}")
		if (!ok)
			misses = misses (misses == "" ? "" : "; ") sprintf("%s: %.1fx", label(c), ratio)
	}
	print ""
	budget("profile size", "at least 20x smaller than perf.data",
		sprintf("%d of %d cases; smallest ratio %.0fx", nok, n, worst), nok == n,
		"recce's profile was less than 20x smaller than perf.data in " misses ".")
}

# 4. Time to a flamegraph.
function figure_flame(    i, c, pt, rt, ratio, ok, n, nok, misses, line, s10k, t10k) {
	print "## 4. Time to a flamegraph"
	print ""
	print "From the end of the recording to a symbolized flamegraph. The recording ends when"
	print "the workload's work ends (it notes that instant, CLOCK_MONOTONIC, just before"
	print "returning from main). Then \"tail\" is the time until the profiler process exits"
	print "(perf: flushing perf.data and its build-id pass, perf record's default; recce:"
	print "symbolizing every stack, file:line and inlined frames included, and writing the"
	print "profile); \"step\" is the"
	print "flamegraph step run afterwards: `recce report FILE --flame out.svg` (an SVG) against"
	print "`perf script -i perf.data | awk -f bench/stackcollapse.awk > out.folded` (folded"
	print "stacks only: the SVG rendering that flamegraph.pl would add is not counted for"
	print "perf, which favours perf)."
	print ""
	print "| case | samples | perf: tail + step = total s | recce: tail + step = total s | perf / recce | budget (10x) |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= nrun; i++) {
		c = runcase[i]
		if (!((c, "perf") in R) || !((c, "recce") in R))
			continue
		get(c, "recce", "samples"); s = MED
		get(c, "perf", "tail_s"); ptl = MED; ptj = jstats()
		get(c, "perf", "flame_s"); pst = MED; psj = jstats()
		sum2(c, "perf", "tail_s", "flame_s"); pt = MED; line = spread("%.3f"); pj = jstats()
		get(c, "recce", "tail_s"); rtl = MED; rtj = jstats()
		get(c, "recce", "flame_s"); rst = MED; rsj = jstats()
		sum2(c, "recce", "tail_s", "flame_s"); rt = MED; rj = jstats()
		ratio = rt > 0 ? pt / rt : 0
		ok = ratio >= 10
		n++; nok += ok
		printf "| %s | %d | %.3f + %.3f = %s | %.3f + %.3f = %s | %.1fx | %s |\n", label(c), s,
			ptl, pst, line, rtl, rst, spread("%.3f"), ratio, ok ? "PASS" : "MISS"
		jappend("flame", "{\"case\": " js(c) ", \"recce_samples\": " jn(s) \
			", \"perf_tail_s\": " ptj ", \"perf_step_s\": " psj ", \"perf_total_s\": " pj \
			", \"recce_tail_s\": " rtj ", \"recce_step_s\": " rsj ", \"recce_total_s\": " rj \
			", \"perf_to_recce\": " jn(ratio) ", \"verdict\": " js(ok ? "PASS" : "MISS") "}")
		if (!ok)
			misses = misses (misses == "" ? "" : "; ") sprintf("%s: %.1fx (%.3f s against %.3f s)", label(c), ratio, rt, pt)
		if (c ~ /^tenk/) {
			s10k = s
			t10k = rt
			get(c, "recce", "tail_s"); tail10k = MED
		}
	}
	print ""
	budget("time to a flamegraph", "at least 10x sooner than perf script + fold",
		sprintf("%d of %d cases", nok, n), nok == n,
		"recce was less than 10x sooner than the perf pipeline in " misses ".")
	if (t10k != "")
		budget("time to a flamegraph, 10,000 samples", "under 1 s",
			sprintf("%.3f s for %d samples", t10k, s10k), t10k < 1,
			sprintf("recce took %.3f s from the end of a %d-sample recording to the SVG (%.3f s of it before record exited).",
				t10k, s10k, tail10k))
}

# 5. Accuracy on split.
function figure_accuracy(    t, tool, r, l, e, line, js_, truth) {
	if (!(("split", "recce") in R))
		return
	print "## 5. Accuracy"
	print ""
	print "`split` calls leaf_a..leaf_d, built to take 50/30/15/5% of its CPU time; the true"
	print "shares are what the workload itself measured with its thread CPU clock around every"
	print "call. Measured share: samples whose innermost leaf is that leaf, over the samples in"
	print "any leaf. Error: the largest absolute difference over the four leaves, in"
	print "percentage points. Sampling at " R["split", "hz"] " Hz, frame pointers."
	print ""
	print "| | samples in leaves | max error (points) | per run | leaf_a | leaf_b | leaf_c | leaf_d |"
	print "|---|---|---|---|---|---|---|---|"
	line = "| true shares | | | |"
	for (l = 1; l <= 4; l++) {
		get("split", "recce", "true_" substr("abcd", l, 1))
		line = line sprintf(" %.2f%% |", MED)
	}
	print line
	for (t = 1; t <= 2; t++) {
		tool = t == 1 ? "perf" : "recce"
		get("split", tool, "samples_leaves"); s = MED
		get("split", tool, "max_err_pts"); line = spread("%.2f"); ej = jstats(); E[tool] = MED; EMAX[tool] = MAX
		per_run = ""
		for (r = 1; r <= maxrep; r++)
			if (("split", tool, r, "max_err_pts") in R)
				per_run = per_run (per_run == "" ? "" : ", ") sprintf("%.2f", R["split", tool, r, "max_err_pts"])
		line = "| " tool " | " sprintf("%d", s) " | " line " | " per_run " |"
		js_ = "\"" tool "\": {\"samples_in_leaves\": " jn(s) ", \"max_err_pts\": " ej
		for (l = 1; l <= 4; l++) {
			get("split", tool, "share_" substr("abcd", l, 1))
			line = line sprintf(" %.2f%% |", MED)
			js_ = js_ ", \"share_" substr("abcd", l, 1) "\": " jn(MED)
		}
		print line
		J["accuracy"] = J["accuracy"] (J["accuracy"] == "" ? "" : ", ") js_ "}"
	}
	print ""
	budget("accuracy on split", "largest error within 2 points",
		sprintf("recce %.2f points (worst run %.2f), perf %.2f", E["recce"], EMAX["recce"], E["perf"]),
		E["recce"] <= 2,
		sprintf("recce's shares on split were off by %.2f points (median of the runs), more than 2.", E["recce"]))
}

# 6. Symbolization throughput.
function figure_symbolize(    t, tool, rr, w, line, ntools, tools) {
	if (!("recce" in S))
		return
	print "## 6. Symbolization throughput"
	print ""
	print "A generated C program of " S["recce", 1, "functions"] " functions (bench/gen-bigbin.sh, -O2 -g, with"
	print "inlined helpers); random addresses inside its functions, one list for every tool."
	print "Each tool runs as one process reading the addresses on standard input and printing"
	print "function and file:line for every frame, inlined ones included: `recce addr2line"
	print "-a -f -i -e BIN` with the binary's symbol table read back from the cache (recce),"
	print "building it in an empty cache (recce-cold) and without the cache (recce-nocache);"
	print "`addr2line -a -f -i -e BIN`, `llvm-symbolizer --output-style=GNU -a -f -i`, and"
	print "`eu-addr2line -a -f -i -e BIN` (which gets only the first " S["eu-addr2line", 1, "addresses"]
	print "addresses: it takes about a millisecond for each). Rates are addresses per second of"
	print "wall time of the whole process, start-up and reading the debug information included."
	print ""
	print "| tool | addresses | wall s | addresses / s | recce is faster by |"
	print "|---|---|---|---|---|"
	rate("recce", "wall_s"); rr = MED
	ntools = split("recce recce-cold recce-nocache addr2line llvm-symbolizer eu-addr2line", tools, " ")
	for (t = 1; t <= ntools; t++) {
		tool = tools[t]
		if (!(tool in S))
			continue
		get_of(S, tool, "wall_s"); w = MED
		rate(tool, "wall_s"); RATE[tool] = MED
		line = spread("%.0f")
		printf "| %s | %d | %.3f | %s | %s |\n", tool, S[tool, 1, "addresses"], w, line,
			tool == "recce" ? "" : sprintf("%.1fx", rr / MED)
		jappend("sym", "{\"tool\": " js(tool) ", \"addresses\": " S[tool, 1, "addresses"] \
			", \"addresses_per_s\": " jstats() ", \"recce_speedup\": " jn(tool == "recce" ? 1 : rr / MED) "}")
	}
	print ""
	print "The table of the binary takes " sprintf("%.1f", M["table_bytes"] / 1048576) " MiB on disk. Through it recce gave the same frames as"
	print "without it for " M["table_same_pct"] "% of the addresses, and the same frames as addr2line"
	print "(function, file and line of every frame) for " M["same_frames_pct"] "%."
	print ""
	budget("symbolization throughput", "at least 10x addr2line",
		sprintf("%.1fx addr2line (%.0f against %.0f addresses / s)", RATE["recce"] / RATE["addr2line"],
			RATE["recce"], RATE["addr2line"]),
		RATE["recce"] >= 10 * RATE["addr2line"],
		sprintf("recce's symbolizer resolved %.0f addresses / s, %.1fx addr2line's %.0f, short of 10x.",
			RATE["recce"], RATE["recce"] / RATE["addr2line"], RATE["addr2line"]))
}

# Stats of field f of tool t over the repetitions, from a table A of
# (tool, rep, field) as the sym and ev lines fill.
function get_of(A, t, f,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((t, r, f) in A)
			V[++n] = A[t, r, f] + 0
	return stats(n)
}

# 7. Memory.
function figure_memory(    i, c, t, tool, line, rss, cpu) {
	if (!natt)
		return
	print "## 7. Memory"
	print ""
	print "Peak RSS of the profiler process (wait4's ru_maxrss), attached by PID for "
	print R[attcase[1], "perf", 1, "seconds"] " s at " R[attcase[1], "perf", 1, "hz"] " Hz to a `threads` workload that was already running: 200"
	print "threads each working about 50 us every 10 ms, or a thread created and ended every"
	print "millisecond (`--churn`). perf is `perf record -e cpu-clock -g -p PID -- sleep S`."
	print "CPU: the profiler's CPU seconds per second of recording. No budget; for reference."
	print "Threads that live for less than one sampling period of CPU time are rarely"
	print "sampled by either tool (the cpu-clock of each thread starts at zero)."
	print ""
	print "| workload | tool | peak RSS | CPU s / s | samples |"
	print "|---|---|---|---|---|"
	for (i = 1; i <= natt; i++) {
		c = attcase[i]
		for (t = 1; t <= 2; t++) {
			tool = t == 1 ? "perf" : "recce"
			get(c, tool, "prof_maxrss_kb"); rss = MED; rline = spread("%.0f"); rj = jstats()
			per(c, tool, "prof_cpu_s", "seconds", 1); cline = spread("%.3f"); cj = jstats()
			get(c, tool, "samples"); s = MED
			printf "| %s | %s | %s KiB | %s | %d |\n", c, tool, rline, cline, s
			jappend("memory", "{\"case\": " js(c) ", \"tool\": " js(tool) ", \"peak_rss_kib\": " rj \
				", \"cpu_s_per_s\": " cj ", \"samples\": " jn(s) "}")
		}
	}
	print ""
}

# 8. recce top.
function figure_top(    i, c, t, tool, name, cpu, line, rj, cj, slow, nz, sj, cline, sline) {
	if (!ntop && !(("cpu2-top", "seen") in R))
		return
	print "## 8. recce top"
	print ""
	print "What watching costs: `recce top -b -d 1` and procps `top -b -H -d 1` (a row a"
	print "thread), by PID on a `threads` workload of " R[topcase[1], "recce", 1, "threads"] " threads (each working about"
	print "10 us every 10 ms) or over the whole system. Steady: the tool's CPU (schedstat, all"
	print "its threads) over " R[topcase[1], "recce", 1, "steady_seconds"] " s of refreshes once it is running, in percent of one core."
	print "Start-up: the rest of its CPU, before its first snapshot (recce loads the"
	print "symbols of what it watches then). recce also samples every CPU at 49 Hz to name"
	print "each thread's functions; procps top reads /proc only."
	print ""
	print "| case | tool | steady CPU, % of a core | start-up CPU | peak RSS |"
	print "|---|---|---|---|---|"
	for (i = 1; i <= ntop; i++) {
		c = topcase[i]
		for (t = 1; t <= 2; t++) {
			tool = t == 1 ? "procps" : "recce"
			name = t == 1 ? "procps top -H" : "recce top"
			get(c, tool, "steady_cpu_pct"); line = spread("%.2f"); cj = jstats()
			if (tool == "recce")
				cpu[c] = MED
			get(c, tool, "startup_cpu_s"); sline = spread("%.3f"); sj = jstats()
			get(c, tool, "prof_maxrss_kb"); rj = jstats()
			printf "| %s | %s | %s | %s s | %s KiB |\n", c, name, line, sline, spread("%.0f")
			jappend("top", "{\"case\": " js(c) ", \"tool\": " js(tool) ", \"steady_cpu_pct_of_core\": " cj \
				", \"startup_cpu_s\": " sj ", \"peak_rss_kib\": " rj "}")
		}
	}
	print ""
	if (("top-pid", "seen") in R)
		budget("recce top's CPU, 1 s refresh, " R["top-pid", "recce", 1, "threads"] " threads", "under 1% of a core",
			sprintf("%.2f%% of a core", cpu["top-pid"]), cpu["top-pid"] < 1,
			sprintf("recce top used %.2f%% of a core watching %d threads.", cpu["top-pid"], R["top-pid", "recce", 1, "threads"]))
	if (!(("cpu2-top", "seen") in R))
		return
	print "The target's own CPU time (cpu2, two busy threads) alone and watched by `recce top"
	print "-b -d 1 -p PID` at " R["cpu2-top", "recce", 1, "hz"] " Hz for its whole run; each watched run against the run alone"
	print "just before it. Noise: spread of the runs alone."
	print ""
	print "| case | alone: CPU | watched: CPU change | noise: CPU |"
	print "|---|---|---|---|"
	get("cpu2-top", "none", "cpu_s"); line = spread("%.2f")
	pct("cpu2-top", "recce", "none", "cpu_s"); slow = MED; sj = jstats(); cline = spread("%+.2f%%")
	nz = noise("cpu2-top", "cpu_s")
	printf "| cpu2, %s Hz | %s s | %s | %s |\n", R["cpu2-top", "recce", 1, "hz"], line, cline, (nz == "" ? "n/a" : sprintf("%.1f%%", nz))
	print ""
	jappend("top", "{\"case\": \"cpu2-top\", \"target_cpu_change_pct\": " sj ", \"noise_pct\": " jn(nz) "}")
	if (slow != "" && nz != "")
		budget("target slowdown under recce top at " R["cpu2-top", "recce", 1, "hz"] " Hz", "not measurable",
			sprintf("%+.2f%% CPU (noise %.1f%%)", slow, nz), slow <= nz,
			sprintf("the target used %+.2f%% CPU under recce top, more than the %.1f%% noise.", slow, nz))
}

# 9. recce trace.
function figure_trace(    tool, t, r, n, line, added, ratio, aj, rec_, evj, a_line, ev, lo, pc, rj) {
	if (!(("calls", "seen") in R))
		return
	print "## 9. recce trace"
	print ""
	print "The target's own time per call of a small function called in a loop for"
	print "about 2 s: alone, under a bare kernel uprobe and uretprobe on it (bench/uprobe-bare.c:"
	print "perf_event_open on the uprobe PMU, a sample per hit with tid and time, the kernel's"
	print "default wakeups, a reader that skips the records), and under `recce trace traced"
	print "--return` with every limit off (text to /dev/null): its returns probed on the"
	print "function's exit instructions (the default), and with a uretprobe as before"
	print "(RECCE_RETURN_URETPROBE=1); and the entry alone with each call's callers, `--stack`"
	print "by the kernel's frame-pointer walk (`--call-graph fp`) or from 8 KiB of stack copied"
	print "and unwound (the default), beside bpftrace's `@[ustack] = count()`. Added: the time"
	print "per call over the run alone just before. The budget: recce's added time within 1.2x"
	print "of the bare probes'."
	print ""
	print "| tool | ns per call | added ns per call | calls seen | lost | tracer's CPU s |"
	print "|---|---|---|---|---|---|"
	for (t = 1; t <= 7; t++) {
		tool = t == 1 ? "none" : t == 2 ? "bare" : t == 3 ? "recce" : t == 4 ? "uret" : \
			t == 5 ? "stack-fp" : t == 6 ? "stack" : "bpftrace"
		if (!(("calls", tool, 1, "ns_per_call") in R))
			continue
		get("calls", tool, "ns_per_call"); line = spread("%.0f")
		n = 0
		for (r = 1; r <= maxrep; r++)
			if (("calls", tool, r, "ns_per_call") in R && ("calls", "none", r, "ns_per_call") in R)
				V[++n] = R["calls", tool, r, "ns_per_call"] - R["calls", "none", r, "ns_per_call"]
		stats(n); added[tool] = MED; aj = jstats()
		a_line = tool == "none" ? "-" : spread("%.0f")
		get("calls", tool, "events"); ev = MED
		get("calls", tool, "lost"); lo = MED
		get("calls", tool, "prof_cpu_s"); pc = tool == "none" ? "-" : spread("%.2f")
		printf "| %s | %s | %s | %s | %s | %s |\n", (tool == "bare" ? "bare uprobe" : tool == "recce" ? "recce trace (exits)" : tool == "uret" ? "recce trace (uretprobe)" : \
			tool == "stack-fp" ? "recce trace --stack --call-graph fp" : tool == "stack" ? "recce trace --stack (8 KiB copied)" : \
			tool == "bpftrace" ? "bpftrace @[ustack] = count()" : "alone"), \
			line, a_line, (tool == "none" ? "-" : sprintf("%d", ev)), (tool == "none" ? "-" : sprintf("%d", lo)), pc
		jappend("trace", "{\"tool\": " js(tool) ", \"added_ns_per_call\": " aj ", \"events\": " jn(ev) ", \"lost\": " jn(lo) "}")
	}
	print ""
	if (added["bare"] > 0 && added["recce"] != "") {
		ratio = added["recce"] / added["bare"]
		printf "recce's added time per call is %.2fx the bare probes'.\n", ratio
		if (added["uret"] > 0)
			printf "Probing the exits costs %.2fx the uretprobe it replaces (%.0f ns against %.0f ns a call).\n", \
				added["recce"] / added["uret"], added["recce"], added["uret"]
		print ""
		if (added["stack"] != "" && added["stack-fp"] > 0)
			printf "A call's callers from its copied stack cost %.2fx the frame-pointer walk's (%.0f ns against %.0f ns a call; bpftrace's ustack %.0f ns).\n", \
				added["stack"] / added["stack-fp"], added["stack"], added["stack-fp"], added["bpftrace"]
		budget("trace: added time per traced call", "within 1.2x of a bare uprobe + uretprobe",
			sprintf("%.2fx (%.0f ns against %.0f ns)", ratio, added["recce"], added["bare"]), ratio <= 1.2,
			sprintf("a traced call cost the target %.0f ns more, %.2fx the bare probes' %.0f ns.", added["recce"], ratio, added["bare"]))
	}
	if (!(("breaker", "seen") in R))
		return
	print "The circuit breaker: `recce trace -p PID traced --limit " R["breaker", "recce", 1, "limit"] "` on the same loop, timing"
	print "every call. Recovery: from the last event recce printed (the one before the event"
	print "that tripped the breaker) to the end of the last run of slow calls, on the same"
	print "clock. recce attaches with BPF uprobe_multi links where the kernel has them: the"
	print "breakpoint leaves the target as soon as the link is released, whatever its threads"
	print "and CPUs (with perf uprobe events, only after a kernel grace period per thread and"
	print "CPU but the last)."
	print ""
	get("breaker", "recce", "recovery_ms"); rec_ = MED; line = spread("%.1f"); rj = jstats()
	get("breaker", "recce", "events"); evj = MED
	print "| limit | events before the trip | calls at full speed again after |"
	print "|---|---|---|"
	printf "| %s | %d | %s ms |\n\n", R["breaker", "recce", 1, "limit"], evj, line
	jappend("trace", "{\"case\": \"breaker\", \"recovery_ms\": " rj "}")
	budget("trace: target at full speed after the breaker trips", "within 10 ms", sprintf("%.1f ms", rec_), rec_ <= 10,
		sprintf("the target ran slow for %.1f ms after the trip: the kernel's removal of the breakpoint (its mmap locks and an RCU grace period) took that long on this machine.", rec_))
}

# The cost of one event over the bare loop, per repetition, paired with
# the bare loop of the same repetition.
function ev_cost(t,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((t, r, "ns_per_iter") in EV && ("base", r, "ns_per_iter") in EV)
			V[++n] = EV[t, r, "ns_per_iter"] - EV["base", r, "ns_per_iter"]
	for (r = 1; r <= n; r++)
		if (V[r] < 0)
			V[r] = 0 # cheaper than the bare loop: within its noise
	return stats(n)
}

# 10. In-process events.
function figure_events(    tools, nt, t, tool, what, c, rc, line, ratio) {
	if (!("recce" in EV))
		return
	print "## 10. In-process events (librecce)"
	print ""
	print "One thread writes events back to back (bench/workloads/events.c: a loop writing 8 an"
	print "iteration, " EV["recce", 1, "iterations"] " in all for librecce, " EV["lttng", 1, "iterations"] " for the slower tools), after a"
	print "fifth of a second of spinning so that the CPU runs at its speed. The cost of an event"
	print "is its time less that of the bare loop in the same repetition. librecce writes"
	print "`recce_event_value(\"tick\", i)` with `recce events -f` reading the process from its"
	print "first event to its end, then with no reader, then with `RECCE_EVENTS=off`; LTTng-UST"
	print "writes a tracepoint with one integer into a session of its own session daemon"
	print "(`lttng enable-event -u`), then with no session; uftrace records a call of a one-line"
	print "function built with `-pg` (`uftrace record`). The clock line is one read of the CPU's"
	print "time-stamp counter, which every librecce event makes; the task line is one"
	print "`recce_task_start` and one `recce_task_stop`."
	print ""
	print "| writer | ns an event | over the bare loop, ns | librecce is cheaper by |"
	print "|---|---|---|---|"
	ev_cost("recce"); rc = MED
	nt = split("recce recce-noreader recce-off recce-task clock lttng lttng-off uftrace base", tools, " ")
	split("librecce, reader attached|librecce, no reader|librecce, switched off|librecce, a task's start and stop, reader attached|the clock read alone|LTTng-UST, session recording|LTTng-UST, no session|uftrace, per call|the bare loop", what, "|")
	for (t = 1; t <= nt; t++) {
		tool = tools[t]
		if (!(tool in EV))
			continue
		get_of(EV, tool, "ns_per_iter"); line = spread("%.2f")
		ev_cost(tool); c = MED
		EVC[tool] = c
		ratio = (tool == "lttng" || tool == "uftrace") && (rc > 0) ? sprintf("%.0fx", c / rc) : ""
		printf "| %s | %s | %s | %s |\n", what[t], line, (tool == "base" ? "" : spread("%.2f")), ratio
		jappend("events", "{\"tool\": " js(tool) ", \"ns_per_event\": " jstats() "}")
	}
	print ""
	budget("in-process event (librecce), reader attached", "under 10 ns",
		sprintf("%.1f ns (the clock read alone: %.1f ns); LTTng-UST %.0f ns, uftrace %.0f ns", EVC["recce"], EVC["clock"],
			EVC["lttng"], EVC["uftrace"]),
		EVC["recce"] < 10,
		sprintf("an event cost %.1f ns with a reader attached; the CPU's time-stamp counter alone took %.1f ns a read on this machine.",
			EVC["recce"], EVC["clock"]))
	budget("in-process event (librecce), switched off", "under 1 ns", sprintf("%.2f ns", EVC["recce-off"]),
		EVC["recce-off"] < 1, sprintf("a switched-off event cost %.2f ns.", EVC["recce-off"]))
	if ("recce-task" in EV)
		budget("task hooks (librecce), start and stop, reader attached", "under 20 ns a pair",
			sprintf("%.1f ns (two clock reads: %.1f ns)", EVC["recce-task"], 2 * EVC["clock"]),
			EVC["recce-task"] < 20,
			sprintf("a task's start and stop cost %.1f ns; they read the time-stamp counter twice, %.1f ns on this machine.",
				EVC["recce-task"], 2 * EVC["clock"]))
}

# The table of a workload run alone and under attached profilers: per tool
# (in the order of the space-separated tools, named by the |-separated
# what), the time of one step, steps a second (field), the slowdown
# against "none", kept in SLOW, and the events recorded (field events).
# head is the table's header, key the JSON list the rows go to.
function slowdown_table(A, tools, what, head, field, key, SLOW,    tl, wh, nt, t, tool, base, slow, r) {
	print head
	print "|---|---|---|---|---|"
	get_of(A, "none", "ns_per_iter"); base = MED
	nt = split(tools, tl, " ")
	split(what, wh, "|")
	for (t = 1; t <= nt; t++) {
		tool = tl[t]
		if (!(tool in A))
			continue
		get_of(A, tool, "ns_per_iter")
		slow = base > 0 ? MED / base : 0
		SLOW[tool] = slow
		printf "| %s | %.2f | ", wh[t], MED / 1000
		get_of(A, tool, field); r = MED
		get_of(A, tool, "events")
		printf "%.0f | %s | %s |\n", r, (tool == "none" ? "" : sprintf("%.2fx", slow)),
			(tool == "none" || MED == 0 ? "" : sprintf("%d", MED))
		jappend(key, "{\"tool\": " js(tool) ", \"slowdown\": " jn(slow) ", \"" field "\": " jn(r) "}")
	}
	print ""
	get_of(A, "none", field)
}

# 11. Off-CPU recording.
function figure_offcpu() {
	if (!("recce" in OFF))
		return
	print "## 11. Off-CPU recording"
	print ""
	print "Two threads on one CPU pass a byte back and forth over two pipes"
	print "(bench/workloads/switches.c, " OFF["recce", 1, "rounds"] " round trips), each blocking in read() once a pass: two"
	print "switches off the CPU a round trip. The profiler attaches by pid before the passes start and stays until the"
	print "workload exits: `recce record -e offcpu -p` (frame-pointer stacks), and `perf record -e"
	print "sched:sched_switch -g -p`, a stack at every switch through the tracepoint."
	print ""
	slowdown_table(OFF, "none recce perf", "none|recce record -e offcpu|perf record -e sched:sched_switch -g",
		"| profiler | us a round trip | switches a second | slowdown | events recorded |",
		"switches_per_s", "offcpu", OFFS)
	budget("off-CPU recording, target slowdown", "stated beside perf sched:sched_switch -g",
		sprintf("%.2fx at %.0f switches/s (perf: %.2fx)", OFFS["recce"], MED, OFFS["perf"]),
		OFFS["recce"] <= OFFS["perf"] * 1.1,
		sprintf("recce record -e offcpu slowed the target %.2fx, perf sched:sched_switch -g %.2fx.",
			OFFS["recce"], OFFS["perf"]))
}

# 12. Allocation sampling.
function figure_alloc() {
	if (!("recce" in AL))
		return
	print "## 12. Allocation sampling"
	print ""
	print "A target that mallocs and frees 64 bytes between about a microsecond of work, a million"
	print "allocations a second alone (bench/workloads/allocs.c, " AL["recce", 1, "steps"] " steps). The profiler attaches"
	print "by pid before the steps start and stays until the workload exits: `recce record -e alloc -p`"
	print "(uprobe sessions on malloc and free, one sample per 512 KiB, frame-pointer stacks), and bpftrace"
	print "with a uprobe on malloc (a stack and a sum each) and on free: both pay a kernel uprobe at every"
	print "call. `recce record -e alloc --fast` samples in the process instead: recce's library and jumps"
	print "on the allocator's entries and exits, a sampled call's stack copied and unwound by recce."
	print "recce-returns is recce as on a kernel without uprobe sessions (before 6.13): a return probe on"
	print "every allocation call as well (`RECCE_ALLOC_NO_SESSIONS=1`); recce-events as on one without"
	print "uprobe_multi links (before 6.6: Debian 12's 6.1), perf uprobe events at every entry and return"
	print "(`RECCE_NO_LINKS=1`)."
	print ""
	slowdown_table(AL, "none recce recce-fast recce-returns recce-events bpftrace",
		"none|recce record -e alloc|recce record -e alloc --fast|recce record -e alloc, entry and return probes|recce record -e alloc, perf uprobe events|bpftrace, uprobes on malloc and free",
		"| profiler | us a step | allocations a second | slowdown | samples |",
		"allocs_per_s", "alloc", ALS)
	if ("recce-fast" in ALS)
		budget("allocation sampling in the process (--fast), target slowdown at 1M allocations/s", "under 1.5x",
			sprintf("%.2fx", ALS["recce-fast"]), ALS["recce-fast"] < 1.5,
			sprintf("recce record -e alloc --fast slowed the target %.2fx (uprobes: %.2fx).",
				ALS["recce-fast"], ALS["recce"]))
	budget("allocation sampling, target slowdown at 1M allocations/s", "stated (uprobes)",
		sprintf("%.2fx at %.0f allocations/s (bpftrace: %s)", ALS["recce"], MED,
			("bpftrace" in ALS) ? sprintf("%.2fx", ALS["bpftrace"]) : "not run"),
		!("bpftrace" in ALS) || ALS["recce"] <= ALS["bpftrace"] * 1.1,
		sprintf("recce record -e alloc slowed the target %.2fx; every malloc and free takes a uprobe trap.",
			ALS["recce"]))
	if ("recce-returns" in ALS)
		budget("allocation sampling without uprobe sessions (before 6.13)", "stated",
			sprintf("%.2fx, against %.2fx with sessions", ALS["recce-returns"], ALS["recce"]), 1,
			sprintf("entry and return probes slowed the target %.2fx (sessions: %.2fx).",
				ALS["recce-returns"], ALS["recce"]))
	if ("recce-events" in ALS)
		budget("allocation sampling without uprobe_multi links (before 6.6)", "stated",
			sprintf("%.2fx, against %.2fx with sessions", ALS["recce-events"], ALS["recce"]), 1,
			sprintf("perf uprobe events at entries and returns slowed the target %.2fx (sessions: %.2fx).",
				ALS["recce-events"], ALS["recce"]))
}

# V = field f of tool t in A (kept by keep_by_tool), one value a repetition.
function tool_field(A, t, f,    r, n) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if ((t, r, f) in A && A[t, r, f] != "")
			V[++n] = A[t, r, f] + 0
	return stats(n)
}

# One row of the patching table: a step, its stop median and worst.
function patch_row(t, f, what) {
	if (!tool_field(PA, t, f))
		return
	printf "| %s | %.2f | %.2f |\n", what, MED, MAX
	J["patch"] = J["patch"] (J["patch"] == "" ? "" : ",\n    ") \
		sprintf("{\"tool\": %s, \"step\": %s, \"ms\": %s}", js(t), js(f), jstats())
}

# 13. Hot patching.
function figure_patch(    med, worst, plain, extra) {
	if (!("recce" in PA))
		return
	print "## 13. Hot patching"
	print ""
	print "A target whose four threads call the function being replaced without pause while its main"
	print "thread sleeps (tests/targets/patchee.c). `recce patch` loads tests/targets/fixes/fib-fix.so"
	print "with the target's own dlopen on a borrowed thread and writes the jump; `--undo` writes the"
	print "old bytes back. Each figure is how long the whole process stayed stopped, in ms. The anchor"
	print "is loading the same library by hand: `gdb -p PID -batch -ex 'call dlopen(...)'`, which"
	print "keeps the process stopped from attach to detach, its whole run. \"Every thread in a timed"
	print "sleep\" is tests/targets/torture.c sleeponly: recce borrows a sleeping thread for the call"
	print "and puts it back into the same sleep itself."
	print ""
	print "| step | stopped, median ms | worst ms |"
	print "|---|---|---|"
	patch_row("recce", "load_stop_ms", "recce patch: stop to set up the dlopen call")
	patch_row("recce", "write_stop_ms", "recce patch: stop to write the jump")
	patch_row("recce", "stop_ms", "recce patch: both stops")
	patch_row("recce", "undo_stop_ms", "recce patch --undo")
	patch_row("recce", "wall_ms", "recce patch: the whole command, wall time (not stopped)")
	patch_row("recce-sleeper", "load_stop_ms", "every thread in a timed sleep: stop to set up the dlopen call")
	patch_row("recce-sleeper", "stop_ms", "every thread in a timed sleep: both stops")
	patch_row("gdb", "stop_ms", "gdb -p -batch -ex 'call dlopen': stopped throughout")
	print ""
	if (tool_field(PA, "call-plain", "ns_per_call")) {
		plain = MED
		print "A call of the patched function, from bench/workloads/calls.c's bursts (a one-line"
		print "function, the replacement the same line in a library): as it is, and patched (its jump,"
		print "the veneer, and the thunk that gives the caller back every register the old function"
		print "left alone, vector registers included)."
		print ""
		print "| call | ns, median (smallest..largest) |"
		print "|---|---|"
		printf "| traced(), as it is | %s |\n", spread("%.1f")
		if (tool_field(PA, "call-patched", "ns_per_call")) {
			printf "| traced(), patched | %s |\n", spread("%.1f")
			extra = MED - plain
		}
		print ""
	}
	tool_field(PA, "recce", "stop_ms")
	med = MED
	worst = MAX
	budget("hot patching, time the target stays stopped", "stated: median and worst",
		sprintf("%.2f ms median, %.2f ms worst (gdb loading the library: %s)", med, worst,
			tool_field(PA, "gdb", "stop_ms") ? sprintf("%.0f ms", MED) : "not run"), 1, "")
	if (extra != "")
		budget("hot patching, cost of a patched call", "stated",
			sprintf("%.1f ns more than the call as it is", extra), 1, "")
}

# 14b. Many distinct programs: the continuous agent's memory.
function figure_binaries(    t, rss, files, n, rs, fs, rd, fd) {
	if (!("distinct" in BI))
		return
	print "## 14b. Many distinct programs"
	print ""
	printf "%d processes at once, each waking every second to burn 2 ms, under `recce agent\n", BI["distinct", 1, "processes"]
	print "--continuous` (19 Hz per CPU) for 90 s: all running one program, then each its own"
	print "(its own code and build-id). From /metrics after the last window: the profiler's"
	print "resident memory and the binaries it holds open to name stacks."
	print ""
	print "| programs | binaries open | profiler RSS | samples |"
	print "|---|---|---|---|"
	split("same distinct", T, " ")
	for (t = 1; t <= 2; t++) {
		if (!(T[t] in BI))
			continue
		tool_field(BI, T[t], "files_open")
		files = MED
		tool_field(BI, T[t], "rss_bytes")
		rss = MED
		tool_field(BI, T[t], "samples")
		n = MED
		printf "| %s | %d | %.1f MB | %d |\n", (T[t] == "same" ? "one for all" : "one each"), files, rss / 1e6, n
		J["bins"] = J["bins"] (J["bins"] == "" ? "" : ",\n    ") \
			sprintf("{\"tool\": %s, \"files_open\": %d, \"rss_bytes\": %.0f}", js(T[t]), files, rss)
		if (T[t] == "same") {
			rs = rss
			fs = files
		} else {
			rd = rss
			fd = files
		}
	}
	print ""
	if (fd > fs)
		budget("continuous agent's memory for each distinct binary it names", "stated",
			sprintf("%.0f KB (%.1f MB for %d binaries open)", (rd - rs) / (fd - fs) / 1e3, (rd - rs) / 1e6, fd - fs), 1, "")
}

# One row of the continuous table: a tool's median of field f, printed
# with fmt.
function cont_row(t, f, what, fmt) {
	if (!tool_field(CO, t, f))
		return ""
	J["cont"] = J["cont"] (J["cont"] == "" ? "" : ",\n    ") \
		sprintf("{\"tool\": %s, \"figure\": %s, \"value\": %s}", js(t), js(f), jstats())
	return spread(fmt)
}

# 14. Continuous profiling.
function figure_continuous(    t, base, cpu, share, slow, nbytes, hour, q, rshare, rslow, rbytes, c, b, busy, rss, whole, rwhole) {
	if (!("recce" in CO))
		return
	print "## 14. Continuous profiling"
	print ""
	print "Two busy processes (cpu2 built at -O2 without frame pointers, as Debian builds, two"
	print "threads each: both cores full) and 200 sleeping ones, under nothing, `perf record -a -F 19`"
	print "with `-g` (perf) or `--call-graph dwarf` (perf-dwarf), or `recce agent --continuous` (19 Hz"
	print "per CPU, its default unwinder, 10 s windows, into its SQLite store). The profiler's CPU is"
	print "its own and that of what it reaped, as a share of one core over its run, its peak RSS the"
	print "largest of those processes'; the slowdown is the busy processes' CPU time for the same work"
	print "against no profiler; bytes per host-hour are what it wrote, scaled to an hour; whole is the"
	print "share of the busy processes' samples whose stack runs from main or the thread's start to"
	print "the worker with no unknown frame. The query merges one hour of one host (the store of a"
	print "recce run, its minute copied 59 times)."
	print ""
	print "| tool | profiler CPU, s | of one core | peak RSS | busy CPU, s | slowdown | bytes | per host-hour | whole stacks |"
	print "|---|---|---|---|---|---|---|---|---|"
	tool_field(CO, "none", "busy_cpu_s")
	base = MED
	split("none perf perf-dwarf recce", T, " ")
	for (t = 1; t <= 4; t++) {
		if (!(T[t] in CO))
			continue
		cpu = cont_row(T[t], "prof_cpu_s", "", "%.2f")
		tool_field(CO, T[t], "prof_cpu_s")
		c = MED
		tool_field(CO, T[t], "prof_wall_s")
		share = MED > 0 ? 100 * c / MED : 0
		busy = cont_row(T[t], "busy_cpu_s", "", "%.2f")
		tool_field(CO, T[t], "busy_cpu_s")
		slow = base > 0 ? 100 * (MED / base - 1) : 0
		nbytes = cont_row(T[t], "bytes", "", "%.0f")
		tool_field(CO, T[t], "bytes")
		b = MED
		tool_field(CO, T[t], "prof_wall_s")
		hour = MED > 0 ? b * 3600 / MED : 0
		rss = tool_field(CO, T[t], "prof_maxrss_kb") ? sprintf("%.1f MB", MED / 1024) : "-"
		whole = tool_field(CO, T[t], "whole_pct") && T[t] != "none" ? sprintf("%.2f%%", MED) : "-"
		printf "| %s | %s | %.3f%% | %s | %s | %+.2f%% | %s | %.1f MB | %s |\n", T[t], cpu, share, rss, busy, slow,
			nbytes, hour / 1e6, whole
		if (T[t] == "recce") {
			rshare = share
			rslow = slow
			rbytes = hour
			rwhole = MED
		}
	}
	q = cont_row("query", "query_s", "", "%.3f")
	if (q != "")
		printf "\nOne hour of one host, %d process windows, merged by `recce query`: %s s.\n", CO["query", 1, "rows"], q
	print ""
	budget("continuous agent with whole stacks, its own CPU (2 busy, 200 idle processes)", "< 0.5% of one core",
		sprintf("%.3f%%", rshare), rshare < 0.5,
		sprintf("the agent used %.3f%% of one core", rshare))
	budget("continuous agent, busy samples with whole stacks (no frame pointers)", "> 99%",
		sprintf("%.2f%%", rwhole), rwhole > 99,
		sprintf("%.2f%% of the busy processes' samples had whole stacks", rwhole))
	budget("continuous agent, busy processes slowed", "< 0.5%", sprintf("%+.2f%%", rslow), rslow < 0.5,
		sprintf("the busy processes used %.2f%% more CPU for the same work", rslow))
	caveat("a slowdown below 1% is within the spread of runs on a shared machine")
	budget("continuous store, bytes per host-hour", "stated", sprintf("%.1f MB", rbytes / 1e6), 1, "")
	if (tool_field(CO, "query", "query_s"))
		budget("query of one hour of one host", "< 1 s", sprintf("%.3f s", MED), MED < 1,
			sprintf("recce query took %.3f s for an hour", MED))
}

# One figure of the agent's: tool t's field f, in the JSON and as text.
function agent_figure(t, f, fmt) {
	if (!tool_field(AG, t, f))
		return "n/a"
	J["agent"] = J["agent"] (J["agent"] == "" ? "" : ",\n    ") \
		sprintf("{\"tool\": %s, \"figure\": %s, \"value\": %s}", js(t), js(f), jstats())
	return spread(fmt)
}

# 15. The agent.
function figure_agent(    cpu, rss, tls, extra, loc) {
	if (!("idle" in AG))
		return
	print "## 15. The agent"
	print ""
	print "`recce agent --listen 127.0.0.1:PORT --tls DIR` (certificates of `recce certs init`). Idle:"
	print "its CPU time over 30 s with nothing asked of it (from /proc/PID/schedstat), and its resident"
	print "memory. The stream: `recce replay` of a file of 200,000 traced calls, printed here locally,"
	print "through the agent's local socket, and through TLS; a line is an event. A recording: `record"
	print "-p PID -d 5 -o FILE` of a busy process, locally and through TLS, the profile written here."
	print ""
	print "| figure | value |"
	print "|---|---|"
	printf "| idle agent, CPU of one core | %s%% |\n", agent_figure("idle", "cpu_pct", "%.4f")
	cpu = MED
	printf "| idle agent, resident memory | %s kB |\n", agent_figure("idle", "rss_kb", "%.0f")
	rss = MED
	printf "| replay, events a second, locally | %s |\n", agent_figure("stream-local", "events_per_s", "%.0f")
	printf "| replay, events a second, local socket | %s |\n", agent_figure("stream-unix", "events_per_s", "%.0f")
	printf "| replay, events a second, TLS | %s |\n", agent_figure("stream-tls", "events_per_s", "%.0f")
	tls = MED
	printf "| record -d 5, wall s, locally | %s |\n", agent_figure("record-local", "wall_s", "%.3f")
	loc = MED
	printf "| record -d 5, wall s, through TLS | %s |\n", agent_figure("record-tls", "wall_s", "%.3f")
	extra = MED - loc
	print ""
	budget("idle agent, its CPU", "< 0.1% of one core", sprintf("%.4f%%", cpu), cpu < 0.1,
		sprintf("the idle agent used %.4f%% of a core", cpu))
	budget("idle agent, resident memory", "< 20 MB", sprintf("%.1f MB", rss / 1024), rss < 20 * 1024,
		sprintf("the idle agent held %.1f MB", rss / 1024))
	budget("agent's TLS stream of trace events", ">= 100,000 events/s", sprintf("%.0f events/s", tls),
		tls >= 100000, sprintf("the TLS stream carried %.0f events/s", tls))
	budget("record -d 5 through the agent over TLS", "within 0.5 s of local", sprintf("%+.3f s", extra),
		extra < 0.5, sprintf("record through the agent took %.3f s more than locally", extra))
}

# 16. recce tasks --libuv.
function figure_libuv(    none, bare, rec, cost, floor, seen, calls, turn) {
	if (!("recce" in UV))
		return
	print "## 16. Callbacks of a libuv program (recce tasks --libuv)"
	print ""
	print "A libuv loop whose idle callback runs at every turn (bench/workloads/uvloop.c) for 3 s: its"
	print "turn alone, under a bare uprobe and uretprobe on the callback (uprobe-bare, the floor of any"
	print "probe), and under `recce tasks --libuv --limit 0`, which probes each of libuv's 40 indirect calls and the"
	print "instruction after each, so a turn pays for the idle callback's call and return and for libuv's"
	print "other indirect calls of the turn."
	print ""
	print "| tool | ns a turn | cost per callback, ns | callbacks counted |"
	print "|---|---|---|---|"
	tool_field(UV, "none", "ns_per_callback")
	none = MED
	J["uv"] = J["uv"] (J["uv"] == "" ? "" : ",\n    ") sprintf("{\"tool\": \"none\", \"ns_per_callback\": %s}", jstats())
	printf "| none | %s | | |\n", spread("%.1f")
	tool_field(UV, "bare", "ns_per_callback")
	bare = MED
	J["uv"] = J["uv"] ",\n    " sprintf("{\"tool\": \"bare\", \"ns_per_callback\": %s}", jstats())
	printf "| uprobe-bare on idle_work | %s | %.0f | |\n", spread("%.1f"), bare - none
	tool_field(UV, "recce", "ns_per_callback")
	rec = MED
	J["uv"] = J["uv"] ",\n    " sprintf("{\"tool\": \"recce\", \"ns_per_callback\": %s}", jstats())
	turn = spread("%.1f")
	cost = rec - none
	floor = bare - none
	tool_field(UV, "recce", "seen")
	seen = MED
	tool_field(UV, "recce", "callbacks")
	calls = MED
	printf "| recce tasks --libuv | %s | %.0f | %.0f of %.0f |\n", turn, cost, seen, calls
	print ""
	budget("recce tasks --libuv, cost per callback", "stated beside a bare uprobe pair",
		sprintf("%.1f us (uprobe pair on the callback: %.1f us)", cost / 1000, floor / 1000), 1, "")
}

# 17. recce trace --fast.
function fast_row(t, what, none,    cost) {
	if (!tool_field(FA, t, "ns_per_call"))
		return -1
	J["fast"] = J["fast"] (J["fast"] == "" ? "" : ",\n    ") sprintf("{\"tool\": \"%s\", \"ns_per_call\": %s}", t, jstats())
	cost = MED - none
	if (t == "none")
		printf "| %s | %s | |\n", what, spread("%.2f")
	else
		printf "| %s | %s | %.1f |\n", what, spread("%.2f"), cost
	return cost
}

function figure_fast(    none, fast, fret, fslow, uprobe, bare, uft, first, lost, what, why, clock) {
	if (!("fast" in FA))
		return
	print "## 17. Calls traced in-process (recce trace --fast)"
	print ""
	print "The calls workload (bench/workloads/calls.c: one small function called in bursts of 8,192, 50 ms"
	print "apart, only the bursts timed; 40 bursts, 8 under uprobes) alone; under"
	print "`recce trace --fast -p PID traced` (recce's library loaded into it, a jump on the function's"
	print "entry, each call written to the thread's ring and read by recce into a trace file), and with"
	print "--return (a jump on its exit too: here the function is short enough to move whole); under"
	print "`recce trace traced` through uprobes (calls only, as --fast); under a bare uprobe and uretprobe"
	print "pair (uprobe-bare, the kernel's floor for a call and its return); and a -pg build of it under"
	print "`uftrace record` (every function's entry and return). The cost is the workload's own time per"
	print "call less its time alone."
	print ""
	print "| tool | ns a call | cost, ns |"
	print "|---|---|---|"
	tool_field(FA, "none", "ns_per_call")
	none = MED
	fast_row("none", "none", none)
	fast = fast_row("fast", "recce trace --fast (calls)", none)
	fret = fast_row("fast-ret", "recce trace --fast --return (calls and returns)", none)
	fslow = fast_row("fast-slow", "recce trace --fast --slow 10s (the flight recorder, no slow call)", none)
	uprobe = fast_row("uprobe", "recce trace, uprobes (calls)", none)
	bare = fast_row("bare", "uprobe-bare (call and return)", none)
	uft = fast_row("uftrace", "uftrace record, -pg (entry and return)", none)
	tool_field(FA, "fast", "lost")
	lost = MED
	print ""
	if (tool_field(FA, "first", "first_ms")) {
		first = MED
		J["fast"] = J["fast"] ",\n    " sprintf("{\"tool\": \"first\", \"first_ms\": %s}", jstats())
		printf "`recce trace --fast -p PID traced --count 1` on the busy workload, from its start to its exit\n"
		printf "(injection, trampoline and jump, the first event, the jump taken out): %s ms.\n", spread("%.1f")
		print ""
	}
	if (fret > 0 && bare > 0) {
		what = sprintf("%.1f ns a call and its return, %.0fx under the pair (%.0f ns); calls only %.1f ns", fret, bare / fret, bare, fast)
		why = sprintf("a traced call and return cost %.1f ns, %.0fx under the uprobe pair", fret, bare / fret)
		if (lost > 0) {
			what = what sprintf(", %.0f calls not recorded", lost)
			why = "calls were lost: recce read the rings too slowly"
		}
		budget("recce trace --fast, cost per traced call", "100x under the uprobe pair",
			what, bare / fret >= 100 && lost == 0, why)
	}
	if (fret > 0 && tool_field(FA, "clock", "ns_per_read")) {
		clock = MED
		J["fast"] = J["fast"] ",\n    " sprintf("{\"tool\": \"clock\", \"ns_per_read\": %s}", jstats())
		budget("recce trace --fast, a call and its return", "40 ns or less",
			sprintf("%.1f ns, of which two reads of the CPU's clock %.1f ns (%.1f ns a read): %.1f ns for the rest", fret, 2 * clock, clock, fret - 2 * clock),
			fret <= 40, sprintf("a traced call and its return cost %.1f ns", fret))
	}
	if (fslow > 0 && fret > 0)
		budget("recce trace --fast --slow with no slow call", "within 2x of --fast --return, nothing written",
			sprintf("%.1f ns against %.1f ns a call and its return", fslow, fret), fslow <= 2 * fret,
			sprintf("the flight recorder cost %.1fx what --return does", fslow / fret))
	if (uft > 0 && fret > 0)
		budget("recce trace --fast beside uftrace", "stated",
			sprintf("%.1f ns against %.1f ns, calls and returns", fret, uft), 1, "")
	if (first > 0)
		budget("recce trace --fast, injection to first event", "< 100 ms",
			sprintf("%.1f ms (start to exit)", first), first < 100,
			sprintf("from start to exit it took %.1f ms", first))
	fast_reader_table()
	fast_tree_table()
}

function fast_tree_table(    alone, tree, events, lost, fns) {
	if (!tool_field(FA, "tree-alone", "rps"))
		return
	alone = MED
	print ""
	printf "`recce trace --fast -p PID 'redis-server:*' --tree` (the calls printed as trees, into /dev/null)\n"
	print "on Debian's redis-server under `redis-benchmark -n 200000 -c 20 -t set,get` (requests a second,"
	print "the mean of SET and GET), against redis-server alone; the events recce showed, and the most"
	print "it counted as not recorded in one run."
	print ""
	print "| run | requests a second | slowdown | functions traced | events | not recorded |"
	print "|---|---|---|---|---|---|"
	printf "| alone | %s | | | | |\n", spread("%.0f")
	J["fast"] = J["fast"] ",\n    " sprintf("{\"tool\": \"tree-alone\", \"rps\": %s}", jstats())
	if (!tool_field(FA, "tree-tree", "rps"))
		return
	tree = MED
	J["fast"] = J["fast"] ",\n    " sprintf("{\"tool\": \"tree-tree\", \"rps\": %s}", jstats())
	printf "| --tree over every function | %s | %.2fx", spread("%.0f"), alone / tree
	tool_field(FA, "tree-tree", "functions")
	fns = MED
	tool_field(FA, "tree-tree", "events")
	events = MED
	tool_field(FA, "tree-tree", "lost")
	lost = MAX
	printf " | %d | %d | %d |\n", fns, events, lost
	print ""
	budget("recce trace --fast --tree over every function of a real server under load", "slowdown stated, losses counted",
		sprintf("%.2fx slower (%d functions of redis-server), %d events, %d not recorded (counted)", alone / tree, fns, events, lost), 1, "")
}

# One row of the reader's table; the most lost in any run, or -1.
function reader_row(t, what,    made, kept, lost, each) {
	if (!tool_field(FA, t, "kept"))
		return -1
	kept = MIN
	tool_field(FA, t, "made")
	made = MED
	tool_field(FA, t, "lost")
	lost = MAX
	each = tool_field(FA, t, "bytes") ? sprintf("%.1f", MED) : "(text)"
	if (tool_field(FA, t, "bytes"))
		READER_BYTES = MAX > READER_BYTES ? MAX : READER_BYTES
	tool_field(FA, t, "cpu_s")
	printf "| %s | %d | %d | %d | %s | %.2f |\n", what, made, kept, lost, each, MED
	J["fast"] = J["fast"] ",\n    " sprintf("{\"tool\": \"%s\", \"made\": %d, \"kept_min\": %d, \"lost_max\": %d, \"bytes_per_event\": %s, \"cpu_s\": %s}", t, made, kept, lost, each == "(text)" ? "null" : each, jn(MED))
	return made - kept > lost ? made - kept : lost
}

function fast_reader_table(    worst, l, t, modes, n, i, what) {
	if (!("reader-file" in FA))
		return
	print ""
	print "recce trace --fast's reader: 4 threads of tests/targets/tight making 1,000,000 calls a second"
	print "together for 3 s, traced into a trace file (`-o`), calls alone and calls with returns, and to"
	print "text (the terminal's lines, into a file). Events kept are the fewest of the runs, lost the most"
	print "recce counted in one; recce's CPU is its user and system time over the run (median)."
	print ""
	print "| output | events made | kept | lost | bytes an event | recce CPU, s |"
	print "|---|---|---|---|---|---|"
	n = split("reader-file reader-file-ret reader-text", modes, " ")
	split("-o FILE (calls)|-o FILE --return (calls and returns)|text (calls)", what, "|")
	worst = 0
	READER_BYTES = 0
	for (i = 1; i <= n; i++) {
		l = reader_row(modes[i], what[i])
		if (l > worst)
			worst = l
	}
	print ""
	budget("recce trace --fast reader, 1M calls/s from 4 threads", "nothing lost, to a file and to text; under 64 bytes an event",
		sprintf("%d events lost at most; %.1f bytes an event at most", worst, READER_BYTES),
		worst == 0 && READER_BYTES > 0 && READER_BYTES < 64,
		sprintf("%d events were lost, or a file took %.1f bytes an event", worst, READER_BYTES))
}

function print_budgets(    i) {
	print "## Budgets"
	print ""
	print "| budget | target | measured | verdict |"
	print "|---|---|---|---|"
	for (i = 1; i <= nb; i++)
		printf "| %s | %s | %s | %s |\n", B_name[i], B_budget[i], B_measured[i], B_verdict[i]
	print ""
	for (i = 1; i <= nb; i++)
		if (B_sentence[i] != "")
			print "- **MISS**: " B_sentence[i]
	for (i = 1; i <= nb; i++)
		if (B_caveat[i] != "")
			print "- **Noise**: " B_caveat[i]
	print ""
	print "Raw measurements of every run: bench/results/latest.json (\"runs\")."
}

function write_json(    i, k, n, f, p, eq, sep, v) {
	if (json == "")
		return
	printf "{\n  \"machine\": {" > json
	sep = ""
	split("cpu cores kernel perf recce commit tree max_stack date reps loadavg_start loadavg_end seconds", f, " ")
	for (i = 1; i in f; i++) {
		v = M[f[i]]
		printf "%s%s: %s", sep, js(f[i]), (v ~ /^[0-9]+(\.[0-9]+)?$/ ? v : js(v)) > json
		sep = ", "
	}
	printf "},\n" > json
	printf "  \"slowdown\": [\n    %s\n  ],\n", J["slowdown"] > json
	printf "  \"profiler_cpu\": [\n    %s\n  ],\n", J["cost"] > json
	printf "  \"output_size\": [\n    %s\n  ],\n", J["size"] > json
	printf "  \"time_to_flamegraph\": [\n    %s\n  ],\n", J["flame"] > json
	printf "  \"accuracy\": {%s},\n", J["accuracy"] > json
	printf "  \"symbolization\": {\"tools\": [\n    %s\n  ], \"table_same_frames_pct\": %s, \"same_frames_as_addr2line_pct\": %s},\n", \
		J["sym"], jn(M["table_same_pct"]), jn(M["same_frames_pct"]) > json
	printf "  \"memory\": [\n    %s\n  ],\n", J["memory"] > json
	printf "  \"top\": [\n    %s\n  ],\n", J["top"] > json
	printf "  \"trace\": [\n    %s\n  ],\n", J["trace"] > json
	printf "  \"events\": [\n    %s\n  ],\n", J["events"] > json
	printf "  \"offcpu\": [\n    %s\n  ],\n", J["offcpu"] > json
	printf "  \"alloc\": [\n    %s\n  ],\n", J["alloc"] > json
	printf "  \"patch\": [\n    %s\n  ],\n", J["patch"] > json
	printf "  \"continuous\": [\n    %s\n  ],\n", J["cont"] > json
	printf "  \"binaries\": [\n    %s\n  ],\n", J["bins"] > json
	printf "  \"agent\": [\n    %s\n  ],\n", J["agent"] > json
	printf "  \"libuv\": [\n    %s\n  ],\n", J["uv"] > json
	printf "  \"fast\": [\n    %s\n  ],\n", J["fast"] > json
	printf "  \"python\": [\n    %s\n  ],\n", J["python"] > json
	printf "  \"persample\": [\n    %s\n  ],\n", J["persample"] > json
	printf "  \"budgets\": [\n" > json
	for (i = 1; i <= nb; i++)
		printf "    {\"budget\": %s, \"target\": %s, \"measured\": %s, \"verdict\": %s, \"note\": %s, \"noise\": %s}%s\n",
			js(B_name[i]), js(B_budget[i]), js(B_measured[i]), js(B_verdict[i]), js(B_sentence[i]), js(B_caveat[i]),
			(i < nb ? "," : "") > json
	printf "  ],\n  \"failed_runs\": %d,\n  \"runs\": [\n", failed > json
	sep = ""
	for (i = 1; i <= nlines; i++) {
		n = split(rawline[i], p, "\t")
		printf "%s    {", sep > json
		for (k = 1; k <= n; k++) {
			eq = index(p[k], "=")
			v = substr(p[k], eq + 1)
			printf "%s%s: %s", (k > 1 ? ", " : ""), js(substr(p[k], 1, eq - 1)),
				(v ~ /^-?[0-9]+(\.[0-9]+)?$/ ? v : js(v)) > json
		}
		printf "}" > json
		sep = ",\n"
	}
	printf "\n  ]\n}\n" > json
	close(json)
}

# 18. Python calls traced, and dump of a CPython.
function figure_python(    alone, traced, caller, ms, us, share, hz) {
	if (!("none" in PT) && !("recce" in PD) && !("recce" in PB))
		return
	print "## 18. Python: `recce trace 'py:...'` and `recce dump`"
	print ""
	if (("none" in PT) && ("recce" in PT)) {
		print "The python workload (bench/workloads/pywork.py, a hundredth of its calibrated work: calls,"
		print "a dict, formatting) under Debian's python3.11, alone and launched by `recce trace"
		print "'py:no_such_function' --limit 0 --count 0 -- ...`: no call is shown, but every Python call"
		print "still traps on CPython's function__entry probe, and CPython runs in its line-tracing mode,"
		print "which its function probes need; then with `--caller` too, which has the probe's program"
		print "read the thread's Python frames at every call. No budget: what docs/recce-trace.md says"
		print "it costs."
		print ""
		print "| run | wall s | CPU s |"
		print "|---|---|---|"
		get_of(PT, "none", "wall_s"); alone = MED
		printf "| alone | %s |", spread("%.3f")
		get_of(PT, "none", "cpu_s"); printf " %s |\n", spread("%.3f")
		get_of(PT, "recce", "wall_s"); traced = MED
		printf "| traced | %s |", spread("%.3f")
		get_of(PT, "recce", "cpu_s"); printf " %s |\n", spread("%.3f")
		if ("recce-caller" in PT) {
			get_of(PT, "recce-caller", "wall_s"); caller = MED
			printf "| traced, --caller | %s |", spread("%.3f")
			get_of(PT, "recce-caller", "cpu_s"); printf " %s |\n", spread("%.3f")
		}
		print ""
		if (alone > 0) {
			printf "Traced, the workload took %.0fx its time alone", traced / alone
			if (caller > 0)
				printf "; with --caller (the thread's Python frames read at every call), %.0fx",
					caller / alone
			printf ".\n\n"
			jappend("python", "{\"case\": \"trace-py\", \"slowdown\": " jn(traced / alone) "}")
			if (caller > 0)
				jappend("python", "{\"case\": \"trace-py-caller\", \"slowdown\": " jn(caller / alone) "}")
		}
	}
	if ("recce" in PB) {
		# The rate of the runs that worked (a failed one has no fields).
		get_of(PB, "recce", "hz")
		hz = MED
		get_of(PB, "recce", "runs")
		printf "The Python frame program's own time at the samples of `recce record -F %d` of the\n", hz
		printf "python workload, as the kernel counts it (kernel.bpf_stats_enabled, read with bpftool;\n"
		printf "%s runs a recording): ", spread("%d")
		get_of(PB, "recce", "us_per_run")
		us = MED
		share = us * hz / 10000
		printf "%s us a sample,\n", spread("%.2f")
		printf "%.3f%% of the target's CPU time at %d Hz. It is what recce adds inside the target to\n",
			share, hz
		print "the sampling perf does too, measured where the target's CPU time alone varies by more"
		print "than a percent here (section 1)."
		print ""
		print "No Python sampler runs beside it: py-spy is not packaged for Debian 12 (nor reachable"
		print "here without PyPI), and Debian 12's austin (1.0.1) does not read CPython 3.11 (\"Interpreter"
		print "state search timed out\"); perf's own cost at the same rate is section 1's."
		print ""
		jappend("python", "{\"case\": \"frame-program\", \"us_per_sample\": " jstats() "}")
		budget(sprintf("Python frames at %d Hz: the frame program's share of the target's CPU", hz),
			"under 1%", sprintf("%.3f%% (%.2f us a sample)", share, us), share < 1,
			sprintf("the Python frame program took %.2f us a sample, %.3f%% of the target's CPU.", us, share))
	}
	if ("recce" in PD) {
		get_of(PD, "recce", "wall_s")
		ms = MED * 1000
		printf "`recce dump -p PID` of a python3.11 with 100 threads waiting five calls deep\n"
		printf "(bench/workloads/pythreads.py), the median of five dumps a repetition: %s ms.\n\n",
			sprintf(NV > 1 ? "%.1f (%.1f..%.1f)" : "%.1f", MED * 1000, MIN * 1000, MAX * 1000)
		jappend("python", "{\"case\": \"dump-100-threads\", \"wall_s\": " jstats() "}")
		budget("dump of a 100-thread CPython", "under 50 ms", sprintf("%.1f ms", ms), ms < 50,
			sprintf("recce dump took %.1f ms on 100 Python threads, above 50 ms.", ms))
	}
}

# Microseconds of the target's CPU a sample of tool t in repetition r,
# over its run alone in the same repetition ("" without both runs).
function ps_each(t, r) {
	if (!((t, r, "cpu_s") in PS) || !(("none", r, "cpu_s") in PS) || PS[t, r, "samples"] <= 0)
		return ""
	return 1e6 * (PS[t, r, "cpu_s"] - PS["none", r, "cpu_s"]) / PS[t, r, "samples"]
}

# V = ps_each of tool t, one a repetition; with floor, less perf's sample
# with no stack in the same repetition: the stack's own part.
function ps_cost(t, floor,    r, n, c, f) {
	n = 0
	for (r = 1; r <= maxrep; r++) {
		c = ps_each(t, r)
		f = floor ? ps_each("perf-nostack", r) : 0
		if (c != "" && f != "")
			V[++n] = c - f
	}
	return stats(n)
}

function figure_persample(    tools, what, nt, i, t, part, fp, dwarf, autop) {
	if (!("none" in PS))
		return
	print "## 19. Cost of a sample, by how its stack is taken"
	print ""
	printf "The cpu2 workload (two threads, frame pointers kept) sampled at %d Hz a thread, and\n", PS["none", 1, "hz"]
	print "the same work alone just before: the workload's own CPU time (getrusage) over its time"
	print "alone, per sample. At this rate a microsecond a sample is several percent of its CPU"
	print "time, well above its noise. The kernel's sample with no stack at all (perf record"
	print "without -g) is a floor every way pays, dominated on a virtual machine by its timer;"
	print "the stack's part is the rest: the kernel's frame-pointer walk (perf -g, recce fp),"
	print "its copy of 8 KiB of the stack (perf --call-graph dwarf), or both (recce's default, auto)."
	print ""
	print "| how | samples | us a sample | the stack's part, us |"
	print "|---|---|---|---|"
	nt = split("perf-nostack perf-fp perf-dwarf recce-fp recce-auto", tools, " ")
	split("perf record, no stack|perf record -g|perf record --call-graph dwarf,8192|recce record --call-graph fp|recce record (auto,8192)", what, "|")
	for (i = 1; i <= nt; i++) {
		t = tools[i]
		if (!(t in PS))
			continue
		get_of(PS, t, "samples")
		printf "| %s | %d |", what[i], MED
		ps_cost(t, 0)
		printf " %s |", spread("%.2f")
		ps_cost(t, 1)
		part[t] = MED
		printf " %s |\n", t == "perf-nostack" ? "(the floor)" : spread("%.2f")
		jappend("persample", "{\"how\": " js(t) ", \"stack_us\": " jstats() "}")
	}
	print ""
	fp = part["perf-fp"]; dwarf = part["perf-dwarf"]; autop = part["recce-auto"]
	if (fp == "" || dwarf == "" || autop == "")
		return
	printf "auto's stack costs %.1fx the kernel's frame-pointer walk and %.1fx its 8 KiB copy: it\n", autop / fp, autop / dwarf
	print "is both, the copy for the frames without frame pointers and the walk for the callers past"
	print "the copy's end. Walking by the unwind tables in the kernel at the sample (no copy), as"
	print "the OpenTelemetry profiler does, is not built."
	print ""
	budget("whole stacks (auto): the stack's cost per sample within 2x of the kernel's frame-pointer walk",
		"under 2x", sprintf("%.1fx (%.2f us against %.2f us)", autop / fp, autop, fp), fp > 0 && autop <= 2 * fp,
		sprintf("auto's stack took %.2f us a sample, %.1fx the frame-pointer walk's %.2f us.", autop, autop / fp, fp))
	budget("whole stacks (auto): the stack's cost per sample 5x below the 8 KiB DWARF copy",
		"5x below", sprintf("%.1fx of the copy (%.2f us against %.2f us)", autop / dwarf, autop, dwarf), autop > 0 && dwarf >= 5 * autop,
		sprintf("auto's stack took %.2f us a sample, the 8 KiB copy alone %.2f us.", autop, dwarf))
}
