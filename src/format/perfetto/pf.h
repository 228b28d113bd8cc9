/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto format: events into TracePackets of Perfetto's TrackEvent protocol,
 * the encoding docs/perfetto.md describes. Its rooms:
 *
 *	intern.c	interned strings: one table whose iids every sequence shares
 *	tracks.c	sequences (a thread's), their clocks, and the tracks: the
 *			process, threads, counters, async spans, a track's lanes
 *	events.c	the batch of events: TrackEvent packets, their annotations
 *	file.c		the file's head and end, a cut's packets; the format's table
 *	packed.c	the chunk's packets packed in place, a batch at a time
 *			(pack.c: the packing, shared with the tools)
 *
 * and this header, what they share (pb.h is the wire format, proto.h the field
 * numbers, shared with the tools' decoder). Only the writer's format.h is included:
 * this format knows events, not records, and nothing of the JSON format.
 *
 * Each thread has its own packet sequence, as in the Perfetto SDK: its first packet
 * in a file clears the sequence's state and sets its defaults (its track, clock 64),
 * so a span's packets carry only a timestamp delta, a type and two interned ids.
 * Interned strings are looked up by pointer in one table whose iids every sequence
 * shares; each sequence remembers which it has been sent (a bitmap), and a packet
 * carries the interned data its event is the first on its sequence to use. When the
 * table fills it is emptied at the next ring, and every sequence is cleared again.
 */
#ifndef RTR_FORMAT_PERFETTO_PF_H
#define RTR_FORMAT_PERFETTO_PF_H

#include "format/perfetto/pack.h"
#include "format/perfetto/pb.h"
#include "writer/format.h"

#define PF_SLOTS   ((size_t)1 << 16) /* interned strings; emptied at half */
#define PF_ARENA   ((size_t)8 << 20) /* their bytes; emptied at half */
#define PF_TRACKS  4096u	     /* counter and async tracks per file */
#define PF_BITMAP  (PF_SLOTS / 64)   /* words of a sequence's sent-iids bitmap */
#define PF_PENDING (4 + 3 * RTR_MAX_ARGS)
#define PF_TMP	   ((size_t)1 << 20) /* pf->tmp: folded and added arguments, frames */

#define CLOCK_DELTA_ID 64u /* sequence-scoped, incremental: MONOTONIC, delta-encoded */

/* Bytes a descriptor or marker packet takes at most besides its strings. */
#define PKT_FIXED 160

/* Track uuids: a process's is its pid << 32, a thread's pid << 32 | tid; the writer's
 * counter and async tracks set one of these bits in the low half. */
#define COUNTER_TRACK 0x80000000u
#define ASYNC_TRACK   0x40000000u
#define GLOBAL_TRACK  0x20000000u /* the global instants' track: no parent */

/* Counter tracks of the writer's own: the events and the drops so far. */
enum { OWN_EVENTS, OWN_DROPPED, OWN_COUNT };

/* What a string is interned as: InternedData's field for it. */
enum {
	IN_CATEGORY = RTR__PF_INTERNED_CATEGORIES,
	IN_NAME = RTR__PF_INTERNED_NAMES,
	IN_ARG_NAME = RTR__PF_INTERNED_ANNOTATION_NAMES,
	IN_STRING = RTR__PF_INTERNED_STRINGS,
};

struct rtr__pf_slot {
	uint64_t key;  /* the pointer (or code address); 0: empty */
	uint32_t kind; /* IN_* */
	uint32_t iid;  /* 1 .. PF_SLOTS */
	uint32_t off;  /* its bytes in the arena */
	uint32_t len;
};

struct rtr__pf_seq {
	uint32_t id; /* trusted_packet_sequence_id */
	uint32_t tid;
	uint64_t file_id;   /* the file its state was cleared in; 0: never */
	uint64_t desc_file; /* the file whose writer's sequence has its descriptor (a cut's) */
	uint64_t epoch;	    /* the table's epoch then */
	uint64_t last_ts;   /* clock 64's value; kept across clears and files: its next
			     * snapshot is never earlier */
	int has_clock;	    /* clock 64 has a value in this file */
	int sort_index;
	int has_sort;
	uint64_t sent[PF_BITMAP]; /* iids interned on this sequence */
};

/*
 * The common event's bytes, kept whole: a folded span's BEGIN TrackEvent (type,
 * category iid, name iid) depends only on its static name and category and the
 * table's iids, so it is kept direct-mapped by (name, cat) per table epoch, like the
 * JSON format's head cache; a hit whose iids the sequence has had is one fixed-size
 * copy in place of two lookups and the message's encoding.
 */
#define SPAN_BITS 9
struct rtr__pf_span {
	uint64_t a, b, epoch;
	uint32_t cat_iid, name_iid;
	uint32_t len;
	char bytes[20]; /* tag, length, type, category, name: at most 2 + 2 + 6 + 6 */
};

struct rtr__pf_track {
	uint64_t key; /* a counter's name (interned string's hash) or an async (cat, id) */
	uint32_t declared;
};

/* The format's session state (w->fmt_state). */
struct rtr__pf {
	struct rtr__pf_slot *slots; /* interned strings by (kind, pointer): PF_SLOTS */
	size_t nslots_used;
	char *arena; /* their UTF-8 bytes: PF_ARENA */
	size_t arena_used;
	uint64_t epoch;		  /* times the table was emptied: sequences clear again */
	struct rtr__pf_seq *seqs; /* a sequence per ring, by rtr__reader.fmt_word */
	size_t nseqs, seqs_cap;
	uint64_t writer_file;	      /* the file whose sequence 1 is cleared */
	struct rtr__pf_track *tracks; /* counter and async tracks: PF_TRACKS */
	size_t ntracks;
	uint64_t tracks_file;	    /* the file their descriptors are in */
	char *tmp;		    /* PF_TMP bytes of scratch */
	struct rtr__pf_span *spans; /* the span cache */
	/* Packing (packed.c): the chunk whose bytes [zmark, zend) are the format's own
	 * packets not packed yet, in a row; packer NULL when packets go plain. */
	struct rtr__pf_packer *packer;
	char *zbuf; /* a packed batch: rtr__pf_pack_bound(PF_ZBATCH_MAX) */
	const struct rtr__chunk *zchunk;
	size_t zmark, zend;
	int label_sort; /* the process's sort index, when set */
	int has_sort;
	char label[64];
};

static inline struct rtr__pf *pf_of(struct rtr__writer *w)
{
	return (struct rtr__pf *)w->fmt_state;
}

/* The interned data a packet carries: the strings its event is the first on its
 * sequence to use. */
struct pf_pending {
	const struct rtr__pf_slot *slot[PF_PENDING];
	unsigned n;
};

/* packed.c */

/* The most bytes of packets packed as one batch (a batch of a giant event beyond it
 * goes plain). */
#define PF_ZBATCH_MAX ((size_t)256 << 10)
/* Besides an event's own bound, what its packets may add: track descriptors. */
#define PF_ZBATCH_SLACK 4096

/* rtr__format.seal, and at a batch's end: the chunk's unpacked packets [zmark, zend)
 * packed in place (not across a flight chunk's prologue), when they are all the
 * format's own. */
void rtr__pf_seal(struct rtr__writer *w);

/* out_commit() for the format's packets: a batch runs on while they follow each
 * other in the chunk; anything else in between (the raw lines a snapshot copies, a
 * new chunk) begins the next. */
static inline char *pf_commit(struct rtr__writer *w, char *end, uint64_t events)
{
	struct rtr__pf *pf = pf_of(w);
	const struct rtr__chunk *c = w->out.chunk;

	if (RTR_UNLIKELY(c != pf->zchunk || c->len != pf->zend)) {
		pf->zchunk = c;
		pf->zmark = c->len;
	}
	char *p = out_commit(w, end, events);
	pf->zend = c->len;
	return p;
}

/* Before an event of at most `need` bytes: the batch packed first when the event
 * would take it past RTR__PF_BATCH_BYTES. */
static inline void pf_batch_room(struct rtr__writer *w, size_t need)
{
	struct rtr__pf *pf = pf_of(w);

	if (RTR_UNLIKELY(pf->zend - pf->zmark + need + PF_ZBATCH_SLACK > RTR__PF_BATCH_BYTES) &&
	    pf->zchunk == w->out.chunk)
		rtr__pf_seal(w);
}

/* intern.c */

/* Empty the table (at a ring's start, never inside a packet): every sequence is
 * cleared again before its next packet. */
void rtr__pf_intern_reset(struct rtr__pf *pf);
/* The slot of a string, added (bytes repaired and cut) if new; NULL when the table is
 * full: the caller writes the string inline. A len of RTR__PF_LEN_UNKNOWN: s is
 * NUL-terminated, measured when it is added. */
#define RTR__PF_LEN_UNKNOWN SIZE_MAX
struct rtr__pf_slot *rtr__pf_intern(struct rtr__pf *pf, uint32_t kind, uint64_t key, const char *s,
				    size_t len);
/* The packet's interned_data field, for what pend holds. */
char *rtr__pf_put_interned(struct rtr__pf *pf, char *p, const struct pf_pending *pend);

static inline bool sent_on(const struct rtr__pf_seq *seq, uint32_t iid)
{
	return (seq->sent[iid >> 6] >> (iid & 63)) & 1;
}

/* tracks.c */

static inline uint64_t process_uuid(uint32_t pid)
{
	return (uint64_t)pid << 32;
}

static inline uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static inline uint32_t own_pid(const struct rtr__writer *w)
{
	return (uint32_t)w->s.pid;
}

/* The sequence's header fields, at the end of a packet. */
static inline char *put_seq(char *p, uint32_t id, uint32_t flags)
{
	p = pb_uint(p, RTR__PF_PACKET_SEQUENCE_ID, id);
	return pb_uint(p, RTR__PF_PACKET_SEQUENCE_FLAGS, flags);
}

/* A TrackDescriptor packet on sequence `seq_id`; a counter track's (counter: 1, or
 * 2 for one counting bytes; cat its category, NULL for none) or another. */
char *rtr__pf_put_descriptor(char *p, uint32_t seq_id, uint32_t flags, uint64_t uuid,
			     uint64_t parent, const char *name, size_t name_len, int counter,
			     const char *cat);
/* The process's descriptor: name, label, sort index. */
char *rtr__pf_put_process(struct rtr__writer *w, char *p, uint32_t flags);
/* The writer's own sequence, 1: its flags, cleared at each file's start. */
uint32_t rtr__pf_writer_flags(struct rtr__writer *w);
/* r's sequence, made on first use; NULL without memory. */
struct rtr__pf_seq *rtr__pf_seq_of(struct rtr__writer *w, struct rtr__ring *r);
/* The thread's descriptor on sequence seq_id (its own, or the writer's 1), flags as
 * given: with the sequence's defaults when it clears its own. */
char *rtr__pf_put_thread(struct rtr__writer *w, char *p, const struct rtr__ring *r,
			 const struct rtr__pf_seq *seq, uint32_t seq_id, uint32_t flags, int first);
/* Clear seq's state in this file: its thread's descriptor, its defaults (the
 * file or the intern table changed). */
void rtr__pf_seq_clear(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq);

/* The ClockSnapshot that gives clock 64 its value on seq (once per file), at p. */
char *rtr__pf_put_delta_clock(char *p, struct rtr__pf_seq *seq, uint64_t ts);
/* The uuid of the counter track named name of category cat (declared on the writer's
 * sequence before its first use in the file, the category in its CounterDescriptor),
 * or 0 when the file has too many tracks. */
uint64_t rtr__pf_counter_track(struct rtr__writer *w, const char *name, size_t len, const char *cat,
			       int bytes);
/* The uuid of the async track of (cat, id), declared with the name of its first
 * event; 0 when the file has too many. */
uint64_t rtr__pf_async_track(struct rtr__writer *w, const char *cat, uint64_t id, const char *name,
			     size_t len);
/* The track of global instants (Perfetto's global scope: a track with no parent),
 * declared once per file. */
uint64_t rtr__pf_global_track(struct rtr__writer *w);
/* A lane k of track t: its pseudo-process and its own descriptor, once per file. */
uint64_t rtr__pf_lane_track(struct rtr__writer *w, struct rtr_track *t, unsigned k);

/* events.c */

/* What one TrackEvent packet says, besides its arguments. */
struct pf_te {
	uint32_t type;
	uint64_t ts;
	uint64_t track; /* 0: the sequence's default, its thread */
	const char *name;
	size_t name_len; /* with copied */
	int copied;
	const char *cat;
	uint64_t flow, end_flow; /* 0: none */
	int counter;		 /* 1 int counter_value, 2 double */
	uint64_t value;
	const char *extra; /* encoded annotations to add (an E's added arguments) */
	size_t extra_len;
	int absolute; /* timestamp on MONOTONIC, whatever the sequence's clock */
	int keep;     /* a folded span's BEGIN: its body goes to the span cache */
};

/* A TrackEvent packet at p on seq, args its arguments (NULL: none). */
char *rtr__pf_put_event(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
			const struct pf_te *e, const struct rtr__args *args);
/* The arguments of a as debug annotations, names inline: for lines kept for later. */
char *rtr__pf_put_annotations(struct rtr__writer *w, char *p, const struct rtr__args *a);
/* The most rtr__pf_put_annotations() writes for a. */
static inline size_t pf_args_bound(const struct rtr__args *a)
{
	/* an annotation's fixed part and strings; an i64 element is at most 14 bytes
	 * for every 8 recorded */
	return a->n > 0 ? (size_t)a->n * (64 + 3 * PF_STR_MAX) + 4 * (size_t)a->len : 0;
}
/* value.c: a VALUE argument's `len` bytes into the open annotation; writes at most 4
 * bytes for each (pf_args_bound()). */
char *rtr__pf_put_value(char *p, const char *bytes, size_t len);
/* A debug annotation `key: true` with an inline name (a cut's mark). */
char *rtr__pf_put_flag(char *p, const char *key);
uint64_t rtr__pf_events(struct rtr__writer *w, struct rtr__batch *b);
void rtr__pf_begin_ring(struct rtr__writer *w, struct rtr__ring *r);
void rtr__pf_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value);

/* file.c */
bool rtr__pf_cut(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev, int what,
		 size_t *budget);

#endif
