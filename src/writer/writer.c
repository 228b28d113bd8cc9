/* SPDX-License-Identifier: MIT */
/*
 * The writer thread: drain the rings, encode JSON lines, hand chunks to the sink.
 *
 * One loop. Each pass takes a snapshot of the registered rings and drains each in
 * turn, a bounded batch per ring so one busy thread cannot starve the others, then
 * submits the current chunk when it is full or when flush_ms has passed since the
 * last write (so a killed run loses at most that much). When a pass finds nothing
 * to do the thread sleeps on a futex until the next flush deadline, or until a
 * producer passes a ring's high-water mark, or a flush or stop is requested: an idle
 * recorder costs one wake-up per flush interval, never a spinning core.
 *
 * Lines. Every event becomes one line ending in ",\n". A chunk only ever holds whole
 * lines, and chunks reach the file in order, so a file cut by a kill ends after a
 * whole line (or inside the last one written, which the repair rule drops). Before a
 * line is encoded the writer reserves the most it can take (line_bound()); strings
 * come from the intern cache, already escaped, and are copied with memcpy. Most
 * lines take their head, up to the timestamp, whole from the head cache (struct
 * head), and their end, the pid and tid, from a copy made once per thread (use_ids()).
 *
 * Accounting. A ring's producer counts events and drops; the writer counts what it
 * consumed. Per session and ring, reader state in the ring remembers the counters at
 * the session's start, so a ring that outlives a session starts the next one at zero.
 * When a closed ring is drained its totals are folded into `retired` and it is freed.
 */
#include "common/atomic.h"
#include "common/compiler.h"
#include "common/jsontext.h"
#include "common/mem.h"
#include "producer/tracks.h"
#include "record/record.h"
#include "ring/ring.h"
#include "session/recorder.h"
#include "sink/sink.h"
#include "writer/intern.h"
#include "writer/memstack_writer.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES   ((size_t)1 << 20)
#define PAGE_BYTES    4096u /* lines are kept from crossing file pages (out_commit()) */
#define TAIL_ROOM     (1024 + PAGE_BYTES) /* kept free in every chunk for the closing lines */
#define NCHUNKS	      4
#define DRAIN_BATCH   8192u /* records per ring per pass */
#define RELEASE_EVERY 1024u /* records consumed before tail is handed back */
#define INTERN_ARENA  ((size_t)4 << 20)
#define INTERN_SLOTS  ((size_t)1 << 16)
#define HEAD_BITS     9 /* the head cache (struct head) has 1 << HEAD_BITS slots */
#define HEAD_SLOTS    ((size_t)1 << HEAD_BITS)
#define HEAD_TEXT     104u /* longest head kept there */
#define COPY_ESCAPED  RTR_JSON_ESCAPE_BOUND(RTR_MAX_COPY)
/* Not a record kind: a B and its E folded into one X line (see span_end()). */
#define K_SPAN 0x80u
/* Not a record kind: an argument's key, `"key":`, kept in the head cache. */
#define K_ARG_KEY 0x81u

/* The writer's state in each ring (rtr__ring.reader). */
struct reader {
	uint64_t session;     /* session these fields belong to */
	uint64_t base_events; /* producer counters when the session began */
	uint64_t base_full;
	uint64_t base_large;
	uint64_t base_reentrant;
	uint64_t base_no_track;
	uint64_t base_args_cut;
	uint64_t events;       /* events consumed and encoded in this session */
	uint64_t corrupt;      /* events skipped as malformed in this session */
	uint64_t dropped_seen; /* drops already shown in the trace */
	uint32_t meta_done;    /* thread_name written */
	uint32_t unframed;     /* a header could not be framed: corrupt is P - events at the end */
};
_Static_assert(sizeof(struct reader) <= sizeof(((struct rtr__ring *)0)->reader),
	       "reader state must fit in the ring");

/*
 * The head of an event line, `{"ph":"B","cat":"app","name":"span","ts":`, depends
 * only on the kind and the static strings the record points to: a name and a
 * category, or for RTR__K_SCOPE a call site. So the writer keeps recent heads whole,
 * direct-mapped by (kind, a, b): a hit is one fixed-size copy in place of two intern
 * lookups and four literals. Like the intern cache it trusts a static string never
 * to change, and it is emptied whenever the intern cache is and at each session's
 * start. Heads longer than HEAD_TEXT are encoded every time.
 */
struct head {
	uint64_t a, b; /* the record's a and b; b is 0 for RTR__K_SCOPE (a duration) */
	uint32_t kind; /* RTR__K_*, K_SPAN or K_ARG_KEY, or 0 for an empty slot */
	uint32_t len;
	char text[HEAD_TEXT]; /* copied whole: the bytes after len are scratch */
};
_Static_assert(sizeof(struct head) == 128, "a head is two cache lines");

static inline size_t head_slot(uint32_t kind, uint64_t a, uint64_t b)
{
	/* Fibonacci hashing: the top bits of the product depend on every bit of the key */
	uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ kind) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> (64 - HEAD_BITS));
}

static struct writer {
	struct rtr__session s;
	pthread_t thread;
	struct rtr__sink sink;
	struct rtr__chunk *chunk;
	struct rtr__intern intern;
	struct rtr__ring **rings;
	size_t rings_cap;
	char *scratch; /* RTR__EXT_MAX bytes: one wrapped event's continuation */
	uint64_t session_id;
	uint64_t first_ring_id; /* rings with a larger id were made in this session */
	uint64_t last_write_ns;
	char pid_tid[48]; /* ,"pid":P,"tid": */
	size_t pid_tid_len;
	struct head *heads;	  /* HEAD_SLOTS */
	struct rtr__memstack mem; /* live allocations, totals, resolved frames */
	uint64_t heads_epoch;	  /* intern.resets when the heads were last emptied */
	int64_t ids_tid;	  /* tid whose ids ends the lines now; -1: none */
	size_t ids_len;
	/* ,"pid":P,"tid":T},\n for ids_tid, copied whole: at most 25 bytes of pid_tid,
	 * 20 that rtr__json_u64() may write and the 3 of the end */
	char ids[48];
	int error_reported;
	int final_error;

	/* Private totals: the producer counters of freed rings, and what was consumed. */
	struct totals {
		uint64_t events, full, large, reentrant, no_track, args_cut, consumed, corrupt;
	} retired;
	uint64_t base_unattached; /* rtr__rings_reentrant_unattached() at the start */
	int corrupt_reported;	  /* the first malformed record is on stderr */
	uint64_t dropped_shown;	  /* drops shown in the trace's counter track */
	uint64_t encoded;	  /* events encoded into chunks */
	int provisional;	  /* close each write provisionally: a regular file */
	int process_meta_done;	  /* the process label and sort index are in this file */
	int finishing;		  /* the final end marker is being written */
	uint64_t threads;	  /* rings that recorded in this session */

	/* Control words; futexes where noted. */
	uint32_t stop;	     /* set by rtr__writer_stop() */
	uint32_t flush_req;  /* flush tickets handed out */
	uint32_t flush_done; /* futex: last flush ticket served */
	uint32_t give_up;    /* set by rtr__writer_stop() past the timeout: stop waiting */
	uint32_t state;	     /* futex: WRITER_*; who frees the session (rtr__writer_stop()) */

	/* Published counters: relaxed, stored by the writer, read by rtr_stats_get(). */
	uint64_t st_recorded, st_dropped_full, st_dropped_large, st_args_cut, st_threads,
		st_wakeups, st_dropped_reentrant, st_dropped_corrupt, st_dropped_no_track,
		st_unwritten;
	int st_io, st_clock;
} W;

static uint64_t session_counter;

/* Values of writer.state. */
enum {
	WRITER_IDLE = 0,      /* no writer thread */
	WRITER_RUNNING = 1,   /* the thread runs; rtr__writer_stop() will join it */
	WRITER_EXITED = 2,    /* the thread is done with the session, about to return */
	WRITER_ABANDONED = 3, /* stop gave up on it: the thread frees the session itself */
};

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

/* ------------------------------------------------------------------------- */
/* Output                                                                     */

