/* SPDX-License-Identifier: MIT */
/*
 * The perfetto encoder: records -> Perfetto TracePackets (TrackEvent protocol), the
 * encoding docs/perfetto.md describes. The drain, the framing and the cuts are the
 * JSON format's; only the bytes differ.
 *
 * Each thread has its own packet sequence, as in the Perfetto SDK: its first packet
 * in a file clears the sequence's state and sets its defaults (its track, clock 64),
 * so a span's packets carry only a timestamp delta, a type and two interned ids.
 * Interned strings are looked up by pointer in one table whose iids every sequence
 * shares; each sequence remembers which it has been sent (a bitmap), and a packet
 * carries the interned data its event is the first on its sequence to use. When the
 * table fills it is emptied at the next ring, and every sequence is cleared again.
 *
 * Messages are written with a one-byte length and moved up in the rare case the body
 * is 128 bytes or more (pb_close()), so a small packet costs what its fields do.
 */
#include "writer/json.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "producer/tracks.h"
#include "writer/slices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PF_SLOTS   ((size_t)1 << 16) /* interned strings; emptied at half */
#define PF_ARENA   ((size_t)8 << 20) /* their bytes; emptied at half */
#define PF_TRACKS  4096u	     /* counter and async tracks per file */
#define PF_STR_MAX 1024u	     /* a string is cut to this many bytes (UTF-8 kept whole) */
#define PF_BITMAP  (PF_SLOTS / 64)   /* words of a sequence's sent-iids bitmap */
#define PF_PENDING (4 + 3 * RTR_MAX_ARGS)
#define PF_TMP	   ((size_t)1 << 20) /* pf->tmp: a function's name, folded arguments, frames */
#define TMP_NAME   0
#define TMP_ARGS   ((size_t)64 << 10)

#define CLOCK_REALTIME_ID  1u
#define CLOCK_MONOTONIC_ID 3u
#define CLOCK_BOOTTIME_ID  6u
#define CLOCK_DELTA_ID	   64u /* sequence-scoped, incremental: MONOTONIC, delta-encoded */

#define SEQ_CLEARED 1u
#define SEQ_NEEDS   2u

enum { TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
/* what a string is interned as: InternedData's field for it */
enum { IN_CATEGORY = 1, IN_NAME = 2, IN_ARG_NAME = 3, IN_STRING = 29 };

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
	uint64_t file_id; /* the file its state was cleared in; 0: never */
	uint64_t epoch;	  /* the table's epoch then */
	uint64_t last_ts; /* clock 64's value */
	int has_clock;	  /* clock 64 has a value in this file */
	int sort_index;
	int has_sort;
	uint64_t sent[PF_BITMAP]; /* iids interned on this sequence */
};

/*
 * The common event's bytes, kept whole: a folded span's BEGIN TrackEvent (type,
 * category iid, name iid) depends only on its record's static name and category
 * and the table's iids, so it is kept direct-mapped by (name, cat) per table epoch,
 * like the JSON encoder's head cache; a hit whose iids the sequence has had is one
 * fixed-size copy in place of two lookups and the message's encoding.
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

/* ------------------------------------------------------------------------- */
/* Wire format                                                                */

static inline char *pb_varint(char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (char)v;
	return p;
}

#define WT_VARINT 0u
#define WT_I64	  1u
#define WT_LEN	  2u

static inline char *pb_tag(char *p, unsigned field, unsigned wt)
{
	return pb_varint(p, (uint64_t)field << 3 | wt);
}

static inline char *pb_uint(char *p, unsigned field, uint64_t v)
{
	return pb_varint(pb_tag(p, field, WT_VARINT), v);
}

static inline char *pb_fixed64(char *p, unsigned field, uint64_t v)
{
	p = pb_tag(p, field, WT_I64);
	memcpy(p, &v, sizeof(v)); /* little-endian, as the wire format */
	return p + sizeof(v);
}

static inline char *pb_bytes(char *p, unsigned field, const char *s, size_t len)
{
	p = pb_varint(pb_tag(p, field, WT_LEN), len);
	memcpy(p, s, len);
	return p + len;
}

/* A string field: the bytes repaired to UTF-8 (a protobuf string must be), cut. */
static char *pb_string(char *p, unsigned field, const char *s, size_t len)
{
	if (len > PF_STR_MAX)
		len = PF_STR_MAX;
	if (RTR_LIKELY(rtr__json_utf8_valid(s, len) == len))
		return pb_bytes(p, field, s, len);
	size_t bad = 0;
	char *len_at = pb_tag(p, field, WT_LEN);
	char *body = len_at + 2; /* PF_STR_MAX * 3 < 2^14: a two-byte length */
	char *end = rtr__json_utf8_repair(body, s, len, &bad);
	size_t n = (size_t)(end - body);
	len_at[0] = (char)(n | 0x80);
	len_at[1] = (char)(n >> 7);
	return end;
}

/* A message field: the tag and a one-byte length; pb_close() sets the length. */
static inline char *pb_open(char *p, unsigned field, char **len_at)
{
	p = pb_tag(p, field, WT_LEN);
	*len_at = p;
	return p + 1;
}

static inline char *pb_close(char *len_at, char *end)
{
	size_t len = (size_t)(end - (len_at + 1));

	if (RTR_LIKELY(len < 0x80)) {
		*len_at = (char)len;
		return end;
	}
	char tmp[10];
	size_t n = (size_t)(pb_varint(tmp, len) - tmp);
	memmove(len_at + n, len_at + 1, len);
	memcpy(len_at, tmp, n);
	return end + n - 1;
}

/* ------------------------------------------------------------------------- */
/* Interning                                                                  */

static size_t slot_of(uint64_t key, uint32_t kind)
{
	uint64_t x = (key ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 48) & (PF_SLOTS - 1);
}

/* Empty the table (at a ring's start, never inside a packet): every sequence is
 * cleared again before its next packet. */
static void intern_reset(struct rtr__pf *pf)
{
	memset(pf->slots, 0, PF_SLOTS * sizeof(*pf->slots));
	pf->nslots_used = 0;
	pf->arena_used = 0;
	pf->epoch++;
}

/* The slot of a string, added (bytes repaired and cut) if new; NULL when the table
 * is full: the caller writes the string inline. */
static struct rtr__pf_slot *intern(struct rtr__pf *pf, uint32_t kind, uint64_t key, const char *s,
				   size_t len)
{
	size_t i = slot_of(key, kind);

	for (;;) {
		struct rtr__pf_slot *sl = &pf->slots[i];
		if (RTR_LIKELY(sl->key == key && sl->kind == kind))
			return sl;
		if (sl->key == 0)
			break;
		i = (i + 1) & (PF_SLOTS - 1);
	}
	if (pf->nslots_used >= PF_SLOTS / 2 || pf->arena_used + 3 * PF_STR_MAX > PF_ARENA)
		return NULL;
	if (len > PF_STR_MAX)
		len = PF_STR_MAX;
	size_t bad = 0;
	char *start = pf->arena + pf->arena_used;
	char *end = rtr__json_utf8_repair(start, s, len, &bad);
	struct rtr__pf_slot *sl = &pf->slots[i];
	sl->key = key;
	sl->kind = kind;
	sl->iid = (uint32_t)++pf->nslots_used;
	sl->off = (uint32_t)pf->arena_used;
	sl->len = (uint32_t)(end - start);
	pf->arena_used += sl->len;
	return sl;
}

/* The interned data a packet carries: the strings its event is the first on its
 * sequence to use. */
struct pending {
	const struct rtr__pf_slot *slot[PF_PENDING];
	unsigned n;
};

/* The iid of a static string for seq, queued in pend when the sequence has not had
 * it; 0 when it cannot be interned (then written inline). */
static inline uint32_t iid_of(struct rtr__writer *w, struct rtr__pf_seq *seq, struct pending *pend,
			      uint32_t kind, uint64_t key, const char *s, size_t len)
{
	struct rtr__pf_slot *sl = intern(&w->pf, kind, key, s, len);

	if (RTR_UNLIKELY(sl == NULL || pend->n == PF_PENDING))
		return 0;
	uint64_t bit = (uint64_t)1 << (sl->iid & 63);
	if (RTR_UNLIKELY(!(seq->sent[sl->iid >> 6] & bit))) {
		seq->sent[sl->iid >> 6] |= bit;
		pend->slot[pend->n++] = sl;
	}
	return sl->iid;
}

static inline uint32_t iid_static(struct rtr__writer *w, struct rtr__pf_seq *seq,
				  struct pending *pend, uint32_t kind, const char *s)
{
	return iid_of(w, seq, pend, kind, (uintptr_t)s, s, strnlen(s, PF_STR_MAX));
}

