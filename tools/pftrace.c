/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto trace decoder (see pftrace.h). The JSON writer is pftrace_json.c.
 */
#include "pftrace.h"
#include "table.h"
#include "threads.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* What an item of state costs against the bound: a table entry and its header
 * (threads.c's ENTRY_OVERHEAD), the value, malloc's own overhead for a copied string. */
#define ENTRY_COST 144

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_FIXED32 = 5 };

/* The interned tables of a sequence (InternedData's fields). */
enum { IN_NAMES, IN_CATEGORIES, IN_ANNOTATION_NAMES, IN_STRINGS, IN_COUNT };

static const char *const intern_what[IN_COUNT] = {"event name", "category", "debug annotation name",
						  "string value"};

/* A sequence-scoped clock (ids 64..127) as its latest ClockSnapshot defined it. */
struct seq_clock {
	bool defined, incremental;
	uint32_t ref_clock; /* the builtin clock the snapshot read with it */
	int64_t ref_ns;	    /* that clock's value then */
	uint64_t snap_units, cur_units, multiplier;
};

struct sequence {
	bool cleared; /* SEQ_INCREMENTAL_STATE_CLEARED seen */
	/* Said once per sequence: the packets after share the fault. */
	bool needs_reported, state_reported, clock_reported;
	bool has_default_clock, has_default_track;
	uint32_t default_clock;
	uint64_t default_track;
	struct table interned[IN_COUNT]; /* iid -> struct interned */
	struct seq_clock *clocks;	 /* [64], allocated with the first sequence clock */
};

struct interned {
	char *s;
	size_t len;
};

/* A field being read: where it is, which, and its value. */
struct pb {
	const uint8_t *p, *end;
};

struct field {
	uint32_t num;
	unsigned wt;
	uint64_t v; /* varint, fixed64, fixed32 */
	const uint8_t *data;
	size_t len; /* WT_LEN */
};

struct decoder {
	const struct pf_options *opt;
	struct pf_status *st;
	gzFile gz;
	uint8_t *buf;
	size_t cap, pos, len; /* buf[pos .. len) is unread */
	bool eof;
	uint64_t offset; /* stream offset of buf[pos] */
	uint64_t max_packet;

	const uint8_t *packet_base; /* the current packet, for error offsets */
	uint64_t packet_offset, packet_index;
	bool failed;

	struct table sequences; /* uint32 id -> struct sequence */
	struct table tracks;	/* uint64 uuid -> struct pf_track */
	struct state_budget budget;
	bool refused;

	int64_t clock_offset[64]; /* builtin clock -> primary: primary = clock + offset */
	bool clock_known[64];
	bool has_primary;
	uint32_t primary;

	struct pf_arg *args;
	size_t nargs, args_cap;
	uint64_t *flows;
	size_t nflows, flows_cap;
	struct pf_clock_value *clocks;
	size_t nclocks, clocks_cap;
	char *cats;
	size_t cats_len, cats_cap;
};

/* ------------------------------------------------------------------ errors */

static void fail(struct decoder *d, enum pf_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct decoder *d, enum pf_error e, const char *fmt, ...)
{
	va_list ap;

	if (d->failed)
		return;
	d->failed = true;
	d->st->error = e;
	va_start(ap, fmt);
	vsnprintf(d->st->message, sizeof(d->st->message), fmt, ap);
	va_end(ap);
}

/* Malformed input at p inside the current packet. */
static void malformed(struct decoder *d, const uint8_t *p, const char *what)
{
	fail(d, PF_ERR_MALFORMED, "packet %" PRIu64 " at byte %" PRIu64 ": %s", d->packet_index,
	     d->packet_offset + (uint64_t)(p - d->packet_base), what);
}

static void issue(struct decoder *d, enum pf_issue_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void issue(struct decoder *d, enum pf_issue_kind kind, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	d->st->issues[kind]++;
	if (d->opt->on_issue == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->opt->on_issue(d->opt->ctx, &(struct pf_issue){.kind = kind,
							 .packet = d->packet_index,
							 .offset = d->packet_offset,
							 .message = msg});
}

static bool take(struct decoder *d, uint64_t bytes)
{
	if (budget_take(&d->budget, bytes))
		return true;
	d->st->state_refused++;
	if (!d->refused)
		issue(d, PF_ISSUE_STATE_LIMIT,
		      "more state (interned strings, tracks, sequences) than the decoder keeps "
		      "(1 M items, 24 MiB): the rest is not kept, and references to it are not "
		      "checked");
	d->refused = true;
	return false;
}

const char *pf_issue_name(enum pf_issue_kind kind)
{
	static const char *const names[PF_ISSUE_COUNT] = {
		[PF_ISSUE_UNRESOLVED_IID] = "unresolved-iid",
		[PF_ISSUE_NEEDS_NOT_CLEARED] = "sequence-flags",
		[PF_ISSUE_STATE_BEFORE_CLEARED] = "sequence-flags",
		[PF_ISSUE_UNDECLARED_TRACK] = "undeclared-track",
		[PF_ISSUE_CLOCK_UNDEFINED] = "clock-undefined",
		[PF_ISSUE_PACKET_TOO_LARGE] = "packet-too-large",
		[PF_ISSUE_STATE_LIMIT] = "state-limit",
	};
	return kind < PF_ISSUE_COUNT ? names[kind] : "?";
}

/* ------------------------------------------------------------ wire format */

/* 1 and the field, 0 at the end, -1 malformed (reported). */
static int pb_varint(struct decoder *d, struct pb *b, uint64_t *v)
{
	const uint8_t *start = b->p;
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (b->p == b->end) {
			malformed(d, b->p, "a varint runs past the end of its message");
			return -1;
		}
		uint8_t c = *b->p++;

		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 1;
		}
	}
	malformed(d, start, "a varint over 10 bytes");
	return -1;
}

static int pb_skip_group(struct decoder *d, struct pb *b, uint32_t num, unsigned depth);