static void report_error_once(struct writer *w)
{
	int err = rtr_atomic_load_relaxed(&w->sink.error);

	if (err != 0 && !w->error_reported) {
		w->error_reported = 1;
		if (err == -ETIMEDOUT) {
			fprintf(stderr,
				"ringtrace: writing %s: gave up after %u ms "
				"(RINGTRACE_STOP_TIMEOUT_MS); "
				"the events not written are counted as dropped\n",
				w->s.path, w->s.cfg.stop_timeout_ms);
			return;
		}
		fprintf(stderr,
			"ringtrace: writing %s failed: %s; the events not written are counted as "
			"dropped\n",
			w->s.path, strerror(-err));
	}
}

static void put_end(struct writer *w, int final);

/*
 * Hand the chunk to the sink. Every chunk but the last ends in a provisional end
 * marker and "]", which the sink cuts off before it writes the next chunk in their
 * place. So a file between two writes (a killed run, or a reader while the run goes
 * on) is strict JSON with a window end that says "final": false; one cut during a
 * write ends after a whole line (see out_commit()), and the repair rule applies.
 */
static void submit_chunk(struct writer *w)
{
	if (w->chunk->len == 0)
		return;
	w->chunk->keep = w->chunk->len;
	if (!w->finishing && w->provisional)
		put_end(w, 0);
	else
		w->chunk->keep = 0; /* all of it */
	rtr__sink_submit(&w->sink, w->chunk);
	w->chunk = rtr__sink_acquire(&w->sink);
	report_error_once(w);
}

/* Room for `need` more bytes in the current chunk; returns the cursor. */
static inline char *out_reserve(struct writer *w, size_t need)
{
	if (RTR_UNLIKELY(w->sink.chunk_bytes - w->chunk->len < need + PAGE_BYTES + TAIL_ROOM))
		submit_chunk(w);
	return w->chunk->data + w->chunk->len;
}

/* Close a line: an event's (events 1) or another (events 0), whose end the chunk
 * remembers so that a partly failed write can tell how many events landed. Returns
 * the cursor for the next line: the line may have moved. */
