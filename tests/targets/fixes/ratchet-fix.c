/*
 * The replacement recce patch loads into ratchet built with -fipa-ra
 * (tests/cli/patch.t): old_fibonacci's answers by fast doubling, with
 * every register a function may change changed, as a replacement that
 * calls into the C library would.
 */
unsigned long long fast_fibonacci(unsigned n)
{
	unsigned long long f = 0, g = 1; /* F(k), F(k + 1) for the bits of n seen */

	for (int bit = 31; bit >= 0; bit--) {
		unsigned long long f2 = f * (2 * g - f), g2 = f * f + g * g;
		f = f2;
		g = g2;
		if (n >> bit & 1) {
			unsigned long long next = f + g;
			f = g;
			g = next;
		}
	}
	__asm__ volatile("mov %0, %%rsi\n\tmov %0, %%rdi\n\tmov %0, %%rcx\n\tmov %0, %%r8\n\t"
			 "mov %0, %%r9\n\tmov %0, %%r10\n\tmov %0, %%r11\n\tmov %0, %%rdx\n\t"
			 "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm7, %%xmm7"
			 :
			 : "r"(f)
			 : "rsi", "rdi", "rcx", "r8", "r9", "r10", "r11", "rdx", "xmm0", "xmm1",
			   "xmm7");
	return f;
}
