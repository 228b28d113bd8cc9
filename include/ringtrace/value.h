/* SPDX-License-Identifier: MIT */
/*
 * Argument values of any JSON shape (RTR_ARG_TYPE_VALUE): null, booleans, numbers,
 * strings, and arrays and objects of them, built into the caller's buffer and passed
 * as RTR_ARG_VALUE(key, buffer, length). The recorder copies the bytes; the writer
 * turns them into JSON, or into nested debug annotations in Perfetto's protobuf.
 *
 *	unsigned char buf[128];
 *	struct rtr_value v;
 *	rtr_value_init(&v, buf, sizeof(buf));
 *	rtr_value_object(&v, 2);
 *	rtr_value_key(&v, "shape", 5);
 *	rtr_value_array(&v, 2);
 *	rtr_value_i64(&v, 3);
 *	rtr_value_i64(&v, 4);
 *	rtr_value_key(&v, "dtype", 5);
 *	rtr_value_str(&v, "f32", 3);
 *	rtr_instant_v("app", "tensor", RTR_ARG_VALUE("t", buf, v.len));
 *	=> "args":{"t":{"shape":[3,4],"dtype":"f32"}}
 *
 * The encoding: items one after another, unaligned, numbers in the host's byte order
 * (the writer that reads them runs in the same process); an array's items follow its
 * head, an object's head is followed by count pairs of a key and an item.
 *
 *	RTR_VALUE_NULL, _FALSE, _TRUE	the tag
 *	RTR_VALUE_I64, _U64, _F64	the tag, 8 bytes
 *	RTR_VALUE_STR			the tag, u32 length, the UTF-8 bytes
 *	RTR_VALUE_ARRAY, _OBJECT	the tag, u32 count
 *	a key				u32 length, the UTF-8 bytes
 *
 * Nested deeper than RTR_VALUE_MAX_DEPTH arrays and objects, a value ends there (the
 * writer writes null in place of the deeper one). An item that does not fit the buffer
 * sets `cut` and is left out, and so is everything after it: the value recorded is what
 * fitted, its open arrays and objects closed. So is a value longer than RTR_MAX_COPY.
 * Building takes no lock and calls nothing: it is fine on the hot path.
 */
#ifndef RINGTRACE_VALUE_H
#define RINGTRACE_VALUE_H

#include <ringtrace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	RTR_VALUE_NULL = 'n',
	RTR_VALUE_FALSE = 'f',
	RTR_VALUE_TRUE = 't',
	RTR_VALUE_I64 = 'i',
	RTR_VALUE_U64 = 'u',
	RTR_VALUE_F64 = 'd',
	RTR_VALUE_STR = 's',
	RTR_VALUE_ARRAY = '[',
	RTR_VALUE_OBJECT = '{',
};

/* Arrays and objects nest at most this deep (the outermost is depth 1). */
#define RTR_VALUE_MAX_DEPTH 32

struct rtr_value {
	unsigned char *buf;
	uint32_t len; /* bytes built so far: RTR_ARG_VALUE's length */
	uint32_t cap;
	bool cut; /* an item did not fit: it and those after it were left out */
};

static inline void rtr_value_init(struct rtr_value *v, void *buf, size_t cap)
{
	v->buf = RTR__CAST(unsigned char *, buf);
	v->len = 0;
	v->cap = cap < UINT32_MAX ? RTR__CAST(uint32_t, cap) : UINT32_MAX;
	v->cut = false;
}

/* A tag and `n` bytes at `bytes`, whole or not at all. */
static inline bool rtr__value_put(struct rtr_value *v, int tag, const void *bytes, size_t n)
{
	size_t need = (tag >= 0) + n;

	if (v->cut || need > v->cap - v->len) {
		v->cut = true;
		return false;
	}
	if (tag >= 0)
		v->buf[v->len++] = RTR__CAST(unsigned char, tag);
	if (n > 0)
		memcpy(v->buf + v->len, bytes, n);
	v->len += RTR__CAST(uint32_t, n);
	return true;
}

/* A length or count, then `n` bytes at `bytes` (none for a count). */
static inline bool rtr__value_sized(struct rtr_value *v, int tag, uint32_t count, const void *bytes,
				    size_t n)
{
	unsigned char head[5];
	size_t at = 0;

	if (tag >= 0)
		head[at++] = RTR__CAST(unsigned char, tag);
	memcpy(head + at, &count, sizeof(count));
	at += sizeof(count);
	if (v->cut || at + n > RTR__CAST(size_t, v->cap - v->len)) {
		v->cut = true;
		return false;
	}
	memcpy(v->buf + v->len, head, at);
	if (n > 0)
		memcpy(v->buf + v->len + at, bytes, n);
	v->len += RTR__CAST(uint32_t, at + n);
	return true;
}

static inline bool rtr_value_null(struct rtr_value *v)
{
	return rtr__value_put(v, RTR_VALUE_NULL, "", 0);
}

static inline bool rtr_value_bool(struct rtr_value *v, bool b)
{
	return rtr__value_put(v, b ? RTR_VALUE_TRUE : RTR_VALUE_FALSE, "", 0);
}

static inline bool rtr_value_i64(struct rtr_value *v, int64_t x)
{
	return rtr__value_put(v, RTR_VALUE_I64, &x, sizeof(x));
}

static inline bool rtr_value_u64(struct rtr_value *v, uint64_t x)
{
	return rtr__value_put(v, RTR_VALUE_U64, &x, sizeof(x));
}

/* NaN and the infinities are written as null in JSON, as JSON has no such numbers. */
static inline bool rtr_value_f64(struct rtr_value *v, double x)
{
	return rtr__value_put(v, RTR_VALUE_F64, &x, sizeof(x));
}

/* `len` bytes of UTF-8 at `s`. */
static inline bool rtr_value_str(struct rtr_value *v, const char *s, size_t len)
{
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	return rtr__value_sized(v, RTR_VALUE_STR, RTR__CAST(uint32_t, len), s, len);
}

/* An array of `count` items: the next `count` items built are its own. */
static inline bool rtr_value_array(struct rtr_value *v, uint32_t count)
{
	return rtr__value_sized(v, RTR_VALUE_ARRAY, count, "", 0);
}

/* An object of `count` members: each a rtr_value_key() and then its item. */
static inline bool rtr_value_object(struct rtr_value *v, uint32_t count)
{
	return rtr__value_sized(v, RTR_VALUE_OBJECT, count, "", 0);
}

/* A member's key: `len` bytes of UTF-8 at `s`. */
static inline bool rtr_value_key(struct rtr_value *v, const char *s, size_t len)
{
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	return rtr__value_sized(v, -1, RTR__CAST(uint32_t, len), s, len);
}

#ifdef __cplusplus
}
#endif

#endif /* RINGTRACE_VALUE_H */
