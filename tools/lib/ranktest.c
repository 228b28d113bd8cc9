/* SPDX-License-Identifier: MIT */
/*
 * Mann-Whitney U, Hodges-Lehmann and Cliff's delta (ranktest.h).
 *
 * The exact distribution: the rank sum W of B is a sum of nb of the N = na + nb
 * mid-ranks, each subset equally likely under no difference. Doubled mid-ranks are
 * integers, so the number of subsets of each size and doubled sum is counted by one
 * pass over the values (a knapsack count, in doubles: C(100, 50) is past 2^64).
 */
#include "ranktest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

double rank_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ranked {
	double v;
	int side;   /* 0: A, 1: B */
	long rank2; /* doubled mid-rank */
};

static int cmp_ranked(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/* Doubled mid-ranks of the pooled values, sorted; the sum of squares of tie sizes
 * minus the sizes (t^3 - t), for the normal approximation. */
static double mid_ranks(struct ranked *r, size_t n)
{
	double ties = 0;

	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && r[j].v == r[i].v)
			j++;
		for (size_t k = i; k < j; k++)
			r[k].rank2 = (long)(i + 1 + j); /* 2 * (i+1 + j)/2 */
		ties += pow((double)(j - i), 3) - (double)(j - i);
		i = j;
	}
	return ties;
}

/* P(|2W - E2| >= |w2 - E2|) over the subsets of nb of the n doubled ranks. */
static int exact_p(const struct ranked *r, size_t n, size_t nb, long w2, double *p)
{
	long smax = (long)(n * (n + 1)), e2 = (long)nb * (long)(n + 1);
	long dev = labs(w2 - e2);
	size_t width = (size_t)smax + 1;
	double *ways = calloc((nb + 1) * width, sizeof(double));
	double hit = 0, all = 0;

	if (ways == NULL)
		return -1;
	ways[0] = 1;
	for (size_t i = 0; i < n; i++) {
		size_t top = i + 1 < nb ? i + 1 : nb;

		for (size_t k = top; k >= 1; k--) {
			double *to = ways + k * width, *from = ways + (k - 1) * width;

			for (long s = smax; s >= r[i].rank2; s--)
				to[s] += from[s - r[i].rank2];
		}
	}
	for (long s = 0; s <= smax; s++) {
		double c = ways[nb * width + (size_t)s];

		all += c;
		if (labs(s - e2) >= dev)
			hit += c;
	}
	free(ways);
	*p = all > 0 ? hit / all : 1;
	return 0;
}

/* The normal approximation of the same, with the tie and continuity corrections. */
static double normal_p(size_t na, size_t nb, double u, double ties)
{
	double n = (double)(na + nb), m = (double)na * (double)nb / 2;
	double var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	double z;

	if (var <= 0)
		return 1;
	z = (fabs(u - m) - 0.5) / sqrt(var);
	return z <= 0 ? 1 : erfc(z / sqrt(2));
}

static int effects(const double *a, size_t na, const double *b, size_t nb, struct rank_test *out)
{
	double *d = malloc(na * nb * sizeof(double));
	long more = 0, less = 0;

	if (d == NULL)
		return -1;
	for (size_t i = 0; i < na; i++) {
		for (size_t j = 0; j < nb; j++) {
			d[i * nb + j] = b[j] - a[i];
			more += b[j] > a[i];
			less += b[j] < a[i];
		}
	}
	out->shift = rank_median(d, na * nb);
	out->cliffs = (double)(more - less) / ((double)na * (double)nb);
	out->u = (double)more + (double)(na * nb - (size_t)more - (size_t)less) / 2;
	free(d);
	return 0;
}

int rank_test(const double *a, size_t na, const double *b, size_t nb, struct rank_test *out)
{
	size_t n = na + nb;
	struct ranked *r = malloc(n * sizeof(*r));
	double ties;
	long w2 = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (r == NULL || effects(a, na, b, nb, out)) {
		free(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){i < na ? a[i] : b[i - na], i >= na, 0};
	ties = mid_ranks(r, n);
	for (size_t i = 0; i < n; i++)
		w2 += r[i].side ? r[i].rank2 : 0;
	out->exact = n <= RANKTEST_EXACT_MAX;
	if (out->exact)
		err = exact_p(r, n, nb, w2, &out->p);
	else
		out->p = normal_p(na, nb, out->u, ties);
	if (out->p > 1)
		out->p = 1;
	free(r);
	return err;
}
