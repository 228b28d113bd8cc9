/* SPDX-License-Identifier: MIT */
/*
 * Producer calls whose events carry continuation bytes: arguments, copied names,
 * thread names, double counters. Out of line (they are longer), but held to the hot
 * path's rules: no lock, no allocation, no formatting, no system call.
 *
 * Continuation bytes of one event, in this order (the writer decodes the same):
 *
 *	[u64 track]		the struct rtr_track *, when RTR__F_TRACK
 *	[u64 word]		COUNTER_I64/F64 value, COMPLETE duration, flow or
 *				async id, META value
 *	[u32 len][len bytes]	the name, when RTR__F_NAME_COPY
 *	[u8 type] x nargs	RTR_ARG_TYPE_*
 *	[u64 key][u64 value] x nargs	value: the number or bits; a static string's
 *				pointer; a copied string's length (UINT64_MAX: NULL);
 *				an array's or list's count
 *	the blobs, in argument order: a copied string's bytes; an I64_ARRAY's
 *	count x i64; an I64_LISTS's count x u32 lengths, then their sum x i64; a
 *	STR_ARRAY's count x {u32 length (UINT32_MAX: NULL), the bytes}
 */
#include "producer/events.h"
#include "session/recorder.h"

#include "common/atomic.h"
#include "common/compiler.h"
#include "ring/ring.h"

#include <string.h>
#include <unistd.h>

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
	if (len == 0)
		return; /* src may be NULL then: memcpy must not see it */
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

/*
 * The bytes an argument adds after the pairs, and the count its pair records. Arrays
 * are cut to whole values (whole lists) within RTR_MAX_COPY bytes, like strings.
 */
static size_t arg_blob(const struct rtr_arg *a, uint64_t *count)
{
	switch (a->type) {
	case RTR_ARG_TYPE_STR_COPY:
		if (a->v.str == NULL) {
			*count = UINT64_MAX;
			return 0;
		}
		*count = strnlen(a->v.str, RTR_MAX_COPY);
		return *count;
	case RTR_ARG_TYPE_I64_ARRAY:
		*count = a->v.i64s.v == NULL ? 0 : a->v.i64s.n;
		if (*count > RTR_MAX_COPY / sizeof(int64_t))
			*count = RTR_MAX_COPY / sizeof(int64_t);
		return *count * sizeof(int64_t);
	case RTR_ARG_TYPE_STR_ARRAY: {
		size_t bytes = 0, items = 0;
		for (; a->v.strs.v != NULL && items < a->v.strs.n; items++) {
			size_t room = RTR_MAX_COPY - bytes;
			if (room < sizeof(uint32_t))
				break;
			const char *item = a->v.strs.v[items];
			bytes += sizeof(uint32_t) +
				 (item != NULL ? strnlen(item, room - sizeof(uint32_t)) : 0);
		}
		*count = items;
		return bytes;
	}
	case RTR_ARG_TYPE_I64_LISTS: {
		size_t bytes = 0, lists = 0;
		if (a->v.i64s.lens != NULL && (a->v.i64s.v != NULL || a->v.i64s.n == 0)) {
			for (; lists < a->v.i64s.n; lists++) {
				size_t more =
					sizeof(uint32_t) + a->v.i64s.lens[lists] * sizeof(int64_t);
				if (bytes + more > RTR_MAX_COPY)
					break;
				bytes += more;
			}
		}
		*count = lists;
		return bytes;
	}
	default:
		*count = 0;
		return 0;
	}
}

/* A STR_ARRAY's items, measured the same way as arg_blob() did. */
static void put_strings(struct ext_cursor *c, const char *const *items, uint64_t n)
{
	size_t bytes = 0;

	for (uint64_t k = 0; k < n; k++) {
		size_t room = RTR_MAX_COPY - bytes - sizeof(uint32_t);
		uint32_t len = UINT32_MAX;
		if (items[k] != NULL)
			len = (uint32_t)strnlen(items[k], room);
		put(c, &len, sizeof(len));
		if (items[k] != NULL)
			put(c, items[k], len);
		bytes += sizeof(uint32_t) + (items[k] != NULL ? len : 0);
	}
}

/* Whether every argument is a number or a static string: nothing to measure or copy
 * besides its pair. */
static inline bool scalars_only(const struct rtr_arg *args, unsigned nargs)
{
	unsigned i = 0;

	while (i < nargs && args[i].type < RTR_ARG_TYPE_STR_COPY)
		i++;
	return i == nargs;
}

