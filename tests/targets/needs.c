/*
 * A program that needs a library no other program here loads (libgreet,
 * beside it in libs/, found by its RUNPATH): `recce trace -- CMD` must
 * find greet before the program runs, in the files the loader will map.
 *
 *   needs [N]   calls greet N times (default 3), then exits 0
 */
#include <stdlib.h>

int greet(const char *who);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	for (int i = 0; i < n; i++)
		greet("needs");
	return 0;
}
