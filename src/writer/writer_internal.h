/* SPDX-License-Identifier: MIT */
/*
 * The writer's rooms and what they share. Do not include outside src/writer/.
 *
 *	writer.c	the thread: sleep and wake, flush and stop, accounting, the
 *			recorder's entry points (session/recorder.h)
 *	drain.c		reading the rings: framing, folding B+E into X, skipping what
 *			is malformed, the per-ring reader state
 *	json.c		the encoder: record -> JSON line, the head cache
 *	json_meta.c	the encoder's other lines: metadata, memory, stack samples
 *	lanes.c		track placement: which lane of a track an event goes on
 *	framing.c	the file around the lines: head, provisional close, end marker,
 *			the chunk handed to the sink, a segment's room
 *	out.h		the chunk being filled, a line at a time
 *	cut.c		the files of a session: segments (rotation), the flight window
 *			and its snapshots, what a cut ends and begins again
 *	slices.c	a thread's open slices; async_open.c: the open async spans
 *
 * The data flows one way: writer.c runs drain.c, which hands events to the output
 * format through struct rtr__format, which writes lines with out.h into chunks that
 * framing.c gives to the sink. The drain knows records, not JSON; the format knows
 * JSON, not rings beyond the records it is handed.
 */
#ifndef RTR_WRITER_INTERNAL_H
#define RTR_WRITER_INTERNAL_H

#include "common/compiler.h"
#include "common/jsontext_num.h"
#include "record/record.h"
#include "ring/ring.h"
#include "writer/writer.h"
#include "sink/sink.h"
#include "writer/async_open.h"
#include "writer/intern.h"
#include "writer/memstack_writer.h"

#include <limits.h>
#include <pthread.h>

struct rtr__writer;
struct rtr__head;

#define RTR__CHUNK_BYTES ((size_t)1 << 20) /* a chunk of lines: the unit of every write */
#define RTR__NCHUNKS	 4		   /* chunks of a file's sink */

/* One event the drain hands the format: its header at record index pos, and the E
 * folded into it (an X for both), or NULL; with an E, `args` events between them
 * (rtr_scope_arg_*: their arguments go on the X; 0 without an E). The format sets
 * bad when it does not decode. */
struct rtr__drained {
	uint32_t pos;
	uint32_t bad;
	const struct rtr__rec *end;
	uint32_t args;
};

/* Lines the writer makes itself about a thread (rtr__format.meta). */
enum {
	RTR__WMETA_THREAD_NAME, /* the ring's name, r->name: its first event does not name it */
	RTR__WMETA_THREAD_SORT, /* value: the thread's sort index */
	RTR__WMETA_DROPS,	/* value: the session's drops shown so far, on r's thread */
};

/*
 * An output format: the encoder behind the drain. The per-file and per-ring
 * operations are called through here; events go a batch at a time, so that the
 * format's per-event code is direct calls in its own file (no indirect call per
 * event). All are called on the writer thread only (init and fini also from
 * rtr_start()/rtr_stop() while no writer thread runs).
 */
struct rtr__format {
	const char *name;
	/* The session's caches. 0 or -errno (nothing left allocated). */
	int (*init)(struct rtr__writer *w);
	/* Free them: RTR__FINI_ALL, or in a child after fork() RTR__FINI_FORK (free what
	 * never moves, forget what may be mid-update) or RTR__FINI_FORGET (touch nothing:
	 * the parent's writer may be freeing it). */
	void (*fini)(struct rtr__writer *w, int how);
	/* The file's head, before any event: into the first chunk. */
	void (*begin_file)(struct rtr__writer *w);
	/* Events of ring r follow (a drain found some): per-thread state. */
	void (*begin_ring)(struct rtr__writer *w, const struct rtr__ring *r);
	/* A line the writer makes about r's thread: RTR__WMETA_*. */
	void (*meta)(struct rtr__writer *w, const struct rtr__ring *r, int what, int64_t value);
	/* Encode n events of r, in order; returns the events encoded (a folded pair
	 * counts two). One that does not decode is marked bad, having written nothing;
	 * its folded E, if any, is written alone. */
	uint64_t (*events)(struct rtr__writer *w, struct rtr__ring *r, struct rtr__drained *ev,
			   uint32_t n);
	/* The file's tail: final 0 the provisional close at the end of every chunk, in
	 * the room out_reserve() keeps (TAIL_ROOM); 1 the last one, at the stop. */
	void (*end_file)(struct rtr__writer *w, int final);
	/* A cut (cut.c): the lines that end r's open slices where a file ends
	 * (RTR__CUT_END, or RTR__CUT_OPEN at a snapshot's end) or begin them again where
	 * the next starts (RTR__CUT_BEGIN), at ts (ns from the origin); the same for the
	 * open async spans. At most `budget` bytes; returns the lines written. */
	uint64_t (*cut_ring)(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			     size_t budget);
	uint64_t (*cut_async)(struct rtr__writer *w, int what, uint64_t ts, size_t budget);
	/* Lines may be moved to the next file page (out_commit()): JSON text can be
	 * padded with spaces between lines; a protobuf stream cannot. */
	int pads_pages;
};

