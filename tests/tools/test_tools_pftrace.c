/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto protobuf trace (.pftrace) in the tools: the decoder (tools/source/pftrace.h),
 * `check` on one, `convert --to json`, and the other subcommands reading one.
 *
 * Inputs are written here, by a protobuf encoder of a few lines that shares nothing
 * with the decoder: a trace as ringtrace's writer lays it out (docs/perfetto.md:
 * interning, a delta-encoded sequence clock, an absolute-clock packet, descriptors of
 * every kind, slices, instants, counters, flows, an async span, args of every type,
 * the markers), and broken variants of it, one fault each.
 */
#include "pftrace.h"
#include "tool_test.h"
#include "trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------ encoder */

struct pbw {
	unsigned char *p;
	size_t len, cap;
};

static void put(struct pbw *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void varint(struct pbw *b, uint64_t v)
{
	unsigned char c;

	do {
		c = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			c |= 0x80;
		put(b, &c, 1);
	} while (v != 0);
}

static void key(struct pbw *b, uint32_t field, unsigned wt)
{
	varint(b, (uint64_t)field << 3 | wt);
}

static void u(struct pbw *b, uint32_t field, uint64_t v)
{
	key(b, field, 0);
	varint(b, v);
}

static void fixed64(struct pbw *b, uint32_t field, uint64_t v)
{
	unsigned char le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	key(b, field, 1);
	put(b, le, 8);
}

static void dbl(struct pbw *b, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	fixed64(b, field, v);
}

static void bytes(struct pbw *b, uint32_t field, const void *p, size_t n)
{
	key(b, field, 2);
	varint(b, n);
	put(b, p, n);
}

static void str(struct pbw *b, uint32_t field, const char *s)
{
	bytes(b, field, s, strlen(s));
}

/* m as field `field` of b; m is emptied. */
static void msg(struct pbw *b, uint32_t field, struct pbw *m)
{
	bytes(b, field, m->p, m->len);
	free(m->p);
	*m = (struct pbw){0};
}

/* An interned entry {iid, name}. */
static void entry(struct pbw *interned, uint32_t field, uint64_t iid, const char *name)
{
	struct pbw e = {0};

	u(&e, 1, iid);
	str(&e, 2, name);
	msg(interned, field, &e);
}

#define PID	   100u
#define TID	   101u
#define PROC_UUID  ((uint64_t)PID << 32)
#define THR_UUID   ((uint64_t)PID << 32 | TID)
#define CTR_UUID   ((uint64_t)PID << 32 | 0x80000001u)
#define ASYNC_UUID ((uint64_t)PID << 32 | 0x40000001u)
#define ORIGIN	   1000000u

/* Packet fields: TracePacket numbers. */
enum {
	P_TS = 8,
	P_CLOCK = 58,
	P_EVENT = 11,
	P_DESC = 60,
	P_SNAP = 6,
	P_SEQ = 10,
	P_INTERNED = 12,
	P_FLAGS = 13,
	P_DEFAULTS = 59,
	P_FIRST = 87
};

/* A packet of sequence seq with flags, as field 1 of Trace. */
static void packet(struct pbw *trace, struct pbw *p, uint32_t seq, unsigned flags)
{
	u(p, P_SEQ, seq);
	if (flags != 0)
		u(p, P_FLAGS, flags);
	msg(trace, 1, p);
}

/* A debug annotation named inline, with a value already in a. */
static void annotation(struct pbw *ev, const char *name, struct pbw *a)
{
	str(a, 10, name);
	msg(ev, 4, a);
}

static void ann_uint(struct pbw *ev, const char *name, uint64_t v)
{
	struct pbw a = {0};

	u(&a, 3, v);
	annotation(ev, name, &a);
}

/* The trace docs/perfetto.md describes, small; `fault` breaks it in one place. */
enum fault {
	F_NONE,
	F_UNRESOLVED,
	F_UNDECLARED,
	F_END_WITHOUT_BEGIN,
	F_NEEDS,
	F_CLOCK,
	F_CLOCK_BACK,
	F_END_COUNT,
	F_VARINT,
	F_LENGTH,
	F_WIRETYPE,
	F_NESTING
};

static struct pbw make_trace(enum fault fault)
{
	struct pbw t = {0}, p = {0}, m = {0}, n = {0}, a = {0}, a2 = {0}, in = {0};

	/* sequence 1: the clock snapshot, MONOTONIC primary */
	u(&n, 1, 3), u(&n, 2, ORIGIN), msg(&m, 1, &n);
	u(&n, 1, 6), u(&n, 2, ORIGIN + 5000000), msg(&m, 1, &n);
	u(&n, 1, 1), u(&n, 2, 1700000000000000000u), msg(&m, 1, &n);
	u(&m, 2, 3);
	msg(&p, P_SNAP, &m);
	u(&p, P_FIRST, 1);
	packet(&t, &p, 1, 1);
	/* the process */
	u(&m, 1, PROC_UUID);
	u(&n, 1, PID), str(&n, 6, "app"), str(&n, 8, "l1"), str(&n, 8, "l2");
	u(&n, 3, (uint64_t)(int64_t)-1);
	msg(&m, 3, &n);
	msg(&p, P_DESC, &m);
	packet(&t, &p, 1, 2);
	/* the start marker */
	u(&p, P_TS, ORIGIN), u(&p, P_CLOCK, 3);
	u(&m, 9, 3), str(&m, 23, "ringtrace: start"), u(&m, 11, PROC_UUID);
	ann_uint(&m, "origin_monotonic_ns", ORIGIN);
	ann_uint(&m, "origin_realtime_ns", 2000);
	str(&a, 6, "h"), annotation(&m, "host", &a);
	ann_uint(&m, "pid", PID);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 1, 2);
	/* the thread, a counter and an async track */
	u(&m, 1, THR_UUID), u(&m, 5, PROC_UUID);
	u(&n, 1, PID), u(&n, 2, TID), str(&n, 5, "main"), u(&n, 3, 2);
	msg(&m, 4, &n);
	msg(&p, P_DESC, &m);
	packet(&t, &p, 1, 2);
	u(&m, 1, CTR_UUID), u(&m, 5, PROC_UUID), str(&m, 2, "queue");
	u(&n, 3, 2), msg(&m, 8, &n);
	msg(&p, P_DESC, &m);
	packet(&t, &p, 1, 2);
	u(&m, 1, ASYNC_UUID), u(&m, 5, PROC_UUID), str(&m, 2, "h2d");
	msg(&p, P_DESC, &m);
	packet(&t, &p, 1, 2);

	/* sequence 2: the thread's, cleared, defaults, then its clock 64 */
	u(&m, 58, 64);
	u(&n, 11, THR_UUID), msg(&m, 11, &n);
	msg(&p, P_DEFAULTS, &m);
	u(&p, P_FIRST, 1);
	packet(&t, &p, 2, fault == F_NEEDS ? 2 : 1);
	u(&n, 1, 64), u(&n, 2, ORIGIN + 500), u(&n, 3, 1), msg(&m, 1, &n);
	u(&n, 1, 3), u(&n, 2, ORIGIN + 500), msg(&m, 1, &n);
	if (fault != F_CLOCK)
		msg(&p, P_SNAP, &m);
	else
		free(m.p), m = (struct pbw){0};
	packet(&t, &p, 2, 2);
	/* BEGIN outer: interned name, category, annotation name */
	entry(&in, 2, 1, "outer"), entry(&in, 1, 1, "run"), entry(&in, 3, 1, "n");
	entry(&in, 29, 1, "interned!");
	msg(&p, P_INTERNED, &in);
	u(&p, P_TS, 10);
	u(&m, 9, 1), u(&m, 10, fault == F_UNRESOLVED ? 9 : 1), u(&m, 3, 1);
	u(&a, 1, 1), u(&a, 4, (uint64_t)(int64_t)-5), msg(&m, 4, &a);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	/* BEGIN inner, inline names, args of every type */
	u(&p, P_TS, 5);
	u(&m, 9, 1), str(&m, 23, "inner"), str(&m, 22, "run");
	if (fault == F_UNDECLARED)
		u(&m, 11, 12345);
	u(&a, 2, 1), annotation(&m, "b", &a);
	u(&a, 3, 7), annotation(&m, "u", &a);
	dbl(&a, 5, 0.25), annotation(&m, "d", &a);
	str(&a, 6, "hi"), annotation(&m, "s", &a);
	u(&a, 17, 1), annotation(&m, "iv", &a);
	u(&a, 7, 0x1000), annotation(&m, "p", &a);
	annotation(&m, "none", &a);
	u(&a2, 3, 1), msg(&a, 12, &a2);
	u(&a2, 4, 2), msg(&a, 12, &a2);
	{
		struct pbw inner = {0};

		u(&inner, 3, 3), msg(&a2, 12, &inner);
		msg(&a, 12, &a2);
	}
	annotation(&m, "arr", &a);
	str(&a2, 6, "v"), str(&a2, 10, "k"), msg(&a, 11, &a2);
	u(&a2, 3, 2), str(&a2, 10, "n"), msg(&a, 11, &a2);
	annotation(&m, "obj", &a);
	if (fault == F_NESTING) {
		struct pbw deep = {0};

		u(&deep, 3, 1);
		for (int i = 0; i < 70; i++) {
			struct pbw up = {0};

			msg(&up, 12, &deep);
			deep = up;
		}
		annotation(&m, "deep", &deep);
	}
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	/* END inner, right after: an X, its arg merged */
	u(&p, P_TS, 10);
	u(&m, 9, 2);
	u(&a, 4, 1), annotation(&m, "r", &a);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	if (fault == F_END_WITHOUT_BEGIN) {
		u(&p, P_TS, 1);
		u(&m, 9, 2), u(&m, 11, CTR_UUID);
		msg(&p, P_EVENT, &m);
		packet(&t, &p, 2, 2);
	}
	/* an instant, a flow's start (packed ids), a late one on the absolute clock */
	u(&p, P_TS, 5);
	u(&m, 9, 3), str(&m, 23, "tick"), str(&m, 22, "app");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, 1);
	u(&m, 9, 3), str(&m, 23, "handoff"), str(&m, 22, "flow");
	{
		unsigned char ids[8] = {7};

		bytes(&m, 47, ids, 8);
	}
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, ORIGIN + 505), u(&p, P_CLOCK, 3);
	u(&m, 9, 3), str(&m, 23, "late");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	/* the flow's end (an unpacked id), then END outer */
	u(&p, P_TS, 2);
	u(&m, 9, 3), str(&m, 23, "handoff"), str(&m, 22, "flow"), fixed64(&m, 48, 7);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, 7);
	u(&m, 9, 2);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	/* counters, int and double */
	u(&p, P_TS, 5);
	u(&m, 9, 4), u(&m, 11, CTR_UUID), u(&m, 30, 3);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, 1);
	u(&m, 9, 4), u(&m, 11, CTR_UUID), dbl(&m, 44, 0.125);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	if (fault == F_CLOCK_BACK) { /* clock 64 set again, before the sequence's snapshot */
		u(&n, 1, 64), u(&n, 2, ORIGIN + 400), u(&n, 3, 1), msg(&m, 1, &n);
		u(&n, 1, 3), u(&n, 2, ORIGIN + 400), msg(&m, 1, &n);
		msg(&p, P_SNAP, &m);
		packet(&t, &p, 2, 2);
	}
	/* an async span with an instant */
	u(&p, P_TS, 4);
	u(&m, 9, 1), u(&m, 11, ASYNC_UUID), str(&m, 23, "h2d"), str(&m, 22, "copy");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, 1);
	u(&m, 9, 3), u(&m, 11, ASYNC_UUID), str(&m, 23, "mid"), str(&m, 22, "copy");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	u(&p, P_TS, 10);
	u(&m, 9, 2), u(&m, 11, ASYNC_UUID);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 2, 2);
	if (fault == F_VARINT || fault == F_LENGTH || fault == F_WIRETYPE) {
		static const unsigned char bad_varint[] = {0x40, 0xff, 0xff, 0xff, 0xff, 0xff,
							   0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
		static const unsigned char bad_length[] = {0x5a, 0x7f, 0x01};
		static const unsigned char bad_wire[] = {0x56, 0x00};

		if (fault == F_VARINT)
			put(&p, bad_varint, sizeof(bad_varint));
		else if (fault == F_LENGTH)
			put(&p, bad_length, sizeof(bad_length));
		else
			put(&p, bad_wire, sizeof(bad_wire));
		packet(&t, &p, 2, 2);
	}
	/* sequence 1: the end marker */
	u(&p, P_TS, ORIGIN + 600), u(&p, P_CLOCK, 3);
	u(&m, 9, 3), str(&m, 23, "ringtrace: end"), u(&m, 11, PROC_UUID);
	u(&a, 2, 1), annotation(&m, "final", &a);
	ann_uint(&m, "events", fault == F_END_COUNT ? 100 : 10);
	ann_uint(&m, "dropped", 0);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 1, 2);
	return t;
}