/* The pair's value of a number or static string argument. */
static inline uint64_t scalar_value(const struct rtr_arg *a)
{
	uint64_t v = 0; /* an unknown type: written as null */

	if (a->type == RTR_ARG_TYPE_BOOL)
		v = a->v.b;
	else if (a->type >= RTR_ARG_TYPE_I64 && a->type <= RTR_ARG_TYPE_STR)
		memcpy(&v, &a->v, sizeof(v)); /* i64, u64, f64 bits or the pointer */
	return v;
}

/*
 * The usual argument event, numbers and static strings with nothing else to copy,
 * as plain stores: no per-field wrap check, no measuring pass. Returns whether it was
 * recorded, or -1, having published nothing, when its bytes would wrap past the
 * ring's last slot; the general path then splits them.
 */
static RTR_INLINE int emit_scalars(const struct rtr__ext_event *e)
{
	unsigned nargs = e->nargs;
	size_t ext = (e->has_word ? sizeof(uint64_t) : 0) + nargs * (1 + 2 * sizeof(uint64_t));
	uint32_t nrec = rtr__ring_event_records((uint32_t)ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);

	if (RTR_UNLIKELY(r == NULL))
		return 0;
	if (RTR_UNLIKELY(((head + 1) & r->mask) + nrec - 1 > r->mask + 1)) {
		rtr__unreserve(r); /* the general path reserves again */
		return -1;
	}

	struct rtr__rec *rec = &r->slots[head & r->mask];
	rec->ts = e->ts;
	rec->a = e->kind == RTR__K_META ? e->meta : (uintptr_t)e->name;
	rec->b = (uintptr_t)e->cat;
	rec->kind = e->kind;
	rec->nargs = (uint8_t)nargs;
	rec->flags = e->flags;
	rec->ext = (uint32_t)ext;

	char *p = (char *)&r->slots[(head + 1) & r->mask];
	if (e->has_word) {
		memcpy(p, &e->word, sizeof(e->word));
		p += sizeof(e->word);
	}
	char *pairs = p + nargs;
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		uint64_t key = (uintptr_t)a->key, value = scalar_value(a);
		p[i] = (char)a->type;
		memcpy(pairs + 16 * i, &key, sizeof(key));
		memcpy(pairs + 16 * i + 8, &value, sizeof(value));
	}
	rtr__publish(r, head, nrec);
	return 1;
}

static bool emit_general(const struct rtr__ext_event *e);

/*
 * Record e; returns whether it was recorded. Inline in this file's calls, so that an
 * event with a few numbers costs its stores and not the general path's passes.
 */
static RTR_INLINE bool emit_event(const struct rtr__ext_event *e)
{
	if (!(e->flags & (RTR__F_NAME_COPY | RTR__F_TRACK)) && e->nargs <= RTR_MAX_ARGS &&
	    (e->args != NULL || e->nargs == 0) && scalars_only(e->args, e->nargs)) {
		int recorded = emit_scalars(e);
		if (RTR_LIKELY(recorded >= 0))
			return recorded;
	}
	return emit_general(e);
}

bool rtr__emit_ext(const struct rtr__ext_event *e)
{
	return emit_event(e);
}

