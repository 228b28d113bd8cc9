/* SPDX-License-Identifier: MIT */
/*
 * The event the writer hands a format: what one record (or a B folded with its E)
 * says, decoded once, whatever the output. A format reads events; it never reads a
 * record, a ring's bytes or the writer's bookkeeping.
 *
 * The drain (drain.c) frames a ring's records and folds B+E pairs; the decoder
 * (event.c) turns a batch of them into events: names and categories as the static
 * strings the program passed (their pointers stay valid and are the formats' cache
 * keys) or as copied bytes, times in nanoseconds on the trace clock, a track's lane
 * placed, arguments as a view of the recorded bytes. Then the format writes the batch
 * in one call (struct rtr__format.events, format.h), walking it with
 * rtr__batch_next().
 *
 * Bookkeeping rides on the walk. What the writer must know of the lines written so
 * far, the thread's open slices and the open async spans (for a cut: cut.c), is
 * updated as each event is written, not before: rtr__batch_next() applies the event
 * before the one it returns. So a cut that starts in the middle of a batch (a
 * segment that fills up, a flight chunk) sees exactly the lines written, as it would
 * with one call per event. An E learns what it ends from the open slices when its
 * turn comes (a pop's name, the arguments added to the slice), for the same reason.
 *
 * Writer thread only.
 */
#ifndef RTR_WRITER_EVENT_H
#define RTR_WRITER_EVENT_H

#include "common/compiler.h"
#include "record/record.h"
#include "writer/args.h"

#include <stdint.h>

struct rtr__writer;
struct rtr__ring;
struct rtr__drained;
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

/* A batch of one ring's events, walked by the format with rtr__batch_next(). */
struct rtr__batch {
	struct rtr__ring *ring;
	struct rtr__event *ev;
	uint32_t n;
	uint32_t at; /* events handed out so far: ev[at - 1] is being written */
};

/* event.c: the batch's memory (struct rtr__drain), for the session. 0 or -ENOMEM. */
int rtr__events_init(struct rtr__writer *w);
void rtr__events_fini(struct rtr__writer *w);
/* Decode the n events the drain found in r into b (b->ev, from w->drain.events).
 * One that does not decode is left out, its header in w->drain.bad (the drain
 * reports it), and the events folded with it decoded alone. Returns the events b
 * stands for: the sum of their counts. */
uint64_t rtr__events_decode(struct rtr__writer *w, struct rtr__ring *r,
			    const struct rtr__drained *d, uint32_t n, struct rtr__batch *b);
/* Give the ring the name rtr_thread_name() gave its thread (cut on a character). */
void rtr__ring_rename(struct rtr__ring *r, const char *name, size_t len);

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

/*
 * The next event to write, or NULL at the batch's end; the one returned before is
 * written (its bookkeeping is applied here), and so is everything before it.
 */
static inline struct rtr__event *rtr__batch_next(struct rtr__writer *w, struct rtr__batch *b)
{
	if (RTR_LIKELY(b->at > 0) && RTR_UNLIKELY(b->ev[b->at - 1].op & ~RTR__OP_PREPARE))
		rtr__event_written(w, b, &b->ev[b->at - 1]);
	if (b->at == b->n)
		return NULL;
	struct rtr__event *ev = &b->ev[b->at++];
	if (RTR_UNLIKELY(ev->op & RTR__OP_PREPARE))
		rtr__event_prepare(w, b, ev);
	return ev;
}

#endif
