/* SPDX-License-Identifier: MIT */
/*
 * A Perfetto trace as the JSON the recorder writes (pf_to_json(), pftrace.h): what
 * `ringtrace convert --to json` writes, and what the other subcommands read a
 * .pftrace through (cli_open_trace()).
 *
 * Streaming, one event per line. State is per track (its open slices, for the
 * names of their ends), per sequence (a BEGIN held back until the next event shows
 * whether an END follows it directly, to write one X) and per open flow; never per
 * event. All of it is bounded like the decoder's (threads.h's bound): a slice past
 * it is still written, its END then without a name.
 */
#include "json.h"
#include "pftrace.h"
#include "table.h"
#include "threads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What an item of state costs against the bound (see pftrace.c). */
#define ENTRY_COST 144

#define START_MARKER "ringtrace: start"
#define END_MARKER   "ringtrace: end"

/* A slice open on a track: its name and categories, for its END. */
struct open_name {
	char *name, *cat; /* NULL when absent */
	size_t name_len, cat_len;
};

struct track_stack {
	struct open_name *open;
	size_t depth, cap;
	size_t untracked; /* opened past the bound: innermost */
};

/* Where an event of a track goes in JSON. */
enum place_kind { PLACE_THREAD, PLACE_PROCESS, PLACE_COUNTER, PLACE_ASYNC };

struct place {
	enum place_kind kind;
	int64_t pid, tid;
};

/* A BEGIN on a thread track held back: an END of its track next on the sequence makes
 * it an X. */
struct pending {
	bool has;
	uint64_t track_uuid;
	int64_t ts_ns;
	struct place at;
	struct buf head; /* ,"cat":..,"name":.. */
	struct buf args; /* the args' members, without braces */
};

struct conv {
	int (*write)(void *ctx, const void *p, size_t n);
	void *ctx;
	bool failed, nomem;
	bool has_origin, origin_fixed;
	int64_t origin;
	uint64_t events;
	struct buf line, tmp;
	/* M events of the descriptors before the first event: held so that the start
	 * marker comes first, as the recorder writes it (merge looks for it there). Lines
	 * joined by '\n' (a JSON line has none of its own), at most EARLY_BYTES. */
	bool started;
	struct buf early;
	struct table stacks;  /* track uuid -> struct track_stack */
	struct table pending; /* sequence id -> struct pending */
	struct table flows;   /* flow id -> char (seen) */
	struct table metas;   /* (track uuid, M name) -> uint64_t, the value's hash */
	struct state_budget budget;
};

/* ------------------------------------------------------------- args */

static int put_value(struct buf *b, const struct pf_arg *args, size_t *i);

static int put_members(struct buf *b, const struct pf_arg *args, size_t *i, size_t n, bool named)
{
	for (size_t k = 0; k < n; k++) {
		const struct pf_arg *a = &args[*i];

		if (k > 0 && buf_putc(b, ',') != 0)
			return -1;
		if (named && (json_put_string(b, a->name.s != NULL ? a->name.s : "",
					      a->name.s != NULL ? a->name.len : 0) < 0 ||
			      buf_putc(b, ':') != 0))
			return -1;
		if (put_value(b, args, i) != 0)
			return -1;
	}
	return 0;
}

static int put_value(struct buf *b, const struct pf_arg *args, size_t *i)
{
	const struct pf_arg *a = &args[(*i)++];
	char num[40];

	switch (a->kind) {
	case PF_ARG_NULL:
		return buf_puts(b, "null");
	case PF_ARG_BOOL:
		return buf_puts(b, a->b ? "true" : "false");
	case PF_ARG_UINT:
		return buf_put_u64(b, a->u);
	case PF_ARG_INT:
		return buf_put_i64(b, a->i);
	case PF_ARG_DOUBLE:
		return buf_put(b, num, (size_t)(rtr__json_f64(num, a->d) - num));
	case PF_ARG_STRING:
		return json_put_string(b, a->str.s, a->str.len) < 0 ? -1 : 0;
	case PF_ARG_POINTER:
		snprintf(num, sizeof(num), "\"0x%" PRIx64 "\"", a->u);
		return buf_puts(b, num);
	case PF_ARG_ARRAY:
		return buf_putc(b, '[') || put_members(b, args, i, a->count, false) ||
		       buf_putc(b, ']');
	case PF_ARG_DICT:
		return buf_putc(b, '{') || put_members(b, args, i, a->count, true) ||
		       buf_putc(b, '}');
	}
	return -1;
}

