/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the JSON text library (src/common/jsontext*.c).
 *
 * Each call writes into a buffer pre-filled with a canary byte, and every check
 * also verifies that nothing past the documented worst case ("writes at most N
 * bytes") was touched. Expected outputs are exact bytes: these primitives define
 * the bytes of the file, so here a string compare is the point (whole trace files
 * are checked by parsing, elsewhere).
 *
 * Randomised tests use a fixed-seed generator, so a failure reproduces.
 */
/* cmocka.h needs these first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsontext.h"
#include "common/jsontext_num.h"

#define U64_MAX_BYTES 20
#define US_MAX_BYTES  24
#define F64_MAX_BYTES 32
#define CANARY	      0xa5
#define CANARY_SPAN   64
#define BUF_SIZE      8192

struct fixture {
	char buf[BUF_SIZE];
	uint64_t rng;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->rng = UINT64_C(0x9e3779b97f4a7c15);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* splitmix64: a fixed sequence, so failures reproduce */
static uint64_t next_u64(struct fixture *f)
{
	uint64_t z = (f->rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static char *fresh(struct fixture *f)
{
	memset(f->buf, CANARY, sizeof(f->buf));
	return f->buf;
}

/*
 * Checks the bytes written by a call that returned `end` and promises at most `max`
 * bytes: the end is in range and the canary past `max` is intact. Then terminates
 * the output with a NUL (at `end`, inside the scratch the call may use) and returns
 * the output's length.
 */
static size_t finish(struct fixture *f, const char *end, size_t max)
{
	size_t n = (size_t)(end - f->buf);

	assert_true(end >= f->buf);
	assert_in_range(n, 0, max);
	assert_true(max + CANARY_SPAN <= sizeof(f->buf));
	for (size_t i = max; i < max + CANARY_SPAN; i++)
		assert_int_equal((uint8_t)f->buf[i], CANARY);
	f->buf[n] = '\0';
	return n;
}

static const char *u64_str(struct fixture *f, uint64_t v)
{
	finish(f, rtr__jsontext_u64(fresh(f), v), U64_MAX_BYTES);
	return f->buf;
}

static const char *i64_str(struct fixture *f, int64_t v)
{
	finish(f, rtr__jsontext_i64(fresh(f), v), U64_MAX_BYTES);
	return f->buf;
}

static const char *us_str(struct fixture *f, uint64_t ns)
{
	finish(f, rtr__jsontext_us(fresh(f), ns), US_MAX_BYTES);
	return f->buf;
}

static const char *f64_str(struct fixture *f, double v)
{
	finish(f, rtr__jsontext_f64(fresh(f), v), F64_MAX_BYTES);
	return f->buf;
}

static size_t escape_into(struct fixture *f, const void *src, size_t len)
{
	return finish(f, rtr__jsontext_escape(fresh(f), src, len), RTR_JSONTEXT_ESCAPE_BOUND(len));
}

static void assert_escapes_to(struct fixture *f, const char *src, size_t len, const char *want)
{
	size_t n = escape_into(f, src, len);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(f->buf, want, n);
}

#define ESCAPES_TO(f, lit, want) assert_escapes_to(f, lit, sizeof(lit) - 1, want)

/* ---- integers ---- */

static uint64_t pow10_u64(int e)
{
	uint64_t p = 1;

	while (e-- > 0)
		p *= 10;
	return p;
}

static void u64_writes_small_and_extreme_values(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(u64_str(f, 0), "0");
	assert_string_equal(u64_str(f, 9), "9");
	assert_string_equal(u64_str(f, 10), "10");
	assert_string_equal(u64_str(f, 99), "99");
	assert_string_equal(u64_str(f, 100), "100");
	assert_string_equal(u64_str(f, 12345678), "12345678");
	assert_string_equal(u64_str(f, 123456789), "123456789");
	assert_string_equal(u64_str(f, UINT64_C(10000000000000000)), "10000000000000000");
	assert_string_equal(u64_str(f, UINT64_MAX), "18446744073709551615");
}

static void u64_writes_every_power_of_ten_and_its_neighbours(void **state)
{
	struct fixture *f = *state;
	char want[32];

	for (int e = 0; e <= 19; e++) {
		for (int d = -1; d <= 1; d++) {
			uint64_t v = pow10_u64(e) + (uint64_t)(int64_t)d;

			snprintf(want, sizeof(want), "%" PRIu64, v);
			assert_string_equal(u64_str(f, v), want);
		}
	}
}

static void u64_matches_printf_for_random_values_of_every_width(void **state)
{
	struct fixture *f = *state;
	char want[32];

	for (int i = 0; i < 200000; i++) {
		uint64_t v = next_u64(f) >> (i % 64);

		snprintf(want, sizeof(want), "%" PRIu64, v);
		assert_string_equal(u64_str(f, v), want);
	}
}

/*
 * An eight-digit group is made as two lanes of four digits side by side
 * (jsontext_num.h, rtr__jsontext_digits8()); every value of each lane, next to a few
 * values of the other, and in both the leading group and a full one.
 */
static void u64_writes_every_four_digit_lane_in_every_group(void **state)
{
	static const uint32_t others[] = {0, 1, 10, 999, 1000, 9999};
	struct fixture *f = *state;
	char want[32];

	for (uint32_t lane = 0; lane < 10000; lane++) {
		for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
			uint64_t group[2] = {(uint64_t)lane * 10000 + others[k],
					     (uint64_t)others[k] * 10000 + lane};
			for (int g = 0; g < 2; g++) {
				uint64_t v[2] = {group[g], group[g] + UINT64_C(123) * 100000000};
				for (int j = 0; j < 2; j++) {
					snprintf(want, sizeof(want), "%" PRIu64, v[j]);
					assert_string_equal(u64_str(f, v[j]), want);
				}
			}
		}
	}
}

static void i64_writes_sign_and_extremes(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(i64_str(f, 0), "0");
	assert_string_equal(i64_str(f, 1), "1");
	assert_string_equal(i64_str(f, -1), "-1");
	assert_string_equal(i64_str(f, 9), "9");
	assert_string_equal(i64_str(f, -9), "-9");
	assert_string_equal(i64_str(f, -10), "-10");
	assert_string_equal(i64_str(f, 99), "99");
	assert_string_equal(i64_str(f, -100), "-100");
	assert_string_equal(i64_str(f, INT64_MAX), "9223372036854775807");
	assert_string_equal(i64_str(f, INT64_MIN), "-9223372036854775808");
	assert_string_equal(i64_str(f, INT64_MIN + 1), "-9223372036854775807");
}

static void i64_writes_every_power_of_ten_and_its_neighbours_with_either_sign(void **state)
{
	struct fixture *f = *state;
	char want[32];

	for (int e = 0; e <= 18; e++) {
		for (int d = -1; d <= 1; d++) {
			int64_t v = (int64_t)pow10_u64(e) + d;

			snprintf(want, sizeof(want), "%" PRId64, v);
			assert_string_equal(i64_str(f, v), want);
			snprintf(want, sizeof(want), "%" PRId64, -v);
			assert_string_equal(i64_str(f, -v), want);
		}
	}
}

static void i64_matches_printf_for_random_values_of_every_width(void **state)
{
	struct fixture *f = *state;
	char want[32];

	for (int i = 0; i < 200000; i++) {
		int64_t v = (int64_t)next_u64(f) >> (i % 64);

		snprintf(want, sizeof(want), "%" PRId64, v);
		assert_string_equal(i64_str(f, v), want);
	}
}

/* ---- microseconds ---- */

static void us_writes_nanoseconds_as_microseconds_with_at_most_three_decimals(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(us_str(f, 0), "0");
	assert_string_equal(us_str(f, 1), "0.001");
	assert_string_equal(us_str(f, 999), "0.999");
	assert_string_equal(us_str(f, 1000), "1");
	assert_string_equal(us_str(f, 1001), "1.001");
	assert_string_equal(us_str(f, 1500), "1.5");
	assert_string_equal(us_str(f, 1234567), "1234.567");
	assert_string_equal(us_str(f, UINT64_MAX), "18446744073709551.615");
}

static void us_drops_trailing_zeros_and_a_bare_point(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(us_str(f, 10), "0.01");
	assert_string_equal(us_str(f, 100), "0.1");
	assert_string_equal(us_str(f, 110), "0.11");
	assert_string_equal(us_str(f, 1010), "1.01");
	assert_string_equal(us_str(f, 1100), "1.1");
	assert_string_equal(us_str(f, 2000000), "2000");
	assert_string_equal(us_str(f, 2000020), "2000.02");
	assert_string_equal(us_str(f, UINT64_C(18446744073709551000)), "18446744073709551");
}

static void us_writes_every_fraction(void **state)
{
	struct fixture *f = *state;
	char want[48];

	for (uint64_t whole = 0; whole <= 12345678; whole += 12345678) {
		for (uint32_t frac = 0; frac < 1000; frac++) {
			int n = snprintf(want, sizeof(want), "%" PRIu64 ".%03u", whole, frac);
			while (want[n - 1] == '0')
				want[--n] = '\0';
			if (want[n - 1] == '.')
				want[--n] = '\0';
			assert_string_equal(us_str(f, whole * 1000 + frac), want);
		}
	}
}

static void us_matches_an_integer_reference_for_random_values(void **state)
{
	struct fixture *f = *state;
	char want[48];

	for (int i = 0; i < 200000; i++) {
		uint64_t ns = next_u64(f) >> (i % 64);
		int n = snprintf(want, sizeof(want), "%" PRIu64 ".%03u", ns / 1000,
				 (unsigned)(ns % 1000));

		while (want[n - 1] == '0')
			want[--n] = '\0';
		if (want[n - 1] == '.')
			want[--n] = '\0';
		assert_string_equal(us_str(f, ns), want);
	}
}

/* rtr__jsontext_us_near() against rtr__jsontext_us(): the same text for each ns of a
 * walk, in steps from 1 ns to past 100 us (cache hits and misses), across the
 * boundary at 100 us, from far off, and back down to small values. */
static void us_near_matches_us_along_walks(void **state)
{
	struct fixture *f = *state;
	struct rtr__jsontext_us_cache cache;
	char want[48];

	memset(&cache, 0, sizeof(cache));
	uint64_t ns = 0;
	for (int i = 0; i < 300000; i++) {
		uint64_t r = next_u64(f);
		switch (i % 7) {
		case 0:
			ns = r >> (r % 64); /* anywhere */
			break;
		case 1:
			ns = 99000 + r % 2000; /* around 100 us */
			break;
		default:
			ns += (r % 3 == 0) ? r % 200000 : r % 997; /* near */
			break;
		}
		size_t n = finish(f, rtr__jsontext_us(fresh(f), ns), US_MAX_BYTES);
		memcpy(want, f->buf, n + 1);
		finish(f, rtr__jsontext_us_near(fresh(f), ns, &cache), US_MAX_BYTES);
		assert_string_equal(f->buf, want);
	}
}

/* ---- doubles ---- */

static uint64_t bits_of(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return b;
}

static double double_of(uint64_t b)
{
	double v;

	memcpy(&v, &b, sizeof(v));
	return v;
}

/* Whether s is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0') {
		s++;
	} else if (*s >= '1' && *s <= '9') {
		while (*s >= '0' && *s <= '9')
			s++;
	} else {
		return 0;
	}
	if (*s == '.') {
		if (!(*++s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/*
 * A decimal string as 0.DIGITS 10^exp: its significant digits (no leading or trailing
 * zeros) into `digits`, and the exponent returned. Returns the digit count.
 */
static int normalize_decimal(const char *s, char digits[64], int *exp)
{
	int n = 0, first = 0, point = -1, e = 0;

	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.')
			point = n;
		else if (*s >= '0' && *s <= '9' && n < 63)
			digits[n++] = *s;
	}
	if (*s)
		e = atoi(s + 1);
	if (point < 0)
		point = n;
	while (first < n && digits[first] == '0')
		first++;
	while (n > first && digits[n - 1] == '0')
		n--;
	memmove(digits, digits + first, (size_t)(n - first));
	digits[n - first] = '\0';
	*exp = point - first + e;
	return n - first;
}

/* The fewest %.*g digits, 1..17, that read back as exactly v. */
static int shortest_printf_digits(double v)
{
	char tmp[48];

	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (bits_of(strtod(tmp, NULL)) == bits_of(v))
			return p;
	}
	return 17;
}