static inline char *out_commit(struct writer *w, char *end, uint64_t events)
{
	struct rtr__chunk *c = w->chunk;
	size_t start = c->len, len = (size_t)(end - (c->data + start));
	/* The chunk lands at the sink's offset. A kill stops a write at a page boundary
	 * of the file, so a line that would cross one starts on the next page instead,
	 * after spaces (JSON whitespace): a killed run's file then ends after a whole
	 * line, which every viewer loads. Costs about half a line per 4 KiB. Compressed
	 * output has no such pages (sink_gzip.c). */
	size_t room = PAGE_BYTES - (size_t)((w->sink.offset + start) & (PAGE_BYTES - 1));

	if (RTR_UNLIKELY(len > room) && len <= PAGE_BYTES && w->sink.gzip == NULL &&
	    w->provisional) { /* a stream has no pages to keep lines in */
		memmove(c->data + start + room, c->data + start, len);
		memset(c->data + start, ' ', room);
		start += room;
	}
	c->len = start + len;
	c->events += events;
	w->encoded += events;
	if (events == 0 && c->nmeta++ < RTR_CHUNK_META_MAX)
		c->meta_end[c->nmeta - 1] = (uint32_t)c->len;
	return c->data + c->len; /* where the next line goes */
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static inline char *put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

static inline char *put_static(struct writer *w, char *p, const char *s)
{
	struct rtr__istr is = rtr__intern_static(&w->intern, s);

	return put(p, is.bytes, is.len);
}

/* Most bytes a line takes besides its strings and arguments. */
#define LINE_FIXED 192
/* Most bytes one argument takes: key, value, punctuation. */
#define ARG_BOUND (RTR_INTERN_MAX_ESCAPED + COPY_ESCAPED + 40)

static inline size_t line_bound(const struct rtr__rec *rec)
{
	return LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
	       (rec->nargs ? (size_t)rec->nargs * ARG_BOUND + RTR_JSON_ESCAPE_BOUND(rec->ext) : 0);
}

static inline uint64_t rel_ns(const struct writer *w, uint64_t ns)
{
	return ns > w->s.origin_ns ? ns - w->s.origin_ns : 0;
}

static inline uint64_t ticks_ns(const struct writer *w, uint64_t ticks)
{
	return rtr__clock_ns(&w->s.clock, ticks);
}

static char *put_pid_tid(struct writer *w, char *p, int32_t tid)
{
	p = put(p, w->pid_tid, w->pid_tid_len);
	return rtr__json_u64(p, (uint64_t)(uint32_t)tid);
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

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
static inline char *put_arg_key(struct writer *w, char *p, uint64_t key)
{
	struct head *h = &w->heads[head_slot(K_ARG_KEY, key, 0)];

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

static char *put_args(struct writer *w, char *p, const struct rtr__rec *rec,
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

static char *put_name(struct writer *w, char *p, const struct rtr__rec *rec,
		      const struct rtr__rec_view *v)
{
	p = PUT_LIT(p, ",\"name\":\"");
	if (rec->flags & RTR__F_NAME_COPY) {
		struct rtr__istr is = rtr__intern_bytes(&w->intern, v->name, v->name_len);
		p = put(p, is.bytes, is.len);
	} else if (rec->a != 0) {
		p = put_static(w, p, (const char *)(uintptr_t)rec->a);
	}
	*p++ = '"';
	return p;
}

static char *put_cat(struct writer *w, char *p, const char *cat)
{
	if (cat == NULL)
		return p;
	p = PUT_LIT(p, ",\"cat\":\"");
	p = put_static(w, p, cat);
	*p++ = '"';
	return p;
}

/* A thread_name line; `events` 1 when it records an rtr_thread_name() call. */
static void encode_thread_name(struct writer *w, const struct rtr__ring *r, const char *name,
			       size_t len, uint64_t events)
{
	char *p = out_reserve(w, LINE_FIXED + COPY_ESCAPED);

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_name\"");
	p = put_pid_tid(w, p, r->tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":\"");
	p = rtr__json_escape(p, name, len);
	p = PUT_LIT(p, "\"}},\n");
	out_commit(w, p, events);
}

/* An event line's head, from `{"ph":` through `"ts":`, encoded afresh; kind is
 * rec->kind, or K_SPAN for a B written with its E. */
static char *encode_head(struct writer *w, char *p, uint32_t kind, const struct rtr__rec *rec,
			 const struct rtr__rec_view *v)
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

/* An event line's head, from the head cache when it can (see struct head). */
static inline char *put_head(struct writer *w, char *p, uint32_t kind, const struct rtr__rec *rec,
			     const struct rtr__rec_view *v)
{
	if (RTR_UNLIKELY(rec->flags & RTR__F_NAME_COPY))
		return encode_head(w, p, kind, rec, v); /* a copied name: no static key */

	uint64_t b = kind == RTR__K_SCOPE ? 0 : rec->b;
	struct head *h = &w->heads[head_slot(kind, rec->a, b)];

	if (RTR_LIKELY(h->kind == kind && h->a == rec->a && h->b == b)) {
		memcpy(p, h->text, HEAD_TEXT);
		return p + h->len;
	}
	char *end = encode_head(w, p, kind, rec, v);
	size_t len = (size_t)(end - p);
	if (len <= HEAD_TEXT) {
		h->a = rec->a;
		h->b = b;
		h->kind = kind;
		h->len = (uint32_t)len;
		memcpy(h->text, p, len);
	}
	return end;
}

/* End the lines of thread tid with w->ids from now on. */
static inline void use_ids(struct writer *w, int32_t tid)
{
	if (RTR_LIKELY(w->ids_tid == tid))
		return;
	char *p = put_pid_tid(w, w->ids, tid);
	p = PUT_LIT(p, "},\n");
	w->ids_len = (size_t)(p - w->ids);
	w->ids_tid = tid;
}

/* ------------------------------------------------------------------------- */
/* Tracks and metadata                                                        */

/* An M line: {"ph":"M","name":<what>,"pid":P,"tid":T,"args":{<key>:<value>}}, the
 * value a string (len bytes, escaped here) or, with str NULL, the integer num. Counts
 * `events` (1: it is a recorded event, 0: the writer's own). */
static void put_meta_line(struct writer *w, uint64_t events, const char *what, uint32_t pid,
			  uint32_t tid, const char *key, const char *str, size_t len, int64_t num)
{
	char *p = out_reserve(w, LINE_FIXED + RTR_JSON_ESCAPE_BOUND(len));

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"");
	p = put(p, what, strlen(what));
	p = PUT_LIT(p, "\",\"pid\":");
	p = rtr__json_u64(p, pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = rtr__json_u64(p, tid);
	p = PUT_LIT(p, ",\"args\":{\"");
	p = put(p, key, strlen(key));
	p = PUT_LIT(p, "\":");
	if (str != NULL) {
		*p++ = '"';
		p = rtr__json_escape(p, str, len);
		*p++ = '"';
	} else {
		p = rtr__json_i64(p, num);
	}
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, events);
}

/* The program's process label and sort index, once per file. */
static void process_meta(struct writer *w)
{
	char label[RTR_NAME_MAX];
	int sort;

	w->process_meta_done = 1;
	int has_sort = rtr__process_meta(label, &sort);
	if (label[0] != '\0')
		put_meta_line(w, 0, "process_labels", (uint32_t)w->s.pid, (uint32_t)w->s.start_tid,
			      "labels", label, strlen(label), 0);
	if (has_sort)
		put_meta_line(w, 0, "process_sort_index", (uint32_t)w->s.pid,
			      (uint32_t)w->s.start_tid, "sort_index", NULL, 0, sort);
}

/* An RTR__K_META record: what the program set while recording. False for an unknown
 * `what`, having written nothing. */
static bool encode_meta(struct writer *w, const struct rtr__ring *r, const struct rtr__rec *rec,
			const struct rtr__rec_view *v)
{
	uint32_t pid = (uint32_t)w->s.pid;

	if (rec->a == RTR__META_PROCESS_LABEL && v->name == NULL)
		return false; /* a label is a copied name */
	switch (rec->a) {
	case RTR__META_PROCESS_LABEL:
		put_meta_line(w, 1, "process_labels", pid, (uint32_t)r->tid, "labels", v->name,
			      v->name_len, 0);
		break;
	case RTR__META_PROCESS_SORT:
		put_meta_line(w, 1, "process_sort_index", pid, (uint32_t)r->tid, "sort_index", NULL,
			      0, (int64_t)v->word);
		break;
	case RTR__META_THREAD_SORT:
		put_meta_line(w, 1, "thread_sort_index", pid, (uint32_t)r->tid, "sort_index", NULL,
			      0, (int64_t)v->word);
		break;
	default:
		return false;
	}
	return true;
}

/* Name the track's process (once per file) and lane `k` (once per file). */
static void track_meta(struct writer *w, struct rtr_track *t, unsigned k)
{
	const struct rtr__pseudo_process *pp = rtr__track_process(t);
	uint32_t tid = t->tid + k;

	if (rtr__track_process_claim(t, w->session_id)) {
		put_meta_line(w, 0, "process_name", pp->pid, tid, "name", pp->name,
			      strlen(pp->name), 0);
		if (pp->label[0] != '\0')
			put_meta_line(w, 0, "process_labels", pp->pid, tid, "labels", pp->label,
				      strlen(pp->label), 0);
		if (pp->sort_index != 0)
			put_meta_line(w, 0, "process_sort_index", pp->pid, tid, "sort_index", NULL,
				      0, pp->sort_index);
	}
	if (t->lanes[k].named == w->session_id)
		return;
	t->lanes[k].named = w->session_id;
	char name[RTR_NAME_MAX + 16];
	int len = k == 0 ? snprintf(name, sizeof(name), "%s", t->lane)
			 : snprintf(name, sizeof(name), "%s (%u)", t->lane, k + 1);
	put_meta_line(w, 0, "thread_name", pp->pid, tid, "name", name, (size_t)len, 0);
	/* overflow lanes sort right after their lane */
	put_meta_line(w, 0, "thread_sort_index", pp->pid, tid, "sort_index", NULL, 0,
		      (int64_t)t->lane_sort_index * RTR_TRACK_LANES + k);
}

/*
 * The lane of a complete event [start, end) on track t: the first of the track's
 * lanes where it nests inside, or comes after, every interval still open there.
 * Viewers nest slices of one lane and drop or move one that partly overlaps another;
 * here it moves to an overflow lane instead, visibly named. Events are expected in
 * start order per lane, as devices report them; the last lane takes what fits nowhere.
 */
static unsigned track_place(struct writer *w, struct rtr_track *t, uint64_t start, uint64_t end)
{
	if (t->lanes_session != w->session_id) {
		for (unsigned k = 0; k < RTR_TRACK_LANES; k++)
			t->lanes[k].depth = 0;
		t->lanes_session = w->session_id;
	}
	unsigned k = 0;
	for (; k < RTR_TRACK_LANES; k++) {
		struct rtr__lane *l = &t->lanes[k];
		while (l->depth > 0 && l->end[l->depth - 1] <= start)
			l->depth--; /* ended before this one starts */
		if (l->depth == 0 || end <= l->end[l->depth - 1])
			break;
	}
	if (k == RTR_TRACK_LANES)
		k = RTR_TRACK_LANES - 1;
	struct rtr__lane *l = &t->lanes[k];
	if (l->depth < RTR_LANE_DEPTH)
		l->end[l->depth++] = end;
	t->last_start = start;
	t->last_end = end;
	t->last_lane = k;
	return k;
}

/* Host nanoseconds of a track timestamp: its clock mapping, clamped to the clock's
 * range rather than wrapped. */
static uint64_t track_host_ns(const struct rtr_track *t, uint64_t ts)
{
	/* relaxed: one value set by the program before these events */
	int64_t off = __atomic_load_n(&t->offset_ns, __ATOMIC_RELAXED);

	if (off < 0) {
		uint64_t back = -(uint64_t)off; /* unsigned: INT64_MIN's magnitude too */
		return ts > back ? ts - back : 0;
	}
	return ts + (uint64_t)off >= ts ? ts + (uint64_t)off : UINT64_MAX;
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

/* ------------------------------------------------------------------------- */
/* Memory events and stack samples (state: memstack_writer.c)                 */

/* Most bytes of a memory line: about 110 of literals, a ts (24), the ids (45), an
 * address (18) and two numbers (20 each); rounded up. */
#define MEM_LINE_BOUND 320

/* The thread's ids without the line's end, for lines that add arguments. */
static inline char *put_ids_open(struct writer *w, char *p)
{
	return put(p, w->ids, w->ids_len - (sizeof("},\n") - 1));
}

/* An allocation or a free: an instant on the thread, then the device's bytes in use
 * as a counter of the process. The two lines are committed as one unit counting one
 * event, so a write that fails partway still knows which events landed. */
static void encode_mem(struct writer *w, const struct rtr__rec *rec, uint64_t ts, int64_t device)
{
	uint64_t bytes = rec->b, in_use;

	if (rec->kind == RTR__K_MEM_ALLOC)
		in_use = rtr__memstack_alloc(&w->mem, device, rec->a, bytes);
	else
		in_use = rtr__memstack_free(&w->mem, device, rec->a, &bytes);

	char *p = out_reserve(w, 2 * MEM_LINE_BOUND);
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"memory\",\"name\":");
	p = rec->kind == RTR__K_MEM_ALLOC ? PUT_LIT(p, "\"alloc\",\"ts\":")
					  : PUT_LIT(p, "\"free\",\"ts\":");
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"addr\":\"");
	p = rtr__memstack_hex(p, rec->a);
	p = PUT_LIT(p, "\",\"bytes\":");
	p = rtr__json_u64(p, bytes);
	p = PUT_LIT(p, ",\"device\":");
	p = rtr__json_i64(p, device);
	p = PUT_LIT(p, "}},\n");
	if (device == RTR_MEM_HOST) {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory host\",\"ts\":");
	} else {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory device ");
		p = rtr__json_i64(p, device);
		p = PUT_LIT(p, "\",\"ts\":");
	}
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"bytes_in_use\":");
	p = rtr__json_u64(p, in_use);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 1);
}

