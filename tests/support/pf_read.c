/* SPDX-License-Identifier: MIT */
#include "pf_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_SEQS 1024

struct interned {
	uint32_t kind;
	uint64_t iid;
	char str[256];
};

struct seq {
	int cleared;
	uint64_t default_track;
	uint32_t default_clock;
	int has_delta;
	uint64_t delta_last;
	/* the clocks of its last ClockSnapshot: trace processor rejects one that moves a
	 * clock backwards (for the trace's clock, "not monotonic"), after which it places
	 * the sequence's deltas from the old value */
	int has_snap[128];
	uint64_t snap[128];
	struct interned *in;
	size_t nin, capin;
};

struct buf {
	const uint8_t *p, *end;
};

struct reader {
	struct pf_trace *t;
	struct seq seqs[MAX_SEQS];
	size_t packet;
	size_t events_cap;
	int failed;
	int allow_cut;
};

static void fail(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (rd->failed)
		return;
	rd->failed = 1;
	n = snprintf(rd->t->error, sizeof(rd->t->error), "packet %zu: ", rd->packet);
	va_start(ap, fmt);
	vsnprintf(rd->t->error + n, sizeof(rd->t->error) - (size_t)n, fmt, ap);
	va_end(ap);
}

static int varint(struct buf *b, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (b->p >= b->end)
			return -1;
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* The next field: its number, wire type, and its value (varint, fixed) or bytes. */
static int field(struct buf *b, uint32_t *num, uint32_t *wt, uint64_t *v, struct buf *sub)
{
	uint64_t tag;

	if (varint(b, &tag) != 0)
		return -1;
	*num = (uint32_t)(tag >> 3);
	*wt = (uint32_t)(tag & 7);
	switch (*wt) {
	case 0:
		return varint(b, v);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		memcpy(v, b->p, 8);
		b->p += 8;
		return 0;
	case 2:
		if (varint(b, v) != 0 || *v > (uint64_t)(b->end - b->p))
			return -1;
		sub->p = b->p;
		sub->end = b->p + *v;
		b->p += *v;
		return 0;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		*v = 0;
		memcpy(v, b->p, 4);
		b->p += 4;
		return 0;
	default:
		return -1;
	}
}

static void copy_str(char *dst, size_t size, struct buf s)
{
	size_t n = (size_t)(s.end - s.p);

	if (n >= size)
		n = size - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static const char *lookup(struct reader *rd, struct seq *sq, uint32_t kind, uint64_t iid)
{
	for (size_t i = sq->nin; i-- > 0;)
		if (sq->in[i].kind == kind && sq->in[i].iid == iid)
			return sq->in[i].str;
	fail(rd, "iid %llu of kind %u is not interned on its sequence", (unsigned long long)iid,
	     kind);
	return "";
}

static void read_interned(struct reader *rd, struct seq *sq, struct buf b)
{
	uint32_t num, wt;
	uint64_t v;
	struct buf sub;

	while (b.p < b.end) {
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			fail(rd, "bad interned_data");
			return;
		}
		if (wt != 2)
			continue;
		struct interned e = {.kind = num};
		struct buf f;
		uint32_t n2, w2;
		uint64_t v2;
		while (sub.p < sub.end && field(&sub, &n2, &w2, &v2, &f) == 0) {
			if (n2 == 1 && w2 == 0)
				e.iid = v2;
			else if (n2 == 2 && w2 == 2)
				copy_str(e.str, sizeof(e.str), f);
		}
		if (sq->nin == sq->capin) {
			sq->capin = sq->capin ? 2 * sq->capin : 64;
			sq->in = realloc(sq->in, sq->capin * sizeof(*sq->in));
		}
		sq->in[sq->nin++] = e;
	}
}

static void read_annotation(struct reader *rd, struct seq *sq, struct buf b, struct pf_ann *a)
{
	uint32_t num, wt;
	uint64_t v;
	struct buf sub;

	memset(a, 0, sizeof(*a));
	while (b.p < b.end) {
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			fail(rd, "bad debug annotation");
			return;
		}
		switch (num) {
		case 1:
			snprintf(a->name, sizeof(a->name), "%.63s", lookup(rd, sq, 3, v));
			break;
		case 10:
			copy_str(a->name, sizeof(a->name), sub);
			break;
		case 2:
			a->kind = 'b', a->u = v;
			break;
		case 3:
			a->kind = 'u', a->u = v;
			break;
		case 4:
			a->kind = 'i', a->i = (int64_t)v;
			break;
		case 5:
			a->kind = 'd', memcpy(&a->d, &v, 8);
			break;
		case 6:
			a->kind = 's', copy_str(a->s, sizeof(a->s), sub);
			break;
		case 7:
			a->kind = 'p', a->u = v;
			break;
		case 17:
			a->kind = 's';
			snprintf(a->s, sizeof(a->s), "%.127s", lookup(rd, sq, 29, v));
			break;
		case 12: {
			/* an array: its elements' values, joined, as text */
			struct pf_ann el;
			read_annotation(rd, sq, sub, &el);
			char piece[300];
			if (el.kind == 'i')
				snprintf(piece, sizeof(piece), "%lld", (long long)el.i);
			else if (el.kind == 's')
				snprintf(piece, sizeof(piece), "\"%s\"", el.s);
			else if (el.kind == 'a' || el.kind == 0)
				snprintf(piece, sizeof(piece), "[%s]", el.s);
			else
				snprintf(piece, sizeof(piece), "?");
			size_t len = strlen(a->s);
			snprintf(a->s + len, sizeof(a->s) - len, "%s%s", a->count ? "," : "",
				 piece);
			a->count++;
			a->kind = 'a';
			break;
		}
		default:
			break;
		}
	}
}