/* The top-level annotations as object members; the start marker's origins as strings,
 * as the recorder writes them (64-bit values a double cannot hold). */
static int put_args(struct buf *b, const struct pf_event *ev, bool start_marker)
{
	size_t i = 0;

	for (size_t k = 0; k < ev->ntop; k++) {
		const struct pf_arg *a = &ev->args[i];

		if (k > 0 && buf_putc(b, ',') != 0)
			return -1;
		if (json_put_string(b, a->name.s != NULL ? a->name.s : "",
				    a->name.s != NULL ? a->name.len : 0) < 0 ||
		    buf_putc(b, ':') != 0)
			return -1;
		if (start_marker && a->kind == PF_ARG_UINT && a->name.len > 7 &&
		    memcmp(a->name.s, "origin_", 7) == 0) {
			i++;
			if (buf_putc(b, '"') || buf_put_u64(b, a->u) || buf_putc(b, '"'))
				return -1;
		} else if (put_value(b, ev->args, &i) != 0) {
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- places */

static bool str_is(struct pf_str s, const char *lit)
{
	return s.s != NULL && s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0;
}

/* The pid of the process a track belongs to (its own, or an ancestor's). */
static bool process_of(const struct pf_packet *pk, const struct pf_track *t, int64_t *pid)
{
	for (int hops = 0; t != NULL && hops < 16; hops++) {
		if ((t->kind == PF_TRACK_PROCESS || t->kind == PF_TRACK_THREAD) && t->has_pid) {
			*pid = t->pid;
			return true;
		}
		if (!t->has_parent)
			break;
		t = pf_track_get(pk, t->parent_uuid);
	}
	return false;
}

static struct place place_of(const struct pf_packet *pk, uint64_t uuid, const struct pf_track *t)
{
	struct place at = {PLACE_THREAD, 0, 0};
	int64_t pid = 0;

	if (t == NULL) {
		/* Undeclared: where ringtrace's writer would have put it (pid << 32 | tid). */
		at.pid = (int64_t)(uuid >> 32);
		at.tid = (int64_t)(uuid & 0xffffffffu);
		if (at.tid == 0)
			at.tid = at.pid;
		return at;
	}
	switch (t->kind) {
	case PF_TRACK_THREAD:
		at.pid = t->has_pid ? t->pid : 0;
		at.tid = t->has_tid ? t->tid : at.pid;
		return at;
	case PF_TRACK_PROCESS:
		at.kind = PLACE_PROCESS;
		at.pid = at.tid = t->has_pid ? t->pid : 0;
		return at;
	case PF_TRACK_COUNTER:
		process_of(pk, t, &pid);
		return (struct place){PLACE_COUNTER, pid, pid};
	case PF_TRACK_OTHER:
		break;
	}
	process_of(pk, t, &pid);
	/*
	 * A lane of a ringtrace track: uuid ppid << 32 | lane tid under its pseudo-process
	 * ppid, a pid above any the kernel gives (pid_max is at most 2^22); or a uuid
	 * pid << 32 | tid below ringtrace's async range (0x40000000 | n). A thread.
	 */
	uint64_t low = uuid & 0xffffffffu;

	if (t->has_parent && uuid >> 32 == (uint64_t)pid && low > 0 &&
	    (pid >= 0x40000000 || low < 0x40000000u))
		return (struct place){PLACE_THREAD, pid, (int64_t)low};
	return (struct place){PLACE_ASYNC, pid, pid};
}

/* ------------------------------------------------------------- output */

static void emit(struct conv *c, struct buf *line)
{
	if (c->failed)
		return;
	if (c->write(c->ctx, c->events == 0 ? "[\n" : ",\n", 2) != 0 ||
	    c->write(c->ctx, line->p, line->len) != 0)
		c->failed = true;
	c->events++;
}

#define EARLY_BYTES (1u << 20)

static void flush_early(struct conv *c)
{
	struct buf line;
	size_t at = 0;

	while (at < c->early.len) {
		char *nl = memchr(c->early.p + at, '\n', c->early.len - at);
		size_t end = nl != NULL ? (size_t)(nl - c->early.p) : c->early.len;

		line = (struct buf){c->early.p + at, end - at, end - at};
		emit(c, &line);
		at = end + 1;
	}
	c->early.len = 0;
}

/* An M event: held while no event came yet (see conv.early). */
static void emit_meta(struct conv *c, struct buf *line)
{
	if (!c->started && c->early.len + line->len < EARLY_BYTES) {
		if ((c->early.len > 0 && buf_putc(&c->early, '\n')) ||
		    buf_put(&c->early, line->p, line->len))
			c->nomem = true;
		return;
	}
	flush_early(c);
	emit(c, line);
}

static int64_t rel(const struct conv *c, int64_t ns)
{
	return ns - c->origin;
}

/* ,"ts":..,"pid":..,"tid":.. */
static int put_where(struct buf *b, int64_t ts, const struct place *at)
{
	return buf_puts(b, ",\"ts\":") || buf_put_us(b, ts) || buf_puts(b, ",\"pid\":") ||
	       buf_put_i64(b, at->pid) || buf_puts(b, ",\"tid\":") || buf_put_i64(b, at->tid);
}

static int put_str_key(struct buf *b, const char *key, const char *s, size_t len)
{
	return buf_puts(b, key) || json_put_string(b, s, len) < 0;
}

/* ,"cat":..,"name":.. (each when present) */
static int put_names(struct buf *b, struct pf_str cat, struct pf_str name)
{
	if (cat.s != NULL && put_str_key(b, ",\"cat\":", cat.s, cat.len))
		return -1;
	if (name.s != NULL && put_str_key(b, ",\"name\":", name.s, name.len))
		return -1;
	return 0;
}

/* Has track uuid's M event `what` been written with this value? Then it is not
 * written again: a descriptor written anew (a rename, a sort index, a label) repeats
 * the fields that did not change. */
static bool meta_unchanged(struct conv *c, uint64_t uuid, const char *what, const char *str,
			   const int32_t *num)
{
	struct {
		uint64_t uuid;
		char what[24];
	} key = {.uuid = uuid};
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the value */
	const unsigned char *v = str != NULL ? (const unsigned char *)str : (const void *)num;
	size_t n = str != NULL ? strlen(str) : sizeof(*num);
	bool created;

	for (size_t i = 0; i < n; i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	snprintf(key.what, sizeof(key.what), "%s", what);
	uint64_t *seen = table_get(&c->metas, &key, sizeof(key));
	if (seen != NULL) {
		bool same = *seen == h;
		*seen = h;
		return same;
	}
	if (!budget_take(&c->budget, sizeof(*seen) + sizeof(key) + ENTRY_COST))
		return false; /* over the bound: written, as without the table */
	seen = table_put(&c->metas, &key, sizeof(key), &created);
	if (seen == NULL)
		c->nomem = true;
	else
		*seen = h;
	return false;
}

static void metadata(struct conv *c, uint64_t uuid, const char *what, int64_t pid, int64_t tid,
		     const char *key, const char *str, const int32_t *num)
{
	struct buf *b = &c->line;
	struct place at = {PLACE_THREAD, pid, tid};

	if (meta_unchanged(c, uuid, what, str, num))
		return;

	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"M\",\"name\":\"") || buf_puts(b, what) || buf_putc(b, '"') ||
	    buf_puts(b, ",\"pid\":") || buf_put_i64(b, at.pid) || buf_puts(b, ",\"tid\":") ||
	    buf_put_i64(b, at.tid) || buf_puts(b, ",\"args\":{\"") || buf_puts(b, key) ||
	    buf_puts(b, "\":") ||
	    (str != NULL ? json_put_string(b, str, strlen(str)) < 0 : buf_put_i64(b, *num)) ||
	    buf_puts(b, "}}")) {
		c->nomem = true;
		return;
	}
	emit_meta(c, b);
}

static void descriptor(struct conv *c, const struct pf_packet *pk)
{
	const struct pf_track *t = pk->track;
	struct place at = place_of(pk, t->uuid, t);

	if (t->kind == PF_TRACK_PROCESS) {
		if (t->process_name != NULL)
			metadata(c, t->uuid, "process_name", at.pid, at.pid, "name",
				 t->process_name, NULL);
		if (t->labels != NULL)
			metadata(c, t->uuid, "process_labels", at.pid, at.pid, "labels", t->labels,
				 NULL);
		if (t->has_sort_index)
			metadata(c, t->uuid, "process_sort_index", at.pid, at.pid, "sort_index",
				 NULL, &t->sort_index);
	} else if (t->kind == PF_TRACK_THREAD || (at.kind == PLACE_THREAD && t->name != NULL)) {
		const char *name = t->thread_name != NULL ? t->thread_name : t->name;

		if (name != NULL)
			metadata(c, t->uuid, "thread_name", at.pid, at.tid, "name", name, NULL);
		if (t->has_sort_index)
			metadata(c, t->uuid, "thread_sort_index", at.pid, at.tid, "sort_index",
				 NULL, &t->sort_index);
	}
}

static struct track_stack *stack_of(struct conv *c, uint64_t uuid)
{
	struct track_stack *s = table_get(&c->stacks, &uuid, sizeof(uuid));

	if (s == NULL && budget_take(&c->budget, sizeof(*s) + ENTRY_COST)) {
		s = table_put(&c->stacks, &uuid, sizeof(uuid), NULL);
		if (s == NULL)
			c->nomem = true;
	}
	return s;
}

static char *dup_str(struct conv *c, struct pf_str s)
{
	char *p;

	if (s.s == NULL)
		return NULL;
	p = malloc(s.len + 1);
	if (p == NULL) {
		c->nomem = true;
		return NULL;
	}
	memcpy(p, s.s, s.len);
	p[s.len] = '\0';
	return p;
}

static void push(struct conv *c, uint64_t uuid, const struct pf_event *ev)
{
	struct track_stack *s = stack_of(c, uuid);
	uint64_t cost = ev->name.len + ev->categories.len + 64;

	if (s == NULL)
		return;
	if (s->untracked > 0 || !budget_take(&c->budget, cost)) {
		s->untracked++;
		return;
	}
	if (s->depth == s->cap) {
		size_t cap = s->cap == 0 ? 8 : 2 * s->cap;
		struct open_name *p = realloc(s->open, cap * sizeof(*p));

		if (p == NULL) {
			c->nomem = true;
			return;
		}
		s->open = p;
		s->cap = cap;
	}
	s->open[s->depth++] = (struct open_name){dup_str(c, ev->name), dup_str(c, ev->categories),
						 ev->name.len, ev->categories.len};
}

/* The innermost open slice's names (s NULL when none is known); popped. */
static struct open_name pop(struct conv *c, uint64_t uuid, bool *had)
{
	struct track_stack *s = table_get(&c->stacks, &uuid, sizeof(uuid));
	struct open_name n = {0};

	*had = false;
	if (s == NULL)
		return n;
	if (s->untracked > 0) {
		s->untracked--;
		*had = true;
		return n;
	}
	if (s->depth == 0)
		return n;
	n = s->open[--s->depth];
	budget_give(&c->budget, n.name_len + n.cat_len + 64);
	*had = true;
	return n;
}

static struct pending *pending_of(struct conv *c, uint32_t seq)
{
	struct pending *p = table_get(&c->pending, &seq, sizeof(seq));

	if (p == NULL && budget_take(&c->budget, sizeof(*p) + 256 + ENTRY_COST)) {
		p = table_put(&c->pending, &seq, sizeof(seq), NULL);
		if (p == NULL)
			c->nomem = true;
	}
	return p;
}

/* Write a held-back BEGIN as B. */
static void flush(struct conv *c, struct pending *p)
{
	struct buf *b = &c->line;

	if (!p->has)
		return;
	p->has = false;
	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"B\"") || buf_put(b, p->head.p, p->head.len) ||
	    put_where(b, rel(c, p->ts_ns), &p->at) ||
	    (p->args.len > 0 && (buf_puts(b, ",\"args\":{") || buf_put(b, p->args.p, p->args.len) ||
				 buf_putc(b, '}'))) ||
	    buf_putc(b, '}')) {
		c->nomem = true;
		return;
	}
	emit(c, b);
}

