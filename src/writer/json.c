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
 * a direct call or inline here; only the batch comes through the format's table. The
 * commonest events skip encode_event()'s look at every kind: a folded leaf span
 * (encode_span()) and a plain B, E, scope, instant or counter (encode_line()), each
 * the same line encode_event() would write. A line's ts is written from the last
 * one's digits when they share them (rtr__json_us_near()).
 *
 * Lines that are not the common event (metadata, memory events, stack samples,
 * track lanes' names) are json_meta.c's; the file's head and end marker framing.c's.
 */
#include "writer/json.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "producer/tracks.h"
#include "writer/async_open.h"
#include "writer/slices.h"

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

	if (RTR_LIKELY(h->kind == K_ARG_KEY && h->a == key))
		return put_head_text(p, h);
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

/* The arguments of rec as `"k":v,...`, without the braces. */
static inline __attribute__((always_inline)) char *put_arg_list(struct rtr__writer *w, char *p,
								const struct rtr__rec *rec,
								const struct rtr__rec_view *v)
{
	const char *str = v->strings;

	for (unsigned i = 0; i < rec->nargs; i++) {
		uint64_t key, val = rtr__rec_arg(v, i, &key);
		if (i > 0)
			*p++ = ',';
		p = put_arg_key(w, p, key);
		switch (v->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = rtr__json_i64_inline(p, (int64_t)val);
			break;
		case RTR_ARG_TYPE_U64:
			p = rtr__json_u64_inline(p, val);
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
	return p;
}

static char *put_args(struct rtr__writer *w, char *p, const struct rtr__rec *rec,
		      const struct rtr__rec_view *v)
{
	p = PUT_LIT(p, ",\"args\":{");
	p = put_arg_list(w, p, rec, v);
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
		if (rec->flags & RTR__F_CODE_ADDR) { /* the instrument library's call */
			size_t len;
			const char *name = rtr__memstack_function(&w->json.mem, rec->a, &len);
			p = PUT_LIT(p, ",\"cat\":\"function\",\"name\":\"");
			p = put(p, name, len);
			return PUT_LIT(p, "\",\"ts\":");
		}
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

/* A B line is being written on r's thread, its arguments' text bargs (len 0: none):
 * it is now the innermost open slice there. */
static void slice_opened(struct rtr__ring *r, const struct rtr__rec *rec,
			 const struct rtr__rec_view *v, const char *bargs, size_t bargs_len)
{
	struct rtr__reader *rd = rtr__reader_of(r);

	if (rd->slices == NULL && (rd->slices = rtr__slices_new()) == NULL)
		return; /* without memory: pops go unnamed, added arguments are cut */
	int copied = (rec->flags & RTR__F_NAME_COPY) != 0;
	rtr__slices_push_full(rd->slices, rec->a, rec->b, copied ? v->name : NULL,
			      copied ? v->name_len : 0, bargs, bargs_len);
}

/*
 * An argument for the innermost open slice's E (rtr_scope_arg_*) that did not fold
 * with its slice: encoded now, kept with the slice (slices.h), written with its E.
 * The record counts as written with the empty line committed here: its bytes go out
 * with the E (or, if the slice never ends, with nothing, like the B it belongs to,
 * which stays open in the viewer).
 */
static bool keep_slice_arg(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			   const struct rtr__rec_view *v)
{
	struct rtr__reader *rd = rtr__reader_of(r);
	char *p = out_reserve(w, line_bound(rec));
	char *end = put_arg_list(w, p, rec, v); /* "key":value */

	if (rec->nargs != 1 || !rtr__slices_add_arg(rd->slices, p, (size_t)(end - p)))
		rd->args_lost++;
	out_commit(w, p, 1);
	return true;
}

/*
 * Encode the event whose header is `rec` at record index `pos` of ring r, whose
 * thread's ids are in w->json.ids (use_ids()). `end` is NULL, or the E that rec, a B,
 * is folded with (span_end()): the line is then an X for both, and counts two, and the
 * `args` argument events between them (rtr_scope_arg_*) go on it and count one each.
 * Returns false, having written nothing, when the record does not decode (its
 * framing, kind and size are checked before: rtr__rec_framed()).
 */
static inline __attribute__((always_inline)) bool
encode_event(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec, uint32_t pos,
	     const struct rtr__rec *end, uint32_t args, const int slices)
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
	if (slices && rec->kind == RTR__K_SLICE_ARG)
		return keep_slice_arg(w, r, rec, &v);

	/* An E ends the innermost open slice: a pop takes its name and category, and the
	 * arguments added to it go on the E. */
	struct rtr__slices *open = NULL;
	const char *added = NULL;
	size_t added_len = 0;
	struct rtr__rec popped;
	if (slices && rec->kind == RTR__K_END) {
		open = rtr__reader_of(r)->slices;
		added = rtr__slices_args(open, &added_len);
		if (rec->flags & RTR__F_POP) {
			const struct rtr__open_slice *top = rtr__slices_top(open);
			popped = *rec;
			popped.flags = 0;
			popped.a = top != NULL ? top->name : 0;
			popped.b = top != NULL ? top->cat : rec->b;
			if (top != NULL && top->name == 0 && top->copy_len != UINT32_MAX) {
				popped.flags = RTR__F_NAME_COPY;
				v.name = open->text + top->copy_off;
				v.name_len = top->copy_len;
			}
			rec = &popped;
		}
	}
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

	/* the folded arguments: records after the B's */
	uint32_t args_from = pos + rtr__rec_records(rec->ext);
	size_t folded_bound = 0;
	for (uint32_t i = 0, at = args_from; slices && i < args; i++) {
		folded_bound += line_bound(rtr__ring_rec(r, at));
		at += rtr__rec_records(rtr__ring_rec(r, at)->ext);
	}
	char *p = out_reserve(w, line_bound(rec) + added_len + folded_bound);
	/* an instant's scope is part of its head */
	uint32_t key = end != NULL ? K_SPAN
				   : rec->kind | (uint32_t)(rec->flags & (RTR__F_SCOPE_PROCESS |
									  RTR__F_SCOPE_GLOBAL |
									  RTR__F_CODE_ADDR))
							 << 8;
	/* the line's parts, kept for the open slice or async span it begins (cut.c) */
	char *line0 = p, *ts0, *rest0, *rest1, *args0 = NULL, *args1 = NULL;
	p = put_head(w, p, key, rec, &v);
	ts0 = p;
	p = rtr__json_us_near(p, ts, &w->json.ts_text);
	rest0 = p;
	if (rtr__kind_has_id(rec->kind)) {
		p = put_hex_id(p, v.word);
	} else if (end != NULL) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us_inline(p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, end->ts)) -
						   ts);
	} else if (rec->kind == RTR__K_SCOPE) {
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us_inline(
			p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts + rec->b)) - ts);
	} else if (rec->kind == RTR__K_COMPLETE) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us_inline(
			p, rtr__writer_rel_ns(w, host_end != 0 ? host_end : rec->ts + v.word) - ts);
	}
	memcpy(p, ids, sizeof(w->json.ids));
	p += ids_len; /* the line ends here unless it has arguments */
	rest1 = p - (sizeof("},\n") - 1);
	if (RTR_UNLIKELY(rec->kind == RTR__K_COUNTER_I64 || rec->kind == RTR__K_COUNTER_F64 ||
			 rec->nargs > 0)) {
		p -= sizeof("},\n") - 1; /* the arguments go before the line's end */
		if (rec->kind == RTR__K_COUNTER_I64) {
			p = PUT_LIT(p, ",\"args\":{\"value\":");
			p = rtr__json_i64_inline(p, (int64_t)v.word);
			*p++ = '}';
		} else if (rec->kind == RTR__K_COUNTER_F64) {
			p = PUT_LIT(p, ",\"args\":{\"value\":");
			p = put_f64_bits(p, v.word);
			*p++ = '}';
		} else {
			args0 = p + sizeof(",\"args\":{") - 1;
			p = put_args(w, p, rec, &v);
			args1 = p - 1;
		}
		p = PUT_LIT(p, "},\n");
	}
	if (RTR_UNLIKELY(rec->flags & RTR__F_CODE_ADDR) && rec->kind == RTR__K_SCOPE) {
		size_t src_len; /* RINGTRACE_INSTRUMENT_LINES: where the function is */
		const char *src = rtr__memstack_srcline(&w->json.mem, rec->a, &src_len);
		if (src_len > 0) {
			p -= sizeof("},\n") - 1;
			p = PUT_LIT(p, ",\"args\":{\"src\":\"");
			p = put(p, src, src_len);
			p = PUT_LIT(p, "\"}},\n");
		}
	}
	if (slices && added_len > 0) {
		p -= sizeof("},\n") - 1;
		p = PUT_LIT(p, ",\"args\":{");
		p = put(p, added, added_len);
		p = PUT_LIT(p, "}},\n");
	}
	if (slices && args > 0) {
		p -= sizeof("},\n") - 1;
		if (rec->nargs > 0)
			p[-1] = ','; /* the B's own arguments' brace: more follow */
		else
			p = PUT_LIT(p, ",\"args\":{");
		for (uint32_t i = 0, at = args_from; i < args; i++) {
			const struct rtr__rec *arg = rtr__ring_rec(r, at);
			struct rtr__rec_view av;
			if (!rtr__rec_decode(arg, rtr__ring_ext(r, at, arg->ext, w->json.scratch),
					     &av))
				return false; /* nothing committed */
			if (i > 0)
				*p++ = ',';
			p = put_arg_list(w, p, arg, &av);
			at += rtr__rec_records(arg->ext);
		}
		p = PUT_LIT(p, "}},\n");
	}
	if (slices && end == NULL) {
		size_t args_len = args0 != NULL ? (size_t)(args1 - args0) : 0;
		if (rec->kind == RTR__K_BEGIN)
			slice_opened(r, rec, &v, args0, args_len);
		else if (rec->kind == RTR__K_ASYNC_BEGIN)
			rtr__async_open_add(&w->json.async, rec->b, v.word, line0,
					    (size_t)(ts0 - line0), rest0, (size_t)(rest1 - rest0),
					    args0, args_len);
		else if (rec->kind == RTR__K_ASYNC_END)
			rtr__async_open_end(&w->json.async, rec->b, v.word);
	}
	out_commit(w, p, end != NULL ? 2 + (slices ? args : 0) : 1);
	if (slices && open != NULL)
		rtr__slices_pop(open);
	return true;
}

