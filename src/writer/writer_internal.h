/* SPDX-License-Identifier: MIT */
/*
 * The writer's rooms and what they share. Do not include outside src/writer/ and the
 * formats (src/format/, through format.h).
 *
 *	loop.c		the thread: sleep and wake, flush and stop, signals and
 *			snapshots; the entry points of writer.h
 *	account.c	the session's accounting and the counters of rtr_stats_get()
 *	drain.c		reading the rings: framing, folding B+E into one event, skipping
 *			what is malformed, the per-ring reader state
 *	event.c		decoding a batch of records into events (event.h), once, for
 *			any format; the bookkeeping that follows the lines written
 *	out.c, out.h	the chunk being filled and handed to the sink, the file's head
 *			and end through the format, a segment's room
 *	marker.c	what the start and end markers say
 *	cut.c		the files of a session: segments (rotation), the flight window
 *			and its snapshots, what a cut ends and begins again
 *	slices.c	a thread's open slices; async_open.c: the open async spans
 *	lanes.c		track placement; memstack_writer.c: live allocations, symbols
 *	format.h	the interface a format implements (src/format/json/,
 *			src/format/perfetto/), and what of the writer it may use
 *
 * The data flows one way: loop.c runs drain.c, which decodes a batch of a ring's
 * records (event.c) and hands it to the format through struct rtr__format, which
 * writes bytes with out.h into chunks that out.c gives to the sink. Nothing here
 * knows an output format; the format knows events, not records or rings.
 */
#ifndef RTR_WRITER_INTERNAL_H
#define RTR_WRITER_INTERNAL_H

#include "common/compiler.h"
#include "record/record.h"
#include "ring/ring.h"
#include "sink/sink.h"
#include "writer/async_open.h"
#include "writer/event.h"
#include "writer/memstack_writer.h"
#include "writer/writer.h"

#include <limits.h>
#include <pthread.h>

struct rtr__writer;
struct rtr__format;

#define RTR__CHUNK_BYTES  ((size_t)1 << 20) /* a chunk of lines: the unit of every write */
#define RTR__NCHUNKS	  4		    /* chunks of a file's sink */
#define RTR__BATCH_EVENTS 128u		    /* events handed to the format at once */

/* One event the drain found: its header at record index pos, and the E folded into
 * it (one event for both), or NULL; with an E, `args` argument events between them
 * (rtr_scope_arg_*: their arguments go with the pair; 0 without an E). */
struct rtr__drained {
	uint32_t pos;
	uint32_t args;
	const struct rtr__rec *end;
};

/* Lines the writer makes itself about a thread (rtr__format.meta). */
enum {
	RTR__WMETA_THREAD_NAME, /* the ring's name, r->name: its first event does not name it */
	RTR__WMETA_THREAD_SORT, /* value: the thread's sort index */
	RTR__WMETA_DROPS,	/* value: the session's drops shown so far, on r's thread */
};

/* What a cut writes (cut.c): the end of what is open where a file ends (END, or OPEN
 * at a snapshot's end), or its beginning again where the next starts (BEGIN). */
enum { RTR__CUT_END, RTR__CUT_OPEN, RTR__CUT_BEGIN };

/* How a session's state is freed: all of it, or in a child after fork() what never
 * moves (FORK: what may be mid-update is forgotten) or nothing (FORGET: the parent's
 * writer may be freeing it). */
enum { RTR__FINI_ALL, RTR__FINI_FORK, RTR__FINI_FORGET };

/* Private totals: the producer counters of rings, and what was consumed. */
struct rtr__totals {
	uint64_t events, full, large, reentrant, no_track, args_cut, consumed, corrupt;
	uint64_t waited, waited_ns; /* block mode's waits for room */
};

