/* SPDX-License-Identifier: MIT */
/*
 * Producer calls whose events carry continuation bytes: arguments, copied names,
 * thread names, double counters. Out of line (they are longer), but held to the hot
 * path's rules: no lock, no allocation, no formatting, no system call.
 *
 * What the continuation bytes hold, and their encoding: src/record/record.h. This
 * file reserves the records, has them written, and publishes them.
 */
#include "producer/events.h"

#include "common/atomic.h"
#include "common/compiler.h"
#include "record/encode.h"
#include "ring/ring.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static bool emit_general(const struct rtr__ext_event *e);

/*
 * Record e; returns whether it was recorded. Inline in this file's calls, so that an
 * event with a few numbers costs its stores and not the general path's passes.
 */
static RTR_INLINE bool emit_event(const struct rtr__ext_event *e)
{
	if (!(e->flags & (RTR__F_NAME_COPY | RTR__F_TRACK)) && e->nargs <= RTR_MAX_ARGS &&
	    (e->args != NULL || e->nargs == 0) && rtr__rec_scalars_only(e->args, e->nargs)) {
		int recorded = rtr__emit_scalars(e);
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
	struct rtr__rec_plan plan;
	uint32_t ext = rtr__rec_measure(e, &plan);
	uint32_t nrec = rtr__ring_event_records(ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);

	if (RTR_UNLIKELY(r == NULL))
		return false;
	rtr__rec_header(&r->slots[head & r->mask], e, rtr__rec_a(e), plan.nargs, ext);
	if (RTR_UNLIKELY(e->nargs > RTR_MAX_ARGS) && e->args != NULL)
		/* own counter, inside the reserved window: only this thread stores it, and
		 * only an event that is recorded counts */
		__atomic_store_n(&r->args_cut, r->args_cut + 1, __ATOMIC_RELAXED);
	rtr__rec_put_ext((char *)r->slots, (size_t)((head + 1) & r->mask) * RTR_REC_BYTES,
			 (size_t)r->capacity * RTR_REC_BYTES, e, &plan);
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
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {
		.kind = RTR__K_BEGIN, .ts = ts, .cat = cat, .name = name, .args = args, .nargs = n};
	rtr__begin_done(emit_event(&e));
}

RTR_API void rtr__begin_args_at(const char *cat, const char *name, uint64_t ticks,
				const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_BEGIN,
				   .ts = ticks,
				   .cat = cat,
				   .name = name,
				   .args = args,
				   .nargs = n};
	rtr__begin_done(emit_event(&e));
}

RTR_API void rtr__poll_args(const char *cat, const char *name, uint64_t ticks, uint64_t dur_ticks,
			    const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_COMPLETE,
				   .flags = RTR__F_POLL,
				   .ts = ticks,
				   .cat = cat,
				   .name = name,
				   .word = dur_ticks,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr__scope_args_at(const struct rtr_site *site, uint64_t ticks, uint64_t dur_ticks,
				const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(site->cat)))
		return;
	/* An RTR__K_SCOPE's header holds the site in `a` and the duration in `b`: the
	 * fields that are the name and the category of other kinds. */
	struct rtr__ext_event e = {.kind = RTR__K_SCOPE,
				   .ts = ticks,
				   .cat = (const char *)(uintptr_t)dur_ticks,
				   .name = (const char *)site,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr_instant_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .ts = ts,
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
				   .word = dur_ns,
				   .args = args,
				   .nargs = n};
	emit_event(&e);
}

RTR_API void rtr_begin_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = RTR__K_BEGIN,
				   .flags = RTR__F_NAME_COPY,
				   .ts = ts,
				   .cat = cat,
				   .name = name};
	rtr__begin_done(emit_event(&e));
}

RTR_API void rtr_instant_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .flags = RTR__F_NAME_COPY,
				   .ts = ts,
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
				   .word = dur_ns};
	emit_event(&e);
}

/* An E through the thread's balance (as rtr_end()): e records a copied name or a pop. */
static void end_ext(const struct rtr__ext_event *e)
{
	if (!rtr__end_dropped() && RTR_UNLIKELY(!emit_event(e)))
		rtr__end_lost();
}

