/* SPDX-License-Identifier: MIT */
/*
 * Text helpers of the ringtrace tools (see json.h for the contracts).
 *
 * Strings are copied in runs: the bytes that need nothing (printable ASCII but '"'
 * and '\\') are found first and copied with one memcpy, so a name without escapes
 * or non-ASCII costs a scan and a copy.
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

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static inline bool is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

bool utf8_lead(unsigned c, size_t *n, unsigned *lo, unsigned *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) {
		*n = 2;
	} else if (c == 0xe0) {
		*n = 3;
		*lo = 0xa0; /* below would be an overlong form */
	} else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
		*n = 3;
	} else if (c == 0xed) {
		*n = 3;
		*hi = 0x9f; /* ED A0..BF would encode a surrogate */
	} else if (c == 0xf0) {
		*n = 4;
		*lo = 0x90;
	} else if (c >= 0xf1 && c <= 0xf3) {
		*n = 4;
	} else if (c == 0xf4) {
		*n = 4;
		*hi = 0x8f; /* above would pass U+10FFFF */
	} else {
		return false;
	}
	return true;
}

size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned lo, hi;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (!utf8_lead(s[0], &n, &lo, &hi) || len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	}
	return n;
}

/* Bytes of the maximal invalid subpart at s (at least 1): the lead byte and the
 * bytes that could still have continued it. Called only where utf8_seq_len() is 0. */
static size_t invalid_len(const unsigned char *s, size_t len)
{
	unsigned lo, hi;
	size_t n, k = 1;

	if (!utf8_lead(s[0], &n, &lo, &hi) || len < 2 || s[1] < lo || s[1] > hi)
		return 1;
	for (k = 2; k < n && k < len && (s[k] & 0xc0) == 0x80; k++)
		;
	return k;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

long utf8_put_valid(struct buf *b, const void *src, size_t len)
{
	const unsigned char *s = src;
	long bad = 0;
	size_t i = 0;

	while (i < len) {
		size_t run = i;

		while (run < len && s[run] < 0x80)
			run++;
		while (run < len && s[run] >= 0x80) {
			size_t n = utf8_seq_len(s + run, len - run);

			if (n == 0)
				break;
			run += n;
		}
		if (run > i) {
			if (buf_put(b, s + i, run - i))
				return -1;
			i = run;
			continue;
		}
		if (buf_put(b, replacement, 3))
			return -1;
		bad++;
		i += invalid_len(s + i, len - i);
	}
	return bad;
}

long json_put_string(struct buf *b, const void *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = src;
	long bad = 0;
	size_t i = 0;

	/* Worst case 6 bytes per input byte, plus the quotes: reserve once. */
	if (len > (SIZE_MAX - 2) / 6 || (b->cap - b->len < len * 6 + 2 && buf_grow(b, len * 6 + 2)))
		return -1;
	b->p[b->len++] = '"';
	while (i < len) {
		size_t run = i;
		unsigned char c;
		char *o;

		while (run < len && is_plain(s[run]))
			run++;
		memcpy(b->p + b->len, s + i, run - i);
		b->len += run - i;
		i = run;
		if (i == len)
			break;
		c = s[i];
		o = b->p + b->len;
		if (c >= 0x80) {
			size_t n = utf8_seq_len(s + i, len - i);

			if (n > 0) {
				memcpy(o, s + i, n);
				b->len += n;
				i += n;
			} else {
				memcpy(o, replacement, 3); /* 3 bytes for at least 1 input byte */
				b->len += 3;
				bad++;
				i += invalid_len(s + i, len - i);
			}
			continue;
		}
		o[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			o[1] = (char)c;
			break;
		case '\n':
			o[1] = 'n';
			break;
		case '\t':
			o[1] = 't';
			break;
		case '\r':
			o[1] = 'r';
			break;
		case '\b':
			o[1] = 'b';
			break;
		case '\f':
			o[1] = 'f';
			break;
		default:
			memcpy(o + 1, "u00", 3);
			o[4] = hex[c >> 4];
			o[5] = hex[c & 15];
			b->len += 4;
			break;
		}
		b->len += 2;
		i++;
	}
	b->p[b->len++] = '"';
	return bad;
}

char *json_put_u64(char *cur, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*cur++ = tmp[--n];
	return cur;
}

char *json_put_i64(char *cur, int64_t v)
{
	if (v >= 0)
		return json_put_u64(cur, (uint64_t)v);
	*cur++ = '-';
	return json_put_u64(cur, -(uint64_t)v);
}

char *json_put_us(char *cur, int64_t ns)
{
	uint64_t mag;
	unsigned frac;

	if (ns < 0)
		*cur++ = '-';
	mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	cur = json_put_u64(cur, mag / 1000);
	frac = (unsigned)(mag % 1000);
	if (frac != 0) {
		*cur++ = '.';
		*cur++ = (char)('0' + frac / 100);
		frac %= 100;
		if (frac != 0) {
			*cur++ = (char)('0' + frac / 10);
			frac %= 10;
			if (frac != 0)
				*cur++ = (char)('0' + frac);
		}
	}
	return cur;
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

int json_parse_us(const char *t, size_t len, int64_t *ns, bool *exact)
{
	bool plain, neg = len > 0 && t[0] == '-';
	uint64_t v = 0;
	size_t i = neg;

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
	for (; i < len && t[i] != '.'; i++) {
		unsigned d = (unsigned)(t[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v > UINT64_MAX / 1000)
		return -1;
	v *= 1000;
	if (i < len) {
		unsigned scale = 100;

		for (i++; i < len; i++, scale /= 10)
			v += (uint64_t)(t[i] - '0') * scale;
	}
	if (v > (uint64_t)INT64_MAX)
		return -1;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int json_parse_i64(const char *t, size_t len, int64_t *out)
{
	bool neg = len > 0 && t[0] == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t i = neg;

	if (i == len || (t[i] == '0' && len - i > 1))
		return -1;
	for (; i < len; i++) {
		unsigned d = (unsigned)(t[i] - '0');

		if (!is_digit(t[i]) || v > (limit - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}