/* The packet's interned_data field, for what pend holds. */
static char *put_interned(struct rtr__writer *w, char *p, const struct pending *pend)
{
	char *len_at, *entry;

	if (RTR_LIKELY(pend->n == 0))
		return p;
	p = pb_open(p, 12, &len_at);
	for (unsigned i = 0; i < pend->n; i++) {
		const struct rtr__pf_slot *sl = pend->slot[i];
		p = pb_open(p, sl->kind, &entry);
		p = pb_uint(p, 1, sl->iid);
		p = pb_bytes(p, 2, w->pf.arena + sl->off, sl->len);
		p = pb_close(entry, p);
	}
	return pb_close(len_at, p);
}

/* ------------------------------------------------------------------------- */
/* Tracks and sequences                                                       */

static inline uint64_t process_uuid(uint32_t pid)
{
	return (uint64_t)pid << 32;
}

static inline uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

#define COUNTER_TRACK 0x80000000u
#define ASYNC_TRACK   0x40000000u

/* Counter tracks of the writer's own: the events and the drops so far. */
enum { OWN_EVENTS, OWN_DROPPED, OWN_COUNT };

static uint32_t own_pid(const struct rtr__writer *w)
{
	return (uint32_t)w->s.pid;
}

/* The sequence's header fields, at the end of a packet. */
static inline char *put_seq(char *p, uint32_t id, uint32_t flags)
{
	p = pb_uint(p, 10, id);
	return pb_uint(p, 13, flags);
}

/* A packet: the tag and its length's byte; pkt_end() closes it. */
static inline char *pkt_begin(char *p, char **len_at)
{
	return pb_open(p, 1, len_at);
}

static inline char *pkt_end(char *len_at, char *p)
{
	return pb_close(len_at, p);
}

/* A TrackDescriptor packet on sequence `seq_id`; a counter track's (counter: 1, or
 * 2 for one counting bytes) or another. */
static char *put_descriptor(char *p, uint32_t seq_id, uint32_t flags, uint64_t uuid,
			    uint64_t parent, const char *name, size_t name_len, int counter)
{
	char *pkt, *d, *c;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, 60, &d);
	p = pb_uint(p, 1, uuid);
	if (parent != 0)
		p = pb_uint(p, 5, parent);
	if (name != NULL)
		p = pb_string(p, 2, name, name_len);
	if (counter) {
		p = pb_open(p, 8, &c);
		if (counter == 2)
			p = pb_uint(p, 3, 3); /* UNIT_SIZE_BYTES */
		p = pb_close(c, p);
	}
	p = pb_close(d, p);
	p = put_seq(p, seq_id, flags);
	return pkt_end(pkt, p);
}

/* The process's descriptor: name, label, sort index. */
static char *put_process(struct rtr__writer *w, char *p, uint32_t flags)
{
	char *pkt, *d, *proc;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, 60, &d);
	p = pb_uint(p, 1, process_uuid(own_pid(w)));
	p = pb_open(p, 3, &proc);
	p = pb_uint(p, 1, own_pid(w));
	p = pb_string(p, 6, w->s.process_name, strlen(w->s.process_name));
	if (w->pf.label[0] != '\0')
		p = pb_string(p, 8, w->pf.label, strlen(w->pf.label));
	if (w->pf.has_sort)
		p = pb_uint(p, 3, (uint64_t)(int64_t)w->pf.label_sort);
	p = pb_close(proc, p);
	p = pb_close(d, p);
	p = put_seq(p, 1, flags);
	return pkt_end(pkt, p);
}

/* Bytes a descriptor or marker packet takes at most besides its strings. */
#define PKT_FIXED 160

/* The writer's own sequence, 1: cleared at each file's start. */
static uint32_t writer_flags(struct rtr__writer *w)
{
	if (w->pf.writer_file == w->out.file_id)
		return SEQ_NEEDS;
	w->pf.writer_file = w->out.file_id;
	return SEQ_CLEARED;
}

static struct rtr__pf_seq *seq_of(struct rtr__writer *w, struct rtr__ring *r)
{
	struct rtr__reader *rd = rtr__reader_of(r);
	struct rtr__pf *pf = &w->pf;

	if (RTR_LIKELY(rd->fmt_seq != 0 && rd->fmt_seq <= pf->nseqs))
		return &pf->seqs[rd->fmt_seq - 1];
	if (pf->nseqs == pf->seqs_cap) {
		size_t cap = pf->seqs_cap ? 2 * pf->seqs_cap : 16;
		struct rtr__pf_seq *n = realloc(pf->seqs, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		pf->seqs = n;
		pf->seqs_cap = cap;
	}
	struct rtr__pf_seq *seq = &pf->seqs[pf->nseqs++];
	memset(seq, 0, sizeof(*seq));
	seq->id = (uint32_t)pf->nseqs + 1; /* 1 is the writer's */
	seq->tid = (uint32_t)r->tid;
	rd->fmt_seq = pf->nseqs;
	return seq;
}

/* The thread's descriptor on its sequence, flags as given. */
static char *put_thread(struct rtr__writer *w, char *p, const struct rtr__ring *r,
			const struct rtr__pf_seq *seq, uint32_t flags, int first)
{
	char *pkt, *d, *th, *def, *ted;
	uint32_t pid = own_pid(w);

	p = pkt_begin(p, &pkt);
	p = pb_open(p, 60, &d);
	p = pb_uint(p, 1, thread_uuid(pid, seq->tid));
	p = pb_uint(p, 5, process_uuid(pid));
	p = pb_open(p, 4, &th);
	p = pb_uint(p, 1, pid);
	p = pb_uint(p, 2, seq->tid);
	if (r->name[0] != '\0')
		p = pb_string(p, 5, r->name, strnlen(r->name, sizeof(r->name)));
	if (seq->has_sort)
		p = pb_uint(p, 3, (uint64_t)(int64_t)seq->sort_index);
	p = pb_close(th, p);
	p = pb_close(d, p);
	if (flags & SEQ_CLEARED) {
		p = pb_open(p, 59, &def);
		p = pb_uint(p, 58, CLOCK_DELTA_ID);
		p = pb_open(p, 11, &ted);
		p = pb_uint(p, 11, thread_uuid(pid, seq->tid));
		p = pb_close(ted, p);
		p = pb_close(def, p);
		if (first)
			p = pb_uint(p, 87, 1); /* first_packet_on_sequence */
	}
	p = put_seq(p, seq->id, flags);
	return pkt_end(pkt, p);
}

/* Make seq's state valid in this file before a packet of r's: clear it (its thread's
 * descriptor, its defaults) when the file or the intern table changed. */
static inline void seq_ready(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq)
{
	if (RTR_LIKELY(seq->file_id == w->out.file_id && seq->epoch == w->pf.epoch))
		return;
	int first = seq->file_id == 0;
	memset(seq->sent, 0, sizeof(seq->sent));
	seq->file_id = w->out.file_id;
	seq->epoch = w->pf.epoch;
	seq->has_clock = 0;
	char *p = out_reserve(w, PKT_FIXED + 3 * sizeof(r->name));
	p = put_thread(w, p, r, seq, SEQ_CLEARED, first);
	out_commit(w, p, 0);
}

/*
 * A packet's timestamp: a delta on clock 64 when it is not before the sequence's
 * last, else absolute on MONOTONIC. The first of a file sets clock 64 with a
 * ClockSnapshot packet of its own (written at p, before the event's packet: the
 * caller's packet begins after it).
 */
static inline char *put_ts(char *p, struct rtr__pf_seq *seq, uint64_t ts)
{
	if (RTR_LIKELY(seq->has_clock && ts >= seq->last_ts)) {
		p = pb_uint(p, 8, ts - seq->last_ts);
		seq->last_ts = ts;
		return p;
	}
	p = pb_uint(p, 8, ts);
	return pb_uint(p, 58, CLOCK_MONOTONIC_ID);
}

/* The ClockSnapshot that gives clock 64 its value on seq (once per file), at p. */
static char *put_delta_clock(char *p, struct rtr__pf_seq *seq, uint64_t ts)
{
	char *pkt, *cs, *c;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, 6, &cs);
	p = pb_open(p, 1, &c);
	p = pb_uint(p, 1, CLOCK_MONOTONIC_ID);
	p = pb_uint(p, 2, ts);
	p = pb_close(c, p);
	p = pb_open(p, 1, &c);
	p = pb_uint(p, 1, CLOCK_DELTA_ID);
	p = pb_uint(p, 2, ts);
	p = pb_uint(p, 3, 1);
	p = pb_close(c, p);
	p = pb_close(cs, p);
	p = put_seq(p, seq->id, SEQ_NEEDS);
	seq->has_clock = 1;
	seq->last_ts = ts;
	return pkt_end(pkt, p);
}

static struct rtr__pf_track *track_slot(struct rtr__writer *w, uint64_t key, uint32_t *index)
{
	struct rtr__pf *pf = &w->pf;

