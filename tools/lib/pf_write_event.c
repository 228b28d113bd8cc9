/* SPDX-License-Identifier: MIT */
/*
 * The events of the .pftrace writer (see pf_write.h): a TrackEvent packet or two per
 * event on its thread's sequence, by phase, with its args as debug annotations.
 */
#include "pf_write_internal.h"

#include "common/names.h"
#include "merge_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one TrackEvent packet says. */
struct te {
	uint32_t type;
	uint64_t track; /* 0: the sequence's default, its thread */
	const struct trace_value *name, *cat;
	int counter; /* 1 counter_value, 2 double_counter_value */
	uint64_t value;
	int flow; /* 1 flow_ids, 2 terminating_flow_ids */
	uint64_t flow_id;
	const struct trace_value *args; /* an object, or NULL */
	bool start_marker;		/* its origins as uint values */
};

/* A name or a category as text: a string, or a number's text (false: none). */
static bool text_of(const struct trace_value *v, const char **s, size_t *len)
{
	if (v == NULL || (v->type != TRACE_STRING && v->type != TRACE_NUMBER))
		return false;
	*s = v->text;
	*len = v->len;
	return true;
}

static void put_name_cat(struct pf_writer *w, struct pfw_seq *seq, const struct te *e)
{
	const char *s;
	size_t len;
	uint32_t iid;

	if (text_of(e->cat, &s, &len)) {
		iid = len <= PFW_INTERN_NAME_MAX
			      ? pfw_iid(w, seq, RTR__PF_INTERNED_CATEGORIES, s, len)
			      : 0;
		if (iid != 0)
			pfw_put_uint(w, RTR__PF_EVENT_CATEGORY_IIDS, iid);
		else
			pfw_put_bytes(w, RTR__PF_EVENT_CATEGORIES, s, len);
	}
	if (text_of(e->name, &s, &len)) {
		iid = len <= PFW_INTERN_NAME_MAX ? pfw_iid(w, seq, RTR__PF_INTERNED_NAMES, s, len)
						 : 0;
		if (iid != 0)
			pfw_put_uint(w, RTR__PF_EVENT_NAME_IID, iid);
		else
			pfw_put_bytes(w, RTR__PF_EVENT_NAME, s, len);
	}
}

/* ------------------------------------------------------------- annotations */

/* A JSON integer's text as a uint64 (digits only). */
static bool parse_u64(const char *v, size_t len, uint64_t *out)
{
	struct trace_value tv = {TRACE_NUMBER, v, len};

	return value_u64(&tv, out) == 0;
}

/* A JSON number's value: int_value when it is an integer that fits int64, uint_value
 * when it fits uint64, else double_value. */
static void put_number(struct pf_writer *w, const char *v, size_t len)
{
	char tmp[64], *copy;
	uint64_t u;
	int64_t i;
	double d;

	if (json_parse_i64(v, len, &i) == 0) {
		pfw_put_uint(w, RTR__PF_ANN_INT, (uint64_t)i);
		return;
	}
	if (parse_u64(v, len, &u)) {
		pfw_put_uint(w, RTR__PF_ANN_UINT, u);
		return;
	}
	copy = len < sizeof(tmp) ? tmp : malloc(len + 1);
	if (copy == NULL) {
		w->err = -ENOMEM;
		return;
	}
	memcpy(copy, v, len);
	copy[len] = '\0';
	d = strtod(copy, NULL); /* JSON number syntax is strtod's */
	if (copy != tmp)
		free(copy);
	memcpy(&u, &d, sizeof(u));
	pfw_put_fixed64(w, RTR__PF_ANN_DOUBLE, u);
}

/* A string's text (escaped) decoded into w->text. */
static bool decode(struct pf_writer *w, const char *s, size_t len)
{
	w->text.len = 0;
	if (pfw_unescape(&w->text, s, len) != 0) {
		w->err = -ENOMEM;
		return false;
	}
	return true;
}

static void put_value(struct pf_writer *w, struct pfw_seq *seq, const char *v, size_t len,
		      unsigned depth);

/* The members of an object (dict_entries, names inline) or the elements of an array
 * (array_values). */
