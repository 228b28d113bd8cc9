/* SPDX-License-Identifier: MIT */
/*
 * The perfetto format's compressed batches (docs/perfetto.md, "Compressed packets"),
 * read back by the oracle (tests/support/pf_read.c), which inflates them with zlib,
 * not the libdeflate that wrote them, and reads their packets in place as trace
 * processor does: a packed trace decodes to exactly the events recorded; a batch holds
 * at most 64 KiB of packets; a run killed after a flush reads up to its last batch;
 * RINGTRACE_PF_COMPRESS=0 writes plain packets; bytes per span within the targets;
 * the batcher the tools write with (pack.h) turns a plain trace into a packed one that
 * reads as the same events.
 */
#include "child.h"
#include "format/perfetto/pack.h"
#include "pf_read.h"
#include "test_util.h"

#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void start_pf(const char *path)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	/* room for every event below within a quarter of the ring: the writer never
	 * finds itself behind, which would leave batches plain (packed.c) */
	cfg.ring_bytes = 64u << 20;
	assert_int_equal(rtr_start(&cfg), 0);
}

static void read_ok(const char *path, struct pf_trace *t)
{
	if (pf_read(path, t, 0) != 0)
		fail_msg("%s: %s", path, t->error);
}

enum { N = 100000 };
static uint64_t at[N];

/* Spans at known times with an argument each, counters, instants: every one read back
 * from the batches with its time and values. */
static void packed_decodes_exactly(void **state)
{
	(void)state;
	char path[512];
	tu_temp_path(path, sizeof(path), "perfetto-pack", "exact", ".pftrace");
	start_pf(path);
	uint64_t t0 = rtr_now_ns();
	for (int i = 0; i < N; i++) {
		at[i] = t0 + 7 * (uint64_t)i + (uint64_t)(i % 13);
		rtr_complete_args("app", "step", at[i], (uint64_t)(i % 5),
				  (const struct rtr_arg[]){RTR_ARG_I64("i", i)}, 1);
		if (i % 100 == 0) {
			rtr_counter_i64("app", "hundreds", i / 100);
			rtr_instant_v("app", "mark", RTR_ARG_STR_COPY("s", "a copied string"));
		}
	}
	assert_int_equal(rtr_stop(), 0);

	struct pf_trace t;
	read_ok(path, &t);
	assert_true(t.compressed > 10);
	assert_true(t.max_batch > 0 && t.max_batch <= 64 * 1024);
	size_t steps = 0, counters = 0, marks = 0;
	for (size_t k = 0; k < t.nevents; k++) {
		const struct pf_event *e = &t.events[k];
		if (e->type == 1 && strcmp(e->name, "step") == 0) {
			const struct pf_ann *i = pf_ann(e, "i");
			assert_non_null(i);
			assert_int_equal(i->i, (int64_t)steps); /* in order, none lost */
			assert_int_equal(e->ts, at[steps]);
			assert_string_equal(e->cat, "app");
			assert_true(k + 1 < t.nevents && t.events[k + 1].type == 2);
			assert_int_equal(t.events[k + 1].ts, at[steps] + steps % 5);
			steps++;
		} else if (e->type == 4 && strcmp(pf_track(&t, e->track)->name, "hundreds") == 0) {
			assert_int_equal(e->counter, (int64_t)counters);
			assert_string_equal(pf_track(&t, e->track)->categories, "app");
			counters++;
		} else if (e->type == 3 && strcmp(e->name, "mark") == 0) {
			assert_string_equal(pf_ann(e, "s")->s, "a copied string");
			marks++;
		}
	}
	assert_int_equal(steps, N);
	assert_int_equal(counters, N / 100);
	assert_int_equal(marks, N / 100);
	pf_free(&t);
	unlink(path);
}

/* RINGTRACE_PF_COMPRESS=0: the same events as plain packets, several times the bytes. */
static void plain_when_told(void **state)
{
	(void)state;
	char plain[512], packed[512];
	uint64_t size[2];
	tu_temp_path(plain, sizeof(plain), "perfetto-pack", "plain", ".pftrace");
	tu_temp_path(packed, sizeof(packed), "perfetto-pack", "packed", ".pftrace");
	for (int k = 0; k < 2; k++) {
		assert_int_equal(setenv("RINGTRACE_PF_COMPRESS", k == 0 ? "0" : "1", 1), 0);
		start_pf(k == 0 ? plain : packed);
		for (int i = 0; i < 20000; i++) {
			rtr_begin("app", "span");
			rtr_end("app", "span");
		}
		assert_int_equal(rtr_stop(), 0);
		size[k] = tu_file_size(k == 0 ? plain : packed);
	}
	assert_int_equal(unsetenv("RINGTRACE_PF_COMPRESS"), 0);
	struct pf_trace t;
	read_ok(plain, &t);
	assert_int_equal(t.compressed, 0);
	size_t spans = 0;
	for (size_t k = 0; k < t.nevents; k++)
		spans += t.events[k].type == 1 && strcmp(t.events[k].name, "span") == 0;
	assert_int_equal(spans, 20000);
	pf_free(&t);
	read_ok(packed, &t);
	assert_true(t.compressed > 0);
	pf_free(&t);
	print_message("20000 spans: %llu bytes plain, %llu packed\n", (unsigned long long)size[0],
		      (unsigned long long)size[1]);
	assert_true(size[1] * 4 < size[0]);
	unlink(plain);
	unlink(packed);
}

/* A run killed after a flush: every counter value flushed is in the file, from its
 * batches, and the file reads without error up to its last whole packet. */
