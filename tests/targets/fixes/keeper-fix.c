/*
 * The replacements recce patch loads into tests/targets/keeper: the same
 * results, *who = 2 to say whose code ran, and every register a function
 * may change changed, as a replacement that calls into the C library
 * would.
 */
#define CLOBBER(v)                                                                                 \
	__asm__ volatile("mov %0, %%rsi\n\tmov %0, %%rdi\n\tmov %0, %%rcx\n\tmov %0, %%r8\n\t"     \
			 "mov %0, %%r9\n\tmov %0, %%r10\n\tmov %0, %%r11\n\tmov %0, %%rdx\n\t"     \
			 "pxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\tpxor %%xmm7, %%xmm7\n\t"   \
			 "pxor %%xmm15, %%xmm15"                                                   \
			 :                                                                         \
			 : "r"((long)(v))                                                          \
			 : "rsi", "rdi", "rcx", "r8", "r9", "r10", "r11", "rdx", "xmm1", "xmm2",   \
			   "xmm7", "xmm15")

long fast_sum(long n, int *who)
{
	long s = 0;

	*who = 2;
	for (long i = 0; i < n; i++)
		s += (i ^ (s >> 3)) & 0xff;
	CLOBBER(s);
	return s;
}

long fast_many(long a, long b, long c, long d, long e, long f, long g, long h, int *who)
{
	long r = h * 8 + g * 7 + f * 6 + e * 5 + d * 4 + c * 3 + b * 2 + a;

	*who = 2;
	CLOBBER(r);
	return r;
}

double fast_ratio(double x, double y, int *who)
{
	double r = x * (1 / y);

	*who = 2;
	CLOBBER(*who);
	return r;
}

struct trio {
	long a, b, c;
};

struct trio fast_trio(long n, int *who)
{
	struct trio t = {n, n + n, n + n + n};

	*who = 2;
	CLOBBER(n);
	return t;
}
