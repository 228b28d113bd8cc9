/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace merge -o job.pftrace` and `ringtrace convert --to pftrace`: the merged job
 * in Perfetto's protobuf format.
 *
 * The same inputs are merged into JSON and into a .pftrace; the .pftrace is read back
 * with `convert --to json`, and both JSON files are read with tests/support/trace_read.c
 * (not the tools' reader) and compared event by event, every value: names,
 * categories, ph, ts, dur, pid, tid, ids, scope, args; per thread (and per counter,
 * async span and process track) in order; M events as a set. The only differences
 * allowed are those docs/commands/ringtrace-convert.md lists ("To Perfetto"): they
 * are applied to the merged JSON before the comparison (expect()). The .pftrace
 * passes `check`, the tests' own decoder (tests/support/pf_read.c) reads every packet
 * of it, and the other commands read it (stats, window, split, merge again).
 *
 * Inputs: hand-made MPI-like ranks (clock sync measurements, message flows between
 * ranks, private flows and async spans, counters of one and several series,
 * instants of every scope, args of every type, a rank cut short), and traces the
 * library records in both formats.
 */
#include <ringtrace.h>

#include "pf_read.h"
#include "tool_test.h"
#include "trace_read.h"

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ inputs */

#define ORIGIN INT64_C(5000000000)

static void sync_line(struct tool_text *t, int pid, int rank, int64_t at, int64_t offset)
{
	tool_text_printf(t,
			 "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"ringtrace\",\"name\":\"ringtrace: "
			 "clock sync\",\"ts\":1,\"pid\":%d,\"tid\":%d,\"args\":{"
			 "\"reference_rank\":0,\"rank\":%d,\"at_ns\":%lld,\"offset_ns\":%lld,"
			 "\"error_ns\":20,\"rtt_ns\":60,\"rounds\":50}},\n",
			 pid, pid, rank, (long long)at, (long long)offset);
}

/*
 * Rank r: pid 100 (r + 1), its main thread and two more; its clock r * 1000 ns ahead
 * of rank 0's, measured. It sends message 0x1111 + r to rank r + 1 and receives
 * 0x1111 + r - 1. A cut rank ends inside a line, with a slice open.
 */
static void write_rank(const char *path, int r, int ranks, bool cut)
{
	int p = 100 * (r + 1), w = p + 1, x = p + 2;
	int64_t origin = ORIGIN + r * 1234567;
	struct tool_text t = {0};

	tool_text_printf(
		&t,
		"[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
		"\"pid\":%d,\"tid\":%d,\"args\":{\"origin_monotonic_ns\":\"%lld\","
		"\"origin_realtime_ns\":\"%lld\",\"host\":\"node1\",\"pid\":%d,\"rank\":%d,"
		"\"world_size\":%d,\"version\":\"0.1.0\"}},\n",
		p, p, (long long)origin, (long long)(origin + 1700000000000000000), p, r, ranks);
	tool_text_printf(&t,
			 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"name\":\"solver\"}},\n"
			 "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"labels\":\"job 7\"}},\n"
			 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"name\":\"worker \\u00e9\"}},\n"
			 "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"sort_index\":-2}},\n"
			 "{\"ph\":\"M\",\"name\":\"process_uptime_seconds\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"uptime\":5}},\n",
			 p, p, p, p, p, w, p, w, p, p);
	sync_line(&t, p, r, origin + 1000000, -r * 1000);
	tool_text_printf(
		&t,
		"{\"ph\":\"B\",\"cat\":\"solver\",\"name\":\"step\",\"ts\":10,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"i\":-5,\"u\":18446744073709551615,\"d\":0.25,"
		"\"big\":1e300,\"s\":\"q\\\"b\\\\t\\t\\u0001 \\u00e9 \\ud83d\\ude00\",\"nul\":"
		"\"a\\u0000b\",\"t\":true,\"f\":false,\"n\":null,\"o\":{\"k\":[1,-2,{\"z\":\"y\"},"
		"[0.5]]},\"long\":\"%0200d\"}},\n"
		"{\"ph\":\"X\",\"cat\":\"solver\",\"name\":\"kernel\",\"ts\":11,\"dur\":2.5,"
		"\"pid\":%d,\"tid\":%d,\"args\":{\"k\":1}},\n"
		"{\"ph\":\"C\",\"cat\":\"q\",\"name\":\"queue\",\"ts\":12,\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"value\":3}},\n"
		"{\"ph\":\"C\",\"name\":\"mem\",\"ts\":12.5,\"pid\":%d,\"tid\":%d,\"args\":{"
		"\"heap\":1024,\"stack\":2.5,\"note\":\"x\"}},\n"
		"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"tick\",\"ts\":13,\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"i\",\"cat\":\"c\",\"name\":\"tock\",\"ts\":13.5,\"pid\":%d,\"tid\":%d},"
		"\n",
		p, w, 0, p, w, p, w, p, w, p, w, p, w);
	if (r + 1 < ranks)
		tool_text_printf(
			&t,
			"{\"ph\":\"s\",\"cat\":\"mpi\",\"name\":\"message\",\"id\":\"0x%x\","
			"\"ts\":14,\"pid\":%d,\"tid\":%d},\n",
			0x1111 + r, p, w);
	if (r > 0)
		tool_text_printf(&t,
				 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"mpi\",\"name\":\"message\","
				 "\"id\":\"0x%x\",\"ts\":%d,\"pid\":%d,\"tid\":%d},\n",
				 0x1111 + r - 1, 16 + r, p, w);
	tool_text_printf(
		&t,
		"{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"handoff\",\"id\":7,\"ts\":14.5,"
		"\"pid\":%d,\"tid\":%d,\"args\":{\"lost\":1}},\n"
		"{\"ph\":\"b\",\"cat\":\"copy\",\"name\":\"h2d\",\"id\":\"0x1\",\"ts\":15,"
		"\"pid\":%d,\"tid\":%d,\"args\":{\"bytes\":4096}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"x-work\",\"ts\":15.25,\"pid\":%d,"
		"\"tid\":%d},\n"
		"{\"ph\":\"n\",\"cat\":\"copy\",\"name\":\"mid\",\"id\":\"0x1\",\"ts\":15.5,"
		"\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"handoff\",\"id\":7,"
		"\"ts\":16,\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"e\",\"cat\":\"copy\",\"name\":\"h2d\",\"id\":\"0x1\",\"ts\":17,"
		"\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"i\",\"s\":\"p\",\"name\":\"proc-note\",\"ts\":18,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"s\":\"x\"}},\n"
		"{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"c\",\"name\":\"glob\",\"ts\":18.5,"
		"\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"P\",\"name\":\"sample\",\"ts\":19,\"pid\":%d,\"tid\":%d},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"x-work\",\"ts\":19.5,\"pid\":%d,"
		"\"tid\":%d},\n"
		"{\"ph\":\"E\",\"cat\":\"solver\",\"name\":\"step\",\"ts\":20,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"added\":true}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"adjacent\",\"ts\":21,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"one\":1}},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"adjacent\",\"ts\":22.001,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"two\":2}},\n"
		"{\"ph\":\"X\",\"name\":\"empties\",\"ts\":23,\"dur\":1,\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"e\":{},\"a\":[]}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"outer-x\",\"ts\":24,\"dur\":10,\"pid\":%d,"
		"\"tid\":%d},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"open\",\"ts\":40,\"pid\":%d,\"tid\":%d},\n",
		p, w, p, w, p, x, p, x, p, x, p, x, p, x, p, p, p, x, p, x, p, w, p, x, p, x, p, p,
		p, x, p, p);
	if (cut) {
		tool_text_printf(&t, "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"lost\",\"ts\":4");
	} else {
		tool_text_printf(
			&t,
			"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"open\",\"ts\":41,\"pid\":%d,"
			"\"tid\":%d},\n"
			"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":50,"
			"\"pid\":%d,\"tid\":%d,\"args\":{\"final\":true,\"events\":20,"
			"\"dropped\":%d,\"threads\":3}}\n]\n",
			p, p, p, p, r);
	}
	tool_write(path, t.p, t.len);
	free(t.p);
}

/* ------------------------------------------------------------------ runs */

static void run_ok(const char *const *args)
{
	struct tool_run r;

	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("%s: exit %d\n%s", args[0], r.status, r.err);
	tool_run_free(&r);
}

/* ------------------------------------------------------------------ comparison */

/* One event as compared: the group it is ordered in, and every value that must be
 * equal, as text. */
struct canon {
	char *group, *text;
	size_t index;
};

struct canons {
	struct canon *a;
	size_t n, cap;
};

/* The ts= of a canonical text (head()), or 0. */
static uint64_t ts_of(const char *text)
{
	const char *t = strstr(text, "|ts=");

	return t != NULL ? strtoull(t + 4, NULL, 10) : 0;
}

static void add(struct canons *c, const char *group, const char *text)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->a = realloc(c->a, c->cap * sizeof(*c->a));
		assert_non_null(c->a);
	}
	c->a[c->n] = (struct canon){strdup(group), strdup(text), c->n};
	c->n++;
}

static void canons_free(struct canons *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->a[i].group);
		free(c->a[i].text);
	}
	free(c->a);
	*c = (struct canons){0};
}

/* By group, in order within one; M events (a set) by their text. */
static int by_group(const void *x, const void *y)
{
	const struct canon *a = x, *b = y;
	int d = strcmp(a->group, b->group);

	if (d != 0)
		return d;
	if (strcmp(a->group, "M") == 0)
		return strcmp(a->text, b->text);
	/* by time, then text: a merged JSON writes a slice as one X where it ends, a
	 * .pftrace read back as B and E where it begins, and both sides are folded into
	 * one X a slice (fold_slice()) */
	uint64_t ta = ts_of(a->text), tb = ts_of(b->text);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strcmp(a->text, b->text);
}

/* A string's bytes as text: printable ASCII as it is, the rest as \xNN. */
static void put_bytes(struct tool_text *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			tool_text_printf(t, "%c", c);
		else
			tool_text_printf(t, "\\x%02x", c);
	}
}

/* One top-level arg: its key and value ({} and [] as null: the format's). */
static void put_arg(struct tool_text *t, const struct tt_arg *a)
{
	tool_text_printf(t, "%s=", a->key);
	switch (a->type) {
	case TT_NULL:
		tool_text_printf(t, "null");
		break;
	case TT_BOOL:
		tool_text_printf(t, a->b ? "true" : "false");
		break;
	case TT_INT:
		tool_text_printf(t, "%s", a->raw);
		break;
	case TT_DOUBLE:
		tool_text_printf(t, "%.17g", a->d);
		break;
	case TT_STRING:
		tool_text_printf(t, "\"");
		put_bytes(t, a->s, a->s_len);
		tool_text_printf(t, "\"");
		break;
	case TT_OTHER:
		tool_text_printf(t, "%s",
				 strcmp(a->raw, "{}") == 0 || strcmp(a->raw, "[]") == 0 ? "null"
											: a->raw);
		break;
	}
	tool_text_printf(t, ";");
}

static void put_args(struct tool_text *t, const struct tt_event *e)
{
	for (size_t i = 0; i < e->nargs; i++)
		put_arg(t, &e->args[i]);
}

static bool is_marker(const struct tt_event *e)
{
	return e->name != NULL && strncmp(e->name, "ringtrace: ", 11) == 0 &&
	       (strcmp(e->name, "ringtrace: start") == 0 || strcmp(e->name, "ringtrace: end") == 0);
}

/* An id's value: an integer, or a hex string. */
static uint64_t id_value(const struct tt_event *e)
{
	assert_non_null(e->id);
	return e->id_type == TT_STRING ? strtoull(e->id, NULL, 16) : strtoull(e->id, NULL, 10);
}

/* The head of an event's text: ph, scope, bp, cat, name, ts, dur, pid. */
static void head(struct tool_text *t, const char *ph, const char *s, const char *bp,
		 const char *cat, const char *name, const struct tt_event *e, int64_t dur)
{
	tool_text_printf(t, "%s|s=%s|bp=%s|cat=%s|name=", ph, s ? s : "-", bp ? bp : "-",
			 cat ? cat : "-");
	if (name != NULL)
		put_bytes(t, name, strlen(name));
	else
		tool_text_printf(t, "-");
	tool_text_printf(t, "|ts=%" PRIu64 "|dur=%" PRId64 "|pid=%" PRId64 "|", e->ts_ns, dur,
			 e->pid);
}

/* Async spans by the order their (pid, category, id) first appear: the ids of one
 * side, numbered. A read-back id is its track's uuid, the id itself unless another
 * track had it (or it is 0): the numbering shows each span kept its own. */
struct ordinals {
	char *key[4096];
	size_t n;
};

static size_t ordinal(struct ordinals *o, int64_t pid, const char *cat, uint64_t id)
{
	char key[512];
	size_t i;

	snprintf(key, sizeof(key), "%" PRId64 "|%s|%" PRIx64, pid, cat, id);
	for (i = 0; i < o->n && strcmp(o->key[i], key) != 0; i++)
		;
	if (i == o->n) {
		assert_true(o->n < 4096);
		o->key[o->n++] = strdup(key);
	}
	return i;
}

static void ordinals_free(struct ordinals *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->key[i]);
	o->n = 0;
}

/* A thread's state while the expected events are made: the names of its open B
 * slices, and its last event (a B that its E may fold into an X). */
struct thread {
	int64_t pid, tid;
	const struct tt_event *stack[64];
	size_t depth;
	const struct tt_event *held; /* a B not yet followed by an event of its thread */
};

static struct thread *thread_of(struct thread *th, size_t *n, const struct tt_event *e)
{
	for (size_t i = 0; i < *n; i++)
		if (th[i].pid == e->pid && th[i].tid == e->tid)
			return &th[i];
	assert_true(*n < 64);
	th[*n] = (struct thread){.pid = e->pid, .tid = e->tid};
	return &th[(*n)++];
}

/* A held B written as B (its thread's next event is not its E). */
static void flush_held(struct thread *th, struct canons *out)
{
	const struct tt_event *b = th->held;
	struct tool_text txt = {0}, grp = {0};

	if (b == NULL)
		return;
	th->held = NULL;
	head(&txt, "B", NULL, NULL, b->cat, b->name, b, -1);
	put_args(&txt, b);
	tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, b->pid, b->tid);
	add(out, grp.p, txt.p);
	free(txt.p);
	free(grp.p);
}

/* An E of a thread whose stack holds its B: the slice as one X, from the B's time to
 * the E's, the B's arguments then the E's. False when no B is open. */
static bool fold_slice(struct thread *me, const struct tt_event *e, struct canons *out)
{
	if (me->depth == 0)
		return false;
	const struct tt_event *b = me->stack[--me->depth];
	struct tool_text txt = {0}, grp = {0};

	if (me->held == b)
		me->held = NULL;
	head(&txt, "X", NULL, NULL, b->cat, b->name, b, (int64_t)(e->ts_ns - b->ts_ns));
	put_args(&txt, b);
	put_args(&txt, e);
	tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, b->pid, b->tid);
	add(out, grp.p, txt.p);
	free(txt.p);
	free(grp.p);
	return true;
}

/* The Bs a thread left open, as B. */
static void flush_open(struct thread *me, struct canons *out)
{
	while (me->depth > 0) {
		me->held = me->stack[--me->depth];
		flush_held(me, out);
	}
}

/*
 * The events of the read-back JSON, as compared. Groups: a thread's events
 * (T:pid:tid), a counter's (C:pid:name), an async span's (A:pid:id), a process's
 * instants (P:pid), the markers (K); M events in a set of their own (M).
 */
static void actual(const struct tt_trace *t, struct canons *out)
{
	struct ordinals *asyncs = calloc(1, sizeof(*asyncs));
	struct thread th[64];
	size_t nth = 0;

	assert_non_null(asyncs);
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		struct tool_text txt = {0}, grp = {0};
		char ph = e->ph[0];

		if (ph == 'B' && !is_marker(e)) {
			struct thread *me = thread_of(th, &nth, e);
			assert_true(me->depth < 64);
			me->stack[me->depth++] = e;
			continue;
		}
		if (ph == 'E' && fold_slice(thread_of(th, &nth, e), e, out))
			continue;

		if (ph == 'M') {
			tool_text_printf(&txt, "M|%s|%" PRId64 "|%" PRId64 "|", e->name, e->pid,
					 e->tid);
			put_args(&txt, e);
			add(out, "M", txt.p);
			free(txt.p);
			continue;
		}
		head(&txt, e->ph, e->scope, e->bp, e->cat, e->name, e,
		     e->has_dur ? (int64_t)e->dur_ns : -1);
		if (is_marker(e)) {
			tool_text_printf(&grp, "K");
			tool_text_printf(&txt, "tid=%" PRId64 "|", e->tid);
		} else if (ph == 'C') {
			tool_text_printf(&grp, "C:%" PRId64 ":%s", e->pid, e->name);
		} else if (ph == 'b' || ph == 'n' || ph == 'e') {
			size_t k = ordinal(asyncs, e->pid, e->cat, id_value(e));

			assert_int_equal(e->id_type, TT_STRING);
			tool_text_printf(&grp, "A:%" PRId64 ":%zu", e->pid, k);
			tool_text_printf(&txt, "id=#%zu|", k);
		} else if (ph == 'i' && e->scope != NULL && strcmp(e->scope, "p") == 0) {
			/* its tid: the process's, or where a reader places an event by
			 * its sequence, the thread's: not compared, as for C, b, n, e */
			tool_text_printf(&grp, "P:%" PRId64, e->pid);
		} else {
			tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, e->pid, e->tid);
			if (e->id != NULL)
				tool_text_printf(&txt, "id=%" PRIu64 "|", id_value(e));
		}
		put_args(&txt, e);
		add(out, grp.p, txt.p);
		free(txt.p);
		free(grp.p);
	}
	for (size_t k = 0; k < nth; k++)
		flush_open(&th[k], out);
	ordinals_free(asyncs);
	free(asyncs);
}

/* The counters of a C: one per numeric series, named "name key" for several. */
static void expect_counter(const struct tt_event *e, struct canons *out)
{
	size_t series = 0;

	for (size_t k = 0; k < e->nargs; k++)
		series += e->args[k].type == TT_INT || e->args[k].type == TT_DOUBLE;
	for (size_t k = 0; k < e->nargs; k++) {
		const struct tt_arg *a = &e->args[k];
		struct tool_text txt = {0}, grp = {0}, name = {0};
		struct tt_arg v = *a;
		char value[] = "value";

		if (a->type != TT_INT && a->type != TT_DOUBLE)
			continue;
		tool_text_printf(&name, series > 1 ? "%s %s" : "%s", e->name, a->key);
		head(&txt, "C", NULL, NULL, e->cat, name.p, e, -1);
		v.key = value;
		put_arg(&txt, &v);
		tool_text_printf(&grp, "C:%" PRId64 ":%s", e->pid, name.p);
		add(out, grp.p, txt.p);
		free(txt.p);
		free(grp.p);
		free(name.p);
	}
}

/* The flows open, by id value: an id's first s or t reads back as s. */
struct flows {
	uint64_t id[256];
	size_t n;
};

static const char *flow_phase(struct flows *f, const struct tt_event *e)
{
	uint64_t id = id_value(e);
	size_t i;

	for (i = 0; i < f->n && f->id[i] != id; i++)
		;
	if (e->ph[0] == 'f') {
		if (i < f->n)
			f->id[i] = f->id[--f->n];
		return "f";
	}
	if (i < f->n)
		return "t";
	assert_true(f->n < 256);
	f->id[f->n++] = id;
	return "s";
}

/* One event of the merged JSON as it reads back (the documented differences). */
static void expect_one(const struct tt_event *e, struct thread *th, struct flows *fl,
		       struct ordinals *asyncs, struct canons *out)
{
	struct tool_text txt = {0}, grp = {0};
	char ph = e->ph[0];

	if (ph == 'C') {
		expect_counter(e, out);
		return;
	}
	if (is_marker(e)) {
		head(&txt, "i", "g", NULL, NULL, e->name, e, -1);
		tool_text_printf(&grp, "K");
		tool_text_printf(&txt, "tid=%" PRId64 "|", e->tid);
	} else if (ph == 'b' || ph == 'n' || ph == 'e') {
		/* at (pid, pid): numbered as the read-back ones are */
		const char *cat = e->cat ? e->cat : "async";
		size_t k = ordinal(asyncs, e->pid, cat, id_value(e));

		head(&txt, e->ph, NULL, NULL, cat, e->name, e, -1);
		tool_text_printf(&grp, "A:%" PRId64 ":%zu", e->pid, k);
		tool_text_printf(&txt, "id=#%zu|", k);
	} else if (ph == 'i' && e->scope != NULL && strcmp(e->scope, "t") != 0) {
		head(&txt, "i", "p", NULL, e->cat, e->name, e, -1);
		tool_text_printf(&grp, "P:%" PRId64, e->pid);
	} else if (ph == 's' || ph == 't' || ph == 'f') {
		head(&txt, flow_phase(fl, e), NULL, ph == 'f' ? "e" : NULL,
		     e->cat ? e->cat : "flow", e->name ? e->name : "flow", e, -1);
		tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, e->pid, e->tid);
		tool_text_printf(&txt, "id=%" PRIu64 "|", id_value(e));
		add(out, grp.p, txt.p); /* no args: a flow's stay in the file */
		free(txt.p);
		free(grp.p);
		return;
	} else if (ph == 'E') {
		const struct tt_event *b = th->depth > 0 ? th->stack[--th->depth] : NULL;

		head(&txt, "E", NULL, NULL, b ? b->cat : NULL, b ? b->name : NULL, e, -1);
		tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, e->pid, e->tid);
	} else {
		head(&txt, e->ph, ph == 'i' ? "t" : NULL, NULL, e->cat, e->name, e,
		     e->has_dur ? (int64_t)e->dur_ns : -1);
		tool_text_printf(&grp, "T:%" PRId64 ":%" PRId64, e->pid, e->tid);
	}
	put_args(&txt, e);
	add(out, grp.p, txt.p);
	free(txt.p);
	free(grp.p);
}

/* The merged JSON as it must read back from the .pftrace. */
static void expect(const struct tt_trace *t, struct canons *out)
{
	struct thread th[64];
	struct flows fl = {0};
	struct ordinals *asyncs = calloc(1, sizeof(*asyncs));
	size_t nth = 0;

	assert_non_null(asyncs);
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		struct thread *me;

		if (e->ph[0] == 'M') {
			static const char *const kept[] = {"process_name", "process_labels",
							   "process_sort_index", "thread_name",
							   "thread_sort_index"};
			struct tool_text txt = {0};
			bool process = strncmp(e->name, "process_", 8) == 0;

			for (size_t k = 0; k < 5; k++) {
				if (strcmp(e->name, kept[k]) != 0)
					continue;
				tool_text_printf(&txt, "M|%s|%" PRId64 "|%" PRId64 "|", e->name,
						 e->pid, process ? e->pid : e->tid);
				put_args(&txt, e);
				add(out, "M", txt.p);
				free(txt.p);
			}
			continue;
		}
		if (strchr("BEXiCstfbne", e->ph[0]) == NULL || !e->has_ts)
			continue; /* no place in the format, or no time: left out */
		me = thread_of(th, &nth, e);
		if (e->ph[0] == 'E' && fold_slice(me, e, out))
			continue; /* a B and its E: one X, the E's args after */
		if (e->ph[0] == 'B') {
			assert_true(me->depth < 64);
			me->stack[me->depth++] = e;
			continue;
		}
		expect_one(e, me, &fl, asyncs, out);
	}
	for (size_t k = 0; k < nth; k++)
		flush_open(&th[k], out);
	ordinals_free(asyncs);
	free(asyncs);
}

/* In group order; the M events each distinct one once, sorted. */
static void order(struct canons *c)
{
	size_t w = 0;

	qsort(c->a, c->n, sizeof(*c->a), by_group);
	for (size_t i = 0; i < c->n; i++) {
		if (w > 0 && strcmp(c->a[i].group, "M") == 0 &&
		    strcmp(c->a[w - 1].group, "M") == 0 &&
		    strcmp(c->a[w - 1].text, c->a[i].text) == 0) {
			free(c->a[i].group);
			free(c->a[i].text);
			continue;
		}
		c->a[w++] = c->a[i];
	}
	c->n = w;
}

/* The .pftrace at pf read back equals the JSON at json, but for the documented
 * differences. Returns the events compared. */
static size_t expect_same(const char *json, const char *pf)
{
	const char *back = tool_tmp("readback.json");
	const char *args[] = {"convert", "--to", "json", "-o", back, pf, NULL};
	struct canons want = {0}, got = {0};
	struct tt_trace a, b;
	size_t n;

	run_ok(args);
	tool_load_strict(json, &a);
	tool_load_strict(back, &b);
	expect(&a, &want);
	actual(&b, &got);
	order(&want);
	order(&got);
	for (size_t i = 0; i < want.n || i < got.n; i++) {
		const struct canon *w = i < want.n ? &want.a[i] : NULL;
		const struct canon *g = i < got.n ? &got.a[i] : NULL;

		if (w == NULL || g == NULL || strcmp(w->group, g->group) != 0 ||
		    strcmp(w->text, g->text) != 0)
			fail_msg("event %zu differs:\nwant [%s] %s\ngot  [%s] %s", i,
				 w ? w->group : "(none)", w ? w->text : "", g ? g->group : "(none)",
				 g ? g->text : "");
	}
	n = want.n;
	canons_free(&want);
	canons_free(&got);
	tt_free(&a);
	tt_free(&b);
	unlink(back);
	return n;
}

/* --------------------------------------------------------------------- tests */

/* The three ranks' files (rank 2 cut short), merged into JSON and into a .pftrace. */
struct job {
	const char *rank[3];
	const char *json, *pf;
};

static void merge_job(struct job *j)
{
	j->rank[0] = strdup(tool_tmp("pfm-rank0.json"));
	j->rank[1] = strdup(tool_tmp("pfm-rank1.json"));
	j->rank[2] = strdup(tool_tmp("pfm-rank2.json"));
	j->json = strdup(tool_tmp("pfm-job.json"));
	j->pf = strdup(tool_tmp("pfm-job.pftrace"));
	for (int r = 0; r < 3; r++)
		write_rank(j->rank[r], r, 3, r == 2);
	{
		const char *a[] = {"merge",    "-o",	   j->json, j->rank[0],
				   j->rank[1], j->rank[2], NULL};
		const char *b[] = {"merge", "-o", j->pf, j->rank[0], j->rank[1], j->rank[2], NULL};

		run_ok(a);
		run_ok(b);
	}
}

static void job_free(struct job *j)
{
	for (int r = 0; r < 3; r++) {
		unlink(j->rank[r]);
		free((char *)j->rank[r]);
	}
	unlink(j->json);
	unlink(j->pf);
	free((char *)j->json);
	free((char *)j->pf);
}

static void merged_ranks_read_back_as_the_merged_json(void **state)
{
	struct job j;
	struct tool_run r;
	size_t n;

	(void)state;
	merge_job(&j);
	n = expect_same(j.json, j.pf);
	print_message("%zu events and M events compared\n", n);
	assert_true(n > 80);
	tool_expect_no_findings(j.pf);
	/* its packets in compressed batches, as the library writes them */
	{
		const char *a[] = {"check", j.pf, NULL};

		tool_runv(&r, NULL, NULL, a);
		assert_int_equal(r.status, 0);
		if (!tool_has(r.out, " compressed batch"))
			fail_msg("%s", r.out);
		tool_run_free(&r);
	}
	/* what merge says of it: the left-out events named */
	{
		const char *a[] = {"merge", "-o", j.pf, j.rank[0], j.rank[1], j.rank[2], NULL};

		tool_runv(&r, NULL, NULL, a);
		assert_int_equal(r.status, 0);
		if (!tool_has(r.err, "is Perfetto's protobuf trace"))
			fail_msg("%s", r.err);
		if (!tool_has(r.err,
			      "6 events of phases the Perfetto format has no place for (M P)"))
			fail_msg("%s", r.err);
		tool_run_free(&r);
	}
	/* --to pftrace: the same bytes whatever the name */
	{
		const char *bin = tool_tmp("pfm-job.bin");
		const char *a[] = {"merge",   "--to",	 "pftrace", "-o", bin,
				   j.rank[0], j.rank[1], j.rank[2], NULL};
		size_t la, lb;
		char *x, *y;

		run_ok(a);
		x = tu_read_file(j.pf, &la);
		y = tu_read_file(bin, &lb);
		assert_true(la == lb && memcmp(x, y, la) == 0);
		free(x);
		free(y);
		unlink(bin);
	}
	job_free(&j);
}

/* The tests' own decoder: every packet whole, every iid and track resolved on its
 * sequence; the origin, the processes, the threads, the messages and the counters
 * where they belong. */
static void the_oracle_decodes_the_merged_pftrace(void **state)
{
	struct job j;
	struct pf_trace t;
	size_t starts = 0, sends = 0, receives = 0, counters = 0;
	uint32_t seqs = 0;

	(void)state;
	merge_job(&j);
	if (pf_read(j.pf, &t, 0) != 0)
		fail_msg("pf_read: %s", t.error);
	assert_int_equal(t.whole, t.bytes);
	for (size_t i = 0; i < t.nevents; i++) {
		const struct pf_event *e = &t.events[i];
		const struct pf_track *tr = pf_track(&t, e->track);

		assert_true(e->ts >= (uint64_t)ORIGIN); /* ts 0 is the origin */
		seqs = e->seq > seqs ? e->seq : seqs;
		if (strcmp(e->name, "ringtrace: start") == 0) {
			const struct pf_ann *a = pf_ann(e, "origin_monotonic_ns");

			starts++;
			assert_int_equal(e->ts, ORIGIN);
			assert_non_null(a);
			assert_int_equal(a->kind, 'u');
			assert_int_equal(a->u, ORIGIN);
			assert_non_null(tr);
			assert_true(tr->has_process && tr->pid == 100);
		}
		sends += e->flow == 0x1111 || e->flow == 0x1112;
		receives += e->end_flow == 0x1111 || e->end_flow == 0x1112;
		if (e->type == 4) {
			const struct pf_track *parent;

			assert_non_null(tr);
			assert_true(tr->is_counter);
			parent = pf_track(&t, tr->parent);
			assert_non_null(parent);
			assert_true(parent->has_process);
			counters += strcmp(tr->name, "queue") == 0 && e->counter == 3;
		}
		if (e->type == 1 && strcmp(e->name, "step") == 0) {
			assert_non_null(tr);
			assert_true(tr->has_thread && tr->tid == tr->pid + 1);
			assert_string_equal(tr->thread_name, "worker \xc3\xa9");
			assert_int_equal(pf_ann(e, "i")->i, -5);
			assert_int_equal(pf_ann(e, "u")->u, UINT64_MAX);
		}
	}
	assert_int_equal(starts, 1);
	assert_int_equal(sends, 2);
	assert_int_equal(receives, 2);
	assert_int_equal(counters, 3);
	assert_true(seqs >= 10); /* the writer's, and one per thread */
	{
		bool named = false;

		for (size_t i = 0; i < t.ntracks; i++)
			named |= t.tracks[i].has_process &&
				 strcmp(t.tracks[i].process_name,
					"rank 1 \xc2\xb7 node1 \xc2\xb7 solver") == 0;
		assert_true(named);
	}
	pf_free(&t);
	job_free(&j);
}

/* stats, window, split and merge read the merged .pftrace; merged again into a
 * .pftrace, it reads back as merged again into JSON. */
static void every_command_reads_the_merged_pftrace(void **state)
{
	const char *win, *prefix, *again_json, *again_pf;
	struct tool_run r;
	struct job j;
	char piece[4300];

	(void)state;
	merge_job(&j);
	win = tool_tmp("pfm-win.json");
	prefix = tool_tmp("pfm-piece");
	again_json = tool_tmp("pfm-again.json");
	again_pf = tool_tmp("pfm-again.pftrace");
	tool_run(&r, NULL, "stats", "--json", j.pf, NULL);
	if (r.status != 0)
		fail_msg("stats: %d\n%s", r.status, r.err);
	tool_run_free(&r);
	{
		const char *a[] = {"window", "--from", "10us", "--to", "20us",
				   "-o",     win,      j.pf,   NULL};

		run_ok(a);
	}
	tool_expect_no_findings(win);
	{
		const char *a[] = {"split", "--max-events", "40", "-o", prefix, j.pf, NULL};

		run_ok(a);
	}
	snprintf(piece, sizeof(piece), "%s-0001.json", prefix);
	tool_expect_no_findings(piece);
	for (int k = 1; k < 100; k++) {
		snprintf(piece, sizeof(piece), "%s-%04d.json", prefix, k);
		if (unlink(piece) != 0)
			break;
	}
	{
		const char *a[] = {"merge", "-o", again_json, j.pf, j.rank[0], NULL};
		const char *b[] = {"merge", "-o", again_pf, j.pf, j.rank[0], NULL};

		run_ok(a);
		run_ok(b);
	}
	assert_true(expect_same(again_json, again_pf) > 100);
	tool_expect_no_findings(again_pf);
	unlink(win);
	unlink(again_json);
	unlink(again_pf);
	job_free(&j);
}

/* ------------------------------------------------------------ recorded traces */

static void *recorder_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker %d", id);
	rtr_thread_name(name);
	rtr_thread_sort_index(id);
	for (int i = 0; i < 300; i++) {
		uint64_t t0 = rtr_now_ns(), flow = rtr_flow_id();
		struct rtr_arg series[] = {RTR_ARG_I64("used", i), RTR_ARG_F64("ratio", i / 4.0)};
		struct rtr_arg bytes[] = {RTR_ARG_I64("bytes", 4096)};

		rtr_begin_v("solver", "step", RTR_ARG_I64("i", i),
			    RTR_ARG_STR("note", "quote \" tab \t \xc3\xa9"));
		rtr_flow_start("flow", "handoff", flow);
		rtr_counter_i64("solver", "depth", i % 7);
		rtr_counter_args("mem", "pool", series, 2);
		rtr_async_begin("copy", "h2d", (uint64_t)(id * 1000 + i), bytes, 1);
		rtr_instant("solver", "tick");
		rtr_begin("solver", "inner");
		rtr_flow_end("flow", "handoff", flow);
		rtr_end("solver", "inner");
		rtr_async_end("copy", "h2d", (uint64_t)(id * 1000 + i));
		rtr_complete("kernel", "stencil", t0, rtr_now_ns() - t0);
		rtr_end("solver", "step");
	}
	return NULL;
}

/* A trace of two threads recorded into path (JSON or .pftrace by its name). */
static void record(const char *path)
{
	struct rtr_config cfg;
	pthread_t th[2];

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	rtr_process_label("recorded");
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, recorder_thread, (void *)(intptr_t)i),
				 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rtr_stop(), 0);
}

/* What the library writes, converted to a .pftrace and back, and two recordings (one
 * of each format) merged into both. */
static void recorded_traces_convert_and_merge(void **state)
{
	const char *json = tool_tmp("pfm-rec.json"), *pfin = tool_tmp("pfm-rec2.pftrace");
	const char *conv = tool_tmp("pfm-rec.pftrace"), *mj = tool_tmp("pfm-rec-merged.json");
	const char *mp = tool_tmp("pfm-rec-merged.pftrace");
	struct tool_run r;
	char *dup_json = strdup(json), *dup_pfin = strdup(pfin);

	(void)state;
	record(dup_json);
	record(dup_pfin);
	/* the default name: beside it, .pftrace for .json */
	tool_run(&r, NULL, "convert", "--to", "pftrace", dup_json, NULL);
	if (r.status != 0)
		fail_msg("convert: %d\n%s", r.status, r.err);
	assert_false(tool_has(r.err, "left out"));
	tool_run_free(&r);
	assert_int_equal(access(conv, R_OK), 0);
	tool_expect_no_findings(conv);
	assert_true(expect_same(dup_json, conv) > 4000);
	{
		const char *a[] = {"merge", "-o", mj, dup_json, dup_pfin, NULL};
		const char *b[] = {"merge", "-o", mp, dup_json, dup_pfin, NULL};

		run_ok(a);
		run_ok(b);
	}
	tool_expect_no_findings(mp);
	assert_true(expect_same(mj, mp) > 8000);
	{
		/* the merged .pftrace is a fraction of the merged JSON */
		size_t lj, lp;
		char *x = tu_read_file(mj, &lj), *y = tu_read_file(mp, &lp);

		print_message("merged: %zu bytes of JSON, %zu of .pftrace\n", lj, lp);
		assert_true(lp * 3 < lj);
		free(x);
		free(y);
	}
	unlink(dup_json);
	unlink(dup_pfin);
	unlink(conv);
	unlink(mj);
	unlink(mp);
	free(dup_json);
	free(dup_pfin);
}

/*
 * A real MPI job: examples/mpi_halo under mpirun -np 4 (its ranks' clock sync
 * measurements, thousands of messages between them), merged into JSON and into a
 * .pftrace: the one reads back as the other, and is a fraction of its size.
 */
static void an_mpi_job_merges_into_perfetto(void **state)
{
#if defined(RTR_MPIEXEC) && defined(RTR_EXAMPLE_MPI_HALO)
	char dir[] = "/tmp/rtr-pfm-XXXXXX", pattern[64], files[4][64], json[64], pf[64], cmd[512];
	size_t lj, lp;
	char *x, *y;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(pattern, sizeof(pattern), "RINGTRACE_FILE=%s/h-%%r.json", dir);
	snprintf(cmd, sizeof(cmd),
		 "%s --allow-run-as-root --oversubscribe -np 4 -x %s %s 200 >/dev/null 2>&1",
		 RTR_MPIEXEC, pattern, RTR_EXAMPLE_MPI_HALO);
	assert_int_equal(system(cmd), 0);
	for (int r = 0; r < 4; r++)
		snprintf(files[r], sizeof(files[r]), "%s/h-%d.json", dir, r);
	snprintf(json, sizeof(json), "%s/job.json", dir);
	snprintf(pf, sizeof(pf), "%s/job.pftrace", dir);
	{
		const char *a[] = {"merge",  "-o",     json,	 files[0],
				   files[1], files[2], files[3], NULL};
		const char *b[] = {"merge", "-o", pf, files[0], files[1], files[2], files[3], NULL};

		run_ok(a);
		run_ok(b);
	}
	tool_expect_no_findings(pf);
	print_message("%zu events compared\n", expect_same(json, pf));
	x = tu_read_file(json, &lj);
	y = tu_read_file(pf, &lp);
	print_message("merged MPI job: %zu bytes of JSON, %zu of .pftrace\n", lj, lp);
	assert_true(lp * 3 < lj);
	free(x);
	free(y);
	for (int r = 0; r < 4; r++)
		unlink(files[r]);
	unlink(json);
	unlink(pf);
	rmdir(dir);
#else
	(void)state;
	skip();
#endif
}

/* ------------------------------------------------------------ the edges */

static void usage_and_what_is_left_out(void **state)
{
	const char *in = tool_tmp("pfm-odd.json"), *out = tool_tmp("pfm-odd.pftrace");
	static const char odd[] =
		"[\n{\"ph\":\"X\",\"name\":\"first\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"O\",\"name\":\"obj\",\"ts\":1,\"pid\":1,\"tid\":1,\"id\":\"0x1\"},\n"
		"{\"ph\":\"X\",\"name\":\"untimed\",\"dur\":1,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"M\",\"name\":\"num_cpus\",\"pid\":1,\"tid\":1,\"args\":{\"n\":4}},\n"
		"{\"ph\":\"b\",\"cat\":\"io\",\"name\":\"read\",\"id\":\"0x2a\",\"ts\":1,\"pid\":1,"
		"\"tid\":1},\n"
		"{\"ph\":\"e\",\"cat\":\"io\",\"name\":\"read\",\"id\":\"0x2a\",\"ts\":1.5,\"pid\":"
		"1,"
		"\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"last\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1}\n]\n";
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "merge", "--to", "yaml", "-o", out, in, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "--to wants json or pftrace, not 'yaml'"));
	tool_run_free(&r);
	tool_write(in, odd, sizeof(odd) - 1);
	tool_run(&r, NULL, "convert", "--to", "pftrace", "-o", out, in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "2 events of phases the Perfetto format has no place for "
				    "(O M)"));
	assert_true(tool_has(r.err, "1 events without a time"));
	tool_run_free(&r);
	tool_expect_no_findings(out);
	/* without a start marker: times from the first event, which is at 0 */
	assert_true(expect_same(in, out) >= 4);
	/* an async id that no other track has: its span's id read back */
	{
		const char *back = tool_tmp("pfm-odd.back.json");
		char *text;

		tool_run(&r, NULL, "convert", "-o", back, out, NULL);
		assert_int_equal(r.status, 0);
		tool_run_free(&r);
		text = tu_read_file(back, NULL);
		assert_true(tool_has(text, "\"name\":\"read\",") &&
			    tool_has(text, "\"id\":\"0x2a\""));
		free(text);
		unlink(back);
	}
	unlink(in);
	unlink(out);
}

/* Per sequence, clock 64's snapshots: how many set it back in time (below the latest
 * value it had: a delta-encoded packet's time), and the clears. */
struct snapshots {
	uint64_t last[64]; /* clock 64's value */
	bool has[64];
	unsigned clears[64];
	unsigned backwards;
};

/* A protobuf field of p[*i .. n): its number, and a varint's value or a length's
 * bytes (*sub, *sublen). False at the end. */
static bool field(const unsigned char *p, size_t n, size_t *i, unsigned *num, uint64_t *v,
		  const unsigned char **sub, size_t *sublen)
{
	uint64_t key = 0;

	for (int shift = 0; *i < n; shift += 7) {
		key |= (uint64_t)(p[*i] & 0x7f) << shift;
		if (!(p[(*i)++] & 0x80))
			break;
	}
	if (*i >= n && key == 0)
		return false;
	*num = (unsigned)(key >> 3);
	*v = 0;
	switch (key & 7) {
	case 0:
	case 2:
		for (int shift = 0; *i < n; shift += 7) {
			*v |= (uint64_t)(p[*i] & 0x7f) << shift;
			if (!(p[(*i)++] & 0x80))
				break;
		}
		if ((key & 7) == 2) {
			*sub = p + *i;
			*sublen = (size_t)*v;
			*i += (size_t)*v;
		}
		return true;
	case 1:
		*i += 8;
		return true;
	default:
		*i += 4;
		return true;
	}
}

/* Walk the packets of a plain .pftrace (the test's own reading of the wire format). */
static void snapshots_of(const char *path, struct snapshots *s)
{
	size_t n, i = 0;
	unsigned char *p = (unsigned char *)tu_read_file(path, &n);
	const unsigned char *pk, *f, *c;
	size_t pkn, fn, cn;
	unsigned num;
	uint64_t v;

	while (field(p, n, &i, &num, &v, &pk, &pkn)) {
		uint64_t seq = 0, flags = 0, id = 0, ts = 0, delta = 0;
		const unsigned char *snap = NULL;
		size_t snapn = 0, j = 0, k, m;
		bool timed = false, absolute = false;

		while (field(pk, pkn, &j, &num, &v, &f, &fn)) {
			seq = num == 10 ? v : seq;
			flags = num == 13 ? v : flags;
			absolute |= num == 58; /* timestamp_clock_id: not clock 64 */
			if (num == 8) {
				timed = true;
				delta = v;
			}
			if (num == 6) {
				snap = f;
				snapn = fn;
			}
		}
		assert_true(seq < 64);
		s->clears[seq] += (flags & 1) != 0;
		if (timed && !absolute && seq > 1)
			s->last[seq] += delta;
		for (k = 0; snap != NULL && field(snap, snapn, &k, &num, &v, &c, &cn);) {
			if (num != 1)
				continue;
			for (m = 0, id = 0, ts = 0; field(c, cn, &m, &num, &v, &f, &fn);) {
				id = num == 1 ? v : id;
				ts = num == 2 ? v : ts;
			}
			if (id != 64)
				continue;
			s->backwards += s->has[seq] && ts < s->last[seq];
			s->last[seq] = ts;
			s->has[seq] = true;
		}
	}
	free(p);
}

/*
 * More distinct names than the intern table holds, and after each of them a complete
 * event that began before the thread's latest time: the table is emptied, every
 * sequence cleared again, its clock set again at its latest time (never earlier), and
 * every event reads back.
 */
static void interning_past_the_table_keeps_the_clock(void **state)
{
	const char *in = tool_tmp("pfm-names.json"), *out = tool_tmp("pfm-names.pftrace");
	struct tool_text t = {0};
	struct snapshots snaps = {0};
	const int n = 70000;

	(void)state;
	tool_text_printf(&t,
			 "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			 "\"pid\":1,\"tid\":1,\"args\":{\"origin_monotonic_ns\":\"1000000\"}},\n");
	for (int i = 0; i < n; i++) {
		int tid = 2 + i % 2;

		tool_text_printf(
			&t,
			"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"name %d\",\"ts\":%d,\"dur\":0.5,"
			"\"pid\":1,\"tid\":%d,\"args\":{\"key %d\":%d}},\n",
			i, 10 + i, tid, i % 1000, i);
		if (i >= 60000 || i % 20000 == 19999) /* ended now, begun before the latest */
			tool_text_printf(&t,
					 "{\"ph\":\"X\",\"name\":\"late\",\"ts\":%d,\"dur\":1,"
					 "\"pid\":1,\"tid\":%d},\n",
					 10 + i - 5, tid);
	}
	tool_text_printf(&t,
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%d,"
			 "\"pid\":1,\"tid\":1,\"args\":{\"final\":true}}\n]\n",
			 20 + n);
	tool_write(in, t.p, t.len);
	free(t.p);
	{
		const char *a[] = {"convert", "--to", "pftrace", "-o", out, in, NULL};
		/* the wire read here as it is: plain packets */
		assert_int_equal(setenv("RINGTRACE_PF_COMPRESS", "0", 1), 0);
		run_ok(a);
		assert_int_equal(unsetenv("RINGTRACE_PF_COMPRESS"), 0);
	}
	tool_expect_no_findings(out);
	snapshots_of(out, &snaps);
	assert_int_equal(snaps.backwards, 0);
	assert_true(snaps.clears[2] >= 2 && snaps.clears[3] >= 2); /* the table was emptied */
	assert_true(snaps.clears[4] >= 2);
	assert_true(expect_same(in, out) > (size_t)n);
	unlink(in);
	unlink(out);
}

/* protoc, where installed, reads the merged .pftrace as a Trace of Perfetto's schema
 * (the subset the tests keep), the counters' category in their descriptor. */
static void protoc_decodes_the_merged_pftrace(void **state)
{
	const char *txt = tool_tmp("pfm-protoc.txt");
	char cmd[16384];
	struct job j;
	char *text;

	(void)state;
	if (system("command -v protoc >/dev/null 2>&1") != 0)
		skip();
	assert_int_equal(setenv("RINGTRACE_PF_COMPRESS", "0", 1), 0); /* protoc reads plain */
	merge_job(&j);
	assert_int_equal(unsetenv("RINGTRACE_PF_COMPRESS"), 0);
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode=perfetto.protos.Trace -I %s %s/perfetto_subset.proto < %s > %s",
		 RTR_TEST_SUPPORT_DIR, RTR_TEST_SUPPORT_DIR, j.pf, txt);
	assert_int_equal(system(cmd), 0);
	text = tu_read_file(txt, NULL);
	assert_true(tool_has(text, "primary_trace_clock: BUILTIN_CLOCK_MONOTONIC"));
	assert_true(tool_has(text, "name: \"queue\"\n"));
	assert_true(tool_has(text, "counter {\n      categories: \"q\"\n")); /* its category */
	assert_true(tool_has(text, "process_name: \"rank 0 \\302\\267 node1 \\302\\267 solver\""));
	assert_true(tool_has(text, "terminating_flow_ids: 4369"));
	free(text);
	unlink(txt);
	job_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merged_ranks_read_back_as_the_merged_json),
		cmocka_unit_test(the_oracle_decodes_the_merged_pftrace),
		cmocka_unit_test(every_command_reads_the_merged_pftrace),
		cmocka_unit_test(recorded_traces_convert_and_merge),
		cmocka_unit_test(an_mpi_job_merges_into_perfetto),
		cmocka_unit_test(usage_and_what_is_left_out),
		cmocka_unit_test(interning_past_the_table_keeps_the_clock),
		cmocka_unit_test(protoc_decodes_the_merged_pftrace),
	};

	return cmocka_run_group_tests_name("tools_merge_pftrace", tests, NULL, NULL);
}