enum { RTR__CUT_END, RTR__CUT_OPEN, RTR__CUT_BEGIN };

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
	struct rtr__slices *slices; /* its open slices (slices.h); NULL until a B line */
	uint64_t args_lost;	    /* rtr_scope_arg_* arguments cut: no room, no slice */
	uint64_t last_ticks;	    /* the latest time written on its timeline (json.c) */
	uint64_t meta_file;	    /* the file (rtr__out.file_id) its names are in */
	uint32_t meta_done;	    /* counted in the session's threads */
	uint32_t unframed; /* a header could not be framed: corrupt is P - events at the end */
	uint64_t fmt_seq;  /* the perfetto format's sequence of this ring, index + 1; 0: none */
};
_Static_assert(sizeof(struct rtr__reader) <= sizeof(((struct rtr__ring *)0)->reader),
	       "reader state must fit in the ring");

static inline struct rtr__reader *rtr__reader_of(struct rtr__ring *r)
{
	return (struct rtr__reader *)(void *)r->reader;
}

/* writer.c: the thread and its control words; futexes where noted. */
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

/* writer.c: accounting, and the counters published for rtr_stats_get(): relaxed,
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

/* drain.c */
struct rtr__drain {
	struct rtr__ring **rings; /* the last snapshot of the registry */
	size_t rings_cap;
	uint64_t session_id;
	uint64_t first_ring_id;		  /* rings with a larger id were made in this session */
	int corrupt_reported;		  /* the first malformed record is on stderr */
	uint64_t dropped_shown;		  /* drops shown in the trace's counter track */
	uint64_t threads;		  /* rings that recorded in this session */
	struct rtr__ring *current;	  /* the ring being drained, or the last one */
	const struct rtr__drained *batch; /* its batch being encoded, or NULL */
	uint32_t batch_at;		  /* ... the event being encoded in it */
};

struct rtr__flight;

/* framing.c and out.h: the chunk being filled and the sink it goes to; cut.c: the
 * file it belongs to, one of several with rotation or snapshots. */
struct rtr__out {
	struct rtr__sink sink; /* the file; in flight mode only while a snapshot is written */
	struct rtr__chunk *chunk;
	size_t chunk_limit;  /* out_reserve() fills the chunk up to here: a segment's room */
	size_t chunk_target; /* flight mode: the lines a chunk of the window holds */
	size_t chunk_room;   /* flight mode: the bytes a chunk of the window has */
	uint64_t encoded;    /* events encoded into chunks */
	int provisional;     /* close each write provisionally: a regular file */
	int finishing;	     /* the final end marker is being written */
	int error_reported;

