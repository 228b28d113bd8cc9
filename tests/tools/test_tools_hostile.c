/* SPDX-License-Identifier: MIT */
/*
 * Hostile inputs against the state bound (threads.h): hundreds of thousands of
 * threads each with an open B, as many unterminated B events on one thread, as
 * many open flows. The tools keep what fits the bound, say what they did not keep
 * (check's state-limit), give the same answers as before up to it, and stay far
 * below 64 MiB.
 */
#include "tool_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LINES 300000

enum shape { MANY_THREADS, DEEP, OPEN_FLOWS };

/* Written line by line: a child's peak RSS (wait4) counts the pages of its parent
 * at the fork, so the test must not hold the file in memory. */
static void write_hostile(const char *path, enum shape shape)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("[\n", f);
	for (int i = 0; i < LINES; i++) {
		if (shape == MANY_THREADS)
			fprintf(f,
				"{\"ph\":\"B\",\"name\":\"b\",\"ts\":%d,\"pid\":1,\"tid\":%d},\n",
				i, i);
		else if (shape == DEEP)
			fprintf(f, "{\"ph\":\"B\",\"name\":\"d\",\"ts\":%d,\"pid\":1,\"tid\":1},\n",
				i);
		else
			fprintf(f,
				"{\"ph\":\"s\",\"name\":\"f\",\"cat\":\"c\",\"id\":%d,\"ts\":%d,"
				"\"pid\":1,\"tid\":1},\n",
				i, i);
	}
	fputs("{\"ph\":\"i\",\"name\":\"end\",\"ts\":1000000,\"pid\":1,\"tid\":1}]\n", f);
	assert_int_equal(fclose(f), 0);
}

/* Lines of a file that begin an event. */
static long event_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	long n = 0;

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0)
		n += line[0] == '{';
	free(line);
	fclose(f);
	return n;
}

/* The count of `rule` in check's summary line ("...; N findings: a 1, b 2"). */
static long summary_count(const char *err, const char *rule)
{
	char needle[64];
	const char *p;

	snprintf(needle, sizeof(needle), " %s ", rule);
	p = strstr(err, needle);
	return p != NULL ? strtol(p + strlen(needle), NULL, 10) : -1;
}

static void check_keeps_to_the_bound(enum shape shape, const char *name)
{
	char path[4096], repaired[4096];
	struct tool_run run;
	long unended = 0, lines;

	snprintf(path, sizeof(path), "%s", tool_tmp(name));
	snprintf(repaired, sizeof(repaired), "%s", tool_tmp("repaired.json"));
	write_hostile(path, shape);

	tool_run(&run, NULL, "check", "-q", path, NULL);
	assert_int_equal(run.status, 1);
	assert_int_equal(summary_count(run.out, "state-limit"), 1);
	assert_true(tool_has(run.out, "300001 events"));
	/* Threads past the bound are not counted: the count says it is a floor. */
	assert_true(tool_has(run.out,
			     shape == MANY_THREADS ? "events on at least " : "events on 1 thread"));
	if (shape != OPEN_FLOWS) {
		/* What was kept is reported as before: each kept B is unended. */
		unended = summary_count(run.out, "unended");
		assert_true(unended > 10000 && unended < LINES);
	}
	if (!TT_SANITIZED)
		assert_true(run.maxrss_kib < 64 * 1024);
	print_message("%s: check peak RSS %ld KiB\n", name, run.maxrss_kib);
	tool_run_free(&run);

	/* stats counts what fits and says how many events it left out. */
	tool_run(&run, NULL, "stats", "--json", path, NULL);
	assert_int_equal(run.status, 0);
	if (shape != OPEN_FLOWS)
		assert_true(tool_has(run.out, "\"state_limit\":"));
	if (!TT_SANITIZED)
		assert_true(run.maxrss_kib < 64 * 1024);
	print_message("%s: stats peak RSS %ld KiB\n", name, run.maxrss_kib);
	tool_run_free(&run);

	/* Repair writes every event, and ends what it kept. */
	tool_run(&run, NULL, "check", "--repair", "-o", repaired, path, NULL);
	assert_int_equal(run.status, 0);
	if (!TT_SANITIZED)
		assert_true(run.maxrss_kib < 64 * 1024);
	tool_run_free(&run);
	lines = event_lines(repaired);
	/* Every event, the end marker repair adds, and an E for each slice it kept (it
	 * keeps a little more than check, whose per-thread state is larger); the slices
	 * past the bound stay open. */
	assert_true(lines >= LINES + 2 + (shape == OPEN_FLOWS ? 0 : unended) &&
		    lines < 2 * LINES + 2);
}

static void many_threads_with_open_slices(void **state)
{
	(void)state;
	check_keeps_to_the_bound(MANY_THREADS, "threads.json");
}

static void deep_unterminated_nesting(void **state)
{
	(void)state;
	check_keeps_to_the_bound(DEEP, "deep.json");
}

static void many_open_flows(void **state)
{
	(void)state;
	check_keeps_to_the_bound(OPEN_FLOWS, "flows.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_threads_with_open_slices),
		cmocka_unit_test(deep_unterminated_nesting),
		cmocka_unit_test(many_open_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
