/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto format's events: a TrackEvent packet each on the thread's sequence
 * (two for a complete slice: its BEGIN and END), names and categories interned,
 * arguments as debug annotations. The commonest event, a leaf span whose strings the
 * sequence has had, is two packets copied from the span cache (put_plain_span()).
 */
#include "format/perfetto/intern.h"
#include "format/perfetto/pf.h"
#include "format/perfetto/tracks.h"

#include <string.h>

/* An annotation's name: interned, or inline (kept for later, a full table). */
static char *put_ann_name(struct rtr__pf *pf, char *p, struct rtr__pf_seq *seq,
			  struct pf_pending *pend, const char *key)
{
	if (key == NULL)
		key = "";
	uint32_t iid = pend != NULL ? iid_static(pf, seq, pend, IN_ARG_NAME, key) : 0;

	if (iid != 0)
		return pb_uint(p, RTR__PF_ANN_NAME_IID, iid);
	return pb_string(p, RTR__PF_ANN_NAME, key, strnlen(key, PF_STR_MAX));
}

static char *put_i64_array(char *p, const char *src, uint64_t n)
{
	char *e;

	for (uint64_t k = 0; k < n; k++) {
		p = pb_open(p, RTR__PF_ANN_ARRAY_VALUES, &e);
		p = pb_uint(p, RTR__PF_ANN_INT, (uint64_t)rtr__rec_i64(src + k * sizeof(int64_t)));
		p = pb_close(e, p);
	}
	return p;
}

/* A blob's value into the open annotation: a copied string, arrays. */
static char *put_blob(char *p, uint8_t type, uint64_t val, const char *str)
{
	char *e;

	switch (type) {
	case RTR_ARG_TYPE_STR_COPY:
		return val == UINT64_MAX ? p : pb_string(p, RTR__PF_ANN_STRING, str, val);
	case RTR_ARG_TYPE_I64_ARRAY:
		return put_i64_array(p, str, val);
	case RTR_ARG_TYPE_I64_LISTS: {
		const char *vals = str + val * sizeof(uint32_t);
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len = rtr__rec_u32(str + k * sizeof(uint32_t));
			p = pb_open(p, RTR__PF_ANN_ARRAY_VALUES, &e);
			p = put_i64_array(p, vals, len);
			p = pb_close(e, p);
			vals += (size_t)len * sizeof(int64_t);
		}
		return p;
	}
	case RTR_ARG_TYPE_STR_ARRAY:
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len = rtr__rec_u32(str);
			str += sizeof(len);
			p = pb_open(p, RTR__PF_ANN_ARRAY_VALUES, &e);
			if (len != UINT32_MAX) {
				p = pb_string(p, RTR__PF_ANN_STRING, str, len);
				str += len;
			}
			p = pb_close(e, p);
		}
		return p;
	case RTR_ARG_TYPE_VALUE:
		return rtr__pf_put_value(p, str, val);
	default:
		return p; /* unknown: no value */
	}
}

static const char src_key[] = "src";

/* A code argument's value (rtr__arg_key_code) into the open annotation `ann`, "0x...",
 * and, when the registered resolver knows the call before ra, an annotation "src"
 * after it; returns the end of the open one. */
static char *put_code(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
		      struct pf_pending *pend, char **ann, uint64_t ra)
{
	char hex[24];
	size_t src_len;
	const char *src = rtr__memstack_code_srcline(&w->mem, ra, &src_len);

	p = pb_string(p, RTR__PF_ANN_STRING, hex, (size_t)(rtr__memstack_hex(hex, ra) - hex));
	if (src_len == 0)
		return p;
	p = pb_close(*ann, p);
	p = pb_open(p, RTR__PF_EVENT_DEBUG_ANNOTATIONS, ann);
	p = put_ann_name(pf_of(w), p, seq, pend, src_key);
	return pb_string(p, RTR__PF_ANN_STRING, src, src_len);
}

/*
 * a's arguments as debug_annotations (field 4 of TrackEvent). Names interned on seq
 * through pend, or inline when pend is NULL (kept for a later file). Static string
 * values are interned too when pend is given.
 */