/* Any event: measures, reserves, then copies field by field, split at the wrap. */
static bool emit_general(const struct rtr__ext_event *e)
{
	unsigned nargs = e->nargs < RTR_MAX_ARGS ? e->nargs : RTR_MAX_ARGS;
	uint32_t name_len = 0;
	uint64_t str_len[RTR_MAX_ARGS]; /* the pair's value of a blob argument */
	size_t blob[RTR_MAX_ARGS];	/* its bytes after the pairs */
	size_t ext = (e->has_word ? sizeof(uint64_t) : 0) +
		     ((e->flags & RTR__F_TRACK) ? sizeof(uint64_t) : 0);

	if (e->args == NULL)
		nargs = 0;
	if (e->flags & RTR__F_NAME_COPY) {
		name_len = e->name != NULL ? (uint32_t)strnlen(e->name, RTR_MAX_COPY) : 0;
		ext += sizeof(name_len) + name_len;
	}
	ext += nargs * (1 + 2 * sizeof(uint64_t));
	for (unsigned i = 0; i < nargs; i++) {
		str_len[i] = 0;
		blob[i] = 0;
		if (e->args[i].type >= RTR_ARG_TYPE_STR_COPY)
			ext += blob[i] = arg_blob(&e->args[i], &str_len[i]);
	}

	uint32_t nrec = rtr__ring_event_records((uint32_t)ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);
	if (RTR_UNLIKELY(r == NULL))
		return false;

	struct rtr__rec *rec = &r->slots[head & r->mask];
	rec->ts = e->ts;
	rec->a = e->kind == RTR__K_META		 ? e->meta
		 : (e->flags & RTR__F_NAME_COPY) ? 0
						 : (uintptr_t)e->name;
	rec->b = (uintptr_t)e->cat;
	rec->kind = e->kind;
	rec->nargs = (uint8_t)nargs;
	rec->flags = e->flags;
	rec->ext = (uint32_t)ext;
	if (RTR_UNLIKELY(e->nargs > RTR_MAX_ARGS) && e->args != NULL)
		/* own counter, inside the reserved window: only this thread stores it, and
		 * only an event that is recorded counts */
		__atomic_store_n(&r->args_cut, r->args_cut + 1, __ATOMIC_RELAXED);

	size_t ring_bytes = (size_t)r->capacity * RTR_REC_BYTES;
	struct ext_cursor c = {(char *)r->slots, (size_t)((head + 1) & r->mask) * RTR_REC_BYTES,
			       ring_bytes};
	if (e->flags & RTR__F_TRACK) {
		uint64_t track = (uintptr_t)e->track;
		put(&c, &track, sizeof(track));
	}
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
		case RTR_ARG_TYPE_I64_ARRAY:
		case RTR_ARG_TYPE_I64_LISTS:
		case RTR_ARG_TYPE_STR_ARRAY:
			pair[1] = str_len[i];
			break;
		default:
			break; /* unknown type: written as null */
		}
		put(&c, pair, sizeof(pair));
	}
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		if (blob[i] == 0)
			continue;
		if (a->type == RTR_ARG_TYPE_I64_LISTS) {
			put(&c, a->v.i64s.lens, str_len[i] * sizeof(uint32_t));
			put(&c, a->v.i64s.v, blob[i] - str_len[i] * sizeof(uint32_t));
		} else if (a->type == RTR_ARG_TYPE_STR_ARRAY) {
			put_strings(&c, a->v.strs.v, str_len[i]);
		} else {
			put(&c,
			    a->type == RTR_ARG_TYPE_STR_COPY ? (const void *)a->v.str
							     : (const void *)a->v.i64s.v,
			    blob[i]);
		}
	}
	rtr__publish(r, head, nrec);
	return true;
}

/* ------------------------------------------------------------------------- */
/* B/E balance under drops (emit.h)                                           */

/* The bits of levels 0 .. depth - 1 (the 64 innermost that are tracked). */
static uint64_t levels_below(uint32_t depth)
{
	return depth >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << depth) - 1;
}

/* Doom the E of `levels`. busy set means the drop that dooms them happened inside an
 * interrupted event call: a reentrant drop, and so is the count of their Es. */
static void doom(struct rtr__ring *r, uint64_t levels)
{
	r->dropped_begins |= levels;
	if (r->busy) /* own flag */
		r->doomed_reentrant |= levels;
	else
		r->doomed_reentrant &= ~levels;
}

RTR_API void rtr__begin_lost(struct rtr__ring *r, uint32_t depth)
{
	/* A B lost to a stop: the E comes after it, when nothing is recorded. */
	if (depth < 64 && rtr__recording())
		doom(r, (uint64_t)1 << depth);
}

RTR_API void rtr__end_lost(void)
{
	struct rtr__ring *r = rtr__tls_ring;

	/* The E of level `depth` is gone and its B stays open in the viewer: the E of
	 * every enclosing level would end the wrong slice. */
	if (r != NULL && rtr__recording())
		doom(r, levels_below(r->depth));
}

RTR_API bool rtr__end_doomed(struct rtr__ring *r, uint32_t depth)
{
	uint64_t bit = (uint64_t)1 << depth;

	if (depth >= 64 || !(r->dropped_begins & bit))
		return false;
	r->dropped_begins &= ~bit;
	/* relaxed: one instruction, so a signal handler's count on this thread is not lost */
	__atomic_fetch_add((r->doomed_reentrant & bit) ? &r->dropped_reentrant : &r->dropped_full,
			   1, __ATOMIC_RELAXED);
	return true;
}

RTR_API void rtr_begin_args(const char *cat, const char *name, const struct rtr_arg *args,
			    unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_BEGIN,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name,
				   .args = args,
				   .nargs = n};
	rtr__begin_done(emit_event(&e));
}

RTR_API void rtr_instant_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr_complete_args(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns,
			       const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_COMPLETE,
				   .flags = RTR__F_TS_NS,
				   .ts = ts_ns,
				   .cat = cat,
				   .name = name,
				   .has_word = 1,
				   .word = dur_ns,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr_begin_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_BEGIN,
				   .flags = RTR__F_NAME_COPY,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name};
	rtr__begin_done(emit_event(&e));
}

