/* SPDX-License-Identifier: MIT */
/*
 * The integer and timestamp formatters of the JSON text library, inline: the encoder
 * (src/format/json/) writes two or three numbers per event, and a call, a prologue
 * and a branch tree for a number of one or two digits cost it more than the digits
 * do. jsontext.c's rtr__jsontext_u64(), rtr__jsontext_i64() and rtr__jsontext_us()
 * are these, out of line, for everyone else; the method is explained atop jsontext.c.
 * Same output, same bounds (common/jsontext.h). Include only from src/common/ and
 * the JSON format (src/format/json/).
 */
#ifndef RTR_COMMON_JSONTEXT_NUM_H
#define RTR_COMMON_JSONTEXT_NUM_H

#include "common/compiler.h"
#include "common/jsontext_internal.h"

#include <stdint.h>
#include <string.h>

static inline void rtr__jsontext_put2(char *p, uint32_t pair)
{
	memcpy(p, &rtr__jsontext_digits[2 * pair], 2);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The eight decimal digits of v < 10^8 as the bytes of a word, one digit (not yet
 * ASCII) per byte, the first digit in the lowest byte: v is split into two lanes of
 * four digits, each lane into two of two digits, each of those into two of one, the
 * lanes side by side in one register (the SWAR method of Khuong's and Lemire's digit
 * routines). Each division of a lane by 100 or 10 is a multiplication by a rounded-up
 * reciprocal, exact for every lane value it meets (below 10^4 and below 100), and no
 * product reaches into the next lane.
 */
static inline uint64_t rtr__jsontext_digits8(uint32_t v)
{
	uint64_t hi = v / 10000, x = hi | ((uint64_t)(v - hi * 10000) << 32);
	uint64_t q = ((x * 10486) >> 20) & UINT64_C(0x0000007f0000007f); /* lanes / 100 */

	x = q | ((x - q * 100) << 16);
	q = ((x * 103) >> 10) & UINT64_C(0x000f000f000f000f); /* lanes / 10 */
	return q | ((x - q * 10) << 8);
}

#define RTR__JSONTEXT_ASCII_ZEROS UINT64_C(0x3030303030303030)

/* Exactly eight digits of v < 10^8. */
static inline void rtr__jsontext_put8(char *p, uint32_t v)
{
	uint64_t text = rtr__jsontext_digits8(v) + RTR__JSONTEXT_ASCII_ZEROS;

	memcpy(p, &text, sizeof(text));
}

/*
 * The digits of v < 10^8 without leading zeros; writes 8 bytes. The lowest nonzero
 * byte of the digit word is the first significant digit: shifting the word down by
 * that many bytes drops the leading zeros.
 */
static inline char *rtr__jsontext_put_lead8(char *p, uint32_t v)
{
	uint64_t d = rtr__jsontext_digits8(v);
	unsigned lead = v != 0 ? (unsigned)__builtin_ctzll(d) / 8 : 7;
	uint64_t text = (d + RTR__JSONTEXT_ASCII_ZEROS) >> (8 * lead);

	memcpy(p, &text, sizeof(text));
	return p + 8 - lead;
}
#else
/* Exactly four digits of v < 10000. */
static inline void rtr__jsontext_put4(char *p, uint32_t v)
{
	uint32_t hi = v / 100;

	rtr__jsontext_put2(p, hi);
	rtr__jsontext_put2(p + 2, v - hi * 100);
}

/* Exactly eight digits of v < 10^8. */
static inline void rtr__jsontext_put8(char *p, uint32_t v)
{
	uint32_t hi = v / 10000;

	rtr__jsontext_put4(p, hi);
	rtr__jsontext_put4(p + 4, v - hi * 10000);
}

/*
 * The digits of v < 10^8 without leading zeros; writes at most 8 bytes. The first
 * pair is copied from rtr__jsontext_digits + 2 * a + lz with lz = (a < 10): for a
 * one-digit lead that copies the digit and one spare byte, and the cursor steps back
 * by lz so the next write lands on the spare byte.
 */
static inline char *rtr__jsontext_put_lead8(char *p, uint32_t v)
{
	uint32_t a, lz;

	if (v < 100) {
		lz = v < 10;
		memcpy(p, &rtr__jsontext_digits[2 * v + lz], 2);
		return p + 2 - lz;
	}
	if (v < 10000) {
		a = v / 100;
		lz = a < 10;
		memcpy(p, &rtr__jsontext_digits[2 * a + lz], 2);
		p -= lz;
		rtr__jsontext_put2(p + 2, v - a * 100);
		return p + 4;
	}
	if (v < 1000000) {
		a = v / 10000;
		lz = a < 10;
		memcpy(p, &rtr__jsontext_digits[2 * a + lz], 2);
		p -= lz;
		rtr__jsontext_put4(p + 2, v - a * 10000);
		return p + 6;
	}
	a = v / 1000000;
	lz = a < 10;
	memcpy(p, &rtr__jsontext_digits[2 * a + lz], 2);
	p -= lz;
	v -= a * 1000000;
	rtr__jsontext_put2(p + 2, v / 10000);
	rtr__jsontext_put4(p + 4, v % 10000);
	return p + 8;
}
#endif

static inline char *rtr__jsontext_put_u64(char *p, uint64_t v)
{
	uint64_t hi, mid;

	if (v < 100000000)
		return rtr__jsontext_put_lead8(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi < 100000000) {
		p = rtr__jsontext_put_lead8(p, (uint32_t)hi);
		rtr__jsontext_put8(p, (uint32_t)(v - hi * 100000000));
		return p + 8;
	}
	mid = hi;
	hi = mid / 100000000; /* at most 1844 */
	p = rtr__jsontext_put_lead8(p, (uint32_t)hi);
	rtr__jsontext_put8(p, (uint32_t)(mid - hi * 100000000));
	rtr__jsontext_put8(p + 8, (uint32_t)(v - mid * 100000000));
	return p + 16;
}

/* Decimal digits of v; as rtr__jsontext_u64(). */
static inline char *rtr__jsontext_u64_inline(char *cur, uint64_t v)
{
	if (v < 100) { /* one pair, as in rtr__jsontext_us_inline() */
		uint32_t lz = v < 10;
		memcpy(cur, &rtr__jsontext_digits[2 * v + lz], 2);
		return cur + 2 - lz;
	}
	if (v < 100000000) /* one group, inline */
		return rtr__jsontext_put_lead8(cur, (uint32_t)v);
	return rtr__jsontext_put_u64(cur, v);
}

/* v with '-' when negative; as rtr__jsontext_i64(). */
static inline char *rtr__jsontext_i64_inline(char *cur, int64_t v)
{
	uint64_t u = (uint64_t)v;
	uint64_t neg = u >> 63;

	*cur = '-';
	cur += neg;
	/* 0 - u is |v| for negative v, INT64_MIN included (2^63 as uint64_t) */
	return rtr__jsontext_u64_inline(cur, neg ? 0 - u : u);
}

/* The fraction of a microsecond, ".ddd" for each count of nanoseconds, and how many
 * of those bytes are significant (jsontext.c). */
struct rtr__jsontext_us_frac {
	char text[4];
	uint8_t len;
};
RTR_JSONTEXT_HIDDEN extern const struct rtr__jsontext_us_frac rtr__jsontext_us_fracs[1000];

/*
 * ns as microseconds; as rtr__jsontext_us(). Below 100 us (most durations) the integer
 * part is one pair of rtr__jsontext_digits: for a single digit the pair starting at the
 * digit itself, the cursor then moving one byte (the spare byte is overwritten next).
 * The fraction's four bytes are always stored after the integer part (whose 17
 * digits at most make 21 bytes in all), and the cursor moves past the significant
 * ones.
 */
static inline char *rtr__jsontext_us_inline(char *cur, uint64_t ns)
{
	uint64_t us = ns / 1000;
	const struct rtr__jsontext_us_frac *f = &rtr__jsontext_us_fracs[ns - us * 1000];

	if (us < 100) {
		uint32_t lz = us < 10;
		memcpy(cur, &rtr__jsontext_digits[2 * us + lz], 2);
		cur += 2 - lz;
	} else if (us < 100000000) { /* below 100 s: one group, inline */
		cur = rtr__jsontext_put_lead8(cur, (uint32_t)us);
	} else {
		cur = rtr__jsontext_put_u64(cur, us);
	}
	memcpy(cur, f->text, sizeof(f->text));
	return cur + f->len;
}

/*
 * The integer part of the last timestamp rtr__jsontext_us_near() wrote: the digits of
 * ns / 1000 without leading zeros (at most 17). Zero it to start.
 */
struct rtr__jsontext_us_cache {
	uint64_t key;	   /* 1 + the microseconds text holds; 0: none */
	uint64_t hundreds; /* their hundreds, when at least one: the same but the last two */
	uint32_t len;
	char text[24]; /* copied whole: the bytes after len are scratch */
};

/*
 * rtr__jsontext_us(), for timestamps that come close together: mostly in the same
 * microsecond as the last call (the integer part is copied whole from c), or in the
 * same hundred (its last two digits are rewritten there first). Same output, same
 * bound.
 */
static inline char *rtr__jsontext_us_near(char *cur, uint64_t ns, struct rtr__jsontext_us_cache *c)
{
	uint64_t us = ns / 1000;
	const struct rtr__jsontext_us_frac *f = &rtr__jsontext_us_fracs[ns - us * 1000];

	if (RTR_UNLIKELY(us + 1 != c->key)) {
		uint64_t hundreds = us / 100;
		if (hundreds != 0 && hundreds == c->hundreds)
			rtr__jsontext_put2(c->text + c->len - 2, (uint32_t)(us - hundreds * 100));
		else
			c->len = (uint32_t)(rtr__jsontext_put_u64(c->text, us) - c->text);
		c->key = us + 1;
		c->hundreds = hundreds;
	}
	memcpy(cur, c->text, sizeof(c->text));
	cur += c->len;
	memcpy(cur, f->text, sizeof(f->text));
	return cur + f->len;
}

#endif
