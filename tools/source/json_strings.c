/* SPDX-License-Identifier: MIT */
/*
 * The string rules of TRACE_READ_CHECK_STRINGS (see trace.c for the design): a byte
 * scanner runs over each slice just ahead of the parsers, tracking strings and
 * escapes across slice borders with its own line count, and holds each finding until
 * the text before it is parsed, so that issues come in file order with the events.
 */
#include "trace_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------- the scanner */

static int scan_issue(struct trace *r, enum trace_issue_kind kind, uint64_t abs, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

/* Hold an issue the scanner found until yajl has parsed the text before it. */
static int scan_issue(struct trace *r, enum trace_issue_kind kind, uint64_t abs, const char *fmt,
		      ...)
{
	const struct scanner *sc = &r->sc;
	uint64_t col = abs >= sc->line_start ? abs - sc->line_start + 1 : 1;
	va_list ap;
	int ok;

	if (r->npend == sizeof(r->pend) / sizeof(r->pend[0]))
		return 1; /* cannot happen: at most three per byte */
	va_start(ap, fmt);
	ok = tr_make_issue(r, &r->pend[r->npend], kind, sc->lines + 1, col, fmt, ap);
	va_end(ap);
	r->npend += (unsigned)ok;
	return ok;
}

/* Invalid UTF-8 starting with byte lead at abs: one issue per string. */
static int scan_bad_utf8(struct trace *r, uint64_t abs, unsigned lead)
{
	if (r->sc.bad_utf8)
		return 1;
	r->sc.bad_utf8 = true;
	return scan_issue(r, TRACE_ISSUE_INVALID_UTF8, abs,
			  "invalid UTF-8 in a string, from byte 0x%02x (a stray, overlong, "
			  "surrogate or cut sequence): write U+FFFD in its place",
			  lead);
}

static int scan_lone_high(struct trace *r)
{
	r->sc.high = false;
	return scan_issue(r, TRACE_ISSUE_SURROGATE, r->sc.high_abs,
			  "lone surrogate escape \\u%04x in a string: not a character, and "
			  "Perfetto rejects the whole file",
			  r->sc.high_val);
}

/* A \u escape has been read completely; end is the offset just past it. */
static int scan_escape(struct trace *r, uint64_t end)
{
	struct scanner *sc = &r->sc;
	unsigned v = sc->hex_val;

	if (sc->high) {
		if (v >= 0xdc00 && v <= 0xdfff && sc->esc_abs == sc->high_end) {
			unsigned cp = 0x10000 + ((sc->high_val - 0xd800) << 10) + (v - 0xdc00);

			sc->high = false;
			return scan_issue(r, TRACE_ISSUE_SURROGATE, sc->high_abs,
					  "surrogate pair \\u%04x\\u%04x (U+%04X) in a string: "
					  "Perfetto rejects the whole file; write the character as "
					  "raw UTF-8",
					  sc->high_val, v, cp);
		}
		if (!scan_lone_high(r))
			return 0;
	}
	if (v >= 0xd800 && v <= 0xdbff) {
		sc->high = true;
		sc->high_val = v;
		sc->high_abs = sc->esc_abs;
		sc->high_end = end;
		return 1;
	}
	if (v >= 0xdc00 && v <= 0xdfff)
		return scan_issue(r, TRACE_ISSUE_SURROGATE, sc->esc_abs,
				  "lone surrogate escape \\u%04x in a string: not a character, and "
				  "Perfetto rejects the whole file",
				  v);
	if (v >= 0x80)
		return scan_issue(r, TRACE_ISSUE_UNICODE_ESCAPE, sc->esc_abs,
				  "\\u%04x escape of non-ASCII U+%04X in a string: write it as raw "
				  "UTF-8",
				  v, v);
	return 1;
}

static int remember_patched_newline(struct trace *r, uint64_t abs)
{
	size_t *p = array_grow(r->patched_nl, &r->patched_cap, r->npatched + 1, sizeof(*p), 16);

	if (p == NULL)
		return tr_fail_nomem(r);
	r->patched_nl = p;
	r->patched_nl[r->npatched++] = (size_t)(abs - r->text_abs);
	return 1;
}

/* A string byte that is neither part of an escape nor a continuation byte. */
static int scan_string_byte(struct trace *r, unsigned char *p, uint64_t abs)
{
	struct scanner *sc = &r->sc;
	unsigned c = *p;

	if (c == '\\') {
		/* A waiting high surrogate is settled when this escape is complete. */
		sc->esc = true;
		sc->esc_abs = abs;
		return 1;
	}
	if (sc->high && !scan_lone_high(r))
		return 0;
	if (c == '"') {
		sc->in_str = false;
		return 1;
	}
	if (c < 0x20 || c == 0x7f) {
		/* One issue per string is enough to find it. */
		if (!sc->bad_byte &&
		    !scan_issue(r, TRACE_ISSUE_CONTROL_BYTE, abs,
				"raw control byte 0x%02x in a string: Catapult, "
				"DevTools and speedscope reject it; write it escaped "
				"(\\u%04x)",
				c, c))
			return 0;
		sc->bad_byte = true;
		if (c == '\n') {
			sc->lines++;
			sc->line_start = abs + 1;
			if (!remember_patched_newline(r, abs))
				return 0;
		}
		if (c != 0x7f)
			*p = ' '; /* so that yajl reads on */
		return 1;
	}
	if (c >= 0x80) {
		if (!rtr__jsontext_utf8_lead((unsigned char)c, &sc->need, &sc->lo, &sc->hi))
			return scan_bad_utf8(r, abs, c);
		sc->lead = c;
		sc->seq_abs = abs;
	}
	return 1;
}

/* Scan byte *p at text offset abs (it may be rewritten). 1, or 0 when out of memory. */
static int scan_byte(struct trace *r, unsigned char *p, uint64_t abs)
{
	struct scanner *sc = &r->sc;
	unsigned c = *p;

	if (!sc->in_str) {
		if (c == '"') {
			sc->in_str = true;
			sc->bad_utf8 = sc->bad_byte = false;
		} else if (c == '\n') {
			sc->lines++;
			sc->line_start = abs + 1;
		}
		return 1;
	}
	if (sc->need > 0) {
		if (c >= sc->lo && c <= sc->hi) {
			sc->need--;
			sc->lo = 0x80;
			sc->hi = 0xbf;
			return 1;
		}
		sc->need = 0;
		if (!scan_bad_utf8(r, sc->seq_abs, sc->lead))
			return 0;
	}
	if (sc->hex_left > 0) {
		int h = rtr__jsontext_hex_value(c);

		if (h >= 0) {
			sc->hex_val = sc->hex_val * 16 + (unsigned)h;
			if (--sc->hex_left == 0)
				return scan_escape(r, abs + 1);
			return 1;
		}
		sc->hex_left = 0; /* a malformed escape: yajl reports it */
	}
	if (sc->esc) {
		sc->esc = false;
		if (c == 'u') {
			sc->hex_left = 4;
			sc->hex_val = 0;
		}
		return 1;
	}
	return scan_string_byte(r, p, abs);
}

/*
 * The first byte at or after k that the scanner must look at: outside strings a
 * quote or a newline, inside a string in its plain state anything but printable
 * ASCII, the quote and the backslash. Most bytes of a trace are skipped here.
 */
static size_t scan_skip(const struct scanner *sc, const unsigned char *p, size_t k, size_t len)
{
	if (!sc->in_str) {
		while (k < len && p[k] != '"' && p[k] != '\n')
			k++;
	} else if (sc->need == 0 && sc->hex_left == 0 && !sc->esc && !sc->high) {
		while (k < len && p[k] >= 0x20 && p[k] < 0x7f && p[k] != '"' && p[k] != '\\')
			k++;
	}
	return k;
}

#if defined(__SSE2__)
/* The bytes of p[0 .. 16) that are c, as bits. */
static inline unsigned bytes_eq(__m128i v, char c)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}

