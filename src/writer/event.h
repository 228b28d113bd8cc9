/* SPDX-License-Identifier: MIT */
/*
 * The event the writer hands a format: what one record (or a B folded with its E)
 * says, decoded once, whatever the output. A format reads events; it never reads a
 * record, a ring's bytes or the writer's bookkeeping.
 *
 * The drain (drain.c) frames a ring's records and folds B+E pairs; the decoder
 * (decode.c) turns each event it finds into one of these, as it finds it: names and
 * categories as the static strings the program passed (their pointers stay valid and
 * are the formats' cache keys) or as copied bytes, times in nanoseconds on the trace
 * clock, a track's lane placed, arguments as a view of the recorded bytes. Then the
 * format writes the batch in one call (struct rtr__format.events, format.h), walking
 * it with rtr__batch_first() and rtr__batch_next().
 *
 * Bookkeeping rides on the walk. What the writer must know of the lines written so
 * far, the thread's open slices and the open async spans (for a cut: cut.c), is
 * updated as each event is written, not before: rtr__batch_next() applies the event
 * it is given before it returns the next (the commonest, a plain B or E, inline). So
 * a cut that starts in the middle of a batch (a segment that fills up, a flight
 * chunk) sees exactly the lines written, as it would with one call per event. An E
 * learns what it ends from the open slices when its turn comes (a pop's name, the
 * arguments added to the slice), for the same reason.
 *
 * Writer thread only.
 */
#ifndef RTR_WRITER_EVENT_H
#define RTR_WRITER_EVENT_H

#include "common/compiler.h"
#include "record/record.h"
#include "writer/args.h"
#include "writer/out.h"
#include "writer/slices.h"
#include "writer/writer_internal.h"

#include <stdint.h>

struct rtr__writer;
struct rtr__ring;
struct rtr_track;

/* What the format writes. */
enum rtr__ev_type {
	RTR__EV_SKIP,	       /* nothing: an argument kept for the open slice's E */
	RTR__EV_SPAN,	       /* a complete slice, ts and dur (B+E, a scope, rtr_complete) */
	RTR__EV_BEGIN,	       /* a slice begins */
	RTR__EV_END,	       /* the innermost slice ends */
	RTR__EV_INSTANT,       /* an instant of `scope` */
	RTR__EV_COUNTER,       /* counter `name` takes `value` */
	RTR__EV_COUNTERS,      /* a series per argument, "name key" */
	RTR__EV_FLOW_START,    /* flows: value is the id */
	RTR__EV_FLOW_STEP,     /* */
	RTR__EV_FLOW_END,      /* bound to the enclosing slice */
	RTR__EV_ASYNC_BEGIN,   /* async spans: value is the id, keyed by (cat, id) */
	RTR__EV_ASYNC_INSTANT, /* */
	RTR__EV_ASYNC_END,     /* */
	RTR__EV_MEM_ALLOC,     /* x.mem: an allocation, the device's bytes in use after */
	RTR__EV_MEM_FREE,      /* x.mem: a free */
	RTR__EV_STACK,	       /* x.stack: a stack sample's frames, resolved when written */
	RTR__EV_THREAD_NAME,   /* the thread's name is now `name` */
	RTR__EV_PROCESS_LABEL, /* the process's label is now `name` */
	RTR__EV_PROCESS_SORT,  /* the process's sort index is now `value` */
	RTR__EV_THREAD_SORT,   /* the thread's sort index is now `value` */
};

/* An instant's scope: as shown by viewers. */
enum { RTR__SCOPE_THREAD, RTR__SCOPE_PROCESS, RTR__SCOPE_GLOBAL };

/* rtr__event.flags */
enum {
	RTR__EVF_COPIED = 1 << 0,   /* name is name_len copied bytes, not a static string */
	RTR__EVF_TRACK = 1 << 1,    /* on a track's lane (x.track): its ids, its own clock */
	RTR__EVF_CODE = 1 << 2,	    /* a function's slice (x.code): named by its address */
	RTR__EVF_DOUBLE = 1 << 3,   /* a counter's value is a double's bits */
	RTR__EVF_TIMELINE = 1 << 4, /* at the thread's own time (not a track's, not given) */
	RTR__EVF_HELD = 1 << 6,	    /* the writer's: a held slice's X, made of its E (value) */
	RTR__EVF_POP = 1 << 7,	    /* the writer's: an E of rtr_pop(), named from its slice */
};

struct rtr__event {
	uint8_t type;	       /* RTR__EV_* */
	uint8_t scope;	       /* RTR__SCOPE_*: an instant's */
	uint8_t flags;	       /* RTR__EVF_* */
	uint8_t op;	       /* the writer's bookkeeping once it is written (event.c) */
	uint32_t count;	       /* recorded events it stands for: 2 + folded arguments for a B+E */
	uint32_t pos;	       /* its header's record index in the ring (the writer's) */
	const char *name;      /* a static string (NUL-terminated; NULL: none), or copied bytes */
	const char *cat;       /* a static string, or NULL */
	uint32_t name_len;     /* with RTR__EVF_COPIED */
	int32_t tid;	       /* the thread's, or the lane's (RTR__EVF_TRACK) */
	uint64_t ts;	       /* ns on the trace clock (CLOCK_MONOTONIC and the offset) */
	uint64_t dur;	       /* ns (RTR__EV_SPAN); ts + dur may saturate at UINT64_MAX */
	uint64_t value;	       /* a counter's, an id, a sort index */
	struct rtr__args args; /* its own */
	const struct rtr__args *more; /* then nmore lists: an X's folded rtr_scope_arg_*, an
				       * E's arguments added to its slice */
	uint32_t nmore;
	uint32_t pid; /* with RTR__EVF_TRACK: the track's pseudo-process */
	uint32_t unused;
	union {
		struct {
			struct rtr_track *track; /* its lanes are named by the format */
			unsigned lane;
		} track;
		struct {
			uint64_t addr; /* the function's */
		} code;
		struct {
			uint64_t addr, bytes, in_use;
			int64_t device;
		} mem;
		struct {
			const char *frames; /* n u64 return addresses, unaligned */
			uint32_t n;
		} stack;
	} x;
};

