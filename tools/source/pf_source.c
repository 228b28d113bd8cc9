/* SPDX-License-Identifier: MIT */
/*
 * A .pftrace as the text the JSON walk reads (trace.c), and as the JSON `convert`
 * writes (pf_to_json()): the two users of pf_json.h.
 *
 * For trace_open(), the decoder pulls packets from the trace's input (already
 * sniffed: its first bytes are read again from the input's block) and the converter
 * writes their events into a block of text, "[\n" + one event per line + "\n]\n",
 * the recorder's layout; the JSON walk parses the block as it would a file's, and
 * asks for the next when it is done. So memory is one block (a few packets' events)
 * and the decoder's state, and nothing is written anywhere.
 *
 * Where each event came from: event k of the text is on its line k + 2, and a queue
 * holds the packet of each line written but not yet handed out (the block's, a few
 * thousand at most), so that trace_next() and the messages can say "packet N at byte
 * O" instead of a line of a text the user never sees.
 *
 * How it ended is known when the decoder says so, before the walk has parsed the
 * last events; it is kept until the walk reaches the end of the text (pf_source_end()),
 * so that an error or a cut comes after every event before it, as in a JSON file.
 */
#include "pf_json.h"
#include "trace_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The first line of an event in the text ("[" is line 1). */
#define FIRST_LINE 2

/* The packet buffer to begin with, under TRACE_READ_SMALL (it grows as needed). */
#define SMALL_PACKET_BYTES (16 << 10)

struct from {
	uint64_t packet, offset;
};

struct pf_source {
	struct pf_decoder *dec;
	struct pf_json *conv;
	struct buf text;  /* the block handed to the walk */
	size_t target;	  /* a block is made of packets until it holds this much */
	uint64_t written; /* events written into the text so far */
	bool ended;	  /* the closing "]" is written */
	bool nomem;
	/* Where the events written and not handed out came from: from[head .. head +
	 * len) (a ring of cap) are events first .. first + len. */
	struct from *from;
	size_t head, len, cap;
	uint64_t first;
};

static int put_line(void *ctx, const char *line, size_t len, uint64_t packet, uint64_t offset)
{
	struct pf_source *s = ctx;

	if (s->len == s->cap) {
		size_t cap = s->cap != 0 ? 2 * s->cap : 256;
		struct from *p = malloc(cap * sizeof(*p));

		if (p == NULL)
			return s->nomem = true, -1;
		for (size_t i = 0; i < s->len; i++)
			p[i] = s->from[(s->head + i) % s->cap];
		free(s->from);
		s->from = p;
		s->head = 0;
		s->cap = cap;
	}
	if (buf_puts(&s->text, s->written == 0 ? "[\n" : ",\n") || buf_put(&s->text, line, len))
		return s->nomem = true, -1;
	s->from[(s->head + s->len++) % s->cap] = (struct from){packet, offset};
	s->written++;
	return 0;
}

int pf_source_open(struct trace *r)
{
	struct pf_options o = {.max_packet_bytes = r->opt.max_event_bytes,
			       .buffer_bytes =
				       r->opt.flags & TRACE_READ_SMALL ? SMALL_PACKET_BYTES : 0};
	struct pf_source *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->target = r->in.text_cap;
	if (pf_decoder_open(&r->in, &o, &s->dec) != 0 ||
	    pf_json_create(put_line, s, &s->conv) != 0) {
		pf_source_free(s);
		return -ENOMEM;
	}
	r->pf = s;
	return 0;
}

void pf_source_free(struct pf_source *s)
{
	if (s == NULL)
		return;
	pf_decoder_close(s->dec);
	pf_json_free(s->conv);
	buf_free(&s->text);
	free(s->from);
	free(s);
}

int pf_source_text(struct trace *r, unsigned char **p, size_t *len)
{
	struct pf_source *s = r->pf;
	const struct pf_packet *pk;

	s->text.len = 0;
	while (!s->ended && s->text.len < s->target) {
		if (pf_decoder_next(s->dec, &pk) == 1) {
			if (pf_json_packet(s->conv, pk) != 0)
				s->nomem = true;
		} else {
			/* the end, a cut or an error: what was held back, and the closing ']' */
			if (pf_json_finish(s->conv) != 0 ||
			    buf_puts(&s->text, s->written == 0 ? "[\n]\n" : "\n]\n"))
				s->nomem = true;
			s->ended = true;
		}
		if (s->nomem) {
			tr_fail_nomem(r);
			return -1;
		}
	}
	*p = (unsigned char *)s->text.p;
	*len = s->text.len;
	return 0;
}

bool pf_source_place(struct trace *r, uint64_t line, uint64_t *packet, uint64_t *offset)
{
	struct pf_source *s = r->pf;
	uint64_t k = line - FIRST_LINE;

	if (line < FIRST_LINE || k < s->first || k - s->first >= s->len)
		return false;
	*packet = s->from[(s->head + (k - s->first)) % s->cap].packet;
	*offset = s->from[(s->head + (k - s->first)) % s->cap].offset;
	return true;
}

void pf_source_forget(struct trace *r, uint64_t line)
{
	struct pf_source *s = r->pf;
	uint64_t k = line - FIRST_LINE;

	if (line < FIRST_LINE)
		return;
	while (s->len > 0 && s->first < k) {
		s->head = (s->head + 1) % s->cap;
		s->len--;
		s->first++;
	}
}

