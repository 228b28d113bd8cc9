/* SPDX-License-Identifier: MIT */
/*
 * The tool on what the recorder writes: a trace from the library passes `check`
 * with no finding, plain and gzip; the same file cut at many points (inside lines,
 * between them, inside gzip members) is repaired into a strict file holding every
 * whole event before the cut with its slices balanced; and a file of a few hundred
 * MB is checked, converted and repaired in bounded memory.
 */
#include <ringtrace.h>

#include "tool_test.h"
#include "trace_read.h"

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

#define STEPS 1500

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker %d", id);
	rtr_thread_name(name);
	for (int i = 0; i < STEPS; i++) {
		uint64_t t0 = rtr_now_ns();

		rtr_begin_v("solver", "step", RTR_ARG_I64("i", i),
			    RTR_ARG_STR("note", "quote \" backslash \\ tab \t \xc3\xa9 \xff"));
		rtr_begin("solver", "inner");
		rtr_counter_i64("solver", "depth", i % 7);
		rtr_instant("solver", "tick");
		rtr_end("solver", "inner");
		rtr_complete("kernel", "stencil", t0, rtr_now_ns() - t0);
		rtr_end("solver", "step");
	}
	return NULL;
}

/* Record a trace from two threads into path. */
static void record(const char *path)
{
	struct rtr_config cfg;
	pthread_t th[2];

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rtr_stop(), 0);
}

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/*
 * The repair of a cut copy of `all`: every event before the end marker it added is
 * the original's, in order, except the E events that end what was open; slices
 * balance on every thread. Returns the events kept from the original.
 */
static size_t expect_repaired_prefix(const char *path, const struct tt_trace *all)
{
	struct tt_trace t;
	size_t kept, closed;
	const struct tt_event *end;

	tool_load_strict(path, &t);
	end = &t.ev[t.n - 1];
	assert_string_equal(end->name, "ringtrace: end");
	closed = (size_t)tt_arg(end, "slices_closed")->i;
	kept = t.n - 1 - closed;
	assert_true(kept <= all->n);
	for (size_t i = 0; i < kept; i++) {
		const struct tt_event *a = &t.ev[i], *b = &all->ev[i];

		if (strcmp(a->ph, b->ph) != 0 || !same_str(a->name, b->name) ||
		    a->ts_ns != b->ts_ns || a->tid != b->tid || a->nargs != b->nargs)
			fail_msg("%s: event %zu (line %zu) is not the original's", path, i,
				 a->line);
	}
	{
		/* Balanced: per thread, depth never below zero and zero at the end. */
		int64_t tids[16] = {0};
		long depths[16] = {0};
		size_t nt = 0;

		for (size_t k = 0; k < t.n; k++) {
			size_t j;

			for (j = 0; j < nt && tids[j] != t.ev[k].tid; j++)
				;
			if (j == nt) {
				assert_true(nt < 16);
				tids[nt++] = t.ev[k].tid;
			}
			depths[j] += strcmp(t.ev[k].ph, "B") == 0   ? 1
				     : strcmp(t.ev[k].ph, "E") == 0 ? -1
								    : 0;
			assert_true(depths[j] >= 0);
		}
		for (size_t j = 0; j < nt; j++)
			assert_int_equal(depths[j], 0);
	}
	tt_free(&t);
	return kept;
}

static void recorder_output_passes_check_and_repairs_at_any_cut(void **state)
{
	const char *path = tool_tmp("rec.json"), *cut = tool_tmp("rec-cut.json");
	const char *out = tool_tmp("rec-cut.repaired.json");
	struct tt_trace all;
	size_t len, last_kept = 0;
	char *text;

	(void)state;
	record(path);
	tool_expect_no_findings(path);
	tool_load_strict(path, &all);
	text = tu_read_file(path, &len);
	/* Cuts inside lines and just after them, spread over the file. */
	for (int i = 1, cuts = TT_TSAN ? 3 : 12; i <= cuts; i++) {
		size_t at = len * (size_t)i / (size_t)(cuts + 1);
		struct tool_run r;
		size_t kept;

		if (i % 3 == 0) {
			while (at < len && text[at - 1] != '\n')
				at++;
		}
		tool_write(cut, text, at);
		tool_run(&r, NULL, "check", "--repair", "-o", out, cut, NULL);
		if (r.status != 0)
			fail_msg("repair of a cut at byte %zu: exit %d\n%s", at, r.status, r.err);
		tool_run_free(&r);
		kept = expect_repaired_prefix(out, &all);
		assert_true(kept >= last_kept);
		last_kept = kept;
		tool_expect_no_findings(out);
	}
	tt_free(&all);
	free(text);
	unlink(path);
	unlink(cut);
	unlink(out);
}