/* A batch of one ring's events, walked by the format:
 *
 *	for (ev = rtr__batch_first(w, b); ev != NULL; ev = rtr__batch_next(w, b, ev))
 */
struct rtr__batch {
	struct rtr__ring *ring;
	struct rtr__event *ev;	/* the first */
	struct rtr__event *end; /* past the last */
	struct rtr__event *cur; /* being written; NULL before the first, end after the last */
};

/* Give the ring the name rtr_thread_name() gave its thread (cut on a character). */
void rtr__event_rename_ring(struct rtr__ring *r, const char *name, size_t len);

/* A cut began again the open slices (a new segment) while the event being written
 * was a held slice's X: it is made again, from where its slice now begins. */
void rtr__event_rebegun(struct rtr__writer *w);

/* event.c: what the walk does around an event that needs it (rtr__event.op). */
void rtr__event_prepare(struct rtr__writer *w, struct rtr__batch *b, struct rtr__event *ev);
void rtr__event_written(struct rtr__writer *w, struct rtr__batch *b, const struct rtr__event *ev);

/* The operations of rtr__event.op: bit 7 asks for rtr__event_prepare(). */
enum {
	RTR__OP_NONE,
	RTR__OP_PUSH,	     /* a B: it is open on its thread */
	RTR__OP_POP,	     /* an E: the innermost slice ends */
	RTR__OP_KEEP_ARG,    /* arguments for the innermost slice's E */
	RTR__OP_ASYNC_OPEN,  /* an async span is open */
	RTR__OP_ASYNC_CLOSE, /* the newest of its key ends */
	RTR__OP_PREPARE = 0x80,
};

/* What is open changed, and with it the bytes its closing lines would take (cut.c):
 * before and after; so did a segment's room (out.c). */
static inline void rtr__event_closing(struct rtr__writer *w, uint64_t before, uint64_t after)
{
	w->out.closing += after - before;
	if (RTR_UNLIKELY(w->out.limit_bytes != UINT64_MAX) && !w->out.cutting)
		rtr__out_set_limit(w);
}

/* The common bookkeeping, inline: a B without arguments or a copied name opens a
 * level of its thread's open slices, an E closes one; anything else, and a stack
 * past its depth, goes to rtr__event_written(). The bytes the closing lines would
 * take change with them (struct rtr__out.closing), and a segment's room. */
static inline void rtr__batch_written(struct rtr__writer *w, struct rtr__batch *b,
				      const struct rtr__event *ev)
{
	struct rtr__slices *s = rtr__reader_of(b->ring)->slices;
	unsigned op = ev->op & ~RTR__OP_PREPARE;

	if (op == RTR__OP_PUSH && s != NULL && !(ev->flags & RTR__EVF_COPIED) && ev->args.n == 0 &&
	    rtr__slices_push_plain(s, ev->name, ev->cat)) {
		rtr__event_closing(w, 0, RTR_SLICES_LINE_WEIGHT);
	} else if (op == RTR__OP_POP && s != NULL && s->overflow == 0 && s->depth > 0) {
		uint64_t before = rtr__slices_weight(s);
		rtr__slices_pop(s);
		rtr__event_closing(w, before, rtr__slices_weight(s));
	} else {
		rtr__event_written(w, b, ev);
	}
}

/* Before ev is written: what it needs to know first (an E of the slice it ends, a
 * thread's name; a B whether it is held). A plain E of a slice whose B was written
 * and has no arguments added needs nothing. */
static inline void rtr__batch_prepare(struct rtr__writer *w, struct rtr__batch *b,
				      struct rtr__event *ev)
{
	if (ev->type == RTR__EV_END && !(ev->flags & RTR__EVF_POP)) {
		const struct rtr__open_slice *top =
			rtr__slices_top(rtr__reader_of(b->ring)->slices);
		if (top == NULL || (top->args_kept == 0 && !top->held))
			return;
	}
	rtr__event_prepare(w, b, ev);
}

/* The first event of the batch to write, or NULL when it has none. */
static inline struct rtr__event *rtr__batch_first(struct rtr__writer *w, struct rtr__batch *b)
{
	struct rtr__event *ev = b->ev;

	b->cur = ev;
	if (ev == b->end)
		return NULL;
	if (RTR_UNLIKELY(ev->op & RTR__OP_PREPARE))
		rtr__batch_prepare(w, b, ev);
	return ev;
}

/*
 * The event after ev, or NULL at the batch's end: ev is written (its bookkeeping is
 * applied here), and so is everything before it.
 */
static inline struct rtr__event *rtr__batch_next(struct rtr__writer *w, struct rtr__batch *b,
						 struct rtr__event *ev)
{
	if (RTR_UNLIKELY(ev->op & ~RTR__OP_PREPARE))
		rtr__batch_written(w, b, ev);
	b->cur = ++ev;
	if (ev == b->end)
		return NULL;
	if (RTR_UNLIKELY(ev->op & RTR__OP_PREPARE))
		rtr__batch_prepare(w, b, ev);
	return ev;
}

#endif