static const char *write_trace(const char *name, enum fault fault, size_t *len)
{
	struct pbw t = make_trace(fault);
	const char *path = tool_tmp(name);

	tool_write(path, t.p, t.len);
	if (len != NULL)
		*len = t.len;
	free(t.p);
	return path;
}

/* ------------------------------------------------------------ decoding */

/* Each packet as a line of text, every decoded value in it. */
struct seen {
	struct tool_text text;
	uint64_t issues;
	struct tool_text issue_text;
};

static void put_args(struct tool_text *t, const struct pf_arg *args, size_t *i, size_t n,
		     bool named)
{
	for (size_t k = 0; k < n; k++) {
		const struct pf_arg *a = &args[(*i)++];

		if (named)
			tool_text_printf(t, " %.*s=", (int)a->name.len,
					 a->name.s != NULL ? a->name.s : "");
		switch (a->kind) {
		case PF_ARG_NULL:
			tool_text_printf(t, "null");
			break;
		case PF_ARG_BOOL:
			tool_text_printf(t, "%s", a->b ? "true" : "false");
			break;
		case PF_ARG_UINT:
			tool_text_printf(t, "u%llu", (unsigned long long)a->u);
			break;
		case PF_ARG_INT:
			tool_text_printf(t, "i%lld", (long long)a->i);
			break;
		case PF_ARG_DOUBLE:
			tool_text_printf(t, "d%g", a->d);
			break;
		case PF_ARG_STRING:
			tool_text_printf(t, "'%.*s'", (int)a->str.len, a->str.s);
			break;
		case PF_ARG_POINTER:
			tool_text_printf(t, "p%llx", (unsigned long long)a->u);
			break;
		case PF_ARG_ARRAY:
			tool_text_printf(t, "[");
			put_args(t, args, i, a->count, false);
			tool_text_printf(t, " ]");
			break;
		case PF_ARG_DICT:
			tool_text_printf(t, "{");
			put_args(t, args, i, a->count, true);
			tool_text_printf(t, " }");
			break;
		}
		if (!named && k + 1 < n)
			tool_text_printf(t, ",");
	}
}

