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
 *
 * With the argument "signals", a SIGALRM every 50 us runs on_alarm(), which calls
 * in_handler() (both instrumented), while the main thread runs 2000 calls of
 * work_exported(); exit status 0 when the handler ran.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
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

static volatile sig_atomic_t handled;

KEEP void in_handler(void);
KEEP void in_handler(void)
{
	handled = handled + 1;
}

static void on_alarm(int sig)
{
	(void)sig;
	in_handler();
}

__attribute__((no_instrument_function)) static int signals(void)
{
	struct sigaction sa;
	struct itimerval it = {{0, 50}, {0, 50}};

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 2000; i++)
		work_exported(i);
	it = (struct itimerval){{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	return handled > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int x = 0;

	if (argc > 1 && strcmp(argv[1], "signals") == 0)
		return signals();

	for (int i = 0; i < 10; i++)
		work_exported(i);
	x += fact_rec(5);
	for (int i = 0; i < 1000; i++)
		x = tiny(x);
	for (int i = 0; i < 3; i++)
		skip_me_outer();
	return x == 120 + 1000 ? 0 : 1;
}
