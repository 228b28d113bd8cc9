/* SPDX-License-Identifier: MIT */
/*
 * DDSketch with a dense store (see sketch.h for the contract and the error bound).
 *
 * The bucket of v >= 1 is ceil(ln v / ln g): 0 for 1 ns, about 2218 for 2^64 - 1, so
 * an int32 index and a store of at most a few thousand counters cover every value.
 * The store covers [lo, lo + nbins) and grows toward a new value with some slack, so
 * a name whose durations wander does not realloc on every new extreme.
 */
#include "common/sketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ln g, g = (1 + RTR__SKETCH_ALPHA) / (1 - RTR__SKETCH_ALPHA) = 1.0202...: ln(1.01) - ln(0.99). */
#define LN_GAMMA 0.020000666706669
/* 2 / (g + 1) = 1 - RTR__SKETCH_ALPHA: the bucket's value that is within alpha of all of it. */
#define MID_FACTOR (1.0 - RTR__SKETCH_ALPHA)

/* Buckets added beyond the one needed when the store grows. */
#define GROW_SLACK 32

void rtr__sketch_init(struct rtr__sketch *s)
{
	memset(s, 0, sizeof(*s));
}

void rtr__sketch_free(struct rtr__sketch *s)
{
	free(s->bins);
	rtr__sketch_init(s);
}

static int32_t bucket_of(uint64_t v)
{
	return (int32_t)ceil(log((double)v) / LN_GAMMA);
}

/* Make the store cover buckets [first, last]. 0 or -1. */
static int cover(struct rtr__sketch *s, int32_t first, int32_t last)
{
	int32_t lo, hi;
	uint32_t n;
	uint64_t *bins;

	if (s->bins != NULL && first >= s->lo && last < s->lo + (int32_t)s->nbins)
		return 0;
	if (s->bins == NULL) {
		lo = first;
		hi = last + 1;
	} else {
		lo = first < s->lo ? first - GROW_SLACK : s->lo;
		hi = last >= s->lo + (int32_t)s->nbins ? last + 1 + GROW_SLACK
						       : s->lo + (int32_t)s->nbins;
	}
	if (lo < 0)
		lo = 0; /* no value below 1 has a bucket: zeros are counted apart */
	n = (uint32_t)(hi - lo);
	bins = calloc(n, sizeof(*bins));
	if (bins == NULL)
		return -1;
	if (s->bins != NULL)
		memcpy(bins + (s->lo - lo), s->bins, s->nbins * sizeof(*bins));
	free(s->bins);
	s->bins = bins;
	s->lo = lo;
	s->nbins = n;
	return 0;
}

static void note_extremes(struct rtr__sketch *s, uint64_t min, uint64_t max)
{
	if (s->count == 0 || min < s->min)
		s->min = min;
	if (s->count == 0 || max > s->max)
		s->max = max;
}

int rtr__sketch_add(struct rtr__sketch *s, uint64_t v)
{
	if (v == 0) {
		s->zeros++;
	} else {
		int32_t i = bucket_of(v);

		if (cover(s, i, i))
			return -1;
		s->bins[i - s->lo]++;
	}
	if (s->count < RTR__SKETCH_EXACT)
		s->exact[s->count] = v;
	note_extremes(s, v, v);
	s->count++;
	return 0;
}

int rtr__sketch_merge(struct rtr__sketch *into, const struct rtr__sketch *from)
{
	if (from->count == 0)
		return 0;
	if (from->bins != NULL) {
		if (cover(into, from->lo, from->lo + (int32_t)from->nbins - 1))
			return -1;
		for (uint32_t k = 0; k < from->nbins; k++)
			into->bins[from->lo - into->lo + (int32_t)k] += from->bins[k];
	}
	into->zeros += from->zeros;
	if (into->count + from->count <= RTR__SKETCH_EXACT)
		memcpy(into->exact + into->count, from->exact,
		       from->count * sizeof(from->exact[0]));
	note_extremes(into, from->min, from->max);
	into->count += from->count;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t rtr__sketch_quantile(const struct rtr__sketch *s, unsigned per_10k)
{
	uint64_t n = s->count, rank, seen;

	if (n == 0)
		return 0;
	if (per_10k > 10000)
		per_10k = 10000;
	/* ceil(n q) without overflow or rounding: n = 10000 a + b. */
	rank = n / 10000 * per_10k + (n % 10000 * per_10k + 9999) / 10000;
	if (rank <= 1)
		return s->min;
	if (rank >= n)
		return s->max;
	if (n <= RTR__SKETCH_EXACT) {
		uint64_t v[RTR__SKETCH_EXACT];

		memcpy(v, s->exact, n * sizeof(v[0]));
		qsort(v, n, sizeof(v[0]), cmp_u64);
		return v[rank - 1];
	}
	seen = s->zeros;
	if (rank <= seen)
		return 0;
	for (uint32_t k = 0; k < s->nbins; k++) {
		seen += s->bins[k];
		if (seen >= rank) {
			double mid = exp((double)(s->lo + (int32_t)k) * LN_GAMMA) * MID_FACTOR;
			uint64_t v =
				mid >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)(mid + 0.5);

			return v < s->min ? s->min : v > s->max ? s->max : v;
		}
	}
	return s->max; /* not reached: the buckets hold every nonzero value */
}

