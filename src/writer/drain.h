/* SPDX-License-Identifier: MIT */
/*
 * Reading the rings (drain.c).
 */
#ifndef RTR_WRITER_DRAIN_H
#define RTR_WRITER_DRAIN_H

#include "writer/writer_internal.h"

/* One pass over every ring, up to `batch` records of each. Returns the records
 * consumed. Closed rings found drained are folded into the totals and freed. */
uint64_t rtr__drain_all(struct rtr__writer *w, uint32_t batch);
/* Write the pending folds of polls of every ring (polls.h) through the format: keep 0
 * ends them (a flush, the stop, a file's end), keep 1 shows them and leaves them
 * pending (a snapshot's end: the polls go on in the window). Nothing while the format
 * writes a batch: they then go on in the next file. */
void rtr__drain_polls(struct rtr__writer *w, int keep);
/* Free the session's stacks of open slices and folds (struct rtr__reader.slices, .polls). */
void rtr__drain_free_slices(struct rtr__writer *w);

/* Where a cut ends and begins again r's open slices, in ns on the trace clock: after
 * every event of r written, before every one to come (0: none yet). */
uint64_t rtr__drain_cut_ns(struct rtr__writer *w, struct rtr__ring *r);
/* r's names for the current file (the thread's name and sort index), once. */
void rtr__drain_thread_meta(struct rtr__writer *w, struct rtr__ring *r, int first_event_names);

#endif