static int pb_next(struct decoder *d, struct pb *b, struct field *f, unsigned depth)
{
	const uint8_t *at = b->p;
	uint64_t key, n;

	if (b->p == b->end)
		return 0;
	if (pb_varint(d, b, &key) < 0)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (unsigned)(key & 7);
	if (key >> 3 == 0 || key >> 3 > UINT32_MAX) {
		malformed(d, at, "field number 0 or over 2^32");
		return -1;
	}
	switch (f->wt) {
	case WT_VARINT:
		return pb_varint(d, b, &f->v);
	case WT_FIXED64:
	case WT_FIXED32:
		n = f->wt == WT_FIXED64 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n) {
			malformed(d, at, "a fixed-size field runs past the end of its message");
			return -1;
		}
		f->v = 0;
		for (unsigned i = 0; i < n; i++)
			f->v |= (uint64_t)b->p[i] << (8 * i);
		b->p += n;
		return 1;
	case WT_LEN:
		if (pb_varint(d, b, &n) < 0)
			return -1;
		if (n > (uint64_t)(b->end - b->p)) {
			malformed(d, at, "a length past the end of its message");
			return -1;
		}
		f->data = b->p;
		f->len = (size_t)n;
		b->p += n;
		return 1;
	case WT_SGROUP:
		return pb_skip_group(d, b, f->num, depth + 1) < 0 ? -1 : 1;
	default:
		malformed(d, at,
			  f->wt == WT_EGROUP ? "an end-group with no group" : "bad wire type");
		return -1;
	}
}

/* A deprecated group, skipped to its end-group. */
static int pb_skip_group(struct decoder *d, struct pb *b, uint32_t num, unsigned depth)
{
	struct field f;
	int rc;

	if (depth > PF_MAX_DEPTH) {
		malformed(d, b->p, "nesting over 64 levels");
		return -1;
	}
	for (;;) {
		const uint8_t *at = b->p;
		uint64_t key;

		if (b->p == b->end) {
			malformed(d, b->p, "a group runs past the end of its message");
			return -1;
		}
		if (pb_varint(d, b, &key) < 0)
			return -1;
		if ((key & 7) == WT_EGROUP) {
			if ((key >> 3) != num) {
				malformed(d, at, "an end-group of another group");
				return -1;
			}
			return 0;
		}
		b->p = at;
		rc = pb_next(d, b, &f, depth);
		if (rc <= 0)
			return -1;
	}
}

static struct pb sub(const struct field *f)
{
	return (struct pb){f->data, f->data + f->len};
}

/* The elements of a repeated scalar, packed (WT_LEN) or not; calls add for each. */
static int repeated(struct decoder *d, const struct field *f, bool fixed64,
		    int (*add)(struct decoder *, uint64_t, void *), void *ctx)
{
	if (f->wt == WT_LEN) {
		struct pb b = sub(f);

		while (b.p < b.end) {
			uint64_t v = 0;

			if (fixed64) {
				if (b.end - b.p < 8) {
					malformed(d, b.p,
						  "a packed fixed64 field not a multiple of 8");
					return -1;
				}
				for (unsigned i = 0; i < 8; i++)
					v |= (uint64_t)b.p[i] << (8 * i);
				b.p += 8;
			} else if (pb_varint(d, &b, &v) < 0) {
				return -1;
			}
			if (add(d, v, ctx) != 0)
				return -1;
		}
		return 0;
	}
	return add(d, f->v, ctx);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap == 0 ? 16 : *cap;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * size);
	if (p != NULL)
		*cap = n;
	return p;
}

/* ------------------------------------------------------------------ state */

static struct sequence *sequence_of(struct decoder *d, uint32_t id)
{
	struct sequence *s = table_get(&d->sequences, &id, sizeof(id));
	bool created;

