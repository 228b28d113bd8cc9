/* SPDX-License-Identifier: MIT */
/*
 * The perfetto format (docs/perfetto.md), read back by tests/support/pf_read.c and,
 * where protoc is installed, by `protoc --decode` against the schema subset: every
 * event's type, name, category, track, timestamp (to the nanosecond where the program
 * gave it), argument and flow id; the sequences' flags, interning and descriptors;
 * the markers' counts against rtr_stats_get(); a file cut at every byte; rotation.
 */
#include "pf_read.h"
#include "test_util.h"

#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* A session into path; with max_mb, rotation, of plain packets (so that a few hundred
 * thousand events make segments: test_perfetto_rules has it packed). */
static void start_pf(const char *path, const char *max_mb)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.format = RTR_FORMAT_AUTO; /* by the suffix */
	if (max_mb != NULL) {
		cfg.max_mb = (unsigned)atoi(max_mb);
		cfg.pf_compress = 0;
	}
	assert_int_equal(rtr_start(&cfg), 0);
}

static const struct pf_event *find(const struct pf_trace *t, const char *name, int type, size_t nth)
{
	for (size_t i = 0; i < t->nevents; i++)
		if (strcmp(t->events[i].name, name) == 0 && t->events[i].type == type && nth-- == 0)
			return &t->events[i];
	return NULL;
}

static size_t count(const struct pf_trace *t, const char *name, int type)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nevents; i++)
		n += strcmp(t->events[i].name, name) == 0 && t->events[i].type == type;
	return n;
}

/* Every slice balanced on its track, in file order: no END without its BEGIN, none
 * left open. Returns the slices; fails the test at the first unbalanced track. */
static size_t balanced(const struct pf_trace *t)
{
	struct depth {
		uint64_t track;
		long depth;
	} *d = calloc(t->ntracks + 1, sizeof(*d));
	size_t nd = 0, slices = 0;

	assert_non_null(d);
	for (size_t i = 0; i < t->nevents; i++) {
		const struct pf_event *e = &t->events[i];
		if (e->type != 1 && e->type != 2)
			continue;
		size_t k = 0;
		while (k < nd && d[k].track != e->track)
			k++;
		if (k == nd) {
			assert_true(nd <= t->ntracks); /* an event's track is declared */
			d[nd++] = (struct depth){.track = e->track};
		}
		d[k].depth += e->type == 1 ? 1 : -1;
		if (d[k].depth < 0)
			fail_msg("track %llx: an END without its BEGIN (event %zu)",
				 (unsigned long long)e->track, i);
		slices += e->type == 2;
	}
	for (size_t k = 0; k < nd; k++)
		if (d[k].depth != 0)
			fail_msg("track %llx: %ld slices left open", (unsigned long long)d[k].track,
				 d[k].depth);
	free(d);
	return slices;
}

/* protoc decodes the file against the schema subset (skipped without protoc). */
static void protoc_decodes(const char *path)
{
	if (system("command -v protoc >/dev/null 2>&1") != 0)
		return;
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode=perfetto.protos.Trace -I %s %s/perfetto_subset.proto < %s "
		 ">/dev/null",
		 RTR_TEST_SUPPORT, RTR_TEST_SUPPORT, path);
	assert_int_equal(system(cmd), 0);
}

#define N_SPANS 1000

