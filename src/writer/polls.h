/* SPDX-License-Identifier: MIT */
/*
 * Polls folded (polls.c). A poll is the record an MPI test or probe call that
 * completed nothing leaves (RTR__K_COMPLETE with RTR__F_POLL, rtr__poll_args()). A
 * program that waits by polling makes millions of them; what a reader wants is how
 * long the thread polled, and how often. So the writer folds a thread's consecutive
 * polls into one slice, from the first one's start to the last one's end, named after
 * the call, or RTR__POLLS_MIXED when the calls were of several names (names.h), with
 * the arguments
 *
 *	polls		the calls
 *	count		the requests: the most one call was given (none for probes)
 *	<call name>	the calls of that name, one argument per name (the key is the
 *			name: "MPI_Testany": 12, "MPI_Test": 11)
 *	poll_ns		the time inside the calls
 *
 * The fold is pending in its ring's reader state (struct rtr__reader.polls) while the
 * polls go on, across drain passes; it goes out as one RTR__EV_SPAN, in the same
 * batch and just before it, when any other event of its thread comes (the call that
 * completes something, as a rule). A cut, a flush and the stop write what is pending
 * (rtr__drain_polls(), drain.c), so a run that a rotation or rtr_flush() cuts is two
 * slices, and none is lost; a snapshot shows the run so far and leaves it pending.
 * The file being cut in the middle of a format's batch is the exception: the polls
 * then go on in the next file (its lines begin again at the thread's latest time
 * written, before the polls), as a batch cannot be interrupted by another ring's.
 *
 * Writer thread only.
 */
#ifndef RTR_WRITER_POLLS_H
#define RTR_WRITER_POLLS_H

#include "writer/writer_internal.h"

struct rtr__event;

#define RTR__POLL_NAMES 6 /* call names a fold counts: MPI's tests and probes */

/* A thread's fold pending: times in ns on the trace clock. */
struct rtr__poll_fold {
	const char *cat;
	uint64_t first_ns; /* the first call's start */
	uint64_t end_ns;   /* the last one's end */
	uint64_t poll_ns;  /* the time inside the calls */
	uint32_t polls;	   /* the calls; 0: nothing pending */
	uint32_t pos;	   /* the last one's record index */
	int64_t count;	   /* the most requests one call was given; -1: none gave any */
	uint32_t nnames;
	const char *name[RTR__POLL_NAMES]; /* static strings */
	uint32_t calls[RTR__POLL_NAMES];   /* of each name */
};

/* Whether rec is a poll: the drain folds it (rtr__polls_add()) instead of decoding it. */
static inline bool rtr__polls_is(const struct rtr__rec *rec)
{
	return (rec->flags & RTR__F_POLL) != 0;
}

/* Whether r's reader state has a fold pending. */
static inline bool rtr__polls_pending(const struct rtr__reader *rd)
{
	return rd->polls != NULL && rd->polls->polls != 0;
}

/*
 * Fold the poll rec, at record index pos of r, into r's pending fold. When the fold
 * cannot take it (a run of UINT32_MAX calls, another category, a name past the ones a
 * fold counts) the fold so far goes into *ev first, and without memory for a fold the
 * poll goes into *ev alone: returns 1, having added its calls to *events; else 0.
 * Returns -1, having folded nothing, when rec does not decode as a poll (the drain
 * skips it as malformed). ev is one of the drain's batch (w->drain.events).
 */
int rtr__polls_add(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
		   uint32_t pos, struct rtr__event *ev, uint64_t *events);

/*
 * r's pending fold into *ev, one slice: keep 0 takes it (no longer pending; its calls
 * are added to *events), keep 1 describes it (ev->count 0; it stays pending). ev is
 * one of the drain's batch, or any other for one event written alone.
 */
void rtr__polls_take(struct rtr__writer *w, struct rtr__ring *r, struct rtr__event *ev, int keep,
		     uint64_t *events);

/* Where r's pending fold ends, ns on the trace clock; 0 when none. */
uint64_t rtr__polls_end_ns(const struct rtr__ring *r);

/* The session's memory for the folds' arguments: 0 or -ENOMEM. Free a ring's fold
 * (struct rtr__reader.polls; NULL is fine). */
int rtr__polls_init(struct rtr__writer *w);
void rtr__polls_fini(struct rtr__writer *w);
void rtr__polls_free(struct rtr__poll_fold *f);

#endif
