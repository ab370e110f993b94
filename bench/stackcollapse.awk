# stackcollapse.awk: folds `perf script` output into one line per distinct
# stack, "comm;outermost;...;leaf COUNT", the input of flamegraph.pl and of
# the perf side of `make bench` (the anchor pipeline of figure 4 and the
# shares of figure 5). It does what Brendan Gregg's stackcollapse-perf.pl
# does by default, in POSIX awk: the process name is the root, symbol
# offsets are dropped, inlined frames are kept, each sample counts 1.
#
#     perf script -i perf.data | awk -f bench/stackcollapse.awk > out.folded

# A sample's header: "COMM PID[/TID] [CPU] TIME: PERIOD EVENT:". The name
# may hold spaces, so cut everything from the pid onwards.
/^[^ \t]/ {
	comm = $0
	sub(/ +[0-9]+(\/[0-9]+)? +(\[[0-9]+\] +)?[0-9]+\.[0-9]+:.*$/, "", comm)
	gsub(/;/, ":", comm)
	nframes = 0
	next
}

# A frame: "\tADDRESS SYMBOL+0xOFFSET (DSO)", innermost first.
/^[ \t]+[0-9a-f]+ / {
	line = $0
	sub(/^[ \t]+[0-9a-f]+ /, "", line)
	sub(/ \([^()]*\)$/, "", line)
	sub(/\+0x[0-9a-f]+$/, "", line)
	gsub(/;/, ":", line)
	frame[++nframes] = line
	next
}

# A blank line ends the sample.
/^$/ { flush() }

END { flush(); for (s in count) print s, count[s] }

function flush(    s, i) {
	if (comm == "")
		return
	s = comm
	for (i = nframes; i >= 1; i--)
		s = s ";" frame[i]
	count[s]++
	comm = ""
	nframes = 0
}