	if (s != NULL)
		return s;
	if (!take(d, sizeof(*s) + ENTRY_COST))
		return NULL;
	s = table_put(&d->sequences, &id, sizeof(id), &created);
	if (s == NULL) {
		fail(d, PF_ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (int i = 0; i < IN_COUNT; i++)
		table_init(&s->interned[i], sizeof(struct interned));
	return s;
}

static void interned_clear(struct decoder *d, struct sequence *s)
{
	for (int i = 0; i < IN_COUNT; i++) {
		for (struct interned *in = table_first(&s->interned[i]); in != NULL;
		     in = table_next(in)) {
			budget_give(&d->budget, in->len + ENTRY_COST);
			free(in->s);
		}
		table_destroy(&s->interned[i]);
		table_init(&s->interned[i], sizeof(struct interned));
	}
}

static void intern(struct decoder *d, struct sequence *s, int which, uint64_t iid,
		   const uint8_t *str, size_t len)
{
	struct interned *in = table_get(&s->interned[which], &iid, sizeof(iid));
	char *copy;

	if (in == NULL) {
		if (!take(d, len + ENTRY_COST))
			return;
		in = table_put(&s->interned[which], &iid, sizeof(iid), NULL);
	} else {
		budget_give(&d->budget, in->len + ENTRY_COST);
		if (!take(d, len + ENTRY_COST)) {
			free(in->s);
			table_remove(&s->interned[which], in);
			return;
		}
		free(in->s);
		in->s = NULL;
	}
	copy = malloc(len + 1);
	if (in == NULL || copy == NULL) {
		free(copy);
		fail(d, PF_ERR_NOMEM, "out of memory");
		return;
	}
	memcpy(copy, str, len);
	copy[len] = '\0';
	in->s = copy;
	in->len = len;
}

/* The interned string, or s NULL (reported as unresolved unless state was refused). */
static struct pf_str lookup(struct decoder *d, struct sequence *s, uint32_t seq_id, int which,
			    uint64_t iid)
{
	struct interned *in = s != NULL ? table_get(&s->interned[which], &iid, sizeof(iid)) : NULL;

	if (in != NULL)
		return (struct pf_str){in->s, in->len};
	if (!d->refused)
		issue(d, PF_ISSUE_UNRESOLVED_IID,
		      "%s iid %" PRIu64 " is not interned on sequence %" PRIu32
		      " (since its last clear): Perfetto shows the event without it",
		      intern_what[which], iid, seq_id);
	return (struct pf_str){NULL, 0};
}

static size_t len_of(const char *s)
{
	return s != NULL ? strlen(s) + 32 : 0;
}

/* The bytes of a track's strings, for the bound. */
static size_t track_strings(const struct pf_track *t)
{
	return len_of(t->name) + len_of(t->process_name) + len_of(t->thread_name) +
	       len_of(t->labels) + len_of(t->unit_name);
}

static void track_free_strings(struct pf_track *t)
{
	free(t->name);
	free(t->process_name);
	free(t->thread_name);
	free(t->labels);
	free(t->unit_name);
}

/* ---------------------------------------------------------------- packets */

static char *dup_field(struct decoder *d, const struct field *f)
{
	char *s = malloc(f->len + 1);

	if (s == NULL) {
		fail(d, PF_ERR_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(s, f->data, f->len);
	s[f->len] = '\0';
	return s;
}

static int replace_string(struct decoder *d, char **to, const struct field *f)
{
	char *s = dup_field(d, f);

	if (s == NULL)
		return -1;
	free(*to);
	*to = s;
	return 0;
}

/* The strings of an InternedData message: {iid = 1, name or str = 2}. */
static int read_interned_entry(struct decoder *d, struct sequence *s, int which,
			       const struct field *entry, unsigned depth)
{
	struct pb b = sub(entry);
	struct field f;
	uint64_t iid = 0;
	const uint8_t *str = NULL;
	size_t len = 0;
	int rc;

	while ((rc = pb_next(d, &b, &f, depth)) == 1) {
		if (f.num == 1 && f.wt == WT_VARINT)
			iid = f.v;
		else if (f.num == 2 && f.wt == WT_LEN) {
			str = f.data;
			len = f.len;
		}
	}
	if (rc < 0)
		return -1;
	if (s != NULL)
		intern(d, s, which, iid, str != NULL ? str : (const uint8_t *)"", len);
	return 0;
}

static int read_interned(struct decoder *d, struct sequence *s, const struct field *msg)
{
	struct pb b = sub(msg);
	struct field f;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		int which = f.num == 1	  ? IN_CATEGORIES
			    : f.num == 2  ? IN_NAMES
			    : f.num == 3  ? IN_ANNOTATION_NAMES
			    : f.num == 29 ? IN_STRINGS
					  : -1;

		if (which >= 0 && f.wt == WT_LEN && read_interned_entry(d, s, which, &f, 3) < 0)
			return -1;
		if (d->failed)
			return -1;
	}
	return rc;
}

static int read_defaults(struct decoder *d, struct sequence *s, const struct field *msg)
{
	struct pb b = sub(msg), eb;
	struct field f, g;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == 58 && f.wt == WT_VARINT && s != NULL) {
			s->has_default_clock = true;
			s->default_clock = (uint32_t)f.v;
		} else if (f.num == 11 && f.wt == WT_LEN) {
			eb = sub(&f);
			while ((rc = pb_next(d, &eb, &g, 3)) == 1) {
				if (g.num == 11 && g.wt == WT_VARINT && s != NULL) {
					s->has_default_track = true;
					s->default_track = g.v;
				}
			}
			if (rc < 0)
				return -1;
		}
	}
	return rc;
}

static int read_clock_snapshot(struct decoder *d, struct sequence *s, const struct field *msg,
			       struct pf_packet *pk)
{
	struct pb b = sub(msg);
	struct field f, g;
	int rc;
	bool has_primary = false;
	uint32_t primary = PF_CLOCK_BOOTTIME;

	d->nclocks = 0;
	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == 2 && f.wt == WT_VARINT) {
			has_primary = true;
			primary = (uint32_t)f.v;
		} else if (f.num == 1 && f.wt == WT_LEN) {
			struct pb cb = sub(&f);
			struct pf_clock_value c = {.unit_multiplier_ns = 1};

			while ((rc = pb_next(d, &cb, &g, 3)) == 1) {
				if (g.wt != WT_VARINT)
					continue;
				if (g.num == 1)
					c.clock_id = (uint32_t)g.v;
				else if (g.num == 2)
					c.timestamp = g.v;
				else if (g.num == 3)
					c.is_incremental = g.v != 0;
				else if (g.num == 4 && g.v > 0)
					c.unit_multiplier_ns = g.v;
			}
			if (rc < 0)
				return -1;
			d->clocks = grow(d->clocks, &d->clocks_cap, d->nclocks + 1, sizeof(c));
			if (d->clocks == NULL) {
				fail(d, PF_ERR_NOMEM, "out of memory");
				return -1;
			}
			d->clocks[d->nclocks++] = c;
		}
	}
	if (rc < 0)
		return -1;
	if (!d->has_primary) {
		d->has_primary = true;
		d->primary = has_primary ? primary : PF_CLOCK_BOOTTIME;
	}
	/* The builtin clocks against the primary one, as read together. */
	const struct pf_clock_value *prim = NULL, *ref = NULL;

	for (size_t i = 0; i < d->nclocks; i++) {
		if (d->clocks[i].clock_id == d->primary)
			prim = &d->clocks[i];
		if (d->clocks[i].clock_id < 64 && ref == NULL)
			ref = &d->clocks[i];
	}
	if (prim != NULL)
		ref = prim;
	for (size_t i = 0; i < d->nclocks && prim != NULL; i++) {
		const struct pf_clock_value *c = &d->clocks[i];

		if (c->clock_id < 64) {
			d->clock_known[c->clock_id] = true;
			d->clock_offset[c->clock_id] =
				(int64_t)(prim->timestamp * prim->unit_multiplier_ns) -
				(int64_t)(c->timestamp * c->unit_multiplier_ns);
		}
	}
	/* Sequence clocks: through the builtin clock read with them. */
	for (size_t i = 0; i < d->nclocks && s != NULL; i++) {
		const struct pf_clock_value *c = &d->clocks[i];

		if (c->clock_id < 64 || c->clock_id > 127 || ref == NULL)
			continue;
		if (s->clocks == NULL) {
			if (!take(d, 64 * sizeof(*s->clocks)))
				continue;
			s->clocks = calloc(64, sizeof(*s->clocks));
			if (s->clocks == NULL) {
				fail(d, PF_ERR_NOMEM, "out of memory");
				return -1;
			}
		}
		s->clocks[c->clock_id - 64] = (struct seq_clock){
			.defined = true,
			.incremental = c->is_incremental,
			.ref_clock = ref->clock_id,
			.ref_ns = (int64_t)(ref->timestamp * ref->unit_multiplier_ns),
			.snap_units = c->timestamp,
			.cur_units = c->timestamp,
			.multiplier = c->unit_multiplier_ns,
		};
	}
	pk->clocks = d->clocks;
	pk->nclocks = d->nclocks;
	return 0;
}

