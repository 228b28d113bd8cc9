/* SPDX-License-Identifier: MIT */
/*
 * The JSON format's text of an event (text.c): heads from the head cache, arguments.
 */
#ifndef RTR_FORMAT_JSON_TEXT_H
#define RTR_FORMAT_JSON_TEXT_H

#include "format/json/json.h"

/* A cached head's text: one fixed-size copy, of as few bytes as take it. */
static inline char *put_head_text(char *p, const struct rtr__json_head *h)
{
	if (h->len <= 16) /* an argument's key, mostly */
		memcpy(p, h->text, 16);
	else if (h->len <= 48) /* a span's head with short names */
		memcpy(p, h->text, 48);
	else
		memcpy(p, h->text, HEAD_TEXT);
	return p + h->len;
}

static inline size_t head_slot(uint32_t key, uint64_t a, uint64_t b)
{
	/* Fibonacci hashing: the top bits of the product depend on every bit of the key */
	uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ key) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> (64 - HEAD_BITS));
}

/* What an event's head depends on besides its strings: its type, an instant's scope,
 * whether it is a function's slice. Never 0 (the empty slot). */
static inline uint32_t head_key(const struct rtr__event *ev)
{
	return 1u + ev->type + ((uint32_t)ev->scope << 8) +
	       ((uint32_t)(ev->flags & RTR__EVF_CODE) << 12);
}

/* A double's bits as a JSON number. */
char *rtr__json_f64_bits(char *p, uint64_t bits);

/* An event line's head, from `{"ph":` through `"ts":`, encoded afresh. */
char *rtr__json_encode_head(struct rtr__writer *w, char *p, const struct rtr__event *ev);

/* A head for (key, a, b) from the head cache: its text at p, or, when the slot holds
 * another, NULL. */
static inline char *cached_head(struct rtr__json *j, char *p, uint32_t key, uint64_t a, uint64_t b)
{
	const struct rtr__json_head *h = &j->heads[head_slot(key, a, b)];

	return RTR_LIKELY(h->key == key && h->a == a && h->b == b) ? put_head_text(p, h) : NULL;
}

/* Keep the text p..end, when it fits, as the head of (key, a, b). */
static inline void keep_head(struct rtr__json *j, const char *p, const char *end, uint32_t key,
			     uint64_t a, uint64_t b)
{
	struct rtr__json_head *h = &j->heads[head_slot(key, a, b)];
	size_t len = (size_t)(end - p);

	if (len <= HEAD_TEXT) {
		h->a = a;
		h->b = b;
		h->key = key;
		h->len = (uint32_t)len;
		memcpy(h->text, p, len);
	}
}

/* An event line's head, from the head cache when it can (see struct rtr__json_head);
 * `key` is head_key(ev), a constant where the caller knows it. */
static inline char *put_head_keyed(struct rtr__writer *w, char *p, const struct rtr__event *ev,
				   uint32_t key)
{
	struct rtr__json *j = json_of(w);

	if (RTR_UNLIKELY(ev->flags & RTR__EVF_COPIED))
		return rtr__json_encode_head(w, p, ev); /* a copied name: no static key */

	uint64_t a = (ev->flags & RTR__EVF_CODE) ? ev->x.code.addr : (uintptr_t)ev->name;
	uint64_t b = (uintptr_t)ev->cat;
	char *end = cached_head(j, p, key, a, b);

	if (RTR_LIKELY(end != NULL))
		return end;
	end = rtr__json_encode_head(w, p, ev);
	keep_head(j, p, end, key, a, b);
	return end;
}

static inline char *put_head(struct rtr__writer *w, char *p, const struct rtr__event *ev)
{
	return put_head_keyed(w, p, ev, head_key(ev));
}

/* An argument's `"key":`, from the head cache when it can (a key is a static string). */
char *rtr__json_arg_key_fresh(struct rtr__writer *w, char *p, const char *key);
static inline char *put_arg_key(struct rtr__writer *w, char *p, const char *key)
{
	char *end = cached_head(json_of(w), p, KEY_ARG_KEY, (uintptr_t)key, 0);

	return RTR_LIKELY(end != NULL) ? end : rtr__json_arg_key_fresh(w, p, key);
}

/*
 * An X's ",dur": from its start to its end, ns past the origin. A viewer adds ts and
 * dur as doubles: where the end is the very time of the next event of the thread (a
 * slice that begins as this one ends, the slice around it ending too), the sum must
 * be that time exactly, or speedscope, which orders and pairs ends and begins by
 * comparing those sums, pairs them wrongly (it also subtracts the thread's first
 * time from every ts first). The three decimals of a dur miss almost always by a unit
 * in the last place; `tie` then has dur written as the double that is exactly end -
 * start (shortest round trip: it reads back as the same ns). A tie is seen when the
 * next event, or the slice before, is in the batch. (A slice that begins in the ns
 * another ended, recorded later, a scope, is moved 1 ns on: rtr__writer_begin_ns().)
 * Times 1 ns apart or more are far past a double's error: three decimals then.
 */

static inline char *put_dur(char *p, uint64_t start, uint64_t end, bool tie)
{
	p = PUT_LIT(p, ",\"dur\":");
	if (RTR_LIKELY(!tie)) /* times 1 ns apart or more: far past a double's error */
		return rtr__jsontext_us_inline(p, end - start);
	return rtr__jsontext_dur_exact(p, start, end);
}

/* A code argument's value (rtr__arg_key_code), after its key: `"0x..."`, and
 * `,"src":"file:line"` when the registered resolver knows the call before ra. At most
 * 28 + RTR_SYM_MAX_ESCAPED bytes. */
char *rtr__json_code_value(struct rtr__writer *w, char *p, uint64_t ra);
/* The arguments of a as `"k":v,...` (no braces); `counters`: a series, whose booleans
 * are numbers. */
char *rtr__json_arg_list(struct rtr__writer *w, char *p, const struct rtr__args *a, int counters);
/* The most rtr__json_arg_list() writes for a. */
static inline size_t args_bound(const struct rtr__args *a)
{
	return a->n > 0 ? (size_t)a->n * ARG_BOUND + RTR_JSONTEXT_ESCAPE_BOUND(a->len) : 0;
}

#endif