/*
 * The chunks of 64 bytes from k on that hold nothing for the scanner to say: no
 * backslash, no byte from 0x7f, no control byte inside a string. Such a chunk is
 * taken whole: its quotes flip the string state (a prefix XOR of their bits says
 * which bytes are inside), its newlines, all outside strings, count lines. Returns
 * where the first other chunk begins (or where fewer than 64 bytes are left), for
 * scan_byte(). Only from the plain state (no escape or UTF-8 sequence under way).
 */
static size_t scan_chunks(struct scanner *sc, const unsigned char *p, size_t k, size_t len,
			  uint64_t abs)
{
	const __m128i control = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);

	if (sc->need != 0 || sc->hex_left != 0 || sc->esc || sc->high)
		return k;
	for (; len - k >= 64; k += 64) {
		uint64_t quote = 0, newline = 0, ctrl = 0, stop = 0, inside;

		for (int i = 0; i < 4; i++) {
			__m128i v =
				_mm_loadu_si128((const __m128i *)(const void *)(p + k + 16 * i));
			unsigned low = (unsigned)_mm_movemask_epi8(
				_mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
			unsigned high = (unsigned)_mm_movemask_epi8(
				_mm_cmpeq_epi8(_mm_max_epu8(v, del), v));

			quote |= (uint64_t)bytes_eq(v, '"') << (16 * i);
			newline |= (uint64_t)bytes_eq(v, '\n') << (16 * i);
			ctrl |= (uint64_t)low << (16 * i);
			stop |= (uint64_t)(high | bytes_eq(v, '\\')) << (16 * i);
		}
		/* Bit i of inside: byte i is in a string (an opening quote counts, a
		 * closing one does not). */
		inside = quote;
		for (int shift = 1; shift < 64; shift *= 2)
			inside ^= inside << shift;
		if (sc->in_str)
			inside = ~inside;
		if (stop != 0 || (ctrl & inside) != 0)
			break;
		if (quote != 0) {
			sc->in_str ^= __builtin_popcountll(quote) & 1;
			sc->bad_utf8 = sc->bad_byte = false; /* a string began here */
		}
		if (newline != 0) {
			sc->lines += (uint64_t)__builtin_popcountll(newline);
			sc->line_start = abs + k + (uint64_t)(63 - __builtin_clzll(newline)) + 1;
		}
	}
	return k;
}
#else
static size_t scan_chunks(struct scanner *sc, const unsigned char *p, size_t k, size_t len,
			  uint64_t abs)
{
	(void)sc, (void)p, (void)len, (void)abs;
	return k;
}
#endif