RTR_API void rtr_end_copy(const char *cat, const char *name)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ext_event e = {.kind = RTR__K_END,
				   .flags = RTR__F_NAME_COPY,
				   .ts = rtr__ticks(),
				   .cat = cat,
				   .name = name};
	end_ext(&e);
}

RTR_API void rtr_pop(const char *cat)
{
	/* one record, as rtr_end()'s: no name, the flag says "the innermost" */
	if (RTR_LIKELY(rtr__recording_cat(cat)) && !rtr__end_dropped() &&
	    RTR_UNLIKELY(!rtr__emit_flags(RTR__K_END, RTR__F_POP, rtr__ticks(), 0, (uintptr_t)cat)))
		rtr__end_lost();
}

/*
 * An argument for the innermost open slice. Only while one is open whose E will be
 * written: a level whose E is doomed (its B, or an E inside it, was dropped) loses its
 * arguments with it, and so must not pass them to the slice around it.
 */
static void scope_arg(const char *cat, const struct rtr_arg *arg)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	struct rtr__ring *r = rtr__tls_ring;
	if (r == NULL || r->depth == 0) /* own fields: only this thread stores them */
		return;
	uint32_t level = r->depth - 1;
	if (level < 64 && (r->dropped_begins & ((uint64_t)1 << level)))
		return;
	struct rtr__ext_event e = {
		.kind = RTR__K_SLICE_ARG, .ts = 0, .cat = cat, .args = arg, .nargs = 1};
	emit_event(&e);
}

RTR_API void rtr_scope_arg_i64(const char *cat, const char *key, int64_t value)
{
	struct rtr_arg a = RTR_ARG_I64(key, value);

	scope_arg(cat, &a);
}

RTR_API void rtr_scope_arg_f64(const char *cat, const char *key, double value)
{
	struct rtr_arg a = RTR_ARG_F64(key, value);

	scope_arg(cat, &a);
}

RTR_API void rtr_scope_arg_str_copy(const char *cat, const char *key, const char *value)
{
	struct rtr_arg a = RTR_ARG_STR_COPY(key, value);

	scope_arg(cat, &a);
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
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {
		.kind = RTR__K_THREAD_NAME, .flags = RTR__F_NAME_COPY, .ts = ts, .name = name};
	emit_event(&e);
}

RTR_API void rtr__thread_name_unless_named(const char *name)
{
	if (rtr__tls_thread_name[0] == '\0')
		rtr_thread_name(name);
}

RTR_API void rtr_instant_scoped(const char *cat, const char *name, int scope,
				const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = RTR__K_INSTANT,
				   .flags = scope == RTR_INSTANT_GLOBAL	   ? RTR__F_SCOPE_GLOBAL
					    : scope == RTR_INSTANT_PROCESS ? RTR__F_SCOPE_PROCESS
									   : 0,
				   .ts = ts,
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
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = RTR__K_COUNTERS,
				   .ts = ts,
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
static uint32_t flow_pid;    /* this process's, in the top bits */
static __thread uint64_t flow_next, flow_end;

static void flow_after_fork_child(void)
{
	/* The child's pid is in the top bits of every id it takes from a new block:
	 * drop the block this thread had from the parent, and count blocks from 0. */
	flow_next = flow_end = 0;
	flow_pid = (uint32_t)getpid();
	rtr_atomic_store_relaxed(&flow_blocks, 0); /* relaxed: only this thread exists */
}

/* At load, not at the first rtr_start(): a child forked while no session runs (or
 * before any) must not take ids from its parent's block. glibc forgets the handler
 * when a dlopen'd copy of the library is unloaded. */
__attribute__((constructor)) static void flow_ids_init(void)
{
	flow_pid = (uint32_t)getpid();
	pthread_atfork(NULL, NULL, flow_after_fork_child);
}

RTR_API uint64_t rtr_flow_id(void)
{
	if (RTR_UNLIKELY(flow_next == flow_end)) {
		/* relaxed: the count only has to be unique, it orders nothing */
		uint64_t block = __atomic_fetch_add(&flow_blocks, 1, __ATOMIC_RELAXED);
		uint64_t base = ((uint64_t)flow_pid << 40) |
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
	uint64_t ts = rtr__ticks(); /* first: e is then constants to the compiler */
	struct rtr__ext_event e = {.kind = kind,
				   .ts = ts,
				   .cat = cat,
				   .name = name,
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