RTR_API void rtr_instant_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .flags = RTR__F_NAME_COPY,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name};
	emit_event(&e);
}

RTR_API void rtr_complete_copy(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_COMPLETE,
				   .flags = RTR__F_NAME_COPY | RTR__F_TS_NS,
				   .ts = ts_ns,
				   .cat = cat,
				   .name = name,
				   .has_word = 1,
				   .word = dur_ns};
	emit_event(&e);
}

RTR_API void rtr_counter_f64(const char *cat, const char *name, double value)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
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
	struct rtr__ext_event e = {.kind = RTR__K_THREAD_NAME,
				   .flags = RTR__F_NAME_COPY,
				   .ts = rtr__ticks(),
				   .name = name};
	emit_event(&e);
}

RTR_API void rtr_instant_scoped(const char *cat, const char *name, int scope,
				const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .flags = scope == RTR_INSTANT_GLOBAL	   ? RTR__F_SCOPE_GLOBAL
					    : scope == RTR_INSTANT_PROCESS ? RTR__F_SCOPE_PROCESS
									   : 0,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

unsigned rtr__numeric_args(const struct rtr_arg *args, unsigned n,
			   struct rtr_arg kept[RTR_MAX_ARGS])
{
	unsigned k = 0;

	for (unsigned i = 0; args != NULL && i < n && k < RTR_MAX_ARGS; i++) {
		int type = args[i].type;
		if (type == RTR_ARG_TYPE_I64 || type == RTR_ARG_TYPE_U64 ||
		    type == RTR_ARG_TYPE_F64 || type == RTR_ARG_TYPE_BOOL)
			kept[k++] = args[i];
	}
	return k;
}

RTR_API void rtr_counter_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr_arg kept[RTR_MAX_ARGS];
	unsigned k = rtr__numeric_args(args, n, kept);
	if (k == 0)
		return;
	struct rtr__ext_event e = {.kind = RTR__K_COUNTERS,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name,
				   .args = kept,
				   .nargs = k};
	emit_event(&e);
}

/* Flow ids: the process id in the top bits, so that the files of several processes
 * merged into one timeline keep their flows apart, and a per-thread block of a
 * process-wide counter below, so that a new id costs no shared write. */
#define FLOW_BLOCK 4096u
static uint64_t flow_blocks; /* blocks handed out */
static __thread uint64_t flow_next, flow_end;

void rtr__flow_after_fork_child(void)
{
	/* The child's pid is in the top bits of every id it takes from a new block:
	 * drop the block this thread had from the parent, and count blocks from 0. */
	flow_next = flow_end = 0;
	rtr_atomic_store_relaxed(&flow_blocks, 0); /* relaxed: only this thread exists */
}

RTR_API uint64_t rtr_flow_id(void)
{
	if (RTR_UNLIKELY(flow_next == flow_end)) {
		/* relaxed: the count only has to be unique, it orders nothing */
		uint64_t block = __atomic_fetch_add(&flow_blocks, 1, __ATOMIC_RELAXED);
		uint64_t base = ((uint64_t)(uint32_t)getpid() << 40) |
				((block * FLOW_BLOCK) & ((UINT64_C(1) << 40) - 1));
		flow_next = base + 1; /* never 0 */
		flow_end = base + FLOW_BLOCK;
	}
	return flow_next++;
}

static void emit_id(uint8_t kind, const char *cat, const char *name, uint64_t id,
		    const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = kind,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name,
				   .has_word = 1,
				   .word = id,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr_flow_start(const char *cat, const char *name, uint64_t id)
{
	emit_id(RTR__K_FLOW_START, cat, name, id, NULL, 0);
}

RTR_API void rtr_flow_step(const char *cat, const char *name, uint64_t id)
{
	emit_id(RTR__K_FLOW_STEP, cat, name, id, NULL, 0);
}

RTR_API void rtr_flow_end(const char *cat, const char *name, uint64_t id)
{
	emit_id(RTR__K_FLOW_END, cat, name, id, NULL, 0);
}

RTR_API void rtr_async_begin(const char *cat, const char *name, uint64_t id,
			     const struct rtr_arg *args, unsigned n)
{
	emit_id(RTR__K_ASYNC_BEGIN, cat, name, id, args, n);
}

RTR_API void rtr_async_instant(const char *cat, const char *name, uint64_t id,
			       const struct rtr_arg *args, unsigned n)
{
	emit_id(RTR__K_ASYNC_INSTANT, cat, name, id, args, n);
}

RTR_API void rtr_async_end(const char *cat, const char *name, uint64_t id)
{
	emit_id(RTR__K_ASYNC_END, cat, name, id, NULL, 0);
}