static char *put_annotations(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
			     struct pf_pending *pend, const struct rtr__args *a)
{
	struct rtr__pf *pf = pf_of(w);
	const char *str = rtr__args_blobs(a);

	for (unsigned i = 0; i < a->n; i++) {
		const char *key;
		uint64_t val = rtr__args_get(a, i, &key);
		char *ann;
		p = pb_open(p, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &ann);
		p = put_ann_name(pf, p, seq, pend, key);
		switch (a->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = pb_uint(p, RTR__PF_ANN_INT, val);
			break;
		case RTR_ARG_TYPE_U64:
			p = RTR_UNLIKELY(key == rtr__arg_key_code)
				    ? put_code(w, p, seq, pend, &ann, val)
				    : pb_uint(p, RTR__PF_ANN_UINT, val);
			break;
		case RTR_ARG_TYPE_F64:
			p = pb_fixed64(p, RTR__PF_ANN_DOUBLE, val);
			break;
		case RTR_ARG_TYPE_BOOL:
			p = pb_uint(p, RTR__PF_ANN_BOOL, val != 0);
			break;
		case RTR_ARG_TYPE_STR: {
			if (val == 0)
				break; /* NULL: no value */
			const char *s = (const char *)(uintptr_t)val;
			uint32_t iid = pend != NULL ? iid_static(pf, seq, pend, IN_STRING, s) : 0;
			p = iid != 0 ? pb_uint(p, RTR__PF_ANN_STRING_IID, iid)
				     : pb_string(p, RTR__PF_ANN_STRING, s, strnlen(s, PF_STR_MAX));
			break;
		}
		default:
			p = put_blob(p, a->types[i], val, str);
			str += rtr__args_blob_bytes(a->types[i], val, str);
			break;
		}
		p = pb_close(ann, p);
	}
	return p;
}

char *rtr__pf_put_annotations(struct rtr__writer *w, char *p, const struct rtr__args *a)
{
	return put_annotations(w, p, NULL, NULL, a);
}

char *rtr__pf_put_flag(char *p, const char *key)
{
	char *a;

	p = pb_open(p, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	p = pb_string(p, RTR__PF_ANN_NAME, key, strlen(key));
	p = pb_uint(p, RTR__PF_ANN_BOOL, 1);
	return pb_close(a, p);
}

/* The event's name and category fields. */
static inline char *put_name_cat(struct rtr__pf *pf, char *p, struct rtr__pf_seq *seq,
				 struct pf_pending *pend, const struct pf_te *e)
{
	if (e->cat != NULL) {
		uint32_t iid = iid_static(pf, seq, pend, IN_CATEGORY, e->cat);
		p = iid != 0 ? pb_uint(p, RTR__PF_EVENT_CATEGORY_IIDS, iid)
			     : pb_string(p, RTR__PF_EVENT_CATEGORIES, e->cat,
					 strnlen(e->cat, PF_STR_MAX));
	}
	if (e->copied)
		return pb_string(p, RTR__PF_EVENT_NAME, e->name, e->name_len);
	if (e->name != NULL) {
		uint32_t iid = iid_static(pf, seq, pend, IN_NAME, e->name);
		p = iid != 0 ? pb_uint(p, RTR__PF_EVENT_NAME_IID, iid)
			     : pb_string(p, RTR__PF_EVENT_NAME, e->name,
					 strnlen(e->name, PF_STR_MAX));
	}
	return p;
}

/* A packet's timestamp: a delta on clock 64 when it is not before the sequence's
 * last, else absolute on MONOTONIC. */
static inline char *put_ts(char *p, struct rtr__pf_seq *seq, uint64_t ts)
{
	if (RTR_LIKELY(seq->has_clock && ts >= seq->last_ts)) {
		p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ts - seq->last_ts);
		seq->last_ts = ts;
		return p;
	}
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ts);
	return pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
}

static void keep_span(struct rtr__pf *pf, const struct pf_te *e, const char *body, size_t len);