	if (pf->tracks_file != w->out.file_id) {
		memset(pf->tracks, 0, PF_TRACKS * sizeof(*pf->tracks));
		pf->ntracks = 0;
		pf->tracks_file = w->out.file_id;
	}
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (PF_TRACKS - 1);
	for (size_t probes = 0; probes < PF_TRACKS; probes++, i = (i + 1) & (PF_TRACKS - 1)) {
		struct rtr__pf_track *t = &pf->tracks[i];
		if (t->key == key) {
			*index = (uint32_t)i;
			return t;
		}
		if (t->key == 0) {
			if (pf->ntracks >= PF_TRACKS / 2)
				break;
			pf->ntracks++;
			t->key = key;
			*index = (uint32_t)i;
			return t;
		}
	}
	return NULL;
}

/* FNV-1a: a counter's track is its name's, whether static or copied. */
static uint64_t name_hash(const char *s, size_t len, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h | 1; /* never 0, the empty slot */
}

/* The uuid of the counter track named name (declared on the writer's sequence before
 * its first use in the file), or 0 when the file has too many tracks. */
static uint64_t counter_track(struct rtr__writer *w, const char *name, size_t len, int bytes)
{
	uint32_t index;
	struct rtr__pf_track *t = track_slot(w, name_hash(name, len, 'C'), &index);

	if (t == NULL)
		return 0;
	uint64_t uuid = process_uuid(own_pid(w)) | COUNTER_TRACK | (OWN_COUNT + index);
	if (!t->declared) {
		char *p = out_reserve(w, PKT_FIXED + 3 * PF_STR_MAX);
		p = put_descriptor(p, 1, writer_flags(w), uuid, process_uuid(own_pid(w)), name, len,
				   bytes ? 2 : 1);
		out_commit(w, p, 0);
		t->declared = 1;
	}
	return uuid;
}

/* The uuid of the async track of (cat, id), declared with the name of its first
 * event; 0 when the file has too many. */
static uint64_t async_track(struct rtr__writer *w, uint64_t cat, uint64_t id, const char *name,
			    size_t len)
{
	uint32_t index;
	struct rtr__pf_track *t =
		track_slot(w, (cat * 0x9e3779b97f4a7c15ull ^ id) | 1u << 1 | 1u, &index);

	if (t == NULL)
		return 0;
	uint64_t uuid = process_uuid(own_pid(w)) | ASYNC_TRACK | index;
	if (!t->declared) {
		char *p = out_reserve(w, PKT_FIXED + 3 * PF_STR_MAX);
		p = put_descriptor(p, 1, writer_flags(w), uuid, process_uuid(own_pid(w)), name, len,
				   0);
		out_commit(w, p, 0);
		t->declared = 1;
	}
	return uuid;
}

/* A lane k of track t: its pseudo-process and its own descriptor, once per file. */
static uint64_t lane_track(struct rtr__writer *w, struct rtr_track *t, unsigned k)
{
	const struct rtr__pseudo_process *pp = rtr__track_process(t);
	uint64_t uuid = thread_uuid(pp->pid, t->tid + k);

	if (rtr__track_process_claim(t, w->out.file_id)) {
		char *pkt, *d, *proc;
		char *p = out_reserve(w, PKT_FIXED + 6 * RTR_NAME_MAX);
		p = pkt_begin(p, &pkt);
		p = pb_open(p, 60, &d);
		p = pb_uint(p, 1, process_uuid(pp->pid));
		p = pb_open(p, 3, &proc);
		p = pb_uint(p, 1, pp->pid);
		p = pb_string(p, 6, pp->name, strnlen(pp->name, sizeof(pp->name)));
		if (pp->label[0] != '\0')
			p = pb_string(p, 8, pp->label, strnlen(pp->label, sizeof(pp->label)));
		if (pp->sort_index != 0)
			p = pb_uint(p, 3, (uint64_t)(int64_t)pp->sort_index);
		p = pb_close(proc, p);
		p = pb_close(d, p);
		p = put_seq(p, 1, writer_flags(w));
		p = pkt_end(pkt, p);
		out_commit(w, p, 0);
	}
	if (rtr__lane_claim_name(t, k, w->out.file_id)) {
		char name[RTR_NAME_MAX + 16];
		size_t len = rtr__lane_name(t, k, name, sizeof(name));
		char *p = out_reserve(w, PKT_FIXED + 3 * sizeof(name));
		p = put_descriptor(p, 1, writer_flags(w), uuid, process_uuid(pp->pid), name, len,
				   0);
		out_commit(w, p, 0);
	}
	return uuid;
}

/* ------------------------------------------------------------------------- */
/* Debug annotations                                                          */

/* An annotation's name: interned, or inline (cut state, a full table). */
static char *put_ann_name(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
			  struct pending *pend, const char *key)
{
	if (key == NULL)
		key = "";
	uint32_t iid = pend != NULL ? iid_static(w, seq, pend, IN_ARG_NAME, key) : 0;

	if (iid != 0)
		return pb_uint(p, 1, iid);
	return pb_string(p, 10, key, strnlen(key, PF_STR_MAX));
}

static char *put_i64_array(char *p, const char *src, uint64_t n)
{
	char *e;

	for (uint64_t k = 0; k < n; k++) {
		p = pb_open(p, 12, &e);
		p = pb_uint(p, 4, (uint64_t)rtr__rec_i64(src + k * sizeof(int64_t)));
		p = pb_close(e, p);
	}
	return p;
}

/* Most bytes one annotation takes. */
#define ANN_BOUND (64 + 3 * PF_STR_MAX)

static inline size_t args_bound(const struct rtr__rec *rec)
{
	/* arrays: each i64 element is at most 14 bytes for every 8 recorded */
	return rec->nargs ? (size_t)rec->nargs * ANN_BOUND + 4 * (size_t)rec->ext : 0;
}

/*
 * rec's arguments as debug_annotations (field 4 of TrackEvent). Names interned on
 * seq through pend, or inline when pend is NULL (kept for a later file). Static
 * string values are interned too when pend is given.
 */