static void add_track(struct pf_trace *t, const struct pf_track *tr)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == tr->uuid) {
			t->tracks[i] = *tr;
			return;
		}
	t->tracks = realloc(t->tracks, (t->ntracks + 1) * sizeof(*t->tracks));
	t->tracks[t->ntracks++] = *tr;
}

static void read_descriptor(struct reader *rd, struct buf b)
{
	struct pf_track tr;
	uint32_t num, wt, n2, w2;
	uint64_t v, v2;
	struct buf sub, f;

	memset(&tr, 0, sizeof(tr));
	while (b.p < b.end) {
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			fail(rd, "bad track descriptor");
			return;
		}
		if (num == 1)
			tr.uuid = v;
		else if (num == 5)
			tr.parent = v;
		else if (num == 2)
			copy_str(tr.name, sizeof(tr.name), sub);
		else if (num == 8) { /* CounterDescriptor: its categories (2), joined by "," */
			tr.is_counter = 1;
			while (sub.p < sub.end && field(&sub, &n2, &w2, &v2, &f) == 0) {
				size_t len = strlen(tr.categories);
				if (n2 != 2 || w2 != 2 || len + 2 >= sizeof(tr.categories))
					continue;
				if (len > 0)
					tr.categories[len++] = ',';
				copy_str(tr.categories + len, sizeof(tr.categories) - len, f);
			}
		} else if (num == 3 || num == 4) {
			if (num == 3)
				tr.has_process = 1;
			else
				tr.has_thread = 1;
			while (sub.p < sub.end && field(&sub, &n2, &w2, &v2, &f) == 0) {
				if (n2 == 1)
					tr.pid = (int)v2;
				else if (n2 == 2 && num == 4)
					tr.tid = (int)v2;
				else if (n2 == 5 && num == 4)
					copy_str(tr.thread_name, sizeof(tr.thread_name), f);
				else if (n2 == 6 && num == 3)
					copy_str(tr.process_name, sizeof(tr.process_name), f);
			}
		}
	}
	add_track(rd->t, &tr);
}

static void read_event(struct reader *rd, struct seq *sq, struct buf b, struct pf_event *e)
{
	uint32_t num, wt;
	uint64_t v;
	struct buf sub;
	int has_track = 0;

	while (b.p < b.end) {
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			fail(rd, "bad track event");
			return;
		}
		switch (num) {
		case 9:
			e->type = (int)v;
			break;
		case 10:
			snprintf(e->name, sizeof(e->name), "%.127s", lookup(rd, sq, 2, v));
			break;
		case 23:
			copy_str(e->name, sizeof(e->name), sub);
			break;
		case 3:
			snprintf(e->cat, sizeof(e->cat), "%.63s", lookup(rd, sq, 1, v));
			break;
		case 22:
			copy_str(e->cat, sizeof(e->cat), sub);
			break;
		case 11:
			e->track = v;
			has_track = 1;
			break;
		case 30:
			e->has_counter = 1, e->counter = (int64_t)v;
			break;
		case 44:
			e->has_counter = 2, memcpy(&e->dcounter, &v, 8);
			break;
		case 47:
			e->flow = v;
			break;
		case 48:
			e->end_flow = v;
			break;
		case 4:
			if (e->nann < PF_MAX_ANN)
				read_annotation(rd, sq, sub, &e->ann[e->nann++]);
			break;
		default:
			break;
		}
	}
	if (!has_track)
		e->track = sq->default_track;
	if (e->track != 0 && pf_track(rd->t, e->track) == NULL)
		fail(rd, "track %llu used before its descriptor", (unsigned long long)e->track);
}

