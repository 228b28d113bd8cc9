/* SPDX-License-Identifier: MIT */
/*
 * Sequences and tracks of the Perfetto format.
 *
 * A thread's events go on its own packet sequence (2, 3, ...; 1 is the writer's own:
 * the process, the counters, the async tracks, the markers). A sequence is cleared
 * at its first packet in each file and whenever the intern table was emptied: its
 * thread's descriptor, its defaults (the thread's track, clock 64). Its timestamps
 * are deltas on clock 64 (incremental MONOTONIC), set by a ClockSnapshot once per
 * file; a packet earlier than the sequence's last goes absolute on MONOTONIC.
 *
 * Tracks besides the threads' are declared on the writer's sequence before their
 * first use in a file: counters (by name), async spans (by category and id), and a
 * track's lanes under their pseudo-process.
 */
#include "format/perfetto/pf.h"

#include <stdlib.h>
#include <string.h>

char *rtr__pf_put_descriptor(char *p, uint32_t seq_id, uint32_t flags, uint64_t uuid,
			     uint64_t parent, const char *name, size_t name_len, int counter,
			     const char *cat)
{
	char *pkt, *d, *c;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, RTR__PF_PACKET_TRACK_DESCRIPTOR, &d);
	p = pb_uint(p, RTR__PF_TRACK_UUID, uuid);
	if (parent != 0)
		p = pb_uint(p, RTR__PF_TRACK_PARENT_UUID, parent);
	if (name != NULL)
		p = pb_string(p, RTR__PF_TRACK_NAME, name, name_len);
	if (counter) {
		p = pb_open(p, RTR__PF_TRACK_COUNTER, &c);
		if (cat != NULL) /* one, as on the events: a list stays one string */
			p = pb_string(p, RTR__PF_COUNTER_CATEGORIES, cat, strnlen(cat, PF_STR_MAX));
		if (counter == 2)
			p = pb_uint(p, RTR__PF_COUNTER_UNIT, RTR__PF_UNIT_SIZE_BYTES);
		p = pb_close(c, p);
	}
	p = pb_close(d, p);
	p = put_seq(p, seq_id, flags);
	return pkt_end(pkt, p);
}

char *rtr__pf_put_process(struct rtr__writer *w, char *p, uint32_t flags)
{
	struct rtr__pf *pf = pf_of(w);
	char *pkt, *d, *proc;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, RTR__PF_PACKET_TRACK_DESCRIPTOR, &d);
	p = pb_uint(p, RTR__PF_TRACK_UUID, process_uuid(own_pid(w)));
	p = pb_open(p, RTR__PF_TRACK_PROCESS, &proc);
	p = pb_uint(p, RTR__PF_PROCESS_PID, own_pid(w));
	p = pb_string(p, RTR__PF_PROCESS_NAME, w->s.process_name, strlen(w->s.process_name));
	if (pf->label[0] != '\0')
		p = pb_string(p, RTR__PF_PROCESS_LABELS, pf->label, strlen(pf->label));
	if (pf->has_sort)
		p = pb_uint(p, RTR__PF_PROCESS_SORT_INDEX, (uint64_t)(int64_t)pf->label_sort);
	p = pb_close(proc, p);
	p = pb_close(d, p);
	p = put_seq(p, 1, flags);
	return pkt_end(pkt, p);
}

uint32_t rtr__pf_writer_flags(struct rtr__writer *w)
{
	struct rtr__pf *pf = pf_of(w);

	if (pf->writer_file == w->out.file_id)
		return RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE;
	pf->writer_file = w->out.file_id;
	return RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED;
}

struct rtr__pf_seq *rtr__pf_seq_of(struct rtr__writer *w, struct rtr__ring *r)
{
	struct rtr__reader *rd = rtr__reader_of(r);
	struct rtr__pf *pf = pf_of(w);

	if (RTR_LIKELY(rd->fmt_word != 0 && rd->fmt_word <= pf->nseqs))
		return &pf->seqs[rd->fmt_word - 1];
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
	rd->fmt_word = pf->nseqs;
	return seq;
}

