/* SPDX-License-Identifier: MIT */
/*
 * The insides of the .pftrace writer (pf_write.h), shared by its files; not for the
 * tools themselves.
 *
 * Who does what:
 *   pf_write.c         the writer: the packet being made and the one sink every packet
 *                      leaves by, interning, sequences and their clocks, the file's
 *                      head
 *   pf_write_tracks.c  processes, threads, counter and async tracks: their uuids,
 *                      descriptors and the M events that change them
 *   pf_write_event.c   the events by phase, their args as debug annotations
 *   pf_write_json.c    an event's compact JSON back into a trace_event; JSON strings
 *                      and numbers decoded
 *
 * A packet is made in w->pkt with the pfw_put_*() calls (protobuf fields through
 * format/perfetto/pb.h), nested messages by offset (the buffer may move), and sent
 * by pfw_send(). Errors are sticky: the first sets w->err, and every call after it
 * does nothing.
 */
#ifndef RTR_TOOLS_PF_WRITE_INTERNAL_H
#define RTR_TOOLS_PF_WRITE_INTERNAL_H

#include "budget.h"
#include "format/perfetto/pack.h"
#include "format/perfetto/pb.h"
#include "json.h"
#include "pf_write.h"
#include "table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a table entry costs against the state budget (source/pf_internal.h's figure). */
#define PFW_ENTRY_COST 144

/* The intern table is emptied when it holds this many strings, or bytes of them. */
#define PFW_STRINGS_MAX	      ((uint32_t)1 << 16)
#define PFW_STRINGS_BYTES     ((uint64_t)8 << 20)
#define PFW_INTERN_NAME_MAX   1024u /* longer names, categories: inline */
#define PFW_INTERN_STRING_MAX 64u   /* longer string values: inline */

/* Annotations nested deeper than this are written as their JSON text (a string): the
 * readers stop at 64 levels of a packet. */
#define PFW_MAX_DEPTH 32

/* The sequence-scoped clock of the threads' sequences: the primary clock, delta-encoded
 * (the library's clock 64). */
#define PFW_DELTA_CLOCK 64u

/* The writer's own sequence: the clock snapshot, processes, counter and async tracks. */
#define PFW_SEQ_WRITER 1u

/* A thread's packet sequence. */
struct pfw_seq {
	uint32_t id;
	bool cleared;	/* its first packet was written */
	uint64_t epoch; /* the intern table's epoch when it was cleared last */
	bool has_clock; /* clock 64 has a value: */
	uint64_t last;	/* the latest time written on it, never lowered */
	uint64_t *sent; /* iids it has been sent since its clear, a bit each */
	size_t words;	/* of sent */
};

struct pfw_process {
	uint64_t uuid;
	int32_t pid;
	char *name, *labels; /* NULL until an M event names them */
	bool has_sort;
	int32_t sort;
};

struct pfw_thread {
	uint64_t uuid;
	struct pfw_process *process;
	int32_t pid, tid;
	char *name;
	bool has_sort;
	int32_t sort;
	struct pfw_seq seq;
};

/* A counter track, or an async span's track. */
struct pfw_track {
	uint64_t uuid;
	int64_t open; /* async: b minus e */
};

/* A string of the packet being made that its sequence has not had: it goes into the
 * packet's interned_data. s points into the intern table's key. */
struct pfw_pending {
	uint32_t field; /* InternedData's field */
	uint32_t iid;
	const char *s;
	size_t len;
};

struct pf_writer {
	struct output *out;
	/* packets in zlib batches (compressed_packets), as the library writes them,
	 * unless the output is gzip already; packer NULL: plain */
	struct rtr__pf_batch batch;
	int err; /* 0, -ENOMEM, or -EIO (the output's error) */
	struct pf_writer_counts counts;

	bool started;	    /* the file's ClockSnapshot is written */
	bool origin_marker; /* from the start marker, which is next: its origins as uints */
	uint32_t clock;	    /* the primary clock (BuiltinClock) */
	int64_t base;	    /* the primary clock's time of ts 0 */
	bool writer_cleared;

	struct buf pkt;	    /* the packet being made: room for its key and length, its fields */
	struct buf key;	    /* table keys */
	struct buf text;    /* decoded strings */
	struct buf name;    /* a counter track's name */
	struct buf ev_text; /* the strings of ev */
	struct pfw_pending *pend;
	size_t npend, pend_cap;

	struct table strings; /* (field, bytes) -> uint32_t iid */
	uint64_t string_bytes;
	uint32_t next_iid;
	uint64_t epoch; /* emptied this many times, plus 1 */

	struct table processes; /* int64 pid -> struct pfw_process */
	struct table threads;	/* int64 pid, tid -> struct pfw_thread */
	struct table counters;	/* (pid, cat, name) -> struct pfw_track */
	struct table asyncs;	/* (pid, cat, id) -> struct pfw_track */
	struct table uuids;	/* uuid -> char: every track's */
	uint32_t next_seq;
	struct state_budget budget;