/*
 * The events that touch the thread's open slices (slices.h): a B written alone, an
 * E, an argument for the open slice, a B folded with arguments. Out of line, so that
 * the other events (a folded B+E, instants, counters...) encode without a look at
 * them.
 */
static __attribute__((noinline)) bool encode_slice_event(struct rtr__writer *w, struct rtr__ring *r,
							 const struct rtr__rec *rec, uint32_t pos,
							 const struct rtr__rec *end, uint32_t args)
{
	return encode_event(w, r, rec, pos, end, args, 1);
}

/*
 * Whether rec (with `end` folded into it, and `args` argument events) needs the
 * slice-aware encoding: an argument for the open slice, a pop, a copied name, an E
 * with added arguments, a thread's first B. A plain B or E takes the common one, and
 * the stack follows it (slices_follow()).
 */
#define SLICE_KINDS                                                       \
	(1u << RTR__K_BEGIN | 1u << RTR__K_END | 1u << RTR__K_SLICE_ARG | \
	 1u << RTR__K_ASYNC_BEGIN | 1u << RTR__K_ASYNC_END)
_Static_assert(RTR__K_LAST < 32, "SLICE_KINDS is a 32-bit set");

static inline bool touches_slices(struct rtr__ring *r, const struct rtr__rec *rec,
				  const struct rtr__rec *end, uint32_t args)
{
	if (end != NULL)
		return args > 0;
	if (RTR_LIKELY(!((SLICE_KINDS >> rec->kind) & 1u)))
		return false;
	const struct rtr__slices *open = rtr__reader_of(r)->slices;
	size_t added;
	/* async spans are kept open for the cuts (async_open.h), as are a B's arguments */
	if (rec->kind > RTR__K_END || rec->flags != 0 || open == NULL ||
	    (rec->kind == RTR__K_BEGIN && rec->nargs > 0))
		return true;
	return rec->kind == RTR__K_END && (rtr__slices_args(open, &added), added > 0);
}

