/* SPDX-License-Identifier: MIT */
/*
 * Text helpers of the ringtrace tools: a growable byte buffer, JSON strings written
 * the way FORMAT.md "Strings" asks, UTF-8 checks, and microsecond numbers.
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

/* A growable byte buffer. Zero-initialised it is empty; buf_free() releases it. */
struct buf {
	char *p;
	size_t len, cap;
};

/* Make room for n more bytes. 0, or -1 when out of memory (b is unchanged). */
int buf_grow(struct buf *b, size_t n);

static inline int buf_put(struct buf *b, const void *p, size_t n)
{
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

/*
 * Can byte c start a UTF-8 sequence? If so, *n gets the sequence's length and
 * [*lo, *hi] the range of its second byte (RFC 3629 table 3-7).
 */
bool utf8_lead(unsigned c, size_t *n, unsigned *lo, unsigned *hi);

/*
 * Length of the valid UTF-8 sequence at s[0 .. len) (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF): 1 to 4, or 0 when it is invalid or cut short.
 */
size_t utf8_seq_len(const unsigned char *s, size_t len);

/*
 * Write ns nanoseconds as microseconds the way the recorder does: "1234.567",
 * trailing zeros dropped ("1.5", "0", "-0.001"). Writes at most 22 bytes, no NUL;
 * returns the new end.
 */
char *json_put_us(char *cur, int64_t ns);

/* Write v in decimal; at most 20 bytes, no NUL; returns the new end. */
char *json_put_u64(char *cur, uint64_t v);

/* Write v in decimal; at most 20 bytes, no NUL; returns the new end. */
char *json_put_i64(char *cur, int64_t v);

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