static void test_events_read_back(void **state)
{
	(void)state;
	char path[512];
	tu_temp_path(path, sizeof(path), "perfetto", "events", ".pftrace");
	start_pf(path, NULL);
	rtr_thread_name("main thread");
	for (int i = 0; i < N_SPANS; i++) {
		rtr_begin("app", "span");
		rtr_end("app", "span");
	}
	uint64_t t0 = rtr_now_ns();
	rtr_complete("app", "exact", t0 + 1000, 2345);
	rtr_begin_v("app", "with args", RTR_ARG_I64("neg", -42), RTR_ARG_U64("big", UINT64_MAX),
		    RTR_ARG_F64("pi", 3.25), RTR_ARG_BOOL("yes", 1), RTR_ARG_STR("str", "static"),
		    RTR_ARG_STR_COPY("copy", "copied"));
	rtr_instant("app", "inside");
	rtr_end("app", "with args");
	int64_t arr[3] = {1, -2, 3};
	rtr_instant_v("app", "array", RTR_ARG_I64_ARRAY("xs", arr, 3));
	rtr_counter_i64("app", "queue", 7);
	rtr_counter_f64("app", "load", 0.5);
	rtr_flow_start("app", "send", 0xabcdef);
	rtr_flow_end("app", "recv", 0xabcdef);
	rtr_async_begin("io", "read", 77, NULL, 0);
	rtr_async_end("io", "read", 77);
	rtr_instant_scoped("app", "global", RTR_INSTANT_GLOBAL, NULL, 0);
	struct rtr_stats st;
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped, 0);
	protoc_decodes(path);

	struct pf_trace t;
	if (pf_read(path, &t, 0) != 0)
		fail_msg("%s", t.error);
	balanced(&t);
	assert_true(t.cleared >= 2); /* the writer's sequence and the thread's */

	/* spans: a BEGIN and an END each, in time order on the thread's track */
	assert_int_equal(count(&t, "span", 1), N_SPANS);
	const struct pf_event *b = find(&t, "span", 1, 0);
	assert_non_null(b);
	assert_string_equal(b->cat, "app");
	const struct pf_track *th = pf_track(&t, b->track);
	assert_non_null(th);
	assert_true(th->has_thread);
	assert_int_equal(th->tid, th->pid); /* the main thread */
	assert_string_equal(th->thread_name, "main thread");
	size_t ends = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < t.nevents; i++) {
		const struct pf_event *e = &t.events[i];
		if (e->track != b->track)
			continue;
		if (strcmp(e->name, "span") == 0) { /* recorded in order, read back in order */
			assert_true(e->ts >= last);
			last = e->ts;
		}
		ends += e->type == 2;
	}
	assert_int_equal(ends, N_SPANS + 2); /* the spans, "exact", "with args" */

	/* a complete event to the nanosecond */
	const struct pf_event *x = find(&t, "exact", 1, 0);
	assert_non_null(x);
	assert_int_equal(x->ts, t0 + 1000);
	const struct pf_event *xe = x + 1;
	assert_int_equal(xe->type, 2);
	assert_int_equal(xe->ts, t0 + 1000 + 2345);

	/* arguments of every type */
	const struct pf_event *a = find(&t, "with args", 1, 0);
	assert_non_null(a);
	assert_int_equal(a->nann, 6);
	assert_int_equal(pf_ann(a, "neg")->kind, 'i');
	assert_int_equal(pf_ann(a, "neg")->i, -42);
	assert_int_equal(pf_ann(a, "big")->u, UINT64_MAX);
	assert_true(pf_ann(a, "pi")->d == 3.25);
	assert_int_equal(pf_ann(a, "yes")->kind, 'b');
	assert_int_equal(pf_ann(a, "yes")->u, 1);
	assert_string_equal(pf_ann(a, "str")->s, "static");
	assert_string_equal(pf_ann(a, "copy")->s, "copied");
	const struct pf_event *arr_e = find(&t, "array", 3, 0);
	assert_non_null(arr_e);
	assert_int_equal(pf_ann(arr_e, "xs")->kind, 'a');
	assert_string_equal(pf_ann(arr_e, "xs")->s, "1,-2,3");
	assert_non_null(find(&t, "inside", 3, 0));

	/* counters on their own tracks, named after them */
	int counters = 0;
	for (size_t i = 0; i < t.nevents; i++) {
		const struct pf_event *e = &t.events[i];
		const struct pf_track *tr = pf_track(&t, e->track);
		if (e->type != 4 || tr == NULL)
			continue;
		if (strcmp(tr->name, "queue") == 0) {
			assert_true(tr->is_counter);
			assert_int_equal(e->has_counter, 1);
			assert_int_equal(e->counter, 7);
			counters++;
		} else if (strcmp(tr->name, "load") == 0) {
			assert_int_equal(e->has_counter, 2);
			assert_true(e->dcounter == 0.5);
			counters++;
		}
	}
	assert_int_equal(counters, 2);

	/* flows and async spans */
	assert_int_equal(find(&t, "send", 3, 0)->flow, 0xabcdef);
	assert_int_equal(find(&t, "recv", 3, 0)->end_flow, 0xabcdef);
	const struct pf_event *ab = find(&t, "read", 1, 0);
	assert_non_null(ab);
	assert_string_equal(ab->cat, "io");
	assert_int_not_equal(ab->track, b->track);
	assert_true(pf_track(&t, ab->track)->parent != 0);
	/* a global instant on a track of no process: Perfetto's global scope */
	const struct pf_event *g = find(&t, "global", 3, 0);
	assert_true(!pf_track(&t, g->track)->has_process && pf_track(&t, g->track)->parent == 0);

	/* the markers: the start's origin, the end's counts equal the recorder's */
	const struct pf_event *start = find(&t, "ringtrace: start", 3, 0);
	assert_non_null(start);
	assert_int_equal(pf_ann(start, "origin_monotonic_ns")->u, start->ts);
	assert_string_equal(pf_ann(start, "format")->s, "perfetto");
	size_t nend = count(&t, "ringtrace: end", 3);
	assert_int_equal(nend, 1);
	const struct pf_event *end = find(&t, "ringtrace: end", 3, 0);
	assert_int_equal(pf_ann(end, "final")->u, 1);
	assert_int_equal(pf_ann(end, "events")->u, st.events_recorded);
	assert_int_equal(pf_ann(end, "dropped")->u, 0);
	assert_int_equal(pf_ann(end, "waited")->u, st.events_waited_full); /* block mode */
	assert_int_equal(pf_ann(end, "waited_ns")->u, st.waited_ns);
	/* the bytes before the marker: all but the closing packets */
	uint64_t marked = pf_ann(end, "bytes")->u;
	assert_true(marked < t.bytes && t.bytes - marked < 1024);
	/* the same counts on the writer's counter tracks */
	int seen = 0;
	for (size_t i = 0; i < t.nevents; i++) {
		const struct pf_track *tr = pf_track(&t, t.events[i].track);
		if (t.events[i].type == 4 && tr && strcmp(tr->name, "ringtrace: events") == 0) {
			assert_int_equal(t.events[i].counter, st.events_recorded);
			seen++;
		}
	}
	assert_int_equal(seen, 1);
	pf_free(&t);
	unlink(path);
}

