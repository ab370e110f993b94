/*
 * The replacements recce patch loads into tests/targets/patchee: the same
 * answers, computed another way, and *who = 2 to say whose code ran.
 * wrong_fib has another signature, for the refusal.
 */
unsigned long long fast_fib(unsigned n, int *who)
{
	unsigned long long a = 0, b = 1;

	*who = 2;
	for (unsigned i = 0; i < n; i++) {
		unsigned long long t = a + b;
		a = b;
		b = t;
	}
	return a;
}

long payroll_total(long base, int *who) __asm__("_ZN7payroll5total17h0123456789abcdefE");
long payroll_total(long base, int *who)
{
	*who = 2;
	return base + base + base;
}

int wrong_fib(int n)
{
	return n;
}
