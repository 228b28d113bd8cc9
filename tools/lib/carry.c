/* SPDX-License-Identifier: MIT */
/*
 * What a part of a trace carries over from before it (see carry.h).
 */
#include "carry.h"

#include "common/names.h"
#include "merge_json.h"

#include <stdlib.h>
#include <string.h>

void carry_init(struct carry *c)
{
	memset(c, 0, sizeof(*c));
	table_init(&c->meta, sizeof(struct kept_event));
	table_init(&c->async, sizeof(struct async_span));
	table_init(&c->counters, sizeof(struct kept_event));
}

static void free_span(struct async_span *as)
{
	for (size_t i = 0; i < as->depth; i++)
		free(as->open[i].json);
	free(as->open);
	free(as->cat);
	free(as->name);
	free(as->id);
}

static void free_kept(struct table *t)
{
	for (struct kept_event *k = table_first(t); k != NULL; k = table_next(k))
		free(k->json);
	table_destroy(t);
}

void carry_destroy(struct carry *c)
{
	for (struct async_span *as = table_first(&c->async); as != NULL; as = table_next(as))
		free_span(as);
	table_destroy(&c->async);
	free_kept(&c->meta);
	free_kept(&c->counters);
	buf_free(&c->key);
}

/* Replace the event kept under the key in c->key by ev. 0 or -1. */
static int keep(struct carry *c, struct table *t, const struct trace_event *ev)
{
	struct kept_event *k = table_put(t, c->key.p, c->key.len, NULL);
	char *copy = text_dup(ev->json, ev->json_len);

	if (k == NULL || copy == NULL) {
		free(copy);
		return -1;
	}
	free(k->json);
	k->json = copy;
	k->len = ev->json_len;
	k->ts_ns = ev->ts_ns;
	return 0;
}

int carry_meta(struct carry *c, const struct trace_event *ev)
{
	static const char *const process_wide[] = {"process_name", "process_sort_index",
						   "process_labels"};
	int64_t pid, tid;
	bool thread = true;

	if (ev->name.type != TRACE_STRING)
		return 0;
	for (size_t i = 0; i < sizeof(process_wide) / sizeof(process_wide[0]); i++)
		thread &= !trace_value_is(&ev->name, process_wide[i]);
	trace_event_thread(ev, &pid, &tid);
	c->key.len = 0;
	if (buf_put(&c->key, ev->name.text, ev->name.len + 1) ||
	    buf_put(&c->key, &pid, sizeof(pid)) || (thread && buf_put(&c->key, &tid, sizeof(tid))))
		return -1;
	return keep(c, &c->meta, ev);
}

int carry_counter(struct carry *c, const struct trace_event *ev)
{
	int64_t pid, tid;

	if (!ev->has_ts || ev->args.type != TRACE_OBJECT)
		return 0;
	trace_event_thread(ev, &pid, &tid);
	c->key.len = 0;
	if (trace_key_add(&c->key, &ev->name) || buf_put(&c->key, &pid, sizeof(pid)))
		return -1;
	return keep(c, &c->counters, ev);
}

void carry_async_forget(struct carry *c, struct async_span *as)
{
	free_span(as);
	table_remove(&c->async, as);
}

/* A new span for the b event ev, its strings copied. 0 or -1. */
static int new_span(struct async_span *as, const struct trace_event *ev)
{
	struct buf id = {0};

	if (buf_put_value(&id, &ev->id)) {
		buf_free(&id);
		return -1;
	}
	as->id = id.p;
	as->id_len = id.len;
	as->cat = trace_value_dup(&ev->cat);
	as->cat_len = ev->cat.len;
	as->name = trace_value_dup(&ev->name);
	as->name_len = as->name != NULL ? ev->name.len : 0;
	trace_event_thread(ev, &as->pid, &as->tid);
	return as->cat == NULL || (ev->name.type == TRACE_STRING && as->name == NULL) ? -1 : 0;
}

int carry_async(struct carry *c, const struct trace_event *ev, struct async_span **span)
{
	struct async_span *as;
	struct kept_event *o;
	bool created;

	*span = NULL;
	if (ev->cat.type != TRACE_STRING || ev->id.type == TRACE_ABSENT)
		return CARRY_ASYNC_NONE; /* not a span the viewers match: nothing to carry */
	if (trace_async_key(&c->key, ev))
		return -1;
	as = ev->phase == 'b' ? table_put(&c->async, c->key.p, c->key.len, &created)
			      : table_get(&c->async, c->key.p, c->key.len);
	if (as == NULL)
		return ev->phase == 'b' ? -1 : CARRY_ASYNC_NONE;
	if (ev->phase == 'b' && created && new_span(as, ev)) {
		carry_async_forget(c, as);
		return -1;
	}
	if (ev->has_ts && (as->depth == 0 || ev->ts_ns > as->latest_ns))
		as->latest_ns = ev->ts_ns;
	*span = as;
	if (ev->phase == 'e') {
		if (as->depth == 0)
			return CARRY_ASYNC_NONE;
		free(as->open[--as->depth].json);
		if (as->written > as->depth)
			as->written = as->depth;
		return CARRY_ASYNC_ENDED;
	}
	if (ev->phase != 'b')
		return CARRY_ASYNC_SEEN;
	o = array_grow(as->open, &as->cap, as->depth + 1, sizeof(*o), 2);
	if (o == NULL)
		return -1;
	as->open = o;
	o = &as->open[as->depth];
	o->json = text_dup(ev->json, ev->json_len);
	if (o->json == NULL)
		return -1;
	o->len = ev->json_len;
	o->ts_ns = ev->ts_ns;
	as->depth++;
	return CARRY_ASYNC_OPENED;
}

int carry_start_marker(struct buf *b, const char *orig, size_t orig_len, bool set_ts, int64_t ts_ns,
		       int64_t pid, int64_t tid, const char *members, size_t members_len)
{
	struct event_edit e = {.set_ts = set_ts, .ts_ns = ts_ns, .duplicates = true};
	struct json_member m;
	struct buf ext = {0};
	size_t pos = 0;
	int err;

	if (orig == NULL)
		return buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_START
				   "\",\"ts\":") ||
		       buf_put_us(b, ts_ns) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, pid) ||
		       buf_puts(b, ",\"tid\":") || buf_put_i64(b, tid) ||
		       buf_puts(b, ",\"args\":{") || buf_put(b, members, members_len) ||
		       buf_puts(b, "}}");
	while (json_next_member(orig, orig_len, &pos, &m)) {
		if (json_member_is(&m, "args") && m.value_len > 0 && m.value[0] == '{') {
			if (json_object_extend(&ext, m.value, m.value_len, members, members_len)) {
				buf_free(&ext);
				return -1;
			}
			e.args = ext.p;
			e.args_len = ext.len;
		}
	}
	err = event_rewrite(b, orig, orig_len, &e);
	buf_free(&ext);
	return err;
}
