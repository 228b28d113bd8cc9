/* SPDX-License-Identifier: MIT */
/*
 * Text helpers of the ringtrace tools (see json.h for the contracts): buffers
 * around the library's JSON text functions, and the number parsers.
 */
#include "json.h"

#include <math.h>
#include <stdlib.h>

int buf_grow(struct buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (n > SIZE_MAX / 2 - b->len)
		return -1;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

void *array_grow_to(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first > 0 ? first : 1;

	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return NULL;
		n *= 2;
	}
	if (n > SIZE_MAX / size || (p = realloc(p, n * size)) == NULL)
		return NULL;
	*cap = n;
	return p;
}

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *text_dup(const void *p, size_t len)
{
	char *q = malloc(len + 1);

	if (q != NULL) {
		memcpy(q, p, len);
		q[len] = '\0';
	}
	return q;
}

long utf8_put_valid(struct buf *b, const void *src, size_t len)
{
	size_t bad = 0;

	if (len == 0)
		return 0; /* b->p may still be NULL */
	if (len > SIZE_MAX / 3 || (b->cap - b->len < RTR_JSONTEXT_REPAIR_BOUND(len) &&
				   buf_grow(b, RTR_JSONTEXT_REPAIR_BOUND(len))))
		return -1;
	b->len = (size_t)(rtr__jsontext_utf8_repair(b->p + b->len, src, len, &bad) - b->p);
	return (long)bad;
}

long json_put_string(struct buf *b, const void *src, size_t len)
{
	size_t bad = 0;

	/* Worst case 6 bytes per input byte, plus the quotes: reserve once. */
	if (len > (SIZE_MAX - 2) / 6 || (b->cap - b->len < RTR_JSONTEXT_ESCAPE_BOUND(len) + 2 &&
					 buf_grow(b, RTR_JSONTEXT_ESCAPE_BOUND(len) + 2)))
		return -1;
	b->p[b->len++] = '"';
	b->len = (size_t)(rtr__jsontext_escape_count(b->p + b->len, src, len, &bad) - b->p);
	b->p[b->len++] = '"';
	return (long)bad;
}

char *json_put_us(char *cur, int64_t ns)
{
	*cur = '-';
	cur += ns < 0;
	/* 0 - (uint64_t)ns is |ns|, INT64_MIN included */
	return rtr__jsontext_us(cur, ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns);
}

int buf_put_i64(struct buf *b, int64_t v)
{
	char tmp[24];

	return buf_put(b, tmp, (size_t)(rtr__jsontext_i64(tmp, v) - tmp));
}

int buf_put_u64(struct buf *b, uint64_t v)
{
	char tmp[24];

	return buf_put(b, tmp, (size_t)(rtr__jsontext_u64(tmp, v) - tmp));
}

int buf_put_us(struct buf *b, int64_t ns)
{
	char tmp[JSON_US_MAX + 7];

	return buf_put(b, tmp, (size_t)(json_put_us(tmp, ns) - tmp));
}

int buf_put_dur(struct buf *b, int64_t ts_ns, int64_t dur_ns)
{
	char tmp[40];

	if (ts_ns < 0 || dur_ns <= 0 || ts_ns > INT64_MAX - dur_ns)
		return buf_put_us(b, dur_ns);
	/* ns below 2^53 are exact doubles; correctly rounded division by 1000 gives the
	 * double a parser reads from their microseconds' three-decimal text */
	double s = (double)ts_ns / 1000.0, e = (double)(ts_ns + dur_ns) / 1000.0;
	if (s + (double)dur_ns / 1000.0 == e)
		return buf_put_us(b, dur_ns);
	return buf_put(
		b, tmp,
		(size_t)(rtr__jsontext_dur_exact(tmp, (uint64_t)ts_ns, (uint64_t)(ts_ns + dur_ns)) -
			 tmp));
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Is t[0 .. len) a JSON number? Sets *plain when it has at most three decimals and
 * no exponent, the form parsed exactly. */
static bool json_number(const char *t, size_t len, bool *plain)
{
	size_t i = 0, digits, decimals = 0;

	*plain = true;
	if (i < len && t[i] == '-')
		i++;
	digits = i;
	while (i < len && is_digit(t[i]))
		i++;
	digits = i - digits;
	if (digits == 0 || (digits > 1 && t[i - digits] == '0'))
		return false;
	if (i < len && t[i] == '.') {
		size_t start = ++i;

		while (i < len && is_digit(t[i]))
			i++;
		decimals = i - start;
		if (decimals == 0)
			return false;
	}
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		size_t start;

		*plain = false;
		i++;
		if (i < len && (t[i] == '+' || t[i] == '-'))
			i++;
		start = i;
		while (i < len && is_digit(t[i]))
			i++;
		if (i == start)
			return false;
	}
	if (decimals > 3)
		*plain = false;
	return i == len;
}