/*
 * Checks that the output for v is JSON and reads back bit-exactly; that it has no
 * more digits than the shortest %.*g that reads back; and that it is the closest
 * decimal of its length: when the correctly rounded decimal of that length (%.*e)
 * reads back as v, the output must be that decimal.
 */
static void assert_f64_round_trips_shortest(struct fixture *f, double v)
{
	const char *s = f64_str(f, v);
	char ours[64], theirs[64], tmp[48];
	int n, e_ours, e_theirs;
	char *end;
	double back;

	if (!is_json_number(s))
		fail_msg("not a JSON number: \"%s\" for %a", s, v);
	back = strtod(s, &end);
	assert_true(*end == '\0');
	if (bits_of(back) != bits_of(v))
		fail_msg("\"%s\" reads back as %a, not %a", s, back, v);
	n = normalize_decimal(s, ours, &e_ours);
	if (n > shortest_printf_digits(v))
		fail_msg("\"%s\" is longer than %%.%dg for %a", s, shortest_printf_digits(v), v);
	if (n == 0)
		return;
	snprintf(tmp, sizeof(tmp), "%.*e", n - 1, v);
	if (bits_of(strtod(tmp, NULL)) != bits_of(v))
		return; /* the nearest n-digit decimal is out of the interval; ours is not */
	normalize_decimal(tmp, theirs, &e_theirs);
	if (strcmp(ours, theirs) != 0 || e_ours != e_theirs)
		fail_msg("\"%s\" is not the closest %d-digit decimal \"%s\" to %a", s, n, tmp, v);
}

