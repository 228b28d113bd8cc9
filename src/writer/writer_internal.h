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
 *	polls.c		a thread's consecutive polls folded into one slice
 *	event.c		decoding a batch of records into events (event.h), once, for
 *			any format; the bookkeeping that follows the lines written
 *	files.c		the files of a session: one, or segments (rotation); what a
 *			chunk that fills up means for them
 *	flight.c	flight mode: the window of chunks and its snapshots
 *	cut.c		what a cut ends and begins again where one file ends and the
 *			next begins
 *	out.c, out.h	the chunk being filled and handed to the sink, the file's head
 *			and end through the format
 *	marker.c	what the start and end markers say
 *	slices.c	a thread's open slices; async_open.c: the open async spans
 *	args.h		arguments as recorded
 *	lanes.c		track placement; memstack_writer.c: live allocations, symbols
 *	format.h	the interface a format implements (src/format/json/,
 *			src/format/perfetto/), and what of the writer it may use
 *
 * The data flows one way: loop.c runs drain.c, which decodes a batch of a ring's
 * records (event.c) and hands it to the format through struct rtr__format, which
 * writes bytes with out.h into chunks that out.c gives to the sink. Nothing here
 * knows an output format; the format knows events, not records or rings. The files
 * call down too: loop > files > flight > cut > drain > polls > event > slices, async spans;
 * a full chunk reaches files.c through the hook it sets (struct rtr__out.full), not a
 * call up from out.c.
 */
#ifndef RTR_WRITER_INTERNAL_H
#define RTR_WRITER_INTERNAL_H

#include "common/compiler.h"
#include "record/record.h"
#include "ring/ring.h"
#include "sink/sink.h"
#include "writer/args.h"
#include "writer/async_open.h"
#include "writer/memstack_writer.h"
#include "writer/writer.h"

#include <limits.h>
#include <pthread.h>

struct rtr__writer;
struct rtr__format;
struct rtr__batch;
struct rtr__event;
struct rtr__args;
struct rtr__poll_fold;

#define RTR__CHUNK_BYTES  ((size_t)1 << 20) /* a chunk of lines: the unit of every write */
#define RTR__NCHUNKS	  4		    /* chunks of a file's sink */
#define RTR__BATCH_EVENTS 128u		    /* events handed to the format at once */
/* The longest line a segment keeps room for at its end (most are under 200 bytes). */
#define LINE_SLACK (16 * 1024)

/* Lines the writer makes itself about a thread (rtr__format.meta). */
enum {
	RTR__WMETA_THREAD_NAME, /* the ring's name, r->name: its first event does not name it */
	RTR__WMETA_THREAD_SORT, /* value: the thread's sort index */
	RTR__WMETA_DROPS,	/* value: the session's drops shown so far, on r's thread */
};

/* What a cut writes (cut.c): the end of what is open where a file ends (END, or OPEN
 * at a snapshot's end), its beginning again where the next starts (BEGIN), or the B
 * lines of held slices, still open, that the file does not show yet (HELD). */
enum { RTR__CUT_END, RTR__CUT_OPEN, RTR__CUT_BEGIN, RTR__CUT_HELD };

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
#define RTR__RECENT_ENDS 8

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
	uint64_t recent_end[RTR__RECENT_ENDS]; /* the last slices' ends (rtr__writer_begin_ns) */
	uint32_t recent_next;
	uint32_t recent_within;	      /* bit k: recent_end[k]'s slice began in that ns too */
	struct rtr__poll_fold *polls; /* its polls being folded (polls.h); NULL until one */
	uint64_t pressed; /* the producer's waits and drops for room, at the last drain */
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
	uint64_t st_segment; /* the segment being written (rotation): files.c stores it */
	int st_io, st_clock, st_flight;
};

/* drain.c and event.c */
struct rtr__drain {
	uint64_t session_id;
	uint64_t first_ring_id;		/* rings with a larger id were made in this session */
	int corrupt_reported;		/* the first malformed record is on stderr */
	uint64_t dropped_shown;		/* drops shown in the trace's counter track */
	uint64_t threads;		/* rings that recorded in this session */
	struct rtr__ring *current;	/* the ring being drained, or the last one */
	const struct rtr__batch *batch; /* its batch being written, or NULL */
	const struct rtr__rec **bad;	/* headers the last batch left out (event.c) */
	uint32_t nbad;
	/* The format writes a slice as one line, and the file can show a held B at a
	 * provisional close or in a flight chunk's beginning: B's are held (slices.h). A
	 * stream cannot take a line back, so it gets each B as it comes. */
	int hold;
	/* the ring being drained has its producer waiting or dropping for room (or is
	 * three quarters full): what costs the writer time and saves only bytes (packing a
	 * Perfetto batch) is left undone */
	int behind;
	struct rtr__args held_own; /* the arguments of the E of the held X being written */
	/* rtr__cut_show_held(), for a ring that retires with slices held (cut.c includes
	 * drain.h, so drain.c calls it through here) */
	uint64_t (*show_held)(struct rtr__writer *w, struct rtr__ring *only, size_t budget);
	/* event.c: the batch's events, the folded arguments' views, the arguments an E
	 * carries from its slice, one wrapped continuation (mapped at the start). */
	struct rtr__event *events; /* RTR__BATCH_EVENTS */
	struct rtr__args *folded;  /* RTR__BATCH_EVENTS * RTR_MAX_ARGS */
	uint32_t nfolded;	   /* ... in use by the batch */
	struct rtr__args *added;   /* RTR__ADDED_LISTS */
	char *scratch;		   /* RTR__EXT_MAX */
	char *poll_args;	   /* polls.c: the folds' arguments, a run per event and one */
};

struct rtr__flight;