static void read_packets(struct reader *rd, struct buf b, int inner);

/* A packet of compressed_packets (field 50): a zlib stream of a Trace, inflated with
 * zlib and read in the packet's place; trace processor reads nothing else of it. */
static void read_compressed(struct reader *rd, struct buf whole, struct buf z)
{
	struct buf b = whole, sub;
	uint32_t num, wt;
	uint64_t v;

	while (b.p < b.end && field(&b, &num, &wt, &v, &sub) == 0)
		if (num != 50) {
			fail(rd, "compressed_packets with field %u beside it", num);
			return;
		}
	z_stream s;
	memset(&s, 0, sizeof(s));
	size_t cap = 4 * (size_t)(z.end - z.p) + 4096, len = 0;
	uint8_t *out = malloc(cap);
	int rc = inflateInit(&s); /* zlib's own format, as trace processor reads it */
	s.next_in = (Bytef *)(uintptr_t)z.p;
	s.avail_in = (uInt)(z.end - z.p);
	while (rc == Z_OK) {
		if (len == cap)
			out = realloc(out, cap *= 2);
		s.next_out = out + len;
		s.avail_out = (uInt)(cap - len);
		rc = inflate(&s, Z_NO_FLUSH);
		len = cap - s.avail_out;
	}
	inflateEnd(&s);
	if (rc != Z_STREAM_END || s.avail_in != 0)
		fail(rd, "compressed_packets: not one whole zlib stream (%d)", rc);
	else
		read_packets(rd, (struct buf){out, out + len}, 1);
	rd->t->compressed++;
	if (len > rd->t->max_batch)
		rd->t->max_batch = len;
	free(out);
}

static void read_packet(struct reader *rd, struct buf b)
{
	uint32_t num, wt, seq_id = 0, flags = 0, clock = 0;
	uint64_t v, ts = 0;
	int has_ts = 0, has_clock = 0;
	struct buf sub, interned = {0}, defaults = {0}, te = {0}, td = {0}, cs = {0};
	struct buf whole = b;

	while (b.p < b.end) {
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			fail(rd, "malformed packet");
			return;
		}
		switch (num) {
		case 8:
			ts = v, has_ts = 1;
			break;
		case 58:
			clock = (uint32_t)v, has_clock = 1;
			break;
		case 10:
			seq_id = (uint32_t)v;
			break;
		case 13:
			flags = (uint32_t)v;
			break;
		case 12:
			interned = sub;
			break;
		case 59:
			defaults = sub;
			break;
		case 11:
			te = sub;
			break;
		case 60:
			td = sub;
			break;
		case 6:
			cs = sub;
			break;
		case 50:
			read_compressed(rd, whole, sub);
			return;
		default:
			break;
		}
	}
	if (seq_id == 0 || seq_id >= MAX_SEQS) {
		fail(rd, "sequence id %u", seq_id);
		return;
	}
	struct seq *sq = &rd->seqs[seq_id];
	if (flags & 1) { /* the interned strings and defaults go; the clocks stay */
		free(sq->in);
		sq->in = NULL;
		sq->nin = sq->capin = 0;
		sq->default_track = 0;
		sq->default_clock = 0;
		sq->has_delta = 0;
		sq->cleared = 1;
		rd->t->cleared++;
	}
	if ((flags & 2) && !sq->cleared)
		fail(rd, "SEQ_NEEDS_INCREMENTAL_STATE before the sequence %u is cleared", seq_id);
	if ((interned.p != NULL || defaults.p != NULL) && !sq->cleared)
		fail(rd, "incremental state on sequence %u before it is cleared", seq_id);
	if (interned.p != NULL)
		read_interned(rd, sq, interned);
	if (defaults.p != NULL) {
		uint32_t n2, w2, n3, w3;
		uint64_t v2, v3;
		struct buf f, g;
		while (defaults.p < defaults.end && field(&defaults, &n2, &w2, &v2, &f) == 0) {
			if (n2 == 58)
				sq->default_clock = (uint32_t)v2;
			else if (n2 == 11)
				while (f.p < f.end && field(&f, &n3, &w3, &v3, &g) == 0)
					if (n3 == 11)
						sq->default_track = v3;
		}
	}
	if (cs.p != NULL) {
		uint32_t n2, w2, n3, w3;
		uint64_t v2, v3;
		struct buf f, g;
		while (cs.p < cs.end && field(&cs, &n2, &w2, &v2, &f) == 0) {
			uint32_t id = 0;
			uint64_t cts = 0;
			int incr = 0;
			if (n2 != 1)
				continue;
			while (f.p < f.end && field(&f, &n3, &w3, &v3, &g) == 0) {
				if (n3 == 1)
					id = (uint32_t)v3;
				else if (n3 == 2)
					cts = v3;
				else if (n3 == 3)
					incr = v3 != 0;
			}
			if (id < 128 && sq->has_snap[id] && cts < sq->snap[id])
				fail(rd,
				     "a ClockSnapshot moves clock %u of sequence %u backwards, "
				     "from %llu to %llu",
				     id, seq_id, (unsigned long long)sq->snap[id],
				     (unsigned long long)cts);
			if (id < 128) {
				sq->has_snap[id] = 1;
				sq->snap[id] = cts;
			}
			if (id >= 64 && incr) {
				sq->has_delta = 1;
				sq->delta_last = cts;
			}
		}
	}
	uint32_t use = has_clock ? clock : sq->default_clock;
	if (has_ts && use >= 64) {
		if (!sq->has_delta)
			fail(rd, "incremental clock %u used before its snapshot", use);
		ts = sq->delta_last + ts;
		sq->delta_last = ts;
	}
	if (td.p != NULL)
		read_descriptor(rd, td);
	if (te.p != NULL) {
		struct pf_trace *t = rd->t;
		if (t->nevents == rd->events_cap) { /* doubling: traces of 10^5 events */
			rd->events_cap = rd->events_cap ? 2 * rd->events_cap : 1024;
			t->events = realloc(t->events, rd->events_cap * sizeof(*t->events));
		}
		struct pf_event *e = &t->events[t->nevents++];
		memset(e, 0, sizeof(*e));
		e->seq = seq_id;
		e->ts = ts;
		read_event(rd, sq, te, e);
	}
}