/* The writer's state in each ring (rtr__ring.reader), drain.c's. */
struct rtr__reader {
	uint64_t session;     /* session these fields belong to */
	uint64_t base_events; /* producer counters when the session began */
	uint64_t base_full;
	uint64_t base_large;
	uint64_t base_reentrant;
	uint64_t base_no_track;
	uint64_t base_args_cut;
	uint64_t base_waited, base_waited_ns;
	uint64_t events;	    /* events consumed and encoded in this session */
	uint64_t corrupt;	    /* events skipped as malformed in this session */
	uint64_t dropped_seen;	    /* drops already shown in the trace */
	struct rtr__slices *slices; /* its open slices (slices.h); NULL until a B */
	uint64_t args_lost;	    /* rtr_scope_arg_* arguments cut: no room, no slice */
	uint64_t last_ns;	    /* the latest time written on its timeline */
	uint64_t meta_file;	    /* the file (rtr__out.file_id) its names are in */
	uint32_t meta_done;	    /* counted in the session's threads */
	uint32_t unframed; /* a header could not be framed: corrupt is P - events at the end */
	uint64_t fmt_word; /* the format's own, per ring and session (0 at the start) */
};
_Static_assert(sizeof(struct rtr__reader) <= sizeof(((struct rtr__ring *)0)->reader),
	       "reader state must fit in the ring");

static inline struct rtr__reader *rtr__reader_of(struct rtr__ring *r)
{
	return (struct rtr__reader *)(void *)r->reader;
}

/* loop.c: the thread and its control words; futexes where noted. */
struct rtr__loop {
	pthread_t thread;
	uint64_t last_write_ns;
	int final_error;
	uint32_t stop;	     /* set by rtr__writer_stop() */
	uint32_t flush_req;  /* flush tickets handed out */
	uint32_t flush_done; /* futex: last flush ticket served */
	uint32_t give_up;    /* set by rtr__writer_stop() past the timeout: stop waiting */
	uint32_t state;	     /* futex: WRITER_*; who frees the session (rtr__writer_stop()) */
	/* Signals (session/signals.h): the fatal one finishing the file, and the ring the
	 * stop does not wait for; the one the provisional end marker names (a flush for a
	 * handled signal); snapshot signals received and served. */
	uint32_t signal;
	const struct rtr__ring *signal_ring;
	uint32_t flush_signal;
	uint32_t snap_signals;
	uint32_t snap_signals_done;
	/* rtr_snapshot(): tickets handed out and served (futex), the result, the path. */
	uint32_t snap_req;
	uint32_t snap_done;
	int snap_err;
	char snap_path[PATH_MAX];
	uint64_t next_cut_ns; /* max_seconds: when the segment ends */
};

/* account.c: accounting, and the counters published for rtr_stats_get(): relaxed,
 * stored by the writer. */
struct rtr__account {
	struct rtr__totals retired; /* of the rings freed in this session */
	uint64_t base_unattached;   /* rtr__rings_reentrant_unattached() at the start */
	uint64_t st_recorded, st_dropped_full, st_dropped_large, st_args_cut, st_threads,
		st_wakeups, st_dropped_reentrant, st_dropped_corrupt, st_dropped_no_track,
		st_unwritten, st_files, st_evicted, st_snapshot_bytes, st_flight_written, st_waited,
		st_waited_ns;
	int st_io, st_clock, st_flight;
};

/* drain.c and event.c */
struct rtr__drain {
	struct rtr__ring **rings; /* the last snapshot of the registry */
	size_t rings_cap;
	uint64_t session_id;
	uint64_t first_ring_id;		/* rings with a larger id were made in this session */
	int corrupt_reported;		/* the first malformed record is on stderr */
	uint64_t dropped_shown;		/* drops shown in the trace's counter track */
	uint64_t threads;		/* rings that recorded in this session */
	struct rtr__ring *current;	/* the ring being drained, or the last one */
	const struct rtr__batch *batch; /* its batch being written, or NULL */
	/* event.c: the batch's events, the folded arguments' views, the arguments an E
	 * carries from its slice, one wrapped continuation (mapped at the start). */
	struct rtr__event *events; /* RTR__BATCH_EVENTS */
	struct rtr__args *folded;  /* RTR__BATCH_EVENTS * RTR_MAX_ARGS */
	struct rtr__args *added;   /* RTR_SLICES_ADDED_MAX */
	char *scratch;		   /* RTR__EXT_MAX */
};

struct rtr__flight;

/* out.c and out.h: the chunk being filled and the sink it goes to; cut.c: the file it
 * belongs to, one of several with rotation or snapshots. */