/* A span costs a few bytes: interned names, delta timestamps, the sequence's track. */
static void test_bytes_per_span(void **state)
{
	(void)state;
	char path[512];
	tu_temp_path(path, sizeof(path), "perfetto", "size", ".pftrace");
	start_pf(path, NULL);
	rtr_begin("app", "warm");
	rtr_end("app", "warm");
	rtr_flush();
	uint64_t before = tu_file_size(path);
	for (int i = 0; i < 100000; i++) {
		rtr_begin("app", "span");
		rtr_end("app", "span");
	}
	rtr_flush();
	uint64_t after = tu_file_size(path);
	assert_int_equal(rtr_stop(), 0);
	/* 2 packets of 6 bytes of framing (tag, length, sequence, flags) and a 2-3 byte
	 * delta each, a type, and for the BEGIN two interned ids */
	double per_span = (double)(after - before) / 100000.0;
	print_message("bytes per span: %.2f\n", per_span);
	assert_true(per_span < 32.0);
	struct pf_trace t;
	if (pf_read(path, &t, 0) != 0)
		fail_msg("%s", t.error);
	balanced(&t);
	assert_int_equal(count(&t, "span", 1), 100000);
	pf_free(&t);
	unlink(path);
}

/* A file cut at any byte decodes up to its last whole packet. */
static void test_cut_anywhere(void **state)
{
	(void)state;
	char path[512], cut[560];
	tu_temp_path(path, sizeof(path), "perfetto", "cut", ".pftrace");
	snprintf(cut, sizeof(cut), "%s.cut", path);
	start_pf(path, NULL);
	for (int i = 0; i < 50; i++)
		rtr_instant_v("app", "tick", RTR_ARG_I64("i", i));
	assert_int_equal(rtr_stop(), 0);
	struct pf_trace whole;
	if (pf_read(path, &whole, 0) != 0)
		fail_msg("%s", whole.error);
	balanced(&whole);
	FILE *f = fopen(path, "rb");
	char *data = malloc(whole.bytes);
	assert_int_equal(fread(data, 1, whole.bytes, f), whole.bytes);
	fclose(f);
	size_t prev_events = 0;
	for (size_t n = 0; n <= whole.bytes; n++) {
		FILE *o = fopen(cut, "wb");
		fwrite(data, 1, n, o);
		fclose(o);
		struct pf_trace t;
		if (pf_read(cut, &t, 1) != 0)
			fail_msg("cut at %zu: %s", n, t.error);
		assert_true(t.nevents >= prev_events); /* nothing before the cut is lost */
		prev_events = t.nevents;
		pf_free(&t);
	}
	assert_int_equal(prev_events, whole.nevents);
	pf_free(&whole);
	free(data);
	unlink(cut);
	unlink(path);
}