static void put_flow_id(struct buf *b, uint64_t id)
{
	char hex[24];

	/* A double holds integers to 2^53; a larger id as Perfetto's hex string. */
	if (id <= ((uint64_t)1 << 53)) {
		buf_put_u64(b, id);
	} else {
		snprintf(hex, sizeof(hex), "\"0x%" PRIx64 "\"", id);
		buf_puts(b, hex);
	}
}

static void flows(struct conv *c, const struct pf_packet *pk, const struct pf_event *ev,
		  const struct place *at, bool own_name)
{
	struct pf_str cat = own_name ? ev->categories : (struct pf_str){"flow", 4};
	struct pf_str name = own_name ? ev->name : (struct pf_str){"flow", 4};
	size_t n = ev->nflow_ids + ev->nterminating_flow_ids;

	if (cat.s == NULL)
		cat = (struct pf_str){"flow", 4};
	if (name.s == NULL)
		name = (struct pf_str){"flow", 4};
	for (size_t i = 0; i < n; i++) {
		bool end = i >= ev->nflow_ids;
		uint64_t id = end ? ev->terminating_flow_ids[i - ev->nflow_ids] : ev->flow_ids[i];
		char *seen = table_get(&c->flows, &id, sizeof(id));
		const char *ph = end ? "f" : seen != NULL ? "t" : "s";
		struct buf *b = &c->line;

		if (end && seen != NULL) {
			table_remove(&c->flows, seen);
			budget_give(&c->budget, ENTRY_COST);
		} else if (!end && seen == NULL && budget_take(&c->budget, ENTRY_COST) &&
			   table_put(&c->flows, &id, sizeof(id), NULL) == NULL) {
			c->nomem = true;
		}
		b->len = 0;
		if (buf_puts(b, "{\"ph\":\"") || buf_puts(b, ph) || buf_putc(b, '"') ||
		    (end && buf_puts(b, ",\"bp\":\"e\"")) || put_names(b, cat, name) ||
		    buf_puts(b, ",\"id\":")) {
			c->nomem = true;
			return;
		}
		put_flow_id(b, id);
		if (put_where(b, rel(c, pk->time_ns), at) || buf_putc(b, '}')) {
			c->nomem = true;
			return;
		}
		emit(c, b);
	}
}