static void put_children(struct pf_writer *w, struct pfw_seq *seq, const char *v, size_t len,
			 unsigned depth)
{
	size_t pos = 0, at, n;
	const char *el;
	struct json_member m;

	if (v[0] == '{') {
		while (w->err == 0 && json_next_member(v, len, &pos, &m)) {
			at = pfw_open(w, RTR__PF_ANN_DICT_ENTRIES);
			if (decode(w, m.key, m.key_len))
				pfw_put_bytes(w, RTR__PF_ANN_NAME, w->text.p, w->text.len);
			put_value(w, seq, m.value, m.value_len, depth + 1);
			pfw_close(w, at);
		}
		return;
	}
	while (w->err == 0 && json_next_element(v, len, &pos, &el, &n)) {
		at = pfw_open(w, RTR__PF_ANN_ARRAY_VALUES);
		put_value(w, seq, el, n, depth + 1);
		pfw_close(w, at);
	}
}

/* A value into the open annotation; seq given: at the top level, where short string
 * values are interned. */
static void put_value(struct pf_writer *w, struct pfw_seq *seq, const char *v, size_t len,
		      unsigned depth)
{
	uint32_t iid = 0;

	if (len == 0)
		return;
	switch (v[0]) {
	case '"':
		if (!decode(w, v + 1, len - 2))
			return;
		if (depth == 0 && w->text.len <= PFW_INTERN_STRING_MAX)
			iid = pfw_iid(w, seq, RTR__PF_INTERNED_STRINGS, w->text.p, w->text.len);
		if (iid != 0)
			pfw_put_uint(w, RTR__PF_ANN_STRING_IID, iid);
		else
			pfw_put_bytes(w, RTR__PF_ANN_STRING, w->text.p, w->text.len);
		return;
	case 't':
	case 'f':
		pfw_put_uint(w, RTR__PF_ANN_BOOL, v[0] == 't');
		return;
	case 'n':
		return; /* null: no value */
	case '{':
	case '[':
		if (depth >= PFW_MAX_DEPTH) /* as its text, where the readers stop */
			pfw_put_bytes(w, RTR__PF_ANN_STRING, v, len);
		else
			put_children(w, seq, v, len, depth);
		return;
	default:
		put_number(w, v, len);
		return;
	}
}

/* A start marker's origin: a string of decimal digits, as a uint value (what the
 * library writes, and what a reader takes the origin from). */
static bool origin_value(const struct json_member *m, uint64_t *ns)
{
	static const char prefix[] = "origin_";

	return m->key_len > sizeof(prefix) - 1 && memcmp(m->key, prefix, sizeof(prefix) - 1) == 0 &&
	       m->value_len > 2 && m->value[0] == '"' && m->value[1] != '0' &&
	       parse_u64(m->value + 1, m->value_len - 2, ns);
}

static void put_annotations(struct pf_writer *w, struct pfw_seq *seq, const struct te *e)
{
	struct json_member m;
	size_t pos = 0, at;
	uint32_t iid;
	uint64_t ns;

	if (e->args == NULL || e->args->type != TRACE_OBJECT)
		return;
	while (w->err == 0 && json_next_member(e->args->text, e->args->len, &pos, &m)) {
		at = pfw_open(w, RTR__PF_EVENT_DEBUG_ANNOTATIONS);
		if (!decode(w, m.key, m.key_len))
			return;
		iid = w->text.len <= PFW_INTERN_NAME_MAX
			      ? pfw_iid(w, seq, RTR__PF_INTERNED_ANNOTATION_NAMES, w->text.p,
					w->text.len)
			      : 0;
		if (iid != 0)
			pfw_put_uint(w, RTR__PF_ANN_NAME_IID, iid);
		else
			pfw_put_bytes(w, RTR__PF_ANN_NAME, w->text.p, w->text.len);
		if (e->start_marker && origin_value(&m, &ns))
			pfw_put_uint(w, RTR__PF_ANN_UINT, ns);
		else
			put_value(w, seq, m.value, m.value_len, 0);
		pfw_close(w, at);
	}
}

/* ------------------------------------------------------------- packets */