/* A stack sample: a thread-scoped instant whose "stack" holds the frames' names. */
static void encode_stack(struct writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			 uint32_t pos, uint64_t ts)
{
	size_t n = rec->ext / sizeof(uint64_t);
	const char *frames = NULL;
	struct rtr__rec_view v;

	if (n > RTR_MAX_FRAMES)
		n = RTR_MAX_FRAMES; /* the producer never writes more: a bound for the line */
	if (n > 0)
		frames = rtr__ring_ext(r, pos, n * sizeof(uint64_t), w->scratch);
	memset(&v, 0, sizeof(v));

	char *p = out_reserve(w, LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
					 n * (RTR_SYM_MAX_ESCAPED + 3));
	p = put_head(w, p, RTR__K_STACK, rec, &v);
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"stack\":[");
	for (size_t k = 0; k < n; k++) {
		uint64_t addr;
		size_t len;
		memcpy(&addr, frames + k * sizeof(addr), sizeof(addr));
		const char *text = rtr__memstack_symbol(&w->mem, addr, &len);
		if (k > 0)
			*p++ = ',';
		*p++ = '"';
		p = put(p, text, len);
		*p++ = '"';
	}
	p = PUT_LIT(p, "]}},\n");
	out_commit(w, p, 1);
}

/* Kinds RTR__K_MEM_ALLOC .. RTR__K_STACK. word: a memory event's device. */
static void encode_memstack(struct writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			    uint32_t pos, uint64_t word)
{
	uint64_t ts = rel_ns(w, ticks_ns(w, rec->ts));

	if (rec->kind == RTR__K_STACK)
		encode_stack(w, r, rec, pos, ts);
	else
		encode_mem(w, rec, ts, (int64_t)word);
}

/*
 * Encode the event whose header is `rec` at record index `pos` of ring r, whose
 * thread's ids are in w->ids (use_ids()). `end` is NULL, or the E that rec, a B,
 * is folded with (span_end()): the line is then an X for both, and counts two.
 * Returns false, having written nothing, when the record does not decode (its
 * framing, kind and size are checked before: rtr__rec_framed()).
 */
static bool encode_event(struct writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
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
	} else if (!rtr__rec_decode(rec, rtr__ring_ext(r, pos, rec->ext, w->scratch), &v)) {
		return false;
	}

	if (RTR_UNLIKELY((rec->flags & RTR__F_NAME_COPY) && v.name == NULL))
		return false; /* a copied name without its bytes */
	if (rec->kind == RTR__K_THREAD_NAME) {
		if (v.name == NULL)
			return false;
		encode_thread_name(w, r, v.name, v.name_len, 1);
		return true;
	}
	if (RTR_UNLIKELY(rec->kind == RTR__K_META))
		return encode_meta(w, r, rec, &v);
	if (RTR_UNLIKELY(rec->kind >= RTR__K_MEM_ALLOC && rec->kind <= RTR__K_STACK)) {
		encode_memstack(w, r, rec, pos, v.word);
		return true;
	}

	/* The end of the line: the thread's ids, or a track lane's. */
	const char *ids = w->ids;
	size_t ids_len = w->ids_len;
	char lane_ids[48];
	uint64_t host_end = 0;

	if (RTR_UNLIKELY(rec->flags & RTR__F_TRACK)) {
		struct rtr_track *t = (struct rtr_track *)(uintptr_t)v.track;
		uint64_t host = track_host_ns(t, rec->ts);
		unsigned k = 0;
		if (rec->kind == RTR__K_COMPLETE) {
			host_end = host + v.word >= host ? host + v.word : UINT64_MAX;
			k = track_place(w, t, host, host_end);
		} else if (host >= t->last_start && host < t->last_end) {
			k = t->last_lane; /* inside the last complete event: on its lane */
		}
		track_meta(w, t, k);
		ids_len = track_ids(t, k, lane_ids);
		ids = lane_ids;
		ts = rel_ns(w, host);
	} else if (rec->flags & RTR__F_TS_NS) {
		ts = rel_ns(w, rec->ts);
	} else {
		ts = rel_ns(w, ticks_ns(w, rec->ts));
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
		p = rtr__json_us(p, rel_ns(w, ticks_ns(w, end->ts)) - ts);
	} else if (rec->kind == RTR__K_SCOPE) {
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us(p, rel_ns(w, ticks_ns(w, rec->ts + rec->b)) - ts);
	} else if (rec->kind == RTR__K_COMPLETE) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = PUT_LIT(p, ",\"dur\":");
		p = rtr__json_us(p, rel_ns(w, host_end != 0 ? host_end : rec->ts + v.word) - ts);
	}
	memcpy(p, ids, sizeof(w->ids));
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

/*
 * A B whose E is the thread's next event, with the same static name and category, is
 * written as one X line: the same slice in every viewer (FORMAT.md prefers X), in
 * about half the bytes of a B line and an E line. A leaf span recorded with
 * rtr_begin/rtr_end usually qualifies; an outer one, or a B whose E is not yet in the
 * ring, is written as a B and later an E. Nothing is held back waiting for an E, so
 * folding never delays a line. Returns the E, or NULL. `next` is the record index
 * after the B, `avail` how many records from `tail` can be read.
 */
static inline const struct rtr__rec *span_end(const struct rtr__ring *r,
					      const struct rtr__rec *begin, uint32_t tail,
					      uint32_t next, uint32_t avail)
{
	if (begin->kind != RTR__K_BEGIN || (begin->flags & RTR__F_NAME_COPY) ||
	    next - tail >= avail)
		return NULL;
	const struct rtr__rec *e = rtr__ring_rec(r, next);
	if (e->kind != RTR__K_END || e->a != begin->a || e->b != begin->b || e->ext != 0 ||
	    e->flags != 0)
		return NULL;
	return e;
}

/* ------------------------------------------------------------------------- */
/* Rings                                                                      */

static struct reader *reader_of(struct rtr__ring *r)
{
	return (struct reader *)(void *)r->reader;
}

static uint64_t ring_dropped(struct rtr__ring *r)
{
	/* producer-owned counters: a stale value only delays the report */
	return rtr_atomic_load_relaxed(&r->dropped_full) +
	       rtr_atomic_load_relaxed(&r->dropped_large) +
	       rtr_atomic_load_relaxed(&r->dropped_reentrant) +
	       rtr_atomic_load_relaxed(&r->dropped_no_track);
}

/* Give a ring its reader state for this session. Rings made before the session
 * began start from their counters at that moment. */
static struct reader *reader_attach(struct writer *w, struct rtr__ring *r)
{
	struct reader *rd = reader_of(r);

	if (RTR_LIKELY(rd->session == w->session_id))
		return rd;
	memset(rd, 0, sizeof(*rd));
	rd->session = w->session_id;
	if (r->id <= w->first_ring_id) {
		rd->base_events = rtr_atomic_load_relaxed(&r->events);
		rd->base_full = rtr_atomic_load_relaxed(&r->dropped_full);
		rd->base_large = rtr_atomic_load_relaxed(&r->dropped_large);
		rd->base_reentrant = rtr_atomic_load_relaxed(&r->dropped_reentrant);
		rd->base_no_track = rtr_atomic_load_relaxed(&r->dropped_no_track);
		rd->base_args_cut = rtr_atomic_load_relaxed(&r->args_cut);
		rd->dropped_seen =
			rd->base_full + rd->base_large + rd->base_reentrant + rd->base_no_track;
	}
	return rd;
}

/* Show new drops as a counter track: the session's running total. */
static void show_drops(struct writer *w, struct rtr__ring *r, struct reader *rd)
{
	uint64_t dropped = ring_dropped(r);

	if (dropped == rd->dropped_seen)
		return;
	w->dropped_shown += dropped - rd->dropped_seen;
	rd->dropped_seen = dropped;

	char *p = out_reserve(w, LINE_FIXED);
	p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"ringtrace: dropped\",\"ts\":");
	p = rtr__json_us(p, rel_ns(w, rtr__mono_ns()));
	p = put_pid_tid(w, p, r->tid);
	p = PUT_LIT(p, ",\"args\":{\"events\":");
	p = rtr__json_u64(p, w->dropped_shown);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 0);
}

/*
 * Skip `records` records of r from the malformed header rec, counted as
 * dropped_corrupt and reported once. unframed: rec's own length is not to be trusted,
 * so every published record is skipped, and how many events they held is known only
 * from the producer's count (exactly once the session has stopped: account()).
 */