char *rtr__pf_put_thread(struct rtr__writer *w, char *p, const struct rtr__ring *r,
			 const struct rtr__pf_seq *seq, uint32_t seq_id, uint32_t flags, int first)
{
	char *pkt, *d, *th, *def, *ted;
	uint32_t pid = own_pid(w);

	p = pkt_begin(p, &pkt);
	p = pb_open(p, RTR__PF_PACKET_TRACK_DESCRIPTOR, &d);
	p = pb_uint(p, RTR__PF_TRACK_UUID, thread_uuid(pid, seq->tid));
	p = pb_uint(p, RTR__PF_TRACK_PARENT_UUID, process_uuid(pid));
	p = pb_open(p, RTR__PF_TRACK_THREAD, &th);
	p = pb_uint(p, RTR__PF_THREAD_PID, pid);
	p = pb_uint(p, RTR__PF_THREAD_TID, seq->tid);
	if (r->name[0] != '\0')
		p = pb_string(p, RTR__PF_THREAD_NAME, r->name, strnlen(r->name, sizeof(r->name)));
	if (seq->has_sort)
		p = pb_uint(p, RTR__PF_THREAD_SORT_INDEX, (uint64_t)(int64_t)seq->sort_index);
	p = pb_close(th, p);
	p = pb_close(d, p);
	if ((flags & RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED) && seq_id == seq->id) {
		p = pb_open(p, RTR__PF_PACKET_DEFAULTS, &def);
		p = pb_uint(p, RTR__PF_DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_DELTA_ID);
		p = pb_open(p, RTR__PF_DEFAULTS_TRACK_EVENT, &ted);
		p = pb_uint(p, RTR__PF_EVENT_DEFAULTS_TRACK_UUID, thread_uuid(pid, seq->tid));
		p = pb_close(ted, p);
		p = pb_close(def, p);
		if (first)
			p = pb_uint(p, RTR__PF_PACKET_FIRST_ON_SEQUENCE, 1);
	}
	p = put_seq(p, seq_id, flags);
	return pkt_end(pkt, p);
}

void rtr__pf_seq_clear(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq)
{
	int first = seq->file_id == 0;
	/* first the room: it may be in the next file */
	char *p = out_reserve(w, PKT_FIXED + 3 * sizeof(r->name));

	memset(seq->sent, 0, sizeof(seq->sent));
	seq->file_id = w->out.file_id;
	seq->epoch = pf_of(w)->epoch;
	seq->has_clock = 0;
	p = rtr__pf_put_thread(w, p, r, seq, seq->id, RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED, first);
	pf_commit(w, p, 0);
}

