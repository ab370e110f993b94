# compare-frames.awk: how often two symbolizers agree, for figure 6 of
# `make bench`. Both inputs are in the format of `addr2line -a -f -i`: an
# address line ("0x..."), then a function line and a file:line line per
# frame. Prints the percentage of addresses whose frames are identical in
# both, after dropping addr2line's " (discriminator N)" suffixes.
#
#     awk -f bench/compare-frames.awk OURS THEIRS

FNR == 1 { file++; n = 0 }

/^0x[0-9a-f]+$/ { n++; if (file == 1) count = n; next }

{
	sub(/ \(discriminator [0-9]+\)$/, "")
	frames[file, n] = frames[file, n] "|" $0
}

END {
	for (i = 1; i <= count; i++)
		same += frames[1, i] == frames[2, i]
	printf "%.3f\n", count ? 100 * same / count : 0
}
