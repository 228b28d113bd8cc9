/* SPDX-License-Identifier: MIT */
/*
 * Reading a VALUE argument's bytes (the encoding: <ringtrace/value.h>), for the
 * formats that write it. The bytes come from a ring the program can scribble over, so
 * nothing is trusted: a length or count past the bytes is cut to them, and an unknown
 * tag ends the value. Each format's writer walks the items depth-first, at most
 * RTR_VALUE_MAX_DEPTH deep, and stops when rtr__value_next() says there is no more.
 */
#ifndef RTR_RECORD_VALUE_H
#define RTR_RECORD_VALUE_H

#include <ringtrace/value.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct rtr__value_in {
	const char *at, *end;
};

struct rtr__value_item {
	uint8_t tag;	 /* RTR_VALUE_* */
	uint64_t bits;	 /* a number's */
	const char *str; /* a string's bytes */
	uint32_t n;	 /* a string's length; an array's or object's count */
};

static inline uint32_t rtr__value_u32(struct rtr__value_in *in)
{
	uint32_t x;

	memcpy(&x, in->at, sizeof(x));
	in->at += sizeof(x);
	return x;
}

/* `len` bytes of a string or key, cut to those there are. */
static inline const char *rtr__value_bytes(struct rtr__value_in *in, uint32_t *len)
{
	const char *s = in->at;

	if (*len > (size_t)(in->end - in->at))
		*len = (uint32_t)(in->end - in->at);
	in->at += *len;
	return s;
}

/* The next item, or false at the end of the bytes or at bytes that hold none: then
 * the input is used up, so that every walk ends. */
static inline bool rtr__value_next(struct rtr__value_in *in, struct rtr__value_item *it)
{
	size_t left = (size_t)(in->end - in->at);

	it->bits = 0;
	it->str = NULL;
	it->n = 0;
	if (left == 0)
		return false;
	it->tag = (uint8_t)*in->at;
	left--;
	switch (it->tag) {
	case RTR_VALUE_NULL:
	case RTR_VALUE_FALSE:
	case RTR_VALUE_TRUE:
		in->at++;
		return true;
	case RTR_VALUE_I64:
	case RTR_VALUE_U64:
	case RTR_VALUE_F64:
		if (left < sizeof(it->bits))
			break;
		memcpy(&it->bits, in->at + 1, sizeof(it->bits));
		in->at += 1 + sizeof(it->bits);
		return true;
	case RTR_VALUE_STR:
	case RTR_VALUE_ARRAY:
	case RTR_VALUE_OBJECT:
		if (left < sizeof(uint32_t))
			break;
		in->at++;
		it->n = rtr__value_u32(in);
		if (it->tag == RTR_VALUE_STR)
			it->str = rtr__value_bytes(in, &it->n);
		return true;
	default:
		break;
	}
	in->at = in->end;
	return false;
}

/* An object member's key, or false (the input used up) when there is none. */
static inline bool rtr__value_key(struct rtr__value_in *in, const char **key, uint32_t *len)
{
	if ((size_t)(in->end - in->at) < sizeof(uint32_t)) {
		in->at = in->end;
		return false;
	}
	*len = rtr__value_u32(in);
	*key = rtr__value_bytes(in, len);
	return true;
}

/*
 * The JSON text of the value in `len` bytes at `bytes`: what they hold up to where
 * they end or stop making sense, its open arrays and objects closed, null for a
 * missing item. Writes at most RTR_VALUE_JSON_BOUND(len) bytes (each byte read
 * writes at most 6, as an escaped string byte does).
 */
#define RTR_VALUE_JSON_BOUND(len) ((size_t)(len)*6 + 4)
char *rtr__value_json(char *p, const char *bytes, size_t len);

/* Whether the walk has bytes left for another item. */
static inline bool rtr__value_more(const struct rtr__value_in *in)
{
	return in->at < in->end;
}

#endif
