/*
 * The replacement `make bench` patches into bench/workloads/calls.c's
 * traced(): the same result, so that the figure is the patch's own cost.
 */
#include <stdint.h>

uint64_t fast_traced(uint64_t x)
{
	return x * 2654435761u + 1;
}
