/* SPDX-License-Identifier: MIT */
/*
 * Traces of one counter: "seq" = 0, 1, 2, ... in a category of the test's, recorded
 * by one thread (tu_record_seq(), or the child of tu_record_until_killed()), which the
 * fault tests cut, kill, fill up and compress, then read back with tu_seq_walk().
 *
 * The walk fails the running cmocka test on any event out of place: the start
 * marker first (ts 0, with its "io" and "compress"), process_name second, then only
 * thread_name metadata, the seq counters in order from one thread, and the end marker
 * last. Whether the file is complete, repaired or has an end marker is the caller's to
 * check, with the counts the walk gathered.
 */
#ifndef RTR_TESTS_SEQ_TRACE_H
#define RTR_TESTS_SEQ_TRACE_H

#include "trace_read.h"

#include <stdint.h>

/* Record counter seq = from, from + 1, ..., from + n - 1 in category cat. */
void tu_record_seq(const char *cat, int64_t from, int64_t n);

struct tu_seq_walk {
	char err[512];
	const char *cat; /* the counters' category */
	int64_t pid;	 /* every event's pid */
	uint64_t n;	 /* events visited */
	int64_t next;	 /* the next seq expected: how many were there */
	int64_t tid;	 /* the counters' thread */
	char io[16];	 /* the start marker's "io" and "compress" */
	char compress[16];
	int end_seen;	     /* the end marker was there (the last event) */
	int end_final;	     /* its "final" */
	int64_t end_events;  /* its counts: "events", "dropped", "dropped_io" and */
	int64_t end_dropped; /* "bytes" (INT64_MIN when absent) */
	int64_t end_io;
	int64_t end_bytes;
};

/* Walk the seq trace at path (tt_foreach() flags) recorded in category cat by process
 * pid into w; fails the test on an event out of place or a file the reader cannot
 * read. Returns the reader's info: complete, repaired. */
struct tt_trace tu_seq_walk(const char *path, int flags, const char *cat, int64_t pid,
			    struct tu_seq_walk *w);

#endif /* RTR_TESTS_SEQ_TRACE_H */