/*
 * Feed a slice through the scanner. Before an issue is queued, yajl gets the text
 * up to the byte that raised it, so that the issue follows the events before it.
 */
int tr_scan_and_feed(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	size_t seg = 0, chunked = 0; /* chunks are tried again from `chunked` on */

	for (size_t k = 0; k < len; k++) {
		if (k >= chunked) {
			k = scan_chunks(&r->sc, p, k, len, abs);
			chunked = k + 64;
		}
		k = scan_skip(&r->sc, p, k, len);
		if (k == len)
			break;
		if (!scan_byte(r, p + k, abs + k))
			goto fail;
		if (r->npend == 0)
			continue;
		if (tr_parse_text(r, p + seg, k - seg, abs + seg) != 0)
			goto fail;
		for (unsigned i = 0; i < r->npend; i++) {
			struct item *it = tr_queue_push(r);

			if (it == NULL) {
				tr_fail_nomem(r);
				goto fail;
			}
			*it = r->pend[i];
			r->pend[i].mem = NULL;
		}
		r->npend = 0;
		seg = k;
	}
	return tr_parse_text(r, p + seg, len - seg, abs + seg);
fail:
	for (unsigned i = 0; i < r->npend; i++)
		free(r->pend[i].mem);
	r->npend = 0;
	return -1;
}
