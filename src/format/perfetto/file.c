/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto file around the events, a cut's packets, and the format's table.
 *
 * A file opens with a ClockSnapshot of the three clocks read together (MONOTONIC is
 * the trace's primary clock), the process's descriptor, the writer's own counter
 * tracks (events, drops) and the start marker: an instant on the process track with
 * the marker's keys as annotations. It closes with the counters' last values and the
 * end marker. There is no closing bracket to write: a protobuf stream is whole after
 * any packet, so the provisional end marker needs no more than itself.
 */
#include "format/perfetto/pf.h"

#include "common/mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A debug annotation with an inline name: a number, or a string (s not NULL). */
static char *put_kv(char *p, const char *key, const char *s, uint64_t num)
{
	char *a;

	p = pb_open(p, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	p = pb_string(p, RTR__PF_ANN_NAME, key, strlen(key));
	p = s != NULL ? pb_string(p, RTR__PF_ANN_STRING, s, strnlen(s, PF_STR_MAX))
		      : pb_uint(p, RTR__PF_ANN_UINT, num);
	return pb_close(a, p);
}

static char *put_kv_bool(char *p, const char *key, int b)
{
	char *a;

	p = pb_open(p, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	p = pb_string(p, RTR__PF_ANN_NAME, key, strlen(key));
	p = pb_uint(p, RTR__PF_ANN_BOOL, b != 0);
	return pb_close(a, p);
}

/* A marker's keys as annotations; a start marker also says the format, after the
 * version (a reader tells the two formats' files apart by it). */
static char *put_marker_args(char *a, const struct rtr__marker *m)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct rtr__kv *kv = &m->kv[i];
		switch (kv->type) {
		case RTR__KV_STR:
			a = put_kv(a, kv->key, kv->str, 0);
			break;
		case RTR__KV_BOOL:
			a = put_kv_bool(a, kv->key, (int)kv->num);
			break;
		default: /* protobuf has 64-bit integers: no text needed */
			a = put_kv(a, kv->key, NULL, kv->num);
			break;
		}
		if (strcmp(kv->key, RTR__KEY_VERSION) == 0)
			a = put_kv(a, RTR__KEY_FORMAT, "perfetto", 0);
	}
	return a;
}

/* An instant on the process track at ts with the annotations from a0 to a1: the
 * start and end markers. */
static char *put_marker(struct rtr__writer *w, char *p, const char *name, uint64_t ts,
			uint32_t flags, const char *a0, size_t alen)
{
	char *pkt, *te;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ts);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
	p = pb_open(p, RTR__PF_PACKET_TRACK_EVENT, &te);
	p = pb_uint(p, RTR__PF_EVENT_TYPE, RTR__PF_TYPE_INSTANT);
	p = pb_uint(p, RTR__PF_EVENT_TRACK_UUID, process_uuid(own_pid(w)));
	p = pb_string(p, RTR__PF_EVENT_NAME, name, strlen(name));
	memmove(p, a0, alen);
	p += alen;
	p = pb_close(te, p);
	p = put_seq(p, 1, flags);
	return pkt_end(pkt, p);
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* rtr__format.begin_file: the clocks, the process, the writer's counters, the start
 * marker. */
static void pf_begin_file(struct rtr__writer *w, const struct rtr__marker *start)
{
	struct rtr__pf *pf = pf_of(w);
	char *pkt, *cs, *c;
	char *p = out_reserve(w, 16384);

	pf->writer_file = 0;
	/* the three clocks read together; MONOTONIC is the recorder's (with its offset) */
	uint64_t mono_raw = read_clock(CLOCK_MONOTONIC);
	uint64_t boot = read_clock(CLOCK_BOOTTIME);
	uint64_t mono = rtr__mono_ns(), real = rtr__real_ns();
	boot = boot - mono_raw + mono;
	p = pkt_begin(p, &pkt);
	p = pb_open(p, RTR__PF_PACKET_CLOCK_SNAPSHOT, &cs);
	static const unsigned ids[] = {RTR__PF_BUILTIN_MONOTONIC, RTR__PF_BUILTIN_BOOTTIME,
				       RTR__PF_BUILTIN_REALTIME};
	const uint64_t vals[] = {mono, boot, real};
	for (size_t i = 0; i < 3; i++) {
		p = pb_open(p, RTR__PF_SNAPSHOT_CLOCKS, &c);
		p = pb_uint(p, RTR__PF_CLOCK_ID, ids[i]);
		p = pb_uint(p, RTR__PF_CLOCK_TIMESTAMP, vals[i]);
		p = pb_close(c, p);
	}
	p = pb_uint(p, RTR__PF_SNAPSHOT_PRIMARY_TRACE_CLOCK, RTR__PF_BUILTIN_MONOTONIC);
	p = pb_close(cs, p);
	p = pb_uint(p, RTR__PF_PACKET_FIRST_ON_SEQUENCE, 1);
	p = put_seq(p, 1, rtr__pf_writer_flags(w));
	p = pkt_end(pkt, p);
	p = pf_commit(w, p, 0);

	char label[RTR_NAME_MAX];
	int sort;
	if (rtr__process_meta(label, &sort)) {
		pf->label_sort = sort;
		pf->has_sort = 1;
	}
	if (label[0] != '\0')
		snprintf(pf->label, sizeof(pf->label), "%s", label);
	p = rtr__pf_put_process(w, p, rtr__pf_writer_flags(w));
	static const char *const own[OWN_COUNT] = {RTR__COUNTER_EVENTS, RTR__COUNTER_DROPPED};
	for (unsigned i = 0; i < OWN_COUNT; i++)
		p = rtr__pf_put_descriptor(p, 1, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE,
					   process_uuid(own_pid(w)) | COUNTER_TRACK | i,
					   process_uuid(own_pid(w)), own[i], strlen(own[i]), 1,
					   NULL);
	p = pf_commit(w, p, 0);

	char args[4096], *a = put_marker_args(args, start);
	p = put_marker(w, p, start->name, start->ts, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE, args,
		       (size_t)(a - args));
	pf_commit(w, p, 0);
	/* the head stays plain: the start marker readable to any tool that looks */
	pf->zmark = pf->zend;
}

/* A counter value of the writer's own tracks, at ts. */
static char *put_own_counter(struct rtr__writer *w, char *p, unsigned which, uint64_t ts,
			     uint64_t value)
{
	char *pkt, *te;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ts);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
	p = pb_open(p, RTR__PF_PACKET_TRACK_EVENT, &te);
	p = pb_uint(p, RTR__PF_EVENT_TYPE, RTR__PF_TYPE_COUNTER);
	p = pb_uint(p, RTR__PF_EVENT_TRACK_UUID, process_uuid(own_pid(w)) | COUNTER_TRACK | which);
	p = pb_uint(p, RTR__PF_EVENT_COUNTER_VALUE, value);
	p = pb_close(te, p);
	p = put_seq(p, 1, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
	return pkt_end(pkt, p);
}

/* rtr__format.end_file: the end marker, its counts also on the counter tracks. */
static void pf_end_file(struct rtr__writer *w, const struct rtr__marker *end)
{
	char args[1024], *a = put_marker_args(args, end);

	/* (rtr__out_end_file() sealed the chunk: the marker itself stays plain) */
	char *p = w->out.chunk->data + w->out.chunk->len;
	p = put_own_counter(w, p, OWN_EVENTS, end->ts, end->events);
	p = put_own_counter(w, p, OWN_DROPPED, end->ts, end->dropped);
	p = put_marker(w, p, end->name, end->ts, rtr__pf_writer_flags(w), args, (size_t)(a - args));
	out_commit(w, p, 0);
}

/* A cut's packet on the writer's sequence, stateless: absolute time, the track's uuid,
 * the names inline, the mark (and, ending a slice, what was added to it) in extra. */
static char *put_cut_packet(struct rtr__writer *w, char *p, const struct rtr__event *ev, int what,
			    uint64_t track, const char *name, size_t name_len, const char *extra,
			    size_t extra_len)
{
	char *pkt, *te;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ev->ts);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
	p = pb_open(p, RTR__PF_PACKET_TRACK_EVENT, &te);
	p = pb_uint(p, RTR__PF_EVENT_TYPE,
		    what == RTR__CUT_BEGIN ? RTR__PF_TYPE_SLICE_BEGIN : RTR__PF_TYPE_SLICE_END);
	p = pb_uint(p, RTR__PF_EVENT_TRACK_UUID, track);
	if (what == RTR__CUT_BEGIN) {
		if (ev->cat != NULL)
			p = pb_string(p, RTR__PF_EVENT_CATEGORIES, ev->cat,
				      strnlen(ev->cat, PF_STR_MAX));
		p = pb_string(p, RTR__PF_EVENT_NAME, name, name_len);
	}
	memcpy(p, extra, extra_len);
	p += extra_len;
	p = pb_close(te, p);
	p = put_seq(p, 1, rtr__pf_writer_flags(w));
	return pkt_end(pkt, p);
}

