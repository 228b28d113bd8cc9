/* SPDX-License-Identifier: MIT */
/*
 * Producer calls whose events carry continuation bytes: arguments, copied names,
 * thread names, double counters. Out of line (they are longer), but held to the hot
 * path's rules: no lock, no allocation, no formatting, no system call.
 *
 * Continuation bytes of one event, in this order (the writer decodes the same):
 *
 *	[u64 word]		COUNTER_I64/F64 value, COMPLETE duration
 *	[u32 len][len bytes]	the name, when RTR__F_NAME_COPY
 *	[u8 type] x nargs	RTR_ARG_TYPE_*
 *	[u64 key][u64 value] x nargs	value: the number or bits; a static string's
 *				pointer; a copied string's length (UINT64_MAX: NULL)
 *	the copied strings' bytes, in argument order
 */
#include "common/compiler.h"
#include "ring/ring.h"

#include <string.h>

struct ext_event {
	uint8_t kind;
	uint16_t flags;
	uint64_t ts;
	const char *cat;
	const char *name;
	int has_word;
	uint64_t word;
	const struct rtr_arg *args;
	unsigned nargs;
};

/*
 * Where the next continuation byte goes. The bytes of one event are contiguous in the
 * ring unless they wrap past its last slot; put() copies straight into the slots and
 * splits only at the wrap, so fixed-size fields become plain stores.
 */
struct ext_cursor {
	char *base;	   /* the ring's first slot */
	size_t at;	   /* byte offset of the next byte from base */
	size_t ring_bytes; /* a power of two */
};

static inline void put(struct ext_cursor *c, const void *src, size_t len)
{
	if (RTR_LIKELY(c->at + len <= c->ring_bytes)) {
		memcpy(c->base + c->at, src, len);
		c->at += len;
		return;
	}
	size_t first = c->ring_bytes - c->at;
	memcpy(c->base + c->at, src, first);
	memcpy(c->base, (const char *)src + first, len - first);
	c->at = len - first;
}

/* Returns whether the event was recorded. */
static bool emit_ext(const struct ext_event *e)
{
	unsigned nargs = e->nargs < RTR_MAX_ARGS ? e->nargs : RTR_MAX_ARGS;
	uint32_t name_len = 0;
	uint64_t str_len[RTR_MAX_ARGS];
	size_t ext = e->has_word ? sizeof(uint64_t) : 0;

	if (e->args == NULL)
		nargs = 0;
	else if (RTR_UNLIKELY(e->nargs > RTR_MAX_ARGS) && rtr__tls_ring != NULL)
		/* own counter: only this thread stores it */
		__atomic_store_n(&rtr__tls_ring->args_cut, rtr__tls_ring->args_cut + 1,
				 __ATOMIC_RELAXED);
	if (e->flags & RTR__F_NAME_COPY) {
		name_len = e->name != NULL ? (uint32_t)strnlen(e->name, RTR_MAX_COPY) : 0;
		ext += sizeof(name_len) + name_len;
	}
	ext += nargs * (1 + 2 * sizeof(uint64_t));
	for (unsigned i = 0; i < nargs; i++) {
		str_len[i] = 0;
		if (e->args[i].type == RTR_ARG_TYPE_STR_COPY) {
			const char *s = e->args[i].v.str;
			str_len[i] = s != NULL ? strnlen(s, RTR_MAX_COPY) : UINT64_MAX;
			ext += s != NULL ? str_len[i] : 0;
		}
	}

	uint32_t nrec = rtr__ring_event_records((uint32_t)ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);
	if (RTR_UNLIKELY(r == NULL))
		return false;

	struct rtr__rec *rec = &r->slots[head & r->mask];
	rec->ts = e->ts;
	rec->a = (e->flags & RTR__F_NAME_COPY) ? 0 : (uintptr_t)e->name;
	rec->b = (uintptr_t)e->cat;
	rec->kind = e->kind;
	rec->nargs = (uint8_t)nargs;
	rec->flags = e->flags;
	rec->ext = (uint32_t)ext;

	size_t ring_bytes = (size_t)r->capacity * RTR_REC_BYTES;
	struct ext_cursor c = {(char *)r->slots, (size_t)((head + 1) & r->mask) * RTR_REC_BYTES,
			       ring_bytes};
	if (e->has_word)
		put(&c, &e->word, sizeof(e->word));
	if (e->flags & RTR__F_NAME_COPY) {
		put(&c, &name_len, sizeof(name_len));
		put(&c, e->name, name_len);
	}
	uint8_t types[RTR_MAX_ARGS];
	for (unsigned i = 0; i < nargs; i++)
		types[i] = (uint8_t)e->args[i].type;
	put(&c, types, nargs);
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		uint64_t pair[2] = {(uintptr_t)a->key, 0};
		switch (a->type) {
		case RTR_ARG_TYPE_I64:
		case RTR_ARG_TYPE_U64:
		case RTR_ARG_TYPE_F64:
			memcpy(&pair[1], &a->v, sizeof(pair[1]));
			break;
		case RTR_ARG_TYPE_BOOL:
			pair[1] = a->v.b;
			break;
		case RTR_ARG_TYPE_STR:
			pair[1] = (uintptr_t)a->v.str;
			break;
		case RTR_ARG_TYPE_STR_COPY:
			pair[1] = str_len[i];
			break;
		default:
			break; /* unknown type: written as null */
		}
		put(&c, pair, sizeof(pair));
	}
	for (unsigned i = 0; i < nargs; i++) {
		if (e->args[i].type == RTR_ARG_TYPE_STR_COPY && str_len[i] != UINT64_MAX)
			put(&c, e->args[i].v.str, str_len[i]);
	}
	rtr__publish(r, head, nrec);
	return true;
}

