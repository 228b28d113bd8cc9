/* SPDX-License-Identifier: MIT */
/*
 * The yajl path of the JSON reader (see trace.c for the design): text fed to yajl,
 * its syntax errors placed and worded, and an event built from its tokens (its
 * compact JSON re-serialised as they arrive, the known keys and top-level args
 * copied) and queued as one allocation. Events the fast path does not take, and all
 * of them under TRACE_READ_NO_FAST, come this way.
 */
#include "trace_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const size_t tr_field_offsets[TRACE_F_COUNT] = {
	[TRACE_F_PH] = offsetof(struct trace_event, ph),
	[TRACE_F_NAME] = offsetof(struct trace_event, name),
	[TRACE_F_CAT] = offsetof(struct trace_event, cat),
	[TRACE_F_TS] = offsetof(struct trace_event, ts),
	[TRACE_F_DUR] = offsetof(struct trace_event, dur),
	[TRACE_F_PID] = offsetof(struct trace_event, pid),
	[TRACE_F_TID] = offsetof(struct trace_event, tid),
	[TRACE_F_ID] = offsetof(struct trace_event, id),
	[TRACE_F_S] = offsetof(struct trace_event, s),
	[TRACE_F_BP] = offsetof(struct trace_event, bp),
	[TRACE_F_ARGS] = offsetof(struct trace_event, args),
};

/* ------------------------------------------------------------ building events */

void tr_building_reset(struct building *b)
{
	b->active = false;
	b->json.len = 0;
	b->strs.len = 0;
	b->nargs = 0;
	b->nlv = 0;
	b->field_key = -1;
	b->args_open = false;
	b->seen = 0;
	b->dups = 0;
	memset(b->field, 0, sizeof(b->field));
}

void tr_building_free(struct building *b)
{
	buf_free(&b->json);
	buf_free(&b->strs);
	free(b->args);
	free(b->lv);
}

/* Separator before a value: only arrays need one (keys write their own). */
static int ser_sep(struct building *b)
{
	struct level *top;

	if (b->nlv == 0)
		return 0;
	top = &b->lv[b->nlv - 1];
	if (top->type == '[') {
		if (!top->first && buf_putc(&b->json, ','))
			return -1;
		top->first = false;
	}
	return 0;
}

/* Copy a value's text into strs, NUL-terminated; strings made valid UTF-8. */
static int store_value(struct building *b, struct value_ref *v, enum trace_type type, const void *p,
		       size_t len)
{
	size_t off = b->strs.len;

	if (type == TRACE_STRING) {
		if (utf8_put_valid(&b->strs, p, len) < 0)
			return -1;
	} else if (buf_put(&b->strs, p, len)) {
		return -1;
	}
	v->type = type;
	v->off = off;
	v->len = b->strs.len - off;
	return buf_putc(&b->strs, '\0');
}

/* The known key k names, or -1. Every key of every event comes here: compare the
 * length and first byte before the bytes. */
static int field_lookup(const unsigned char *k, size_t len)
{
	static const unsigned char lengths[TRACE_F_COUNT] = {
		[TRACE_F_PH] = 2,  [TRACE_F_NAME] = 4, [TRACE_F_CAT] = 3,  [TRACE_F_TS] = 2,
		[TRACE_F_DUR] = 3, [TRACE_F_PID] = 3,  [TRACE_F_TID] = 3,  [TRACE_F_ID] = 2,
		[TRACE_F_S] = 1,   [TRACE_F_BP] = 2,   [TRACE_F_ARGS] = 4,
	};

	for (int f = 0; f < TRACE_F_COUNT; f++) {
		if (lengths[f] == len && trace_field_names[f][0] == (char)k[0] &&
		    memcmp(trace_field_names[f], k, len) == 0)
			return f;
	}
	return -1;
}

/* Open a container of type c on a stack of levels. false when out of memory. */
bool tr_level_push(struct level **lv, size_t *nlv, size_t *cap, char c)
{
	struct level *p = array_grow(*lv, cap, *nlv + 1, sizeof(*p), 16);

	if (p == NULL)
		return false;
	*lv = p;
	(*lv)[*nlv].type = c;
	(*lv)[*nlv].first = true;
	(*nlv)++;
	return true;
}

int tr_event_begin(struct trace *r)
{
	struct building *b = &r->b;
	uint64_t at = tr_here(r) - 1; /* the '{' is one byte, just before the offset */

	tr_building_reset(b);
	b->active = true;
	b->offset = at;
	tr_locate(r, at, &b->line, &b->col);
	if (!tr_level_push(&b->lv, &b->nlv, &b->lv_cap, '{'))
		return tr_fail_nomem(r);
	return buf_putc(&b->json, '{') ? tr_fail_nomem(r) : 1;
}

