/* SPDX-License-Identifier: MIT */
/*
 * A .pftrace's packets as the recorder's JSON events (see pf_json.h).
 */
#include "pf_json.h"
#include "pf_json_put.h"

#include "budget.h"
#include "common/names.h"
#include "json.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an item of state costs against the bound (see pf_internal.h). */
#define ENTRY_COST 144

/* The M events held before the first event, at most. */
#define EARLY_BYTES (1u << 20)

struct pending;

/* A slice open on a track: its name and categories, for its END; its BEGIN held, when
 * it is on a thread, to be written with its END as one X. */
struct open_name {
	char *name, *cat; /* NULL when absent */
	size_t name_len, cat_len;
	struct pending *held; /* NULL: its BEGIN is written */
};

struct track_stack {
	struct open_name *open;
	size_t depth, cap;
	size_t untracked; /* opened past the bound: innermost */
};

/* A BEGIN on a thread track held back until its END makes it an X, as the library's
 * JSON writes a slice: one line, at its end (docs/format.md). Written as a B when the
 * stream ends with it open. */
struct pending {
	bool has;
	uint64_t track_uuid;
	int64_t ts_ns;
	struct place at;
	struct buf head;	 /* ,"cat":..,"name":.. */
	struct buf args;	 /* the args' members, without braces */
	uint64_t packet, offset; /* the BEGIN's packet */
};

/* Where an event came from: its packet's index and byte offset. */
struct from {
	uint64_t packet, offset;
};

struct pf_json {
	pf_json_line_fn line_fn;
	void *ctx;
	bool failed, nomem;
	bool has_origin;
	int64_t origin;
	uint64_t events;
	struct from at; /* the packet being converted */
	struct buf line;
	/* M events of the descriptors before the first event: held so that the start
	 * marker comes first, as the recorder writes it (merge looks for it there). Lines
	 * joined by '\n' (a JSON line has none of its own), at most EARLY_BYTES; where
	 * each came from in early_from. */
	bool started;
	struct buf early;
	struct from *early_from;
	size_t nearly, early_cap;
	struct table stacks; /* track uuid -> struct track_stack */
	struct table flows;  /* flow id -> char (seen) */
	struct table metas;  /* (track uuid, M name) -> uint64_t, the value's hash */
	struct state_budget budget;
};

/* ------------------------------------------------------------- output */

static void emit_from(struct pf_json *c, const struct buf *line, struct from from)
{
	if (c->failed)
		return;
	if (c->line_fn(c->ctx, line->p, line->len, from.packet, from.offset) != 0)
		c->failed = true;
	c->events++;
}

static void emit(struct pf_json *c, const struct buf *line)
{
	emit_from(c, line, c->at);
}

static void flush_early(struct pf_json *c)
{
	size_t at = 0;

	for (size_t k = 0; at < c->early.len; k++) {
		char *nl = memchr(c->early.p + at, '\n', c->early.len - at);
		size_t end = nl != NULL ? (size_t)(nl - c->early.p) : c->early.len;
		struct buf line = {c->early.p + at, end - at, end - at};

		emit_from(c, &line, c->early_from[k]);
		at = end + 1;
	}
	c->early.len = 0;
	c->nearly = 0;
}

/* A place for where the next held M event came from; NULL out of memory. */
static struct from *early_slot(struct pf_json *c)
{
	struct from *p = array_grow(c->early_from, &c->early_cap, c->nearly + 1, sizeof(*p), 64);

	if (p == NULL)
		return NULL;
	c->early_from = p;
	return &c->early_from[c->nearly++];
}

/* An M event: held while no event came yet (see pf_json.early). */
static void emit_meta(struct pf_json *c, const struct buf *line)
{
	if (!c->started && c->early.len + line->len < EARLY_BYTES) {
		struct from *f = early_slot(c);

		if (f == NULL || (c->early.len > 0 && buf_putc(&c->early, '\n')) ||
		    buf_put(&c->early, line->p, line->len)) {
			c->nomem = true;
			return;
		}
		*f = c->at;
		return;
	}
	flush_early(c);
	emit(c, line);
}