/* A plain B or E line was written: the thread's stack of open slices follows it. */
static inline void slices_follow(struct rtr__ring *r, const struct rtr__rec *rec)
{
	struct rtr__slices *open = rtr__reader_of(r)->slices;

	if (rec->kind == RTR__K_BEGIN)
		rtr__slices_push(open, rec->a, rec->b, NULL, 0);
	else if (rec->kind == RTR__K_END)
		rtr__slices_pop(open);
}

/*
 * The common event, a leaf span: a B folded with its E, neither with flags, the B
 * without a continuation or with one integer argument (then one record: its type,
 * key and value, RTR__X_FIELDS). The line encode_event() writes for it, without its
 * look at every other kind and with no decoding. False, having written nothing, when
 * rec is not such a span.
 */
static inline bool encode_span(struct rtr__writer *w, const struct rtr__ring *r,
			       const struct rtr__rec *rec, uint32_t pos, const struct rtr__rec *end)
{
	static const struct rtr__rec_view no_view; /* put_head() reads it for copied names only */
	const uint8_t *arg = NULL;

	if (rec->flags != 0)
		return false;
	if (rec->ext != 0) {
		arg = (const uint8_t *)rtr__ring_rec(r, pos + 1);
		if (rec->ext != RTR__EXT_ARG || rec->nargs != 1 ||
		    (arg[0] != RTR_ARG_TYPE_I64 && arg[0] != RTR_ARG_TYPE_U64))
			return false;
	} else if (rec->nargs != 0) {
		return false;
	}
	char *p = out_reserve(w, line_bound(rec));
	p = put_head(w, p, K_SPAN, rec, &no_view);
	uint64_t ts = rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts));
	p = rtr__json_us_near(p, ts, &w->json.ts_text);
	p = PUT_LIT(p, ",\"dur\":");
	p = rtr__json_us_inline(p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, end->ts)) - ts);
	memcpy(p, w->json.ids, sizeof(w->json.ids));
	p += w->json.ids_len;
	if (arg != NULL) {
		uint64_t key, val;
		memcpy(&key, arg + 1, sizeof(key));
		memcpy(&val, arg + 1 + sizeof(key), sizeof(val));
		p -= sizeof("},\n") - 1; /* the argument goes before the line's end */
		p = PUT_LIT(p, ",\"args\":{");
		p = put_arg_key(w, p, key);
		p = arg[0] == RTR_ARG_TYPE_I64 ? rtr__json_i64_inline(p, (int64_t)val)
					       : rtr__json_u64_inline(p, val);
		p = PUT_LIT(p, "}},\n");
	}
	out_commit(w, p, 2);
	return true;
}