static char *put_annotations(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
			     struct pending *pend, const struct rtr__rec *rec,
			     const struct rtr__rec_view *v)
{
	const char *str = v->strings;

	for (unsigned i = 0; i < rec->nargs; i++) {
		uint64_t key, val = rtr__rec_arg(v, i, &key);
		char *a, *e;
		p = pb_open(p, 4, &a);
		p = put_ann_name(w, p, seq, pend, (const char *)(uintptr_t)key);
		switch (v->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = pb_uint(p, 4, val);
			break;
		case RTR_ARG_TYPE_U64:
			p = pb_uint(p, 3, val);
			break;
		case RTR_ARG_TYPE_F64:
			p = pb_fixed64(p, 5, val);
			break;
		case RTR_ARG_TYPE_BOOL:
			p = pb_uint(p, 2, val != 0);
			break;
		case RTR_ARG_TYPE_STR: {
			if (val == 0)
				break; /* NULL: no value */
			const char *s = (const char *)(uintptr_t)val;
			uint32_t iid = pend != NULL ? iid_static(w, seq, pend, IN_STRING, s) : 0;
			p = iid != 0 ? pb_uint(p, 17, iid)
				     : pb_string(p, 6, s, strnlen(s, PF_STR_MAX));
			break;
		}
		case RTR_ARG_TYPE_STR_COPY:
			if (val == UINT64_MAX)
				break;
			p = pb_string(p, 6, str, val);
			str += val;
			break;
		case RTR_ARG_TYPE_I64_ARRAY:
			p = put_i64_array(p, str, val);
			str += val * sizeof(int64_t);
			break;
		case RTR_ARG_TYPE_I64_LISTS: {
			const char *vals = str + val * sizeof(uint32_t);
			for (uint64_t k = 0; k < val; k++) {
				uint32_t len = rtr__rec_u32(str + k * sizeof(uint32_t));
				p = pb_open(p, 12, &e);
				p = put_i64_array(p, vals, len);
				p = pb_close(e, p);
				vals += (size_t)len * sizeof(int64_t);
			}
			str = vals;
			break;
		}
		case RTR_ARG_TYPE_STR_ARRAY:
			for (uint64_t k = 0; k < val; k++) {
				uint32_t len = rtr__rec_u32(str);
				str += sizeof(len);
				p = pb_open(p, 12, &e);
				if (len != UINT32_MAX) {
					p = pb_string(p, 6, str, len);
					str += len;
				}
				p = pb_close(e, p);
			}
			break;
		default:
			break;
		}
		p = pb_close(a, p);
	}
	return p;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

/* The event's name and category fields. */
static inline char *put_name_cat(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
				 struct pending *pend, const char *name, size_t copy_len,
				 int copied, const char *cat)
{
	if (cat != NULL) {
		uint32_t iid = iid_static(w, seq, pend, IN_CATEGORY, cat);
		p = iid != 0 ? pb_uint(p, 3, iid) : pb_string(p, 22, cat, strnlen(cat, PF_STR_MAX));
	}
	if (copied)
		return pb_string(p, 23, name, copy_len);
	if (name != NULL) {
		uint32_t iid = iid_static(w, seq, pend, IN_NAME, name);
		p = iid != 0 ? pb_uint(p, 10, iid)
			     : pb_string(p, 23, name, strnlen(name, PF_STR_MAX));
	}
	return p;
}

/* What one TrackEvent packet says, besides its arguments. */
struct te {
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
	int absolute;		     /* timestamp on MONOTONIC, whatever the sequence's clock */
	const struct rtr__rec *keep; /* a folded span's B: its body goes to the span cache */
};

static void keep_span(struct rtr__writer *w, const struct rtr__rec *rec, const char *body,
		      size_t len);

/* A TrackEvent packet at p on seq; rec/v give the arguments (rec NULL: none). */
static char *put_event(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq, const struct te *e,
		       const struct rtr__rec *rec, const struct rtr__rec_view *v)
{
	struct pending pend;
	char *pkt, *te;

	pend.n = 0;
	if (RTR_UNLIKELY(!seq->has_clock) && !e->absolute)
		p = put_delta_clock(p, seq, e->ts);
	p = pkt_begin(p, &pkt);
	if (e->absolute) {
		p = pb_uint(p, 8, e->ts);
		p = pb_uint(p, 58, CLOCK_MONOTONIC_ID);
	} else {
		p = put_ts(p, seq, e->ts);
	}
	p = pb_open(p, 11, &te);
	p = pb_uint(p, 9, e->type);
	if (e->track != 0)
		p = pb_uint(p, 11, e->track);
	if (e->type != TYPE_END && e->type != TYPE_COUNTER)
		p = put_name_cat(w, p, seq, &pend, e->name, e->name_len, e->copied, e->cat);
	if (e->counter == 1)
		p = pb_uint(p, 30, e->value);
	else if (e->counter == 2)
		p = pb_fixed64(p, 44, e->value);
	if (e->flow != 0)
		p = pb_fixed64(p, 47, e->flow);
	if (e->end_flow != 0)
		p = pb_fixed64(p, 48, e->end_flow);
	if (rec != NULL && rec->nargs > 0)
		p = put_annotations(w, p, seq, &pend, rec, v);
	if (e->extra_len > 0) {
		memmove(p, e->extra, e->extra_len); /* a cut's may lie ahead in the chunk */
		p += e->extra_len;
	}
	p = pb_close(te, p);
	if (e->keep != NULL)
		keep_span(w, e->keep, te - 1, (size_t)(p - (te - 1)));
	p = put_interned(w, p, &pend);
	p = put_seq(p, seq->id, SEQ_NEEDS);
	return pkt_end(pkt, p);
}

/* A debug annotation `key: true` with an inline name (a cut's mark). */
static char *put_flag_annotation(char *p, const char *key)
{
	char *a;

	p = pb_open(p, 4, &a);
	p = pb_string(p, 10, key, strlen(key));
	p = pb_uint(p, 2, 1);
	return pb_close(a, p);
}

/* The most an event's packets take: two packets, a clock snapshot, the arguments. */
static inline size_t event_bound(const struct rtr__rec *rec)
{
	return 2 * PKT_FIXED + 6 * PF_STR_MAX + args_bound(rec);
}

static inline uint64_t ts_of(struct rtr__writer *w, const struct rtr__rec *rec)
{
	return rec->flags & RTR__F_TS_NS ? rec->ts : rtr__writer_ticks_ns(w, rec->ts);
}

/* Name a thread anew (rtr_thread_name()): its descriptor again, with the name. */
static void rename_thread(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			  const char *name, size_t len, uint64_t events)
{
	rtr__ring_rename(r, name, len);
	char *p = out_reserve(w, PKT_FIXED + 3 * sizeof(r->name));
	p = put_thread(w, p, r, seq, SEQ_NEEDS, 0);
	out_commit(w, p, events);
}

static bool encode_meta(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			const struct rtr__rec *rec, const struct rtr__rec_view *v)
{
	char *p;

	switch (rec->a) {
	case RTR__META_PROCESS_LABEL: {
		if (v->name == NULL)
			return false;
		size_t n = v->name_len < sizeof(w->pf.label) - 1 ? v->name_len
								 : sizeof(w->pf.label) - 1;
		memcpy(w->pf.label, v->name, n);
		w->pf.label[n] = '\0';
		break;
	}
	case RTR__META_PROCESS_SORT:
		w->pf.label_sort = (int)(int64_t)v->word;
		w->pf.has_sort = 1;
		break;
	case RTR__META_THREAD_SORT:
		seq->sort_index = (int)(int64_t)v->word;
		seq->has_sort = 1;
		p = out_reserve(w, PKT_FIXED + 3 * sizeof(r->name));
		p = put_thread(w, p, r, seq, SEQ_NEEDS, 0);
		out_commit(w, p, 1);
		return true;
	default:
		return false;
	}
	p = out_reserve(w, PKT_FIXED + 6 * sizeof(w->pf.label) + 3 * sizeof(w->s.process_name));
	p = put_process(w, p, writer_flags(w));
	out_commit(w, p, 1);
	return true;
}

/* A memory event: an instant on the thread, and the device's bytes in use. */
static void encode_mem(struct rtr__writer *w, struct rtr__pf_seq *seq, const struct rtr__rec *rec,
		       uint64_t ts, int64_t device)
{
	uint64_t bytes = rec->b, in_use;
	char name[32], *a;

	if (rec->kind == RTR__K_MEM_ALLOC)
		in_use = rtr__memstack_alloc(&w->json.mem, device, rec->a, bytes);
	else
		in_use = rtr__memstack_free(&w->json.mem, device, rec->a, &bytes);
	size_t len =
		device == RTR_MEM_HOST
			? (size_t)(PUT_LIT(name, "memory host") - name)
			: (size_t)(rtr__json_i64(PUT_LIT(name, "memory device "), device) - name);
	uint64_t track = counter_track(w, name, len, 1);

	char extra[512], *q = extra;
	q = pb_open(q, 4, &a);
	q = pb_string(q, 10, "addr", 4);
	q = pb_uint(q, 7, rec->a); /* pointer_value */
	q = pb_close(a, q);
	q = pb_open(q, 4, &a);
	q = pb_string(q, 10, "bytes", 5);
	q = pb_uint(q, 3, bytes);
	q = pb_close(a, q);
	q = pb_open(q, 4, &a);
	q = pb_string(q, 10, "device", 6);
	q = pb_uint(q, 4, (uint64_t)device);
	q = pb_close(a, q);

	struct te e = {.type = TYPE_INSTANT,
		       .ts = ts,
		       .name = rec->kind == RTR__K_MEM_ALLOC ? "alloc" : "free",
		       .cat = "memory",
		       .extra = extra,
		       .extra_len = (size_t)(q - extra)};
	char *p = out_reserve(w, 4 * PKT_FIXED + 6 * PF_STR_MAX);
	p = put_event(w, p, seq, &e, NULL, NULL);
	if (track != 0) {
		struct te c = {.type = TYPE_COUNTER,
			       .ts = ts,
			       .track = track,
			       .counter = 1,
			       .value = in_use};
		p = put_event(w, p, seq, &c, NULL, NULL);
	}
	out_commit(w, p, 1);
}

/* JSON-escaped text (a symbol from the memory table) back to its bytes. */
static size_t unescape(char *out, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < len) {
			char e = s[++i];
			if (e == 'u' && i + 4 < len) {
				unsigned x = (unsigned)strtoul(
					(char[5]){s[i + 1], s[i + 2], s[i + 3], s[i + 4], 0}, NULL,
					16);
				c = (char)(x < 0x80 ? x : '?');
				i += 4;
			} else {
				c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
			}
		}
		out[n++] = c;
	}
	return n;
}

/* A stack sample: an instant whose annotation "stack" lists the frames' names. */
static void encode_stack(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			 const struct rtr__rec *rec, uint32_t pos, uint64_t ts)
{
	size_t n = rec->ext / sizeof(uint64_t);
	const char *frames = NULL;
	char *a, *e;

	if (n > RTR_MAX_FRAMES)
		n = RTR_MAX_FRAMES;
	if (n > 0)
		frames = rtr__ring_ext(r, pos, n * sizeof(uint64_t), w->json.scratch);
	char *extra = w->pf.tmp + TMP_ARGS, *q = extra;
	{
		q = pb_open(q, 4, &a);
		q = pb_string(q, 10, "stack", 5);
		for (size_t k = 0; k < n; k++) {
			uint64_t addr;
			size_t len;
			char text[RTR_SYM_MAX_ESCAPED];
			memcpy(&addr, frames + k * sizeof(addr), sizeof(addr));
			const char *sym = rtr__memstack_symbol(&w->json.mem, addr, &len);
			len = unescape(text, sym, len);
			q = pb_open(q, 12, &e);
			q = pb_string(q, 6, text, len);
			q = pb_close(e, q);
		}
		q = pb_close(a, q);
	}
	struct te ev = {.type = TYPE_INSTANT,
			.ts = ts,
			.name = rec->a != 0 ? (const char *)(uintptr_t)rec->a : "stack sample",
			.cat = (const char *)(uintptr_t)rec->b,
			.extra = extra,
			.extra_len = (size_t)(q - extra)};
	char *p = out_reserve(w, 2 * PKT_FIXED + 6 * PF_STR_MAX + ev.extra_len);
	p = put_event(w, p, seq, &ev, NULL, NULL);
	out_commit(w, p, 1);
}