static int on_packet(void *ctx, const struct pf_packet *pk)
{
	struct tool_text *t = &((struct seen *)ctx)->text;
	const struct pf_event *ev = &pk->event;
	size_t i = 0;

	tool_text_printf(t, "%llu seq %u flags %u", (unsigned long long)pk->index, pk->sequence_id,
			 pk->sequence_flags);
	if (pk->has_time)
		tool_text_printf(t, " t %lld", (long long)pk->time_ns);
	switch (pk->kind) {
	case PF_PACKET_CLOCK_SNAPSHOT:
		tool_text_printf(t, " snapshot %zu clocks, primary %u", pk->nclocks,
				 pk->primary_clock);
		break;
	case PF_PACKET_TRACK_DESCRIPTOR:
		tool_text_printf(t,
				 " track %llx kind %d name %s pid %d tid %d pname %s tname %s "
				 "labels %s sort %d",
				 (unsigned long long)pk->track->uuid, pk->track->kind,
				 pk->track->name ? pk->track->name : "-", pk->track->pid,
				 pk->track->tid,
				 pk->track->process_name ? pk->track->process_name : "-",
				 pk->track->thread_name ? pk->track->thread_name : "-",
				 pk->track->labels ? pk->track->labels : "-",
				 pk->track->has_sort_index ? pk->track->sort_index : 99);
		break;
	case PF_PACKET_TRACK_EVENT:
		tool_text_printf(t, " event %d %.*s cat %.*s track %llx%s", ev->type,
				 (int)ev->name.len, ev->name.s ? ev->name.s : "",
				 (int)ev->categories.len, ev->categories.s ? ev->categories.s : "",
				 (unsigned long long)ev->track_uuid, ev->track ? "" : " (none)");
		if (ev->has_counter && ev->counter_is_double)
			tool_text_printf(t, " value %g", ev->counter_double);
		else if (ev->has_counter)
			tool_text_printf(t, " value %lld", (long long)ev->counter_int);
		for (size_t k = 0; k < ev->nflow_ids; k++)
			tool_text_printf(t, " flow %llu", (unsigned long long)ev->flow_ids[k]);
		for (size_t k = 0; k < ev->nterminating_flow_ids; k++)
			tool_text_printf(t, " endflow %llu",
					 (unsigned long long)ev->terminating_flow_ids[k]);
		if (ev->ntop > 0) {
			tool_text_printf(t, " args");
			put_args(t, ev->args, &i, ev->ntop, true);
			assert_int_equal(i, ev->nargs);
		}
		break;
	default:
		break;
	}
	tool_text_printf(t, "\n");
	return 0;
}

static void on_issue(void *ctx, const struct pf_issue *issue)
{
	struct seen *s = ctx;

	s->issues++;
	tool_text_printf(&s->issue_text, "%s@%llu: %s\n", pf_issue_name(issue->kind),
			 (unsigned long long)issue->packet, issue->message);
}

