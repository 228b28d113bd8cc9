/* SPDX-License-Identifier: MIT */
/*
 * make_tables: prints src/common/jsontext_tables.c, the constant tables of the JSON
 * text library, byte for byte:
 *
 *	cc -std=c11 -O2 -o make_tables misc/make_tables.c
 *	./make_tables > src/common/jsontext_tables.c
 *
 * The test jsontext_tables (tests/CMakeLists.txt) builds it and checks that the file
 * in the tree is still what it prints.
 *
 * Three tables:
 *   rtr__jsontext_digits	the 100 two-digit pairs "00".."99" for integer formatting;
 *   rtr__jsontext_esc	the class of every byte value for string escaping;
 *   rtr__jsontext_pow10	Schubfach's 126-bit approximations g of 10^e, e = -292..324.
 *
 * The powers of ten are computed exactly with a small big-integer type, and the
 * integer approximations of floor(log10(2^q)), floor(log10(3/4 2^q)) and
 * floor(log2(10^e)) that jsontext.c uses to index them are checked here against
 * the exact values over the whole range jsontext.c needs. Any mismatch aborts, so a table
 * that prints is a table that holds.
 *
 * Not part of the library; printf is fine here.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte classes of rtr__jsontext_esc (enum json_esc_class), from the library itself. */
#include "../src/common/jsontext_internal.h"

/* Schubfach table range: g for 10^e, e = -k, k = floor(log10(2^q)) over doubles. */
#define POW10_MIN (-292)
#define POW10_MAX 324
#define Q_MIN	  (-1074)
#define Q_MAX	  971

/* ---- a minimal unsigned big integer, 32-bit limbs, little-endian ---- */

#define BIG_LIMBS 128 /* 4096 bits: the largest number used here has about 2600 */

struct big {
	uint32_t l[BIG_LIMBS];
};

static void big_set(struct big *a, uint32_t v)
{
	memset(a, 0, sizeof(*a));
	a->l[0] = v;
}

static void big_mul_small(struct big *a, uint32_t m)
{
	uint64_t carry = 0;

	for (int i = 0; i < BIG_LIMBS; i++) {
		uint64_t t = (uint64_t)a->l[i] * m + carry;

		a->l[i] = (uint32_t)t;
		carry = t >> 32;
	}
	assert(carry == 0);
}

static int big_bits(const struct big *a)
{
	for (int i = BIG_LIMBS - 1; i >= 0; i--) {
		if (a->l[i])
			return i * 32 + 32 - __builtin_clz(a->l[i]);
	}
	return 0;
}

static void big_shl(struct big *a, int n)
{
	int limbs = n / 32, bits = n % 32;

	assert(n >= 0 && big_bits(a) + n <= BIG_LIMBS * 32);
	for (int i = BIG_LIMBS - 1; i >= 0; i--) {
		uint64_t v = 0;

		if (i - limbs >= 0)
			v = (uint64_t)a->l[i - limbs] << bits;
		if (bits && i - limbs - 1 >= 0)
			v |= (uint64_t)a->l[i - limbs - 1] >> (32 - bits);
		a->l[i] = (uint32_t)v;
	}
}

static int big_cmp(const struct big *a, const struct big *b)
{
	for (int i = BIG_LIMBS - 1; i >= 0; i--) {
		if (a->l[i] != b->l[i])
			return a->l[i] < b->l[i] ? -1 : 1;
	}
	return 0;
}

static void big_sub(struct big *a, const struct big *b)
{
	int64_t borrow = 0;

	for (int i = 0; i < BIG_LIMBS; i++) {
		int64_t t = (int64_t)a->l[i] - b->l[i] - borrow;

		borrow = t < 0;
		a->l[i] = (uint32_t)(t + (borrow << 32));
	}
	assert(borrow == 0);
}

/* 3^t 2^a 5^b as a fraction num/den of big integers (t >= 0). */
static void fraction(int t, int a, int b, struct big *num, struct big *den)
{
	big_set(num, 1);
	big_set(den, 1);
	for (int i = 0; i < t; i++)
		big_mul_small(num, 3);
	for (int i = 0; i < (b < 0 ? -b : b); i++)
		big_mul_small(b < 0 ? den : num, 5);
	if (a > 0)
		big_shl(num, a);
	else
		big_shl(den, -a);
	assert(big_bits(num) < BIG_LIMBS * 32 - 160 && big_bits(den) < BIG_LIMBS * 32 - 160);
}