static void track_event(struct conv *c, const struct pf_packet *pk)
{
	const struct pf_event *ev = &pk->event;
	struct place at = place_of(pk, ev->track_uuid, ev->track);
	struct pending *p = pending_of(c, pk->sequence_id);
	struct buf *b = &c->line;
	int64_t ts;
	bool had;

	if (!pk->has_time)
		return; /* no time to place it at (check reports why) */
	if (!c->has_origin) {
		c->has_origin = true;
		c->origin = pk->time_ns;
		if (ev->type == PF_TYPE_INSTANT && str_is(ev->name, START_MARKER)) {
			for (size_t i = 0, k = 0; k < ev->ntop; k++) {
				const struct pf_arg *a = &ev->args[i];

				if (str_is(a->name, "origin_monotonic_ns") &&
				    a->kind == PF_ARG_UINT)
					c->origin = (int64_t)a->u + pk->monotonic_offset;
				i += pf_arg_span(ev->args, i);
			}
		}
	}
	ts = rel(c, pk->time_ns);
	if (p != NULL && p->has) {
		if (ev->type == PF_TYPE_SLICE_END && ev->track_uuid == p->track_uuid) {
			/* END right after its BEGIN: one X, the END's args merged in */
			struct open_name n = pop(c, ev->track_uuid, &had);

			free(n.name);
			free(n.cat);
			p->has = false;
			b->len = 0;
			if (buf_puts(b, "{\"ph\":\"X\"") || buf_put(b, p->head.p, p->head.len) ||
			    buf_puts(b, ",\"ts\":") || buf_put_us(b, rel(c, p->ts_ns)) ||
			    buf_puts(b, ",\"dur\":") || buf_put_us(b, pk->time_ns - p->ts_ns) ||
			    buf_puts(b, ",\"pid\":") || buf_put_i64(b, p->at.pid) ||
			    buf_puts(b, ",\"tid\":") || buf_put_i64(b, p->at.tid)) {
				c->nomem = true;
				return;
			}
			if (p->args.len > 0 || ev->ntop > 0) {
				if (buf_puts(b, ",\"args\":{") ||
				    buf_put(b, p->args.p, p->args.len) ||
				    (p->args.len > 0 && ev->ntop > 0 && buf_putc(b, ',')) ||
				    put_args(b, ev, false) || buf_putc(b, '}')) {
					c->nomem = true;
					return;
				}
			}
			if (buf_putc(b, '}')) {
				c->nomem = true;
				return;
			}
			emit(c, b);
			return;
		}
		flush(c, p);
	}
	b->len = 0;
	switch (ev->type) {
	case PF_TYPE_SLICE_BEGIN:
		push(c, ev->track_uuid, ev);
		if (at.kind == PLACE_THREAD && p != NULL && ev->nflow_ids == 0 &&
		    ev->nterminating_flow_ids == 0) {
			p->has = true;
			p->track_uuid = ev->track_uuid;
			p->ts_ns = pk->time_ns;
			p->at = at;
			p->head.len = p->args.len = 0;
			if (put_names(&p->head, ev->categories, ev->name) ||
			    put_args(&p->args, ev, false))
				c->nomem = true;
			return;
		}
		if (at.kind == PLACE_ASYNC) {
			if (buf_puts(b, "{\"ph\":\"b\"") ||
			    put_names(b,
				      ev->categories.s != NULL ? ev->categories
							       : (struct pf_str){"async", 5},
				      ev->name))
				break;
		} else if (buf_puts(b, "{\"ph\":\"B\"") || put_names(b, ev->categories, ev->name)) {
			break;
		}
		goto finish;
	case PF_TYPE_SLICE_END: {
		struct open_name n = pop(c, ev->track_uuid, &had);
		struct pf_str name = {n.name, n.name_len}, cat = {n.cat, n.cat_len};

		if (at.kind == PLACE_ASYNC && cat.s == NULL)
			cat = (struct pf_str){"async", 5};
		if (buf_puts(b, at.kind == PLACE_ASYNC ? "{\"ph\":\"e\"" : "{\"ph\":\"E\"") ||
		    put_names(b, cat, name)) {
			free(n.name);
			free(n.cat);
			break;
		}
		free(n.name);
		free(n.cat);
		goto finish;
	}
	case PF_TYPE_INSTANT: {
		bool marker = str_is(ev->name, START_MARKER) || str_is(ev->name, END_MARKER);

		if (!marker && (ev->nflow_ids > 0 || ev->nterminating_flow_ids > 0)) {
			flows(c, pk, ev, &at,
			      true); /* the instant is the flow (docs/perfetto.md) */
			return;
		}
		if (marker) {
			if (buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\"") ||
			    put_names(b, (struct pf_str){0}, ev->name) || put_where(b, ts, &at) ||
			    (ev->ntop > 0 && (buf_puts(b, ",\"args\":{") ||
					      put_args(b, ev, str_is(ev->name, START_MARKER)) ||
					      buf_putc(b, '}'))) ||
			    buf_putc(b, '}'))
				break;
			emit(c, b);
			return;
		}
		if (at.kind == PLACE_ASYNC) {
			if (buf_puts(b, "{\"ph\":\"n\"") ||
			    put_names(b,
				      ev->categories.s != NULL ? ev->categories
							       : (struct pf_str){"async", 5},
				      ev->name))
				break;
			goto finish;
		}
		if (buf_puts(b, at.kind == PLACE_THREAD ? "{\"ph\":\"i\",\"s\":\"t\""
							: "{\"ph\":\"i\",\"s\":\"p\"") ||
		    put_names(b, ev->categories, ev->name))
			break;
		goto finish;
	}
	case PF_TYPE_COUNTER: {
		char num[40];
		struct pf_str name = ev->name;

		if (!ev->has_counter)
			return;
		if (ev->track != NULL && ev->track->name != NULL)
			name = (struct pf_str){ev->track->name, strlen(ev->track->name)};
		if (name.s == NULL)
			name = (struct pf_str){"counter", 7};
		if (buf_puts(b, "{\"ph\":\"C\"") || put_names(b, ev->categories, name) ||
		    put_where(b, ts, &at) || buf_puts(b, ",\"args\":{\"value\":"))
			break;
		if (ev->counter_is_double) {
			if (buf_put(b, num, (size_t)(rtr__json_f64(num, ev->counter_double) - num)))
				break;
		} else if (buf_put_i64(b, ev->counter_int)) {
			break;
		}
		if (buf_puts(b, "}}"))
			break;
		emit(c, b);
		return;
	}
	default:
		return; /* TYPE_UNSPECIFIED: legacy events, not read */
	}
	c->nomem = true;
	return;