/* A B was written on r's thread without its E: it is open there (for the E's added
 * arguments and the cuts). */
static void slice_opened(struct rtr__ring *r, const struct rtr__rec *rec,
			 const struct rtr__rec_view *v)
{
	struct rtr__reader *rd = rtr__reader_of(r);

	if (rd->slices == NULL && (rd->slices = rtr__slices_new()) == NULL)
		return;
	int copied = (rec->flags & RTR__F_NAME_COPY) != 0;
	rtr__slices_push(rd->slices, rec->a, rec->b, copied ? v->name : NULL,
			 copied ? v->name_len : 0);
}

/*
 * Encode the event at record index pos of r (end: the E folded with it, and `args`
 * argument events between them). False, having written nothing, when it does not
 * decode.
 */
static bool encode_event(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			 const struct rtr__rec *rec, uint32_t pos, const struct rtr__rec *end,
			 uint32_t args)
{
	struct rtr__rec_view v;

	if (rec->ext == 0) {
		memset(&v, 0, sizeof(v));
	} else if (rtr__rec_one_word(rec)) {
		memset(&v, 0, sizeof(v));
		v.word = rtr__ring_rec(r, pos + 1)->ts;
	} else if (rtr__kind_frames(rec->kind)) {
		memset(&v, 0, sizeof(v));
		if (!rtr__rec_frames_ok(rec))
			return false;
	} else if (!rtr__rec_decode(rec, rtr__ring_ext(r, pos, rec->ext, w->json.scratch), &v)) {
		return false;
	}
	if (RTR_UNLIKELY((rec->flags & RTR__F_NAME_COPY) && v.name == NULL))
		return false;

	struct rtr__reader *rd = rtr__reader_of(r);
	struct te e;
	memset(&e, 0, sizeof(e));
	e.copied = (rec->flags & RTR__F_NAME_COPY) != 0;
	e.name = e.copied ? v.name : (const char *)(uintptr_t)rec->a;
	e.name_len = v.name_len;
	e.cat = (const char *)(uintptr_t)rec->b;
	e.ts = ts_of(w, rec);

	switch (rec->kind) {
	case RTR__K_THREAD_NAME:
		if (v.name == NULL)
			return false;
		rename_thread(w, r, seq, v.name, v.name_len, 1);
		return true;
	case RTR__K_META:
		return encode_meta(w, r, seq, rec, &v);
	case RTR__K_MEM_ALLOC:
	case RTR__K_MEM_FREE:
		encode_mem(w, seq, rec, e.ts, (int64_t)v.word);
		return true;
	case RTR__K_STACK:
		encode_stack(w, r, seq, rec, pos, e.ts);
		return true;
	case RTR__K_SLICE_ARG: {
		/* for the open slice's E: kept with inline names (it may be written in the
		 * next file, after a cut) */
		char *p = out_reserve(w, args_bound(rec));
		char *q = put_annotations(w, p, seq, NULL, rec, &v);
		if (rd->slices == NULL || !rtr__slices_add_raw(rd->slices, p, (size_t)(q - p)))
			rd->args_lost++;
		out_commit(w, p, 1);
		return true;
	}
	default:
		break;
	}

	/* a track lane's event: absolute time on the lane's track */
	uint64_t host_end = 0;
	if (RTR_UNLIKELY(rec->flags & RTR__F_TRACK)) {
		struct rtr_track *t = (struct rtr_track *)(uintptr_t)v.track;
		uint64_t host = rtr__track_host_ns(t, rec->ts);
		unsigned k;
		if (rec->kind == RTR__K_COMPLETE) {
			host_end = host + v.word >= host ? host + v.word : UINT64_MAX;
			k = rtr__lane_place(t, w->drain.session_id, host, host_end);
		} else {
			k = rtr__lane_at(t, host);
		}
		e.track = lane_track(w, t, k);
		e.ts = host;
		e.absolute = 1;
	}

	/* the folded arguments' bound */
	uint32_t args_from = pos + rtr__rec_records(rec->ext);
	size_t bound = event_bound(rec);
	for (uint32_t i = 0, at = args_from; i < args; i++) {
		bound += args_bound(rtr__ring_rec(r, at));
		at += rtr__rec_records(rtr__ring_rec(r, at)->ext);
	}
	const char *added = NULL;
	size_t added_len = 0;
	if (rec->kind == RTR__K_END && end == NULL)
		added = rtr__slices_args(rd->slices, &added_len);
	bound += added_len;
	char *p = out_reserve(w, bound);
	uint64_t events = 1;

	switch (rec->kind) {
	case RTR__K_BEGIN:
	case RTR__K_SCOPE:
	case RTR__K_COMPLETE: {
		uint64_t end_ts;
		if (rec->kind == RTR__K_SCOPE) {
			const struct rtr_site *site = (const struct rtr_site *)(uintptr_t)rec->a;
			if (rec->flags & RTR__F_CODE_ADDR) {
				size_t len;
				const char *fn = rtr__memstack_function(&w->json.mem, rec->a, &len);
				char *buf = w->pf.tmp + TMP_NAME;
				e.name_len = unescape(buf, fn, len);
				e.name = buf;
				e.copied = 1;
				e.cat = "function";
			} else {
				e.name = site->name;
				e.cat = site->cat;
			}
			end_ts = rtr__writer_ticks_ns(w, rec->ts + rec->b);
		} else if (rec->kind == RTR__K_COMPLETE) {
			end_ts = host_end != 0 ? host_end : e.ts + v.word;
		} else if (end != NULL) {
			end_ts = ts_of(w, end);
		} else {
			e.type = TYPE_BEGIN;
			p = put_event(w, p, seq, &e, rec, &v);
			slice_opened(r, rec, &v);
			break;
		}
		e.type = TYPE_BEGIN;
		if (end != NULL && args == 0 && rec->ext == 0 && rec->flags == 0)
			e.keep = rec;
		p = put_event(w, p, seq, &e, rec, &v);
		struct te x = {
			.type = TYPE_END, .ts = end_ts, .track = e.track, .absolute = e.absolute};
		if (args > 0) {
			/* the folded rtr_scope_arg_* arguments go on the END */
			char *a0 = w->pf.tmp + TMP_ARGS, *q = a0;
			for (uint32_t i = 0, at = args_from; i < args; i++) {
				const struct rtr__rec *arg = rtr__ring_rec(r, at);
				struct rtr__rec_view av;
				if (!rtr__rec_decode(
					    arg, rtr__ring_ext(r, at, arg->ext, w->json.scratch),
					    &av))
					return false; /* nothing committed */
				q = put_annotations(w, q, seq, NULL, arg, &av);
				at += rtr__rec_records(arg->ext);
			}
			x.extra = a0;
			x.extra_len = (size_t)(q - a0);
		}
		p = put_event(w, p, seq, &x, NULL, NULL);
		events = end != NULL ? 2 + args : 1;
		break;
	}
	case RTR__K_END:
		e.type = TYPE_END;
		e.extra = added;
		e.extra_len = added_len;
		p = put_event(w, p, seq, &e, NULL, NULL);
		if (rd->slices != NULL)
			rtr__slices_pop(rd->slices);
		break;
	case RTR__K_INSTANT:
		e.type = TYPE_INSTANT;
		if (rec->flags & (RTR__F_SCOPE_PROCESS | RTR__F_SCOPE_GLOBAL))
			e.track = process_uuid(own_pid(w));
		p = put_event(w, p, seq, &e, rec, &v);
		break;
	case RTR__K_COUNTER_I64:
	case RTR__K_COUNTER_F64: {
		size_t len = e.copied ? e.name_len : e.name ? strnlen(e.name, PF_STR_MAX) : 0;
		e.track = counter_track(w, e.name ? e.name : "", len, 0);
		p = out_reserve(w, bound); /* the descriptor may have gone before */
		if (e.track == 0)
			break;
		e.type = TYPE_COUNTER;
		e.counter = rec->kind == RTR__K_COUNTER_I64 ? 1 : 2;
		e.value = v.word;
		p = put_event(w, p, seq, &e, NULL, NULL);
		break;
	}
	case RTR__K_COUNTERS:
		/* a counter track per series, "name key" */
		for (unsigned i = 0; i < rec->nargs; i++) {
			uint64_t key, val = rtr__rec_arg(&v, i, &key);
			const char *k = key ? (const char *)(uintptr_t)key : "";
			char name[2 * PF_STR_MAX + 2];
			size_t nl = e.copied ? e.name_len
				    : e.name ? strnlen(e.name, PF_STR_MAX)
					     : 0;
			size_t kl = strnlen(k, PF_STR_MAX);
			memcpy(name, e.name ? e.name : "", nl);
			name[nl] = ' ';
			memcpy(name + nl + 1, k, kl);
			out_commit(w, p, 0); /* the series before: descriptors may follow */
			uint64_t track = counter_track(w, name, nl + 1 + kl, 0);
			p = out_reserve(w, bound);
			if (track == 0)
				continue;
			struct te c = {.type = TYPE_COUNTER, .ts = e.ts, .track = track};
			uint8_t type = v.types[i];
			c.counter = type == RTR_ARG_TYPE_F64 ? 2 : 1;
			c.value = type == RTR_ARG_TYPE_BOOL ? val != 0 : val;
			p = put_event(w, p, seq, &c, NULL, NULL);
		}
		out_commit(w, p, 1);
		return true;
	case RTR__K_FLOW_START:
	case RTR__K_FLOW_STEP:
	case RTR__K_FLOW_END:
		e.type = TYPE_INSTANT;
		if (rec->kind == RTR__K_FLOW_END)
			e.end_flow = v.word;
		else
			e.flow = v.word;
		p = put_event(w, p, seq, &e, rec, &v);
		break;
	case RTR__K_ASYNC_BEGIN:
	case RTR__K_ASYNC_INSTANT:
	case RTR__K_ASYNC_END: {
		size_t len = e.copied ? e.name_len : e.name ? strnlen(e.name, PF_STR_MAX) : 0;
		uint64_t track = async_track(w, rec->b, v.word, e.name ? e.name : "", len);
		p = out_reserve(w, bound);
		e.track = track != 0 ? track : process_uuid(own_pid(w));
		e.type = rec->kind == RTR__K_ASYNC_BEGIN ? TYPE_BEGIN
			 : rec->kind == RTR__K_ASYNC_END ? TYPE_END
							 : TYPE_INSTANT;
		p = put_event(w, p, seq, &e, rec, &v);
		/* kept for a cut to end and begin again (pf_cut_async()) */
		if (rec->kind == RTR__K_ASYNC_BEGIN)
			rtr__async_open_add(&w->json.async, rec->b, v.word, e.name ? e.name : "",
					    len, "", 0, NULL, 0);
		else if (rec->kind == RTR__K_ASYNC_END)
			rtr__async_open_end(&w->json.async, rec->b, v.word);
		break;
	}
	default:
		return false;
	}
	out_commit(w, p, events);
	return true;
}