static RTR_COLD void skip_corrupt(struct writer *w, struct rtr__ring *r, struct reader *rd,
				  const struct rtr__rec *rec, uint32_t records, int unframed)
{
	if (unframed) {
		rd->unframed = 1;
		/* producer-owned counter, relaxed: at most the event in flight too many */
		uint64_t published = rtr_atomic_load_relaxed(&r->events) - rd->base_events;
		rd->corrupt = published > rd->events ? published - rd->events : rd->corrupt;
	} else {
		rd->corrupt++;
	}
	if (w->corrupt_reported)
		return;
	w->corrupt_reported = 1;
	fprintf(stderr,
		"ringtrace: thread %d's ring holds a malformed record (kind %u, %u arguments, "
		"%u bytes after it); %u records skipped, their events counted as "
		"dropped_corrupt\n",
		(int)r->tid, rec->kind, rec->nargs, rec->ext, records);
}

/* Drain up to `max` records of r. Returns the records consumed. */
static uint32_t drain_ring(struct writer *w, struct rtr__ring *r, uint32_t max)
{
	struct reader *rd = reader_attach(w, r);
	uint32_t avail = rtr__ring_readable(r);
	uint32_t tail = r->tail; /* own index; consume() below moves it */
	uint32_t done = 0, released = 0;
	uint64_t events = 0;

	if (avail == 0) {
		show_drops(w, r, rd);
		return 0;
	}
	use_ids(w, r->tid);
	if (RTR_UNLIKELY(!w->process_meta_done))
		process_meta(w);
	if (RTR_UNLIKELY(w->heads_epoch != w->intern.resets)) {
		/* the intern cache was emptied: so are the heads, a batch later at most */
		memset(w->heads, 0, HEAD_SLOTS * sizeof(*w->heads));
		w->heads_epoch = w->intern.resets;
	}
	if (!rd->meta_done) {
		/* A thread whose first event names it needs no name from before. */
		if (rtr__ring_rec(r, tail)->kind != RTR__K_THREAD_NAME)
			encode_thread_name(w, r, r->name, strnlen(r->name, sizeof(r->name)), 0);
		/* relaxed: set by the owning thread; a late value is in the ring too */
		int sort = __atomic_load_n(&r->sort_index, __ATOMIC_RELAXED);
		if (sort != 0)
			put_meta_line(w, 0, "thread_sort_index", (uint32_t)w->s.pid,
				      (uint32_t)r->tid, "sort_index", NULL, 0, sort - 1);
		rd->meta_done = 1;
		w->threads++;
	}
	while (done < avail && done < max) {
		uint32_t pos = tail + done;
		const struct rtr__rec *rec = rtr__ring_rec(r, pos);
		if (RTR_UNLIKELY(!rtr__rec_framed(rec, avail - done))) {
			/* Where the next event starts is unknown: skip what is published. */
			rd->events += events;
			events = 0;
			skip_corrupt(w, r, rd, rec, avail - done, 1);
			done = avail;
			break;
		}
		uint32_t next = pos + rtr__ring_event_records(rec->ext);
		const struct rtr__rec *end = span_end(r, rec, tail, next, avail);
		__builtin_prefetch(rtr__ring_rec(r, pos + 8));
		if (RTR_UNLIKELY(!encode_event(w, r, rec, pos, end))) {
			skip_corrupt(w, r, rd, rec, next - pos, 0);
			end = NULL; /* a folded E is read again as an event of its own */
		} else {
			if (end != NULL) {
				next++;
				events++;
			}
			events++;
		}
		done = next - tail;
		if (done - released >= RELEASE_EVERY) {
			rtr__ring_consume(r, done - released);
			released = done;
		}
	}
	rtr__ring_consume(r, done - released);
	rd->events += events;
	show_drops(w, r, rd);
	return done;
}

/*
 * Add ring r's share of the session to t: the producer's counters since the session
 * began, and what the writer consumed. A ring whose framing broke counts as corrupt
 * what the producer published and the writer did not encode; exact once the ring is
 * drained after the stop's wait (then nothing else is in it).
 */
static void ring_totals(struct writer *w, struct rtr__ring *r, struct totals *t)
{
	struct reader *rd = reader_attach(w, r);
	/* producer-owned counters, relaxed: a stale value is one pass old */
	uint64_t events = rtr_atomic_load_relaxed(&r->events) - rd->base_events;

	t->events += events;
	t->full += rtr_atomic_load_relaxed(&r->dropped_full) - rd->base_full;
	t->large += rtr_atomic_load_relaxed(&r->dropped_large) - rd->base_large;
	t->reentrant += rtr_atomic_load_relaxed(&r->dropped_reentrant) - rd->base_reentrant;
	t->no_track += rtr_atomic_load_relaxed(&r->dropped_no_track) - rd->base_no_track;
	t->args_cut += rtr_atomic_load_relaxed(&r->args_cut) - rd->base_args_cut;
	t->consumed += rd->events;
	if (rd->unframed && rtr__ring_readable(r) == 0 && events >= rd->events)
		rd->corrupt = events - rd->events;
	t->corrupt += rd->corrupt;
}

/* Fold a drained, closed ring into the retired totals and free it. */
static void retire_ring(struct writer *w, struct rtr__ring *r)
{
	ring_totals(w, r, &w->retired);
	rtr__rings_free(r);
}

/* One pass over every ring. Returns the records consumed. */
static uint64_t drain_all(struct writer *w, uint32_t batch)
{
	size_t n = rtr__rings_snapshot(&w->rings, &w->rings_cap);
	uint64_t work = 0;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->rings[i];
		/* closed first (A2), then the fill: a closed ring seen empty stays empty */
		int closed = rtr__ring_closed(r);
		work += drain_ring(w, r, batch);
		if (closed && rtr__ring_readable(r) == 0)
			retire_ring(w, r);
	}
	return work;
}

/*
 * Publish the session's counters for rtr_stats_get() and the end marker:
 *	recorded = published + dropped by producers (full, too large, reentrant, no track)
 *	published = consumed (encoded: written or lost to I/O) + corrupt + unwritten
 * where unwritten is what a stop left in the rings (final: after the stop's wait, so
 * the identity recorded = written + dropped holds exactly, see ring.h).
 */
static void account(struct writer *w, int final)
{
	size_t n = rtr__rings_snapshot(&w->rings, &w->rings_cap);
	struct totals t = w->retired;

	for (size_t i = 0; i < n; i++)
		ring_totals(w, w->rings[i], &t);
	t.reentrant += rtr__rings_reentrant_unattached() - w->base_unattached;
	/* stats: relaxed; readers accept a value one pass old */
	rtr_atomic_store_relaxed(&w->st_recorded,
				 t.events + t.full + t.large + t.reentrant + t.no_track);
	rtr_atomic_store_relaxed(&w->st_dropped_full, t.full);
	rtr_atomic_store_relaxed(&w->st_dropped_large, t.large);
	rtr_atomic_store_relaxed(&w->st_dropped_reentrant, t.reentrant);
	rtr_atomic_store_relaxed(&w->st_dropped_no_track, t.no_track);
	rtr_atomic_store_relaxed(&w->st_dropped_corrupt, t.corrupt);
	rtr_atomic_store_relaxed(&w->st_args_cut, t.args_cut);
	rtr_atomic_store_relaxed(&w->st_threads, w->threads);
	if (final && t.events > t.consumed + t.corrupt)
		rtr_atomic_store_relaxed(&w->st_unwritten, t.events - t.consumed - t.corrupt);
}

/* ------------------------------------------------------------------------- */
/* The file's head and tail                                                   */

static char *put_escaped_str(char *p, const char *s)
{
	*p++ = '"';
	p = rtr__json_escape(p, s, strnlen(s, 1024));
	*p++ = '"';
	return p;
}

