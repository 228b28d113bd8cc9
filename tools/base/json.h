/* SPDX-License-Identifier: MIT */
/*
 * Text helpers of the ringtrace tools: a growable byte buffer, JSON strings written
 * the way docs/format.md "Strings" asks, UTF-8 checks, and microsecond numbers. The
 * escaping, the UTF-8 checks and the number formatting are the library's own
 * (src/common/jsontext.h, rtr__jsontext_*), so the tools write strings and numbers
 * byte for byte as the recorder does; this file puts them into buffers and parses
 * numbers back.
 *
 * Every string the tools write goes through json_put_string(): '"', '\\' and every
 * byte 0x00-0x1F and 0x7F escaped (\n \t \r \b \f or \u00XX), all other non-ASCII
 * written as raw UTF-8, and invalid UTF-8 replaced by U+FFFD, so no input a tool
 * reads can make it write a string a viewer rejects.
 *
 * Thread safety: no global state; distinct buffers may be used at the same time.
 */
#ifndef RTR_TOOLS_JSON_H
#define RTR_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/jsontext.h"

/* A growable byte buffer. Zero-initialised it is empty; buf_free() releases it. */
struct buf {
	char *p;
	size_t len, cap;
};

/* 1 ns after t, where a tool ends what a trace left open; t itself at the end of the
 * range (saturated, never an overflow). */
static inline int64_t ns_after(int64_t t)
{
	return t < INT64_MAX ? t + 1 : t;
}

/* Make room for n more bytes. 0, or -1 when out of memory (b is unchanged). */
int buf_grow(struct buf *b, size_t n);

/*
 * An array p of *cap elements of `size` bytes, grown to hold at least `need`: its
 * capacity doubled from *cap (from `first` when empty) until they fit, *cap updated.
 * Returns the array (p itself when it had room), or NULL when out of memory, p and
 * *cap then as they were. Inline when it has room: readers call it per value.
 */
void *array_grow_to(void *p, size_t *cap, size_t need, size_t size, size_t first);

static inline void *array_grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	return need <= *cap ? p : array_grow_to(p, cap, need, size, first);
}

static inline int buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0; /* p may be NULL (an absent name) */
	if (b->cap - b->len < n && buf_grow(b, n) != 0)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static inline int buf_putc(struct buf *b, char c)
{
	return buf_put(b, &c, 1);
}

static inline int buf_puts(struct buf *b, const char *s)
{
	return buf_put(b, s, strlen(s));
}

void buf_free(struct buf *b);

/* A NUL-terminated copy of p[0 .. len) (malloc'd), or NULL when out of memory. Not
 * strndup(): the text may hold NUL bytes. */
char *text_dup(const void *p, size_t len);

/*
 * Append s[0 .. len) as a quoted JSON string, escaped as the header comment says.
 * Returns the number of invalid UTF-8 sequences replaced by U+FFFD, or -1 when out
 * of memory.
 */
long json_put_string(struct buf *b, const void *s, size_t len);

/*
 * Append s[0 .. len) unquoted and unescaped, with invalid UTF-8 replaced by U+FFFD
 * (one per maximal invalid subpart, as Unicode recommends). Returns the number
 * replaced, or -1 when out of memory.
 */
long utf8_put_valid(struct buf *b, const void *s, size_t len);

/* Most bytes json_put_us() writes (a sign and rtr__jsontext_us()'s 24). */
#define JSON_US_MAX 25

/*
 * Write ns nanoseconds as microseconds the way the recorder does: "1234.567",
 * trailing zeros dropped ("1.5", "0", "-0.001"). Writes at most JSON_US_MAX bytes,
 * no NUL; returns the new end.
 */
char *json_put_us(char *cur, int64_t ns);

/* Append a number: an integer, or nanoseconds as json_put_us() writes them. 0 or -1. */
int buf_put_i64(struct buf *b, int64_t v);
int buf_put_u64(struct buf *b, uint64_t v);
int buf_put_us(struct buf *b, int64_t ns);
/* An X's dur of dur_ns at ts_ns, as the recorder writes it: three decimals, or, when a
 * viewer's ts + dur in doubles would miss the end, the shortest text of the double
 * that makes it exact (docs/format.md). 0 or -1. */
int buf_put_dur(struct buf *b, int64_t ts_ns, int64_t dur_ns);

/*
 * Microseconds in JSON number text to nanoseconds. Exact (*exact = true) when the
 * text has at most three decimals and no exponent: "1234.567" -> 1234567, "-2" ->
 * -2000. Otherwise rounded as Perfetto does, llround(v * 1000) (*exact = false).
 * Returns 0, or -1 when the text is not a JSON number or the value does not fit
 * int64 nanoseconds.
 */
int json_parse_us(const char *text, size_t len, int64_t *ns, bool *exact);

/* A JSON integer (no fraction, no exponent) that fits int64. 0 or -1. */
int json_parse_i64(const char *text, size_t len, int64_t *v);

#endif /* RTR_TOOLS_JSON_H */