/* The packets of a Trace: the file's (inner 0: whole ones up to a cut, when
 * allowed), or a compressed batch's (inner 1: every byte a whole packet). */
static void read_packets(struct reader *rd, struct buf b, int inner)
{
	struct pf_trace *t = rd->t;
	const uint8_t *base = b.p;

	while (b.p < b.end && !rd->failed) {
		const uint8_t *at = b.p;
		uint32_t num, wt;
		uint64_t v;
		struct buf sub;
		if (field(&b, &num, &wt, &v, &sub) != 0) {
			if (inner || !rd->allow_cut)
				fail(rd, "cut or malformed at byte %zu%s", (size_t)(at - base),
				     inner ? " of a compressed batch" : "");
			break;
		}
		if (num != 1 || wt != 2) {
			fail(rd, "field %u at the top level", num);
			break;
		}
		read_packet(rd, sub);
		if (!inner)
			t->whole = (size_t)(b.p - base);
		rd->packet++;
		t->npackets++;
	}
}

int pf_read(const char *path, struct pf_trace *t, int allow_cut)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	memset(t, 0, sizeof(*t));
	if (f == NULL || rd == NULL) {
		snprintf(t->error, sizeof(t->error), "%s: cannot open", path);
		if (f)
			fclose(f);
		free(rd);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size + 1);
	if (fread(data, 1, (size_t)size, f) != (size_t)size)
		snprintf(t->error, sizeof(t->error), "%s: short read", path);
	fclose(f);
	rd->t = t;
	rd->allow_cut = allow_cut;
	t->bytes = (size_t)size;
	if (t->error[0] == '\0')
		read_packets(rd, (struct buf){data, data + size}, 0);
	for (size_t i = 0; i < MAX_SEQS; i++)
		free(rd->seqs[i].in);
	free(rd);
	free(data);
	return t->error[0] != '\0' ? -1 : 0;
}

void pf_free(struct pf_trace *t)
{
	free(t->events);
	free(t->tracks);
	memset(t, 0, sizeof(*t));
}

const struct pf_track *pf_track(const struct pf_trace *t, uint64_t uuid)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}

const struct pf_ann *pf_ann(const struct pf_event *e, const char *name)
{
	for (unsigned i = 0; i < e->nann; i++)
		if (strcmp(e->ann[i].name, name) == 0)
			return &e->ann[i];
	return NULL;
}