finish:
	if (at.kind == PLACE_ASYNC) {
		char id[32];

		snprintf(id, sizeof(id), ",\"id\":\"0x%" PRIx64 "\"", ev->track_uuid);
		if (buf_puts(b, id)) {
			c->nomem = true;
			return;
		}
	}
	if (put_where(b, ts, &at) ||
	    (ev->ntop > 0 &&
	     (buf_puts(b, ",\"args\":{") || put_args(b, ev, false) || buf_putc(b, '}'))) ||
	    buf_putc(b, '}')) {
		c->nomem = true;
		return;
	}
	emit(c, b);
	if (ev->nflow_ids > 0 || ev->nterminating_flow_ids > 0)
		flows(c, pk, ev, &at, false);
}

static int on_packet(void *ctx, const struct pf_packet *pk)
{
	struct conv *c = ctx;

	if (pk->kind == PF_PACKET_TRACK_DESCRIPTOR && pk->track != NULL)
		descriptor(c, pk);
	else if (pk->kind == PF_PACKET_TRACK_EVENT && pk->has_time) {
		bool first = !c->started;
		bool marker =
			pk->event.type == PF_TYPE_INSTANT && str_is(pk->event.name, START_MARKER);

		c->started = true;
		if (first && !marker)
			flush_early(c);
		track_event(c, pk);
		if (first && marker)
			flush_early(c);
	}
	return c->failed || c->nomem;
}