static void f64_writes_integers_below_2_pow_53_without_fraction_or_exponent(void **state)
{
	struct fixture *f = *state;
	char want[32];

	assert_string_equal(f64_str(f, 0.0), "0");
	assert_string_equal(f64_str(f, 1.0), "1");
	assert_string_equal(f64_str(f, -1.0), "-1");
	assert_string_equal(f64_str(f, 100.0), "100");
	assert_string_equal(f64_str(f, 1e15), "1000000000000000");
	assert_string_equal(f64_str(f, 4503599627370496.0), "4503599627370496"); /* 2^52 */
	assert_string_equal(f64_str(f, 9007199254740991.0), "9007199254740991"); /* 2^53-1 */
	assert_string_equal(f64_str(f, -9007199254740991.0), "-9007199254740991");
	for (int i = 0; i < 100000; i++) {
		int64_t n = (int64_t)(next_u64(f) >> (11 + i % 53)) * (i & 1 ? -1 : 1);

		snprintf(want, sizeof(want), "%" PRId64, n);
		assert_string_equal(f64_str(f, (double)n), want);
	}
}

static void f64_writes_shortest_round_trip_for_known_values(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(f64_str(f, 0.1), "0.1");
	assert_string_equal(f64_str(f, -0.1), "-0.1");
	assert_string_equal(f64_str(f, 0.3), "0.3");
	assert_string_equal(f64_str(f, 1.5), "1.5");
	assert_string_equal(f64_str(f, 2.0 / 3.0), "0.6666666666666666");
	assert_string_equal(f64_str(f, 123456.789), "123456.789");
	assert_string_equal(f64_str(f, 0.001), "0.001");
	assert_string_equal(f64_str(f, 0.000001), "0.000001");
	assert_string_equal(f64_str(f, 0.00005), "0.00005");
	assert_string_equal(f64_str(f, 1e-7), "1e-7");
	assert_string_equal(f64_str(f, 1.5e-7), "1.5e-7");
	assert_string_equal(f64_str(f, 5e-324), "5e-324"); /* smallest subnormal */
	assert_string_equal(f64_str(f, 1e-323), "1e-323"); /* 2 * smallest subnormal */
	assert_string_equal(f64_str(f, DBL_MIN), "2.2250738585072014e-308");
	assert_string_equal(f64_str(f, DBL_MAX), "1.7976931348623157e308");
	assert_string_equal(f64_str(f, -DBL_MAX), "-1.7976931348623157e308");
	assert_string_equal(f64_str(f, 9007199254740992.0), "9007199254740992"); /* 2^53 */
	assert_string_equal(f64_str(f, 9007199254740994.0), "9007199254740994"); /* 2^53+2 */
	assert_string_equal(f64_str(f, 1e16), "10000000000000000");
	assert_string_equal(f64_str(f, 1e17), "1e17");
	assert_string_equal(f64_str(f, 1.2345e18), "1.2345e18");
	assert_string_equal(f64_str(f, 1e21), "1e21");
	assert_string_equal(f64_str(f, 1e22), "1e22");
	assert_string_equal(f64_str(f, 1e23), "1e23");
	assert_string_equal(f64_str(f, 1e300), "1e300");
	assert_string_equal(f64_str(f, 1e-300), "1e-300");
	assert_string_equal(f64_str(f, 4.35), "4.35");
	assert_string_equal(f64_str(f, 5e-310), "5e-310"); /* subnormal */
}