static const char expected_packets[] =
	"0 seq 1 flags 1 snapshot 3 clocks, primary 3\n"
	"1 seq 1 flags 2 track 6400000000 kind 1 name - pid 100 tid 0 pname app tname - labels "
	"l1,l2 sort -1\n"
	"2 seq 1 flags 2 t 1000000 event 3 ringtrace: start cat  track 6400000000 args "
	"origin_monotonic_ns=u1000000 origin_realtime_ns=u2000 host='h' pid=u100\n"
	"3 seq 1 flags 2 track 6400000065 kind 2 name - pid 100 tid 101 pname - tname main labels "
	"- sort 2\n"
	"4 seq 1 flags 2 track 6480000001 kind 3 name queue pid 0 tid 0 pname - tname - labels - "
	"sort 99\n"
	"5 seq 1 flags 2 track 6440000001 kind 0 name h2d pid 0 tid 0 pname - tname - labels - "
	"sort 99\n"
	"6 seq 2 flags 1\n"
	"7 seq 2 flags 2 snapshot 2 clocks, primary 3\n"
	"8 seq 2 flags 2 t 1000510 event 1 outer cat run track 6400000065 args n=i-5\n"
	"9 seq 2 flags 2 t 1000515 event 1 inner cat run track 6400000065 args b=true u=u7 d=d0.25 "
	"s='hi' iv='interned!' p=p1000 none=null arr=[u1,i2,[u3 ] ] obj={ k='v' n=u2 }\n"
	"10 seq 2 flags 2 t 1000525 event 2  cat  track 6400000065 args r=i1\n"
	"11 seq 2 flags 2 t 1000530 event 3 tick cat app track 6400000065\n"
	"12 seq 2 flags 2 t 1000531 event 3 handoff cat flow track 6400000065 flow 7\n"
	"13 seq 2 flags 2 t 1000505 event 3 late cat  track 6400000065\n"
	"14 seq 2 flags 2 t 1000533 event 3 handoff cat flow track 6400000065 endflow 7\n"
	"15 seq 2 flags 2 t 1000540 event 2  cat  track 6400000065\n"
	"16 seq 2 flags 2 t 1000545 event 4  cat  track 6480000001 value 3\n"
	"17 seq 2 flags 2 t 1000546 event 4  cat  track 6480000001 value 0.125\n"
	"18 seq 2 flags 2 t 1000550 event 1 h2d cat copy track 6440000001\n"
	"19 seq 2 flags 2 t 1000551 event 3 mid cat copy track 6440000001\n"
	"20 seq 2 flags 2 t 1000561 event 2  cat  track 6440000001\n"
	"21 seq 1 flags 2 t 1000600 event 3 ringtrace: end cat  track 6400000000 args final=true "
	"events=u10 dropped=u0\n";

static void decode(const char *path, struct seen *s, struct pf_status *st, int want_rc)
{
	struct pf_options o = {.on_packet = on_packet, .on_issue = on_issue, .ctx = s};

	memset(s, 0, sizeof(*s));
	tool_text_printf(&s->text, "%s", "");
	tool_text_printf(&s->issue_text, "%s", "");
	assert_int_equal(pf_read_path(path, &o, st), want_rc);
}

static void decodes_every_value(void **state)
{
	const char *path = write_trace("pf.pftrace", F_NONE, NULL);
	struct pf_status st;
	struct seen s;

	(void)state;
	decode(path, &s, &st, 0);
	if (strcmp(s.text.p, expected_packets) != 0)
		fail_msg("decoded:\n%s\nexpected:\n%s", s.text.p, expected_packets);
	assert_int_equal(s.issues, 0);
	assert_false(st.cut);
	assert_int_equal(st.packets, 22);
	assert_int_equal(st.track_events, 15);
	assert_true(pf_sniff_path(path) == 1);
	free(s.text.p);
	free(s.issue_text.p);
}

/* gzip is read through, and the sniffing sees through it; JSON is not taken for it,
 * even when it begins with a newline (0x0a too). */
static void gzip_and_sniffing(void **state)
{
	struct pbw t = make_trace(F_NONE);
	const char *gz = tool_tmp("pf.pftrace.gz"), *json = tool_tmp("pf-nl.json");
	unsigned char *z;
	size_t zlen;
	struct pf_status st;
	struct seen s;

	(void)state;
	z = tool_gzip(t.p, t.len, 64, &zlen, NULL, 0, NULL);
	tool_write(gz, z, zlen);
	decode(gz, &s, &st, 0);
	assert_string_equal(s.text.p, expected_packets);
	assert_true(st.gzip);
	assert_true(pf_sniff_path(gz) == 1);
	/* a gzip member cut short is a cut stream, not corrupt data */
	tool_write(gz, z, zlen * 2 / 3);
	free(s.text.p);
	free(s.issue_text.p);
	decode(gz, &s, &st, 0);
	assert_true(st.packets > 0 && st.packets < 22);
	assert_int_equal(st.error, PF_OK);
	tool_write(json, "\n[\n{\"ph\":\"i\",\"name\":\"x\",\"ts\":1,\"pid\":1,\"tid\":1}\n]\n",
		   49);
	assert_true(pf_sniff_path(json) == 0);
	assert_false(pf_sniff_bytes((const unsigned char *)"\n[\n{\"ph\"", 8));
	assert_false(pf_sniff_bytes((const unsigned char *)"\n    {", 6));
	free(z);
	free(t.p);
	free(s.text.p);
	free(s.issue_text.p);
}

/* A file cut anywhere in its last packet: every packet before, and a cut. */
static void cut_at_every_byte_of_the_last_packet(void **state)
{
	struct pbw t = make_trace(F_NONE);
	const char *path = tool_tmp("pf-cut.pftrace");
	size_t last = 0, at = 0;
	char offset[64];

	(void)state;
	/* where the last packet begins */
	while (at < t.len) {
		uint64_t len = 0;
		unsigned shift = 0;
		size_t p = at + 1;

		last = at;
		while (t.p[p] & 0x80)
			len |= (uint64_t)(t.p[p++] & 0x7f) << shift, shift += 7;
		len |= (uint64_t)t.p[p++] << shift;
		at = p + len;
	}
	for (size_t cut = last + 1; cut < t.len; cut++) {
		struct pf_status st;
		struct seen s;
		struct tool_run r;

		tool_write(path, t.p, cut);
		decode(path, &s, &st, 0);
		assert_true(st.cut);
		assert_int_equal(st.cut_offset, last);
		assert_int_equal(st.cut_bytes, cut - last);
		assert_int_equal(st.packets, 21);
		free(s.text.p);
		free(s.issue_text.p);
		tool_run(&r, NULL, "check", path, NULL);
		assert_int_equal(r.status, 1);
		snprintf(offset, sizeof(offset), ":@%zu: packet-cut: packet 21: ", last);
		if (!tool_has(r.out, offset) ||
		    !tool_has(r.out, "cut short; 1 finding: packet-cut 1"))
			fail_msg("cut at %zu:\n%s", cut, r.out);
		tool_run_free(&r);
	}
	free(t.p);
}