/* The packet's time on the primary clock, when it can be placed. */
static void resolve_time(struct decoder *d, struct sequence *s, struct pf_packet *pk)
{
	uint32_t clock = pk->clock_id;
	int64_t ns;

	if (!pk->has_timestamp)
		return;
	if (clock >= 64 && clock <= 127) {
		struct seq_clock *c =
			s != NULL && s->clocks != NULL ? &s->clocks[clock - 64] : NULL;

		if (c == NULL || !c->defined) {
			if (s != NULL && !s->clock_reported)
				issue(d, PF_ISSUE_CLOCK_UNDEFINED,
				      "timestamp on clock %" PRIu32 " of sequence %" PRIu32
				      ", which no ClockSnapshot on the sequence defined before: "
				      "Perfetto drops the packet (said once per sequence)",
				      clock, pk->sequence_id);
			if (s != NULL)
				s->clock_reported = true;
			return;
		}
		if (c->incremental) {
			c->cur_units += pk->timestamp_raw;
			ns = c->ref_ns + (int64_t)((c->cur_units - c->snap_units) * c->multiplier);
		} else {
			ns = c->ref_ns +
			     (int64_t)((pk->timestamp_raw - c->snap_units) * c->multiplier);
		}
		clock = c->ref_clock;
	} else {
		ns = (int64_t)pk->timestamp_raw;
	}
	if (clock < 64 && clock != d->primary && d->clock_known[clock])
		ns += d->clock_offset[clock];
	pk->has_time = true;
	pk->time_ns = ns;
}

static int read_descriptor(struct decoder *d, const struct field *msg, struct pf_packet *pk)
{
	struct pb b = sub(msg), sb;
	struct field f, g;
	struct pf_track t = {0}, *old;
	bool created;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == 1 && f.wt == WT_VARINT) {
			t.uuid = f.v;
		} else if (f.num == 5 && f.wt == WT_VARINT) {
			t.parent_uuid = f.v;
			t.has_parent = true;
		} else if (f.num == 2 && f.wt == WT_LEN) {
			if (replace_string(d, &t.name, &f) < 0)
				goto fail;
		} else if ((f.num == 3 || f.num == 4 || f.num == 8) && f.wt == WT_LEN) {
			if (t.kind == PF_TRACK_OTHER || f.num == 4)
				t.kind = f.num == 3   ? PF_TRACK_PROCESS
					 : f.num == 4 ? PF_TRACK_THREAD
						      : PF_TRACK_COUNTER;
			sb = sub(&f);
			while ((rc = pb_next(d, &sb, &g, 3)) == 1) {
				if (f.num == 8) {
					if (g.num == 3 && g.wt == WT_VARINT)
						t.counter_unit = (uint32_t)g.v;
					else if (g.num == 6 && g.wt == WT_LEN &&
						 replace_string(d, &t.unit_name, &g) < 0)
						goto fail;
					continue;
				}
				if (g.wt == WT_VARINT && g.num == 1) {
					t.has_pid = true;
					t.pid = (int32_t)g.v;
				} else if (g.wt == WT_VARINT && g.num == 2 && f.num == 4) {
					t.has_tid = true;
					t.tid = (int32_t)g.v;
				} else if (g.wt == WT_VARINT && g.num == 3) {
					t.has_sort_index = true;
					t.sort_index = (int32_t)g.v;
				} else if (g.wt == WT_LEN && g.num == 6 && f.num == 3) {
					if (replace_string(d, &t.process_name, &g) < 0)
						goto fail;
				} else if (g.wt == WT_LEN && g.num == 5 && f.num == 4) {
					if (replace_string(d, &t.thread_name, &g) < 0)
						goto fail;
				} else if (g.wt == WT_LEN && g.num == 8 && f.num == 3) {
					size_t n = t.labels != NULL ? strlen(t.labels) : 0;
					char *l = realloc(t.labels, n + g.len + 2);

					if (l == NULL) {
						fail(d, PF_ERR_NOMEM, "out of memory");
						goto fail;
					}
					if (n > 0)
						l[n++] = ',';
					memcpy(l + n, g.data, g.len);
					l[n + g.len] = '\0';
					t.labels = l;
				}
			}
			if (rc < 0)
				goto fail;
		}
	}
	if (rc < 0)
		goto fail;
	old = table_get(&d->tracks, &t.uuid, sizeof(t.uuid));
	if (old == NULL) {
		if (!take(d, sizeof(t) + ENTRY_COST + track_strings(&t))) {
			track_free_strings(&t);
			return 0;
		}
		old = table_put(&d->tracks, &t.uuid, sizeof(t.uuid), &created);
		if (old == NULL) {
			fail(d, PF_ERR_NOMEM, "out of memory");
			goto fail;
		}
	}
	t.descriptors = old->descriptors + 1;
	track_free_strings(old);
	*old = t;
	pk->track = old;
	return 0;
fail:
	track_free_strings(&t);
	return -1;
}

struct ev_ctx {
	struct decoder *d;
	struct sequence *s;
	uint32_t seq_id;
};