static void f64_writes_negative_zero_as_minus_zero(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(f64_str(f, -0.0), "-0");
}

static void f64_writes_null_for_nan_and_infinities(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(f64_str(f, NAN), "null");
	assert_string_equal(f64_str(f, -NAN), "null");
	assert_string_equal(f64_str(f, INFINITY), "null");
	assert_string_equal(f64_str(f, -INFINITY), "null");
	assert_string_equal(f64_str(f, double_of(UINT64_C(0x7ff0000000000001))), "null");
	assert_string_equal(f64_str(f, double_of(UINT64_C(0xfff8000000000123))), "null");
}

static void f64_round_trips_random_bit_patterns_with_shortest_digits(void **state)
{
	struct fixture *f = *state;
	int done = 0;

	while (done < 1000000) {
		double v = double_of(next_u64(f));

		if (!isfinite(v))
			continue;
		assert_f64_round_trips_shortest(f, v);
		done++;
	}
}

/*
 * Random bit patterns almost never hit the irregular spacing at a power of two
 * (whose lower neighbour is closer) or the smallest subnormals, so cover those
 * exhaustively: every power of two and its two neighbours, and the first and last
 * subnormals.
 */
static void f64_round_trips_powers_of_two_and_subnormals_with_shortest_digits(void **state)
{
	struct fixture *f = *state;

	for (uint64_t bq = 0; bq < 0x7ff; bq++) {
		for (int64_t d = -1; d <= 1; d++) {
			uint64_t b = (bq << 52) + (uint64_t)d;

			if (b == UINT64_MAX || b == 0x7ff0000000000000)
				continue;
			assert_f64_round_trips_shortest(f, double_of(b));
			assert_f64_round_trips_shortest(f, -double_of(b));
		}
	}
	for (uint64_t c = 1; c <= 20000; c++) {
		assert_f64_round_trips_shortest(f, double_of(c));
		assert_f64_round_trips_shortest(f, double_of(0x0010000000000000 - c));
	}
}