/* The phase and the numbers of ts, dur, pid and tid, from their text. */
void trace_event_numbers(struct trace_event *ev)
{
	ev->phase = ev->ph.type == TRACE_STRING && ev->ph.len == 1 ? ev->ph.text[0] : '\0';
	if (ev->ts.type == TRACE_NUMBER)
		ev->has_ts = json_parse_us(ev->ts.text, ev->ts.len, &ev->ts_ns, &ev->ts_exact) == 0;
	if (ev->dur.type == TRACE_NUMBER)
		ev->has_dur =
			json_parse_us(ev->dur.text, ev->dur.len, &ev->dur_ns, &ev->dur_exact) == 0;
	if (ev->pid.type == TRACE_NUMBER)
		ev->has_pid = json_parse_i64(ev->pid.text, ev->pid.len, &ev->pid_num) == 0;
	if (ev->tid.type == TRACE_NUMBER)
		ev->has_tid = json_parse_i64(ev->tid.text, ev->tid.len, &ev->tid_num) == 0;
}

/* The event's object closed: copy it into one allocation and queue it. */
static int event_commit(struct trace *r)
{
	struct building *b = &r->b;
	size_t args_bytes = b->nargs * sizeof(struct trace_arg);
	char *mem = malloc(args_bytes + b->json.len + 1 + b->strs.len);
	struct trace_arg *args = (void *)mem;
	char *json, *strs;
	struct trace_event *ev;
	struct item *it;

	if (mem == NULL)
		return tr_fail_nomem(r);
	json = mem + args_bytes;
	memcpy(json, b->json.p, b->json.len);
	json[b->json.len] = '\0';
	strs = json + b->json.len + 1;
	if (b->strs.len > 0)
		memcpy(strs, b->strs.p, b->strs.len);
	it = tr_queue_push(r);
	if (it == NULL) {
		free(mem);
		return tr_fail_nomem(r);
	}
	it->kind = ITEM_EVENT;
	it->mem = mem;
	ev = &it->u.ev;
	memset(ev, 0, sizeof(*ev));
	for (int f = 0; f < TRACE_F_COUNT; f++) {
		struct trace_value *v = (void *)((char *)ev + tr_field_offsets[f]);

		v->type = b->field[f].type;
		if (v->type != TRACE_ABSENT) {
			v->text = strs + b->field[f].off;
			v->len = b->field[f].len;
		}
	}
	for (size_t i = 0; i < b->nargs; i++) {
		args[i].key = strs + b->args[i].key_off;
		args[i].key_len = b->args[i].key_len;
		args[i].value.type = b->args[i].value.type;
		args[i].value.text = strs + b->args[i].value.off;
		args[i].value.len = b->args[i].value.len;
	}
	ev->arg = b->nargs > 0 ? args : NULL;
	ev->nargs = b->nargs;
	trace_event_numbers(ev);
	ev->json = json;
	ev->json_len = b->json.len;
	ev->line = b->line;
	ev->col = b->col;
	ev->offset = b->offset;
	ev->duplicates = b->dups;
	tr_building_reset(b);
	return 1;
}

int tr_ev_open(struct trace *r, char c)
{
	struct building *b = &r->b;
	size_t n = b->nlv;

	if (ser_sep(b))
		return tr_fail_nomem(r);
	if (n == 1) {
		b->value_start = b->json.len;
		if (b->field_key == TRACE_F_ARGS && c == '{') {
			b->args_open = true;
			b->nargs = 0;
		}
	} else if (n == 2 && b->args_open) {
		b->arg_start = b->json.len;
	}
	if (!tr_level_push(&b->lv, &b->nlv, &b->lv_cap, c))
		return tr_fail_nomem(r);
	return buf_putc(&b->json, c) ? tr_fail_nomem(r) : 1;
}

int tr_ev_close(struct trace *r, char c)
{
	struct building *b = &r->b;
	enum trace_type t = c == '}' ? TRACE_OBJECT : TRACE_ARRAY;

	if (buf_putc(&b->json, c))
		return tr_fail_nomem(r);
	b->nlv--;
	if (b->nlv == 0)
		return event_commit(r);
	if (b->nlv == 1) {
		if (b->field_key >= 0 &&
		    store_value(b, &b->field[b->field_key], t, b->json.p + b->value_start,
				b->json.len - b->value_start))
			return tr_fail_nomem(r);
		if (b->field_key == TRACE_F_ARGS)
			b->args_open = false;
	} else if (b->nlv == 2 && b->args_open) {
		if (store_value(b, &b->args[b->nargs - 1].value, t, b->json.p + b->arg_start,
				b->json.len - b->arg_start))
			return tr_fail_nomem(r);
	}
	return 1;
}