	struct trace_event ev; /* pf_writer_json()'s */
};

/* ------------------------------------------------------------ pf_write.c */

/* The packet buffer: emptied, and the pending strings with it. */
void pfw_begin(struct pf_writer *w);
void pfw_put_uint(struct pf_writer *w, unsigned field, uint64_t v);
void pfw_put_fixed64(struct pf_writer *w, unsigned field, uint64_t v);
void pfw_put_bytes(struct pf_writer *w, unsigned field, const char *s, size_t len);
/* A nested message: its offset, for pfw_close(). */
size_t pfw_open(struct pf_writer *w, unsigned field);
void pfw_close(struct pf_writer *w, size_t at);
/* The packet's interned data (what is pending), its sequence and flags; then out. */
void pfw_send(struct pf_writer *w, uint32_t seq, uint32_t flags);
/* The flags of a packet on the writer's own sequence (the first clears it). */
uint32_t pfw_writer_flags(struct pf_writer *w);

/* The iid of a string (InternedData field) on seq, pending in the packet when seq has
 * not had it; 0 when it is not interned (write it inline). */
uint32_t pfw_iid(struct pf_writer *w, struct pfw_seq *seq, uint32_t field, const char *s,
		 size_t len);
/* Empty the intern table if it is full: before an event, never inside a packet. */
void pfw_intern_room(struct pf_writer *w);

/* The file's ClockSnapshot, from the first event with a time (its origin, when it is
 * the start marker). */
void pfw_start(struct pf_writer *w, const struct trace_event *ev);
/* A thread's sequence ready for a packet: cleared (its descriptor) if it never was or
 * the intern table was emptied since, with a ClockSnapshot at its latest time. */
void pfw_seq_ready(struct pf_writer *w, struct pfw_thread *th);
/* The packet's timestamp t on seq (a ClockSnapshot before it when seq has no clock
 * yet: call before pfw_begin()); pfw_time() then the field. */
void pfw_clock_for(struct pf_writer *w, struct pfw_seq *seq, uint64_t t);
void pfw_time(struct pf_writer *w, struct pfw_seq *seq, uint64_t t);

/* A new track uuid: want when it is free (and not 0), else the next free one; never
 * one a reader would take for a lane of process *lane_pid (lane_pid not NULL: an
 * async track's). 0 when out of memory. */
uint64_t pfw_claim_uuid(struct pf_writer *w, uint64_t want, const int64_t *lane_pid);
void pfw_release_uuid(struct pf_writer *w, uint64_t uuid);

/* ------------------------------------------------------------ pf_write_tracks.c */

/* The thread (pid, tid), made (with its process) and ready for a packet. NULL when
 * past the state bound or out of memory (w->err). */
struct pfw_thread *pfw_thread(struct pf_writer *w, int64_t pid, int64_t tid);
/* The thread's descriptor on its sequence; clear: the sequence's first packet since
 * its clear (with its defaults; first: its first packet ever). */
void pfw_put_thread(struct pf_writer *w, const struct pfw_thread *th, bool clear, bool first);
/* An M event: its track's descriptor, written again. 0, or 1 when it has no place
 * (an unknown name, no value). */
int pfw_meta(struct pf_writer *w, const struct trace_event *ev);
/* The counter track of (pid, cat, name), declared before its first use; 0 past the
 * state bound. */
uint64_t pfw_counter_track(struct pf_writer *w, const struct pfw_thread *th,
			   const struct trace_value *cat, const char *name, size_t len);
/* The async track of the event's (pid, cat, id), declared with its name; NULL past
 * the bound or out of memory. */
struct pfw_track *pfw_async_track(struct pf_writer *w, const struct pfw_thread *th,
				  const struct trace_event *ev);
/* After an event on it: delta +1 for b, -1 for e, 0 for n; a track with nothing open
 * is forgotten (a later span of the same id declares it again). */
void pfw_async_done(struct pf_writer *w, struct pfw_track *t, int delta);
void pfw_tracks_free(struct pf_writer *w);

/* ------------------------------------------------------------ pf_write_event.c */

int pfw_event(struct pf_writer *w, const struct trace_event *ev);

/* ------------------------------------------------------------ pf_write_json.c */

/* A JSON string's text (between its quotes, escaped) decoded into out (appended). 0
 * or -1. */
int pfw_unescape(struct buf *out, const char *s, size_t len);
/* The event whose compact JSON is json[0 .. len) into *ev, strings decoded into text
 * (reset first). 0, or -1 out of memory or not an object. */
int pfw_parse_event(const char *json, size_t len, struct trace_event *ev, struct buf *text);
/* The value of the top-level arg named key in an args object's compact JSON, or NULL. */
const char *pfw_arg(const struct trace_event *ev, const char *key, size_t *len);

#endif /* RTR_TOOLS_PF_WRITE_INTERNAL_H */