static int64_t rel(const struct pf_json *c, int64_t ns)
{
	return ns - c->origin;
}

/* Has track uuid's M event `what` been written with this value? Then it is not
 * written again: a descriptor written anew (a rename, a sort index, a label) repeats
 * the fields that did not change. */
static bool meta_unchanged(struct pf_json *c, uint64_t uuid, const char *what, const char *str,
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

static void metadata(struct pf_json *c, uint64_t uuid, const char *what, int64_t pid, int64_t tid,
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

static void descriptor(struct pf_json *c, const struct pf_packet *pk)
{
	const struct pf_track *t = pk->track;
	struct place at = pfj_place_of(pk, t->uuid, t);

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
		if (t->has_sort_index || (t->kind != PF_TRACK_THREAD && t->has_rank))
			metadata(c, t->uuid, "thread_sort_index", at.pid, at.tid, "sort_index",
				 NULL, t->has_sort_index ? &t->sort_index : &t->rank);
	}
}

static struct track_stack *stack_of(struct pf_json *c, uint64_t uuid)
{
	struct track_stack *s = table_get(&c->stacks, &uuid, sizeof(uuid));

	if (s == NULL && budget_take(&c->budget, sizeof(*s) + ENTRY_COST)) {
		s = table_put(&c->stacks, &uuid, sizeof(uuid), NULL);
		if (s == NULL)
			c->nomem = true;
	}
	return s;
}

static char *dup_str(struct pf_json *c, struct pf_str s)
{
	char *p;

	if (s.s == NULL)
		return NULL;
	p = text_dup(s.s, s.len);
	if (p == NULL)
		c->nomem = true;
	return p;
}

static void push(struct pf_json *c, uint64_t uuid, const struct pf_event *ev)
{
	struct track_stack *s = stack_of(c, uuid);
	uint64_t cost = ev->name.len + ev->categories.len + 64;

	if (s == NULL)
		return;
	if (s->untracked > 0 || !budget_take(&c->budget, cost)) {
		s->untracked++;
		return;
	}
	struct open_name *p = array_grow(s->open, &s->cap, s->depth + 1, sizeof(*p), 8);

	if (p == NULL) {
		c->nomem = true;
		return;
	}
	s->open = p;
	s->open[s->depth++] = (struct open_name){dup_str(c, ev->name), dup_str(c, ev->categories),
						 ev->name.len, ev->categories.len, NULL};
}

/* The innermost open slice of a track, when known (none past the bound). */
static struct open_name *top_of(struct pf_json *c, uint64_t uuid)
{
	struct track_stack *s = table_get(&c->stacks, &uuid, sizeof(uuid));

	return s != NULL && s->untracked == 0 && s->depth > 0 ? &s->open[s->depth - 1] : NULL;
}

/* The innermost open slice's names (s NULL when none is known); popped. */
static struct open_name pop(struct pf_json *c, uint64_t uuid, bool *had)
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

/* A held BEGIN's room, counted against the bound; NULL past it (the B is written). */
static struct pending *new_pending(struct pf_json *c)
{
	struct pending *p;

	if (!budget_take(&c->budget, sizeof(*p) + 256 + ENTRY_COST))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		budget_give(&c->budget, sizeof(*p) + 256 + ENTRY_COST);
		c->nomem = true;
	}
	return p;
}

static void free_pending(struct pf_json *c, struct pending *p)
{
	if (p == NULL)
		return;
	buf_free(&p->head);
	buf_free(&p->args);
	free(p);
	budget_give(&c->budget, sizeof(*p) + 256 + ENTRY_COST);
}