static int add_flow(struct decoder *d, uint64_t v, void *unused)
{
	(void)unused;
	d->flows = grow(d->flows, &d->flows_cap, d->nflows + 1, sizeof(*d->flows));
	if (d->flows == NULL) {
		fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	d->flows[d->nflows++] = v;
	return 0;
}

static int add_category(struct decoder *d, const char *s, size_t len)
{
	d->cats = grow(d->cats, &d->cats_cap, d->cats_len + len + 2, 1);
	if (d->cats == NULL) {
		fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (d->cats_len > 0)
		d->cats[d->cats_len++] = ',';
	memcpy(d->cats + d->cats_len, s, len);
	d->cats_len += len;
	return 0;
}

static int add_category_iid(struct decoder *d, uint64_t iid, void *ctx)
{
	struct ev_ctx *e = ctx;
	struct pf_str c = lookup(d, e->s, e->seq_id, IN_CATEGORIES, iid);

	return c.s != NULL ? add_category(d, c.s, c.len) : 0;
}

/* One DebugAnnotation, appended with its children (pre-order). */
static int read_annotation(struct decoder *d, struct ev_ctx *e, const struct field *msg,
			   unsigned depth)
{
	struct pb b = sub(msg);
	struct field f;
	size_t at = d->nargs;
	uint32_t children = 0;
	int rc;
	bool dict = false;

	if (depth > PF_MAX_DEPTH) {
		malformed(d, msg->data, "nesting over 64 levels");
		return -1;
	}
	d->args = grow(d->args, &d->args_cap, d->nargs + 1, sizeof(*d->args));
	if (d->args == NULL) {
		fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	d->nargs++;
	struct pf_arg a = {.kind = PF_ARG_NULL};

	while ((rc = pb_next(d, &b, &f, depth)) == 1) {
		if (f.wt == WT_LEN && (f.num == 11 || f.num == 12)) {
			if (f.num == 11)
				dict = true;
			continue;
		}
		switch (f.num) {
		case 1:
			if (f.wt == WT_VARINT)
				a.name = lookup(d, e->s, e->seq_id, IN_ANNOTATION_NAMES, f.v);
			break;
		case 10:
			if (f.wt == WT_LEN)
				a.name = (struct pf_str){(const char *)f.data, f.len};
			break;
		case 2:
			a.kind = PF_ARG_BOOL;
			a.b = f.v != 0;
			break;
		case 3:
			a.kind = PF_ARG_UINT;
			a.u = f.v;
			break;
		case 4:
			a.kind = PF_ARG_INT;
			a.i = (int64_t)f.v;
			break;
		case 5:
			if (f.wt == WT_FIXED64) {
				a.kind = PF_ARG_DOUBLE;
				memcpy(&a.d, &f.v, sizeof(a.d));
			}
			break;
		case 6:
			if (f.wt == WT_LEN) {
				a.kind = PF_ARG_STRING;
				a.str = (struct pf_str){(const char *)f.data, f.len};
			}
			break;
		case 7:
			a.kind = PF_ARG_POINTER;
			a.u = f.v;
			break;
		case 17:
			a.str = lookup(d, e->s, e->seq_id, IN_STRINGS, f.v);
			a.kind = a.str.s != NULL ? PF_ARG_STRING : PF_ARG_NULL;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return -1;
	/* Children: dict entries make a dict; else array values an array. */
	b = sub(msg);
	while (pb_next(d, &b, &f, depth) == 1) {
		if (f.wt != WT_LEN || f.num != (dict ? 11u : 12u))
			continue;
		if (read_annotation(d, e, &f, depth + 1) < 0)
			return -1;
		children++;
	}
	if (d->failed)
		return -1;
	if (dict || children > 0) {
		a.kind = dict ? PF_ARG_DICT : PF_ARG_ARRAY;
		a.count = children;
	}
	d->args[at] = a;
	return 0;
}

static int read_track_event(struct decoder *d, struct sequence *s, const struct field *msg,
			    struct pf_packet *pk)
{
	struct pb b = sub(msg);
	struct field f;
	struct pf_event *ev = &pk->event;
	struct ev_ctx e = {d, s, pk->sequence_id};
	bool has_track = false;
	size_t nflow = 0;
	int rc;

	d->nargs = d->nflows = d->cats_len = 0;
	/* Flows first, terminating ones after, so that both sit in one array. */
	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == 9 && f.wt == WT_VARINT) {
			ev->type = (enum pf_event_type)f.v;
		} else if (f.num == 23 && f.wt == WT_LEN) {
			ev->name = (struct pf_str){(const char *)f.data, f.len};
		} else if (f.num == 10 && f.wt == WT_VARINT) {
			ev->name = lookup(d, s, pk->sequence_id, IN_NAMES, f.v);
		} else if (f.num == 22 && f.wt == WT_LEN) {
			if (add_category(d, (const char *)f.data, f.len) < 0)
				return -1;
		} else if (f.num == 3) {
			if (repeated(d, &f, false, add_category_iid, &e) < 0)
				return -1;
		} else if (f.num == 11 && f.wt == WT_VARINT) {
			has_track = true;
			ev->track_uuid = f.v;
		} else if (f.num == 30 && f.wt == WT_VARINT) {
			ev->has_counter = true;
			ev->counter_is_double = false;
			ev->counter_int = (int64_t)f.v;
		} else if (f.num == 44 && f.wt == WT_FIXED64) {
			ev->has_counter = ev->counter_is_double = true;
			memcpy(&ev->counter_double, &f.v, sizeof(double));
		} else if (f.num == 47 && (f.wt == WT_LEN || f.wt == WT_FIXED64)) {
			if (repeated(d, &f, true, add_flow, NULL) < 0)
				return -1;
		} else if (f.num == 4 && f.wt == WT_LEN) {
			if (read_annotation(d, &e, &f, 3) < 0)
				return -1;
			ev->ntop++;
		}
		if (d->failed)
			return -1;
	}
	if (rc < 0)
		return -1;
	nflow = d->nflows;
	b = sub(msg);
	while (pb_next(d, &b, &f, 2) == 1) {
		if (f.num == 48 && (f.wt == WT_LEN || f.wt == WT_FIXED64) &&
		    repeated(d, &f, true, add_flow, NULL) < 0)
			return -1;
	}
	if (d->failed)
		return -1;
	ev->flow_ids = d->flows;
	ev->nflow_ids = nflow;
	ev->terminating_flow_ids = d->flows != NULL ? d->flows + nflow : NULL;
	ev->nterminating_flow_ids = d->nflows - nflow;
	ev->args = d->args;
	ev->nargs = d->nargs;
	if (d->cats_len > 0 || ev->categories.s != NULL)
		ev->categories = (struct pf_str){d->cats, d->cats_len};
	if (!has_track && s != NULL && s->has_default_track)
		ev->track_uuid = s->default_track;
	if (ev->track_uuid != 0) {
		ev->track = table_get(&d->tracks, &ev->track_uuid, sizeof(ev->track_uuid));
		if (ev->track == NULL && !d->refused)
			issue(d, PF_ISSUE_UNDECLARED_TRACK,
			      "track_uuid %" PRIu64 " (0x%" PRIx64
			      ") used before its TrackDescriptor: Perfetto puts the event on "
			      "a track it knows nothing of",
			      ev->track_uuid, ev->track_uuid);
	}
	return 0;
}

static int read_packet(struct decoder *d, const uint8_t *p, size_t len)
{
	struct pb b = {p, p + len};
	struct field f, te = {0}, tdesc = {0}, snap = {0}, interned = {0}, defaults = {0};
	struct pf_packet pk = {.index = d->packet_index,
			       .offset = d->packet_offset,
			       .size = len,
			       .tracks_ = &d->tracks};
	struct sequence *s = NULL;
	bool has_clock = false;
	int rc;

	while ((rc = pb_next(d, &b, &f, 1)) == 1) {
		switch (f.num) {
		case 8:
			if (f.wt == WT_VARINT) {
				pk.has_timestamp = true;
				pk.timestamp_raw = f.v;
			}
			break;
		case 58:
			if (f.wt == WT_VARINT) {
				has_clock = true;
				pk.clock_id = (uint32_t)f.v;
			}
			break;
		case 10:
			if (f.wt == WT_VARINT)
				pk.sequence_id = (uint32_t)f.v;
			break;
		case 13:
			if (f.wt == WT_VARINT)
				pk.sequence_flags = (uint32_t)f.v;
			break;
		case 87:
			if (f.wt == WT_VARINT)
				pk.first_packet_on_sequence = f.v != 0;
			break;
		case 11:
			if (f.wt == WT_LEN) {
				te = f;
				pk.kind = PF_PACKET_TRACK_EVENT;
			}
			break;
		case 60:
			if (f.wt == WT_LEN) {
				tdesc = f;
				pk.kind = PF_PACKET_TRACK_DESCRIPTOR;
			}
			break;
		case 6:
			if (f.wt == WT_LEN) {
				snap = f;
				pk.kind = PF_PACKET_CLOCK_SNAPSHOT;
			}
			break;
		case 12:
			if (f.wt == WT_LEN) {
				interned = f;
				pk.has_interned_data = true;
			}
			break;
		case 59:
			if (f.wt == WT_LEN) {
				defaults = f;
				pk.has_defaults = true;
			}
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return -1;
	s = sequence_of(d, pk.sequence_id);
	if (d->failed)
		return -1;
	if (s != NULL) {
		if (pk.sequence_flags & PF_SEQ_CLEARED) {
			interned_clear(d, s);
			s->cleared = true;
			/* Perfetto resets the defaults with the incremental state. */
			s->has_default_clock = s->has_default_track = false;
		} else if ((pk.sequence_flags & PF_SEQ_NEEDS) && !s->cleared &&
			   !s->needs_reported) {
			s->needs_reported = true;
			issue(d, PF_ISSUE_NEEDS_NOT_CLEARED,
			      "SEQ_NEEDS_INCREMENTAL_STATE on sequence %" PRIu32
			      ", never cleared (SEQ_INCREMENTAL_STATE_CLEARED) before: Perfetto "
			      "drops the packet (said once: the same for the sequence's later "
			      "ones)",
			      pk.sequence_id);
		}
		if ((pk.has_interned_data || pk.has_defaults) && !s->cleared &&
		    !s->state_reported) {
			s->state_reported = true;
			issue(d, PF_ISSUE_STATE_BEFORE_CLEARED,
			      "%s on sequence %" PRIu32
			      " before it was cleared (SEQ_INCREMENTAL_STATE_CLEARED): Perfetto "
			      "may not keep it",
			      pk.has_interned_data ? "interned data" : "trace_packet_defaults",
			      pk.sequence_id);
		}
	}
	if (pk.has_defaults && read_defaults(d, s, &defaults) < 0)
		return -1;
	if (pk.has_interned_data && read_interned(d, s, &interned) < 0)
		return -1;
	if (!has_clock)
		pk.clock_id =
			s != NULL && s->has_default_clock ? s->default_clock : PF_CLOCK_BOOTTIME;
	if (pk.kind == PF_PACKET_CLOCK_SNAPSHOT && read_clock_snapshot(d, s, &snap, &pk) < 0)
		return -1;
	if (!d->has_primary && pk.has_timestamp) {
		d->has_primary = true; /* no snapshot before: Perfetto's default */
		d->primary = PF_CLOCK_BOOTTIME;
	}
	pk.primary_clock = d->has_primary ? d->primary : PF_CLOCK_BOOTTIME;
	if (pk.primary_clock != PF_CLOCK_MONOTONIC && d->clock_known[PF_CLOCK_MONOTONIC])
		pk.monotonic_offset = d->clock_offset[PF_CLOCK_MONOTONIC];
	resolve_time(d, s, &pk);
	if (pk.kind == PF_PACKET_TRACK_DESCRIPTOR && read_descriptor(d, &tdesc, &pk) < 0)
		return -1;
	if (pk.kind == PF_PACKET_TRACK_EVENT) {
		if (read_track_event(d, s, &te, &pk) < 0)
			return -1;
		d->st->track_events++;
	}
	d->st->packets++;
	if (d->opt->on_packet != NULL && d->opt->on_packet(d->opt->ctx, &pk) != 0) {
		fail(d, PF_ERR_STOPPED, "stopped");
		return -1;
	}
	return 0;
}

size_t pf_arg_span(const struct pf_arg *args, size_t i)
{
	size_t n = 1;

	if (args[i].kind == PF_ARG_ARRAY || args[i].kind == PF_ARG_DICT)
		for (uint32_t c = 0; c < args[i].count; c++)
			n += pf_arg_span(args, i + n);
	return n;
}

const struct pf_track *pf_track_get(const struct pf_packet *p, uint64_t uuid)
{
	return table_get(p->tracks_, &uuid, sizeof(uuid));
}

/* ------------------------------------------------------------------ input */

/* At least n bytes at buf[pos], unless the input ends first. 0, or -1 on an error. */
static int fill(struct decoder *d, size_t n)
{
	if (d->len - d->pos >= n || d->eof)
		return 0;
	if (d->pos > 0) {
		memmove(d->buf, d->buf + d->pos, d->len - d->pos);
		d->len -= d->pos;
		d->pos = 0;
	}
	if (n > d->cap) {
		size_t cap = d->cap;
		uint8_t *p;

		while (cap < n)
			cap *= 2;
		p = realloc(d->buf, cap);
		if (p == NULL) {
			fail(d, PF_ERR_NOMEM, "out of memory");
			return -1;
		}
		d->buf = p;
		d->cap = cap;
	}
	while (d->len < n) {
		int got = gzread(d->gz, d->buf + d->len, (unsigned)(d->cap - d->len));

		if (got < 0) {
			int zerr;
			const char *msg = gzerror(d->gz, &zerr);

			if (zerr == Z_BUF_ERROR) { /* a cut gzip member: a cut stream */
				d->eof = true;
				return 0;
			}
			fail(d, zerr == Z_ERRNO ? PF_ERR_IO : PF_ERR_GZIP, "%s",
			     zerr == Z_ERRNO ? strerror(errno) : msg);
			return -1;
		}
		if (got == 0) {
			d->eof = true;
			return 0;
		}
		d->len += (size_t)got;
	}
	return 0;
}

/* A varint of the outer stream at buf[pos + *at]: 1, 0 when the input ends in it,
 * -1 malformed. */
static int outer_varint(struct decoder *d, size_t *at, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (fill(d, *at + 1) < 0)
			return -1;
		if (d->len - d->pos < *at + 1)
			return 0;
		uint8_t c = d->buf[d->pos + (*at)++];

		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 1;
		}
	}
	d->packet_base = d->buf + d->pos;
	malformed(d, d->buf + d->pos + *at, "a varint over 10 bytes");
	return -1;
}

static void set_cut(struct decoder *d)
{
	d->st->cut = true;
	d->st->cut_offset = d->offset;
	d->st->cut_bytes = d->len - d->pos;
}

/* Skip n bytes of the stream (a packet over the bound). 1, 0 when cut, -1. */
static int skip_bytes(struct decoder *d, uint64_t n)
{
	while (n > 0) {
		size_t have = d->len - d->pos, k;

		if (have == 0) {
			if (fill(d, 1) < 0)
				return -1;
			if (d->len == d->pos)
				return 0;
			continue;
		}
		k = have < n ? have : (size_t)n;
		d->pos += k;
		d->offset += k;
		n -= k;
	}
	return 1;
}

static int decode(struct decoder *d)
{
	for (;;) {
		size_t at = 0;
		uint64_t key, len = 0;
		int rc;

		if (fill(d, 1) < 0)
			return -1;
		if (d->len == d->pos)
			return 0; /* the end, between packets */
		d->packet_offset = d->offset;
		d->packet_index = d->st->packets;
		rc = outer_varint(d, &at, &key);
		if (rc <= 0)
			goto cut_or_fail;
		unsigned wt = (unsigned)(key & 7);

		if (wt == WT_LEN || wt == WT_VARINT || wt == WT_FIXED64 || wt == WT_FIXED32) {
			if (wt == WT_LEN || wt == WT_VARINT) {
				rc = outer_varint(d, &at, &len);
				if (rc <= 0)
					goto cut_or_fail;
				if (wt == WT_VARINT)
					len = 0;
			} else {
				len = wt == WT_FIXED64 ? 8 : 4;
			}
		} else {
			d->packet_base = d->buf + d->pos;
			malformed(d, d->buf + d->pos, "bad wire type at the top level");
			return -1;
		}
		if (wt != WT_LEN || (key >> 3) != 1) { /* not a packet: skipped */
			d->pos += at;
			d->offset += at;
			rc = skip_bytes(d, len);
			if (rc <= 0) {
				if (rc == 0)
					d->st->cut = true, d->st->cut_offset = d->packet_offset;
				return rc;
			}
			continue;
		}
		if (len > d->max_packet) {
			issue(d, PF_ISSUE_PACKET_TOO_LARGE,
			      "a packet of %" PRIu64 " bytes, over the bound (%" PRIu64
			      " bytes): skipped, not read",
			      len, d->max_packet);
			d->pos += at;
			d->offset += at;
			rc = skip_bytes(d, len);
			if (rc <= 0) {
				if (rc == 0)
					d->st->cut = true, d->st->cut_offset = d->packet_offset;
				return rc;
			}
			d->st->packets++;
			continue;
		}
		if (fill(d, at + (size_t)len) < 0)
			return -1;
		if (d->len - d->pos < at + len) {
			set_cut(d);
			return 0;
		}
		d->packet_base = d->buf + d->pos;
		if (read_packet(d, d->buf + d->pos + at, (size_t)len) < 0)
			return -1;
		d->pos += at + (size_t)len;
		d->offset += at + len;
		d->st->bytes = d->offset;
		continue;
	cut_or_fail:
		if (rc < 0)
			return -1;
		set_cut(d);
		return 0;
	}
}

static void decoder_free(struct decoder *d)
{
	for (struct sequence *s = table_first(&d->sequences); s != NULL; s = table_next(s)) {
		for (int i = 0; i < IN_COUNT; i++) {
			for (struct interned *in = table_first(&s->interned[i]); in != NULL;
			     in = table_next(in))
				free(in->s);
			table_destroy(&s->interned[i]);
		}
		free(s->clocks);
	}
	table_destroy(&d->sequences);
	for (struct pf_track *t = table_first(&d->tracks); t != NULL; t = table_next(t))
		track_free_strings(t);
	table_destroy(&d->tracks);
	free(d->buf);
	free(d->args);
	free(d->flows);
	free(d->clocks);
	free(d->cats);
}

int pf_read_fd(int fd, const struct pf_options *opt, struct pf_status *st)
{
	struct decoder d = {.opt = opt, .st = st};
	unsigned char magic[2];
	int dupfd, rc;
	struct stat sb;

	memset(st, 0, sizeof(*st));
	d.max_packet = opt->max_packet_bytes > 0 ? opt->max_packet_bytes : PF_MAX_PACKET_BYTES;
	/* gzip by its magic, where the file can be read twice */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		off_t here = lseek(fd, 0, SEEK_CUR);

		if (here >= 0 && pread(fd, magic, 2, here) == 2)
			st->gzip = magic[0] == 0x1f && magic[1] == 0x8b;
	}
	dupfd = dup(fd);
	if (dupfd < 0 || (d.gz = gzdopen(dupfd, "rb")) == NULL) {
		if (dupfd >= 0)
			close(dupfd);
		st->error = PF_ERR_IO;
		snprintf(st->message, sizeof(st->message), "%s", strerror(errno));
		return -1;
	}
	gzbuffer(d.gz, 128 << 10);
	d.cap = 256 << 10;
	d.buf = malloc(d.cap);
	table_init(&d.sequences, sizeof(struct sequence));
	table_init(&d.tracks, sizeof(struct pf_track));
	if (d.buf == NULL) {
		fail(&d, PF_ERR_NOMEM, "out of memory");
		rc = -1;
	} else {
		rc = decode(&d);
	}
	if (d.failed)
		rc = -1;
	st->bytes = d.offset + (st->cut ? st->cut_bytes : 0);
	gzclose(d.gz);
	decoder_free(&d);
	return rc;
}

int pf_read_path(const char *path, const struct pf_options *opt, struct pf_status *st)
{
	int fd, rc;

	if (strcmp(path, "-") == 0)
		return pf_read_fd(STDIN_FILENO, opt, st);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(st, 0, sizeof(*st));
		st->error = PF_ERR_IO;
		snprintf(st->message, sizeof(st->message), "%s", strerror(errno));
		return -1;
	}
	rc = pf_read_fd(fd, opt, st);
	close(fd);
	return rc;
}

/* A well-formed message of exactly n bytes (its fields' framing only)? */
static bool plausible_message(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t key = 0, v = 0;
		unsigned k;

		for (k = 0; k < 10 && i < n; k++) {
			key |= (uint64_t)(p[i] & 0x7f) << (7 * k);
			if (!(p[i++] & 0x80))
				break;
		}
		if (k == 10 || (i == n && (p[i - 1] & 0x80)) || key >> 3 == 0)
			return false;
		switch (key & 7) {
		case WT_VARINT:
		case WT_LEN:
			for (k = 0; k < 10; k++) {
				if (i == n)
					return false;
				v |= (uint64_t)(p[i] & 0x7f) << (7 * k);
				if (!(p[i++] & 0x80))
					break;
			}
			if (k == 10)
				return false;
			if ((key & 7) == WT_LEN) {
				if (v > n - i)
					return false;
				i += (size_t)v;
			}
			break;
		case WT_FIXED64:
			if (n - i < 8)
				return false;
			i += 8;
			break;
		case WT_FIXED32:
			if (n - i < 4)
				return false;
			i += 4;
			break;
		default:
			return false;
		}
	}
	return true;
}