struct rtr__out {
	struct rtr__sink sink; /* the file; in flight mode only while a snapshot is written */
	struct rtr__chunk *chunk;
	size_t chunk_limit;  /* out_reserve() fills the chunk up to here: a segment's room */
	size_t chunk_target; /* flight mode: the lines a chunk of the window holds */
	size_t chunk_room;   /* flight mode: the bytes a chunk of the window has */
	uint64_t encoded;    /* events encoded into chunks */
	int provisional;     /* close each write provisionally: a regular file */
	int pads_pages;	     /* the format's lines may be moved to a page (out_commit()) */
	int finishing;	     /* the final end marker is being written */
	int error_reported;

	/* The files (cut.c). */
	uint64_t file_id;     /* unique in the process: names are written once per file */
	uint64_t file_no;     /* the segment's or snapshot's number (%s) */
	uint64_t file_events; /* `encoded` when the file began */
	uint64_t file_failed; /* the sink's events_failed then */
	uint64_t limit_bytes; /* rotation: text a segment may hold; UINT64_MAX: no limit */
	uint64_t continued;   /* lines at the file's start beginning what was open */
	uint64_t closed;      /* lines at its end ending what is open */
	uint64_t cut_lost;    /* open slices a cut could not end and begin again */
	uint64_t files;	      /* files finished: segments or snapshots */
	int cutting;	      /* a cut's lines are being written: no segment limit */
	int continues;	      /* the end marker being written is a segment's: more follow */
	/* Finished segments whose pages may still be cached (cut.c): their fds, open until
	 * their pages are dropped, and sizes. */
	int old_fd[8];
	uint64_t old_bytes[8];
	unsigned nold;
	struct rtr__flight *flight; /* flight mode: the window (cut.c); NULL when streaming */
	int snapshotting;	    /* chunks go to the snapshot's sink, not the window */
	uint64_t snapshot_events;   /* events in the snapshot being written */
	uint64_t snapshot_evicted;  /* ... and recorded before it, not in it */
};

struct rtr__writer {
	struct rtr__session s;
	const struct rtr__format *fmt;
	void *fmt_state; /* the format's own (its init() makes it) */
	struct rtr__loop loop;
	struct rtr__account acct;
	struct rtr__drain drain;
	struct rtr__out out;
	struct rtr__memstack mem;     /* live allocations, resolved frames */
	struct rtr__async_open async; /* the async spans open */
};

/* Nanoseconds since the trace's origin (the start marker's time); 0 before it. */
static inline uint64_t rtr__writer_rel_ns(const struct rtr__writer *w, uint64_t ns)
{
	return ns > w->s.origin_ns ? ns - w->s.origin_ns : 0;
}

static inline uint64_t rtr__writer_ticks_ns(const struct rtr__writer *w, uint64_t ticks)
{
	return rtr__clock_ns(&w->s.clock, ticks);
}

/* drain.c */

/* One pass over every ring, up to `batch` records of each. Returns the records
 * consumed. Closed rings found drained are folded into the totals and freed. */
uint64_t rtr__drain_all(struct rtr__writer *w, uint32_t batch);
/* Free the session's stacks of open slices (struct rtr__reader.slices). */
void rtr__drain_free_slices(struct rtr__writer *w);
/* r's reader state for this session, attached on first use. */
struct rtr__reader *rtr__drain_reader(struct rtr__writer *w, struct rtr__ring *r);
/* Where a cut ends and begins again r's open slices, in ns on the trace clock: after
 * every event of r written, before every one to come (0: none yet). */
uint64_t rtr__drain_cut_ns(struct rtr__writer *w, struct rtr__ring *r);
/* A header of r that did not decode: skipped, counted as dropped_corrupt, the first
 * reported. */
void rtr__drain_corrupt(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec);
/* r's names for the current file (the thread's name and sort index), once. */
void rtr__drain_thread_meta(struct rtr__writer *w, struct rtr__ring *r, int first_event_names);

/* event.c */

/* The batch's memory (struct rtr__drain), for the session. 0 or -ENOMEM. */
int rtr__events_init(struct rtr__writer *w);
void rtr__events_fini(struct rtr__writer *w);
/* Decode the n events the drain found in r into b (b->ev, from w->drain.events).
 * One that does not decode is left out (rtr__drain_corrupt()), and the events folded
 * with it decoded alone. Returns the events b stands for: the sum of their counts. */
uint64_t rtr__events_decode(struct rtr__writer *w, struct rtr__ring *r,
			    const struct rtr__drained *d, uint32_t n, struct rtr__batch *b);