static void recorder_gzip_output_passes_check_and_repairs(void **state)
{
	const char *path = tool_tmp("rec.json.gz"), *cut = tool_tmp("rec-cut.json.gz");
	const char *out = tool_tmp("rec-cut.repaired.json"), *plain = tool_tmp("rec-gz.json");
	struct tt_trace all;
	struct tool_run r;
	size_t len, tlen;
	char *gz, *text;

	(void)state;
	record(path);
	tool_expect_no_findings(path);
	text = tool_gunzip(path, &tlen);
	tool_write(plain, text, tlen);
	free(text);
	tool_load_strict(plain, &all);
	gz = tu_read_file(path, &len);
	tool_write(cut, gz, len * 2 / 3);
	tool_run(&r, NULL, "check", "--repair", "-o", out, cut, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	assert_true(expect_repaired_prefix(out, &all) > 0);
	tool_expect_no_findings(out);
	tt_free(&all);
	free(gz);
	unlink(path);
	unlink(cut);
	unlink(out);
	unlink(plain);
}

/* A trace of about mib MiB, recorder-like lines, slices nested on 4 threads. */
static void write_large(const char *path, size_t mib)
{
	FILE *f = fopen(path, "w");
	size_t bytes = 0;
	int64_t ts = 0;

	assert_non_null(f);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	bytes += (size_t)fprintf(f, "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\","
				    "\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{\"host\":\"h\"}},\n");
	while (bytes < mib << 20) {
		for (int t = 2; t < 6; t++) {
			bytes += (size_t)fprintf(f,
						 "{\"ph\":\"B\",\"cat\":\"app\",\"name\":"
						 "\"iteration\",\"ts\":%lld.%03d,"
						 "\"pid\":1,\"tid\":%d,\"args\":{\"i\":%lld}},\n"
						 "{\"ph\":\"X\",\"cat\":\"app\",\"name\":"
						 "\"kernel\",\"ts\":%lld.5,\"dur\":"
						 "0.25,\"pid\":1,\"tid\":%d},\n"
						 "{\"ph\":\"C\",\"cat\":\"app\",\"name\":\"bytes\","
						 "\"ts\":%lld.75,\"pid\":1,"
						 "\"tid\":%d,\"args\":{\"value\":%lld}},\n"
						 "{\"ph\":\"E\",\"cat\":\"app\",\"name\":"
						 "\"iteration\",\"ts\":%lld,\"pid\":"
						 "1,\"tid\":%d},\n",
						 (long long)ts, t, t, (long long)ts, (long long)ts,
						 t, (long long)ts, t, (long long)ts * 3,
						 (long long)ts + 1, t);
		}
		ts += 2;
	}
	fprintf(f,
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%lld,\"pid\":1,"
		"\"tid\":1,\"args\":{\"final\":true}}\n]\n",
		(long long)ts);
	assert_int_equal(fclose(f), 0);
}

static void large_file_in_bounded_memory(void **state)
{
	/* Release: a few hundred MB. Sanitizers are ten times slower and their own
	 * memory would drown the measure: a smaller file, no limit asserted. */
	size_t mib = TT_SANITIZED ? 24 : 200;
	const char *path = tool_tmp("large.json");
	struct tool_run r;

	(void)state;
	write_large(path, mib);
	tool_run(&r, NULL, "check", "-q", path, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "no findings"));
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("check: peak RSS %ld KiB on %zu MiB", r.maxrss_kib, mib);
	tool_run_free(&r);
	tool_run_to(&r, NULL, "/dev/null", "convert", "-o", "-", path, NULL);
	assert_int_equal(r.status, 0);
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("convert: peak RSS %ld KiB on %zu MiB", r.maxrss_kib, mib);
	tool_run_free(&r);
	/* Cut it inside its last line: the repair streams it too. */
	assert_int_equal(truncate(path, (off_t)(mib << 20) - 10), 0);
	tool_run_to(&r, NULL, "/dev/null", "check", "--repair", "-o", "-", path, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "a partial last event of"));
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("repair: peak RSS %ld KiB on %zu MiB", r.maxrss_kib, mib);
	tool_run_free(&r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recorder_output_passes_check_and_repairs_at_any_cut),
		cmocka_unit_test(recorder_gzip_output_passes_check_and_repairs),
		cmocka_unit_test(large_file_in_bounded_memory),
	};

	return cmocka_run_group_tests_name("tools_recorder", tests, NULL, NULL);
}