/* ------------------------------------------------------------ check */

static void check_expect(const char *name, enum fault fault, int status, const char *const *want)
{
	const char *path = write_trace(name, fault, NULL);
	struct tool_run r;

	tool_run(&r, NULL, "check", "--notes", path, NULL);
	if (r.status != status)
		fail_msg("check %s: exit %d, not %d\n%s%s", name, r.status, status, r.out, r.err);
	for (; *want != NULL; want++)
		if (!tool_has(r.out, *want))
			fail_msg("check %s: no \"%s\" in\n%s", name, *want, r.out);
	tool_run_free(&r);
}

static void check_good_trace(void **state)
{
	(void)state;
	check_expect("pf-good.pftrace", F_NONE, 0,
		     (const char *const[]){"22 packets (15 track events) on 2 sequences; protobuf, "
					   "complete; no findings",
					   NULL});
}

static void check_broken_variants(void **state)
{
	(void)state;
	check_expect("pf-unresolved.pftrace", F_UNRESOLVED, 1,
		     (const char *const[]){"unresolved-iid: packet 8: event name iid 9 is not "
					   "interned on sequence 2",
					   "finding: unresolved-iid 1", NULL});
	check_expect("pf-undeclared.pftrace", F_UNDECLARED, 1,
		     (const char *const[]){"undeclared-track: packet 9: track_uuid 12345 (0x3039) "
					   "used before its TrackDescriptor",
					   NULL});
	check_expect("pf-endless.pftrace", F_END_WITHOUT_BEGIN, 1,
		     (const char *const[]){"end-without-begin: packet 11: SLICE_END on track",
					   "1 finding: end-without-begin 1", NULL});
	check_expect(
		"pf-needs.pftrace", F_NEEDS, 1,
		(const char *const[]){"sequence-flags: packet 6: SEQ_NEEDS_INCREMENTAL_STATE on "
				      "sequence 2, never cleared",
				      "sequence-flags: packet 6: trace_packet_defaults on "
				      "sequence 2 before it was cleared",
				      NULL});
	check_expect("pf-clock.pftrace", F_CLOCK, 1,
		     (const char *const[]){"clock-undefined: packet 8: timestamp on clock 64 of "
					   "sequence 2",
					   NULL});
	check_expect("pf-back.pftrace", F_CLOCK_BACK, 1,
		     (const char *const[]){"clock-backwards: packet 18: ClockSnapshot on sequence "
					   "2 moves clock 64 backwards, from 1000500 to 1000400",
					   "1 finding: clock-backwards 1", NULL});
	check_expect("pf-count.pftrace", F_END_COUNT, 1,
		     (const char *const[]){"end-marker: packet 21: the final end marker counts 100 "
					   "events, the file holds at most 17 before it",
					   NULL});
	check_expect("pf-varint.pftrace", F_VARINT, 1,
		     (const char *const[]){"packet-malformed: packet 21 at byte ",
					   "a varint over 10 bytes", "read stopped at an error",
					   NULL});
	check_expect("pf-length.pftrace", F_LENGTH, 1,
		     (const char *const[]){"packet-malformed: packet 21 at byte ",
					   "a length past the end of its message", NULL});
	check_expect("pf-wire.pftrace", F_WIRETYPE, 1,
		     (const char *const[]){"packet-malformed: packet 21 at byte ", "bad wire type",
					   NULL});
	check_expect("pf-deep.pftrace", F_NESTING, 1,
		     (const char *const[]){"packet-malformed: packet 9 at byte ",
					   "nesting over 64 levels", NULL});
}

/* The byte offset a malformed packet's error names is the fault's. */
static void malformed_offsets(void **state)
{
	size_t len;
	const char *path = write_trace("pf-varint2.pftrace", F_VARINT, &len);
	struct pf_status st;
	struct seen s;
	unsigned long long packet, offset;
	char *text = tu_read_file(path, NULL);

	(void)state;
	decode(path, &s, &st, -1);
	assert_int_equal(st.error, PF_ERR_MALFORMED);
	assert_int_equal(sscanf(st.message, "packet %llu at byte %llu", &packet, &offset), 2);
	assert_int_equal(packet, 21);
	/* the fault's key byte 0x40 (field 8, varint) begins the bad varint's field */
	assert_true(offset < len && (unsigned char)text[offset - 1] == 0x40);
	assert_int_equal(st.packets, 21);
	free(text);
	free(s.text.p);
	free(s.issue_text.p);
}

/*
 * A trace as the Perfetto SDK writes one: BOOTTIME the primary clock by default, a
 * sequence clock in microseconds (unit_multiplier_ns) through BOOTTIME, a MONOTONIC
 * timestamp placed by another sequence's snapshot, tracks of any uuid, a named track
 * under a process, an event on no track, interning in the clearing packet.
 */
static struct pbw make_sdk_trace(void)
{
	struct pbw t = {0}, p = {0}, m = {0}, n = {0}, in = {0};

