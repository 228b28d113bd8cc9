/* SPDX-License-Identifier: MIT */
/*
 * A program built with -finstrument-functions, for test_instrument: it knows nothing
 * of ringtrace. Its calls, one run:
 *
 *	main			1
 *	work_exported		10, each calling leaf_static twice
 *	leaf_static (static)	20 + 3, about 20 us each
 *	fact_rec (recursive)	5 nested, about 10 us per level
 *	tiny			1000, a few ns each
 *	skip_me_outer		3, each calling leaf_static once
 *
 * spin() is not instrumented, so it is part of its caller's slice.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#if defined(__GNUC__) && !defined(__clang__)
#define KEEP __attribute__((noinline, noclone))
#else
#define KEEP __attribute__((noinline))
#endif

__attribute__((no_instrument_function)) static void spin(unsigned us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
		       (uint64_t)t0.tv_nsec <
	       us * 1000u);
}

KEEP static void leaf_static(void)
{
	spin(20);
}

KEEP void work_exported(int i);
KEEP void work_exported(int i)
{
	(void)i;
	leaf_static();
	leaf_static();
}

KEEP int fact_rec(int n);
KEEP int fact_rec(int n)
{
	spin(10);
	return n <= 1 ? 1 : n * fact_rec(n - 1);
}

KEEP int tiny(int x);
KEEP int tiny(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

KEEP void skip_me_outer(void);
KEEP void skip_me_outer(void)
{
	leaf_static();
}

int main(void)
{
	int x = 0;

	for (int i = 0; i < 10; i++)
		work_exported(i);
	x += fact_rec(5);
	for (int i = 0; i < 1000; i++)
		x = tiny(x);
	for (int i = 0; i < 3; i++)
		skip_me_outer();
	return x == 120 + 1000 ? 0 : 1;
}