static enum trace_error error_kind(enum pf_error e)
{
	switch (e) {
	case PF_ERR_MALFORMED:
		return TRACE_ERR_SYNTAX;
	case PF_ERR_GZIP:
		return TRACE_ERR_GZIP;
	case PF_ERR_NOMEM:
		return TRACE_ERR_NOMEM;
	default:
		return TRACE_ERR_IO;
	}
}

/* "FILE: packet N at byte O: what" (in packet) or "FILE: what" into the status. */
static void say(struct trace *r, bool in_packet, uint64_t packet, uint64_t offset, const char *what)
{
	struct trace_status *st = &r->st;
	size_t n;

	trace_place_format(st->message, sizeof(st->message), r->name, 0, 0, in_packet, packet,
			   offset);
	n = strlen(st->message);
	snprintf(st->message + n, sizeof(st->message) - n, ": %s", what);
	st->what = st->message + (n + 2 < sizeof(st->message) ? n + 2 : n);
	st->line = st->col = 0;
	st->in_packet = in_packet;
	st->packet = packet;
	st->offset = offset;
}

void pf_source_end(struct trace *r)
{
	const struct pf_status *ps = pf_decoder_status(r->pf->dec);
	struct trace_status *st = &r->st;
	char what[320];

	if (r->in.trailing && !r->trailing_told) {
		r->trailing_told = true;
		tr_queue_issue(r, TRACE_ISSUE_GZIP_TRAILING, 0, 0,
			       "%llu bytes after the last gzip member (%s), ignored",
			       (unsigned long long)r->in.trailing_bytes,
			       r->in.trailing_nonzero ? "not a gzip member" : "all zero");
	}
	if (ps->error != PF_OK) {
		const char *m = ps->message;
		bool placed = ps->error == PF_ERR_MALFORMED;

		if (placed) { /* "packet N at byte O: " is said by the place */
			const char *colon = strstr(m, ": ");

			m = colon != NULL ? colon + 2 : m;
		}
		snprintf(what, sizeof(what), "%s", m);
		st->complete = false;
		r->failed = true;
		st->error = error_kind(ps->error);
		say(r, placed, ps->error_packet, ps->error_offset, what);
	} else if (ps->cut) {
		st->complete = false;
		st->events_closed = false;
		st->cut = true;
		st->cut_in_event = ps->cut_bytes > 0;
		st->cut_bytes = ps->cut_bytes;
		snprintf(what, sizeof(what),
			 "the file ends inside this packet (%" PRIu64
			 " bytes of it, not read): its events are lost, the %" PRIu64
			 " packets before are whole",
			 ps->cut_bytes, ps->packets);
		say(r, true, ps->packets, ps->cut_offset, what);
	}
}

/* ------------------------------------------------------------- pf_to_json() */

/* convert's output: the events written as the recorder writes them. */
struct writer {
	int (*write)(void *ctx, const void *p, size_t n);
	void *ctx;
	uint64_t lines;
	bool failed;
};

static int write_line(void *ctx, const char *line, size_t len, uint64_t packet, uint64_t offset)
{
	struct writer *w = ctx;

	(void)packet;
	(void)offset;
	if (w->write(w->ctx, w->lines == 0 ? "[\n" : ",\n", 2) != 0 ||
	    w->write(w->ctx, line, len) != 0)
		return w->failed = true, -1;
	w->lines++;
	return 0;
}

static int origin_packet(void *ctx, const struct pf_packet *pk)
{
	pf_json_origin_packet(ctx, pk);
	return 0;
}

static int convert_packet(void *ctx, const struct pf_packet *pk)
{
	return pf_json_packet(ctx, pk) != 0;
}

int pf_to_json(const char *path, int (*write)(void *ctx, const void *p, size_t n), void *ctx,
	       const struct pf_options *opt, struct pf_status *st, uint64_t *events)
{
	struct pf_options o = opt != NULL ? *opt : (struct pf_options){0};
	struct writer w = {.write = write, .ctx = ctx};
	struct pf_json_origin origin = {0};
	struct pf_json *c;
	struct stat sb;
	int rc, err;

	*events = 0;
	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		/* the first pass: the origin (errors come again in the second) */
		struct pf_options so = {.on_packet = origin_packet,
					.ctx = &origin,
					.max_packet_bytes = o.max_packet_bytes};

		pf_read_path(path, &so, st);
	}
	if (pf_json_create(write_line, &w, &c) != 0) {
		memset(st, 0, sizeof(*st));
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		return -1;
	}
	if (origin.has)
		pf_json_set_origin(c, origin.ns);
	o.on_packet = convert_packet;
	o.ctx = c;
	rc = pf_read_path(path, &o, st);
	/* What the read left held back, then the closing bracket. */
	err = pf_json_finish(c);
	if (!w.failed && (w.lines == 0 ? write(ctx, "[\n", 2) != 0 || write(ctx, "]\n", 2) != 0
				       : write(ctx, "\n]\n", 3) != 0))
		w.failed = true;
	*events = pf_json_events(c);
	if (err == -ENOMEM) {
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		rc = -1;
	} else if (w.failed) {
		st->error = PF_ERR_STOPPED;
		snprintf(st->message, sizeof(st->message), "the output failed");
		rc = -1;
	}
	pf_json_free(c);
	return rc;
}