/*
 * The other common lines, alone and on the thread's timeline: a B or E without a
 * continuation, a call site's scope, an instant, an integer counter (one word). The
 * line encode_event() writes for each, without its look at every other kind. False,
 * having written nothing, for anything else; the caller has checked that rec does
 * not touch the open slices (touches_slices()).
 */
static inline bool encode_line(struct rtr__writer *w, const struct rtr__ring *r,
			       const struct rtr__rec *rec, uint32_t pos)
{
	static const struct rtr__rec_view no_view; /* put_head() reads it for copied names only */
	uint32_t key = rec->kind;

	if (rec->nargs != 0)
		return false;
	switch (rec->kind) {
	case RTR__K_BEGIN:
	case RTR__K_END:
	case RTR__K_SCOPE:
		if (rec->flags != 0 || rec->ext != 0)
			return false;
		break;
	case RTR__K_INSTANT: /* its scope is part of its head */
		if ((rec->flags & ~(RTR__F_SCOPE_PROCESS | RTR__F_SCOPE_GLOBAL)) != 0 ||
		    rec->ext != 0)
			return false;
		key |= (uint32_t)rec->flags << 8;
		break;
	case RTR__K_COUNTER_I64:
		if (rec->flags != 0 || rec->ext != RTR__EXT_WORD)
			return false;
		break;
	default:
		return false;
	}
	char *p = out_reserve(w, line_bound(rec));
	p = put_head(w, p, key, rec, &no_view);
	uint64_t ts = rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts));
	p = rtr__json_us_near(p, ts, &w->json.ts_text);
	if (rec->kind == RTR__K_SCOPE) {
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us_inline(
			p, rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts + rec->b)) - ts);
	}
	memcpy(p, w->json.ids, sizeof(w->json.ids));
	p += w->json.ids_len;
	if (rec->kind == RTR__K_COUNTER_I64) {
		p -= sizeof("},\n") - 1; /* the value goes before the line's end */
		p = PUT_LIT(p, ",\"args\":{\"value\":");
		p = rtr__json_i64_inline(p, (int64_t)rtr__ring_rec(r, pos + 1)->ts);
		p = PUT_LIT(p, "}},\n");
	}
	out_commit(w, p, 1);
	return true;
}