/* Rotation: every segment is a trace of its own (sequences cleared, tracks declared). */
static void test_rotation(void **state)
{
	(void)state;
	char dir[512], path[600];
	tu_temp_path(dir, sizeof(dir), "perfetto", "rot", "");
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/trace.pftrace", dir);
	start_pf(path, "1");
	/* open across every cut: a slice, and async spans begun in turn (one ended) */
	rtr_begin("app", "whole run");
	struct rtr_arg bytes = RTR_ARG_I64("bytes", 4096);
	rtr_async_begin("io", "request", 7, &bytes, 1);
	rtr_async_begin("io", "request", 8, NULL, 0);
	rtr_async_begin("net", "transfer", 7, NULL, 0);
	rtr_async_end("io", "request", 8);
	for (int i = 0; i < 200000; i++) {
		rtr_begin("app", "span");
		rtr_instant_v("app", "tick", RTR_ARG_I64("i", i));
		rtr_end("app", "span");
	}
	rtr_async_end("net", "transfer", 7);
	rtr_async_end("io", "request", 7);
	rtr_end("app", "whole run");
	struct rtr_stats st;
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	uint64_t instants = 0;
	int files = 0;
	for (int k = 0;; k++) {
		char seg[700];
		snprintf(seg, sizeof(seg), "%s/trace.%04d.pftrace", dir, k);
		if (access(seg, F_OK) != 0)
			break;
		struct pf_trace t;
		if (pf_read(seg, &t, 0) != 0)
			fail_msg("%s: %s", seg, t.error);
		instants += count(&t, "tick", 3);
		balanced(&t);
		/* the spans open across the cuts are in every segment, on their tracks */
		assert_int_equal(count(&t, "whole run", 1), 1);
		assert_int_equal(count(&t, "request", 1), k == 0 ? 2 : 1);
		assert_int_equal(count(&t, "transfer", 1), 1);
		const struct pf_event *req = find(&t, "request", 1, 0);
		const struct pf_event *xfer = find(&t, "transfer", 1, 0);
		assert_string_equal(req->cat, "io");
		assert_string_equal(xfer->cat, "net");
		assert_true(req->track != xfer->track); /* same id, another category */
		if (k == 0) {
			assert_int_equal(pf_ann(req, "bytes")->i, 4096);
		} else {
			assert_non_null(pf_ann(req, "continued"));
			assert_non_null(pf_ann(xfer, "continued"));
		}
		assert_non_null(find(&t, "ringtrace: start", 3, 0));
		assert_non_null(find(&t, "ringtrace: end", 3, 0));
		pf_free(&t);
		unlink(seg);
		files++;
	}
	assert_true(files > 2);
	assert_int_equal(instants, 200000);
	rmdir(dir);
}

