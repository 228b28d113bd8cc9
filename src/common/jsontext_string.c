/* SPDX-License-Identifier: MIT */
/*
 * JSON text, strings: the escaper of string bodies, and the UTF-8 checks the tools
 * need on text they read (repair, validation, the lead bytes of a streaming scanner).
 *
 * Strings go through rtr__jsontext_esc, the class of each byte value: printable ASCII is
 * copied eight bytes at a time, control bytes, '"' and '\' are escaped, and non-ASCII
 * is validated as UTF-8 following Unicode's Table 3-7 (Well-Formed UTF-8 Byte
 * Sequences). An ill-formed sequence becomes one U+FFFD per maximal subpart (Unicode
 * section 3.9, "U+FFFD Substitution of Maximal Subparts", which the WHATWG Encoding
 * standard requires): a lead byte followed by a valid prefix of a sequence is one
 * subpart; any other invalid byte is a subpart of its own.
 *
 * One walk, walk(), does the escaping and the repairing; it is always inlined with
 * constant arguments, so rtr__jsontext_escape() (the writer's hot path, once per
 * interned string) compiles to the loop it was before the tools shared it. One
 * sequence check, utf8_seq(), serves the walk and the validator.
 *
 * These functions are pure: any thread may call any of them at any time, and each
 * completes in bounded time (wait-free).
 */
#include "common/compiler.h"
#include "common/jsontext.h"
#include "common/jsontext_internal.h"

#include <string.h>

/*
 * For each UTF-8 lead class: the continuation bytes it takes and the range of the
 * first one (Unicode Table 3-7); later continuation bytes are always 80..BF.
 */
static const struct {
	uint8_t more, lo, hi;
} json_utf8_lead[ESC_F4 + 1] = {
	[ESC_U2] = {1, 0x80, 0xbf}, /* U+0080..U+07FF */
	[ESC_E0] = {2, 0xa0, 0xbf}, /* U+0800..U+0FFF */
	[ESC_U3] = {2, 0x80, 0xbf}, /* U+1000..U+CFFF, U+E000..U+FFFF */
	[ESC_ED] = {2, 0x80, 0x9f}, /* U+D000..U+D7FF */
	[ESC_F0] = {3, 0x90, 0xbf}, /* U+10000..U+3FFFF */
	[ESC_U4] = {3, 0x80, 0xbf}, /* U+40000..U+FFFFF */
	[ESC_F4] = {3, 0x80, 0x8f}, /* U+100000..U+10FFFF */
};

static inline bool is_lead(uint8_t cls)
{
	return cls >= ESC_U2 && cls <= ESC_F4;
}

/*
 * At a lead byte of class cls with avail bytes after it: walk the sequence while it
 * stays well-formed. *ok and its length; or, where it breaks (or the input ends),
 * !*ok and the length of the bytes taken so far, one maximal subpart.
 */
static RTR_INLINE size_t utf8_seq(const uint8_t *s, size_t avail, uint8_t cls, bool *ok)
{
	size_t more = json_utf8_lead[cls].more;

	*ok = false;
	if (avail == 0 || s[1] < json_utf8_lead[cls].lo || s[1] > json_utf8_lead[cls].hi)
		return 1;
	if (more >= 2 && (avail < 2 || (s[2] & 0xc0) != 0x80))
		return 2;
	if (more == 3 && (avail < 3 || (s[3] & 0xc0) != 0x80))
		return 3;
	*ok = true;
	return more + 1;
}

static inline char *put_replacement(char *p, size_t *bad)
{
	if (bad != NULL)
		(*bad)++;
	memcpy(p, "\xef\xbf\xbd", 3); /* U+FFFD */
	return p + 3;
}

/*
 * The string body of src (escape), or src with only its invalid UTF-8 replaced
 * (!escape); each U+FFFD counted in *bad unless bad is NULL.
 */
static RTR_INLINE char *walk(char *cur, const char *src, size_t len, const bool escape, size_t *bad)
{
	static const char hex[16] = "0123456789abcdef";
	const uint8_t *s = (const uint8_t *)src;
	const uint8_t *end = s + len;

	while (s < end) {
		uint8_t b, cls;
		size_t n;
		bool ok;

		while (end - s >= 8 && (rtr__jsontext_esc[s[0]] | rtr__jsontext_esc[s[1]] |
					rtr__jsontext_esc[s[2]] | rtr__jsontext_esc[s[3]] |
					rtr__jsontext_esc[s[4]] | rtr__jsontext_esc[s[5]] |
					rtr__jsontext_esc[s[6]] | rtr__jsontext_esc[s[7]]) == 0) {
			memcpy(cur, s, 8);
			cur += 8;
			s += 8;
		}
		if (s == end)
			break;
		b = *s;
		cls = rtr__jsontext_esc[b];
		if (cls == ESC_RAW || (!escape && b < 0x80)) {
			*cur++ = (char)b;
			s++;
			continue;
		}
		if (cls > ESC_HEX) {
			cur[0] = '\\';
			cur[1] = (char)cls;
			cur += 2;
			s++;
			continue;
		}
		if (cls == ESC_HEX) {
			memcpy(cur, "\\u00", 4);
			cur[4] = hex[b >> 4];
			cur[5] = hex[b & 15];
			cur += 6;
			s++;
			continue;
		}
		if (cls == ESC_BAD) {
			cur = put_replacement(cur, bad);
			s++;
			continue;
		}

		/* A lead byte: copy a well-formed sequence, replace a broken one. */
		n = utf8_seq(s, (size_t)(end - s) - 1, cls, &ok);
		if (!ok) {
			cur = put_replacement(cur, bad);
			s += n;
			continue;
		}
		/* constant sizes, so no call to memcpy */
		if (n == 2)
			memcpy(cur, s, 2);
		else if (n == 3)
			memcpy(cur, s, 3);
		else
			memcpy(cur, s, 4);
		cur += n;
		s += n;
	}
	return cur;
}

char *rtr__jsontext_escape(char *cur, const char *src, size_t len)
{
	return walk(cur, src, len, true, NULL);
}

char *rtr__jsontext_escape_count(char *cur, const char *src, size_t len, size_t *bad)
{
	return walk(cur, src, len, true, bad);
}

char *rtr__jsontext_utf8_repair(char *cur, const char *src, size_t len, size_t *bad)
{
	return walk(cur, src, len, false, bad);
}

size_t rtr__jsontext_utf8_valid(const char *src, size_t len)
{
	const uint8_t *s = (const uint8_t *)src;
	size_t i = 0;

	while (i < len) {
		uint8_t cls = rtr__jsontext_esc[s[i]];
		size_t n;
		bool ok;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (!is_lead(cls))
			return i;
		n = utf8_seq(s + i, len - i - 1, cls, &ok);
		if (!ok)
			return i;
		i += n;
	}
	return len;
}

bool rtr__jsontext_utf8_lead(unsigned char c, unsigned *more, unsigned *lo, unsigned *hi)
{
	uint8_t cls = rtr__jsontext_esc[c];

	if (!is_lead(cls))
		return false;
	*more = json_utf8_lead[cls].more;
	*lo = json_utf8_lead[cls].lo;
	*hi = json_utf8_lead[cls].hi;
	return true;
}