/* The form a trace's times nearly always have, -?[digits](.[1-3 digits])? with at most
 * 15 digits before the point (so that no overflow is possible), in one pass. 0, or -1
 * for anything else (json_parse_us() then takes the long way). */
static int parse_us_short(const char *t, size_t len, int64_t *ns)
{
	static const uint64_t scale[] = {1000, 100, 10, 1};
	bool neg = len > 0 && t[0] == '-';
	size_t i = neg, start = i, decimals = 0;
	uint64_t v = 0, fraction = 0;

	for (; i < len && i - start < 16 && is_digit(t[i]); i++)
		v = v * 10 + (uint64_t)(t[i] - '0');
	if (i == start || i - start > 15 || (i - start > 1 && t[start] == '0'))
		return -1;
	if (i < len && t[i] == '.') {
		for (i++; i < len && decimals < 4 && is_digit(t[i]); i++, decimals++)
			fraction = fraction * 10 + (uint64_t)(t[i] - '0');
		if (decimals == 0 || decimals > 3)
			return -1;
	}
	if (i != len)
		return -1;
	v = v * 1000 + fraction * scale[decimals];
	*ns = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int json_parse_us(const char *t, size_t len, int64_t *ns, bool *exact)
{
	bool plain, neg = len > 0 && t[0] == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t i = neg;

	if (parse_us_short(t, len, ns) == 0) {
		*exact = true;
		return 0;
	}
	if (!json_number(t, len, &plain))
		return -1;
	*exact = plain;
	if (!plain) {
		char tmp[64], *copy = len < sizeof(tmp) ? tmp : malloc(len + 1);
		double us;

		if (copy == NULL)
			return -1;
		memcpy(copy, t, len);
		copy[len] = '\0';
		us = strtod(copy, NULL) * 1000.0; /* JSON number syntax is strtod's */
		if (copy != tmp)
			free(copy);
		if (!(us > -9.2e18 && us < 9.2e18))
			return -1;
		*ns = llround(us);
		return 0;
	}
	for (size_t safe = i + 19; i < len && t[i] != '.'; i++) {
		unsigned d = (unsigned)(t[i] - '0');

		/* 19 digits cannot overflow: check only past them. */
		if (i >= safe && v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	/* In range as nanoseconds, fraction included (checked after it is added, since
	 * it can carry v past the limit: 18446744073709551.999 us is not 383 ns). */
	if (v > limit / 1000)
		return -1;
	v *= 1000;
	if (i < len) {
		uint64_t fraction = 0, scale = 100;

		for (i++; i < len; i++, scale /= 10)
			fraction += (uint64_t)(t[i] - '0') * scale;
		if (fraction > limit - v)
			return -1;
		v += fraction;
	}
	*ns = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int json_parse_i64(const char *t, size_t len, int64_t *out)
{
	bool neg = len > 0 && t[0] == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t i = neg;

	if (i == len || (t[i] == '0' && len - i > 1))
		return -1;
	for (size_t safe = i + 18; i < len; i++) {
		unsigned d = (unsigned)(t[i] - '0');

		/* 18 digits cannot pass the limit: check only past them. */
		if (!is_digit(t[i]) || (i >= safe && v > (limit - d) / 10))
			return -1;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}
