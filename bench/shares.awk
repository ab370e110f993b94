# shares.awk: measured CPU shares of split's four leaves in folded stacks
# ("frame;frame;...;leaf COUNT" lines, from `recce report --folded` or
# stackcollapse.awk), against the true shares the workload measured.
#
#     awk -f bench/shares.awk -v true_a=50.1 -v true_b=29.9 \
#         -v true_c=15.0 -v true_d=5.0 FOLDED
#
# A sample belongs to the innermost leaf on its stack; samples with no leaf
# on their stack (start-up, the kernel between calls) are left out of the
# shares. Prints tab-separated key=value fields: the samples counted, each
# leaf's share in percent, and max_err_pts, the largest absolute error in
# percentage points.

{
	n = $NF
	stack = $0
	sub(/ [0-9]+$/, "", stack)
	all += n
	k = split(stack, f, ";")
	for (i = k; i >= 1; i--) {
		if (f[i] ~ /^leaf_[abcd]$/) {
			got[substr(f[i], 6, 1)] += n
			in_leaves += n
			break
		}
	}
}

END {
	truth["a"] = true_a; truth["b"] = true_b; truth["c"] = true_c; truth["d"] = true_d
	worst = 0
	out = "samples_all=" all "\tsamples_leaves=" in_leaves
	for (j = 1; j <= 4; j++) {
		l = substr("abcd", j, 1)
		share = in_leaves ? 100 * got[l] / in_leaves : 0
		err = share - truth[l]
		if (err < 0)
			err = -err
		if (err > worst)
			worst = err
		out = out sprintf("\tshare_%s=%.3f", l, share)
	}
	print out sprintf("\tmax_err_pts=%.3f", worst)
}
