/* SPDX-License-Identifier: MIT */
/*
 * A quantile sketch of non-negative integers (durations in nanoseconds), in bounded
 * memory: what `ringtrace stats` keeps per name, and a profile per call path, to give
 * p50 and p99 without a sorted copy of every duration.
 *
 * It is DDSketch (Masson, Rim and Lee, "DDSketch: a fast and fully-mergeable quantile
 * sketch with relative-error guarantees", VLDB 2019) with a dense store: bucket i
 * counts the values in (g^(i-1), g^i], g = (1 + a) / (1 - a), a = RTR__SKETCH_ALPHA; a
 * quantile is answered with 2 g^i / (g + 1), which is within a relative error a of
 * every value of its bucket. Zero has a bucket of its own. So:
 *
 * - a quantile is within RTR__SKETCH_ALPHA (1 %) of the exact nearest-rank quantile (the
 *   smallest value v with at least ceil(q n) values <= v), give or take the half unit
 *   of rounding it to an integer (so exact below 50), and it is exact while the
 *   sketch holds at most RTR__SKETCH_EXACT values, which it keeps as they are (small
 *   samples are common, and a table that shows 1.99 ms for three 2 ms slices reads
 *   as a bug);
 * - count, min and max are exact; the answer is clamped to [min, max];
 * - memory: 8 bytes per bucket between the smallest and the largest value seen,
 *   about 115 buckets per decade: 1 ns to 1 s needs 1040 buckets (8 KiB), and no
 *   int64 duration needs more than 2200. Never per value.
 * - two sketches merge exactly (the buckets add up): a sketch per thread or per file
 *   merges into one with the same error bound.
 *
 * Thread safety: none; one sketch per thread (or a merge after the threads are done).
 */
#ifndef RTR_COMMON_SKETCH_H
#define RTR_COMMON_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The relative error of a quantile. */
#define RTR__SKETCH_ALPHA 0.01

/* Values kept as they are (quantiles exact) while the count is at most this. */
#define RTR__SKETCH_EXACT 8

struct rtr__sketch {
	uint64_t count; /* values added */
	uint64_t zeros; /* values equal to 0 */
	uint64_t min, max;
	uint64_t *bins; /* bins[k] counts bucket lo + k; NULL before the first nonzero value */
	int32_t lo;
	uint32_t nbins;
	uint64_t exact[RTR__SKETCH_EXACT]; /* the first values, while count <= RTR__SKETCH_EXACT */
};

/* An empty sketch; allocates nothing. A zero-filled sketch is empty too. */
void rtr__sketch_init(struct rtr__sketch *s);

void rtr__sketch_free(struct rtr__sketch *s);

/* Add one value. 0, or -1 when out of memory (the sketch is then unchanged). */
int rtr__sketch_add(struct rtr__sketch *s, uint64_t v);

/* Add every value of from into into. 0, or -1 when out of memory (into unchanged). */
int rtr__sketch_merge(struct rtr__sketch *into, const struct rtr__sketch *from);

/*
 * The quantile q = per_10k / 10000 (p50: 5000, p99: 9900, p99.9: 9990), as the
 * nearest-rank value: the smallest value v with at least ceil(q count) values <= v
 * (at least the first). Within RTR__SKETCH_ALPHA of it, and exact while count <=
 * RTR__SKETCH_EXACT and for the ranks of min and max; rounded to an integer. 0 when the
 * sketch is empty. per_10k is an integer so that the rank is exact (0.99 * 100 is
 * not 99 in binary floating point).
 */
uint64_t rtr__sketch_quantile(const struct rtr__sketch *s, unsigned per_10k);

/* The store's nonzero buckets: false when there is none, else true and the first and
 * the last index into s->bins that count something (for writing the sketch out). */
bool rtr__sketch_used(const struct rtr__sketch *s, uint32_t *first, uint32_t *last);

/* Buckets a value can fall in: 0 (the value 1) to RTR__SKETCH_BUCKETS - 1 (2^64 - 1 is
 * in bucket 2218). */
#define RTR__SKETCH_BUCKETS 2219

/*
 * Load s (initialised, empty) from its buckets, as a profile gives them (docs/profile.md
 * "q"): zeros values equal to 0, and counts[k] values in bucket first + k, k < n; min
 * and max the exact extremes (the buckets cannot tell them). While the count is at most
 * RTR__SKETCH_EXACT the values kept as they are become each bucket's quantile value
 * (the buckets have no more to say; a caller that has the values adds them instead).
 * Returns 0; -1 out of memory; -2 when the buckets do not fit: first + n past
 * RTR__SKETCH_BUCKETS, a count that overflows, min > max, zeros with a nonzero min, or a
 * max that is 0 with nonzero buckets or nonzero without (s is then left empty).
 */
int rtr__sketch_load(struct rtr__sketch *s, uint64_t zeros, int32_t first, const uint64_t *counts,
		     uint32_t n, uint64_t min, uint64_t max);

/*
 * The bucket a nonzero value falls in (0 .. RTR__SKETCH_BUCKETS - 1).
 */
int32_t rtr__sketch_bucket(uint64_t v);

/* The longest text rtr__sketch_json() writes: every bucket of 20 digits. */
#define RTR__SKETCH_JSON_MAX (48 + 21 * (size_t)RTR__SKETCH_BUCKETS)

/*
 * s as the profile's sketch "q" (docs/profile.md): {"v":[...]}, the values themselves,
 * while the count is at most RTR__SKETCH_EXACT; else {"z":ZEROS,"i":FIRST,"b":[...]}, the
 * buckets from the first that holds a value to the last. Writes into out (cap bytes, a
 * NUL after the text when it fits, as snprintf) and returns the length of the whole text
 * without the NUL, at most RTR__SKETCH_JSON_MAX: a cap of RTR__SKETCH_JSON_MAX + 1 always
 * fits. Allocates nothing; rtr__sketch_load() of what it writes gives the same quantiles.
 */
size_t rtr__sketch_json(const struct rtr__sketch *s, char *out, size_t cap);

#endif /* RTR_COMMON_SKETCH_H */