static void put_event(struct pf_writer *w, struct pfw_thread *th, uint64_t t, const struct te *e)
{
	struct pfw_seq *seq = &th->seq;
	size_t at;

	pfw_clock_for(w, seq, t);
	pfw_begin(w);
	pfw_time(w, seq, t);
	at = pfw_open(w, RTR__PF_PACKET_TRACK_EVENT);
	pfw_put_uint(w, RTR__PF_EVENT_TYPE, e->type);
	if (e->track != 0)
		pfw_put_uint(w, RTR__PF_EVENT_TRACK_UUID, e->track);
	put_name_cat(w, seq, e);
	if (e->counter == 1)
		pfw_put_uint(w, RTR__PF_EVENT_COUNTER_VALUE, e->value);
	else if (e->counter == 2)
		pfw_put_fixed64(w, RTR__PF_EVENT_DOUBLE_COUNTER_VALUE, e->value);
	if (e->flow != 0)
		pfw_put_fixed64(w,
				e->flow == 1 ? RTR__PF_EVENT_FLOW_IDS
					     : RTR__PF_EVENT_TERMINATING_FLOW_IDS,
				e->flow_id);
	put_annotations(w, seq, e);
	pfw_close(w, at);
	pfw_send(w, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
}

/* The series of a C event: one counter packet each, on the track "name" (one series)
 * or "name key". False when none is a number. */
static bool counters(struct pf_writer *w, struct pfw_thread *th, const struct trace_event *ev,
		     uint64_t t)
{
	struct te e = {.type = RTR__PF_TYPE_COUNTER, .cat = &ev->cat};
	const struct trace_value *args = &ev->args;
	struct json_member m;
	size_t pos = 0, series = 0, written = 0;
	const char *name = "";
	size_t nlen = 0;
	int64_t i;
	double d;

	if (args->type != TRACE_OBJECT)
		return false;
	while (json_next_member(args->text, args->len, &pos, &m))
		series += m.value[0] == '-' || (m.value[0] >= '0' && m.value[0] <= '9');
	text_of(&ev->name, &name, &nlen);
	for (pos = 0; w->err == 0 && json_next_member(args->text, args->len, &pos, &m);) {
		if (m.value[0] != '-' && (m.value[0] < '0' || m.value[0] > '9'))
			continue;
		w->name.len = 0;
		if (buf_put(&w->name, name, nlen) ||
		    (series > 1 && (buf_putc(&w->name, ' ') || !decode(w, m.key, m.key_len) ||
				    buf_put(&w->name, w->text.p, w->text.len)))) {
			w->err = -ENOMEM;
			return false;
		}
		e.track = pfw_counter_track(w, th, &ev->cat, w->name.p, w->name.len);
		if (e.track == 0) {
			w->counts.over_bound += w->err == 0;
			continue;
		}
		if (json_parse_i64(m.value, m.value_len, &i) == 0) {
			e.counter = 1;
			e.value = (uint64_t)i;
		} else {
			char tmp[64];

			snprintf(tmp, sizeof(tmp), "%.*s", (int)m.value_len, m.value);
			d = strtod(tmp, NULL);
			e.counter = 2;
			memcpy(&e.value, &d, sizeof(d));
		}
		put_event(w, th, t, &e);
		written++;
	}
	return written > 0;
}

/* A flow's id as the viewers read it (an integer, a "0x" string), else a hash of it. */
static uint64_t flow_id(const struct trace_value *id)
{
	uint64_t v, h = 0xcbf29ce484222325ull;

	if (value_id_u64(id, &v) == 0)
		return v;
	for (size_t i = 0; i < id->len; i++)
		h = (h ^ (unsigned char)id->text[i]) * 0x100000001b3ull;
	return h;
}

/* b, n or e on the async track of (pid, cat, id). False: past the bound. */
static bool async(struct pf_writer *w, struct pfw_thread *th, const struct trace_event *ev,
		  uint64_t t)
{
	struct pfw_track *tr = pfw_async_track(w, th, ev);
	struct te e = {.name = &ev->name, .cat = &ev->cat, .args = &ev->args};

	if (tr == NULL)
		return false;
	e.track = tr->uuid;
	e.type = ev->phase == 'b'   ? RTR__PF_TYPE_SLICE_BEGIN
		 : ev->phase == 'e' ? RTR__PF_TYPE_SLICE_END
				    : RTR__PF_TYPE_INSTANT;
	if (ev->phase == 'e')
		e.name = e.cat = NULL; /* an END has its BEGIN's */
	put_event(w, th, t, &e);
	pfw_async_done(w, tr, ev->phase == 'b' ? 1 : ev->phase == 'e' ? -1 : 0);
	return true;
}

/* An instant: on the thread, or on the process track ("s":"p" or "g"; a marker when
 * its thread is the process's own, as the library writes it). */
static void instant(struct pf_writer *w, struct pfw_thread *th, const struct trace_event *ev,
		    uint64_t t)
{
	bool start = trace_value_is(&ev->name, RTR__MARK_START);
	bool marker = start || trace_value_is(&ev->name, RTR__MARK_END);
	/* Only the marker the times are from has its origins as uints: a reader takes
	 * the origin from those; another start marker's stay strings. */
	struct te e = {.type = RTR__PF_TYPE_INSTANT,
		       .name = &ev->name,
		       .cat = &ev->cat,
		       .args = &ev->args,
		       .start_marker = start && w->origin_marker};

	if (marker ? th->tid == th->pid
		   : trace_value_is(&ev->s, "p") || trace_value_is(&ev->s, "g"))
		e.track = th->process->uuid;
	put_event(w, th, t, &e);
	w->origin_marker = false;
}

/* An event of a phase the format has no place for: counted, its phase named. */
static void no_place(struct pf_writer *w, const struct trace_event *ev)
{
	char *ph = w->counts.phases;
	size_t n = strlen(ph);
	char c = ev->phase != '\0' ? ev->phase : '?';

	w->counts.no_place++;
	if (strchr(ph, c) == NULL && n + 3 < sizeof(w->counts.phases)) {
		if (n > 0)
			ph[n++] = ' ';
		ph[n++] = c;
		ph[n] = '\0';
	}
}

int pfw_event(struct pf_writer *w, const struct trace_event *ev)
{
	struct te e = {.name = &ev->name, .cat = &ev->cat, .args = &ev->args};
	struct pfw_thread *th;
	int64_t pid, tid, abs;
	uint64_t t;
	bool placed = true;

	if (ev->phase == 'M') {
		if (pfw_meta(w, ev) != 0)
			no_place(w, ev);
		else if (w->err == 0)
			w->counts.events++;
		return w->err;
	}
	if (ev->phase == '\0' || strchr("BEXiICstfbne", ev->phase) == NULL) {
		no_place(w, ev);
		return 0;
	}
	if (!w->started && ev->has_ts)
		pfw_start(w, ev);
	if (!ev->has_ts || __builtin_add_overflow(w->base, ev->ts_ns, &abs) || abs < 0) {
		w->counts.no_time++;
		return 0;
	}
	t = (uint64_t)abs;
	trace_event_thread(ev, &pid, &tid);
	th = pfw_thread(w, pid, tid);
	if (th == NULL) {
		w->counts.over_bound += w->err == 0;
		return w->err;
	}
	switch (ev->phase) {
	case 'B':
		e.type = RTR__PF_TYPE_SLICE_BEGIN;
		put_event(w, th, t, &e);
		break;
	case 'E':
		e = (struct te){.type = RTR__PF_TYPE_SLICE_END, .args = &ev->args};
		put_event(w, th, t, &e);
		break;
	case 'X': {
		/* its END right after its BEGIN: a reader makes them one X again */
		int64_t dur = ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0;

		e.type = RTR__PF_TYPE_SLICE_BEGIN;
		put_event(w, th, t, &e);
		e = (struct te){.type = RTR__PF_TYPE_SLICE_END};
		put_event(w, th, (uint64_t)dur > UINT64_MAX - t ? t : t + (uint64_t)dur, &e);
		break;
	}
	case 'i':
	case 'I':
		instant(w, th, ev, t);
		break;
	case 'C':
		placed = counters(w, th, ev, t);
		break;
	case 's':
	case 't':
	case 'f':
		if (ev->id.type == TRACE_ABSENT) {
			placed = false;
			break;
		}
		e.type = RTR__PF_TYPE_INSTANT;
		e.flow = ev->phase == 'f' ? 2 : 1;
		e.flow_id = flow_id(&ev->id);
		put_event(w, th, t, &e);
		break;
	default:
		if (!async(w, th, ev, t) && w->err == 0) {
			w->counts.over_bound++;
			return 0;
		}
		break;
	}
	if (!placed && w->err == 0)
		no_place(w, ev);
	else if (w->err == 0)
		w->counts.events++;
	return w->err;
}