/* rtr__format.events: the batch loop, encode_event() inline in it (its one call). */
static uint64_t json_events(struct rtr__writer *w, struct rtr__ring *r, struct rtr__drained *ev,
			    uint32_t n)
{
	uint64_t events = 0;

	w->drain.batch = ev;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pos = ev[i].pos;
		w->drain.batch_at = i; /* a cut in the middle of the batch knows where */
		const struct rtr__rec *rec = rtr__ring_rec(r, pos), *end = ev[i].end;
		uint32_t args = end != NULL ? ev[i].args : 0;
		if (end != NULL && args == 0 && encode_span(w, r, rec, pos, end)) {
			events += 2;
			continue;
		}
		for (;;) {
			bool ok;
			if (RTR_LIKELY(!touches_slices(r, rec, end, args))) {
				ok = (end == NULL && encode_line(w, r, rec, pos)) ||
				     encode_event(w, r, rec, pos, end, 0, 0);
				if (ok && end == NULL && rec->kind <= RTR__K_END)
					slices_follow(r, rec);
			} else {
				ok = encode_slice_event(w, r, rec, pos, end, args);
			}
			if (RTR_LIKELY(ok)) {
				events += end != NULL ? 2 + args : 1;
				break;
			}
			ev[i].bad = 1;
			if (end == NULL)
				break;
			/* Then the events folded with it are written as events of their own
			 * (arguments kept for the open slice, the E, which has no
			 * continuation: the drain's folding). */
			pos += rtr__rec_records(rec->ext);
			for (uint32_t k = 0; k < args; k++) {
				const struct rtr__rec *arg = rtr__ring_rec(r, pos);
				events += encode_slice_event(w, r, arg, pos, NULL, 0);
				pos += rtr__rec_records(arg->ext);
			}
			rec = end;
			end = NULL;
			args = 0;
		}
	}
	return events;
}

/* ------------------------------------------------------------------------- */
/* The lines of a cut (cut.c)                                                 */

/* `"key":true` for a cut line's arguments. */
static const char *cut_flag(int what)
{
	switch (what) {
	case RTR__CUT_BEGIN:
		return "\"continued\":true";
	case RTR__CUT_END:
		return "\"cut\":true";
	default:
		return "\"open\":true";
	}
}

/* rtr__format.cut_ring: r's open slices, ended (innermost first, with the arguments
 * added so far) or begun again (outermost first, with the B's own arguments). */