/*
 * rtr__format.cut: an open slice ended (with what was added to it) or begun again on
 * its thread's track, or an async span on its track, marked with `<mark>: true`. A
 * slice or span begun again has its name; its own arguments stay with its first
 * begin. Every cut packet is on the writer's sequence and needs no state of the
 * thread's: absolute time, names inline, the track by its uuid (the thread's declared
 * there first when its sequence has not been in the file). So a flight chunk's
 * prologue, which only a window starting at that chunk keeps, leaves the thread's
 * sequence (its clock, its interned strings) as the chunk's other packets expect it.
 */
bool rtr__pf_cut(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev, int what,
		 size_t *budget)
{
	struct rtr__pf *pf = pf_of(w);
	const char *mark = rtr__cut_mark(what);
	const char *name = ev->name != NULL ? ev->name : "";
	size_t name_len = (ev->flags & RTR__EVF_COPIED) ? ev->name_len : strnlen(name, PF_STR_MAX);
	uint64_t track;
	/* the scratch's second half: an event being encoded may hold the first (a cut
	 * comes from a chunk filling up in its midst) */
	char *scratch = pf->tmp + PF_TMP / 2, *p, *q = scratch;

	if (r == NULL) { /* an async span */
		size_t bound = 3 * PKT_FIXED + 6 * PF_STR_MAX;
		if (bound > *budget)
			return false;
		*budget -= bound;
		track = rtr__pf_async_track(w, ev->cat, ev->value, name, name_len);
		q = rtr__pf_put_flag(q, mark);
		p = out_reserve(w, bound);
		p = put_cut_packet(w, p, ev, what, track != 0 ? track : process_uuid(own_pid(w)),
				   name, name_len, scratch, (size_t)(q - scratch));
		pf_commit(w, p, 0);
		return true;
	}

	struct rtr__pf_seq *seq = rtr__pf_seq_of(w, r);
	if (seq == NULL)
		return false;
	/* the added arguments with inline names, then the mark, into the scratch */
	for (uint32_t i = 0; i < ev->nmore; i++)
		q = rtr__pf_put_annotations(w, q, &ev->more[i]);
	size_t args_len = (size_t)(q - scratch);
	size_t bound = 3 * PKT_FIXED + 6 * PF_STR_MAX + 3 * sizeof(r->name) + args_len;
	if (bound > *budget)
		return false;
	*budget -= bound;
	q = rtr__pf_put_flag(q, mark);
	p = out_reserve(w, bound);
	if (seq->file_id != w->out.file_id && seq->desc_file != w->out.file_id) {
		p = rtr__pf_put_thread(w, p, r, seq, 1, rtr__pf_writer_flags(w), 0);
		seq->desc_file = w->out.file_id;
	}
	track = thread_uuid(own_pid(w), seq->tid);
	p = put_cut_packet(w, p, ev, what, track, name, name_len, scratch, (size_t)(q - scratch));
	pf_commit(w, p, 0);
	return true;
}

