/* SPDX-License-Identifier: MIT */
/*
 * The fast path of the reader (see event_parse.h). A recursive descent over the
 * bytes, which stops with MORE at the end of the text and with SLOW at the first
 * thing it does not take. Each function advances f->p past what it read; after MORE
 * or SLOW the parse is given up, so nothing is undone.
 */
#include "event_parse.h"

#include "common/jsontext.h"
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct fp {
	const unsigned char *p, *start, *end;
	unsigned depth;
	bool blanks;
};

/* Bytes a plain string holds as they are: printable ASCII but '"' and '\\'. */
static const uint8_t plain_byte[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline bool is_blank(unsigned c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* What may follow a number or a literal. */
static inline bool is_delimiter(unsigned c)
{
	return is_blank(c) || c == ',' || c == '}' || c == ']';
}

static inline bool is_digit(unsigned c)
{
	return c - '0' < 10;
}

static inline void skip_blanks(struct fp *f)
{
	/* Most often there is none: one look. */
	if (f->p<f->end && * f->p> ' ')
		return;
	while (f->p < f->end && is_blank(*f->p)) {
		f->p++;
		f->blanks = true;
	}
}

/* The first byte at or after p that a plain string does not hold as it is. */
static inline const unsigned char *skip_plain(const unsigned char *p, const unsigned char *end)
{
#if defined(__SSE2__)
	/* 16 bytes at a time: a quote, a backslash, a byte below 0x20 or from 0x7f. */
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
	const __m128i control = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, control), v);
		__m128i high = _mm_cmpeq_epi8(_mm_max_epu8(v, del), v);
		__m128i stop = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
			_mm_or_si128(low, high));
		unsigned mask = (unsigned)_mm_movemask_epi8(stop);

		if (mask != 0)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#endif
	while (p < end && plain_byte[*p])
		p++;
	return p;
}

/* A string that is not done in one step of parse_string(): longer than 15 bytes, or
 * holding UTF-8, or not plain, or cut by the end of the text. */
static __attribute__((noinline)) enum event_parse_result parse_string_long(struct fp *f)
{
	const unsigned char *p = f->p + 1, *end = f->end;

	for (;;) {
		unsigned more, lo, hi;

		p = skip_plain(p, end);
		if (p == end)
			return EVENT_PARSE_MORE;
		if (*p == '"') {
			f->p = p + 1;
			return EVENT_PARSE_DONE;
		}
		/* '\\', control bytes, DEL, and UTF-8 that is not valid. */
		if (*p < 0x80 || !rtr__jsontext_utf8_lead(*p, &more, &lo, &hi))
			return EVENT_PARSE_SLOW;
		for (p++; more > 0; more--, p++) {
			if (p == end)
				return EVENT_PARSE_MORE;
			if (*p < lo || *p > hi)
				return EVENT_PARSE_SLOW;
			lo = 0x80;
			hi = 0xbf;
		}
	}
}

/* A string, from its opening quote to just past its closing one. Most strings of a
 * trace (keys, names, categories) are plain and short: one look at the 16 bytes
 * after the quote finds the closing one, inline. */
static inline enum event_parse_result parse_string(struct fp *f)
{
#if defined(__SSE2__)
	const unsigned char *p = f->p + 1;

	if (f->end - p >= 16) {
		const __m128i control = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, control), v);
		__m128i high = _mm_cmpeq_epi8(_mm_max_epu8(v, del), v);
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
							 _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
					    _mm_or_si128(low, high));
		unsigned mask = (unsigned)_mm_movemask_epi8(stop);

		if (mask != 0 && p[__builtin_ctz(mask)] == '"') {
			f->p = p + __builtin_ctz(mask) + 1;
			return EVENT_PARSE_DONE;
		}
	}
#endif
	return parse_string_long(f);
}

/* Past the digits from p (up to end). Eight at a time where eight bytes are left:
 * a byte is a digit when its high nibble is 3 and its low one below 10. */
static inline const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t x, other;

		memcpy(&x, p, 8);
		other = ((x & 0xf0f0f0f0f0f0f0f0u) ^ 0x3030303030303030u) |
			(((x & 0x0f0f0f0f0f0f0f0fu) + 0x0606060606060606u) & 0xf0f0f0f0f0f0f0f0u);
		if (other != 0) {
			/* The first byte that is not 0: its bit 7 set, then counted. */
			other = (((other & 0x7f7f7f7f7f7f7f7fu) + 0x7f7f7f7f7f7f7f7fu) | other) &
				0x8080808080808080u;
			return p + (__builtin_ctzll(other) >> 3);
		}
		p += 8;
	}
