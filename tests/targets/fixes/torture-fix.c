/*
 * The replacement recce patch loads into tests/targets/torture: work()'s
 * result, and *who = 2 to say whose code ran.
 */
long fast_work(long x, long *who)
{
	*who = 2;
	return x + x + x + 1;
}