	/* The files (cut.c). */
	uint64_t file_id;     /* unique in the process: names are written once per file */
	uint64_t file_no;     /* the segment's or snapshot's number (%s) */
	uint64_t file_events; /* `encoded` when the file began */
	uint64_t file_failed; /* the sink's events_failed then */
	uint64_t limit_bytes; /* rotation: JSON text a segment may hold; UINT64_MAX: no limit */
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

/* json.c, json_meta.c: the JSON encoder's session state. */
struct rtr__json {
	struct rtr__intern intern;
	struct rtr__head *heads; /* HEAD_SLOTS (json.h) */
	uint64_t heads_epoch;	 /* intern.resets when the heads were last emptied */
	char *scratch;		 /* RTR__EXT_MAX bytes: one wrapped event's continuation */
	char pid_tid[48];	 /* ,"pid":P,"tid": */
	size_t pid_tid_len;
	int64_t ids_tid; /* tid whose ids ends the lines now; -1: none */
	size_t ids_len;
	/* ,"pid":P,"tid":T},\n for ids_tid, copied whole: at most 25 bytes of pid_tid,
	 * 20 that rtr__json_u64() may write and the 3 of the end */
	char ids[48];
	/* the latest event's ts in whole microseconds, as text: events close in time
	 * share it, or all of it but the last two digits (rtr__json_us_near()) */
	struct rtr__json_us_cache ts_text;
	struct rtr__memstack mem;     /* live allocations, totals, resolved frames */
	struct rtr__async_open async; /* the async spans open (async_open.h) */
	int process_meta_done;	      /* the process label and sort index are in this file */
};

struct rtr__pf_seq;
struct rtr__pf_slot;
struct rtr__pf_track;
struct rtr__pf_span;

/* perfetto.c: the protobuf encoder's session state (it uses struct rtr__json's
 * scratch, memory table and async spans too). */
struct rtr__pf {
	struct rtr__pf_slot *slots; /* interned strings by (kind, pointer): PF_SLOTS */
	size_t nslots_used;
	char *arena; /* their UTF-8 bytes: PF_ARENA */
	size_t arena_used;
	uint64_t epoch;		  /* times the table was emptied: sequences clear again */
	struct rtr__pf_seq *seqs; /* a sequence per ring, by rtr__reader.fmt_seq */
	size_t nseqs, seqs_cap;
	uint64_t writer_file;	      /* the file whose sequence 1 is cleared */
	struct rtr__pf_track *tracks; /* counter and async tracks: PF_TRACKS */
	size_t ntracks;
	uint64_t tracks_file;	    /* the file their descriptors are in */
	char *tmp;		    /* PF_TMP bytes of scratch */
	struct rtr__pf_span *spans; /* the span cache (perfetto.c) */
	int label_sort;		    /* the process's sort index, when set */
	int has_sort;
	char label[64];
};

struct rtr__writer {
	struct rtr__session s;
	const struct rtr__format *fmt;
	struct rtr__loop loop;
	struct rtr__account acct;
	struct rtr__drain drain;
	struct rtr__out out;
	struct rtr__json json;
	struct rtr__pf pf;
};

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

/* writer.c: add ring r's share of the session to t. */
void rtr__account_ring(struct rtr__writer *w, struct rtr__ring *r, struct rtr__totals *t);

/* framing.c */

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
/* The JSON format's head and tail (rtr__format.begin_file and end_file). */
void rtr__json_begin_file(struct rtr__writer *w);
void rtr__json_end_file(struct rtr__writer *w, int final);

/* framing.c: what an end marker counts, for either format's (final: the last one). */
struct rtr__end_counts {
	uint64_t full, large, reentrant, corrupt, no_track, io, dropped;
	uint64_t failed; /* events the sink could not write */
	uint64_t bytes;	 /* the file's bytes before the marker (uncompressed) */
	uint64_t events; /* this file's: a segment's since it began, a snapshot's */
	uint32_t signal; /* the signal it names, or 0 */
	int block;	 /* block mode: the producers' waits are in the marker */
	uint64_t waited, waited_ns;
};
void rtr__out_end_counts(struct rtr__writer *w, int final, struct rtr__end_counts *c);

/* writer.c: publish the session's counters (final: after the stop's wait). */
void rtr__writer_account(struct rtr__writer *w, int final);
/* drain.c: where a cut ends and begins again r's open slices, in ticks: after every
 * event of r written, before every one to come. */
uint64_t rtr__drain_cut_ticks(struct rtr__writer *w, struct rtr__ring *r);
/* drain.c: r's names for the current file (the thread's name and sort index), once. */
void rtr__drain_thread_meta(struct rtr__writer *w, struct rtr__ring *r, int first_event_names);

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
/* Whether lane k of t still needs its name this session (then it has it). */
bool rtr__lane_claim_name(struct rtr_track *t, unsigned k, uint64_t session);
/* Lane k's shown name into buf (size bytes); returns its length. Its sort index. */
size_t rtr__lane_name(const struct rtr_track *t, unsigned k, char *buf, size_t size);
int64_t rtr__lane_sort_index(const struct rtr_track *t, unsigned k);

#endif