char *rtr__pf_put_event(struct rtr__writer *w, char *p, struct rtr__pf_seq *seq,
			const struct pf_te *e, const struct rtr__args *args)
{
	struct rtr__pf *pf = pf_of(w);
	struct pf_pending pend;
	char *pkt, *te;

	pend.n = 0;
	/* the first of a file (or since the sequence was cleared) on the sequence's clock
	 * sets clock 64, in a packet of its own before the event's: at the latest time
	 * the sequence has written, never earlier, so that its snapshots never move the
	 * trace clock backwards (trace processor rejects such a snapshot and places the
	 * sequence's later deltas wrongly); an event before it goes absolute */
	if (RTR_UNLIKELY(!seq->has_clock) && !e->absolute)
		p = rtr__pf_put_delta_clock(p, seq, e->ts > seq->last_ts ? e->ts : seq->last_ts);
	p = pkt_begin(p, &pkt);
	if (e->absolute) {
		p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, e->ts);
		p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
	} else {
		p = put_ts(p, seq, e->ts);
	}
	p = pb_open(p, RTR__PF_PACKET_TRACK_EVENT, &te);
	p = pb_uint(p, RTR__PF_EVENT_TYPE, e->type);
	if (e->track != 0)
		p = pb_uint(p, RTR__PF_EVENT_TRACK_UUID, e->track);
	if (e->type != RTR__PF_TYPE_SLICE_END && e->type != RTR__PF_TYPE_COUNTER)
		p = put_name_cat(pf, p, seq, &pend, e);
	if (e->counter == 1)
		p = pb_uint(p, RTR__PF_EVENT_COUNTER_VALUE, e->value);
	else if (e->counter == 2)
		p = pb_fixed64(p, RTR__PF_EVENT_DOUBLE_COUNTER_VALUE, e->value);
	if (e->flow != 0)
		p = pb_fixed64(p, RTR__PF_EVENT_FLOW_IDS, e->flow);
	if (e->end_flow != 0)
		p = pb_fixed64(p, RTR__PF_EVENT_TERMINATING_FLOW_IDS, e->end_flow);
	if (args != NULL && args->n > 0)
		p = put_annotations(w, p, seq, &pend, args);
	if (e->extra_len > 0) {
		memmove(p, e->extra, e->extra_len); /* a cut's may lie ahead in the chunk */
		p += e->extra_len;
	}
	p = pb_close(te, p);
	if (e->keep)
		keep_span(pf, e, te - 1, (size_t)(p - (te - 1)));
	if (RTR_UNLIKELY(pend.n > 0)) /* strings new to the sequence */
		p = rtr__pf_put_interned(pf, p, &pend);
	p = put_seq(p, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
	return pkt_end(pkt, p);
}

/* ------------------------------------------------------------------------- */
/* The span cache                                                             */

static inline struct rtr__pf_span *span_slot(struct rtr__pf *pf, const char *name, const char *cat)
{
	uint64_t x = ((uintptr_t)name ^ ((uintptr_t)cat * 0x9e3779b97f4a7c15ull)) *
		     0x9e3779b97f4a7c15ull;

	return &pf->spans[x >> (64 - SPAN_BITS)];
}

/* A folded span with a static name and no arguments, on its thread's clock, whose
 * iids the sequence has had: its two packets from the span cache. False, having
 * written nothing, for any other (encode() then writes it). */
static inline bool put_plain_span(struct rtr__writer *w, struct rtr__pf *pf, struct rtr__ring *r,
				  struct rtr__pf_seq *seq, const struct rtr__event *ev)
{
	char *p = seq_reserve(w, r, seq, 64), *pkt;

	if (seq->id >= 0x80 || !seq->has_clock)
		return false;
	uint64_t ts = ev->ts, end_ts = ev->ts + ev->dur;
	if (RTR_UNLIKELY(ts < seq->last_ts || end_ts < ts))
		return false;
	struct rtr__pf_span *c = span_slot(pf, ev->name, ev->cat);
	if (RTR_UNLIKELY(c->a != (uintptr_t)ev->name || c->b != (uintptr_t)ev->cat ||
			 c->epoch != pf->epoch || !sent_on(seq, c->cat_iid) ||
			 !sent_on(seq, c->name_iid)))
		return false;