char *rtr__pf_put_delta_clock(char *p, struct rtr__pf_seq *seq, uint64_t ts)
{
	char *pkt, *cs, *c;

	p = pkt_begin(p, &pkt);
	p = pb_open(p, RTR__PF_PACKET_CLOCK_SNAPSHOT, &cs);
	p = pb_open(p, RTR__PF_SNAPSHOT_CLOCKS, &c);
	p = pb_uint(p, RTR__PF_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
	p = pb_uint(p, RTR__PF_CLOCK_TIMESTAMP, ts);
	p = pb_close(c, p);
	p = pb_open(p, RTR__PF_SNAPSHOT_CLOCKS, &c);
	p = pb_uint(p, RTR__PF_CLOCK_ID, CLOCK_DELTA_ID);
	p = pb_uint(p, RTR__PF_CLOCK_TIMESTAMP, ts);
	p = pb_uint(p, RTR__PF_CLOCK_IS_INCREMENTAL, 1);
	p = pb_close(c, p);
	p = pb_close(cs, p);
	p = put_seq(p, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
	seq->has_clock = 1;
	seq->last_ts = ts;
	return pkt_end(pkt, p);
}

static struct rtr__pf_track *track_slot(struct rtr__writer *w, uint64_t key, uint32_t *index)
{
	struct rtr__pf *pf = pf_of(w);

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

/* FNV-1a: a counter's track is its name's and category's, whether static or copied. */
static uint64_t name_hash(const char *s, size_t len, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h | 1; /* never 0, the empty slot */
}

uint64_t rtr__pf_counter_track(struct rtr__writer *w, const char *name, size_t len, const char *cat,
			       int bytes)
{
	uint32_t index;
	uint64_t key = name_hash(name, len, 'C');

	if (cat != NULL)
		key = name_hash(cat, strnlen(cat, PF_STR_MAX), key);
	struct rtr__pf_track *t = track_slot(w, key, &index);

	if (t == NULL)
		return 0;
	uint64_t uuid = process_uuid(own_pid(w)) | COUNTER_TRACK | (OWN_COUNT + index);
	if (!t->declared) {
		char *p = out_reserve(w, PKT_FIXED + 3 * PF_STR_MAX);
		p = rtr__pf_put_descriptor(p, 1, rtr__pf_writer_flags(w), uuid,
					   process_uuid(own_pid(w)), name, len, bytes ? 2 : 1, cat);
		pf_commit(w, p, 0);
		t->declared = 1;
	}
	return uuid;
}

uint64_t rtr__pf_async_track(struct rtr__writer *w, const char *cat, uint64_t id, const char *name,
			     size_t len)
{
	uint32_t index;
	uint64_t key = ((uintptr_t)cat * 0x9e3779b97f4a7c15ull ^ id) | 1u << 1 | 1u;
	struct rtr__pf_track *t = track_slot(w, key, &index);

	if (t == NULL)
		return 0;
	uint64_t uuid = process_uuid(own_pid(w)) | ASYNC_TRACK | index;
	if (!t->declared) {
		char *p = out_reserve(w, PKT_FIXED + 3 * PF_STR_MAX);
		p = rtr__pf_put_descriptor(p, 1, rtr__pf_writer_flags(w), uuid,
					   process_uuid(own_pid(w)), name, len, 0, NULL);
		pf_commit(w, p, 0);
		t->declared = 1;
	}
	return uuid;
}

uint64_t rtr__pf_global_track(struct rtr__writer *w)
{
	uint32_t index;
	struct rtr__pf_track *t = track_slot(w, name_hash("global", 6, 'G'), &index);
	uint64_t uuid = process_uuid(own_pid(w)) | GLOBAL_TRACK;

	if (t == NULL)
		return process_uuid(own_pid(w));
	if (!t->declared) {
		char *p = out_reserve(w, PKT_FIXED);
		p = rtr__pf_put_descriptor(p, 1, rtr__pf_writer_flags(w), uuid, 0, "Global", 6, 0,
					   NULL);
		pf_commit(w, p, 0);
		t->declared = 1;
	}
	return uuid;
}

uint64_t rtr__pf_lane_track(struct rtr__writer *w, struct rtr_track *t, unsigned k)
{
	const struct rtr__pseudo_process *pp = rtr__track_process(t);
	uint64_t uuid = thread_uuid(pp->pid, t->tid + k);

	if (rtr__track_process_claim(t, w->out.file_id)) {
		char *pkt, *d, *proc;
		char *p = out_reserve(w, PKT_FIXED + 6 * RTR_NAME_MAX);
		p = pkt_begin(p, &pkt);
		p = pb_open(p, RTR__PF_PACKET_TRACK_DESCRIPTOR, &d);
		p = pb_uint(p, RTR__PF_TRACK_UUID, process_uuid(pp->pid));
		p = pb_open(p, RTR__PF_TRACK_PROCESS, &proc);
		p = pb_uint(p, RTR__PF_PROCESS_PID, pp->pid);
		p = pb_string(p, RTR__PF_PROCESS_NAME, pp->name,
			      strnlen(pp->name, sizeof(pp->name)));
		if (pp->label[0] != '\0')
			p = pb_string(p, RTR__PF_PROCESS_LABELS, pp->label,
				      strnlen(pp->label, sizeof(pp->label)));
		if (pp->sort_index != 0)
			p = pb_uint(p, RTR__PF_PROCESS_SORT_INDEX,
				    (uint64_t)(int64_t)pp->sort_index);
		p = pb_close(proc, p);
		/* its lanes in the order of their ranks (the JSON's thread sort indices) */
		p = pb_uint(p, RTR__PF_TRACK_CHILD_ORDERING, RTR__PF_CHILD_ORDERING_EXPLICIT);
		p = pb_close(d, p);
		p = put_seq(p, 1, rtr__pf_writer_flags(w));
		p = pkt_end(pkt, p);
		pf_commit(w, p, 0);
	}
	if (rtr__lane_claim_name(t, k, w->out.file_id)) {
		char name[RTR_NAME_MAX + 16];
		size_t len = rtr__lane_name(t, k, name, sizeof(name));
		char *pkt, *d, *p = out_reserve(w, PKT_FIXED + 3 * sizeof(name));
		p = pkt_begin(p, &pkt);
		p = pb_open(p, RTR__PF_PACKET_TRACK_DESCRIPTOR, &d);
		p = pb_uint(p, RTR__PF_TRACK_UUID, uuid);
		p = pb_uint(p, RTR__PF_TRACK_PARENT_UUID, process_uuid(pp->pid));
		p = pb_string(p, RTR__PF_TRACK_NAME, name, len);
		/* overflow lanes right after their lane, as the JSON's sort index says */
		p = pb_uint(p, RTR__PF_TRACK_SIBLING_ORDER_RANK,
			    (uint64_t)rtr__lane_sort_index(t, k));
		p = pb_close(d, p);
		p = put_seq(p, 1, rtr__pf_writer_flags(w));
		pf_commit(w, pkt_end(pkt, p), 0);
	}
	return uuid;
}