static inline bool sent_on(const struct rtr__pf_seq *seq, uint32_t iid)
{
	return (seq->sent[iid >> 6] >> (iid & 63)) & 1;
}

/* A folded span with a static name and no arguments, on its thread's clock, whose
 * iids the sequence has had: its two packets from the span cache. False, having
 * written nothing, for any other (encode_event() then writes it). */
static inline bool put_plain_span(struct rtr__writer *w, struct rtr__pf_seq *seq,
				  const struct rtr__rec *rec, const struct rtr__rec *end)
{
	if (rec->kind != RTR__K_BEGIN || rec->ext != 0 || rec->flags != 0 || seq->id >= 0x80 ||
	    !seq->has_clock)
		return false;
	uint64_t ts = rtr__writer_ticks_ns(w, rec->ts), end_ts = rtr__writer_ticks_ns(w, end->ts);
	if (RTR_UNLIKELY(ts < seq->last_ts || end_ts < ts))
		return false;
	uint64_t x = (rec->a ^ (rec->b * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull;
	struct rtr__pf_span *c = &w->pf.spans[x >> (64 - SPAN_BITS)];
	if (RTR_UNLIKELY(c->a != rec->a || c->b != rec->b || c->epoch != w->pf.epoch ||
			 !sent_on(seq, c->cat_iid) || !sent_on(seq, c->name_iid)))
		return false;

	char *p = out_reserve(w, 64), *pkt;
	p = pkt_begin(p, &pkt);
	p = pb_uint(p, 8, ts - seq->last_ts);
	memcpy(p, c->bytes, sizeof(c->bytes));
	p += c->len;
	const char tail[4] = {0x50, (char)seq->id, 0x68, SEQ_NEEDS};
	memcpy(p, tail, sizeof(tail));
	p = pkt_end(pkt, p + sizeof(tail));
	p = pkt_begin(p, &pkt);
	p = pb_uint(p, 8, end_ts - ts);
	const char end_body[4] = {0x5a, 2, 0x48, TYPE_END};
	memcpy(p, end_body, sizeof(end_body));
	memcpy(p + sizeof(end_body), tail, sizeof(tail));
	p = pkt_end(pkt, p + sizeof(end_body) + sizeof(tail));
	seq->last_ts = end_ts;
	out_commit(w, p, 2);
	return true;
}

/* Keep a folded span's BEGIN body (written by put_event() from `body`) for
 * put_plain_span(). */
static void keep_span(struct rtr__writer *w, const struct rtr__rec *rec, const char *body,
		      size_t len)
{
	const char *q = body + 2, *e = body + len; /* past the tag and the length */
	uint32_t cat = 0, name = 0;

	if (len > sizeof(((struct rtr__pf_span *)0)->bytes) || (unsigned char)body[1] != len - 2)
		return;
	while (q < e) { /* its fields: varints only (type 9, category 3, name 10) */
		unsigned tag = (unsigned char)*q++;
		uint64_t v = 0;
		for (int shift = 0; q < e; shift += 7) {
			unsigned char b = (unsigned char)*q++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		if ((tag & 7) != WT_VARINT)
			return;
		if (tag >> 3 == 3)
			cat = (uint32_t)v;
		else if (tag >> 3 == 10)
			name = (uint32_t)v;
	}
	if (cat == 0 || name == 0)
		return; /* inline strings: not kept */
	uint64_t x = (rec->a ^ (rec->b * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull;
	struct rtr__pf_span *c = &w->pf.spans[x >> (64 - SPAN_BITS)];
	c->a = rec->a;
	c->b = rec->b;
	c->epoch = w->pf.epoch;
	c->cat_iid = cat;
	c->name_iid = name;
	c->len = (uint32_t)len;
	memcpy(c->bytes, body, len);
}

/* rtr__format.events */
static uint64_t pf_events(struct rtr__writer *w, struct rtr__ring *r, struct rtr__drained *ev,
			  uint32_t n)
{
	struct rtr__pf_seq *seq = seq_of(w, r);
	uint64_t events = 0;

	w->drain.batch = ev;
	if (RTR_UNLIKELY(seq == NULL)) { /* without memory: nothing of this ring */
		for (uint32_t i = 0; i < n; i++)
			ev[i].bad = 1;
		return 0;
	}
	seq_ready(w, r, seq);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pos = ev[i].pos;
		w->drain.batch_at = i;
		const struct rtr__rec *rec = rtr__ring_rec(r, pos), *end = ev[i].end;
		uint32_t args = end != NULL ? ev[i].args : 0;
		if (RTR_UNLIKELY(seq->file_id != w->out.file_id))
			seq_ready(w, r, seq); /* a cut in the batch began a file */
		if (end != NULL && args == 0 && put_plain_span(w, seq, rec, end)) {
			events += 2;
			continue;
		}
		if (RTR_LIKELY(encode_event(w, r, seq, rec, pos, end, args))) {
			events += end != NULL ? 2 + args : 1;
			continue;
		}
		ev[i].bad = 1;
		if (end == NULL)
			continue;
		/* then the events folded with it alone */
		pos += rtr__rec_records(rec->ext);
		for (uint32_t k = 0; k < args; k++) {
			const struct rtr__rec *arg = rtr__ring_rec(r, pos);
			events += encode_event(w, r, seq, arg, pos, NULL, 0);
			pos += rtr__rec_records(arg->ext);
		}
		events += encode_event(w, r, seq, end, pos, NULL, 0);
	}
	return events;
}

/* rtr__format.begin_ring */
static void pf_begin_ring(struct rtr__writer *w, const struct rtr__ring *r)
{
	struct rtr__pf *pf = &w->pf;

	(void)r;
	/* Between packets, the only place the table may be emptied: with room left for
	 * a batch's new strings (past it, intern() has them written inline). */
	if (pf->nslots_used >= PF_SLOTS / 4 || pf->arena_used >= PF_ARENA / 2)
		intern_reset(pf);
}

/* rtr__format.meta */
static void pf_meta(struct rtr__writer *w, const struct rtr__ring *r, int what, int64_t value)
{
	struct rtr__ring *rw = (struct rtr__ring *)(uintptr_t)r;
	struct rtr__pf_seq *seq = seq_of(w, rw);
	char *p;

	switch (what) {
	case RTR__WMETA_THREAD_NAME:
		break; /* the descriptor that clears the sequence names it */
	case RTR__WMETA_THREAD_SORT:
		if (seq == NULL)
			break;
		seq->sort_index = (int)value;
		seq->has_sort = 1;
		seq_ready(w, rw, seq);
		p = out_reserve(w, PKT_FIXED + 3 * sizeof(r->name));
		p = put_thread(w, p, r, seq, SEQ_NEEDS, 0);
		out_commit(w, p, 0);
		break;
	case RTR__WMETA_DROPS: {
		char *pkt, *te;
		p = out_reserve(w, PKT_FIXED);
		p = pkt_begin(p, &pkt);
		p = pb_uint(p, 8, rtr__mono_ns());
		p = pb_uint(p, 58, CLOCK_MONOTONIC_ID);
		p = pb_open(p, 11, &te);
		p = pb_uint(p, 9, TYPE_COUNTER);
		p = pb_uint(p, 11, process_uuid(own_pid(w)) | COUNTER_TRACK | OWN_DROPPED);
		p = pb_uint(p, 30, (uint64_t)value);
		p = pb_close(te, p);
		p = put_seq(p, 1, writer_flags(w));
		p = pkt_end(pkt, p);
		out_commit(w, p, 0);
		break;
	}
	}
}

/* ------------------------------------------------------------------------- */
/* The file's head and end                                                    */

/* A debug annotation with an inline name: a number, or a string (s not NULL). */
static char *put_kv(char *p, const char *key, const char *s, uint64_t num)
{
	char *a;

	p = pb_open(p, 4, &a);
	p = pb_string(p, 10, key, strlen(key));
	p = s != NULL ? pb_string(p, 6, s, strnlen(s, PF_STR_MAX)) : pb_uint(p, 3, num);
	return pb_close(a, p);
}

static char *put_kv_bool(char *p, const char *key, int b)
{
	char *a;

	p = pb_open(p, 4, &a);
	p = pb_string(p, 10, key, strlen(key));
	p = pb_uint(p, 2, b != 0);
	return pb_close(a, p);
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* An instant on the process track at ts with the annotations from a0 to a1: the
 * start and end markers. */
static char *put_marker(struct rtr__writer *w, char *p, const char *name, uint64_t ts,
			uint32_t flags, const char *a0, size_t alen)
{
	char *pkt, *te;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, 8, ts);
	p = pb_uint(p, 58, CLOCK_MONOTONIC_ID);
	p = pb_open(p, 11, &te);
	p = pb_uint(p, 9, TYPE_INSTANT);
	p = pb_uint(p, 11, process_uuid(own_pid(w)));
	p = pb_string(p, 23, name, strlen(name));
	memmove(p, a0, alen);
	p += alen;
	p = pb_close(te, p);
	p = put_seq(p, 1, flags);
	return pkt_end(pkt, p);
}

/* rtr__format.begin_file: the clocks, the process, the writer's counters, the start
 * marker. */
static void pf_begin_file(struct rtr__writer *w)
{
	const struct rtr__session *s = &w->s;
	char *pkt, *cs, *c;
	char *p = out_reserve(w, 16384);

	w->pf.writer_file = 0;
	/* the three clocks read together; MONOTONIC is the recorder's (with its offset) */
	uint64_t mono_raw = read_clock(CLOCK_MONOTONIC);
	uint64_t boot = read_clock(CLOCK_BOOTTIME);
	uint64_t mono = rtr__mono_ns(), real = rtr__real_ns();
	boot = boot - mono_raw + mono;
	p = pkt_begin(p, &pkt);
	p = pb_open(p, 6, &cs);
	static const unsigned ids[] = {CLOCK_MONOTONIC_ID, CLOCK_BOOTTIME_ID, CLOCK_REALTIME_ID};
	const uint64_t vals[] = {mono, boot, real};
	for (size_t i = 0; i < 3; i++) {
		p = pb_open(p, 1, &c);
		p = pb_uint(p, 1, ids[i]);
		p = pb_uint(p, 2, vals[i]);
		p = pb_close(c, p);
	}
	p = pb_uint(p, 2, CLOCK_MONOTONIC_ID); /* primary_trace_clock */
	p = pb_close(cs, p);
	p = pb_uint(p, 87, 1);
	p = put_seq(p, 1, writer_flags(w));
	p = pkt_end(pkt, p);
	p = out_commit(w, p, 0);

	char label[RTR_NAME_MAX];
	int sort;
	if (rtr__process_meta(label, &sort)) {
		w->pf.label_sort = sort;
		w->pf.has_sort = 1;
	}
	if (label[0] != '\0')
		snprintf(w->pf.label, sizeof(w->pf.label), "%s", label);
	p = put_process(w, p, writer_flags(w));
	static const char *const own[OWN_COUNT] = {"ringtrace: events", "ringtrace: dropped"};
	for (unsigned i = 0; i < OWN_COUNT; i++)
		p = put_descriptor(p, 1, SEQ_NEEDS, process_uuid(own_pid(w)) | COUNTER_TRACK | i,
				   process_uuid(own_pid(w)), own[i], strlen(own[i]), 1);
	p = out_commit(w, p, 0);

	char args[4096], *a = args;
	a = put_kv(a, "origin_monotonic_ns", NULL, s->origin_ns);
	a = put_kv(a, "origin_realtime_ns", NULL, s->origin_real_ns);
	a = put_kv(a, "host", s->host, 0);
	a = put_kv(a, "pid", NULL, (uint64_t)s->pid);
	if (s->rank >= 0)
		a = put_kv(a, "rank", NULL, (uint64_t)s->rank);
	if (s->world_size > 0)
		a = put_kv(a, "world_size", NULL, (uint64_t)s->world_size);
	a = put_kv(a, "version", RTR_VERSION_STRING, 0);
	a = put_kv(a, "format", "perfetto", 0);
	a = put_kv(a, "clock", s->clock.kind == RTR_CLOCK_TSC ? "tsc" : "monotonic", 0);
	a = put_kv(a, "io", rtr_io_name(w->out.sink.method), 0);
	a = put_kv(a, "ring_bytes", NULL, s->cfg.ring_bytes);
	a = put_kv(a, "on_full", s->cfg.on_full == RTR_ON_FULL_BLOCK ? "block" : "drop", 0);
	a = put_kv(a, "flush_ms", NULL, s->cfg.flush_ms);
	if (s->categories[0] != '\0')
		a = put_kv(a, "categories", s->categories, 0);
	a = put_kv(a, "compress", w->out.sink.gzip != NULL ? "gzip" : "none", 0);
	a = put_kv(a, "cache_mb", NULL, w->out.sink.cache_window >> 20);
	if (s->cfg.mode == RTR_MODE_FLIGHT) {
		a = put_kv(a, "mode", "flight", 0);
		a = put_kv(a, "flight_mb", NULL, s->cfg.flight_mb);
		a = put_kv(a, "snapshot", NULL, w->out.file_no);
	} else if (s->numbered) {
		a = put_kv(a, "segment", NULL, w->out.file_no);
		if (s->cfg.max_mb > 0)
			a = put_kv(a, "max_mb", NULL, s->cfg.max_mb);
		if (s->cfg.max_seconds > 0)
			a = put_kv(a, "max_seconds", NULL, s->cfg.max_seconds);
	}
	p = put_marker(w, p, "ringtrace: start", s->origin_ns, SEQ_NEEDS, args, (size_t)(a - args));
	out_commit(w, p, 0);
}

/* A counter value of the writer's own tracks, at ts. */
static char *put_own_counter(struct rtr__writer *w, char *p, unsigned which, uint64_t ts,
			     uint64_t value)
{
	char *pkt, *te;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, 8, ts);
	p = pb_uint(p, 58, CLOCK_MONOTONIC_ID);
	p = pb_open(p, 11, &te);
	p = pb_uint(p, 9, TYPE_COUNTER);
	p = pb_uint(p, 11, process_uuid(own_pid(w)) | COUNTER_TRACK | which);
	p = pb_uint(p, 30, value);
	p = pb_close(te, p);
	p = put_seq(p, 1, SEQ_NEEDS);
	return pkt_end(pkt, p);
}

/* rtr__format.end_file: the end marker, its counts also on the counter tracks. In the
 * room out_reserve() keeps (TAIL_ROOM) when provisional. */
static void pf_end_file(struct rtr__writer *w, int final)
{
	const struct rtr__session *s = &w->s;
	struct rtr__end_counts c;

	rtr__out_end_counts(w, final, &c);
	uint64_t full = c.full, large = c.large, reentrant = c.reentrant, corrupt = c.corrupt;
	uint64_t no_track = c.no_track, failed = c.failed, io = c.io, bytes = c.bytes;
	uint64_t events = c.events, dropped = c.dropped;
	uint32_t sig = c.signal;
	uint64_t now = rtr__mono_ns();
	char args[1024], *a = args;

	a = put_kv_bool(a, "final", final);
	a = put_kv(a, "events", NULL, events);
	if (sig != 0)
		a = put_kv(a, "signal", NULL, sig);
	if (s->numbered) {
		int flight = s->cfg.mode == RTR_MODE_FLIGHT;
		a = put_kv(a, flight ? "snapshot" : "segment", NULL, w->out.file_no);
		if (!flight)
			a = put_kv_bool(a, "continues", w->out.continues && final);
		a = put_kv(a, "events_session", NULL, w->out.encoded - failed);
		a = put_kv(a, "continued", NULL, w->out.continued);
		a = put_kv(a, flight ? "open" : "cut", NULL, final ? w->out.closed : 0);
		if (w->out.cut_lost != 0)
			a = put_kv(a, "cut_lost", NULL, w->out.cut_lost);
		if (w->out.flight != NULL) {
			uint64_t evicted, sbytes;
			rtr__cut_flight_counts(w, &evicted, &sbytes);
			a = put_kv(a, "evicted", NULL, evicted);
		}
	}
	a = put_kv(a, "dropped", NULL, dropped);
	a = put_kv(a, "dropped_ring_full", NULL, full);
	a = put_kv(a, "dropped_too_large", NULL, large);
	a = put_kv(a, "dropped_io", NULL, io);
	a = put_kv(a, "dropped_reentrant", NULL, reentrant);
	a = put_kv(a, "dropped_corrupt", NULL, corrupt);
	a = put_kv(a, "dropped_no_track", NULL, no_track);
	a = put_kv(a, "args_cut", NULL, rtr_atomic_load_relaxed(&w->acct.st_args_cut));
	a = put_kv(a, "threads", NULL, rtr_atomic_load_relaxed(&w->acct.st_threads));
	if (c.block) {
		a = put_kv(a, "waited", NULL, c.waited);
		a = put_kv(a, "waited_ns", NULL, c.waited_ns);
	}
	if (w->json.mem.untracked != 0)
		a = put_kv(a, "mem_untracked", NULL, w->json.mem.untracked);
	a = put_kv(a, "bytes", NULL, bytes);

	char *p = w->out.chunk->data + w->out.chunk->len;
	p = put_own_counter(w, p, OWN_EVENTS, now, events);
	p = put_own_counter(w, p, OWN_DROPPED, now, dropped);
	p = put_marker(w, p, "ringtrace: end", now, writer_flags(w), args, (size_t)(a - args));
	out_commit(w, p, 0);
}

/* ------------------------------------------------------------------------- */
/* Cuts                                                                       */

/* rtr__format.cut_ring: r's open slices ended (innermost first, with what was added
 * to them) or begun again (outermost first). */
static uint64_t pf_cut_ring(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			    size_t budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	struct rtr__pf_seq *seq = seq_of(w, r);
	uint64_t lines = 0;
	const char *flag = what == RTR__CUT_BEGIN ? "continued"
			   : what == RTR__CUT_END ? "cut"
						  : "open";

	if (s == NULL || seq == NULL || s->depth == 0)
		return 0;
	seq_ready(w, r, seq);
	ts += w->s.origin_ns; /* cut.c's times are from the origin */
	for (uint32_t k = 0; k < s->depth; k++) {
		uint32_t i = what == RTR__CUT_BEGIN ? k : s->depth - 1 - k;
		const struct rtr__open_slice *l = &s->level[i];
		size_t args_len = what == RTR__CUT_BEGIN ? 0
				  : i + 1 < s->depth	 ? s->level[i + 1].copy_off - l->args_off
							 : s->text_len - l->args_off;
		char extra[512], *q = put_flag_annotation(extra, flag);
		size_t bound = 2 * PKT_FIXED + 6 * PF_STR_MAX + args_len;
		if (bound > budget)
			break;
		budget -= bound;
		struct te e = {.type = what == RTR__CUT_BEGIN ? TYPE_BEGIN : TYPE_END, .ts = ts};
		e.cat = (const char *)(uintptr_t)l->cat;
		if (l->name == 0 && l->copy_len != UINT32_MAX) {
			e.copied = 1;
			e.name = s->text + l->copy_off;
			e.name_len = l->copy_len;
		} else {
			e.name = (const char *)(uintptr_t)l->name;
		}
		char *p = out_reserve(w, bound);
		char *buf = p + bound - args_len - sizeof(extra);
		memcpy(buf, s->text + l->args_off, args_len);
		memcpy(buf + args_len, extra, (size_t)(q - extra));
		e.extra = buf;
		e.extra_len = args_len + (size_t)(q - extra);
		p = put_event(w, p, seq, &e, NULL, NULL);
		out_commit(w, p, 0);
		lines++;
	}
	return lines;
}

/* rtr__format.cut_async: the open async spans ended (newest first) or begun again
 * (oldest first) on their tracks, from the writer's sequence; a span begun again
 * has its name, its arguments stay with its first begin. */
static uint64_t pf_cut_async(struct rtr__writer *w, int what, uint64_t ts, size_t budget)
{
	static const struct rtr__async_span *list[RTR_ASYNC_OPEN_MAX]; /* writer thread only */
	size_t n = rtr__async_open_list(&w->json.async, what == RTR__CUT_BEGIN ? 1 : -1, list);
	const char *flag = what == RTR__CUT_BEGIN ? "continued"
			   : what == RTR__CUT_END ? "cut"
						  : "open";
	uint64_t lines = 0;

	ts += w->s.origin_ns; /* cut.c's times are from the origin */
	for (size_t i = 0; i < n; i++) {
		const struct rtr__async_span *a = list[i];
		size_t bound = 3 * PKT_FIXED + 2 * (size_t)a->head_len;
		if (bound > budget)
			break;
		budget -= bound;
		uint64_t track = async_track(w, a->cat, a->id, a->text, a->head_len);
		char *pkt, *te, *p = out_reserve(w, bound);
		p = pkt_begin(p, &pkt);
		p = pb_uint(p, 8, ts);
		p = pb_uint(p, 58, CLOCK_MONOTONIC_ID);
		p = pb_open(p, 11, &te);
		p = pb_uint(p, 9, what == RTR__CUT_BEGIN ? TYPE_BEGIN : TYPE_END);
		p = pb_uint(p, 11, track != 0 ? track : process_uuid(own_pid(w)));
		if (what == RTR__CUT_BEGIN) {
			const char *cat = (const char *)(uintptr_t)a->cat;
			if (cat != NULL)
				p = pb_string(p, 22, cat, strnlen(cat, PF_STR_MAX));
			p = pb_string(p, 23, a->text, a->head_len);
		}
		p = put_flag_annotation(p, flag);
		p = pb_close(te, p);
		p = put_seq(p, 1, writer_flags(w));
		out_commit(w, pkt_end(pkt, p), 0);
		lines++;
	}
	return lines;
}

/* ------------------------------------------------------------------------- */
/* The session                                                                */

static int pf_init(struct rtr__writer *w)
{
	struct rtr__pf *pf = &w->pf;
	int err = rtr__json_format.init(w); /* the scratch, memory table, async spans */

	if (err != 0)
		return err;
	memset(pf, 0, sizeof(*pf));
	pf->slots = rtr__mem_map(PF_SLOTS * sizeof(*pf->slots));
	pf->arena = rtr__mem_map(PF_ARENA);
	pf->tracks = rtr__mem_map(PF_TRACKS * sizeof(*pf->tracks));
	pf->tmp = rtr__mem_map(PF_TMP);
	pf->spans = rtr__mem_map(sizeof(*pf->spans) << SPAN_BITS);
	if (pf->slots == NULL || pf->arena == NULL || pf->tracks == NULL || pf->tmp == NULL ||
	    pf->spans == NULL) {
		rtr__mem_unmap(pf->spans, sizeof(*pf->spans) << SPAN_BITS);
		rtr__mem_unmap(pf->slots, PF_SLOTS * sizeof(*pf->slots));
		rtr__mem_unmap(pf->arena, PF_ARENA);
		rtr__mem_unmap(pf->tracks, PF_TRACKS * sizeof(*pf->tracks));
		rtr__mem_unmap(pf->tmp, PF_TMP);
		memset(pf, 0, sizeof(*pf));
		rtr__json_format.fini(w, RTR__FINI_ALL);
		return -ENOMEM;
	}
	pf->epoch = 1;
	return 0;
}

static void pf_fini(struct rtr__writer *w, int how)
{
	struct rtr__pf *pf = &w->pf;

	if (how != RTR__FINI_FORGET) {
		rtr__mem_unmap(pf->slots, PF_SLOTS * sizeof(*pf->slots));
		rtr__mem_unmap(pf->arena, PF_ARENA);
		rtr__mem_unmap(pf->tracks, PF_TRACKS * sizeof(*pf->tracks));
		rtr__mem_unmap(pf->tmp, PF_TMP);
		rtr__mem_unmap(pf->spans, sizeof(*pf->spans) << SPAN_BITS);
		free(pf->seqs);
	}
	memset(pf, 0, sizeof(*pf));
	rtr__json_format.fini(w, how);
}

const struct rtr__format rtr__perfetto_format = {
	.name = "perfetto",
	.init = pf_init,
	.fini = pf_fini,
	.begin_file = pf_begin_file,
	.begin_ring = pf_begin_ring,
	.meta = pf_meta,
	.events = pf_events,
	.end_file = pf_end_file,
	.cut_ring = pf_cut_ring,
	.cut_async = pf_cut_async,
	.pads_pages = 0,
};