	p = pkt_begin(p, &pkt);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, ts - seq->last_ts);
	memcpy(p, c->bytes, sizeof(c->bytes));
	p += c->len;
	/* the sequence's id and flags: two one-byte tags (the id is under 0x80) */
	const char tail[4] = {RTR__PF_PACKET_SEQUENCE_ID << 3, (char)seq->id,
			      RTR__PF_PACKET_SEQUENCE_FLAGS << 3,
			      RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE};
	memcpy(p, tail, sizeof(tail));
	p = pkt_end(pkt, p + sizeof(tail));
	p = pkt_begin(p, &pkt);
	p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, end_ts - ts);
	/* a TrackEvent of two bytes: its type, SLICE_END */
	const char end_body[4] = {RTR__PF_PACKET_TRACK_EVENT << 3 | RTR__PB_LEN, 2,
				  RTR__PF_EVENT_TYPE << 3, RTR__PF_TYPE_SLICE_END};
	memcpy(p, end_body, sizeof(end_body));
	memcpy(p + sizeof(end_body), tail, sizeof(tail));
	p = pkt_end(pkt, p + sizeof(end_body) + sizeof(tail));
	seq->last_ts = end_ts;
	pf_commit(w, p, ev->count);
	return true;
}

/* Keep a folded span's BEGIN body (written by rtr__pf_put_event() from `body`) for
 * put_plain_span(). */