int32_t rtr__sketch_bucket(uint64_t v)
{
	return bucket_of(v);
}

/* The value a bucket answers with, clamped to [min, max]. */
static uint64_t bucket_value(int32_t k, uint64_t min, uint64_t max)
{
	double mid = exp((double)k * LN_GAMMA) * MID_FACTOR;
	uint64_t v = mid >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)(mid + 0.5);

	return v < min ? min : v > max ? max : v;
}

int rtr__sketch_load(struct rtr__sketch *s, uint64_t zeros, int32_t first, const uint64_t *counts,
		     uint32_t n, uint64_t min, uint64_t max)
{
	uint64_t count = zeros;
	int32_t lo = -1, hi = -1;

	if (first < 0 || n > RTR__SKETCH_BUCKETS || first > RTR__SKETCH_BUCKETS - (int32_t)n ||
	    min > max)
		return -2;
	for (uint32_t k = 0; k < n; k++) {
		if (counts[k] == 0)
			continue;
		if (count > UINT64_MAX - counts[k])
			return -2;
		count += counts[k];
		hi = first + (int32_t)k;
		lo = lo < 0 ? hi : lo;
	}
	if (count == 0)
		return 0;
	/* zeros make the minimum 0, a nonzero value a nonzero maximum (the quantiles are
	 * clamped to [min, max], so extremes that disagree with the buckets stay bounded) */
	if ((zeros > 0 && min != 0) || (lo < 0 && max != 0) || (lo >= 0 && max == 0))
		return -2;
	if (lo >= 0) {
		if (cover(s, lo, hi))
			return -1;
		for (int32_t k = lo; k <= hi; k++)
			s->bins[k - s->lo] = counts[k - first];
	}
	s->zeros = zeros;
	s->count = count;
	s->min = min;
	s->max = max;
	if (count <= RTR__SKETCH_EXACT) {
		uint64_t i = 0;

		for (; i < zeros; i++)
			s->exact[i] = 0;
		for (int32_t k = lo; lo >= 0 && k <= hi; k++)
			for (uint64_t j = 0; j < counts[k - first]; j++)
				s->exact[i++] = bucket_value(k, min, max);
		s->exact[0] = min; /* the extremes are known exactly */
		s->exact[count - 1] = max;
	}
	return 0;
}

/* The JSON text of rtr__sketch_json(): what fits of it, and its whole length. */
struct text {
	char *out;
	size_t cap, len;
};

static void put(struct text *t, const char *p, size_t n)
{
	if (t->len < t->cap)
		memcpy(t->out + t->len, p, t->len + n <= t->cap ? n : t->cap - t->len);
	t->len += n;
}

static void put_u64(struct text *t, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	put(t, d + i, sizeof(d) - i);
}

size_t rtr__sketch_json(const struct rtr__sketch *s, char *out, size_t cap)
{
	struct text t = {out, cap, 0};

	if (s->count <= RTR__SKETCH_EXACT) {
		put(&t, "{\"v\":[", 6);
		for (uint64_t i = 0; i < s->count; i++) {
			if (i > 0)
				put(&t, ",", 1);
			put_u64(&t, s->exact[i]);
		}
	} else {
		uint32_t first = 0, last = 0;
		bool any = rtr__sketch_used(s, &first, &last);

		put(&t, "{\"z\":", 5);
		put_u64(&t, s->zeros);
		put(&t, ",\"i\":", 5);
		put_u64(&t, any ? (uint64_t)(s->lo + (int32_t)first) : 0);
		put(&t, ",\"b\":[", 6);
		for (uint32_t k = first; any && k <= last; k++) {
			if (k > first)
				put(&t, ",", 1);
			put_u64(&t, s->bins[k]);
		}
	}
	put(&t, "]}", 2);
	if (cap > 0)
		out[t.len < cap ? t.len : cap - 1] = '\0';
	return t.len;
}

bool rtr__sketch_used(const struct rtr__sketch *s, uint32_t *first, uint32_t *last)
{
	bool any = false;

	for (uint32_t k = 0; k < s->nbins; k++) {
		if (s->bins[k] != 0) {
			*first = any ? *first : k;
			*last = k;
			any = true;
		}
	}
	return any;
}