static void pf_unmap(struct rtr__pf *pf)
{
	rtr__mem_unmap(pf->spans, sizeof(*pf->spans) << SPAN_BITS);
	rtr__mem_unmap(pf->slots, PF_SLOTS * sizeof(*pf->slots));
	rtr__mem_unmap(pf->arena, PF_ARENA);
	rtr__mem_unmap(pf->tracks, PF_TRACKS * sizeof(*pf->tracks));
	rtr__mem_unmap(pf->tmp, PF_TMP);
	rtr__mem_unmap(pf->zbuf, rtr__pf_pack_bound(PF_ZBATCH_MAX));
	rtr__pf_packer_free(pf->packer);
	rtr__mem_unmap(pf, sizeof(*pf));
}

static int pf_init(struct rtr__writer *w)
{
	struct rtr__pf *pf = rtr__mem_map(sizeof(*pf));

	if (pf == NULL)
		return -ENOMEM;
	pf->slots = rtr__mem_map(PF_SLOTS * sizeof(*pf->slots));
	pf->arena = rtr__mem_map(PF_ARENA);
	pf->tracks = rtr__mem_map(PF_TRACKS * sizeof(*pf->tracks));
	pf->tmp = rtr__mem_map(PF_TMP);
	pf->spans = rtr__mem_map(sizeof(*pf->spans) << SPAN_BITS);
	if (w->s.cfg.pf_compress) { /* (libdeflate's compressor from malloc: pack.h) */
		pf->packer = rtr__pf_packer_new();
		pf->zbuf = rtr__mem_map(rtr__pf_pack_bound(PF_ZBATCH_MAX));
	}
	if (pf->slots == NULL || pf->arena == NULL || pf->tracks == NULL || pf->tmp == NULL ||
	    pf->spans == NULL ||
	    (w->s.cfg.pf_compress && (pf->packer == NULL || pf->zbuf == NULL))) {
		pf_unmap(pf);
		return -ENOMEM;
	}
	pf->epoch = 1;
	w->fmt_state = pf;
	return 0;
}

static void pf_fini(struct rtr__writer *w, int how)
{
	struct rtr__pf *pf = pf_of(w);

	w->fmt_state = NULL;
	if (pf == NULL || how == RTR__FINI_FORGET)
		return; /* the parent's writer may be freeing it */
	free(pf->seqs);
	pf_unmap(pf);
}

const struct rtr__format rtr__perfetto_format = {
	.name = "perfetto",
	.pads_pages = 0, /* a protobuf stream has no room for padding between packets */
	.init = pf_init,
	.fini = pf_fini,
	.begin_file = pf_begin_file,
	.end_file = pf_end_file,
	.begin_ring = rtr__pf_begin_ring,
	.meta = rtr__pf_meta,
	.seal = rtr__pf_seal,
	.events = rtr__pf_events,
	.cut = rtr__pf_cut,
};
