/* SPDX-License-Identifier: MIT */
/*
 * The nesting of a thread's slices, for the tally's self time: internal to the tally
 * (tally.c hands each complete slice to tally_nest.c, which finds its parent and its
 * children; tally_nest.c opens with how, and what that assumes). Not for the
 * commands: they read the tally's tables (tally.h).
 */
#ifndef RTR_TOOLS_TALLY_NEST_H
#define RTR_TOOLS_TALLY_NEST_H

#include "tally.h"

#include <stdbool.h>
#include <stdint.h>

/* A complete slice [start, end] of row on thread t (name: its name's hash): counted in
 * its row, and into the thread's reorder heap. c->nomem when out of memory. */
void tally_nest_arrive(struct tally *c, struct tally_thread *t, int64_t start, int64_t end,
		       struct row *row, uint64_t name);

/* Release what no later slice can precede (everything when flush): each slice claims
 * its children, and its self time goes to its row. */
void tally_nest_release(struct tally *c, struct tally_thread *t, bool flush);

/* A time point of the thread: it moves the mark once TALLY_WINDOW more have come. */
void tally_nest_time_point(struct tally_thread *t, int64_t ts);

/* What the thread's top-level slices cover, after the final release (flush). */
uint64_t tally_nest_covered(const struct tally_thread *t);

#endif /* RTR_TOOLS_TALLY_NEST_H */