/* Write a held-back BEGIN as B. */
static void flush(struct pf_json *c, struct pending *p)
{
	struct buf *b = &c->line;

	if (p == NULL || !p->has)
		return;
	p->has = false;
	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"B\"") || buf_put(b, p->head.p, p->head.len) ||
	    pfj_put_where(b, rel(c, p->ts_ns), &p->at) ||
	    (p->args.len > 0 && (buf_puts(b, ",\"args\":{") || buf_put(b, p->args.p, p->args.len) ||
				 buf_putc(b, '}'))) ||
	    buf_putc(b, '}')) {
		c->nomem = true;
		return;
	}
	emit_from(c, b, (struct from){p->packet, p->offset});
}

static void flows(struct pf_json *c, const struct pf_packet *pk, const struct pf_event *ev,
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
		    (end && buf_puts(b, ",\"bp\":\"e\"")) || pfj_put_names(b, cat, name) ||
		    pfj_put_where_id(b, rel(c, pk->time_ns), id, at) || buf_putc(b, '}')) {
			c->nomem = true;
			return;
		}
		emit(c, b);
	}
}

/* ------------------------------------------------------------- track events */

/* The origin, from the first event with a time: the start marker's, else its own. */
static void take_origin(struct pf_json *c, const struct pf_packet *pk)
{
	const struct pf_event *ev = &pk->event;

	c->has_origin = true;
	c->origin = pk->time_ns;
	if (ev->type != PF_TYPE_INSTANT || !pfj_str_is(ev->name, RTR__MARK_START))
		return;
	for (size_t i = 0, k = 0; k < ev->ntop; k++) {
		const struct pf_arg *a = &ev->args[i];

		if (pfj_str_is(a->name, RTR__KEY_ORIGIN_MONO) && a->kind == PF_ARG_UINT)
			c->origin = (int64_t)a->u + pk->monotonic_offset;
		i += pf_arg_span(ev->args, i);
	}
}

/* The END of a held BEGIN (p): one X, the END's args merged in. */
static void end_as_x(struct pf_json *c, const struct pf_packet *pk, struct pending *p)
{
	const struct pf_event *ev = &pk->event;
	struct buf *b = &c->line;
	bool had;
	struct open_name n = pop(c, ev->track_uuid, &had);

	free(n.name);
	free(n.cat);
	p->has = false;
	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"X\"") || buf_put(b, p->head.p, p->head.len) ||
	    buf_puts(b, ",\"ts\":") || buf_put_us(b, rel(c, p->ts_ns)) ||
	    buf_puts(b, ",\"dur\":") || buf_put_dur(b, rel(c, p->ts_ns), pk->time_ns - p->ts_ns) ||
	    buf_puts(b, ",\"pid\":") || buf_put_i64(b, p->at.pid) || buf_puts(b, ",\"tid\":") ||
	    buf_put_i64(b, p->at.tid)) {
		c->nomem = true;
		return;
	}
	if ((p->args.len > 0 || ev->ntop > 0) &&
	    (buf_puts(b, ",\"args\":{") || buf_put(b, p->args.p, p->args.len) ||
	     (p->args.len > 0 && ev->ntop > 0 && buf_putc(b, ',')) || pfj_put_args(b, ev, false) ||
	     buf_putc(b, '}'))) {
		c->nomem = true;
		return;
	}
	if (buf_putc(b, '}')) {
		c->nomem = true;
		return;
	}
	emit_from(c, b, (struct from){p->packet, p->offset});
}

/* What an event's head left to do. */
enum head { HEAD_DONE, HEAD_TAIL, HEAD_NOMEM };

/* The category of an async event: its own, else "async". */
static struct pf_str async_cat(struct pf_str cat)
{
	return cat.s != NULL ? cat : (struct pf_str){"async", 5};
}

static enum head slice_begin(struct pf_json *c, const struct pf_packet *pk, const struct place *at)
{
	const struct pf_event *ev = &pk->event;
	struct buf *b = &c->line;