/* Give the ring the name rtr_thread_name() gave its thread (cut on a character). */
void rtr__ring_rename(struct rtr__ring *r, const char *name, size_t len);

/* account.c */

/* Add ring r's share of the session to t. */
void rtr__account_ring(struct rtr__writer *w, struct rtr__ring *r, struct rtr__totals *t);
/* Publish the session's counters (final: after the stop's wait). */
void rtr__writer_account(struct rtr__writer *w, int final);

/* out.c */

/* Hand the current chunk to the sink (closed provisionally, if the file is regular)
 * and take the next; in flight mode, to the window. */
void rtr__out_submit(struct rtr__writer *w);
/* out_reserve() found no room for `need` bytes: end the segment or submit the chunk. */
void rtr__out_full(struct rtr__writer *w, size_t need);
/* The chunk's limit for out_reserve(): the chunk's size, or a segment's room. */
void rtr__out_set_limit(struct rtr__writer *w);
/* A write error on stderr, once per session. */
void rtr__out_report_error(struct rtr__writer *w);
/* After the last write failed for room: close the file where the device takes it. */
void rtr__out_close_after_error(struct rtr__writer *w);
/* The file's head through the format: the start marker and what every file names. */
void rtr__out_begin_file(struct rtr__writer *w);
/* The file's end through the format: the end marker (final: 0 the provisional close
 * at the end of every chunk, in the room out_reserve() keeps; 1 the last one). */
void rtr__out_end_file(struct rtr__writer *w, int final);

/* marker.c: the file's start marker, its end marker (final: the file's last). */
struct rtr__marker;
void rtr__marker_start(struct rtr__writer *w, struct rtr__marker *m);
void rtr__marker_end(struct rtr__writer *w, int final, struct rtr__marker *m);

/* cut.c: the files of a session. */

/* Set up rotation or the flight window for the session (rtr__writer_start(), after
 * the sink is open and the head written). 0 or -errno. */
int rtr__cut_start(struct rtr__writer *w);
/* Free the window (how: RTR__FINI_*). */
void rtr__cut_fini(struct rtr__writer *w, int how);
/* Stream mode with rotation: end this segment, begin the next. */
void rtr__cut_rotate(struct rtr__writer *w);
/* Flight mode: write the window as a trace at path (NULL: the pattern's next
 * number). 0 or -errno. */
int rtr__cut_snapshot(struct rtr__writer *w, const char *path);
/* The most the lines that close the file now take (end marker, ends of what is open). */
uint64_t rtr__cut_closing_bytes(struct rtr__writer *w);
/* End (RTR__CUT_END, RTR__CUT_OPEN) what is open, in the file being written; the lines. */
uint64_t rtr__cut_end_open(struct rtr__writer *w, int what);
/* Close the finished segments still held for their page cache (the stop). */
void rtr__cut_close_old(struct rtr__writer *w);
/* Flight mode: the full chunk goes to the window, a fresh one begins. */
void rtr__cut_keep_chunk(struct rtr__writer *w);
/* Flight mode: events kept in the window and fallen out of it; snapshot bytes. */
void rtr__cut_flight_counts(const struct rtr__writer *w, uint64_t *evicted, uint64_t *bytes);

/* lanes.c: track placement, independent of the format. */

/* The lane of a complete event [start, end) on track t (placing it there), of an
 * event at `host` otherwise (the last complete event's lane if inside it, else 0). */
unsigned rtr__lane_place(struct rtr_track *t, uint64_t session, uint64_t start, uint64_t end);
unsigned rtr__lane_at(const struct rtr_track *t, uint64_t host);
/* Host nanoseconds of a track timestamp: its clock mapping, clamped. */
uint64_t rtr__track_host_ns(const struct rtr_track *t, uint64_t ts);
/* Whether lane k of t still needs its name in file `file` (then it has it). */
bool rtr__lane_claim_name(struct rtr_track *t, unsigned k, uint64_t file);
/* Lane k's shown name into buf (size bytes); returns its length. Its sort index. */
size_t rtr__lane_name(const struct rtr_track *t, unsigned k, char *buf, size_t size);
int64_t rtr__lane_sort_index(const struct rtr_track *t, unsigned k);

#endif