#endif
	while (p < end && is_digit(*p))
		p++;
	return p;
}

/* Digits from p; NULL when there are none, and end when they run to it. */
static const unsigned char *digits(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *d = p;

	p = skip_digits(p, end);
	return p == d && p < end ? NULL : p;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, followed by a delimiter. */
static enum event_parse_result parse_number(struct fp *f)
{
	const unsigned char *p = f->p, *end = f->end;

	p += *p == '-';
	if (p == end)
		return EVENT_PARSE_MORE;
	if (*p == '0')
		p++;
	else if ((p = digits(p, end)) == NULL)
		return EVENT_PARSE_SLOW;
	if (p < end && *p == '.' && (p = digits(p + 1, end)) == NULL)
		return EVENT_PARSE_SLOW;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if ((p = digits(p, end)) == NULL)
			return EVENT_PARSE_SLOW;
	}
	if (p == end)
		return EVENT_PARSE_MORE;
	if (!is_delimiter(*p))
		return EVENT_PARSE_SLOW;
	f->p = p;
	return EVENT_PARSE_DONE;
}

static enum event_parse_result parse_literal(struct fp *f, const char *word, size_t n)
{
	size_t have = (size_t)(f->end - f->p);

	if (have <= n) /* the delimiter after it is not here yet */
		return memcmp(f->p, word, have) == 0 ? EVENT_PARSE_MORE : EVENT_PARSE_SLOW;
	if (memcmp(f->p, word, n) != 0 || !is_delimiter(f->p[n]))
		return EVENT_PARSE_SLOW;
	f->p += n;
	return EVENT_PARSE_DONE;
}

static enum event_parse_result parse_value(struct fp *f);

/* The members of an object or the elements of an array, from just past its opening
 * byte to just past its close. In an event's top level (members != NULL) and in its
 * args (args != NULL) the keys and values are recorded. */
static enum event_parse_result parse_container(struct fp *f, unsigned char close,
					       struct event_parse *members,
					       struct event_parse *args);

static enum event_parse_result parse_value(struct fp *f)
{
	if (f->p == f->end)
		return EVENT_PARSE_MORE;
	switch (*f->p) {
	case '"':
		return parse_string(f);
	case '{':
		return parse_container(f, '}', NULL, NULL);
	case '[':
		return parse_container(f, ']', NULL, NULL);
	case 't':
		return parse_literal(f, "true", 4);
	case 'f':
		return parse_literal(f, "false", 5);
	case 'n':
		return parse_literal(f, "null", 4);
	default:
		return *f->p == '-' || is_digit(*f->p) ? parse_number(f) : EVENT_PARSE_SLOW;
	}
}

static enum trace_type type_at(unsigned char c)
{
	switch (c) {
	case '"':
		return TRACE_STRING;
	case '{':
		return TRACE_OBJECT;
	case '[':
		return TRACE_ARRAY;
	case 'n':
		return TRACE_NULL;
	case 't':
	case 'f':
		return TRACE_BOOL;
	default:
		return TRACE_NUMBER;
	}
}

/* The value just parsed, from v to f->p. */
static struct event_ref ref_of(const struct fp *f, const unsigned char *v)
{
	struct event_ref r = {type_at(*v), (size_t)(v - f->start), (size_t)(f->p - v)};

	if (r.type == TRACE_STRING) {
		r.off++;
		r.len -= 2;
	}
	return r;
}

/* The known key k[0 .. len) names, or -1 (tried in order of how often they come). */
static int field_of(const unsigned char *k, size_t len)
{
	switch (len) {
	case 1:
		return k[0] == 's' ? TRACE_F_S : -1;
	case 2:
		if (k[0] == 'p' && k[1] == 'h')
			return TRACE_F_PH;
		if (k[0] == 't' && k[1] == 's')
			return TRACE_F_TS;
		if (k[0] == 'i' && k[1] == 'd')
			return TRACE_F_ID;
		return k[0] == 'b' && k[1] == 'p' ? TRACE_F_BP : -1;
	case 3:
		if (memcmp(k, "pid", 3) == 0)
			return TRACE_F_PID;
		if (memcmp(k, "tid", 3) == 0)
			return TRACE_F_TID;
		if (memcmp(k, "cat", 3) == 0)
			return TRACE_F_CAT;
		return memcmp(k, "dur", 3) == 0 ? TRACE_F_DUR : -1;
	case 4:
		if (memcmp(k, "name", 4) == 0)
			return TRACE_F_NAME;
		return memcmp(k, "args", 4) == 0 ? TRACE_F_ARGS : -1;
	default:
		return -1;
	}
}