	/* sequence 8: MONOTONIC 4000 = BOOTTIME 10000 */
	u(&n, 1, 6), u(&n, 2, 10000), msg(&m, 1, &n);
	u(&n, 1, 3), u(&n, 2, 4000), msg(&m, 1, &n);
	msg(&p, P_SNAP, &m);
	packet(&t, &p, 8, 1);
	u(&m, 1, 888);
	u(&n, 1, 5), str(&n, 6, "sdkproc"), msg(&m, 3, &n);
	msg(&p, P_DESC, &m);
	packet(&t, &p, 8, 2);
	u(&m, 1, 0x1234), u(&m, 5, 888);
	u(&n, 1, 5), u(&n, 2, 6), str(&n, 5, "worker"), msg(&m, 4, &n);
	msg(&p, P_DESC, &m);
	packet(&t, &p, 8, 2);
	u(&m, 1, 777), u(&m, 5, 888), str(&m, 2, "requests");
	msg(&p, P_DESC, &m);
	packet(&t, &p, 8, 2);
	/* sequence 7: cleared with its interning and its clock 64 in us */
	entry(&in, 2, 1, "sdk slice"), entry(&in, 1, 1, "cat1"), entry(&in, 1, 2, "cat2");
	msg(&p, P_INTERNED, &in);
	u(&m, 58, 64), msg(&p, P_DEFAULTS, &m);
	u(&n, 1, 6), u(&n, 2, 5000), msg(&m, 1, &n);
	u(&n, 1, 64), u(&n, 2, 5), u(&n, 3, 1), u(&n, 4, 1000), msg(&m, 1, &n);
	msg(&p, P_SNAP, &m);
	packet(&t, &p, 7, 1);
	u(&p, P_TS, 2);
	u(&m, 9, 1), u(&m, 10, 1), u(&m, 3, 1), u(&m, 3, 2), u(&m, 11, 0x1234);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 7, 2);
	u(&p, P_TS, 3);
	u(&m, 9, 2), u(&m, 11, 0x1234);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 7, 2);
	u(&p, P_TS, 4500), u(&p, P_CLOCK, 3);
	u(&m, 9, 3), str(&m, 23, "on no track");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 7, 2);
	u(&p, P_TS, 1);
	u(&m, 9, 1), u(&m, 11, 777), str(&m, 23, "req");
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 7, 2);
	u(&p, P_TS, 1);
	u(&m, 9, 2), u(&m, 11, 777);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 7, 2);
	/* a start marker: its MONOTONIC origin is BOOTTIME 7000 */
	u(&p, P_TS, 1000), u(&p, P_CLOCK, 3);
	u(&m, 9, 3), str(&m, 23, "ringtrace: start"), u(&m, 11, 888);
	ann_uint(&m, "origin_monotonic_ns", 1000);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 8, 2);
	return t;
}

static void sdk_style_trace(void **state)
{
	struct pbw t = make_sdk_trace();
	const char *in = tool_tmp("pf-sdk.pftrace"), *out = tool_tmp("pf-sdk.json");
	static const char want[] =
		"0 seq 8 flags 1 snapshot 2 clocks, primary 6\n"
		"1 seq 8 flags 2 track 378 kind 1 name - pid 5 tid 0 pname sdkproc tname - labels "
		"- "
		"sort 99\n"
		"2 seq 8 flags 2 track 1234 kind 2 name - pid 5 tid 6 pname - tname worker labels "
		"- "
		"sort 99\n"
		"3 seq 8 flags 2 track 309 kind 0 name requests pid 0 tid 0 pname - tname - labels "
		"- "
		"sort 99\n"
		"4 seq 7 flags 1 snapshot 2 clocks, primary 6\n"
		"5 seq 7 flags 2 t 7000 event 1 sdk slice cat cat1,cat2 track 1234\n"
		"6 seq 7 flags 2 t 10000 event 2  cat  track 1234\n"
		"7 seq 7 flags 2 t 10500 event 3 on no track cat  track 0 (none)\n"
		"8 seq 7 flags 2 t 11000 event 1 req cat  track 309\n"
		"9 seq 7 flags 2 t 12000 event 2  cat  track 309\n"
		"10 seq 8 flags 2 t 7000 event 3 ringtrace: start cat  track 378 args "
		"origin_monotonic_ns=u1000\n";
	struct pf_status st;
	struct seen s;
	struct tool_run r;
	char *json;

	(void)state;
	tool_write(in, t.p, t.len);
	free(t.p);
	decode(in, &s, &st, 0);
	if (strcmp(s.text.p, want) != 0)
		fail_msg("decoded:\n%s\nexpected:\n%s", s.text.p, want);
	assert_int_equal(s.issues, 0);
	free(s.text.p);
	free(s.issue_text.p);
	tool_run(&r, NULL, "check", in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_run(&r, NULL, "convert", "-o", out, in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	json = tu_read_file(out, NULL);
	/* the origin: the marker's MONOTONIC 1000 ns, BOOTTIME 7000 ns */
	assert_true(tool_has(json, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\","
				   "\"ts\":0,\"pid\":5,\"tid\":5,\"args\":{\"origin_monotonic_ns\":"
				   "\"1000\"}}"));
	assert_true(tool_has(json, "{\"ph\":\"X\",\"cat\":\"cat1,cat2\",\"name\":\"sdk slice\","
				   "\"ts\":0,\"dur\":3,\"pid\":5,\"tid\":6}"));
	assert_true(tool_has(json, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"on no track\",\"ts\":3.5,"
				   "\"pid\":0,\"tid\":0}"));
	assert_true(tool_has(json, "{\"ph\":\"b\",\"cat\":\"async\",\"name\":\"req\",\"ts\":4,"
				   "\"id\":\"0x309\",\"pid\":5,\"tid\":5}"));
	assert_true(tool_has(json, "{\"ph\":\"e\",\"cat\":\"async\",\"name\":\"req\",\"ts\":5,"
				   "\"id\":\"0x309\",\"pid\":5,\"tid\":5}"));
	assert_true(tool_has(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":6,"
				   "\"args\":{\"name\":\"worker\"}}"));
	free(json);
	tool_run(&r, NULL, "check", out, NULL);
	if (r.status != 0)
		fail_msg("check of the JSON: %d\n%s", r.status, r.out);
	tool_run_free(&r);
}

/* Interned strings past the state bound: not kept, reported once, references to
 * them not called unresolved; the memory stays far below 64 MiB. */
static void interning_past_the_state_bound(void **state)
{
	const char *path = tool_tmp("pf-bound.pftrace");
	struct pbw t = {0}, p = {0}, m = {0}, in = {0};
	uint64_t iid = 1;
	struct tool_run r;
	char name[16];

	(void)state;
	for (int k = 0; k < 40; k++) {
		for (int i = 0; i < 10000; i++, iid++) {
			snprintf(name, sizeof(name), "n%d", i);
			entry(&in, 2, iid, name);
		}
		msg(&p, P_INTERNED, &in);
		packet(&t, &p, 3, k == 0 ? 1 : 2);
	}
	u(&p, P_TS, 5), u(&p, P_CLOCK, 6);
	u(&m, 9, 3), u(&m, 10, iid - 1);
	msg(&p, P_EVENT, &m);
	packet(&t, &p, 3, 2);
	tool_write(path, t.p, t.len);
	free(t.p);
	tool_run(&r, NULL, "check", path, NULL);
	if (r.status != 1 || !tool_has(r.out, "1 finding: state-limit 1"))
		fail_msg("check: %d\n%s", r.status, r.out);
	assert_false(tool_has(r.out, "unresolved-iid"));
	if (!TT_SANITIZED) /* a sanitizer's shadow memory is not the tool's */
		assert_true(r.maxrss_kib < 64 * 1024);
	tool_run_free(&r);
}

static int to_text(void *ctx, const void *p, size_t n)
{
	put(ctx, p, n);
	return 0;
}

/* Mutated inputs: the decoder and the converter end each with a status, never a crash
 * or a hang. */
static void mutations_end_cleanly(void **state)
{
	struct pbw t = make_trace(F_NONE), sink = {0};
	uint64_t events;
	const char *path = tool_tmp("pf-mut.pftrace");
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < (TT_SANITIZED ? 300 : 3000); round++) {
		unsigned char *copy = malloc(t.len);
		struct pf_status st;
		struct seen s;
		struct pf_options o = {.on_packet = on_packet, .on_issue = on_issue, .ctx = &s};

		memcpy(copy, t.p, t.len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % t.len] = (unsigned char)(seed >> 20);
		}
		tool_write(path, copy, t.len);
		memset(&s, 0, sizeof(s));
		tool_text_printf(&s.text, "%s", "");
		tool_text_printf(&s.issue_text, "%s", "");
		if (pf_read_path(path, &o, &st) != 0)
			assert_true(st.error == PF_ERR_MALFORMED && st.message[0] != '\0');
		/* the converter too: its output a closed array whatever came in */
		sink.len = 0;
		if (pf_to_json(path, to_text, &sink, NULL, &st, &events) != 0)
			assert_true(st.error == PF_ERR_MALFORMED);
		assert_true(sink.len >= 4 && sink.p[0] == '[' &&
			    memcmp(sink.p + sink.len - 2, "]\n", 2) == 0);
		free(s.text.p);
		free(s.issue_text.p);
		free(copy);
	}
	free(t.p);
	free(sink.p);
}

