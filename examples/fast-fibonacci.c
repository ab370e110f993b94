/*
 * fast-fibonacci: the fix for ratchet's slow /fibonacci, built as a shared
 * object for `recce patch` to load into the running server (`make
 * demo-patch`): the same signature as old_fibonacci, the same answers, in
 * n steps instead of about fibonacci(n) calls.
 */
unsigned long long fast_fibonacci(unsigned n)
{
	unsigned long long a = 0, b = 1;

	for (unsigned i = 0; i < n; i++) {
		unsigned long long t = a + b;
		a = b;
		b = t;
	}
	return a;
}
