/* SPDX-License-Identifier: MIT */
/*
 * JSON text, numbers: integers, timestamps and doubles. Strings are in
 * jsontext_string.c, the tables in jsontext_tables.c (misc/make_tables.c).
 *
 * Everything here writes at a cursor and returns the new end, as yyjson's writer
 * does, and never calls printf: the output must not depend on the locale, and the
 * integer paths run once or twice per event.
 *
 * Integers are cut into groups of up to eight digits with multiplications by
 * reciprocals (the compiler's lowering of division by a constant). On a
 * little-endian machine each group's eight digits are made at once in one 64-bit
 * word (digits8()) and stored with one write; the leading group is shifted down past
 * its leading zeros. Elsewhere each group is written two digits at a time from
 * rtr__jsontext_digits. A timestamp's fraction comes whole from a table
 * (rtr__jsontext_us_fracs), and an integer part below 100 from one digit pair. That code
 * is inline in common/jsontext_num.h, for the encoder's per-event calls.
 *
 * Doubles use Schubfach (Raffaello Giulietti, "The Schubfach way to render doubles",
 * 2020; the algorithm behind Java's Double.toString since JDK 19). For v = c 2^q it
 * takes k = floor(log10(2^q)) (of 3/4 2^q at a power of two, whose lower neighbour
 * is closer), so that the rounding interval R_v of v is at least 10^k wide and
 * narrower than 10^(k+1). One 126-bit approximation g of 10^-k
 * (rtr__jsontext_pow10) then gives, rounded to odd, v and the bounds of R_v in units of
 * 10^k / 4, precise enough that every comparison with them below is exact. Of the
 * multiples of 10^(k+1) at most one lies in R_v; if one does it is the answer,
 * otherwise at least one of the two multiples of 10^k next to v does, and the closer
 * one (ties to even) is taken. The result is the shortest decimal in R_v and, among
 * those, the closest to v. It is exact; no fallback path is needed. Java wants at
 * least two digits and scales tiny subnormals up first; we want the shortest, so we
 * do not (Java's 4.9E-324 is our 5e-324).
 *
 * The tables come from misc/make_tables.c; the powers of ten there are computed with
 * exact big-integer arithmetic, and it also checks the log approximations used below.
 *
 * These functions are pure: any thread may call any of them at any time, and each
 * completes in bounded time (wait-free).
 */
#include "common/jsontext.h"
#include "common/jsontext_internal.h"
#include "common/jsontext_num.h"

#include <string.h>

/* ---- integers (common/jsontext_num.h) ---- */

char *rtr__jsontext_u64(char *cur, uint64_t v)
{
	return rtr__jsontext_u64_inline(cur, v);
}

char *rtr__jsontext_i64(char *cur, int64_t v)
{
	return rtr__jsontext_i64_inline(cur, v);
}

/*
 * The fraction of a microsecond, ".ddd" for each count of nanoseconds, and how many
 * of those bytes are significant: none for a whole microsecond, else 2, 3 or 4
 * (trailing zeros dropped). Built by the preprocessor: 1,000 entries of 5 bytes.
 */
/* Significant bytes of ".hto": trailing zeros and a bare point dropped. */
#define US_FRAC_LEN(h, t, o) ((o) ? 4 : (t) ? 3 : (h) ? 2 : 0)
#define US_FRAC(h, t, o)                                                        \
	{                                                                       \
		{'.', (char)('0' + (h)), (char)('0' + (t)), (char)('0' + (o))}, \
			US_FRAC_LEN(h, t, o)                                    \
	}
#define US_FRAC10(h, t)                                                                           \
	US_FRAC(h, t, 0), US_FRAC(h, t, 1), US_FRAC(h, t, 2), US_FRAC(h, t, 3), US_FRAC(h, t, 4), \
		US_FRAC(h, t, 5), US_FRAC(h, t, 6), US_FRAC(h, t, 7), US_FRAC(h, t, 8),           \
		US_FRAC(h, t, 9)
#define US_FRAC100(h)                                                                        \
	US_FRAC10(h, 0), US_FRAC10(h, 1), US_FRAC10(h, 2), US_FRAC10(h, 3), US_FRAC10(h, 4), \
		US_FRAC10(h, 5), US_FRAC10(h, 6), US_FRAC10(h, 7), US_FRAC10(h, 8),          \
		US_FRAC10(h, 9)
const struct rtr__jsontext_us_frac rtr__jsontext_us_fracs[1000] = {
	US_FRAC100(0), US_FRAC100(1), US_FRAC100(2), US_FRAC100(3), US_FRAC100(4),
	US_FRAC100(5), US_FRAC100(6), US_FRAC100(7), US_FRAC100(8), US_FRAC100(9),
};

char *rtr__jsontext_us(char *cur, uint64_t ns)
{
	return rtr__jsontext_us_inline(cur, ns);
}

/* ---- doubles ---- */