/* out.c and out.h: the chunk being filled and the sink it goes to; cut.c: the file it
 * belongs to, one of several with rotation or snapshots. */
struct rtr__out {
	struct rtr__sink sink; /* the file; in flight mode only while a snapshot is written */
	/* What a full chunk means for the session's files (files.c sets it): a segment
	 * ends, a flight chunk goes to the window, or the chunk goes to the sink. */
	void (*full)(struct rtr__writer *w, size_t need);
	/* The bytes the lines ending what is open would take (cut.c): the open slices'
	 * and async spans', kept as they open and end (event.c, drain.c). */
	uint64_t closing;
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
	uint64_t file_id;      /* unique in the process: names are written once per file */
	uint64_t file_no;      /* the segment's or snapshot's number (%s) */
	uint64_t file_events;  /* `encoded` when the file began */
	uint64_t file_failed;  /* the sink's events_failed then */
	uint64_t limit_bytes;  /* rotation: text a segment may hold; UINT64_MAX: no limit */
	uint64_t continued;    /* lines at the file's start beginning what was open */
	uint64_t closed;       /* lines at its end ending what is open */
	uint64_t cut_lost;     /* open slices a cut could not end and begin again */
	uint64_t files;	       /* files finished: segments or snapshots */
	int cutting;	       /* a cut's lines are being written: no segment limit */
	int in_tail;	       /* a provisional close's lines: TAIL_ROOM has their room */
	uint64_t held_unshown; /* held slices the last provisional close left out */
	int continues;	       /* the end marker being written is a segment's: more follow */
	/* Finished segments whose pages may still be cached (cut.c): their fds, open until
	 * their pages are dropped, and sizes. */
	int old_fd[8];
	uint64_t old_bytes[8];
	unsigned nold;
	struct rtr__flight *flight; /* flight mode: the window (flight.c); NULL when streaming */
	uint64_t flight_evicted;    /* events in chunks that fell out of the window */
	uint64_t snapshot_bytes;    /* written in snapshots */
	int snapshotting;	    /* chunks go to the snapshot's sink, not the window */
	uint64_t snapshot_events;   /* events in the snapshot being written */
	uint64_t snapshot_evicted;  /* ... and recorded before it, not in it */
};

/*
 * A profile kept beside the lines (src/format/profile/; the session picks it): it is
 * handed each batch before the format writes it, and writes its file where a trace's
 * file is finished (the stop, a segment's end) and at a snapshot. Writer thread,
 * but for export (any thread: the profile's own lock).
 */
struct rtr__profiler {
	int (*init)(struct rtr__writer *w); /* its state into w->prof_state; 0 or -errno */
	void (*fini)(struct rtr__writer *w, int how); /* RTR__FINI_* */
	void (*batch)(struct rtr__writer *w, const struct rtr__batch *b);
	/* The profile so far, at path (NULL: the session's), why (docs/profile.md's
	 * reason), final or not. 0 or -errno (reported, counted). */
	int (*write)(struct rtr__writer *w, const char *path, const char *reason, int final);
	/* rtr__writer_profile_export() */
	int (*export)(struct rtr__writer *w, char **data, size_t *len, size_t *cap, int freeze);
};

struct rtr__writer {
	struct rtr__session s;
	const struct rtr__format *fmt;
	void *fmt_state;		  /* the format's own (its init() makes it) */
	const struct rtr__profiler *prof; /* NULL: no profile */
	void *prof_state;		  /* the profiler's own */
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

/*
 * The time a slice of ring r begins at. Ticks become ns rounded down, so a slice
 * that begins as another ends (a scope right after an rtr_end()) may share its
 * nanosecond; a viewer that compares ts + dur as doubles (speedscope) may then see
 * the end after the begin, and pair them wrongly. A begin in the very nanosecond of
 * one of the ring's recent ends is moved 1 ns later: it was recorded after it. Not
 * when that slice began in this nanosecond too: then it is inside this one (a scope
 * is recorded at its end, after the slices it holds), and moving this begin past it
 * would put it outside.
 */
static inline uint64_t rtr__writer_begin_ns(const struct rtr__writer *w, struct rtr__ring *r,
					    uint64_t ticks)
{
	const struct rtr__reader *rd = rtr__reader_of(r);
	uint64_t ns = rtr__clock_ns(&w->s.clock, ticks);

	for (unsigned k = 0; k < RTR__RECENT_ENDS; k++)
		if (RTR_UNLIKELY(rd->recent_end[k] == ns) && !(rd->recent_within >> k & 1) &&
		    ns != UINT64_MAX)
			return ns + 1;
	return ns;
}

/* A slice of ring r that began at begin_ns (0: not known, an E's) ends at ns: for
 * rtr__writer_begin_ns(). */
static inline void rtr__writer_note_end(struct rtr__ring *r, uint64_t begin_ns, uint64_t ns)
{
	struct rtr__reader *rd = rtr__reader_of(r);
	uint32_t k = rd->recent_next++ % RTR__RECENT_ENDS;

	rd->recent_end[k] = ns;
	rd->recent_within = (rd->recent_within & ~(1u << k)) | (uint32_t)(begin_ns == ns) << k;
}

/* A slice of ring r from begin_ns (rtr__writer_begin_ns()) to its end's ticks: its
 * length, 0 for an end in the nanosecond it began in. Notes the end. */
static inline uint64_t rtr__writer_dur_ns(const struct rtr__writer *w, struct rtr__ring *r,
					  uint64_t begin_ns, uint64_t end_ticks)
{
	uint64_t end = rtr__clock_ns(&w->s.clock, end_ticks);

	rtr__writer_note_end(r, begin_ns, end);
	return end > begin_ns ? end - begin_ns : 0;
}

#endif