/* Tracks and their lanes, memory, stacks, nested lists, added arguments, pops, names
 * and sort indices: every kind the recorder has, decoded, tracks declared before use. */
static void test_other_kinds(void **state)
{
	(void)state;
	char path[512];
	tu_temp_path(path, sizeof(path), "perfetto", "kinds", ".pftrace");
	start_pf(path, NULL);
	struct rtr_track_desc d = RTR_TRACK_DESC_INIT();
	d.process = "GPU 0";
	d.lane = "stream 7";
	struct rtr_track *t = rtr_track_create(&d);
	assert_non_null(t);
	uint64_t now = rtr_now_ns();
	rtr_track_complete(t, "gpu", "kernel", now, 500, NULL, 0);
	rtr_track_complete(t, "gpu", "overlap", now + 100, 500, NULL, 0); /* another lane */
	rtr_track_instant(t, "gpu", "mark", now + 50, NULL, 0);
	int x = 1;
	rtr_mem_alloc(RTR_MEM_HOST, &x, 4096);
	rtr_mem_free(RTR_MEM_HOST, &x);
	rtr_stack_sample_here("app", "sample");
	int64_t vals[3] = {1, 2, 3};
	uint32_t lens[2] = {1, 2};
	const char *strs[2] = {"a", NULL};
	rtr_instant_v("app", "lists", RTR_ARG_I64_LISTS("l", vals, lens, 2),
		      RTR_ARG_STR_ARRAY("s", strs, 2));
	rtr_begin("app", "outer");
	rtr_instant("app", "not folded");
	rtr_scope_arg_i64("app", "added", 99);
	rtr_pop("app");
	rtr_thread_sort_index(-3);
	rtr_process_label("label one");
	assert_int_equal(rtr_stop(), 0);
	protoc_decodes(path);

	struct pf_trace tr;
	if (pf_read(path, &tr, 0) != 0)
		fail_msg("%s", tr.error);
	balanced(&tr);
	const struct pf_event *k = find(&tr, "kernel", 1, 0), *o = find(&tr, "overlap", 1, 0);
	assert_non_null(k);
	assert_non_null(o);
	assert_int_equal(k->ts, now);
	assert_int_not_equal(k->track, o->track); /* the overlap on its own lane */
	const struct pf_track *lane = pf_track(&tr, k->track);
	assert_string_equal(lane->name, "stream 7");
	const struct pf_track *gpu = pf_track(&tr, lane->parent);
	assert_non_null(gpu);
	assert_string_equal(gpu->process_name, "GPU 0");
	assert_non_null(find(&tr, "mark", 3, 0));
	const struct pf_event *al = find(&tr, "alloc", 3, 0);
	assert_non_null(al);
	assert_int_equal(pf_ann(al, "bytes")->u, 4096);
	assert_non_null(find(&tr, "free", 3, 0));
	int mem = 0;
	for (size_t i = 0; i < tr.nevents; i++) {
		const struct pf_track *c = pf_track(&tr, tr.events[i].track);
		if (tr.events[i].type == 4 && c != NULL && strcmp(c->name, "memory host") == 0)
			assert_int_equal(tr.events[i].counter, mem++ == 0 ? 4096 : 0);
	}
	assert_int_equal(mem, 2);
	const struct pf_event *st = find(&tr, "sample", 3, 0);
	assert_non_null(st);
	assert_int_equal(pf_ann(st, "stack")->kind, 'a');
	assert_true(pf_ann(st, "stack")->count >= 1);
	const struct pf_event *l = find(&tr, "lists", 3, 0);
	assert_string_equal(pf_ann(l, "l")->s, "[1],[2,3]");
	assert_string_equal(pf_ann(l, "s")->s, "\"a\",[]");
	/* the pop ends "outer" with the added argument */
	const struct pf_event *b = find(&tr, "outer", 1, 0);
	const struct pf_event *e = NULL;
	for (const struct pf_event *q = b + 1; q < tr.events + tr.nevents; q++)
		if (q->type == 2 && q->track == b->track) {
			e = q;
			break;
		}
	assert_non_null(e);
	assert_int_equal(pf_ann(e, "added")->i, 99);
	const struct pf_track *th = pf_track(&tr, b->track);
	assert_true(th->has_thread);
	const struct pf_track *proc = pf_track(&tr, th->parent);
	assert_true(proc->has_process);
	pf_free(&tr);
	unlink(path);
}