/* The first pass: the origin, the start marker's or the earliest time. */
struct origin_scan {
	bool has, marker;
	int64_t ns;
};

static int scan_origin(void *ctx, const struct pf_packet *pk)
{
	struct origin_scan *o = ctx;
	const struct pf_event *ev = &pk->event;

	if (pk->kind != PF_PACKET_TRACK_EVENT || !pk->has_time || o->marker)
		return 0;
	if (ev->type == PF_TYPE_INSTANT && str_is(ev->name, START_MARKER)) {
		for (size_t i = 0, k = 0; k < ev->ntop; k++, i += pf_arg_span(ev->args, i)) {
			const struct pf_arg *a = &ev->args[i];

			if (str_is(a->name, "origin_monotonic_ns") && a->kind == PF_ARG_UINT) {
				o->marker = o->has = true;
				/* a MONOTONIC time, on the primary clock */
				o->ns = (int64_t)a->u + pk->monotonic_offset;
				return 0;
			}
		}
	}
	if (!o->has || pk->time_ns < o->ns)
		o->ns = pk->time_ns;
	o->has = true;
	return 0;
}

static void conv_free(struct conv *c)
{
	for (struct track_stack *s = table_first(&c->stacks); s != NULL; s = table_next(s)) {
		for (size_t i = 0; i < s->depth; i++) {
			free(s->open[i].name);
			free(s->open[i].cat);
		}
		free(s->open);
	}
	table_destroy(&c->stacks);
	table_destroy(&c->metas);
	for (struct pending *p = table_first(&c->pending); p != NULL; p = table_next(p)) {
		buf_free(&p->head);
		buf_free(&p->args);
	}
	table_destroy(&c->pending);
	table_destroy(&c->flows);
	buf_free(&c->line);
	buf_free(&c->tmp);
	buf_free(&c->early);
}