/* Decimal-looking values, as counters and args tend to be. */
static void f64_round_trips_short_decimals_with_shortest_digits(void **state)
{
	struct fixture *f = *state;
	char tmp[48];

	for (int i = 0; i < 200000; i++) {
		int digits = 1 + (int)(next_u64(f) % 17);
		int exp = (int)(next_u64(f) % 640) - 320;
		uint64_t m = next_u64(f) % UINT64_C(100000000000000000);

		snprintf(tmp, sizeof(tmp), "%" PRIu64 "e%d", m % (uint64_t)pow(10, digits), exp);
		double v = strtod(tmp, NULL);

		if (isfinite(v))
			assert_f64_round_trips_shortest(f, v);
	}
}

/* ---- strings ---- */

static void escape_escapes_quote_and_backslash(void **state)
{
	struct fixture *f = *state;

	ESCAPES_TO(f, "\"", "\\\"");
	ESCAPES_TO(f, "\\", "\\\\");
	ESCAPES_TO(f, "say \"hi\" \\o/", "say \\\"hi\\\" \\\\o/");
}

static void escape_escapes_every_control_byte_and_del(void **state)
{
	struct fixture *f = *state;
	char want[8];

	for (int b = 0; b < 0x20; b++) {
		char src = (char)b;

		switch (b) {
		case '\b':
			strcpy(want, "\\b");
			break;
		case '\t':
			strcpy(want, "\\t");
			break;
		case '\n':
			strcpy(want, "\\n");
			break;
		case '\f':
			strcpy(want, "\\f");
			break;
		case '\r':
			strcpy(want, "\\r");
			break;
		default:
			snprintf(want, sizeof(want), "\\u%04x", b);
		}
		assert_escapes_to(f, &src, 1, want);
	}
	ESCAPES_TO(f, "\x7f", "\\u007f");
	ESCAPES_TO(f, "\x00", "\\u0000");
	ESCAPES_TO(f, "\x1f", "\\u001f");
	ESCAPES_TO(f, "a\0b", "a\\u0000b");
	ESCAPES_TO(f, "line\r\nnext\ttab", "line\\r\\nnext\\ttab");
}

static void escape_copies_printable_ascii_raw(void **state)
{
	struct fixture *f = *state;
	char src[96], want[96];
	size_t n = 0;

	for (int b = 0x20; b < 0x7f; b++) {
		if (b != '"' && b != '\\')
			src[n++] = (char)b;
	}
	memcpy(want, src, n);
	want[n] = '\0';
	assert_escapes_to(f, src, n, want);
	assert_escapes_to(f, "", 0, "");
}

