/* SPDX-License-Identifier: MIT */
/*
 * What the fuzzers check output against, written apart from src/common/jsontext.c:
 *
 *	sanitize()	the bytes a JSON string must decode to: the input with each
 *			maximal ill-formed subpart replaced by U+FFFD (Unicode 3.9,
 *			"U+FFFD Substitution of Maximal Subparts"), by a decoder of its
 *			own (ranges of Unicode Table 3-7 spelled out per lead byte).
 *	json_parse()	one JSON text, strictly: yajl's parser (no comments, nothing
 *			after the value), every string and key valid UTF-8 by RFC 3629
 *			(checked here, as yajl's own check lets overlong forms and
 *			surrogates through), and every \u escape in the raw text below
 *			U+0080 (the writer writes other characters raw, never as
 *			surrogate pairs), no raw 0x7F inside a string. Gives a small tree.
 *
 * The cut of copied strings, as the library makes it: a copied string (a _copy
 * name, a STR_COPY value, each STR_ARRAY item) is taken up to its first NUL and at
 * most RTR_MAX_COPY bytes (strnlen in src/producer/events.c; a STR_ARRAY's items share the
 * RTR_MAX_COPY bytes of their argument, 4 bytes of length each besides). The cut
 * falls on a byte, not a character: a multi-byte sequence cut there is an
 * ill-formed subpart at the end of the bytes kept, and the writer shows it as one
 * U+FFFD, the same as sanitize() of the bytes kept. So the expected text of a copied
 * string is sanitize(its first min(strnlen, RTR_MAX_COPY) bytes).
 *
 * Everything aborts on a mismatch (a finding for libFuzzer). Single-threaded.
 */
#ifndef RTR_FUZZ_CHECK_H
#define RTR_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define FUZZ_FAIL(...)                                 \
	do {                                           \
		fprintf(stderr, "fuzz: " __VA_ARGS__); \
		fputc('\n', stderr);                   \
		abort();                               \
	} while (0)

/* ---- the reference sanitizer ---- */

/* The length of the well-formed sequence at s (at most n bytes), or 0 when it is
 * ill-formed; then *bad is the length of its maximal subpart (at least 1). */