/* Whether 3^t 2^a 5^b >= 1. */
static int ge1(int t, int a, int b)
{
	struct big num, den;

	fraction(t, a, b, &num, &den);
	return big_cmp(&num, &den) >= 0;
}

/* floor(3^t 2^a 5^b) for a value below 2^128. */
static unsigned __int128 floor_of(int t, int a, int b)
{
	struct big num, den, sh;
	unsigned __int128 q = 0;

	fraction(t, a, b, &num, &den);
	for (int i = 127; i >= 0; i--) {
		sh = den;
		big_shl(&sh, i);
		if (big_cmp(&sh, &num) <= 0) {
			big_sub(&num, &sh);
			q |= (unsigned __int128)1 << i;
		}
	}
	assert(big_cmp(&num, &den) < 0); /* the quotient fit in 128 bits */
	return q;
}

/* ---- the exact values the approximations in json.c must reproduce ---- */

/* floor(log10(3^t 2^q)): the k with 10^k <= x < 10^(k+1), x = 3^t 2^q. */
static int exact_floor_log10(int t, int q)
{
	int k = (int)((q + 1.58 * t) * 0.30103); /* a guess, then walk */

	while (!ge1(t, q - k, -k))
		k--;
	while (ge1(t, q - k - 1, -k - 1))
		k++;
	return k;
}

/* floor(log2(10^e)): the r with 2^r <= 10^e < 2^(r+1). */
static int exact_floor_log2_pow10(int e)
{
	int r = (int)(e * 3.3219);

	while (!ge1(0, e - r, e))
		r--;
	while (ge1(0, e - r - 1, e))
		r++;
	return r;
}

/* The integer forms json.c uses; right shift of a negative int is arithmetic. */
static int flog10_pow2(int q)
{
	return (q * 1262611) >> 22;
}

static int flog10_three_quarters_pow2(int q)
{
	return (q * 1262611 - 524031) >> 22;
}

static int flog2_pow10(int e)
{
	return (e * 1741647) >> 19;
}

static void check_log_approximations(void)
{
	for (int q = Q_MIN; q <= Q_MAX; q++) {
		int k = flog10_pow2(q), k34 = flog10_three_quarters_pow2(q);

		if (k != exact_floor_log10(0, q) || k34 != exact_floor_log10(1, q - 2)) {
			fprintf(stderr, "make_tables: floor(log10) approximation wrong at q=%d\n",
				q);
			exit(1);
		}
		/*
		 * Schubfach's scaling h = q + floor(log2(10^-k)) + 2 is in 2..5 for the k of
		 * regular spacing, and for the k of the closer lower neighbour (normal c =
		 * 2^52, q > Q_MIN); json.c shifts c by it and needs the result below 2^63.
		 */
		for (int kk = k34; kk <= k; kk += k - k34 ? k - k34 : 1) {
			int h = q + flog2_pow10(-kk) + 2;

			if (kk == k34 && kk != k && q == Q_MIN)
				continue;
			if (-kk < POW10_MIN || -kk > POW10_MAX || h < 2 || h > 5) {
				fprintf(stderr, "make_tables: k=%d h=%d out of range at q=%d\n", kk,
					h, q);
				exit(1);
			}
		}
	}
	for (int e = POW10_MIN; e <= POW10_MAX; e++) {
		if (flog2_pow10(e) != exact_floor_log2_pow10(e)) {
			fprintf(stderr, "make_tables: floor(log2) approximation wrong at e=%d\n",
				e);
			exit(1);
		}
	}
}

/* ---- the tables ---- */

static void print_digits(void)
{
	printf("/* Generated by misc/make_tables.c: the pairs \"00\" to \"99\". */\n");
	printf("const char rtr__jsontext_digits[200] = {\n");
	for (int i = 0; i < 100; i++) {
		printf("%s'%d','%d',%s", i % 10 ? " " : "\t", i / 10, i % 10,
		       i % 10 == 9 ? "\n" : "");
	}
	printf("};\n");
}

