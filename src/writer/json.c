/* SPDX-License-Identifier: MIT */
/*
 * The JSON encoder: records -> Trace Event lines, one event per line, each ending in
 * ",\n" (the file's bare-array form, framing.c).
 *
 * The drain hands over a batch of a ring's events (rtr__format.events); this file
 * decodes each (record.h) and writes its line. Before a line is encoded the encoder
 * reserves the most it can take (line_bound()); strings come from the intern cache,
 * already escaped, and are copied with memcpy. Most lines take their head, up to the
 * timestamp, whole from the head cache (struct rtr__head, json.h), and their end, the
 * pid and tid, from a copy made once per thread (use_ids()). Everything per event is
 * a direct call or inline here; only the batch comes through the format's table.
 *
 * Lines that are not the common event (metadata, memory events, stack samples,
 * track lanes' names) are json_meta.c's; the file's head and end marker framing.c's.
 */
#include "writer/json.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "producer/tracks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Most bytes one argument takes: key, value, punctuation. */
#define ARG_BOUND (RTR_INTERN_MAX_ESCAPED + COPY_ESCAPED + 40)

static inline size_t line_bound(const struct rtr__rec *rec)
{
	return LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
	       (rec->nargs ? (size_t)rec->nargs * ARG_BOUND + RTR_JSON_ESCAPE_BOUND(rec->ext) : 0);
}

static char *put_f64_bits(char *p, uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return rtr__json_f64(p, d);
}

/* `n` int64 values, unaligned at `src`, as a JSON array. */
static char *put_i64_list(char *p, const char *src, uint64_t n)
{
	*p++ = '[';
	for (uint64_t k = 0; k < n; k++) {
		int64_t x;
		memcpy(&x, src + k * sizeof(x), sizeof(x));
		if (k > 0)
			*p++ = ',';
		p = rtr__json_i64(p, x);
	}
	*p++ = ']';
	return p;
}

/* `0x` and the hex digits of an id, quoted: viewers take ids as strings or integers,
 * and a 64-bit integer would lose bits in a JavaScript viewer. */
static char *put_hex_id(char *p, uint64_t id)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	p = PUT_LIT(p, ",\"id\":\"0x");
	while (shift > 0 && ((id >> shift) & 0xf) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(id >> shift) & 0xf];
	*p++ = '"';
	return p;
}

/* An argument's `"key":`, from the head cache when it can (a key is a static string). */
static inline char *put_arg_key(struct rtr__writer *w, char *p, uint64_t key)
{
	struct rtr__head *h = &w->json.heads[head_slot(K_ARG_KEY, key, 0)];

	if (RTR_LIKELY(h->kind == K_ARG_KEY && h->a == key)) {
		memcpy(p, h->text, HEAD_TEXT);
		return p + h->len;
	}
	char *start = p;
	*p++ = '"';
	if (key != 0)
		p = put_static(w, p, (const char *)(uintptr_t)key);
	p = PUT_LIT(p, "\":");
	size_t len = (size_t)(p - start);
	if (len <= HEAD_TEXT) {
		h->a = key;
		h->b = 0;
		h->kind = K_ARG_KEY;
		h->len = (uint32_t)len;
		memcpy(h->text, start, len);
	}
	return p;
}