static uint64_t json_cut_ring(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			      size_t budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	const char *flag = cut_flag(what);
	size_t flag_len = strlen(flag);
	uint64_t lines = 0;

	if (s == NULL)
		return 0;
	for (uint32_t k = 0; k < s->depth; k++) {
		uint32_t i = what == RTR__CUT_BEGIN ? k : s->depth - 1 - k;
		const struct rtr__open_slice *l = &s->level[i];
		struct rtr__rec rec;
		struct rtr__rec_view v;
		memset(&rec, 0, sizeof(rec));
		memset(&v, 0, sizeof(v));
		rec.kind = what == RTR__CUT_BEGIN ? RTR__K_BEGIN : RTR__K_END;
		rec.a = l->name;
		rec.b = l->cat;
		if (l->name == 0 && l->copy_len != UINT32_MAX) {
			rec.flags = RTR__F_NAME_COPY;
			v.name = s->text + l->copy_off;
			v.name_len = l->copy_len;
		}
		const char *args = s->text + (what == RTR__CUT_BEGIN ? l->bargs_off : l->args_off);
		size_t args_len = what == RTR__CUT_BEGIN ? l->bargs_len
				  : i + 1 < s->depth	 ? s->level[i + 1].copy_off - l->args_off
							 : s->text_len - l->args_off;
		size_t bound = LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED + COPY_ESCAPED +
			       args_len + flag_len;
		if (bound > budget)
			break; /* the caller counts what is left */
		budget -= bound;
		char *p = out_reserve(w, bound);
		p = rtr__json_encode_head(w, p, rec.kind, &rec, &v);
		p = rtr__json_us(p, ts);
		p = put_pid_tid(w, p, r->tid);
		p = PUT_LIT(p, ",\"args\":{");
		if (args_len > 0) {
			p = put(p, args, args_len);
			*p++ = ',';
		}
		p = put(p, flag, flag_len);
		p = PUT_LIT(p, "}},\n");
		out_commit(w, p, 0);
		lines++;
	}
	return lines;
}

/* rtr__format.cut_async: the open async spans, ended (newest first) or begun again
 * (oldest first). */
static uint64_t json_cut_async(struct rtr__writer *w, int what, uint64_t ts, size_t budget)
{
	static const struct rtr__async_span *list[RTR_ASYNC_OPEN_MAX]; /* writer thread only */
	size_t n = rtr__async_open_list(&w->json.async, what == RTR__CUT_BEGIN ? 1 : -1, list);
	const char *flag = cut_flag(what);
	size_t flag_len = strlen(flag);
	uint64_t lines = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rtr__async_span *a = list[i];
		size_t bound = RTR_ASYNC_LINE_MAX + flag_len + 64;
		if (bound > budget)
			break;
		budget -= bound;
		char *p = out_reserve(w, bound), *line = p;
		p = put(p, a->text, a->head_len);
		if (what != RTR__CUT_BEGIN)
			line[sizeof("{\"ph\":\"") - 1] = 'e'; /* the phase letter */
		p = rtr__json_us(p, ts);
		p = put(p, a->text + a->head_len, a->rest_len);
		p = PUT_LIT(p, ",\"args\":{");
		if (a->args_len > 0 && what == RTR__CUT_BEGIN) {
			p = put(p, a->text + a->head_len + a->rest_len, a->args_len);
			*p++ = ',';
		}
		p = put(p, flag, flag_len);
		p = PUT_LIT(p, "}},\n");
		out_commit(w, p, 0);
		lines++;
	}
	return lines;
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
	memset(&j->ts_text, 0, sizeof(j->ts_text));
	rtr__memstack_init(&j->mem); /* maps nothing until the first use */
	memset(&j->async, 0, sizeof(j->async));

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
	if (how != RTR__FINI_FORGET)
		rtr__async_open_free(&j->async);
	else
		memset(&j->async, 0, sizeof(j->async));
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
	.cut_ring = json_cut_ring,
	.cut_async = json_cut_async,
	.pads_pages = 1,
};
