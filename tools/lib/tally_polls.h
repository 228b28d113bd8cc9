/* SPDX-License-Identifier: MIT */
/*
 * The folded polls of a trace, for `ringtrace stats`: the recorder writes a thread's
 * run of MPI test and probe calls that completed nothing as one slice (X) whose args
 * begin with "polls" (the calls), then "count", one integer per call name keyed by the
 * name, and "poll_ns" (the time inside the calls; docs/mpi.md, src/writer/polls.c).
 * Per call name, the calls behind those slices, exact; the time inside them is exact
 * per slice, so it is kept per name for the runs of that name alone, and for the runs
 * of several names together.
 *
 * State per call name, never per event. Thread safety: none.
 */
#ifndef RTR_TOOLS_TALLY_POLLS_H
#define RTR_TOOLS_TALLY_POLLS_H

#include "table.h"
#include "trace.h"

#include <stdint.h>

/* One call name's. */
struct poll_row {
	uint64_t calls;	       /* in every folded slice */
	uint64_t alone_calls;  /* in the slices of this name alone */
	uint64_t alone_slices; /* those slices */
	uint64_t alone_ns;     /* the time inside their calls */
	uint64_t alone_dur;    /* their durations: a slice of the name's is folded or not */
};

struct tally_polls {
	struct table rows;			      /* call name -> struct poll_row */
	uint64_t slices, calls, inside_ns;	      /* every folded slice's */
	uint64_t mixed_slices, mixed_calls, mixed_ns; /* those of several names */
};

void tally_polls_init(struct tally_polls *p);
void tally_polls_destroy(struct tally_polls *p);

/* Count ev, an X, if it is a folded slice (its first arg is "polls"). 0, or -1 out of
 * memory. */
int tally_polls_add(struct tally_polls *p, const struct trace_event *ev);

#endif
