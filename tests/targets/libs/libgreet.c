/*
 * libgreet: the private library of tests/targets/needs, found by the
 * program's RUNPATH ($ORIGIN/libs), as a package's own libraries are.
 */
#include <stdio.h>

/* Counts its calls and returns how many there were. */
int greet(const char *who)
{
	static int calls;

	printf("hello, %s\n", who);
	return ++calls;
}