static size_t utf8_seq(const uint8_t *s, size_t n, size_t *bad)
{
	uint8_t b = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	*bad = 1;
	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf) {
		need = 2;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 3;
		if (b == 0xe0)
			lo = 0xa0; /* no overlong forms */
		if (b == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 4;
		if (b == 0xf0)
			lo = 0x90; /* no overlong forms */
		if (b == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else {
		return 0; /* 80..C1, F5..FF: never in UTF-8 */
	}
	for (size_t k = 1; k < need; k++) {
		uint8_t c = k < n ? s[k] : 0;
		if (k >= n || c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) {
			*bad = k; /* the lead and the k - 1 bytes that fit */
			return 0;
		}
	}
	return need;
}

/* The expected decoded bytes of src (n bytes) into out (3n bytes at most); returns
 * the length. */
static size_t sanitize(char *out, const char *src, size_t n)
{
	const uint8_t *s = (const uint8_t *)src;
	size_t o = 0, i = 0, bad;

	while (i < n) {
		size_t len = utf8_seq(s + i, n - i, &bad);
		if (len > 0) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	return o;
}

/* Whether n bytes at s are all well-formed UTF-8. */
static int utf8_valid(const char *s, size_t n)
{
	size_t i = 0, bad;

	while (i < n) {
		size_t len = utf8_seq((const uint8_t *)s + i, n - i, &bad);
		if (len == 0)
			return 0;
		i += len;
	}
	return 1;
}

/* ---- a strict JSON parse into a small tree ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	char *s; /* J_STR: decoded bytes; J_NUM: the text; an object member: its key */
	size_t len;
	char *key;
	size_t key_len;
	struct jnode *kids, *last, *next, *up;
	size_t n;
};

/* One line's tree lives in this arena; reset per line. */
struct jarena {
	char *base;
	size_t used, cap;
};

static void *jalloc(struct jarena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (a->used + n > a->cap)
		FUZZ_FAIL("arena full (%zu bytes)", a->cap);
	void *p = a->base + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

struct jparse {
	struct jarena *a;
	struct jnode *root, *cur; /* cur: the open array or object */
	char *key;		  /* the key of the next member */
	size_t key_len;
};

static char *jdup(struct jarena *a, const unsigned char *s, size_t n)
{
	char *d = jalloc(a, n + 1);
	memcpy(d, s, n);
	return d;
}

static int jadd(struct jparse *p, enum jtype type, const unsigned char *s, size_t n)
{
	struct jnode *v = jalloc(p->a, sizeof(*v));

	v->type = type;
	if (s != NULL) {
		v->s = jdup(p->a, s, n);
		v->len = n;
	}
	if (p->cur == NULL) {
		p->root = v;
	} else {
		if (p->cur->type == J_OBJ) {
			v->key = p->key;
			v->key_len = p->key_len;
		}
		if (p->cur->last != NULL)
			p->cur->last->next = v;
		else
			p->cur->kids = v;
		p->cur->last = v;
		p->cur->n++;
		v->up = p->cur;
	}
	if (type == J_ARR || type == J_OBJ)
		p->cur = v;
	return 1;
}

static int j_null(void *ctx)
{
	return jadd(ctx, J_NULL, NULL, 0);
}

static int j_bool(void *ctx, int b)
{
	return jadd(ctx, J_BOOL, (const unsigned char *)(b ? "true" : "false"), b ? 4 : 5);
}

static int j_number(void *ctx, const char *s, size_t n)
{
	return jadd(ctx, J_NUM, (const unsigned char *)s, n);
}

static int j_string(void *ctx, const unsigned char *s, size_t n)
{
	if (!utf8_valid((const char *)s, n))
		FUZZ_FAIL("a string is not valid UTF-8");
	return jadd(ctx, J_STR, s, n);
}

/* A key twice in one object fails json_parse(), unless this is set: the library
 * never writes one, but the tools' reader carries an input's through as they are. */
static int json_duplicate_keys_ok;

static int j_key(void *ctx, const unsigned char *s, size_t n)
{
	struct jparse *p = ctx;

	if (!utf8_valid((const char *)s, n))
		FUZZ_FAIL("a key is not valid UTF-8");
	for (struct jnode *k = json_duplicate_keys_ok ? NULL : p->cur->kids; k != NULL; k = k->next)
		if (k->key_len == n && memcmp(k->key, s, n) == 0)
			FUZZ_FAIL("key \"%.*s\" twice in one object", (int)n, s);
	p->key = jdup(p->a, s, n);
	p->key_len = n;
	return 1;
}

static int j_start_map(void *ctx)
{
	return jadd(ctx, J_OBJ, NULL, 0);
}

static int j_start_array(void *ctx)
{
	return jadd(ctx, J_ARR, NULL, 0);
}

static int j_end(void *ctx)
{
	struct jparse *p = ctx;

	p->cur = p->cur->up;
	return 1;
}

static const yajl_callbacks jcallbacks = {
	j_null,	     j_bool, NULL,  NULL,	   j_number, j_string,
	j_start_map, j_key,  j_end, j_start_array, j_end,
};

/* The raw text's escapes: \u only below U+0080, no raw 0x7F in a string. */
static void check_raw_escapes(const char *s, size_t n)
{
	int in_str = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!in_str) {
			in_str = c == '"';
			continue;
		}
		if (c == '"') {
			in_str = 0;
		} else if (c == 0x7f) {
			FUZZ_FAIL("raw 0x7F in a string at byte %zu", i);
		} else if (c == '\\' && i + 1 < n) {
			if (s[i + 1] == 'u') {
				if (i + 5 >= n)
					FUZZ_FAIL("cut \\u escape");
				char hex[5] = {s[i + 2], s[i + 3], s[i + 4], s[i + 5], 0};
				if (strtoul(hex, NULL, 16) >= 0x80)
					FUZZ_FAIL("\\u%s: non-ASCII written as an escape", hex);
			}
			i++;
		}
	}
}

/* Parse n bytes of JSON text strictly; the tree lives in a until its reset. */
static struct jnode *json_parse(struct jarena *a, const char *s, size_t n)
{
	struct jparse p = {a, NULL, NULL, NULL, 0};
	yajl_handle h = yajl_alloc(&jcallbacks, NULL, &p);

	check_raw_escapes(s, n);
	if (yajl_parse(h, (const unsigned char *)s, n) != yajl_status_ok ||
	    yajl_complete_parse(h) != yajl_status_ok) {
		unsigned char *err = yajl_get_error(h, 1, (const unsigned char *)s, n);
		fprintf(stderr, "fuzz: not strict JSON: %s\nthe text (%zu bytes): %.*s\n",
			(const char *)err, n, (int)(n < 300 ? n : 300), s);
		yajl_free_error(h, err);
		abort();
	}
	yajl_free(h);
	if (p.root == NULL)
		FUZZ_FAIL("no JSON value");
	return p.root;
}

/* The member key of object o, or NULL. */
__attribute__((unused)) static const struct jnode *jget(const struct jnode *o, const char *key)
{
	size_t n = strlen(key);

	if (o == NULL || o->type != J_OBJ)
		return NULL;
	for (const struct jnode *k = o->kids; k != NULL; k = k->next)
		if (k->key_len == n && memcmp(k->key, key, n) == 0)
			return k;
	return NULL;
}

/* Fail unless v is a string that decodes to sanitize(src[0..n)). */
__attribute__((unused)) static void expect_str(const struct jnode *v, const char *src, size_t n,
					       const char *what)
{
	static char want[3 * 65536];

	if (n > sizeof(want) / 3)
		FUZZ_FAIL("%s: input of %zu bytes too long for the check", what, n);
	size_t len = sanitize(want, src, n);
	if (v == NULL || v->type != J_STR)
		FUZZ_FAIL("%s: no string", what);
	if (v->len != len || memcmp(v->s, want, len) != 0)
		FUZZ_FAIL("%s: decoded %zu bytes, want %zu (of %zu input bytes)", what, v->len, len,
			  n);
}

#endif