/*
 * A known top-level key at p as the recorder writes it, `"ph":` (quotes and colon,
 * no blanks): its field, and in *n the bytes it takes; -1 when it is not one (the key
 * is then read as any other). One 8-byte look instead of a string scan.
 */
static inline int known_key(const unsigned char *p, const unsigned char *end, size_t *n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* Each key's bytes, `"ph":` and so on, as a little-endian word. */
	static const struct {
		uint64_t word;
		unsigned char len, field;
	} keys[] = {
		{0x0000003a22687022u, 5, TRACE_F_PH},	/* "ph": */
		{0x00003a2274616322u, 6, TRACE_F_CAT},	/* "cat": */
		{0x003a22656d616e22u, 7, TRACE_F_NAME}, /* "name": */
		{0x0000003a22737422u, 5, TRACE_F_TS},	/* "ts": */
		{0x00003a2272756422u, 6, TRACE_F_DUR},	/* "dur": */
		{0x00003a2264697022u, 6, TRACE_F_PID},	/* "pid": */
		{0x00003a2264697422u, 6, TRACE_F_TID},	/* "tid": */
		{0x003a227367726122u, 7, TRACE_F_ARGS}, /* "args": */
		{0x000000003a227322u, 4, TRACE_F_S},	/* "s": */
		{0x0000003a22646922u, 5, TRACE_F_ID},	/* "id": */
		{0x0000003a22706222u, 5, TRACE_F_BP},	/* "bp": */
	};
	uint64_t w;
	int i;

	if (end - p < 8)
		return -1;
	memcpy(&w, p, 8);
	switch (p[1]) {
	case 'p':
		i = p[2] == 'h' ? 0 : 5;
		break;
	case 'c':
		i = 1;
		break;
	case 'n':
		i = 2;
		break;
	case 't':
		i = p[2] == 's' ? 3 : 6;
		break;
	case 'd':
		i = 4;
		break;
	case 'a':
		i = 7;
		break;
	case 's':
		i = 8;
		break;
	case 'i':
		i = 9;
		break;
	case 'b':
		i = 10;
		break;
	default:
		return -1;
	}
	if ((w & (~(uint64_t)0 >> (64 - 8 * keys[i].len))) != keys[i].word)
		return -1;
	*n = keys[i].len;
	return keys[i].field;
#else
	(void)p, (void)end, (void)n;
	return -1;
#endif
}

/*
 * The number parse_number() took, p[0 .. end), in the short form: ns for a time (us:
 * ts, dur), else an integer (pid, tid). false for any other form, which the reader
 * leaves to json_parse_us() and json_parse_i64(). Its result is theirs.
 */