bool pf_sniff_bytes(const unsigned char *p, size_t n)
{
	uint64_t len = 0;
	size_t i = 1;
	unsigned k;

	if (n == 0 || p[0] != 0x0a)
		return false;
	for (k = 0; k < 10 && i < n; k++) {
		len |= (uint64_t)(p[i] & 0x7f) << (7 * k);
		if (!(p[i++] & 0x80))
			break;
	}
	if (k < 10 && i <= n && !(p[i - 1] & 0x80) && len <= n - i)
		return plausible_message(p + i, (size_t)len);
	/* The first packet is not all here: JSON after a newline is blanks, '[' or '{'. */
	return n < 2 || !(p[1] == ' ' || p[1] == '\t' || p[1] == '\n' || p[1] == '\r' ||
			  p[1] == '[' || p[1] == '{');
}

int pf_sniff_path(const char *path)
{
	struct stat sb;
	unsigned char head[4096];
	int fd, got = 0, dupfd;
	off_t here = 0;
	gzFile gz;

	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0;
		here = lseek(fd, 0, SEEK_CUR);
		if (here < 0)
			return 0;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* Only a regular file can be read twice: a pipe or FIFO (a tool's own feed
		 * too) would lose what the sniffing read. A directory: the reader says why. */
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			close(fd);
			return 0;
		}
	}
	dupfd = dup(fd);
	gz = dupfd >= 0 ? gzdopen(dupfd, "rb") : NULL;
	if (gz == NULL) {
		if (dupfd >= 0)
			close(dupfd);
	} else {
		got = gzread(gz, head, sizeof(head));
		gzclose(gz);
	}
	if (fd == STDIN_FILENO)
		lseek(fd, here, SEEK_SET);
	else
		close(fd);
	return got > 0 && pf_sniff_bytes(head, (size_t)got);
}