static int esc_class(int b)
{
	switch (b) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	}
	if (b < 0x20 || b == 0x7f)
		return ESC_HEX;
	if (b < 0x80)
		return ESC_RAW;
	if (b < 0xc2)
		return ESC_BAD; /* continuation bytes, and C0/C1 (always overlong) */
	if (b < 0xe0)
		return ESC_U2;
	if (b == 0xe0)
		return ESC_E0;
	if (b == 0xed)
		return ESC_ED;
	if (b < 0xf0)
		return ESC_U3;
	if (b == 0xf0)
		return ESC_F0;
	if (b < 0xf4)
		return ESC_U4;
	if (b == 0xf4)
		return ESC_F4;
	return ESC_BAD;
}

static void print_esc(void)
{
	printf("/*\n");
	printf(" * Generated by misc/make_tables.c: the class of each byte for "
	       "rtr__jsontext_escape().\n");
	printf(" * 0 copy, 1..7 UTF-8 lead bytes, 8 invalid, 9 \\u00XX, else the letter of a\n");
	printf(" * two-byte escape; see enum json_esc_class.\n");
	printf(" */\n");
	printf("const uint8_t rtr__jsontext_esc[256] = {\n");
	for (int row = 0; row < 256; row += 16) {
		printf("\t/* %02X */", row);
		for (int b = row; b < row + 16; b++) {
			int c = esc_class(b);

			if (c > ESC_HEX)
				printf(" '%s%c',", c == '\\' ? "\\" : "", c);
			else
				printf(" %3d,", c);
		}
		printf("\n");
	}
	printf("};\n");
}

/*
 * g(e) = floor(10^e 2^-r) + 1 with r = floor(log2(10^e)) - 125, so that
 * 2^125 < g < 2^126 (Giulietti, "The Schubfach way to render doubles", section 9).
 * Stored as g = hi 2^63 + lo with hi, lo < 2^63, as the paper's rop() wants them.
 */
static void print_pow10(void)
{
	const unsigned __int128 m63 = ((unsigned __int128)1 << 63) - 1;

	printf("/*\n");
	printf(" * Generated by misc/make_tables.c: Schubfach's g for 10^e, e = %d..%d.\n",
	       POW10_MIN, POW10_MAX);
	printf(" * g = floor(10^e 2^-r) + 1 with r = floor(log2(10^e)) - 125, so 2^125 < g < "
	       "2^126;\n");
	printf(" * stored as { g >> 63, g & (2^63 - 1) }, two a line; the comment is the e of\n");
	printf(" * the first.\n");
	printf(" */\n");
	printf("const uint64_t rtr__jsontext_pow10[%d][2] = {\n", POW10_MAX - POW10_MIN + 1);
	for (int e = POW10_MIN; e <= POW10_MAX; e++) {
		int r = exact_floor_log2_pow10(e) - 125;
		unsigned __int128 g = floor_of(0, e - r, e) + 1;

		if (g >> 125 != 1) {
			fprintf(stderr, "make_tables: g out of range at e=%d\n", e);
			exit(1);
		}
		if ((e - POW10_MIN) % 2 == 0)
			printf("\t/* %4d */", e);
		printf(" { 0x%016llx, 0x%016llx },", (unsigned long long)(g >> 63),
		       (unsigned long long)(g & m63));
		if ((e - POW10_MIN) % 2 == 1 || e == POW10_MAX)
			printf("\n");
	}
	printf("};\n");
}

int main(void)
{
	check_log_approximations();
	printf("/* SPDX-License-Identifier: MIT */\n");
	printf("/*\n");
	printf(" * The constant tables of the JSON text library (common/jsontext_internal.h).\n");
	printf(" * Generated by misc/make_tables.c: do not edit by hand; regenerate with\n");
	printf(" *\n");
	printf(" *\t./make_tables > src/common/jsontext_tables.c\n");
	printf(" */\n");
	printf("#include \"common/jsontext_internal.h\"\n");
	printf("\n");
	printf("/* clang-format off */\n");
	print_digits();
	printf("\n");
	print_esc();
	printf("\n");
	print_pow10();
	printf("/* clang-format on */\n");
	return 0;
}