static void killed_run_reads_to_its_last_batch(void **state)
{
	(void)state;
	char path[512];
	struct rtr_config cfg;
	pid_t pid;
	tu_temp_path(path, sizeof(path), "perfetto-pack", "killed", ".pftrace");
	rtr_config_init(&cfg);
	cfg.path = path;
	int64_t last = tu_record_until_killed(&cfg, "kill", 5000, 200000, &pid);
	assert_true(last >= 200000);

	struct pf_trace t;
	if (pf_read(path, &t, 1) != 0)
		fail_msg("%s: %s", path, t.error);
	assert_true(t.compressed > 0);
	int64_t want = 0;
	for (size_t k = 0; k < t.nevents; k++) {
		const struct pf_event *e = &t.events[k];
		const struct pf_track *tr = pf_track(&t, e->track);
		if (e->type == 4 && tr != NULL && strcmp(tr->name, "seq") == 0) {
			assert_int_equal(e->counter, want); /* each once, in order */
			want++;
		}
	}
	assert_true(want > last); /* every value flushed: 0 .. last */
	pf_free(&t);
	unlink(path);
}

/* Bytes a span takes, packed: 10^5 spans, and 10^5 with one integer argument. */
static void bytes_per_span(void **state)
{
	(void)state;
	char path[512];
	double per[2];
	for (int k = 0; k < 2; k++) {
		tu_temp_path(path, sizeof(path), "perfetto-pack", "size", ".pftrace");
		start_pf(path);
		rtr_begin("app", "warm");
		rtr_end("app", "warm");
		rtr_flush();
		uint64_t before = tu_file_size(path);
		for (int i = 0; i < 100000; i++) {
			if (k == 0)
				rtr_begin("app", "span");
			else
				rtr_begin_v("app", "span", RTR_ARG_I64("i", i));
			rtr_end("app", "span");
		}
		rtr_flush();
		per[k] = (double)(tu_file_size(path) - before) / 100000.0;
		assert_int_equal(rtr_stop(), 0);
		unlink(path);
	}
	print_message("bytes per span, packed: %.2f plain, %.2f with an int argument\n", per[0],
		      per[1]);
	assert_true(per[0] <= 8.0);
	assert_true(per[1] <= 12.0);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	char *p = malloc(*len + 1);
	assert_int_equal(fread(p, 1, *len, f), *len);
	fclose(f);
	return p;
}

static int emit_to_file(void *ctx, const void *p, size_t n)
{
	return fwrite(p, 1, n, ctx) == n ? 0 : -1;
}

/* The batcher of pack.h, as a tool uses it: a plain trace's packets added one by one
 * make a packed trace of the same events, batches of at most 64 KiB. */
static void batcher_packs_a_plain_trace(void **state)
{
	(void)state;
	char plain[512], packed[512];
	tu_temp_path(plain, sizeof(plain), "perfetto-pack", "batcher-in", ".pftrace");
	tu_temp_path(packed, sizeof(packed), "perfetto-pack", "batcher-out", ".pftrace");
	assert_int_equal(setenv("RINGTRACE_PF_COMPRESS", "0", 1), 0);
	start_pf(plain);
	assert_int_equal(unsetenv("RINGTRACE_PF_COMPRESS"), 0);
	for (int i = 0; i < 30000; i++)
		rtr_instant_v("app", "tick", RTR_ARG_I64("i", i));
	assert_int_equal(rtr_stop(), 0);

	size_t len;
	char *in = read_file(plain, &len);
	FILE *out = fopen(packed, "wb");
	struct rtr__pf_batch b = {.packer = rtr__pf_packer_new(),
				  .in = malloc(RTR__PF_BATCH_BYTES),
				  .out = malloc(rtr__pf_pack_bound(RTR__PF_BATCH_BYTES)),
				  .emit = emit_to_file,
				  .ctx = out};
	assert_non_null(b.packer);
	for (size_t k = 0; k < len;) { /* each packet: 0x0a, its length, its bytes */
		size_t q = k + 1, size = 0;
		unsigned shift = 0;
		for (; in[q] & 0x80; shift += 7)
			size |= (size_t)(in[q++] & 0x7f) << shift;
		size |= (size_t)(unsigned char)in[q++] << shift;
		assert_int_equal(rtr__pf_batch_add(&b, in + k, q + size - k), 0);
		k = q + size;
	}
	assert_int_equal(rtr__pf_batch_flush(&b), 0);
	fclose(out);
	assert_true(b.packed > 2);
	rtr__pf_packer_free(b.packer);
	free(b.in);
	free(b.out);
	free(in);

	struct pf_trace tp, tz;
	read_ok(plain, &tp);
	read_ok(packed, &tz);
	assert_true(tz.compressed == b.packed && tz.max_batch <= RTR__PF_BATCH_BYTES);
	assert_true(tz.bytes * 4 < tp.bytes);
	assert_int_equal(tz.nevents, tp.nevents);
	for (size_t k = 0; k < tp.nevents; k++) {
		assert_int_equal(tz.events[k].ts, tp.events[k].ts);
		assert_int_equal(tz.events[k].type, tp.events[k].type);
		assert_string_equal(tz.events[k].name, tp.events[k].name);
		assert_int_equal(tz.events[k].nann, tp.events[k].nann);
	}
	pf_free(&tp);
	pf_free(&tz);
	unlink(plain);
	unlink(packed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(packed_decodes_exactly),
		cmocka_unit_test(plain_when_told),
		cmocka_unit_test(killed_run_reads_to_its_last_batch),
		cmocka_unit_test(bytes_per_span),
		cmocka_unit_test(batcher_packs_a_plain_trace),
	};
	return cmocka_run_group_tests_name("perfetto_pack", tests, NULL, NULL);
}