static void write_head(struct writer *w)
{
	const struct rtr__session *s = &w->s;
	char *p = out_reserve(w, 16384);

	p = PUT_LIT(p, "[\n");
	p = out_commit(w, p, 0); /* every line, even this one, is accounted for by itself */
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0");
	p = put_pid_tid(w, p, s->start_tid);
	p = PUT_LIT(p, ",\"args\":{\"origin_monotonic_ns\":\"");
	p = rtr__json_u64(p, s->origin_ns);
	p = PUT_LIT(p, "\",\"origin_realtime_ns\":\"");
	p = rtr__json_u64(p, s->origin_real_ns);
	p = PUT_LIT(p, "\",\"host\":");
	p = put_escaped_str(p, s->host);
	p = PUT_LIT(p, ",\"pid\":");
	p = rtr__json_u64(p, (uint64_t)s->pid);
	if (s->rank >= 0) {
		p = PUT_LIT(p, ",\"rank\":");
		p = rtr__json_u64(p, (uint64_t)s->rank);
	}
	if (s->world_size > 0) {
		p = PUT_LIT(p, ",\"world_size\":");
		p = rtr__json_u64(p, (uint64_t)s->world_size);
	}
	p = PUT_LIT(p, ",\"version\":\"" RTR_VERSION_STRING "\",\"clock\":");
	p = put_escaped_str(p, s->clock.kind == RTR_CLOCK_TSC ? "tsc" : "monotonic");
	p = PUT_LIT(p, ",\"io\":");
	p = put_escaped_str(p, rtr_io_name(w->sink.method));
	p = PUT_LIT(p, ",\"ring_bytes\":");
	p = rtr__json_u64(p, s->cfg.ring_bytes);
	p = PUT_LIT(p, ",\"on_full\":");
	p = put_escaped_str(p, s->cfg.on_full == RTR_ON_FULL_BLOCK ? "block" : "drop");
	p = PUT_LIT(p, ",\"flush_ms\":");
	p = rtr__json_u64(p, s->cfg.flush_ms);
	if (s->categories[0] != '\0') { /* the category filter: this trace holds only these */
		p = PUT_LIT(p, ",\"categories\":");
		p = put_escaped_str(p, s->categories);
	}
	p = PUT_LIT(p, ",\"compress\":");
	p = put_escaped_str(p, w->sink.gzip != NULL ? "gzip" : "none");
	p = PUT_LIT(p, ",\"cache_mb\":");
	p = rtr__json_u64(p, w->sink.cache_window >> 20);
	p = PUT_LIT(p, "}},\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"process_name\"");
	p = put_pid_tid(w, p, s->pid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	p = put_escaped_str(p, s->process_name);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 0);
}

/*
 * The closing lines: the end marker with the totals so far, then "]". final 0: the
 * provisional close at the end of a chunk (see submit_chunk()); it goes in the room
 * out_reserve() keeps free. "bytes" counts the JSON text that precedes the marker
 * (uncompressed in a .json.gz).
 */
static void put_end(struct writer *w, int final)
{
	const struct rtr__session *s = &w->s;
	uint64_t full = rtr_atomic_load_relaxed(&w->st_dropped_full);
	uint64_t large = rtr_atomic_load_relaxed(&w->st_dropped_large);
	uint64_t reentrant = rtr_atomic_load_relaxed(&w->st_dropped_reentrant);
	uint64_t corrupt = rtr_atomic_load_relaxed(&w->st_dropped_corrupt);
	uint64_t no_track = rtr_atomic_load_relaxed(&w->st_dropped_no_track);
	uint64_t failed = rtr_atomic_load_relaxed(&w->sink.events_failed);
	uint64_t io = failed + rtr_atomic_load_relaxed(&w->st_unwritten);
	uint64_t bytes = w->sink.text_offset + w->chunk->len;
	char *p = w->chunk->data + w->chunk->len;

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":");
	p = rtr__json_us(p, rel_ns(w, rtr__mono_ns()));
	p = put_pid_tid(w, p, s->start_tid);
	p = PUT_LIT(p, ",\"args\":{\"final\":");
	p = final ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
	p = PUT_LIT(p, ",\"events\":");
	p = rtr__json_u64(p, w->encoded - failed);
	p = PUT_LIT(p, ",\"dropped\":");
	p = rtr__json_u64(p, full + large + reentrant + corrupt + no_track + io);
	p = PUT_LIT(p, ",\"dropped_ring_full\":");
	p = rtr__json_u64(p, full);
	p = PUT_LIT(p, ",\"dropped_too_large\":");
	p = rtr__json_u64(p, large);
	p = PUT_LIT(p, ",\"dropped_io\":");
	p = rtr__json_u64(p, io);
	p = PUT_LIT(p, ",\"dropped_reentrant\":");
	p = rtr__json_u64(p, reentrant);
	p = PUT_LIT(p, ",\"dropped_corrupt\":");
	p = rtr__json_u64(p, corrupt);
	p = PUT_LIT(p, ",\"dropped_no_track\":");
	p = rtr__json_u64(p, no_track);
	p = PUT_LIT(p, ",\"args_cut\":");
	p = rtr__json_u64(p, rtr_atomic_load_relaxed(&w->st_args_cut));
	p = PUT_LIT(p, ",\"threads\":");
	p = rtr__json_u64(p, rtr_atomic_load_relaxed(&w->st_threads));
	if (w->mem.untracked != 0) { /* allocations left out of the memory totals */
		p = PUT_LIT(p, ",\"mem_untracked\":");
		p = rtr__json_u64(p, w->mem.untracked);
	}
	p = PUT_LIT(p, ",\"bytes\":");
	p = rtr__json_u64(p, bytes);
	p = PUT_LIT(p, "}}\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "]\n");
	out_commit(w, p, 0);
}

/* ------------------------------------------------------------------------- */
/* The thread                                                                 */

/* Is there a reason not to sleep? Read after the sleep flag is set and fenced. */
static int work_pending(struct writer *w)
{
	if (rtr_atomic_load_acquire(&w->stop) ||
	    rtr_atomic_load_acquire(&w->flush_req) != w->flush_done)
		return 1;
	size_t n = rtr__rings_snapshot(&w->rings, &w->rings_cap);
	for (size_t i = 0; i < n; i++)
		if (rtr__ring_over_mark(w->rings[i], rtr__ring_readable(w->rings[i])))
			return 1;
	return 0;
}

static void writer_sleep(struct writer *w, uint64_t ns)
{
	/* the doorbell's flag is set and fenced before the rings are read (ring.h) */
	uint32_t seq = rtr__rings_sleep_prepare();

	if (!work_pending(w))
		rtr__rings_sleep(seq, ns);
	rtr__rings_sleep_done();
	rtr_atomic_store_relaxed(&w->st_wakeups, w->st_wakeups + 1);
}

static void write_out(struct writer *w, int wait)
{
	submit_chunk(w);
	if (wait)
		rtr__sink_wait(&w->sink);
	report_error_once(w);
	w->last_write_ns = rtr__mono_ns();
}

/*
 * A write error (ENOSPC, EFBIG) cut the file: give it back its end marker and "]" so
 * that it loads without repair, at the latest place the device takes them (the sink
 * keeps the line ends before the cut; each one further back costs the events of the
 * lines after it, counted as lost to the error). A stream cannot be cut; a compressed
 * file is left to the repair rule.
 */
static void close_after_error(struct writer *w)
{
	int err = rtr_atomic_load_relaxed(&w->sink.error);

	if ((err != -ENOSPC && err != -EFBIG && err != -EDQUOT) || !w->provisional ||
	    w->sink.gzip != NULL || w->chunk == NULL)
		return;
	rtr__sink_wait(&w->sink);
	for (unsigned i = 0; i < w->sink.nclose; i++) {
		uint64_t lost = w->sink.close_lost[i];
		uint64_t failed = rtr_atomic_load_relaxed(&w->sink.events_failed);

		/* The marker counts as rtr__sink_write_close() will, once it succeeds. */
		rtr_atomic_store_relaxed(&w->sink.events_failed, failed + lost);
		w->chunk->len = 0;
		w->chunk->nmeta = 0;
		w->sink.offset = w->sink.text_offset = w->sink.close_off[i];
		put_end(w, 1);
		rtr_atomic_store_relaxed(&w->sink.events_failed, failed);
		if (rtr__sink_write_close(&w->sink, i, w->chunk->data, w->chunk->len) == 0)
			return;
	}
}

/* Free the head cache, the scratch and the intern cache of the session. */
static void release_tables(struct writer *w)
{
	rtr__mem_unmap(w->heads, HEAD_SLOTS * sizeof(*w->heads));
	w->heads = NULL;
	rtr__mem_unmap(w->scratch, RTR__EXT_MAX);
	w->scratch = NULL;
	rtr__intern_destroy(&w->intern);
}