/* ------------------------------------------------------------ convert */

struct want_event {
	const char *ph, *name, *ts, *extra;
};

static void converts_to_the_recorders_json(void **state)
{
	const char *in = write_trace("pf-conv.pftrace", F_NONE, NULL);
	const char *out = tool_tmp("pf-conv.json");
	static const char *const want[] = {
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":100,"
		"\"tid\":100,\"args\":{\"origin_monotonic_ns\":\"1000000\",\"origin_realtime_ns\":"
		"\"2000\",\"host\":\"h\",\"pid\":100}}",
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,\"args\":{"
		"\"name\":"
		"\"app\"}}",
		"{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":100,\"tid\":100,\"args\":{"
		"\"labels\":\"l1,l2\"}}",
		"{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":100,\"tid\":100,\"args\":{"
		"\"sort_index\":-1}}",
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":101,\"args\":{\"name\":"
		"\"main\"}}",
		"{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":100,\"tid\":101,\"args\":{"
		"\"sort_index\":2}}",
		"{\"ph\":\"X\",\"cat\":\"run\",\"name\":\"inner\",\"ts\":0.515,\"dur\":0.01,"
		"\"pid\":100,"
		"\"tid\":101,\"args\":{\"b\":true,\"u\":7,\"d\":0.25,\"s\":\"hi\",\"iv\":"
		"\"interned!\","
		"\"p\":\"0x1000\",\"none\":null,\"arr\":[1,2,[3]],\"obj\":{\"k\":\"v\",\"n\":2},"
		"\"r\":1}}",
		"{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"app\",\"name\":\"tick\",\"ts\":0.53,\"pid\":"
		"100,"
		"\"tid\":101}",
		"{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"handoff\",\"ts\":0.531,\"id\":\"0x7\","
		"\"pid\":100,\"tid\":101}",
		"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"late\",\"ts\":0.505,\"pid\":100,\"tid\":101}",
		"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"handoff\",\"ts\":0.533,"
		"\"id\":\"0x7\",\"pid\":100,\"tid\":101}",
		/* its BEGIN held until its END: one X there, as the library writes it */
		"{\"ph\":\"X\",\"cat\":\"run\",\"name\":\"outer\",\"ts\":0.51,\"dur\":0.03,"
		"\"pid\":100,\"tid\":101,\"args\":{\"n\":-5}}",
		"{\"ph\":\"C\",\"name\":\"queue\",\"ts\":0.545,\"pid\":100,\"tid\":101,\"args\":{"
		"\"value\":3}}",
		"{\"ph\":\"C\",\"name\":\"queue\",\"ts\":0.546,\"pid\":100,\"tid\":101,\"args\":{"
		"\"value\":0.125}}",
		"{\"ph\":\"b\",\"cat\":\"copy\",\"name\":\"h2d\",\"ts\":0.55,"
		"\"id\":\"0x6440000001\",\"pid\":100,\"tid\":101}",
		"{\"ph\":\"n\",\"cat\":\"copy\",\"name\":\"mid\",\"ts\":0.551,"
		"\"id\":\"0x6440000001\",\"pid\":100,\"tid\":101}",
		"{\"ph\":\"e\",\"cat\":\"copy\",\"name\":\"h2d\",\"ts\":0.561,"
		"\"id\":\"0x6440000001\",\"pid\":100,\"tid\":101}",
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: "
		"end\",\"ts\":0.6,\"pid\":100,\"tid\":"
		"100,\"args\":{\"final\":true,\"events\":10,\"dropped\":0}}",
	};
	size_t n = sizeof(want) / sizeof(want[0]), k = 0;
	struct trace *r;
	const struct trace_event *ev;
	struct tool_run run;

	(void)state;
	tool_run(&run, NULL, "convert", "--to", "json", "-o", out, in, NULL);
	if (run.status != 0)
		fail_msg("convert: %d\n%s", run.status, run.err);
	assert_true(tool_has(run.err, "wrote"));
	tool_run_free(&run);
	/* read back with the tools' reader: every event, in order, as written */
	assert_int_equal(trace_open(out, NULL, &r), 0);
	while (trace_next(r, &ev) == 1) {
		assert_true(k < n);
		if (ev->json_len != strlen(want[k]) || memcmp(ev->json, want[k], ev->json_len) != 0)
			fail_msg("event %zu:\n%.*s\nnot\n%s", k, (int)ev->json_len, ev->json,
				 want[k]);
		k++;
	}
	assert_int_equal(k, n);
	assert_true(trace_status(r)->complete);
	assert_int_equal(trace_status(r)->form, TRACE_FORM_ARRAY);
	trace_close(r);
	/* the recorder's layout: one event per line */
	{
		char *text = tu_read_file(out, NULL);

		assert_true(strncmp(text, "[\n{", 3) == 0);
		assert_true(tool_has(text, "}},\n{\"ph\":\"M\""));
		assert_true(tool_has(text, "}}\n]\n"));
		free(text);
	}
	/* and it passes check */
	tool_run(&run, NULL, "check", out, NULL);
	if (run.status != 0)
		fail_msg("check of the JSON: %d\n%s", run.status, run.out);
	tool_run_free(&run);
	/* the default output name: beside it, .json for .pftrace */
	tool_run(&run, NULL, "convert", in, NULL);
	assert_int_equal(run.status, 0);
	tool_run_free(&run);
	{
		char name[4200];

		snprintf(name, sizeof(name), "%.*s.json", (int)(strlen(in) - 8), in);
		assert_int_equal(access(name, R_OK), 0);
		unlink(name);
	}
}