RTR_API void rtr_begin_args(const char *cat, const char *name, const struct rtr_arg *args,
			    unsigned n)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_BEGIN,
			      .ts = rtr__ticks(),
			      .cat = cat,
			      .name = name,
			      .args = args,
			      .nargs = n};
	rtr__begin_done(emit_ext(&e));
}

RTR_API void rtr_instant_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_INSTANT,
			      .ts = rtr__ticks(),
			      .cat = cat,
			      .name = name,
			      .args = args,
			      .nargs = n};
	emit_ext(&e);
}

RTR_API void rtr_complete_args(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns,
			       const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_COMPLETE,
			      .flags = RTR__F_TS_NS,
			      .ts = ts_ns,
			      .cat = cat,
			      .name = name,
			      .has_word = 1,
			      .word = dur_ns,
			      .args = args,
			      .nargs = n};
	emit_ext(&e);
}

RTR_API void rtr_begin_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_BEGIN,
			      .flags = RTR__F_NAME_COPY,
			      .ts = rtr__ticks(),
			      .cat = cat,
			      .name = name};
	rtr__begin_done(emit_ext(&e));
}

RTR_API void rtr_instant_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_INSTANT,
			      .flags = RTR__F_NAME_COPY,
			      .ts = rtr__ticks(),
			      .cat = cat,
			      .name = name};
	emit_ext(&e);
}

RTR_API void rtr_complete_copy(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	struct ext_event e = {.kind = RTR__K_COMPLETE,
			      .flags = RTR__F_NAME_COPY | RTR__F_TS_NS,
			      .ts = ts_ns,
			      .cat = cat,
			      .name = name,
			      .has_word = 1,
			      .word = dur_ns};
	emit_ext(&e);
}

RTR_API void rtr_counter_f64(const char *cat, const char *name, double value)
{
	if (RTR_LIKELY(!rtr__recording()))
		return;
	uint64_t bits;
	memcpy(&bits, &value, sizeof(bits));
	rtr__emit_word(RTR__K_COUNTER_F64, 0, rtr__ticks(), (uintptr_t)name, (uintptr_t)cat, bits);
}

RTR_API void rtr_thread_name(const char *name)
{
	if (name == NULL)
		return;
	/* Kept for a ring made later (the recorder may start after the thread names itself). */
	strncpy(rtr__tls_thread_name, name, sizeof(rtr__tls_thread_name) - 1);
	if (!rtr__recording())
		return;
	struct ext_event e = {.kind = RTR__K_THREAD_NAME,
			      .flags = RTR__F_NAME_COPY,
			      .ts = rtr__ticks(),
			      .name = name};
	emit_ext(&e);
}