#define F64_FRAC_BITS  52
#define F64_FRAC_MASK  ((UINT64_C(1) << F64_FRAC_BITS) - 1)
#define F64_HIDDEN_BIT (UINT64_C(1) << F64_FRAC_BITS)
#define F64_EXP_MASK   0x7ff
#define F64_Q_MIN      (-1074) /* the binary exponent of subnormals and of bq == 1 */
#define MASK63	       ((UINT64_C(1) << 63) - 1)

/*
 * floor(log10(2^q)), floor(log10(3/4 2^q)) and floor(log2(10^e)) for the exponents
 * doubles need (misc/make_tables.c checks each against the exact value). They shift
 * negative ints right: GCC and Clang define that as an arithmetic shift.
 */
static inline int flog10_pow2(int q)
{
	return (q * 1262611) >> 22;
}

static inline int flog10_three_quarters_pow2(int q)
{
	return (q * 1262611 - 524031) >> 22;
}

static inline int flog2_pow10(int e)
{
	return (e * 1741647) >> 19;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 json_u128;

static inline uint64_t mul_hi(uint64_t a, uint64_t b, uint64_t *lo)
{
	json_u128 p = (json_u128)a * b;

	*lo = (uint64_t)p;
	return (uint64_t)(p >> 64);
}
#else
static inline uint64_t mul_hi(uint64_t a, uint64_t b, uint64_t *lo)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;

	*lo = (mid << 32) | (uint32_t)ll;
	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
#endif

/*
 * rop(cp g 2^-127) with g = g[0] 2^63 + g[1]: the product rounded to odd (the
 * lowest bit is set when any discarded bit was), as in figure 8 of the paper.
 */
static inline uint64_t rop(const uint64_t g[2], uint64_t cp)
{
	uint64_t x0, y0;
	uint64_t x1 = mul_hi(g[1], cp, &x0);
	uint64_t y1 = mul_hi(g[0], cp, &y0);
	uint64_t z = (y0 >> 1) + x1;
	uint64_t vbp = y1 + (z >> 63);

	return vbp | (((z & MASK63) + MASK63) >> 63);
}

static const uint64_t json_pow10_u64[20] = {
	UINT64_C(1),
	UINT64_C(10),
	UINT64_C(100),
	UINT64_C(1000),
	UINT64_C(10000),
	UINT64_C(100000),
	UINT64_C(1000000),
	UINT64_C(10000000),
	UINT64_C(100000000),
	UINT64_C(1000000000),
	UINT64_C(10000000000),
	UINT64_C(100000000000),
	UINT64_C(1000000000000),
	UINT64_C(10000000000000),
	UINT64_C(100000000000000),
	UINT64_C(1000000000000000),
	UINT64_C(10000000000000000),
	UINT64_C(100000000000000000),
	UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

/* Number of decimal digits of d, 1 <= d < 10^19. */
static inline int decimal_len(uint64_t d)
{
	int t = ((64 - __builtin_clzll(d)) * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */

	return t + (d >= json_pow10_u64[t]);
}

/* Exactly len digits of d < 10^17 at p. */
static inline void put_digits(char *p, uint64_t d, int len)
{
	char *e = p + len;
	uint32_t v;

	if (d >= 100000000) {
		uint64_t hi = d / 100000000;

		e -= 8;
		rtr__jsontext_put8(e, (uint32_t)(d - hi * 100000000));
		d = hi;
	}
	v = (uint32_t)d;
	while (v >= 100) {
		uint32_t q = v / 100;

		e -= 2;
		rtr__jsontext_put2(e, v - q * 100);
		v = q;
	}
	if (v >= 10)
		rtr__jsontext_put2(e - 2, v);
	else
		e[-1] = (char)('0' + v);
}

/*
 * d 10^e, d < 10^17 without trailing zeros, laid out as ECMAScript's
 * Number::toString does (the form JSON.stringify writes), with two differences:
 * plain digits stop at 17 places before the point rather than 21, so that an
 * integer-looking number always fits an int64 parser ("1e17", not
 * "100000000000000000"), and the exponent carries no '+'. So "123", "1.5",
 * "0.000123", "1e-7", "1.2345e300". At most 23 bytes ("d.dddddddddddddddde-324").
 */
static char *put_decimal(char *p, uint64_t d, int e)
{
	int len = decimal_len(d);
	int dp = len + e; /* the point sits after digit dp */
	int x;

	if (dp > 0 && dp <= 17) {
		if (dp >= len) {
			memset(p, '0', 17);
			put_digits(p, d, len);
			return p + dp;
		}
		put_digits(p + 1, d, len);
		memmove(p, p + 1, (size_t)dp);
		p[dp] = '.';
		return p + len + 1;
	}
	if (dp > -6 && dp <= 0) {
		memset(p, '0', 8);
		p[1] = '.';
		put_digits(p + 2 - dp, d, len);
		return p + 2 - dp + len;
	}
	put_digits(p + 1, d, len);
	p[0] = p[1];
	if (len > 1) {
		p[1] = '.';
		p += len + 1;
	} else {
		p += 1;
	}
	*p++ = 'e';
	x = dp - 1;
	*p = '-';
	p += x < 0;
	x = x < 0 ? -x : x; /* 1..324 */
	if (x >= 100) {
		*p++ = (char)('0' + x / 100);
		rtr__jsontext_put2(p, (uint32_t)(x % 100));
		return p + 2;
	}
	if (x >= 10) {
		rtr__jsontext_put2(p, (uint32_t)x);
		return p + 2;
	}
	*p = (char)('0' + x);
	return p + 1;
}

char *rtr__jsontext_f64(char *cur, double v)
{
	uint64_t bits, c, cb, cbl, cbr, vb, vbl, vbr, s, t, d;
	const uint64_t *g;
	int bq, q, k, h;
	unsigned out;
	int uin, win;

	memcpy(&bits, &v, sizeof(bits));
	bq = (int)(bits >> F64_FRAC_BITS) & F64_EXP_MASK;
	c = bits & F64_FRAC_MASK;
	if (bq == F64_EXP_MASK) {
		memcpy(cur, "null", 4); /* NaN, +Inf, -Inf */
		return cur + 4;
	}
	*cur = '-';
	cur += bits >> 63;
	if (bq != 0) {
		c |= F64_HIDDEN_BIT;
		q = bq - 1075;
		/* integral and below 2^53: plain digits, the paper's fast path (8.3) */
		if (q <= 0 && q >= -F64_FRAC_BITS) {
			uint64_t f = c >> -q;

			if (f << -q == c)
				return rtr__jsontext_put_u64(cur, f);
		}
	} else {
		if (c == 0) {
			*cur = '0'; /* "-0" for negative zero: it reads back as -0.0 */
			return cur + 1;
		}
		q = F64_Q_MIN;
	}

	/*
	 * Rounding interval R_v in units of 2^(q-2): [cbl, cbr], closed when c is even
	 * (round-half-even reads the bounds back as v), open when odd. At a power of
	 * two the lower neighbour is half as far, and k comes from 3/4 2^q.
	 */
	out = (unsigned)c & 1;
	cb = c << 2;
	cbr = cb + 2;
	if (c != F64_HIDDEN_BIT || q == F64_Q_MIN) {
		cbl = cb - 2;
		k = flog10_pow2(q);
	} else {
		cbl = cb - 1;
		k = flog10_three_quarters_pow2(q);
	}
	h = q + flog2_pow10(-k) + 2; /* 2..5 */
	g = rtr__jsontext_pow10[-k - JSON_POW10_MIN];
	vb = rop(g, cb << h); /* v, bounds, in units of 10^k / 4 */
	vbl = rop(g, cbl << h);
	vbr = rop(g, cbr << h);

	s = vb >> 2;
	if (s >= 10) {
		/* one digit fewer: the multiples of 10^(k+1) around v */
		uint64_t sp10 = s / 10 * 10;
		uint64_t tp10 = sp10 + 10;
		int upin = vbl + out <= sp10 << 2;
		int wpin = (tp10 << 2) + out <= vbr;

		if (upin != wpin) {
			d = upin ? sp10 : tp10;
			goto found;
		}
	}
	t = s + 1;
	uin = vbl + out <= s << 2;
	win = (t << 2) + out <= vbr;
	if (uin != win) {
		d = uin ? s : t;
	} else {
		/* both in R_v: the closer to v, ties to even */
		uint64_t mid = (s + t) << 1;

		d = vb < mid || (vb == mid && (s & 1) == 0) ? s : t;
	}
found:
	/* at most 16 trailing zeros, e.g. 1.5 arrives as 15000000000000000e-16 */
	while (d % 10000 == 0) {
		d /= 10000;
		k += 4;
	}
	if (d % 100 == 0) {
		d /= 100;
		k += 2;
	}
	if (d % 10 == 0) {
		d /= 10;
		k += 1;
	}
	return put_decimal(cur, d, k);
}

/* The double next to d >= 0, up or down (d's bits as an integer count them). */
static double step(double d, int up)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	if (bits == 0 && !up)
		return d;
	bits = up ? bits + 1 : bits - 1;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

char *rtr__jsontext_dur_exact(char *p, uint64_t start, uint64_t end)
{
	/* ns below 2^53 are exact doubles, and correctly rounded division by 1000 gives
	 * the double a parser reads from their microseconds' text */
	double s = (double)start / 1000.0, e = (double)end / 1000.0;
	double d = e - s; /* exact when start >= end / 2; else the steps below find it */

	if (d == (double)(end - start) / 1000.0)
		return rtr__jsontext_us(p, end - start); /* the three decimals are it */
	for (int i = 0; i < 8 && s + d != e; i++)
		d = step(d, s + d < e);
	if (s + d != e || d < 0)
		return rtr__jsontext_us(p, end - start); /* none exists: as it was */
	return rtr__jsontext_f64(p, d);
}