	push(c, ev->track_uuid, ev);
	struct open_name *top =
		at->kind == PLACE_THREAD && ev->nflow_ids == 0 && ev->nterminating_flow_ids == 0
			? top_of(c, ev->track_uuid)
			: NULL;
	struct pending *p = top != NULL ? new_pending(c) : NULL;
	if (p != NULL) {
		/* held back: its END makes it an X */
		top->held = p;
		p->has = true;
		p->track_uuid = ev->track_uuid;
		p->ts_ns = pk->time_ns;
		p->at = *at;
		p->packet = c->at.packet;
		p->offset = c->at.offset;
		p->head.len = p->args.len = 0;
		if (pfj_put_names(&p->head, ev->categories, ev->name) ||
		    pfj_put_args(&p->args, ev, false))
			return HEAD_NOMEM;
		return HEAD_DONE;
	}
	if (at->kind == PLACE_ASYNC)
		return buf_puts(b, "{\"ph\":\"b\"") ||
				       pfj_put_names(b, async_cat(ev->categories), ev->name)
			       ? HEAD_NOMEM
			       : HEAD_TAIL;
	return buf_puts(b, "{\"ph\":\"B\"") || pfj_put_names(b, ev->categories, ev->name)
		       ? HEAD_NOMEM
		       : HEAD_TAIL;
}

static enum head slice_end(struct pf_json *c, const struct pf_event *ev, const struct place *at)
{
	bool had, async = at->kind == PLACE_ASYNC;
	struct open_name n = pop(c, ev->track_uuid, &had);
	struct pf_str name = {n.name, n.name_len}, cat = {n.cat, n.cat_len};
	int err;

	if (async)
		cat = async_cat(cat);
	err = buf_puts(&c->line, async ? "{\"ph\":\"e\"" : "{\"ph\":\"E\"") ||
	      pfj_put_names(&c->line, cat, name);
	free(n.name);
	free(n.cat);
	return err ? HEAD_NOMEM : HEAD_TAIL;
}

static enum head instant(struct pf_json *c, const struct pf_packet *pk, const struct place *at,
			 int64_t ts)
{
	const struct pf_event *ev = &pk->event;
	bool start = pfj_str_is(ev->name, RTR__MARK_START);
	bool marker = start || pfj_str_is(ev->name, RTR__MARK_END);
	struct buf *b = &c->line;

	if (!marker && (ev->nflow_ids > 0 || ev->nterminating_flow_ids > 0)) {
		flows(c, pk, ev, at, true); /* the instant is the flow (docs/perfetto.md) */
		return HEAD_DONE;
	}
	if (marker) {
		if (buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\"") ||
		    pfj_put_names(b, (struct pf_str){0}, ev->name) || pfj_put_where(b, ts, at) ||
		    (ev->ntop > 0 && (buf_puts(b, ",\"args\":{") || pfj_put_args(b, ev, start) ||
				      buf_putc(b, '}'))) ||
		    buf_putc(b, '}'))
			return HEAD_NOMEM;
		emit(c, b);
		return HEAD_DONE;
	}
	if (at->kind == PLACE_ASYNC)
		return buf_puts(b, "{\"ph\":\"n\"") ||
				       pfj_put_names(b, async_cat(ev->categories), ev->name)
			       ? HEAD_NOMEM
			       : HEAD_TAIL;
	return buf_puts(b, at->kind == PLACE_THREAD   ? "{\"ph\":\"i\",\"s\":\"t\""
			   : at->kind == PLACE_GLOBAL ? "{\"ph\":\"i\",\"s\":\"g\""
						      : "{\"ph\":\"i\",\"s\":\"p\"") ||
			       pfj_put_names(b, ev->categories, ev->name)
		       ? HEAD_NOMEM
		       : HEAD_TAIL;
}

/* The JSON key of a counter track's value, as the recorder writes it: the drops'
 * running total "events", memory in use "bytes_in_use", else "value". NULL: a counter
 * the recorder's JSON does not have (its own at the end marker, which says the same). */
