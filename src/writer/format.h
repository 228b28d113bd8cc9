/* SPDX-License-Identifier: MIT */
/*
 * An output format: the interface the writer calls and a format implements, and what
 * of the writer a format may use. Included by the formats only (src/format/json/,
 * src/format/perfetto/); nothing in src/writer/ includes a format's header.
 *
 * A format turns events (event.h) into bytes in the chunk being filled (out.h): a
 * batch of one ring's events per call, so that its per-event code is direct calls in
 * its own files (one indirect call per batch, never per event). It also writes what
 * every file has around its events (the head with the start marker, the end marker:
 * struct rtr__marker), the lines the writer makes about a thread (its name, its sort
 * index, the drops so far), and the lines of a cut (cut.c: the open slices and async
 * spans ended where a file ends and begun again where the next starts).
 *
 * Every operation runs on the writer thread (init and fini also from rtr_start() and
 * rtr_stop() while no writer thread runs). A format keeps its state in w->fmt_state,
 * made by init, and per ring in the reader's fmt_word.
 */
#ifndef RTR_WRITER_FORMAT_H
#define RTR_WRITER_FORMAT_H

#include "common/names.h"
#include "producer/tracks.h"
#include "writer/event.h"
#include "writer/lanes.h"
#include "writer/out.h"
#include "writer/slices.h"
#include "writer/writer_internal.h"

/* A key and its value in a marker, in the order the marker lists them. */
struct rtr__kv {
	const char *key; /* names.h */
	uint8_t type;	 /* RTR__KV_* */
	const char *str;
	uint64_t num;
};

enum {
	RTR__KV_U64,
	RTR__KV_U64_TEXT, /* a number past 2^53: text where the format's numbers are doubles */
	RTR__KV_STR,
	RTR__KV_BOOL,
};

#define RTR__MARKER_KV_MAX 48

/* The start or end marker of a file (marker.c): an instant on the whole trace at ts,
 * on the thread that started the recorder, with what it says. */
struct rtr__marker {
	const char *name; /* RTR__MARK_START or RTR__MARK_END */
	uint64_t ts;	  /* ns on the trace clock */
	int final;	  /* an end marker: the file's last (else the provisional close) */
	uint64_t events;  /* an end marker's events and drops, for counter tracks */
	uint64_t dropped;
	unsigned n;
	struct rtr__kv kv[RTR__MARKER_KV_MAX];
};

/* marker.c: the file's start marker, its end marker (final: the file's last). */
void rtr__marker_start(struct rtr__writer *w, struct rtr__marker *m);
void rtr__marker_end(struct rtr__writer *w, int final, struct rtr__marker *m);

struct rtr__format {
	const char *name;
	/* Lines may be moved to the next file page (out_commit()): JSON text can be
	 * padded with spaces between lines; a protobuf stream cannot. */
	int pads_pages;
	/* A slice is one line (JSON's X): B's are held until their E (slices.h), so that
	 * no viewer has to pair a B with an E. Perfetto's tracks pair them per thread. */
	int holds_begins;
	/* The session's state into w->fmt_state. 0 or -errno (nothing left allocated). */
	int (*init)(struct rtr__writer *w);
	/* Free it (how: RTR__FINI_*). */
	void (*fini)(struct rtr__writer *w, int how);
	/* A file begins (w->out.file_id is new): its head, with the start marker, before
	 * any event, into the first chunk. */
	void (*begin_file)(struct rtr__writer *w, const struct rtr__marker *start);
	/* The file's end: the end marker, in the room out_reserve() keeps at the end of
	 * every chunk (TAIL_ROOM), at w->out.chunk's end; committed. */
	void (*end_file)(struct rtr__writer *w, const struct rtr__marker *end);
	/* Events of ring r follow (a drain found some). */
	void (*begin_ring)(struct rtr__writer *w, struct rtr__ring *r);
	/* A line the writer makes about r's thread: RTR__WMETA_*. */
	void (*meta)(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value);
	/* The chunk is about to go (to the sink, or to the flight window): finish what
	 * the format holds back in it, before anything else is added (NULL: nothing). */
	void (*seal)(struct rtr__writer *w);
	/* Write the batch, walking it with rtr__batch_first/next() to its end (the
	 * walk keeps the writer's bookkeeping in step with the lines). Returns the
	 * events written: the sum of their counts, or less when the format could not
	 * write some. */
	uint64_t (*events)(struct rtr__writer *w, struct rtr__batch *b);
	/* A line of a cut (what: RTR__CUT_*): ev, an RTR__EV_BEGIN, RTR__EV_END or
	 * RTR__EV_SPAN (a held slice ended) of r's thread or an RTR__EV_ASYNC_BEGIN or
	 * RTR__EV_ASYNC_END (r NULL), at ev->ts, with the cut's mark added to its
	 * arguments (RTR__CUT_HELD: none). False, having written nothing, when the
	 * most it could take is over *budget; else that most comes off *budget. */
	bool (*cut)(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev,
		    int what, size_t *budget);
};

/* The key a cut's lines carry, true: "continued" where a file begins again what was
 * open, "cut" where it ends it, "open" where a snapshot shows it still open; NULL for
 * a held slice's B (RTR__CUT_HELD), which is as recorded. */
static inline const char *rtr__cut_mark(int what)
{
	return what == RTR__CUT_BEGIN  ? "continued"
	       : what == RTR__CUT_END  ? "cut"
	       : what == RTR__CUT_OPEN ? "open"
				       : NULL;
}

#endif