/* The other subcommands read a .pftrace through its JSON. */
static void other_commands_read_it(void **state)
{
	const char *in = write_trace("pf-other.pftrace", F_NONE, NULL);
	const char *merged = tool_tmp("pf-other.merged.json");
	const char *win = tool_tmp("pf-other.window.json");
	const char *obj = tool_tmp("pf-other.object.json");
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "stats", "--json", in, NULL);
	if (r.status != 0)
		fail_msg("stats: %d\n%s", r.status, r.err);
	assert_true(tool_has(r.out, "\"events\":18")); /* a slice's BEGIN and END: one X */
	tool_run_free(&r);
	tool_run(&r, NULL, "stats", in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "pf-other.pftrace: 18 events on 2 threads"));
	tool_run_free(&r);
	tool_run(&r, NULL, "merge", "-o", merged, in, in, NULL);
	if (r.status != 0)
		fail_msg("merge: %d\n%s", r.status, r.err);
	/* the start marker comes first, where merge takes the origin from */
	assert_false(tool_has(r.err, "no start marker"));
	tool_run_free(&r);
	tool_run(&r, NULL, "check", "-q", merged, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_run(&r, NULL, "window", "--from", "0ns", "--to", "1us", "-o", win, in, NULL);
	if (r.status != 0)
		fail_msg("window: %d\n%s", r.status, r.err);
	tool_run_free(&r);
	tool_run(&r, NULL, "convert", "--to", "object", "-o", obj, in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	{
		char *text = tu_read_file(obj, NULL);

		assert_true(strncmp(text, "{\"traceEvents\":[", 16) == 0);
		assert_true(tool_has(text, "\"otherData\":{\"origin_monotonic_ns\":\"1000000\""));
		free(text);
	}
	tool_run(&r, NULL, "diff", in, in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "within noise"));
	tool_run_free(&r);
	/* from standard input, when it is a file */
	tool_run(&r, in, "stats", "-", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "18 events"));
	tool_run_free(&r);
}

/* protoc, where installed, reads every input the tests write as a Trace. */
static void protoc_decodes_the_inputs(void **state)
{
	static const enum fault ok[] = {F_NONE,	 F_UNRESOLVED, F_UNDECLARED, F_END_WITHOUT_BEGIN,
					F_NEEDS, F_CLOCK,      F_CLOCK_BACK, F_END_COUNT};
	char cmd[8192];

	(void)state;
	if (system("command -v protoc >/dev/null 2>&1") != 0)
		skip();
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *in = write_trace("pf-protoc.pftrace", ok[i], NULL);
		const char *out = tool_tmp("pf-protoc.txt");
		char *text;

		snprintf(cmd, sizeof(cmd),
			 "protoc --decode=perfetto.protos.Trace -I %s %s/perfetto_subset.proto "
			 "< %s > %s",
			 RTR_TEST_SUPPORT_DIR, RTR_TEST_SUPPORT_DIR, in, out);
		assert_int_equal(system(cmd), 0);
		text = tu_read_file(out, NULL);
		assert_true(tool_has(text, "name: \"ringtrace: start\""));
		assert_true(tool_has(text, "string_value_iid: 1"));
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_every_value),
		cmocka_unit_test(gzip_and_sniffing),
		cmocka_unit_test(cut_at_every_byte_of_the_last_packet),
		cmocka_unit_test(check_good_trace),
		cmocka_unit_test(check_broken_variants),
		cmocka_unit_test(malformed_offsets),
		cmocka_unit_test(sdk_style_trace),
		cmocka_unit_test(mutations_end_cleanly),
		cmocka_unit_test(interning_past_the_state_bound),
		cmocka_unit_test(converts_to_the_recorders_json),
		cmocka_unit_test(other_commands_read_it),
		cmocka_unit_test(protoc_decodes_the_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