static const char *counter_key(const struct pf_packet *pk, const struct pf_track *t)
{
	if (t == NULL || t->name == NULL)
		return "value";
	if (strcmp(t->name, RTR__COUNTER_EVENTS) == 0)
		return NULL;
	if (strcmp(t->name, RTR__COUNTER_DROPPED) == 0) /* on a thread's sequence while running */
		return pk->sequence_track != 0 ? RTR__KEY_EVENTS : NULL;
	if (t->counter_unit == RTR__PF_UNIT_SIZE_BYTES && strncmp(t->name, "memory ", 7) == 0)
		return "bytes_in_use";
	return "value";
}

static enum head counter(struct pf_json *c, const struct pf_packet *pk, const struct place *at,
			 int64_t ts)
{
	const struct pf_event *ev = &pk->event;
	const struct pf_track *t = ev->track;
	struct pf_str name = ev->name, cat = ev->categories;
	struct buf *b = &c->line;
	const char *key = counter_key(pk, t);
	char num[40];

	if (!ev->has_counter || key == NULL)
		return HEAD_DONE;
	if (t != NULL && t->name != NULL)
		name = (struct pf_str){t->name, strlen(t->name)};
	if (name.s == NULL)
		name = (struct pf_str){"counter", 7};
	if (cat.s == NULL && t != NULL && t->categories != NULL)
		cat = (struct pf_str){t->categories, strlen(t->categories)};
	if (buf_puts(b, "{\"ph\":\"C\"") || pfj_put_names(b, cat, name) ||
	    pfj_put_where(b, ts, at) || buf_puts(b, ",\"args\":{\"") || buf_puts(b, key) ||
	    buf_puts(b, "\":"))
		return HEAD_NOMEM;
	if (ev->counter_is_double) {
		if (buf_put(b, num, (size_t)(rtr__jsontext_f64(num, ev->counter_double) - num)))
			return HEAD_NOMEM;
	} else if (buf_put_i64(b, ev->counter_int)) {
		return HEAD_NOMEM;
	}
	if (buf_puts(b, "}}"))
		return HEAD_NOMEM;
	emit(c, b);
	return HEAD_DONE;
}

/* The rest of a B, E, b, e, n or i: its id, place and args; then its flows. */
static void tail(struct pf_json *c, const struct pf_packet *pk, const struct place *at, int64_t ts)
{
	const struct pf_event *ev = &pk->event;
	struct buf *b = &c->line;

	if ((at->kind == PLACE_ASYNC ? pfj_put_where_id(b, ts, ev->track_uuid, at)
				     : pfj_put_where(b, ts, at)) ||
	    (ev->ntop > 0 &&
	     (buf_puts(b, ",\"args\":{") || pfj_put_args(b, ev, false) || buf_putc(b, '}'))) ||
	    buf_putc(b, '}')) {
		c->nomem = true;
		return;
	}
	emit(c, b);
	if (ev->nflow_ids > 0 || ev->nterminating_flow_ids > 0)
		flows(c, pk, ev, at, false);
}

static void track_event(struct pf_json *c, const struct pf_packet *pk)
{
	const struct pf_event *ev = &pk->event;
	struct place at = pfj_place_of(pk, ev->track_uuid, ev->track);

	if (at.kind != PLACE_THREAD)
		pfj_place_on_writer(pk, &at);
	enum head h;
	int64_t ts;

	if (!pk->has_time)
		return; /* no time to place it at (check reports why) */
	if (!c->has_origin)
		take_origin(c, pk);
	ts = rel(c, pk->time_ns);
	if (ev->type == PF_TYPE_SLICE_END) {
		struct open_name *top = top_of(c, ev->track_uuid);
		struct pending *p = top != NULL ? top->held : NULL;
		if (p != NULL) { /* the END of a held BEGIN: the slice as one X */
			top->held = NULL;
			end_as_x(c, pk, p);
			free_pending(c, p);
			return;
		}
	}
	c->line.len = 0;
	switch (ev->type) {
	case PF_TYPE_SLICE_BEGIN:
		h = slice_begin(c, pk, &at);
		break;
	case PF_TYPE_SLICE_END:
		h = slice_end(c, ev, &at);
		break;
	case PF_TYPE_INSTANT:
		h = instant(c, pk, &at, ts);
		break;
	case PF_TYPE_COUNTER:
		h = counter(c, pk, &at, ts);
		break;
	default:
		return; /* TYPE_UNSPECIFIED: legacy events, not read */
	}
	if (h == HEAD_NOMEM)
		c->nomem = true;
	else if (h == HEAD_TAIL)
		tail(c, pk, &at, ts);
}