static char *put_args(struct rtr__writer *w, char *p, const struct rtr__rec *rec,
		      const struct rtr__rec_view *v)
{
	const char *str = v->strings;

	p = PUT_LIT(p, ",\"args\":{");
	for (unsigned i = 0; i < rec->nargs; i++) {
		uint64_t key, val = rtr__rec_arg(v, i, &key);
		if (i > 0)
			*p++ = ',';
		p = put_arg_key(w, p, key);
		switch (v->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = rtr__json_i64(p, (int64_t)val);
			break;
		case RTR_ARG_TYPE_U64:
			p = rtr__json_u64(p, val);
			break;
		case RTR_ARG_TYPE_F64:
			p = put_f64_bits(p, val);
			break;
		case RTR_ARG_TYPE_BOOL:
			if (rec->kind == RTR__K_COUNTERS) /* a series takes numbers only */
				*p++ = val ? '1' : '0';
			else
				p = val ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
			break;
		case RTR_ARG_TYPE_STR:
			if (val == 0) {
				p = PUT_LIT(p, "null");
				break;
			}
			*p++ = '"';
			p = put_static(w, p, (const char *)(uintptr_t)val);
			*p++ = '"';
			break;
		case RTR_ARG_TYPE_STR_COPY:
			if (val == UINT64_MAX) {
				p = PUT_LIT(p, "null");
				break;
			}
			*p++ = '"';
			p = rtr__json_escape(p, str, val);
			str += val;
			*p++ = '"';
			break;
		case RTR_ARG_TYPE_I64_ARRAY:
			p = put_i64_list(p, str, val);
			str += val * sizeof(int64_t);
			break;
		case RTR_ARG_TYPE_I64_LISTS: {
			const char *vals = str + val * sizeof(uint32_t);
			*p++ = '[';
			for (uint64_t k = 0; k < val; k++) {
				uint32_t len;
				memcpy(&len, str + k * sizeof(len), sizeof(len));
				if (k > 0)
					*p++ = ',';
				p = put_i64_list(p, vals, len);
				vals += (size_t)len * sizeof(int64_t);
			}
			*p++ = ']';
			str = vals;
			break;
		}
		case RTR_ARG_TYPE_STR_ARRAY:
			*p++ = '[';
			for (uint64_t k = 0; k < val; k++) {
				uint32_t len;
				memcpy(&len, str, sizeof(len));
				str += sizeof(len);
				if (k > 0)
					*p++ = ',';
				if (len == UINT32_MAX) {
					p = PUT_LIT(p, "null");
					continue;
				}
				*p++ = '"';
				p = rtr__json_escape(p, str, len);
				*p++ = '"';
				str += len;
			}
			*p++ = ']';
			break;
		default:
			p = PUT_LIT(p, "null");
			break;
		}
	}
	*p++ = '}';
	return p;
}

static char *put_name(struct rtr__writer *w, char *p, const struct rtr__rec *rec,
		      const struct rtr__rec_view *v)
{
	p = PUT_LIT(p, ",\"name\":\"");
	if (rec->flags & RTR__F_NAME_COPY) {
		struct rtr__istr is = rtr__intern_bytes(&w->json.intern, v->name, v->name_len);
		p = put(p, is.bytes, is.len);
	} else if (rec->a != 0) {
		p = put_static(w, p, (const char *)(uintptr_t)rec->a);
	}
	*p++ = '"';
	return p;
}

static char *put_cat(struct rtr__writer *w, char *p, const char *cat)
{
	if (cat == NULL)
		return p;
	p = PUT_LIT(p, ",\"cat\":\"");
	p = put_static(w, p, cat);
	*p++ = '"';
	return p;
}

/* An event line's head, from `{"ph":` through `"ts":`, encoded afresh; kind is
 * rec->kind, or K_SPAN for a B written with its E. */
char *rtr__json_encode_head(struct rtr__writer *w, char *p, uint32_t kind,
			    const struct rtr__rec *rec, const struct rtr__rec_view *v)
{
	unsigned k = kind & 0xffu; /* above: an instant's scope flags */

	p = PUT_LIT(p, "{\"ph\":\"");
	*p++ = k == K_SPAN ? 'X' : rtr__kind_phase(k);
	*p++ = '"';
	switch (k) {
	case RTR__K_STACK: /* a thread-scoped instant with a stack */
		p = PUT_LIT(p, ",\"s\":\"t\"");
		break;
	case RTR__K_INSTANT:
		p = rec->flags & RTR__F_SCOPE_GLOBAL	? PUT_LIT(p, ",\"s\":\"g\"")
		    : rec->flags & RTR__F_SCOPE_PROCESS ? PUT_LIT(p, ",\"s\":\"p\"")
							: PUT_LIT(p, ",\"s\":\"t\"");
		break;
	case RTR__K_FLOW_END: /* bound to the enclosing slice */
		p = PUT_LIT(p, ",\"bp\":\"e\"");
		break;
	case RTR__K_ASYNC_BEGIN:
	case RTR__K_ASYNC_INSTANT:
	case RTR__K_ASYNC_END:
		/* async events need a category to match on */
		if (rec->b == 0) {
			p = PUT_LIT(p, ",\"cat\":\"async\"");
			p = put_name(w, p, rec, v);
			return PUT_LIT(p, ",\"ts\":");
		}
		break;
	case RTR__K_SCOPE: {
		const struct rtr_site *site = (const struct rtr_site *)(uintptr_t)rec->a;
		p = put_cat(w, p, site->cat);
		p = PUT_LIT(p, ",\"name\":\"");
		if (site->name != NULL)
			p = put_static(w, p, site->name);
		return PUT_LIT(p, "\",\"ts\":");
	}
	}
	p = put_cat(w, p, (const char *)(uintptr_t)rec->b);
	p = put_name(w, p, rec, v);
	return PUT_LIT(p, ",\"ts\":");
}