int tr_ev_key(struct trace *r, const unsigned char *k, size_t len)
{
	struct building *b = &r->b;
	struct level *top = &b->lv[b->nlv - 1];

	if (!top->first && buf_putc(&b->json, ','))
		return tr_fail_nomem(r);
	top->first = false;
	if (json_put_string(&b->json, k, len) < 0 || buf_putc(&b->json, ':'))
		return tr_fail_nomem(r);
	if (b->nlv == 1) {
		b->field_key = field_lookup(k, len);
		if (b->field_key >= 0) {
			unsigned bit = 1u << b->field_key;

			if (b->seen & bit) {
				uint64_t line, col;

				b->dups |= bit;
				tr_locate(r, tr_here(r), &line, &col);
				if (!tr_queue_issue(r, TRACE_ISSUE_DUPLICATE_KEY, line, col,
						    "\"%s\" twice in one event: readers keep "
						    "different ones",
						    trace_field_names[b->field_key]))
					return 0;
			}
			b->seen |= bit;
		}
	} else if (b->nlv == 2 && b->args_open) {
		struct arg_ref *a;
		struct value_ref key;

		a = array_grow(b->args, &b->args_cap, b->nargs + 1, sizeof(*a), 8);
		if (a == NULL)
			return tr_fail_nomem(r);
		b->args = a;
		if (store_value(b, &key, TRACE_STRING, k, len))
			return tr_fail_nomem(r);
		a = &b->args[b->nargs++];
		a->key_off = key.off;
		a->key_len = key.len;
		memset(&a->value, 0, sizeof(a->value));
	}
	return 1;
}

int tr_ev_scalar(struct trace *r, enum trace_type t, const void *p, size_t len)
{
	struct building *b = &r->b;
	int err;

	if (ser_sep(b))
		return tr_fail_nomem(r);
	if (t == TRACE_STRING)
		err = json_put_string(&b->json, p, len) < 0;
	else
		err = buf_put(&b->json, p, len);
	if (err)
		return tr_fail_nomem(r);
	if (b->nlv == 1 && b->field_key >= 0)
		err = store_value(b, &b->field[b->field_key], t, p, len);
	else if (b->nlv == 2 && b->args_open)
		err = store_value(b, &b->args[b->nargs - 1].value, t, p, len);
	return err ? tr_fail_nomem(r) : 1;
}

/* A short, printable excerpt of the text at p for an error message. */
static void excerpt(char *out, size_t size, const unsigned char *p, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < size && i < 24; i++)
		out[n++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	out[n] = '\0';
}

/*
 * Feed text p[0 .. len), at text offset abs, to yajl. 0, or -1 (r->failed). *used
 * is how much yajl took: all of it, or less when it stopped for the fast path.
 */
int tr_yajl_feed(struct trace *r, const unsigned char *p, size_t len, uint64_t abs, size_t *used)
{
	size_t total = len;

	*used = total;
	while (len > 0) {
		yajl_status st;
		size_t consumed;
		unsigned char *msg;
		char near[32];
		size_t n, at;

		r->feed_abs = abs;
		st = yajl_parse(r->h, p, len);
		if (st == yajl_status_ok)
			return 0;
		if (r->failed)
			return -1;
		consumed = yajl_get_bytes_consumed(r->h);
		if (r->yield_to_fast) {
			/* A parser stopped by a callback cannot go on: a new one is made with
			 * the state it needs when yajl takes over again. */
			r->yield_to_fast = false;
			yajl_free(r->h);
			r->h = NULL;
			*used = total - len + consumed;
			return 0;
		}
		if (st == yajl_status_error && tr_recover_trailing_comma(r, p, consumed)) {
			p += consumed;
			len -= consumed;
			abs += consumed;
			continue;
		}
		if (r->failed)
			return -1;
		msg = yajl_get_error(r->h, 0, NULL, 0);
		n = msg != NULL ? strlen((char *)msg) : 0;
		while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
			n--;
		/*
		 * Where the error is: a bad byte inside a string is where yajl stopped; for
		 * "I expect ',' or '}'" yajl steps back into the token; otherwise it stops
		 * just past it. Then back to the start of the token.
		 */
		if (msg != NULL && strstr((char *)msg, "inside string") != NULL) {
			at = consumed;
		} else {
			at = msg != NULL && strstr((char *)msg, "I expect ',' or '}'") != NULL
				     ? consumed
			     : consumed > 0 ? consumed - 1
					    : 0;
			while (at > 0 && at <= len && !is_blank(p[at - 1]) &&
			       strchr(",:{}[]", p[at - 1]) == NULL)
				at--;
		}
		if (at > len)
			at = len;
		excerpt(near, sizeof(near), p + at, len - at);
		tr_fail(r, TRACE_ERR_SYNTAX, true, abs + at, "invalid JSON: %.*s, near `%s`",
			(int)n, msg != NULL ? (char *)msg : "error", near);
		if (msg != NULL)
			yajl_free_error(r->h, msg);
		return -1;
	}
	return 0;
}