static void keep_span(struct rtr__pf *pf, const struct pf_te *e, const char *body, size_t len)
{
	const char *q = body + 2, *end = body + len; /* past the tag and the length */
	uint32_t cat = 0, name = 0;

	if (len > sizeof(((struct rtr__pf_span *)0)->bytes) || (unsigned char)body[1] != len - 2)
		return;
	while (q < end) { /* its fields: varints only (type, category iid, name iid) */
		unsigned tag = (unsigned char)*q++;
		uint64_t v = 0;
		for (int shift = 0; q < end; shift += 7) {
			unsigned char b = (unsigned char)*q++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		if ((tag & 7) != RTR__PB_VARINT)
			return;
		if (tag >> 3 == RTR__PF_EVENT_CATEGORY_IIDS)
			cat = (uint32_t)v;
		else if (tag >> 3 == RTR__PF_EVENT_NAME_IID)
			name = (uint32_t)v;
	}
	if (cat == 0 || name == 0)
		return; /* inline strings: not kept */
	struct rtr__pf_span *c = span_slot(pf, e->name, e->cat);
	c->a = (uintptr_t)e->name;
	c->b = (uintptr_t)e->cat;
	c->epoch = pf->epoch;
	c->cat_iid = cat;
	c->name_iid = name;
	c->len = (uint32_t)len;
	memcpy(c->bytes, body, len);
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

/* The most an event's packets take: two packets, a clock snapshot, the arguments. */
static inline size_t event_bound(const struct rtr__event *ev)
{
	size_t bound = 2 * PKT_FIXED + 6 * PF_STR_MAX + pf_args_bound(&ev->args);

	for (uint32_t i = 0; i < ev->nmore; i++)
		bound += pf_args_bound(&ev->more[i]);
	return bound;
}

/* The more lists of ev (an X's folded arguments, an E's added ones) as annotations
 * with inline names, into the scratch: they go on an END. */
static size_t more_annotations(struct rtr__writer *w, const struct rtr__event *ev)
{
	struct rtr__pf *pf = pf_of(w);
	char *q = pf->tmp;

	for (uint32_t i = 0; i < ev->nmore; i++)
		q = put_annotations(w, q, NULL, NULL, &ev->more[i]);
	return (size_t)(q - pf->tmp);
}

/* The track of ev's packets besides its thread's (0: the thread's, set by the
 * sequence's defaults), declared on the writer's sequence if new to the file; *absolute
 * when its times are not on the thread's clock. 0 too for a counter past the file's
 * tracks. */
static uint64_t event_track(struct rtr__writer *w, const struct rtr__event *ev,
			    const struct pf_te *e, int *absolute)
{
	size_t len = e->copied ? e->name_len : e->name ? strnlen(e->name, PF_STR_MAX) : 0;
	const char *name = e->name != NULL ? e->name : "";

	*absolute = 0;
	if (RTR_UNLIKELY(ev->flags & RTR__EVF_TRACK)) { /* absolute time on the lane's track */
		*absolute = 1;
		return rtr__pf_lane_track(w, ev->x.track.track, ev->x.track.lane);
	}
	switch (ev->type) {
	case RTR__EV_INSTANT:
		return ev->scope == RTR__SCOPE_GLOBAL	 ? rtr__pf_global_track(w)
		       : ev->scope == RTR__SCOPE_PROCESS ? process_uuid(own_pid(w))
							 : 0;
	case RTR__EV_COUNTER:
		return rtr__pf_counter_track(w, name, len, ev->cat, 0);
	case RTR__EV_ASYNC_BEGIN:
	case RTR__EV_ASYNC_INSTANT:
	case RTR__EV_ASYNC_END: {
		uint64_t track = rtr__pf_async_track(w, ev->cat, ev->value, name, len);
		return track != 0 ? track : process_uuid(own_pid(w));
	}
	default:
		return 0;
	}
}

/* Room for ev's packets on seq, its track (e->track, e->absolute) declared in the file
 * the room is in: the room may end the file, in which the declaration went. */
static char *event_room(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			const struct rtr__event *ev, struct pf_te *e, size_t bound)
{
	uint64_t file;
	char *p;

	do {
		file = w->out.file_id;
		e->track = event_track(w, ev, e, &e->absolute);
		p = seq_reserve(w, r, seq, bound);
	} while (RTR_UNLIKELY(file != w->out.file_id));
	return p;
}

/* The counter track of name (and cat) and the room for bound bytes after it, at *p. */
static uint64_t counter_in_room(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
				const char *name, size_t len, const char *cat, int bytes,
				size_t bound, char **p)
{
	uint64_t file, track;

	do {
		file = w->out.file_id;
		track = rtr__pf_counter_track(w, name, len, cat, bytes);
		*p = seq_reserve(w, r, seq, bound);
	} while (RTR_UNLIKELY(file != w->out.file_id));
	return track;
}

/* A memory event: an instant on the thread, and the device's bytes in use. */
static void write_mem(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
		      const struct rtr__event *ev)
{
	char name[32], *a;
	int64_t device = ev->x.mem.device;
	size_t len = device == RTR_MEM_HOST
			     ? (size_t)(stpcpy(name, "memory host") - name)
			     : (size_t)(rtr__jsontext_i64(stpcpy(name, "memory device "), device) -
					name);
	char extra[512], *q = extra;
	q = pb_open(q, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	q = pb_string(q, RTR__PF_ANN_NAME, "addr", 4);
	q = pb_uint(q, RTR__PF_ANN_POINTER, ev->x.mem.addr);
	q = pb_close(a, q);
	q = pb_open(q, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	q = pb_string(q, RTR__PF_ANN_NAME, "bytes", 5);
	q = pb_uint(q, RTR__PF_ANN_UINT, ev->x.mem.bytes);
	q = pb_close(a, q);
	q = pb_open(q, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	q = pb_string(q, RTR__PF_ANN_NAME, "device", 6);
	q = pb_uint(q, RTR__PF_ANN_INT, (uint64_t)device);
	q = pb_close(a, q);

	struct pf_te e = {.type = RTR__PF_TYPE_INSTANT,
			  .ts = ev->ts,
			  .name = ev->type == RTR__EV_MEM_ALLOC ? "alloc" : "free",
			  .cat = "memory",
			  .extra = extra,
			  .extra_len = (size_t)(q - extra)};
	char *p;
	uint64_t track =
		counter_in_room(w, r, seq, name, len, NULL, 1, 4 * PKT_FIXED + 6 * PF_STR_MAX, &p);
	p = rtr__pf_put_event(w, p, seq, &e, NULL);
	if (track != 0) {
		struct pf_te c = {.type = RTR__PF_TYPE_COUNTER,
				  .ts = ev->ts,
				  .track = track,
				  .counter = 1,
				  .value = ev->x.mem.in_use};
		p = rtr__pf_put_event(w, p, seq, &c, NULL);
	}
	pf_commit(w, p, ev->count);
}

/* A stack sample: an instant whose annotation "stack" lists the frames' names. */
static void write_stack(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			const struct rtr__event *ev)
{
	char *extra = pf_of(w)->tmp, *q = extra, *a, *e;

	q = pb_open(q, RTR__PF_EVENT_DEBUG_ANNOTATIONS, &a);
	q = pb_string(q, RTR__PF_ANN_NAME, "stack", 5);
	for (uint32_t k = 0; k < ev->x.stack.n; k++) {
		uint64_t addr;
		size_t len;
		memcpy(&addr, ev->x.stack.frames + k * sizeof(addr), sizeof(addr));
		const char *text = rtr__memstack_symbol(&w->mem, addr, &len);
		q = pb_open(q, RTR__PF_ANN_ARRAY_VALUES, &e);
		q = pb_string(q, RTR__PF_ANN_STRING, text, len);
		q = pb_close(e, q);
	}
	q = pb_close(a, q);
	struct pf_te te = {.type = RTR__PF_TYPE_INSTANT,
			   .ts = ev->ts,
			   .name = ev->name != NULL ? ev->name : "stack sample",
			   .cat = ev->cat,
			   .extra = extra,
			   .extra_len = (size_t)(q - extra)};
	char *p = seq_reserve(w, r, seq, 2 * PKT_FIXED + 6 * PF_STR_MAX + te.extra_len);
	p = rtr__pf_put_event(w, p, seq, &te, NULL);
	pf_commit(w, p, ev->count);
}

/* The process's or a thread's metadata: its descriptor again. */
static void write_meta(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
		       const struct rtr__event *ev)
{
	struct rtr__pf *pf = pf_of(w);
	char *p;

	switch (ev->type) {
	case RTR__EV_THREAD_NAME: /* the ring has the name (rtr__event_prepare()) */
		p = seq_reserve(w, r, seq, PKT_FIXED + 3 * sizeof(r->name));
		p = rtr__pf_put_thread(w, p, r, seq, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE,
				       0);
		pf_commit(w, p, ev->count);
		return;
	case RTR__EV_THREAD_SORT:
		seq->sort_index = (int)(int64_t)ev->value;
		seq->has_sort = 1;
		p = seq_reserve(w, r, seq, PKT_FIXED + 3 * sizeof(r->name));
		p = rtr__pf_put_thread(w, p, r, seq, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE,
				       0);
		pf_commit(w, p, ev->count);
		return;
	case RTR__EV_PROCESS_LABEL: {
		size_t n =
			ev->name_len < sizeof(pf->label) - 1 ? ev->name_len : sizeof(pf->label) - 1;
		memcpy(pf->label, ev->name, n);
		pf->label[n] = '\0';
		break;
	}
	default: /* RTR__EV_PROCESS_SORT */
		pf->label_sort = (int)(int64_t)ev->value;
		pf->has_sort = 1;
		break;
	}
	p = out_reserve(w, PKT_FIXED + 6 * sizeof(pf->label) + 3 * sizeof(w->s.process_name));
	p = rtr__pf_put_process(w, p, rtr__pf_writer_flags(w));
	pf_commit(w, p, ev->count);
}

/* A counter series, a track per argument: "name key". */
static void write_counters(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
			   const struct rtr__event *ev, size_t bound)
{
	const char *base = ev->name != NULL ? ev->name : "";
	size_t nl = (ev->flags & RTR__EVF_COPIED) ? ev->name_len : strnlen(base, PF_STR_MAX);
	char *p = seq_reserve(w, r, seq, bound);

	for (unsigned i = 0; i < ev->args.n; i++) {
		const char *key;
		uint64_t val = rtr__args_get(&ev->args, i, &key);
		const char *k = key != NULL ? key : "";
		char name[2 * PF_STR_MAX + 2];
		size_t kl = strnlen(k, PF_STR_MAX);
		memcpy(name, base, nl);
		name[nl] = ' ';
		memcpy(name + nl + 1, k, kl);
		pf_commit(w, p, 0); /* the series before: descriptors may follow */
		uint64_t track =
			counter_in_room(w, r, seq, name, nl + 1 + kl, ev->cat, 0, bound, &p);
		if (track == 0)
			continue;
		struct pf_te c = {.type = RTR__PF_TYPE_COUNTER, .ts = ev->ts, .track = track};
		uint8_t type = ev->args.types[i];
		c.counter = type == RTR_ARG_TYPE_F64 ? 2 : 1;
		c.value = type == RTR_ARG_TYPE_BOOL ? val != 0 : val;
		p = rtr__pf_put_event(w, p, seq, &c, NULL);
	}
	pf_commit(w, p, ev->count);
}

/* ev, any event but a plain span found in the span cache. */
static void encode(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
		   const struct rtr__event *ev)
{
	struct rtr__pf *pf = pf_of(w);
	size_t bound = event_bound(ev);
	struct pf_te e;

	pf_batch_room(w, bound);
	switch (ev->type) {
	case RTR__EV_SKIP: /* kept for the open slice's E: it counts as written now */
		pf_commit(w, out_reserve(w, 0), ev->count);
		return;
	case RTR__EV_MEM_ALLOC:
	case RTR__EV_MEM_FREE:
		write_mem(w, r, seq, ev);
		return;
	case RTR__EV_STACK:
		write_stack(w, r, seq, ev);
		return;
	case RTR__EV_THREAD_NAME:
	case RTR__EV_THREAD_SORT:
	case RTR__EV_PROCESS_LABEL:
	case RTR__EV_PROCESS_SORT:
		write_meta(w, r, seq, ev);
		return;
	case RTR__EV_COUNTERS:
		write_counters(w, r, seq, ev, bound);
		return;
	default:
		break;
	}
	memset(&e, 0, sizeof(e));
	e.copied = (ev->flags & RTR__EVF_COPIED) != 0;
	e.name = ev->name;
	e.name_len = ev->name_len;
	e.cat = ev->cat;
	e.ts = ev->ts;
	char *p = event_room(w, r, seq, ev, &e, bound);

	switch (ev->type) {
	case RTR__EV_SPAN: {
		if (ev->flags & RTR__EVF_CODE) { /* the instrument library's function */
			size_t len;
			e.name = rtr__memstack_function(&w->mem, ev->x.code.addr, &len);
			e.name_len = len;
			e.copied = 1;
		}
		e.type = RTR__PF_TYPE_SLICE_BEGIN;
		e.keep = ev->count == 2 && ev->flags == RTR__EVF_TIMELINE && ev->args.n == 0 &&
			 ev->nmore == 0;
		p = rtr__pf_put_event(w, p, seq, &e, &ev->args);
		struct pf_te x = {.type = RTR__PF_TYPE_SLICE_END,
				  .ts = ev->ts + ev->dur,
				  .track = e.track,
				  .absolute = e.absolute};
		if (ev->nmore > 0) { /* the folded rtr_scope_arg_* arguments go on the END */
			x.extra = pf->tmp;
			x.extra_len = more_annotations(w, ev);
		}
		p = rtr__pf_put_event(w, p, seq, &x, NULL);
		break;
	}
	case RTR__EV_BEGIN:
		e.type = RTR__PF_TYPE_SLICE_BEGIN;
		p = rtr__pf_put_event(w, p, seq, &e, &ev->args);
		break;
	case RTR__EV_END:
		e.type = RTR__PF_TYPE_SLICE_END;
		if (ev->nmore > 0) { /* the arguments added to the slice */
			e.extra = pf->tmp;
			e.extra_len = more_annotations(w, ev);
		}
		p = rtr__pf_put_event(w, p, seq, &e, NULL);
		break;
	case RTR__EV_INSTANT:
		e.type = RTR__PF_TYPE_INSTANT;
		p = rtr__pf_put_event(w, p, seq, &e, &ev->args);
		break;
	case RTR__EV_COUNTER:
		if (e.track == 0)
			break; /* the file has too many tracks */
		e.type = RTR__PF_TYPE_COUNTER;
		e.counter = (ev->flags & RTR__EVF_DOUBLE) ? 2 : 1;
		e.value = ev->value;
		p = rtr__pf_put_event(w, p, seq, &e, NULL);
		break;
	case RTR__EV_FLOW_START:
	case RTR__EV_FLOW_STEP:
	case RTR__EV_FLOW_END:
		e.type = RTR__PF_TYPE_INSTANT;
		if (ev->type == RTR__EV_FLOW_END)
			e.end_flow = ev->value;
		else
			e.flow = ev->value;
		p = rtr__pf_put_event(w, p, seq, &e, &ev->args);
		break;
	default: /* async: on the track of (category, id) */
		e.type = ev->type == RTR__EV_ASYNC_BEGIN ? RTR__PF_TYPE_SLICE_BEGIN
			 : ev->type == RTR__EV_ASYNC_END ? RTR__PF_TYPE_SLICE_END
							 : RTR__PF_TYPE_INSTANT;
		p = rtr__pf_put_event(w, p, seq, &e, &ev->args);
		break;
	}
	pf_commit(w, p, ev->count);
}

uint64_t rtr__pf_events(struct rtr__writer *w, struct rtr__batch *b)
{
	struct rtr__pf *pf = pf_of(w);
	struct rtr__pf_seq *seq = rtr__pf_seq_of(w, b->ring);
	struct rtr__event *ev;
	uint64_t events = 0;

	if (RTR_UNLIKELY(seq == NULL)) /* without memory: nothing of this ring */
		return 0;
	/* (each packet's room makes the sequence ready in its file: seq_reserve()) */
	for (ev = rtr__batch_first(w, b); ev != NULL; ev = rtr__batch_next(w, b, ev)) {
		events += ev->count;
		if (ev->type == RTR__EV_SPAN && ev->flags == RTR__EVF_TIMELINE && ev->count == 2 &&
		    ev->args.n == 0 && ev->nmore == 0) {
			pf_batch_room(w, 64);
			if (put_plain_span(w, pf, b->ring, seq, ev))
				continue;
		}
		encode(w, b->ring, seq, ev);
	}
	return events;
}

void rtr__pf_begin_ring(struct rtr__writer *w, struct rtr__ring *r)
{
	struct rtr__pf *pf = pf_of(w);

	(void)r;
	/* Between packets, the only place the table may be emptied: with room left for
	 * a batch's new strings (past it, intern() has them written inline). */
	if (pf->nslots_used >= PF_SLOTS / 4 || pf->arena_used >= PF_ARENA / 2)
		rtr__pf_intern_reset(pf);
}

void rtr__pf_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value)
{
	struct rtr__pf_seq *seq = rtr__pf_seq_of(w, r);
	char *p;

	switch (what) {
	case RTR__WMETA_THREAD_NAME:
		break; /* the descriptor that clears the sequence names it */
	case RTR__WMETA_THREAD_SORT:
		if (seq == NULL)
			break;
		seq->sort_index = (int)value;
		seq->has_sort = 1;
		p = seq_reserve(w, r, seq, PKT_FIXED + 3 * sizeof(r->name));
		p = rtr__pf_put_thread(w, p, r, seq, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE,
				       0);
		pf_commit(w, p, 0);
		break;
	case RTR__WMETA_DROPS: { /* on r's sequence, as in JSON on its thread */
		char *pkt, *te;
		p = seq != NULL ? seq_reserve(w, r, seq, PKT_FIXED) : out_reserve(w, PKT_FIXED);
		p = pkt_begin(p, &pkt);
		p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP, rtr__mono_ns());
		p = pb_uint(p, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, RTR__PF_BUILTIN_MONOTONIC);
		p = pb_open(p, RTR__PF_PACKET_TRACK_EVENT, &te);
		p = pb_uint(p, RTR__PF_EVENT_TYPE, RTR__PF_TYPE_COUNTER);
		p = pb_uint(p, RTR__PF_EVENT_TRACK_UUID,
			    process_uuid(own_pid(w)) | COUNTER_TRACK | OWN_DROPPED);
		p = pb_uint(p, RTR__PF_EVENT_COUNTER_VALUE, (uint64_t)value);
		p = pb_close(te, p);
		p = seq != NULL ? put_seq(p, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE)
				: put_seq(p, 1, rtr__pf_writer_flags(w));
		p = pkt_end(pkt, p);
		pf_commit(w, p, 0);
		break;
	}
	}
}