int pf_to_json(const char *path, int (*write)(void *ctx, const void *p, size_t n), void *ctx,
	       const struct pf_options *opt, struct pf_status *st, uint64_t *events)
{
	struct pf_options o = opt != NULL ? *opt : (struct pf_options){0};
	struct conv c = {.write = write, .ctx = ctx};
	struct stat sb;
	int rc;

	*events = 0;
	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		struct origin_scan scan = {0};
		struct pf_options so = {.on_packet = scan_origin,
					.ctx = &scan,
					.max_packet_bytes = o.max_packet_bytes};

		pf_read_path(path, &so, st); /* errors come again in the second pass */
		if (scan.has) {
			c.has_origin = true;
			c.origin = scan.ns;
		}
	}
	table_init(&c.stacks, sizeof(struct track_stack));
	table_init(&c.pending, sizeof(struct pending));
	table_init(&c.flows, 1);
	table_init(&c.metas, sizeof(uint64_t));
	o.on_packet = on_packet;
	o.ctx = &c;
	rc = pf_read_path(path, &o, st);
	/* What the read left held back, then the closing bracket. */
	flush_early(&c);
	for (struct pending *p = table_first(&c.pending); p != NULL; p = table_next(p))
		flush(&c, p);
	if (!c.failed && (c.events == 0 ? write(ctx, "[\n", 2) != 0 || write(ctx, "]\n", 2) != 0
					: write(ctx, "\n]\n", 3) != 0))
		c.failed = true;
	*events = c.events;
	if (c.nomem) {
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		rc = -1;
	} else if (c.failed) {
		st->error = PF_ERR_STOPPED;
		snprintf(st->message, sizeof(st->message), "the output failed");
		rc = -1;
	}
	conv_free(&c);
	return rc;
}
