/* SPDX-License-Identifier: MIT */
/*
 * The walk of a JSON trace (see trace.c for the design): yajl's callbacks outside
 * the events (the top-level value, "traceEvents", elements that are not events,
 * the other top-level keys copied for on_top_level, ",]" got past), and inside the
 * event array the fast path: blanks and commas skipped here, each plain event read
 * by event_parse() and queued with one copy, an event longer than the text at hand
 * scanned to its end, and yajl given back the text at anything else.
 */
#include "trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
	[TRACE_ABSENT] = "absent",   [TRACE_NULL] = "null",	  [TRACE_BOOL] = "a boolean",
	[TRACE_NUMBER] = "a number", [TRACE_STRING] = "a string", [TRACE_OBJECT] = "an object",
	[TRACE_ARRAY] = "an array",
};

/* ------------------------------------------------- top-level values copied */

static void capture_start(struct trace *r, const unsigned char *k, size_t len)
{
	struct capture *c = &r->cap;

	c->active = true;
	c->over = false;
	c->nlv = 0;
	c->bytes = 0;
	c->key.len = c->json.len = 0;
	if (buf_put(&c->key, k, len) || buf_putc(&c->key, '\0'))
		c->over = true; /* reported as not kept */
}

/* Text of the value: kept up to the limit, then only counted. */
static void capture_put(struct trace *r, const void *p, size_t len, bool string)
{
	struct capture *c = &r->cap;
	size_t before = c->json.len;

	if (!c->over &&
	    (string ? json_put_string(&c->json, p, len) < 0 : buf_put(&c->json, p, len)))
		c->over = true;
	c->bytes += c->over ? len : c->json.len - before;
	if (!c->over && c->json.len > r->max_event)
		c->over = true;
	if (c->over)
		buf_free(&c->json);
}

/* The separator before a value in an array, or before a key in an object. */
static void capture_sep(struct trace *r)
{
	struct capture *c = &r->cap;

	if (c->nlv == 0)
		return;
	if (!c->lv[c->nlv - 1].first)
		capture_put(r, ",", 1, false);
	c->lv[c->nlv - 1].first = false;
}

static void capture_done(struct trace *r)
{
	struct capture *c = &r->cap;

	c->active = false;
	if (!c->over && buf_putc(&c->json, '\0') == 0)
		c->json.len--; /* NUL-terminated, not counted */
	else
		c->over = true;
	r->opt.on_top_level(r->opt.top_level_ctx, c->key.p != NULL ? c->key.p : "",
			    c->key.len > 0 ? c->key.len - 1 : 0, c->over ? NULL : c->json.p,
			    c->over ? c->bytes : c->json.len);
	if (c->json.cap > (1u << 20))
		buf_free(&c->json);
}

static int capture_open(struct trace *r, char ch)
{
	struct capture *c = &r->cap;

	if (c->lv[c->nlv - 1].type == '[')
		capture_sep(r);
	capture_put(r, &ch, 1, false);
	return tr_level_push(&c->lv, &c->nlv, &c->lv_cap, ch) ? 1 : tr_fail_nomem(r);
}

static int not_an_event(struct trace *r, enum trace_type t)
{
	uint64_t line, col;

	tr_locate(r, tr_here(r), &line, &col);
	r->non_events++;
	return tr_queue_issue(r, TRACE_ISSUE_NOT_AN_EVENT, line, col,
			      "an element of the event array is %s, not an event object (skipped)",
			      type_names[t]);
}

static int on_scalar(struct trace *r, enum trace_type t, const void *p, size_t len)
{
	if (r->muted)
		return 1;
	r->last_token = tr_here(r);
	if (r->b.active)
		return tr_ev_scalar(r, t, p, len);
	if (r->cap.active) {
		if (r->cap.nlv > 0 && r->cap.lv[r->cap.nlv - 1].type == '[')
			capture_sep(r);
		capture_put(r, p, len, t == TRACE_STRING);
		if (r->cap.nlv == 0)
			capture_done(r);
		return 1;
	}
	if (r->depth == 0) {
		tr_fail(r, TRACE_ERR_SYNTAX, true, tr_here(r),
			"the top level is %s, not an array of events or an object with "
			"\"traceEvents\"",
			type_names[t]);
		return 0;
	}
	if (r->events_depth != 0 && r->depth == r->events_depth)
		return not_an_event(r, t);
	if (r->key_is_events && r->depth == 1) {
		tr_fail(r, TRACE_ERR_SYNTAX, true, tr_here(r),
			"\"traceEvents\" is %s, not an array", type_names[t]);
		return 0;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, TRACE_NULL, "null", 4);
}