/* ------------------------------------------------------------------ public */

static int conv_error(const struct pf_json *c)
{
	return c->nomem ? -ENOMEM : c->failed ? -ECANCELED : 0;
}

int pf_json_packet(struct pf_json *c, const struct pf_packet *pk)
{
	if (conv_error(c) != 0)
		return conv_error(c);
	c->at = (struct from){pk->index, pk->offset};
	if (pk->kind == PF_PACKET_TRACK_DESCRIPTOR && pk->track != NULL) {
		descriptor(c, pk);
	} else if (pk->kind == PF_PACKET_TRACK_EVENT && pk->has_time) {
		bool first = !c->started;
		bool marker = pk->event.type == PF_TYPE_INSTANT &&
			      pfj_str_is(pk->event.name, RTR__MARK_START);

		c->started = true;
		if (first && !marker)
			flush_early(c);
		track_event(c, pk);
		if (first && marker)
			flush_early(c);
	}
	return conv_error(c);
}

int pf_json_finish(struct pf_json *c)
{
	flush_early(c);
	/* slices the stream left open: their BEGINs, as B, outermost first */
	for (struct track_stack *s = table_first(&c->stacks); s != NULL; s = table_next(s))
		for (size_t i = 0; i < s->depth; i++) {
			flush(c, s->open[i].held);
			free_pending(c, s->open[i].held);
			s->open[i].held = NULL;
		}
	return conv_error(c);
}

void pf_json_set_origin(struct pf_json *c, int64_t origin_ns)
{
	c->has_origin = true;
	c->origin = origin_ns;
}

uint64_t pf_json_events(const struct pf_json *c)
{
	return c->events;
}

int pf_json_create(pf_json_line_fn line, void *ctx, struct pf_json **out)
{
	struct pf_json *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return -ENOMEM;
	c->line_fn = line;
	c->ctx = ctx;
	table_init(&c->stacks, sizeof(struct track_stack));
	table_init(&c->flows, 1);
	table_init(&c->metas, sizeof(uint64_t));
	*out = c;
	return 0;
}

void pf_json_free(struct pf_json *c)
{
	if (c == NULL)
		return;
	for (struct track_stack *s = table_first(&c->stacks); s != NULL; s = table_next(s)) {
		for (size_t i = 0; i < s->depth; i++) {
			free(s->open[i].name);
			free(s->open[i].cat);
			free_pending(c, s->open[i].held);
		}
		free(s->open);
	}
	table_destroy(&c->stacks);
	table_destroy(&c->metas);
	table_destroy(&c->flows);
	buf_free(&c->line);
	buf_free(&c->early);
	free(c->early_from);
	free(c);
}

void pf_json_origin_packet(struct pf_json_origin *o, const struct pf_packet *pk)
{
	const struct pf_event *ev = &pk->event;

	if (pk->kind != PF_PACKET_TRACK_EVENT || !pk->has_time || o->marker)
		return;
	if (ev->type == PF_TYPE_INSTANT && pfj_str_is(ev->name, RTR__MARK_START)) {
		for (size_t i = 0, k = 0; k < ev->ntop; k++, i += pf_arg_span(ev->args, i)) {
			const struct pf_arg *a = &ev->args[i];

			if (pfj_str_is(a->name, RTR__KEY_ORIGIN_MONO) && a->kind == PF_ARG_UINT) {
				o->marker = o->has = true;
				/* a MONOTONIC time, on the primary clock */
				o->ns = (int64_t)a->u + pk->monotonic_offset;
				return;
			}
		}
	}
	if (!o->has || pk->time_ns < o->ns)
		o->ns = pk->time_ns;
	o->has = true;
}
