/* SPDX-License-Identifier: MIT */
/*
 * The tables of `ringtrace stats` and `ringtrace diff` summed over several inputs (a
 * job's rank files, traces or profiles, mixed): what a tally (tally.h) found in each
 * file once it is done, without the streaming state, in a form that merges exactly
 * and travels as bytes.
 *
 * - Rows by name or category add up over the files: counts, totals, self times and
 *   the sketches' buckets (sketch.h), so the sum of N files is the tally of their
 *   concatenation. A thread stays its file's: rows --by thread, the threads' busy
 *   shares and the process and thread names are keyed by (file, pid, tid).
 * - Merging is associative and keeps the order of first appearance: the sum of files
 *   merged in file order, in whatever grouping (threads, ranks), is the same tables
 *   in the same order, so a report from it is the same byte for byte.
 * - tally_sum_pack() writes a sum as bytes for another process of the same build
 *   (native byte order); tally_sum_unpack() reads them back, checking every length.
 *
 * Thread safety: none; one sum per thread, merged once the threads are done.
 */
#ifndef RTR_TOOLS_TALLY_SUM_H
#define RTR_TOOLS_TALLY_SUM_H

#include "tally.h"

/* A thread with events, in one file. */
struct sum_thread {
	int64_t pid, tid;
	uint32_t file;
	bool has_span;
	uint64_t slices, busy;
	int64_t first_ns, last_ns; /* its observed span */
};

struct tally_sum {
	enum tally_by by;
	uint64_t files;		/* inputs summed */
	uint32_t first_file;	/* the number of the first of them */
	uint64_t profiles;	/* of them, profiles */
	uint64_t unread;	/* of them, not read (no tables: unreadable, not a trace) */
	int status;		/* the worst of the inputs' statuses (the caller's codes) */
	uint64_t errors;	/* inputs read up to malformed input */
	struct trace_status st; /* the first file's, for a report of one (pointers NULL) */
	struct buf names;	/* the files' names in file order, NUL-terminated */
	struct buf name_at;	/* where each begins in names: a size_t per file */
	struct buf warnings;	/* lines, NUL-terminated, in file order */
	uint64_t nwarnings;
	struct table rows;	 /* key -> struct row (BY_THREAD: file, pid, tid) */
	struct table threads;	 /* (file, pid, tid) -> struct sum_thread */
	struct table async_rows; /* name -> struct async_row */
	struct table counters;	 /* (name, series) -> struct counter, as the tally's */
	struct table labels;	 /* 'p' file pid, 't' file pid tid -> struct label */
	struct tally_polls polls;
	struct end_marker end;	   /* one file's; summed: counts added, final when all are */
	uint64_t ends, ends_final; /* files with an end marker, and with final:true */
	uint64_t events, slices, async_spans, thread_count;
	uint64_t anomaly[AN_COUNT];
	bool lost_threads, has_time;
	int64_t first_ns, last_ns;
};

void tally_sum_init(struct tally_sum *s, enum tally_by by);
void tally_sum_destroy(struct tally_sum *s);

/* Add the finished tally c of input number file (named name) to s, an empty sum: its
 * tables, its threads (with their busy time), its status (copied). 0 or -1 (out of
 * memory). */
int tally_sum_add_tally(struct tally_sum *s, const struct tally *c, uint32_t file,
			const char *name);

/* Note input number file (named name) with nothing read: its status only. 0 or -1. */
int tally_sum_add_nothing(struct tally_sum *s, uint32_t file, const char *name, int status);

/* Add a line to the warnings (copied). 0 or -1. */
int tally_sum_warn(struct tally_sum *s, const char *line);

/* Merge from (the later files) into into. 0 or -1 (out of memory: into is then only
 * partly merged, and fit only to be destroyed). */
int tally_sum_merge(struct tally_sum *into, const struct tally_sum *from);

/* The row of a name, category or thread key, made when new (the caller fills it).
 * NULL when out of memory. */
struct row *tally_sum_row(struct tally_sum *s, const void *key, size_t len);

/* The thread (file, pid, tid), made when new. NULL when out of memory. */
struct sum_thread *tally_sum_thread(struct tally_sum *s, uint32_t file, int64_t pid, int64_t tid);

/* Name a process ('p', tid ignored) or thread ('t') of a file (name copied). 0 or -1. */
int tally_sum_set_label(struct tally_sum *s, char kind, uint32_t file, int64_t pid, int64_t tid,
			const char *name, size_t len);

/* The process or thread name given, or NULL. */
const struct label *tally_sum_label(const struct tally_sum *s, char kind, uint32_t file,
				    int64_t pid, int64_t tid);

/* "process / thread (pid/tid)" into b, NUL-terminated (b->len counts the NUL), leaving
 * out the names not given; with several files "FILE: " before it. 0 or -1. */
int tally_sum_thread_label(const struct tally_sum *s, struct buf *b, uint32_t file, int64_t pid,
			   int64_t tid);

/* The name of input number file, or "" when the sum does not hold it. */
const char *tally_sum_file_name(const struct tally_sum *s, uint32_t file);

/* Find where each file's name begins in s->names (after they were set whole). 0 or -1. */
int tally_sum_index_names(struct tally_sum *s);

/* s as bytes, appended to out. 0 or -1 (out of memory). */
int tally_sum_pack(const struct tally_sum *s, struct buf *out);

/* Bytes of tally_sum_pack() into s, an empty sum. 0; -1 out of memory; -2 malformed
 * (s then holds part of it: destroy it). */
int tally_sum_unpack(struct tally_sum *s, const void *bytes, size_t len);

#endif /* RTR_TOOLS_TALLY_SUM_H */