static int cb_boolean(void *ctx, int v)
{
	return on_scalar(ctx, TRACE_BOOL, v ? "true" : "false", v ? 4 : 5);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return on_scalar(ctx, TRACE_NUMBER, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return on_scalar(ctx, TRACE_STRING, s, len);
}

/*
 * In the event array, between elements: stop yajl there (a callback's 0) so that
 * the fast path takes the text from just past this token, in state at.
 */
static int yield_to_fast(struct trace *r, enum fast_state at)
{
	if (!r->fast_ok)
		return 1;
	r->fast = at;
	r->yield_to_fast = true;
	return 0;
}

static int on_start(struct trace *r, char c)
{
	unsigned d = r->depth;

	if (r->muted)
		return 1;
	r->last_token = tr_here(r);
	if (d >= TRACE_MAX_DEPTH) {
		tr_fail(r, TRACE_ERR_LIMIT, true, tr_here(r), "nested deeper than %d levels",
			TRACE_MAX_DEPTH);
		return 0;
	}
	r->depth++;
	if (r->b.active)
		return tr_ev_open(r, c);
	if (r->cap.active) {
		if (r->cap.nlv == 0) {
			/* The value itself: no separator before it. */
			capture_put(r, &c, 1, false);
			return tr_level_push(&r->cap.lv, &r->cap.nlv, &r->cap.lv_cap, c)
				       ? 1
				       : tr_fail_nomem(r);
		}
		return capture_open(r, c);
	}
	if (d == 0) {
		r->top_started = true;
		r->st.form = c == '[' ? TRACE_FORM_ARRAY : TRACE_FORM_OBJECT;
		if (c != '[')
			return 1;
		r->events_depth = 1;
		return yield_to_fast(r, FAST_FIRST);
	}
	if (r->events_depth != 0 && d == r->events_depth) {
		if (c == '{')
			return tr_event_begin(r);
		return not_an_event(r, TRACE_ARRAY);
	}
	if (r->key_is_events && d == 1) {
		r->key_is_events = false;
		if (c == '[') {
			r->events_depth = 2;
			return yield_to_fast(r, FAST_FIRST);
		}
		tr_fail(r, TRACE_ERR_SYNTAX, true, tr_here(r),
			"\"traceEvents\" is an object, not an array");
		return 0;
	}
	return 1;
}

static int on_end(struct trace *r, char c)
{
	if (r->muted)
		return 1;
	r->last_token = tr_here(r);
	r->depth--;
	if (r->cap.active) {
		capture_put(r, &c, 1, false);
		if (--r->cap.nlv == 0)
			capture_done(r);
		return 1;
	}
	if (r->b.active) {
		if (!tr_ev_close(r, c))
			return 0;
		return !r->b.active && r->depth == r->events_depth ? yield_to_fast(r, FAST_AFTER)
								   : 1;
	}
	if (r->events_depth != 0 && r->depth == r->events_depth - 1) {
		r->events_depth = 0;
		r->st.events_closed = true;
	}
	if (r->depth == 0)
		r->top_closed = true;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return on_start(ctx, '{');
}

static int cb_end_map(void *ctx)
{
	return on_end(ctx, '}');
}

static int cb_start_array(void *ctx)
{
	return on_start(ctx, '[');
}

static int cb_end_array(void *ctx)
{
	return on_end(ctx, ']');
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct trace *r = ctx;

	if (r->muted)
		return 1;
	r->last_token = tr_here(r);
	if (r->b.active)
		return tr_ev_key(r, k, len);
	if (r->cap.active) {
		capture_sep(r);
		capture_put(r, k, len, true);
		capture_put(r, ":", 1, false);
		return 1;
	}
	if (r->depth == 1) {
		r->key_is_events = len == 11 && memcmp(k, "traceEvents", 11) == 0;
		r->saw_events_key |= r->key_is_events;
		if (!r->key_is_events && r->opt.on_top_level != NULL)
			capture_start(r, k, len);
	}
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

yajl_handle tr_parser_new(struct trace *r)
{
	yajl_handle h = yajl_alloc(&callbacks, NULL, r);

	if (h == NULL)
		return NULL;
	/* Strict JSON: yajl's defaults, set anyway so that they are visible. Strings are
	 * not validated by yajl: its check is weaker than RFC 3629; the scanner or
	 * utf8_put_valid() does it properly. */
	yajl_config(h, yajl_allow_comments, 0);
	yajl_config(h, yajl_dont_validate_strings, 1);
	yajl_config(h, yajl_allow_trailing_garbage, 0);
	yajl_config(h, yajl_allow_multiple_values, 0);
	yajl_config(h, yajl_allow_partial_values, 0);
	return h;
}

/* ------------------------------------------------------------------- feeding */

/*
 * A fresh parser in the state after the event array's ']', put there by a muted
 * synthetic prefix; parsing goes on with the text after the ']'. false when out of
 * memory.
 */
static bool resume_after_events(struct trace *r)
{
	static const char array_prefix[] = "[]", object_prefix[] = "{\"\":[]";
	const char *prefix = r->events_depth == 1 ? array_prefix : object_prefix;
	yajl_handle h = tr_parser_new(r);

	if (h == NULL)
		return false;
	if (r->h != NULL)
		yajl_free(r->h);
	r->h = h;
	r->muted = true;
	yajl_parse(h, (const unsigned char *)prefix, strlen(prefix));
	r->muted = false;
	r->depth--;
	r->events_depth = 0;
	r->st.events_closed = true;
	if (r->depth == 0)
		r->top_closed = true;
	return true;
}

static int queue_trailing_comma(struct trace *r, uint64_t abs)
{
	uint64_t line, col;

	tr_locate(r, abs, &line, &col);
	return tr_queue_issue(r, TRACE_ISSUE_TRAILING_COMMA, line, col,
			      "a comma before the closing ']': not strict JSON (DevTools and "
			      "JSON.parse refuse it)");
}

/*
 * ",]" closing the event array: the one syntax error the reader gets past, because
 * writers that close a bare array by hand make it. Parsing goes on after ']'.
 */
bool tr_recover_trailing_comma(struct trace *r, const unsigned char *p, size_t consumed)
{
	if (r->events_depth == 0 || r->depth != r->events_depth || r->b.active || consumed == 0 ||
	    p[consumed - 1] != ']')
		return false;
	if (!resume_after_events(r))
		return false;
	return queue_trailing_comma(r, r->feed_abs + consumed - 1);
}

/* ----------------------------------------------------------------- fast path */

/* yajl takes over in the event array, in state at (FAST_FIRST, _AFTER or _NEXT): a
 * fresh parser put there by a muted synthetic prefix. 0, or -1 when out of memory. */
int tr_resume_yajl(struct trace *r, enum fast_state at)
{
	static const char *const array_prefix[] = {
		[FAST_FIRST] = "[", [FAST_AFTER] = "[{}", [FAST_NEXT] = "[{},"};
	static const char *const object_prefix[] = {
		[FAST_FIRST] = "{\"\":[", [FAST_AFTER] = "{\"\":[{}", [FAST_NEXT] = "{\"\":[{},"};
	const char *prefix = (r->events_depth == 1 ? array_prefix : object_prefix)[at];
	yajl_handle h = tr_parser_new(r);

	if (h == NULL) {
		tr_fail_nomem(r);
		return -1;
	}
	r->h = h;
	r->muted = true;
	yajl_parse(h, (const unsigned char *)prefix, strlen(prefix));
	r->muted = false;
	r->fast = FAST_OFF;
	return 0;
}

static bool is_container(enum trace_type t)
{
	return t == TRACE_OBJECT || t == TRACE_ARRAY;
}

/*
 * A value of a plain event. A scalar (a string's bytes, a number, a literal) is taken
 * in place from scalars, the event's text copied once, where the byte after it (its
 * closing quote, or the delimiter after a number or literal) becomes its NUL: no
 * scalar holds another's last byte. A container is copied into *more from the text
 * itself (compact when the event has blanks), since scalars inside it lose theirs.
 */
static void fast_value(const struct event_parse *e, const unsigned char *p,
		       const struct event_ref *ref, char *scalars, char **more,
		       struct trace_value *v)
{
	v->type = ref->type;
	if (!is_container(ref->type)) {
		v->text = scalars + ref->off;
		v->len = ref->len;
		scalars[ref->off + ref->len] = '\0';
		return;
	}
	v->text = *more;
	if (e->blanks) {
		v->len = event_parse_compact(*more, p + ref->off, ref->len);
	} else {
		memcpy(*more, p + ref->off, ref->len);
		v->len = ref->len;
	}
	(*more)[v->len] = '\0';
	*more += v->len + 1;
}

/* The numbers of the event, as trace_event_numbers() reads them: those event_parse()
 * read already taken from it. */
static void fast_numbers(const struct event_parse *e, struct trace_event *ev)
{
	ev->phase = ev->ph.type == TRACE_STRING && ev->ph.len == 1 ? ev->ph.text[0] : '\0';
	if (e->has_number[TRACE_F_TS]) {
		ev->has_ts = ev->ts_exact = true;
		ev->ts_ns = e->number[TRACE_F_TS];
	} else if (ev->ts.type == TRACE_NUMBER) {
		ev->has_ts = json_parse_us(ev->ts.text, ev->ts.len, &ev->ts_ns, &ev->ts_exact) == 0;
	}
	if (e->has_number[TRACE_F_DUR]) {
		ev->has_dur = ev->dur_exact = true;
		ev->dur_ns = e->number[TRACE_F_DUR];
	} else if (ev->dur.type == TRACE_NUMBER) {
		ev->has_dur =
			json_parse_us(ev->dur.text, ev->dur.len, &ev->dur_ns, &ev->dur_exact) == 0;
	}
	if (e->has_number[TRACE_F_PID]) {
		ev->has_pid = true;
		ev->pid_num = e->number[TRACE_F_PID];
	} else if (ev->pid.type == TRACE_NUMBER) {
		ev->has_pid = json_parse_i64(ev->pid.text, ev->pid.len, &ev->pid_num) == 0;
	}
	if (e->has_number[TRACE_F_TID]) {
		ev->has_tid = true;
		ev->tid_num = e->number[TRACE_F_TID];
	} else if (ev->tid.type == TRACE_NUMBER) {
		ev->has_tid = json_parse_i64(ev->tid.text, ev->tid.len, &ev->tid_num) == 0;
	}
}

/* The plain event event_parse() read at p (text offset abs): copied into one
 * allocation (its JSON, its text again for the scalars, its containers), and queued.
 * 1, or 0 (out of memory). */
static int fast_commit(struct trace *r, const unsigned char *p, uint64_t abs, uint64_t line,
		       uint64_t col)
{
	const struct event_parse *e = &r->ep;
	size_t args_bytes = e->nargs * sizeof(struct trace_arg), containers = 0;
	struct trace_event *ev;
	struct trace_arg *args;
	struct item *it;
	char *mem, *json, *scalars, *more;

	for (int f = 0; f < TRACE_F_COUNT; f++)
		containers += is_container(e->field[f].type) ? e->field[f].len + 1 : 0;
	for (size_t i = 0; i < e->nargs; i++)
		containers += is_container(e->arg[i].value.type) ? e->arg[i].value.len + 1 : 0;
	size_t size = args_bytes + 2 * (e->len + 1) + containers;
	bool in_arena = r->arena != NULL && size <= r->arena_cap - r->arena_used;

	mem = in_arena ? r->arena + r->arena_used : malloc(size);
	it = mem != NULL ? tr_queue_push(r) : NULL;
	if (it == NULL) {
		if (!in_arena)
			free(mem);
		return tr_fail_nomem(r);
	}
	if (in_arena) /* the next one aligned for its args */
		r->arena_used += (size + 7) & ~(size_t)7;
	it->kind = ITEM_EVENT;
	it->mem = in_arena ? NULL : mem;
	ev = &it->u.ev;
	memset(ev, 0, sizeof(*ev));
	args = (void *)mem;
	json = mem + args_bytes;
	if (e->blanks) {
		ev->json_len = event_parse_compact(json, p, e->len);
	} else {
		memcpy(json, p, e->len);
		ev->json_len = e->len;
	}
	json[ev->json_len] = '\0';
	ev->json = json;
	scalars = json + ev->json_len + 1;
	memcpy(scalars, p, e->len);
	more = scalars + e->len + 1;
	for (int f = 0; f < TRACE_F_COUNT; f++) {
		if (e->field[f].type != TRACE_ABSENT)
			fast_value(e, p, &e->field[f], scalars, &more,
				   (void *)((char *)ev + tr_field_offsets[f]));
	}
	for (size_t i = 0; i < e->nargs; i++) {
		struct trace_value key;

		fast_value(e, p, &e->arg[i].key, scalars, &more, &key);
		args[i].key = key.text;
		args[i].key_len = key.len;
		fast_value(e, p, &e->arg[i].value, scalars, &more, &args[i].value);
	}
	ev->arg = e->nargs > 0 ? args : NULL;
	ev->nargs = e->nargs;
	fast_numbers(e, ev);
	ev->line = line;
	ev->col = col;
	ev->offset = abs;
	return 1;
}

/* Scan a long event's bytes for its end: the bytes taken, up to its closing brace. */
static size_t long_scan(struct long_event *e, const unsigned char *p, size_t len, bool *closed)
{
	for (size_t i = 0; i < len; i++) {
		unsigned c = p[i];

		if (e->in_str) {
			if (e->esc)
				e->esc = false;
			else if (c == '\\')
				e->esc = true;
			else if (c == '"')
				e->in_str = false;
		} else if (c == '"') {
			e->in_str = true;
		} else if (c == '{' || c == '[') {
			e->depth++;
		} else if ((c == '}' || c == ']') && --e->depth == 0) {
			*closed = true;
			return i + 1;
		}
	}
	*closed = false;
	return len;
}

/* Does the event at p[0] end within p[0 .. len)? One that does not goes the long
 * way even when it is for yajl, so that yajl never holds more than the limit. */
static bool ends_here(const unsigned char *p, size_t len)
{
	struct long_event probe = {.depth = 0};
	bool closed;

	long_scan(&probe, p, len, &closed);
	return closed;
}

static void long_begin(struct trace *r, uint64_t abs)
{
	struct long_event *e = &r->lng;

	e->abs = abs;
	tr_locate(r, abs, &e->line, &e->col);
	e->text.len = 0;
	e->len = 0;
	e->depth = 0;
	e->in_str = e->esc = e->skip = false;
	e->resume = r->fast;
	r->fast = FAST_LONG;
}

/* The whole long event, kept in lng.text, to yajl: it is not plain. 0 or -1. */
static int long_to_yajl(struct trace *r)
{
	struct long_event *e = &r->lng;
	size_t used;
	int rc;

	if (tr_resume_yajl(r, e->resume) != 0)
		return -1;
	e->feeding = true;
	rc = tr_yajl_feed(r, (unsigned char *)e->text.p, e->text.len, e->abs, &used);
	if (rc == 0 && used < e->text.len) {
		/* yajl ended the event before the scan did: let it read the rest itself. */
		bool fast_ok = r->fast_ok;

		r->fast_ok = false;
		rc = tr_resume_yajl(r, FAST_AFTER);
		if (rc == 0)
			rc = tr_yajl_feed(r, (unsigned char *)e->text.p + used, e->text.len - used,
					  e->abs + used, &used);
		r->fast_ok = fast_ok;
	}
	e->feeding = false;
	return rc;
}

/*
 * More of a long event, from p[0 .. len): the bytes taken (up to its end), or
 * SIZE_MAX on an error. When it ends it is parsed (fast, or by yajl), or reported as
 * too large, and the state moves on.
 */
static size_t long_feed(struct trace *r, const unsigned char *p, size_t len)
{
	struct long_event *e = &r->lng;
	bool closed;
	size_t n = long_scan(e, p, len, &closed);

	if (!e->skip && e->len + n > r->max_event) {
		e->skip = true;
		buf_free(&e->text);
	} else if (!e->skip && buf_put(&e->text, p, n)) {
		tr_fail_nomem(r);
		return SIZE_MAX;
	}
	e->len += n;
	if (!closed)
		return n;
	r->fast = FAST_AFTER;
	if (e->skip) {
		r->st.events_skipped++;
		if (!tr_queue_issue(
			    r, TRACE_ISSUE_EVENT_TOO_LARGE, e->line, e->col,
			    "an event of %llu bytes, over the limit of %llu bytes: skipped, "
			    "not read",
			    (unsigned long long)e->len, (unsigned long long)r->max_event))
			return SIZE_MAX;
	} else if (event_parse(&r->ep, (const unsigned char *)e->text.p, e->text.len) ==
			   EVENT_PARSE_DONE &&
		   r->ep.len == e->text.len) {
		if (!fast_commit(r, (const unsigned char *)e->text.p, e->abs, e->line, e->col))
			return SIZE_MAX;
	} else if (long_to_yajl(r) != 0) {
		return SIZE_MAX;
	}
	/* Hand a large buffer back rather than hold it for the rest of the file. */
	if (e->text.cap > (1u << 20))
		buf_free(&e->text);
	e->text.len = 0;
	return n;
}

/*
 * The fast path over text p[0 .. len) at abs: the events of the event array, the
 * blanks and commas between them, its closing ']'. *used < len where yajl takes
 * over: after the ']', and at anything the fast path does not take (an element
 * that is not a plain event, a syntax error), from the state it is in. 0 or -1.
 */
static int fast_feed(struct trace *r, unsigned char *p, size_t len, uint64_t abs, size_t *used)
{
	size_t k = 0;

	while (k < len && r->fast != FAST_OFF) {
		unsigned char c = p[k];

		if (r->fast == FAST_LONG) {
			size_t n = long_feed(r, p + k, len - k);

			if (n == SIZE_MAX)
				return -1;
			k += n;
		} else if (is_blank(c)) {
			k++;
		} else if (c == ',' && r->fast == FAST_AFTER) {
			r->fast = FAST_NEXT;
			k++;
		} else if (c == ']') {
			if (r->fast == FAST_NEXT && !queue_trailing_comma(r, abs + k))
				return -1;
			if (!resume_after_events(r)) {
				tr_fail_nomem(r);
				return -1;
			}
			r->fast = FAST_OFF;
			k++;
		} else if (c == '{' && r->fast != FAST_AFTER) {
			enum event_parse_result rc = event_parse(&r->ep, p + k, len - k);
			uint64_t line, col;

			if (rc == EVENT_PARSE_DONE) {
				tr_locate(r, abs + k, &line, &col);
				if (!fast_commit(r, p + k, abs + k, line, col))
					return -1;
				k += r->ep.len;
				r->fast = FAST_AFTER;
			} else if (rc == EVENT_PARSE_MORE || !ends_here(p + k, len - k)) {
				long_begin(r, abs + k);
			} else if (tr_resume_yajl(r, r->fast) != 0) {
				return -1;
			}
		} else if (tr_resume_yajl(r, r->fast) != 0) {
			return -1;
		}
	}
	r->last_token = abs + k;
	*used = k;
	return 0;
}

/* Text to whichever parser has it now, until all of it is parsed. 0 or -1. */
int tr_parse_text(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	while (len > 0) {
		size_t used;
		int rc = r->fast != FAST_OFF ? fast_feed(r, p, len, abs, &used)
					     : tr_yajl_feed(r, p, len, abs, &used);

		if (rc != 0)
			return -1;
		p += used;
		len -= used;
		abs += used;
	}
	return 0;
}