static void escape_copies_valid_utf8_raw(void **state)
{
	struct fixture *f = *state;

	ESCAPES_TO(f, "caf\xc3\xa9", "caf\xc3\xa9");			       /* é */
	ESCAPES_TO(f, "\xe2\x82\xac 5", "\xe2\x82\xac 5");		       /* € */
	ESCAPES_TO(f, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");		       /* 😀 */
	ESCAPES_TO(f, "\xc2\x80\xdf\xbf", "\xc2\x80\xdf\xbf");		       /* U+0080, U+07FF */
	ESCAPES_TO(f, "\xe0\xa0\x80\xef\xbf\xbf", "\xe0\xa0\x80\xef\xbf\xbf"); /* U+0800, U+FFFF */
	ESCAPES_TO(f, "\xed\x9f\xbf\xee\x80\x80", "\xed\x9f\xbf\xee\x80\x80"); /* U+D7FF, U+E000 */
	ESCAPES_TO(f, "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
		   "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"); /* U+10000, U+10FFFF */
	ESCAPES_TO(f, "\xef\xbf\xbd", "\xef\xbf\xbd");	/* U+FFFD itself */
	ESCAPES_TO(f, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\"\n",
		   "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\\\"\\n");
}

#define FFFD "\xef\xbf\xbd"

static void escape_replaces_each_maximal_invalid_subpart_with_u_fffd(void **state)
{
	struct fixture *f = *state;

	ESCAPES_TO(f, "\x80", FFFD); /* stray continuation */
	ESCAPES_TO(f, "a\xbf\x62", "a" FFFD "b");
	ESCAPES_TO(f, "\xc0\xaf", FFFD FFFD);			/* overlong '/' */
	ESCAPES_TO(f, "\xc1\xbf", FFFD FFFD);			/* overlong 2-byte */
	ESCAPES_TO(f, "\xe0\x80\xaf", FFFD FFFD FFFD);		/* overlong 3-byte */
	ESCAPES_TO(f, "\xe0\x9f\xbf", FFFD FFFD FFFD);		/* overlong, just below */
	ESCAPES_TO(f, "\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD); /* overlong 4-byte */
	ESCAPES_TO(f, "\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD);
	ESCAPES_TO(f, "\xed\xa0\x80", FFFD FFFD FFFD);		/* surrogate U+D800 */
	ESCAPES_TO(f, "\xed\xbf\xbf", FFFD FFFD FFFD);		/* surrogate U+DFFF */
	ESCAPES_TO(f, "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* U+110000 */
	ESCAPES_TO(f, "\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
	ESCAPES_TO(f, "\xf8", FFFD);
	ESCAPES_TO(f, "\xf8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD); /* old 5-byte form */
	ESCAPES_TO(f, "\xfe\xff", FFFD FFFD);
	ESCAPES_TO(f, "\xe2\x82", FFFD); /* cut by the end: one subpart */
	ESCAPES_TO(f, "x\xe2", "x" FFFD);
	ESCAPES_TO(f, "\xf0\x9f\x98", FFFD);
	ESCAPES_TO(f, "\xf0\x9f", FFFD);
	ESCAPES_TO(f, "\xe2\x82x", FFFD "x"); /* cut by another byte */
	ESCAPES_TO(f, "\xe2\x82\"", FFFD "\\\"");
	ESCAPES_TO(f, "\xc3\xc3\xa9", FFFD "\xc3\xa9"); /* lead after lead */
	ESCAPES_TO(f, "\xf0\x9f\x98\xc3\xa9", FFFD "\xc3\xa9");
	/* the example of The Unicode Standard, section 3.9, Table 3-8 */
	ESCAPES_TO(f, "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
		   "\x61" FFFD FFFD FFFD "\x62" FFFD "\x63" FFFD FFFD "\x64");
}

/* Whether s[0..n) is well-formed UTF-8 (Unicode Table 3-7), decoded independently. */
static int is_valid_utf8(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t len;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			len = 2;
			cp = s[i] & 0x1fu;
		} else if ((s[i] & 0xf0) == 0xe0) {
			len = 3;
			cp = s[i] & 0x0fu;
		} else if ((s[i] & 0xf8) == 0xf0) {
			len = 4;
			cp = s[i] & 0x07u;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (size_t j = 1; j < len; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + j] & 0x3fu);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* Whether s[0..n) is a valid JSON string body: no raw '"', control or DEL bytes,
 * and each backslash starts a valid escape. */
static int is_json_string_body(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '"')
			return 0;
		if (s[i] != '\\')
			continue;
		if (++i == n)
			return 0;
		if (s[i] == 'u') {
			if (n - i < 5)
				return 0;
			for (int j = 1; j <= 4; j++) {
				if (!strchr("0123456789abcdefABCDEF", s[i + j]) || !s[i + j])
					return 0;
			}
			i += 4;
		} else if (!strchr("\"\\/bfnrt", s[i]) || !s[i]) {
			return 0;
		}
	}
	return 1;
}

/*
 * Bytes that exercise the validator: ASCII, escapes, every boundary of Table 3-7,
 * and bytes that are never valid.
 */
static const uint8_t interesting[] = {
	'a',  ' ',  '"',  '\\', 0x00, 0x0a, 0x1f, 0x7f, 0x80, 0x8f, 0x90,
	0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
	0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff,
};

static void escape_fuzz_output_is_valid_utf8_json_within_the_bound(void **state)
{
	struct fixture *f = *state;
	uint8_t src[600];

	for (int iter = 0; iter < 100000; iter++) {
		size_t len = next_u64(f) % (iter < 50000 ? 24 : sizeof(src));
		int mode = iter % 3;
		size_t n;

		for (size_t i = 0; i < len; i++) {
			uint64_t r = next_u64(f);

			if (mode == 0)
				src[i] = (uint8_t)r; /* uniform bytes */
			else if (mode == 1)
				src[i] = interesting[r % sizeof(interesting)];
			else
				src[i] = (uint8_t)(r % 4 ? 0x80 + r % 0x40 : 0xc0 + r % 0x40);
		}
		n = escape_into(f, src, len);
		assert_true(is_valid_utf8((const uint8_t *)f->buf, n));
		assert_true(is_json_string_body((const uint8_t *)f->buf, n));
		if (mode == 0 && len > 0 && is_valid_utf8(src, len) && !memchr(src, '"', len) &&
		    !memchr(src, '\\', len)) {
			/* input with nothing to escape or replace is copied unchanged */
			int plain = 1;

			for (size_t i = 0; i < len; i++)
				plain &= src[i] >= 0x20 && src[i] != 0x7f;
			if (plain) {
				assert_int_equal(n, len);
				assert_memory_equal(f->buf, src, len);
			}
		}
	}
}

/* The worst case: every byte a control byte without a short form. */
static void escape_worst_case_fills_exactly_the_bound(void **state)
{
	struct fixture *f = *state;
	char src[100];

	memset(src, 0x01, sizeof(src));
	assert_int_equal(escape_into(f, src, sizeof(src)), RTR_JSONTEXT_ESCAPE_BOUND(sizeof(src)));
}

static void escape_count_writes_what_escape_writes_and_counts_each_u_fffd(void **state)
{
	struct fixture *f = *state;
	static const char src[] = "a\"\x80\xc3\xa9\xe2\x82x\xf0\x9f\x98\x80\xff\x01";
	char want[RTR_JSONTEXT_ESCAPE_BOUND(sizeof(src))];
	size_t n = escape_into(f, src, sizeof(src) - 1), bad = 7;
	char *end;

	memcpy(want, f->buf, n);
	end = rtr__jsontext_escape_count(fresh(f), src, sizeof(src) - 1, &bad);
	assert_int_equal(finish(f, end, RTR_JSONTEXT_ESCAPE_BOUND(sizeof(src) - 1)), n);
	assert_memory_equal(f->buf, want, n);
	assert_int_equal(bad, 7 + 3); /* \x80, \xe2\x82 and \xff; adds to what was there */
}

static void utf8_repair_replaces_invalid_utf8_and_escapes_nothing(void **state)
{
	struct fixture *f = *state;
	static const char src[] = "a\"\\\n\x01\x7f\x80\xc3\xa9\xe2\x82x\xed\xa0\x80";
	static const char want[] = "a\"\\\n\x01\x7f" FFFD "\xc3\xa9" FFFD "x" FFFD FFFD FFFD;
	size_t bad = 0, n;

	n = finish(f, rtr__jsontext_utf8_repair(fresh(f), src, sizeof(src) - 1, &bad),
		   RTR_JSONTEXT_REPAIR_BOUND(sizeof(src) - 1));
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(f->buf, want, n);
	assert_int_equal(bad, 5);
}

/* The validator, the repair and an independent decoder agree on every input. */
static void utf8_valid_agrees_with_an_independent_decoder(void **state)
{
	struct fixture *f = *state;
	uint8_t src[64];

	assert_int_equal(rtr__jsontext_utf8_valid("", 0), 0);
	assert_int_equal(rtr__jsontext_utf8_valid("ab\xc3\xa9", 4), 4);
	assert_int_equal(rtr__jsontext_utf8_valid("ab\xe2\x82", 4), 2);
	assert_int_equal(rtr__jsontext_utf8_valid("\xed\xa0\x80", 3), 0);
	for (int iter = 0; iter < 100000; iter++) {
		size_t len = next_u64(f) % sizeof(src), v, bad = 0;

		for (size_t i = 0; i < len; i++)
			src[i] = interesting[next_u64(f) % sizeof(interesting)];
		v = rtr__jsontext_utf8_valid((const char *)src, len);
		assert_true(v <= len);
		assert_true(is_valid_utf8(src, v));
		assert_int_equal(v == len, is_valid_utf8(src, len));
		rtr__jsontext_utf8_repair(fresh(f), (const char *)src, len, &bad);
		assert_int_equal(bad == 0, v == len);
	}
}

static void utf8_lead_gives_the_ranges_of_table_3_7(void **state)
{
	unsigned more, lo, hi;

	(void)state;
	for (unsigned c = 0; c < 0xc2; c++)
		assert_false(rtr__jsontext_utf8_lead((unsigned char)c, &more, &lo, &hi));
	for (unsigned c = 0xf5; c <= 0xff; c++)
		assert_false(rtr__jsontext_utf8_lead((unsigned char)c, &more, &lo, &hi));
	assert_true(rtr__jsontext_utf8_lead(0xc2, &more, &lo, &hi));
	assert_true(more == 1 && lo == 0x80 && hi == 0xbf);
	assert_true(rtr__jsontext_utf8_lead(0xe0, &more, &lo, &hi));
	assert_true(more == 2 && lo == 0xa0 && hi == 0xbf);
	assert_true(rtr__jsontext_utf8_lead(0xed, &more, &lo, &hi));
	assert_true(more == 2 && lo == 0x80 && hi == 0x9f);
	assert_true(rtr__jsontext_utf8_lead(0xf0, &more, &lo, &hi));
	assert_true(more == 3 && lo == 0x90 && hi == 0xbf);
	assert_true(rtr__jsontext_utf8_lead(0xf4, &more, &lo, &hi));
	assert_true(more == 3 && lo == 0x80 && hi == 0x8f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(u64_writes_small_and_extreme_values, setup,
						teardown),
		cmocka_unit_test_setup_teardown(u64_writes_every_power_of_ten_and_its_neighbours,
						setup, teardown),
		cmocka_unit_test_setup_teardown(u64_writes_every_four_digit_lane_in_every_group,
						setup, teardown),
		cmocka_unit_test_setup_teardown(u64_matches_printf_for_random_values_of_every_width,
						setup, teardown),
		cmocka_unit_test_setup_teardown(i64_writes_sign_and_extremes, setup, teardown),
		cmocka_unit_test_setup_teardown(
			i64_writes_every_power_of_ten_and_its_neighbours_with_either_sign, setup,
			teardown),
		cmocka_unit_test_setup_teardown(i64_matches_printf_for_random_values_of_every_width,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			us_writes_nanoseconds_as_microseconds_with_at_most_three_decimals, setup,
			teardown),
		cmocka_unit_test_setup_teardown(us_drops_trailing_zeros_and_a_bare_point, setup,
						teardown),
		cmocka_unit_test_setup_teardown(us_writes_every_fraction, setup, teardown),
		cmocka_unit_test_setup_teardown(us_matches_an_integer_reference_for_random_values,
						setup, teardown),
		cmocka_unit_test_setup_teardown(us_near_matches_us_along_walks, setup, teardown),
		cmocka_unit_test_setup_teardown(
			f64_writes_integers_below_2_pow_53_without_fraction_or_exponent, setup,
			teardown),
		cmocka_unit_test_setup_teardown(f64_writes_shortest_round_trip_for_known_values,
						setup, teardown),
		cmocka_unit_test_setup_teardown(f64_writes_negative_zero_as_minus_zero, setup,
						teardown),
		cmocka_unit_test_setup_teardown(f64_writes_null_for_nan_and_infinities, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			f64_round_trips_random_bit_patterns_with_shortest_digits, setup, teardown),
		cmocka_unit_test_setup_teardown(
			f64_round_trips_powers_of_two_and_subnormals_with_shortest_digits, setup,
			teardown),
		cmocka_unit_test_setup_teardown(f64_round_trips_short_decimals_with_shortest_digits,
						setup, teardown),
		cmocka_unit_test_setup_teardown(escape_escapes_quote_and_backslash, setup,
						teardown),
		cmocka_unit_test_setup_teardown(escape_escapes_every_control_byte_and_del, setup,
						teardown),
		cmocka_unit_test_setup_teardown(escape_copies_printable_ascii_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(escape_copies_valid_utf8_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(
			escape_replaces_each_maximal_invalid_subpart_with_u_fffd, setup, teardown),
		cmocka_unit_test_setup_teardown(
			escape_fuzz_output_is_valid_utf8_json_within_the_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(escape_worst_case_fills_exactly_the_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			escape_count_writes_what_escape_writes_and_counts_each_u_fffd, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			utf8_repair_replaces_invalid_utf8_and_escapes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(utf8_valid_agrees_with_an_independent_decoder,
						setup, teardown),
		cmocka_unit_test_setup_teardown(utf8_lead_gives_the_ranges_of_table_3_7, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