/* End the lines of thread tid with w->json.ids from now on. */
static inline void use_ids(struct rtr__writer *w, int32_t tid)
{
	if (RTR_LIKELY(w->json.ids_tid == tid))
		return;
	char *p = put_pid_tid(w, w->json.ids, tid);
	p = PUT_LIT(p, "},\n");
	w->json.ids_len = (size_t)(p - w->json.ids);
	w->json.ids_tid = tid;
}

/* ,"pid":P,"tid":T},\n for lane k of track t, into ids; returns its length. */
static size_t track_ids(const struct rtr_track *t, unsigned k, char ids[48])
{
	char *p = PUT_LIT(ids, ",\"pid\":");
	p = rtr__json_u64(p, t->pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = rtr__json_u64(p, t->tid + k);
	p = PUT_LIT(p, "},\n");
	return (size_t)(p - ids);
}

/*
 * Encode the event whose header is `rec` at record index `pos` of ring r, whose
 * thread's ids are in w->json.ids (use_ids()). `end` is NULL, or the E that rec, a B,
 * is folded with (span_end()): the line is then an X for both, and counts two.
 * Returns false, having written nothing, when the record does not decode (its
 * framing, kind and size are checked before: rtr__rec_framed()).
 */
static bool encode_event(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			 uint32_t pos, const struct rtr__rec *end)
{
	struct rtr__rec_view v;
	uint64_t ts;

	if (rec->ext == 0) {
		memset(&v, 0, sizeof(v));
	} else if (rtr__rec_one_word(rec)) {
		memset(&v, 0, sizeof(v)); /* one payload word: read it in place */
		v.word = rtr__ring_rec(r, pos + 1)->ts;
	} else if (rtr__kind_frames(rec->kind)) {
		memset(&v, 0, sizeof(v)); /* frames: encode_stack() reads them */
		if (!rtr__rec_frames_ok(rec))
			return false;
	} else if (!rtr__rec_decode(rec, rtr__ring_ext(r, pos, rec->ext, w->json.scratch), &v)) {
		return false;
	}

	if (RTR_UNLIKELY((rec->flags & RTR__F_NAME_COPY) && v.name == NULL))
		return false; /* a copied name without its bytes */
	if (rec->kind == RTR__K_THREAD_NAME) {
		if (v.name == NULL)
			return false;
		rtr__json_thread_name(w, r, v.name, v.name_len, 1);
		return true;
	}
	if (RTR_UNLIKELY(rec->kind == RTR__K_META))
		return rtr__json_meta_record(w, r, rec, &v);
	if (RTR_UNLIKELY(rec->kind >= RTR__K_MEM_ALLOC && rec->kind <= RTR__K_STACK)) {
		rtr__json_memstack(w, r, rec, pos, v.word);
		return true;
	}

	/* The end of the line: the thread's ids, or a track lane's. */
	const char *ids = w->json.ids;
	size_t ids_len = w->json.ids_len;
	char lane_ids[48];
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
		rtr__json_track_meta(w, t, k);
		ids_len = track_ids(t, k, lane_ids);
		ids = lane_ids;
		ts = rtr__writer_rel_ns(w, host);
	} else if (rec->flags & RTR__F_TS_NS) {
		ts = rtr__writer_rel_ns(w, rec->ts);
	} else {
		ts = rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts));
	}

	char *p = out_reserve(w, line_bound(rec));
	/* an instant's scope is part of its head */
	uint32_t key = end != NULL ? K_SPAN
				   : rec->kind | (uint32_t)(rec->flags & (RTR__F_SCOPE_PROCESS |
									  RTR__F_SCOPE_GLOBAL))
							 << 8;
	p = put_head(w, p, key, rec, &v);
	p = rtr__json_us(p, ts);
	if (rtr__kind_has_id(rec->kind)) {
		p = put_hex_id(p, v.word);
	} else if (end != NULL) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us(p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, end->ts)) - ts);
	} else if (rec->kind == RTR__K_SCOPE) {
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us(
			p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts + rec->b)) - ts);
	} else if (rec->kind == RTR__K_COMPLETE) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us(
			p, rtr__writer_rel_ns(w, host_end != 0 ? host_end : rec->ts + v.word) - ts);
	}
	memcpy(p, ids, sizeof(w->json.ids));
	p += ids_len; /* the line ends here unless it has arguments */
	if (RTR_UNLIKELY(rec->kind == RTR__K_COUNTER_I64 || rec->kind == RTR__K_COUNTER_F64 ||
			 rec->nargs > 0)) {
		p -= sizeof("},\n") - 1; /* the arguments go before the line's end */
		if (rec->kind == RTR__K_COUNTER_I64) {
			p = PUT_LIT(p, ",\"args\":{\"value\":");
			p = rtr__json_i64(p, (int64_t)v.word);
			*p++ = '}';
		} else if (rec->kind == RTR__K_COUNTER_F64) {
			p = PUT_LIT(p, ",\"args\":{\"value\":");
			p = put_f64_bits(p, v.word);
			*p++ = '}';
		} else {
			p = put_args(w, p, rec, &v);
		}
		p = PUT_LIT(p, "},\n");
	}
	out_commit(w, p, end != NULL ? 2 : 1);
	return true;
}

