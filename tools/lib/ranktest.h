/* SPDX-License-Identifier: MIT */
/*
 * The rank test and effect sizes `ringtrace diff` uses to compare runs: each run is
 * reduced to one number (its median), and the two sides' numbers are compared by the
 * Mann-Whitney U test, two-sided, with the exact null distribution of the rank sum
 * (ties given their mid-ranks, so a tie is exact too) up to RANKTEST_EXACT_MAX values,
 * the normal approximation with the tie correction beyond. The effect is the
 * Hodges-Lehmann shift (the median of every difference b - a) and Cliff's delta.
 *
 * Thread safety: none needed; no state.
 */
#ifndef RTR_TOOLS_RANKTEST_H
#define RTR_TOOLS_RANKTEST_H

#include <stdbool.h>
#include <stddef.h>

/* Values of both sides together up to which the p-value is exact. */
#define RANKTEST_EXACT_MAX 100

struct rank_test {
	double u;      /* Mann-Whitney U of B: pairs with b > a, plus half the ties */
	double p;      /* two-sided: P(|W - E W| >= |w - E W|) under no difference */
	bool exact;    /* p from the exact distribution (else the normal approximation) */
	double shift;  /* Hodges-Lehmann: the median of b_j - a_i */
	double cliffs; /* Cliff's delta: (#(b > a) - #(b < a)) / (na nb), in [-1, 1] */
};

/* Compare b[0 .. nb) against a[0 .. na) (both at least 1). 0, or -1 (out of memory). */
int rank_test(const double *a, size_t na, const double *b, size_t nb, struct rank_test *out);

/* The median of v[0 .. n) (n >= 1; v is sorted in place). */
double rank_median(double *v, size_t n);

#endif