/* Flight mode: a snapshot is a trace of its own, its window's chunks each clearing
 * the sequences they use. */
static void test_flight_snapshot(void **state)
{
	(void)state;
	char dir[512], path[600], snap[700];
	tu_temp_path(dir, sizeof(dir), "perfetto", "flight", "");
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/fl.pftrace", dir);
	struct rtr_config cfg;
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.mode = RTR_MODE_FLIGHT;
	cfg.flight_mb = 2;
	cfg.flight_at_exit = 0;
	cfg.pf_compress =
		0; /* plain: 300000 events fill the window (packed: test_perfetto_rules) */
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "open across the window");
	for (int i = 0; i < 300000; i++) {
		rtr_begin("app", "span");
		rtr_instant_v("app", "tick", RTR_ARG_I64("i", i));
		rtr_end("app", "span");
	}
	snprintf(snap, sizeof(snap), "%s/snap.pftrace", dir);
	assert_int_equal(rtr_snapshot(snap), 0);
	assert_int_equal(rtr_stop(), 0);
	struct pf_trace t;
	if (pf_read(snap, &t, 0) != 0)
		fail_msg("%s", t.error);
	balanced(&t);
	assert_true(count(&t, "tick", 3) > 1000);
	assert_true(count(&t, "tick", 3) < 300000); /* 2 MiB hold only the newest */
	size_t ticks = count(&t, "tick", 3), spans = count(&t, "span", 1);
	assert_true(spans >= ticks &&
		    spans <= ticks + 1); /* one begun again at the window's start */
	assert_int_equal(count(&t, "open across the window", 1), 1);
	assert_true(t.cleared >= 2);
	const struct pf_event *end = find(&t, "ringtrace: end", 3, 0);
	assert_non_null(end);
	assert_string_equal(pf_ann(find(&t, "ringtrace: start", 3, 0), "mode")->s, "flight");
	uint64_t events = pf_ann(end, "events")->u; /* the window's chunks, whole spans */
	assert_true(events + 2 >= 3 * ticks && events <= 3 * ticks + 2);
	pf_free(&t);
	unlink(snap);
	rmdir(dir);
}

/* .pftrace.gz: the same stream, gzip-compressed. */
static void test_gzip(void **state)
{
	(void)state;
	char path[512], plain[560], cmd[1200];
	tu_temp_path(path, sizeof(path), "perfetto", "gz", ".pftrace.gz");
	snprintf(plain, sizeof(plain), "%s.plain", path);
	start_pf(path, NULL);
	for (int i = 0; i < 10000; i++) {
		rtr_begin("app", "span");
		rtr_end("app", "span");
	}
	assert_int_equal(rtr_stop(), 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc < '%s' > '%s'", path, plain);
	assert_int_equal(system(cmd), 0);
	struct pf_trace t;
	if (pf_read(plain, &t, 0) != 0)
		fail_msg("%s", t.error);
	balanced(&t);
	assert_int_equal(count(&t, "span", 1), 10000);
	assert_string_equal(pf_ann(find(&t, "ringtrace: start", 3, 0), "compress")->s, "gzip");
	pf_free(&t);
	unlink(plain);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_read_back),
		cmocka_unit_test(test_bytes_per_span),
		cmocka_unit_test(test_cut_anywhere),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_other_kinds),
		cmocka_unit_test(test_flight_snapshot),
		cmocka_unit_test(test_gzip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