static bool short_number(const unsigned char *p, const unsigned char *end, bool us, int64_t *out)
{
	static const uint64_t scale[] = {1000, 100, 10, 1};
	bool neg = *p == '-';
	const unsigned char *digits_start;
	uint64_t v = 0, fraction = 0;
	size_t decimals = 0;

	p += neg;
	digits_start = p;
	for (; p < end && is_digit(*p); p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (p - digits_start > 15)
		return false;
	if (p < end) {
		if (!us || *p != '.')
			return false;
		for (p++; p < end && decimals < 4 && is_digit(*p); p++, decimals++)
			fraction = fraction * 10 + (uint64_t)(*p - '0');
		if (p < end || decimals > 3)
			return false;
	}
	if (us)
		v = v * 1000 + fraction * scale[decimals];
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* Record a top-level member of the event, its key's field given (-1: not known yet);
 * SLOW for a known key seen twice (the full parser reports it). */
static enum event_parse_result record_member(struct fp *f, struct event_parse *e,
					     const struct event_ref *key, int field,
					     const unsigned char *v)
{
	if (field < 0)
		field = field_of(f->start + key->off, key->len);
	if (field < 0)
		return EVENT_PARSE_DONE;
	if (e->field[field].type != TRACE_ABSENT)
		return EVENT_PARSE_SLOW;
	e->field[field] = ref_of(f, v);
	if (e->field[field].type == TRACE_NUMBER && (field == TRACE_F_TS || field == TRACE_F_DUR ||
						     field == TRACE_F_PID || field == TRACE_F_TID))
		e->has_number[field] = short_number(
			v, f->p, field == TRACE_F_TS || field == TRACE_F_DUR, &e->number[field]);
	return EVENT_PARSE_DONE;
}

static enum event_parse_result record_arg(struct fp *f, struct event_parse *e,
					  const struct event_ref *key, const unsigned char *v)
{
	struct event_ref_arg *a = array_grow(e->arg, &e->args_cap, e->nargs + 1, sizeof(*a), 16);

	if (a == NULL)
		return EVENT_PARSE_SLOW; /* the full parser says "out of memory" */
	e->arg = a;
	e->arg[e->nargs].key = *key;
	e->arg[e->nargs].value = ref_of(f, v);
	e->nargs++;
	return EVENT_PARSE_DONE;
}

static enum event_parse_result parse_container(struct fp *f, unsigned char close,
					       struct event_parse *members,
					       struct event_parse *args)
{
	/* Not undone on MORE or SLOW: then the whole event is given up. */
	struct fp *g = f;
	enum event_parse_result rc;

	if (++g->depth > EVENT_PARSE_MAX_DEPTH)
		return EVENT_PARSE_SLOW;
	g->p++;
	skip_blanks(g);
	if (g->p == g->end)
		return EVENT_PARSE_MORE;
	if (*g->p != close) {
		for (;;) {
			struct event_ref key = {TRACE_STRING, 0, 0};
			const unsigned char *v;
			int field = -1;
			size_t n;

			if (members != NULL && (field = known_key(g->p, g->end, &n)) >= 0) {
				key.off = (size_t)(g->p + 1 - g->start);
				key.len = n - 3;
				g->p += n;
				skip_blanks(g);
			} else if (close == '}') {
				const unsigned char *k = g->p;

				if (*k != '"')
					return EVENT_PARSE_SLOW;
				if ((rc = parse_string(g)) != EVENT_PARSE_DONE)
					return rc;
				key.off = (size_t)(k + 1 - g->start);
				key.len = (size_t)(g->p - k - 2);
				skip_blanks(g);
				if (g->p == g->end)
					return EVENT_PARSE_MORE;
				if (*g->p != ':')
					return EVENT_PARSE_SLOW;
				g->p++;
				skip_blanks(g);
			}
			v = g->p;
			if (members != NULL && v < g->end && *v == '{' && key.len == 4 &&
			    memcmp(g->start + key.off, "args", 4) == 0)
				rc = parse_container(g, '}', NULL, members);
			else
				rc = parse_value(g);
			if (rc != EVENT_PARSE_DONE)
				return rc;
			if (members != NULL)
				rc = record_member(g, members, &key, field, v);
			else if (args != NULL)
				rc = record_arg(g, args, &key, v);
			if (rc != EVENT_PARSE_DONE)
				return rc;
			skip_blanks(g);
			if (g->p == g->end)
				return EVENT_PARSE_MORE;
			if (*g->p == close)
				break;
			if (*g->p != ',')
				return EVENT_PARSE_SLOW;
			g->p++;
			skip_blanks(g);
			if (g->p == g->end)
				return EVENT_PARSE_MORE;
		}
	}
	g->p++;
	g->depth--;
	return EVENT_PARSE_DONE;
}

enum event_parse_result event_parse(struct event_parse *e, const unsigned char *p, size_t len)
{
	struct fp f = {p, p, p + len, 0, false};
	enum event_parse_result rc;

	for (int i = 0; i < TRACE_F_COUNT; i++) {
		e->field[i].type = TRACE_ABSENT;
		e->has_number[i] = false;
	}
	e->nargs = 0;
	rc = parse_container(&f, '}', e, NULL);
	e->blanks = f.blanks;
	e->len = (size_t)(f.p - p);
	return rc;
}

void event_parse_free(struct event_parse *e)
{
	free(e->arg);
	e->arg = NULL;
	e->nargs = e->args_cap = 0;
}

size_t event_parse_compact(char *dst, const unsigned char *src, size_t len)
{
	size_t n = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		unsigned c = src[i];

		/* No escapes in plain text: every quote opens or closes a string. */
		in_string ^= c == '"';
		if (in_string || !is_blank(c))
			dst[n++] = (char)c;
	}
	return n;
}