/* rtr__format.events: the batch loop, encode_event() inline in it (its one call). */
static uint64_t json_events(struct rtr__writer *w, struct rtr__ring *r, struct rtr__drained *ev,
			    uint32_t n)
{
	uint64_t events = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t pos = ev[i].pos;
		const struct rtr__rec *rec = rtr__ring_rec(r, pos), *end = ev[i].end;
		for (;;) {
			if (RTR_LIKELY(encode_event(w, r, rec, pos, end))) {
				events += end != NULL ? 2 : 1;
				break;
			}
			ev[i].bad = 1;
			if (end == NULL)
				break;
			/* A folded E is then written as an event of its own: it has no
			 * continuation and no flags (the drain's folding), so it encodes. */
			pos += rtr__rec_records(rec->ext);
			rec = end;
			end = NULL;
		}
	}
	return events;
}

/* rtr__format.begin_ring */
static void json_begin_ring(struct rtr__writer *w, const struct rtr__ring *r)
{
	use_ids(w, r->tid);
	if (RTR_UNLIKELY(!w->json.process_meta_done))
		rtr__json_process_meta(w);
	if (RTR_UNLIKELY(w->json.heads_epoch != w->json.intern.resets)) {
		/* the intern cache was emptied: so are the heads, a batch later at most */
		memset(w->json.heads, 0, HEAD_SLOTS * sizeof(*w->json.heads));
		w->json.heads_epoch = w->json.intern.resets;
	}
}

/* rtr__format.init */
static int json_init(struct rtr__writer *w)
{
	struct rtr__json *j = &w->json;
	int err;

	j->process_meta_done = 0;
	j->pid_tid_len = (size_t)snprintf(j->pid_tid, sizeof(j->pid_tid),
					  ",\"pid\":%ld,\"tid\":", (long)w->s.pid);
	j->ids_tid = -1;
	rtr__memstack_init(&j->mem); /* maps nothing until the first use */

	err = rtr__intern_init(&j->intern, INTERN_ARENA, INTERN_SLOTS);
	if (err != 0)
		return err;
	j->heads_epoch = j->intern.resets;
	j->scratch = rtr__mem_map(RTR__EXT_MAX);
	if (j->scratch == NULL) {
		err = -ENOMEM;
		goto fail_intern;
	}
	j->heads = rtr__mem_map(HEAD_SLOTS * sizeof(*j->heads));
	if (j->heads == NULL) {
		err = -ENOMEM;
		goto fail_scratch;
	}
	return 0;

fail_scratch:
	rtr__mem_unmap(j->scratch, RTR__EXT_MAX);
	j->scratch = NULL;
fail_intern:
	rtr__intern_destroy(&j->intern);
	return err;
}

/* rtr__format.fini */
static void json_fini(struct rtr__writer *w, int how)
{
	struct rtr__json *j = &w->json;

	if (how != RTR__FINI_FORGET) {
		rtr__mem_unmap(j->heads, HEAD_SLOTS * sizeof(*j->heads));
		j->heads = NULL;
		rtr__mem_unmap(j->scratch, RTR__EXT_MAX);
		j->scratch = NULL;
		rtr__intern_destroy(&j->intern);
	}
	if (how == RTR__FINI_ALL)
		rtr__memstack_destroy(&j->mem);
	else
		rtr__memstack_init(&j->mem); /* may be mid-update: left mapped, forgotten */
}

const struct rtr__format rtr__json_format = {
	.name = "json",
	.init = json_init,
	.fini = json_fini,
	.begin_file = rtr__json_begin_file,
	.begin_ring = json_begin_ring,
	.meta = rtr__json_meta,
	.events = json_events,
	.end_file = rtr__json_end_file,
};
