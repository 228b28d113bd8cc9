/* SPDX-License-Identifier: MIT */
/*
 * Compact JSON for the .pftrace writer (see pf_write_internal.h): an event's text
 * back into the tools' event model (the fields the writer reads), JSON strings
 * decoded, an arg looked up.
 *
 * The text is compact JSON as trace_event.json is (the reader's, or merge's lines
 * rewritten from it): no blanks between tokens, strings escaped as
 * json_put_string() does; any JSON escape is decoded all the same.
 */
#include "pf_write_internal.h"

#include "merge_json.h"

#include <string.h>

/* The value of four hex digits, or -1. */
static long hex4(const char *s)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static int put_utf8(struct buf *out, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_put(out, u, n);
}

/* A \u escape at s[i] (s[i] == 'u'), with the low half of a surrogate pair after it:
 * its code point (U+FFFD for a lone surrogate or bad digits); *i moved past it. */
static unsigned long unicode_escape(const char *s, size_t len, size_t *i)
{
	long hi = *i + 5 <= len ? hex4(s + *i + 1) : -1, lo;

	if (hi < 0) {
		*i = len;
		return 0xfffd;
	}
	*i += 5;
	if (hi < 0xd800 || hi > 0xdfff)
		return (unsigned long)hi;
	if (hi > 0xdbff || *i + 6 > len || s[*i] != '\\' || s[*i + 1] != 'u')
		return 0xfffd;
	lo = hex4(s + *i + 2);
	if (lo < 0xdc00 || lo > 0xdfff)
		return 0xfffd;
	*i += 6;
	return 0x10000 + ((unsigned long)(hi - 0xd800) << 10) + (unsigned long)(lo - 0xdc00);
}

int pfw_unescape(struct buf *out, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *bs = memchr(s + i, '\\', len - i);
		size_t run = bs != NULL ? (size_t)(bs - (s + i)) : len - i;
		char c;

		if (buf_put(out, s + i, run))
			return -1;
		i += run;
		if (i + 1 >= len)
			return 0; /* no escape, or a lone backslash at the end */
		c = s[i + 1];
		i++;
		if (c == 'u') {
			if (put_utf8(out, unicode_escape(s, len, &i)))
				return -1;
			continue;
		}
		i++;
		c = c == 'b'   ? '\b'
		    : c == 'f' ? '\f'
		    : c == 'n' ? '\n'
		    : c == 'r' ? '\r'
		    : c == 't' ? '\t'
			       : c;
		if (buf_putc(out, c))
			return -1;
	}
	return 0;
}

/* The fields the writer reads, by key: the index of the key in keys, or -1. */
static const char *const keys[] = {"ph",  "name", "cat", "ts", "dur", "pid",
				   "tid", "id",	  "s",	 "bp", "args"};

static struct trace_value *field(struct trace_event *ev, int k)
{
	struct trace_value *const f[] = {&ev->ph,  &ev->name, &ev->cat, &ev->ts, &ev->dur, &ev->pid,
					 &ev->tid, &ev->id,   &ev->s,	&ev->bp, &ev->args};

	return f[k];
}

/* By length and first byte: one compare per member (merge writes every line through
 * here). */
static int field_of(const struct json_member *m)
{
	int k;

	switch (m->key_len) {
	case 1:
		k = 8; /* s */
		break;
	case 2:
		k = m->key[0] == 'p' ? 0 : m->key[0] == 't' ? 3 : m->key[0] == 'i' ? 7 : 9;
		break;
	case 3:
		k = m->key[0] == 'c' ? 2 : m->key[0] == 'd' ? 4 : m->key[0] == 'p' ? 5 : 6;
		break;
	case 4:
		k = m->key[0] == 'n' ? 1 : 10;
		break;
	default:
		return -1;
	}
	return memcmp(m->key, keys[k], m->key_len) == 0 ? k : -1;
}

static enum trace_type type_of(char c)
{
	switch (c) {
	case '"':
		return TRACE_STRING;
	case '{':
		return TRACE_OBJECT;
	case '[':
		return TRACE_ARRAY;
	case 't':
	case 'f':
		return TRACE_BOOL;
	case 'n':
		return TRACE_NULL;
	default:
		return TRACE_NUMBER;
	}
}

int pfw_parse_event(const char *json, size_t len, struct trace_event *ev, struct buf *text)
{
	enum { NKEYS = sizeof(keys) / sizeof(keys[0]) };
	size_t offs[NKEYS], pos = 0;
	bool decoded[NKEYS] = {false};
	struct json_member m;

	memset(ev, 0, sizeof(*ev));
	text->len = 0;
	if (len == 0 || json[0] != '{')
		return -1;
	while (json_next_member(json, len, &pos, &m)) {
		int k = field_of(&m);
		struct trace_value *v;

		if (k < 0 || m.value_len == 0)
			continue;
		v = field(ev, k);
		v->type = type_of(m.value[0]);
		decoded[k] = v->type == TRACE_STRING; /* a key seen twice: the last */
		if (!decoded[k]) {
			v->text = m.value; /* the event's text, not NUL-terminated */
			v->len = m.value_len;
			continue;
		}
		/* pointed to once all are decoded: text may move as it grows */
		offs[k] = text->len;
		if (pfw_unescape(text, m.value + 1, m.value_len - 2) || buf_putc(text, '\0'))
			return -1;
		v->len = text->len - 1 - offs[k];
	}
	for (int k = 0; k < NKEYS; k++)
		if (decoded[k])
			field(ev, k)->text = text->p + offs[k];
	trace_event_numbers(ev);
	ev->json = json;
	ev->json_len = len;
	return 0;
}

const char *pfw_arg(const struct trace_event *ev, const char *key, size_t *len)
{
	struct json_member m;
	size_t pos = 0;

	if (ev->args.type != TRACE_OBJECT)
		return NULL;
	while (json_next_member(ev->args.text, ev->args.len, &pos, &m)) {
		if (json_member_is(&m, key)) {
			*len = m.value_len;
			return m.value;
		}
	}
	return NULL;
}