/* Free what rtr__writer_start() set up (not the file). */
static void release_session(struct writer *w)
{
	rtr__sink_close(&w->sink);
	release_tables(w);
	rtr__memstack_destroy(&w->mem);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t flush_ns = (uint64_t)w->s.cfg.flush_ms * 1000000u;
	int quiesced = 0;

	for (;;) {
		/* A5: pairs with R5 in rtr__writer_stop(); producers are already off */
		uint32_t stop = rtr_atomic_load_acquire(&w->stop);
		/* A6: pairs with R6 in rtr__writer_flush_request(); earlier events in the rings */
		uint32_t flush = rtr_atomic_load_acquire(&w->flush_req);
		int urgent = stop || flush != w->flush_done;
		/* An urgent pass drains each ring up to the head it reads, which is past
		 * every event recorded before the flush or stop request. */
		uint64_t work = drain_all(w, urgent ? UINT32_MAX : DRAIN_BATCH);

		account(w, 0);
		uint64_t now = rtr__mono_ns();
		/* after the drain: every tick converted so far is below the new pair */
		rtr__clock_repair(&w->s.clock, now);
		if (stop) {
			if (!quiesced) { /* then drain once more: what came in while we waited */
				/* the stop's wait (ring.h), then one more drain */
				size_t n = rtr__rings_snapshot(&w->rings, &w->rings_cap);
				rtr__rings_quiesce(w->rings, n, &w->give_up);
				quiesced = 1;
				continue;
			}
			if (work == 0) /* producers are off: a pass with nothing left ends it */
				break;
			continue;
		}
		if (flush != w->flush_done) {
			/* Done after one pass even if producers keep going: they cannot
			 * hold a flush up. */
			write_out(w, 1);
			/* R7: pairs with A7 in rtr__writer_flush_wait(); the file has it all */
			rtr_atomic_store_release(&w->flush_done, flush);
			futex(&w->flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
			continue;
		}
		if (now - w->last_write_ns >= flush_ns)
			write_out(w, 0);
		if (work == 0) {
			uint64_t due = w->last_write_ns + flush_ns;
			writer_sleep(w, due > now ? due - now : flush_ns);
		}
	}

	account(w, 1);
	w->finishing = 1;
	out_reserve(w, 0); /* TAIL_ROOM is free */
	put_end(w, 1);
	w->chunk->final = 1; /* the last write: a compressed stream ends with it */
	write_out(w, 1);
	close_after_error(w);
	w->final_error = rtr_atomic_load_relaxed(&w->sink.error);
	/* Flushes waiting now wait for nothing more: serve them all. */
	/* A8: pairs with R6 in rtr__writer_flush_request(); no ticket is handed out while
	 * stopping (the lifecycle lock), this is the last */
	uint32_t last = rtr_atomic_load_acquire(&w->flush_req);
	/* R7: pairs with A7 in rtr__writer_flush_wait() */
	rtr_atomic_store_release(&w->flush_done, last);
	futex(&w->flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	/* R9: pairs with A9 in rtr__writer_stop(); the session's results are final */
	if (rtr_atomic_exchange_acq_rel(&w->state, WRITER_EXITED) == WRITER_ABANDONED) {
		/* Stop left without us (we were stuck in the file): nobody else frees. */
		release_session(w);
		close(w->s.fd);
		/* R10: pairs with A10 in rtr__writer_start(); the session is freed */
		rtr_atomic_store_release(&w->state, WRITER_IDLE);
		return NULL;
	}
	futex(&w->state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	return NULL;
}

int rtr__writer_start(const struct rtr__session *s)
{
	struct writer *w = &W;
	int err;

	/* A10: pairs with R10 in writer_main(); an abandoned writer has freed all */
	if (rtr_atomic_load_acquire(&w->state) != WRITER_IDLE)
		return -EBUSY; /* the last session's writer is still stuck in the file */
	/* Keep the published counters of the last session until this one is ready. */
	w->s = *s;
	w->s.cfg.path = w->s.path;
	w->s.cfg.process_name = w->s.process_name;
	w->session_id = ++session_counter;
	w->first_ring_id = rtr__rings_created();
	memset(&w->retired, 0, sizeof(w->retired));
	w->base_unattached = rtr__rings_reentrant_unattached();
	w->corrupt_reported = 0;
	rtr_atomic_store_relaxed(&w->st_unwritten, 0);
	w->dropped_shown = 0;
	w->encoded = 0;
	w->finishing = 0;
	w->process_meta_done = 0;
	w->threads = 0;
	w->error_reported = 0;
	w->final_error = 0;
	w->stop = 0;
	w->give_up = 0;
	/* flush_req and flush_done run on across sessions: a flush that waits through a
	 * stop and a start must not see its ticket served by counters set back. */
	w->pid_tid_len = (size_t)snprintf(w->pid_tid, sizeof(w->pid_tid),
					  ",\"pid\":%ld,\"tid\":", (long)s->pid);
	w->ids_tid = -1;
	rtr__memstack_init(&w->mem); /* maps nothing until the first use */

	err = rtr__intern_init(&w->intern, INTERN_ARENA, INTERN_SLOTS);
	if (err != 0)
		return err;
	w->heads_epoch = w->intern.resets;
	w->scratch = rtr__mem_map(RTR__EXT_MAX);
	if (w->scratch == NULL) {
		err = -ENOMEM;
		goto fail_intern;
	}
	w->heads = rtr__mem_map(HEAD_SLOTS * sizeof(*w->heads));
	if (w->heads == NULL) {
		err = -ENOMEM;
		goto fail_scratch;
	}
	/* rtr__session_config() has resolved RTR_COMPRESS_AUTO by the path's suffix. */
	if (s->cfg.compress == RTR_COMPRESS_GZIP || s->cfg.compress == RTR_COMPRESS_GZIP_MEMBERS)
		err = rtr__sink_open_gzip(&w->sink, s->fd, s->cfg.io, CHUNK_BYTES, NCHUNKS,
					  s->cfg.compress == RTR_COMPRESS_GZIP_MEMBERS);
	else
		err = rtr__sink_open(&w->sink, s->fd, s->cfg.io, CHUNK_BYTES, NCHUNKS);
	/* The start cannot fail from here on but for pthread_create(): only now may a
	 * file written in place lose what it held. */
	if (err == 0 && s->truncate && ftruncate(s->fd, 0) != 0) {
		err = -errno;
		rtr__sink_close(&w->sink);
	}
	if (err != 0)
		goto fail_heads;
	/* Only a regular file can have its provisional close cut off (a pipe, /dev/null
	 * cannot); its pages would otherwise stay cached. */
	w->provisional = !w->sink.stream;
	if (w->provisional)
		rtr__sink_cache_window(&w->sink, (uint64_t)s->cfg.cache_mb << 20);
	w->sink.cancel = &w->give_up;

	/* Rings from an earlier session: forget their leftovers, free the closed ones. */
	size_t n = rtr__rings_snapshot(&w->rings, &w->rings_cap);
	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->rings[i];
		reader_attach(w, r);
		rtr__ring_consume(r, rtr__ring_readable(r));
		if (rtr__ring_closed(r))
			rtr__rings_free(r);
	}

	w->chunk = rtr__sink_acquire(&w->sink);
	write_head(w);
	if (w->provisional) {
		submit_chunk(w); /* a valid file from the first moment, closed provisionally */
		/* In the file before anything slow (buffer registration, the thread,
		 * libgcc): a kill from here on leaves a trace with its head, never an
		 * empty file. A stream's head waits for the writer thread instead: a
		 * full pipe must not hold rtr_start() up, and there is no file to leave. */
		rtr__sink_wait(&w->sink);
	}
	/* Then the slow part: buffer registration, the hint ring. Here, under the
	 * lifecycle lock, not in the writer thread: a fork() meanwhile would leave the
	 * child an io_uring fd it does not know of. */
	rtr__sink_setup(&w->sink);
	account(w, 0);
	rtr_atomic_store_relaxed(&w->st_io, w->sink.method);
	rtr_atomic_store_relaxed(&w->st_clock, s->clock.kind);
	rtr_atomic_store_relaxed(&w->st_wakeups, 0);
	w->last_write_ns = rtr__mono_ns();

	/* The writer takes no signals: the program's handlers never run on it, and a
	 * write past RLIMIT_FSIZE fails with EFBIG instead of killing the process. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* relaxed: pthread_create() orders it before the thread's first read */
	rtr_atomic_store_relaxed(&w->state, WRITER_RUNNING);
	err = -pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err == 0)
		return 0;
	rtr_atomic_store_relaxed(&w->state, WRITER_IDLE); /* no thread: ours alone */

	rtr__sink_close(&w->sink);
fail_heads:
	rtr__mem_unmap(w->heads, HEAD_SLOTS * sizeof(*w->heads));
	w->heads = NULL;
fail_scratch:
	rtr__mem_unmap(w->scratch, RTR__EXT_MAX);
	w->scratch = NULL;
fail_intern:
	rtr__intern_destroy(&w->intern);
	return err;
}

uint32_t rtr__writer_flush_request(void)
{
	struct writer *w = &W;
	/* R6: pairs with A6 in writer_main(); our earlier events are in the rings */
	uint32_t ticket = rtr_atomic_add_acq_rel(&w->flush_req, 1);

	rtr__rings_wake();
	return ticket;
}

/* The time left until deadline (CLOCK_MONOTONIC ns), as a futex timeout; 0 if none. */
static int time_left(uint64_t deadline, struct timespec *ts)
{
	uint64_t now = rtr__mono_ns();

	if (now >= deadline)
		return 0;
	ts->tv_sec = (time_t)((deadline - now) / 1000000000u);
	ts->tv_nsec = (long)((deadline - now) % 1000000000u);
	return 1;
}

/* CLOCK_MONOTONIC ns timeout_ms from now; UINT64_MAX for 0 (no limit). */
static uint64_t deadline_in(unsigned timeout_ms)
{
	return timeout_ms == 0 ? UINT64_MAX : rtr__mono_ns() + (uint64_t)timeout_ms * 1000000u;
}

int rtr__writer_flush_wait(uint32_t ticket, unsigned timeout_ms)
{
	struct writer *w = &W;
	uint64_t deadline = deadline_in(timeout_ms);
	struct timespec ts;

	for (;;) {
		/* A7: pairs with R7 in writer_main() */
		uint32_t done = rtr_atomic_load_acquire(&w->flush_done);
		if ((int32_t)(done - ticket) >= 0)
			break;
		if (deadline != UINT64_MAX && !time_left(deadline, &ts))
			return -ETIMEDOUT;
		futex(&w->flush_done, FUTEX_WAIT_PRIVATE, done,
		      deadline == UINT64_MAX ? NULL : &ts);
	}
	return rtr_atomic_load_relaxed(&w->sink.error);
}

/* Wait until the writer thread is done with the session or deadline passes. */
static int wait_exited(struct writer *w, uint64_t deadline)
{
	struct timespec ts;

	for (;;) {
		/* A9: pairs with R9 in writer_main(); the session's results are final */
		uint32_t st = rtr_atomic_load_acquire(&w->state);
		if (st != WRITER_RUNNING)
			return 1;
		if (deadline != UINT64_MAX && !time_left(deadline, &ts))
			return 0;
		futex(&w->state, FUTEX_WAIT_PRIVATE, st, deadline == UINT64_MAX ? NULL : &ts);
	}
}

/* How long a writer told to give up may take to notice: it waits in slices of 50 ms
 * (sink_sync.c, sink_uring.c); only a system call nothing interrupts takes longer. */
#define GIVE_UP_MS 500u

int rtr__writer_stop(void)
{
	struct writer *w = &W;
	int err;

	/* R5: pairs with A5 in writer_main() */
	rtr_atomic_store_release(&w->stop, 1);
	rtr__rings_wake();
	if (!wait_exited(w, deadline_in(w->s.cfg.stop_timeout_ms))) {
		/* The file blocks (a FIFO nobody reads, a hung mount): what is not written
		 * yet fails with -ETIMEDOUT, counted as dropped_io. Relaxed: the sink only
		 * stops waiting, nothing is read behind the flag. */
		rtr_atomic_store_relaxed(&w->give_up, 1);
		rtr__rings_wake();
		if (!wait_exited(w, deadline_in(GIVE_UP_MS)) &&
		    rtr_atomic_exchange_acq_rel(&w->state, WRITER_ABANDONED) == WRITER_RUNNING) {
			/* Stuck in a call nothing interrupts (pwrite on a hung NFS mount):
			 * leave it. When the call returns it fails what is left, frees the
			 * session and closes the file itself (writer_main()); until then
			 * rtr_start() returns -EBUSY. Its memory and fd stay valid. */
			pthread_detach(w->thread);
			return -ETIMEDOUT;
		}
		/* It finished meanwhile (the exchange found WRITER_EXITED): join it. */
		rtr_atomic_store_relaxed(&w->state, WRITER_EXITED);
	}
	pthread_join(w->thread, NULL);
	release_session(w);
	err = w->final_error;
	if (close(w->s.fd) != 0 && err == 0)
		err = -errno;
	/* relaxed: joined, nobody else reads it until our caller's lock is released */
	rtr_atomic_store_relaxed(&w->state, WRITER_IDLE);
	return err;
}

int rtr__writer_idle(void)
{
	/* A10: pairs with R10 in writer_main(); an abandoned writer has freed all */
	return rtr_atomic_load_acquire(&W.state) == WRITER_IDLE;
}

void rtr__writer_after_fork_child(void)
{
	struct writer *w = &W;

	/* Only this thread exists: the writer's last state is a snapshot of a thread
	 * that may have been anywhere. What it set up at start and never moves (the
	 * sink's pool and rings, the intern tables, heads, scratch) is released; what
	 * it grows as it runs (the memory event tables) may be mid-update and is left
	 * mapped (copy-on-write: it costs the child nothing it touches). */
	uint32_t st = rtr_atomic_load_relaxed(&w->state); /* relaxed: one thread now */

	if (st == WRITER_IDLE)
		return;
	if (st == WRITER_ABANDONED) {
		/* The parent's writer may have been freeing the session and closing the
		 * file itself: its mappings and fd number may be gone and reused by the
		 * program. Touch nothing; the child starts afresh. */
		rtr__memstack_init(&w->mem);
		rtr_atomic_store_relaxed(&w->state, WRITER_IDLE);
		return;
	}
	rtr__sink_forget(&w->sink);
	release_tables(w);
	rtr__memstack_init(&w->mem);
	/* Ours is a copy of the parent's descriptor: a FIFO reader sees EOF when the
	 * parent closes it, whatever its children do. */
	close(w->s.fd);
	w->chunk = NULL;
	rtr_atomic_store_relaxed(&w->state, WRITER_IDLE);
}

void rtr__writer_stats(struct rtr_stats *out)
{
	struct writer *w = &W;

	memset(out, 0, sizeof(*out));
	/* every field: relaxed, a snapshot at most one writer pass old */
	out->events_recorded = rtr_atomic_load_relaxed(&w->st_recorded);
	out->events_dropped_full = rtr_atomic_load_relaxed(&w->st_dropped_full);
	out->events_dropped_too_large = rtr_atomic_load_relaxed(&w->st_dropped_large);
	out->events_dropped_io = rtr_atomic_load_relaxed(&w->sink.events_failed) +
				 rtr_atomic_load_relaxed(&w->st_unwritten);
	out->events_written = rtr_atomic_load_relaxed(&w->sink.events_written);
	out->events_dropped_reentrant = rtr_atomic_load_relaxed(&w->st_dropped_reentrant);
	out->events_dropped_corrupt = rtr_atomic_load_relaxed(&w->st_dropped_corrupt);
	out->events_dropped_no_track = rtr_atomic_load_relaxed(&w->st_dropped_no_track);
	out->events_dropped = out->events_dropped_full + out->events_dropped_too_large +
			      out->events_dropped_io + out->events_dropped_reentrant +
			      out->events_dropped_corrupt + out->events_dropped_no_track;
	out->bytes_written = rtr_atomic_load_relaxed(&w->sink.bytes_written);
	out->events_args_cut = rtr_atomic_load_relaxed(&w->st_args_cut);
	out->threads = rtr_atomic_load_relaxed(&w->st_threads);
	out->writer_wakeups = rtr_atomic_load_relaxed(&w->st_wakeups);
	out->io_method = rtr_atomic_load_relaxed(&w->st_io);
	out->clock = rtr_atomic_load_relaxed(&w->st_clock);
	out->write_error = rtr_atomic_load_relaxed(&w->sink.error);
	out->bytes_uncompressed = rtr_atomic_load_relaxed(&w->sink.bytes_text);
}
