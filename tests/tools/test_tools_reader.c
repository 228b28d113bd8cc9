/* SPDX-License-Identifier: MIT */
/*
 * The tools' streaming trace reader (tools/source/trace.h) and the helpers under it
 * (json.c, table.c): every value an event hands out, forms, gzip members, cuts,
 * positions, issues, errors.
 */
#include "json.h"
#include "table.h"
#include "tool_test.h"
#include "trace.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_SEEN 64

/* What a read produced, in order: events (by name) and issues (by kind and line). */
struct seen {
	char what[MAX_SEEN][80];
	size_t n;
};

static void on_issue(void *ctx, const struct trace_issue *issue)
{
	struct seen *s = ctx;

	if (s->n < MAX_SEEN)
		snprintf(s->what[s->n++], sizeof(s->what[0]), "issue %d line %llu col %llu",
			 (int)issue->kind, (unsigned long long)issue->line,
			 (unsigned long long)issue->col);
}

static const char *write_text(const char *name, const char *text)
{
	const char *path = tool_tmp(name);

	tool_write(path, text, strlen(text));
	return path;
}

static struct trace *open_path(const char *path, unsigned flags, struct seen *seen)
{
	struct trace_options o = {.flags = flags, .on_issue = on_issue, .ctx = seen};
	struct trace *r;

	assert_int_equal(trace_open(path, &o, &r), 0);
	return r;
}

/* Read every event, noting names; returns next()'s last result (0 or -1). */
static int read_all(struct trace *r, struct seen *seen)
{
	const struct trace_event *ev;
	int rc;

	while ((rc = trace_next(r, &ev)) == 1) {
		if (seen->n < MAX_SEEN)
			snprintf(seen->what[seen->n++], sizeof(seen->what[0]), "event %.*s",
				 (int)ev->name.len, ev->name.text != NULL ? ev->name.text : "");
	}
	return rc;
}

static void expect_text(const struct trace_value *v, enum trace_type type, const char *text)
{
	assert_int_equal(v->type, type);
	assert_non_null(v->text);
	assert_int_equal(v->len, strlen(text));
	assert_memory_equal(v->text, text, v->len);
	assert_int_equal(v->text[v->len], '\0');
}

/* ------------------------------------------------------------------ events */

static void event_values_are_typed_and_exact(void **state)
{
	const char *path = write_text(
		"fields.json",
		"[{\"ph\":\"X\", \"cat\":\"k\",\"name\":\"n\\u00e9\",\"ts\":1234.567,\"dur\":0.5,"
		"\"pid\":7,\"tid\":8,\"id\":\"0x1f\",\"s\":\"t\",\"bp\":\"e\",\n"
		" \"args\":{\"a\":1,\"b\":\"x\\ny\",\"c\":[1,{\"d\":null}],\"e\":true},"
		"\"extra\":[1, 2.50]}]");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_event *ev;
	const struct trace_status *st;

	(void)state;
	assert_int_equal(trace_next(r, &ev), 1);
	assert_int_equal(ev->phase, 'X');
	expect_text(&ev->ph, TRACE_STRING, "X");
	expect_text(&ev->name, TRACE_STRING, "n\xc3\xa9");
	expect_text(&ev->cat, TRACE_STRING, "k");
	expect_text(&ev->ts, TRACE_NUMBER, "1234.567");
	assert_true(ev->has_ts && ev->ts_exact);
	assert_int_equal(ev->ts_ns, 1234567);
	assert_true(ev->has_dur);
	assert_int_equal(ev->dur_ns, 500);
	assert_true(ev->has_pid && ev->has_tid);
	assert_int_equal(ev->pid_num, 7);
	assert_int_equal(ev->tid_num, 8);
	expect_text(&ev->id, TRACE_STRING, "0x1f");
	expect_text(&ev->s, TRACE_STRING, "t");
	expect_text(&ev->bp, TRACE_STRING, "e");
	expect_text(&ev->args, TRACE_OBJECT,
		    "{\"a\":1,\"b\":\"x\\ny\",\"c\":[1,{\"d\":null}],\"e\":true}");
	assert_int_equal(ev->nargs, 4);
	assert_string_equal(ev->arg[0].key, "a");
	expect_text(&ev->arg[0].value, TRACE_NUMBER, "1");
	expect_text(&ev->arg[1].value, TRACE_STRING, "x\ny");
	expect_text(&ev->arg[2].value, TRACE_ARRAY, "[1,{\"d\":null}]");
	expect_text(&ev->arg[3].value, TRACE_BOOL, "true");
	expect_text(trace_event_arg(ev, "c"), TRACE_ARRAY, "[1,{\"d\":null}]");
	assert_null(trace_event_arg(ev, "zz"));
	assert_string_equal(
		ev->json,
		"{\"ph\":\"X\",\"cat\":\"k\",\"name\":\"n\xc3\xa9\",\"ts\":1234.567,"
		"\"dur\":0.5,\"pid\":7,\"tid\":8,\"id\":\"0x1f\",\"s\":\"t\",\"bp\":\"e\","
		"\"args\":{\"a\":1,\"b\":\"x\\ny\",\"c\":[1,{\"d\":null}],\"e\":true},"
		"\"extra\":[1,2.50]}");
	assert_int_equal(ev->json_len, strlen(ev->json));
	assert_int_equal(ev->line, 1);
	assert_int_equal(ev->col, 2);
	assert_int_equal(ev->offset, 1);
	assert_int_equal(ev->index, 0);
	assert_int_equal(ev->duplicates, 0);
	assert_int_equal(trace_next(r, &ev), 0);
	st = trace_status(r);
	assert_true(st->complete);
	assert_false(st->cut);
	assert_int_equal(st->form, TRACE_FORM_ARRAY);
	assert_int_equal(st->events, 1);
	assert_int_equal(st->error, TRACE_OK);
	assert_int_equal(seen.n, 0);
	trace_close(r);
}

static void strings_are_rewritten_as_the_viewers_need(void **state)
{
	/* A surrogate pair, a control escape, an escaped slash, a raw 0x7F, invalid
	 * UTF-8 (0xff) and a lone surrogate (yajl decodes it to CESU bytes). */
	const char *path = write_text("strings.json",
				      "[{\"ph\":\"i\",\"name\":\"\\ud83d\\ude00 \\u0001\\/\x7f\xff"
				      "\\udc00\"}]");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_event *ev;

	(void)state;
	assert_int_equal(trace_next(r, &ev), 1);
	expect_text(&ev->name, TRACE_STRING,
		    "\xf0\x9f\x98\x80 \x01/\x7f\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(ev->json, "{\"ph\":\"i\",\"name\":\"\xf0\x9f\x98\x80 \\u0001/\\u007f"
				      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}");
	trace_close(r);
}

static void numbers_keep_their_text(void **state)
{
	const char *path =
		write_text("numbers.json",
			   "[{\"ts\":1e3,\"dur\":0.0015,\"pid\":\"12\",\"tid\":1.5},"
			   "{\"ts\":-2,\"dur\":12345678901234567890,\"pid\":-1,\"tid\":4294967296},"
			   "{\"ts\":\"5\",\"id\":17}]");
	struct trace *r = open_path(path, 0, NULL);
	const struct trace_event *ev;

	(void)state;
	assert_int_equal(trace_next(r, &ev), 1);
	expect_text(&ev->ts, TRACE_NUMBER, "1e3");
	assert_true(ev->has_ts);
	assert_false(ev->ts_exact);
	assert_int_equal(ev->ts_ns, 1000000);
	assert_int_equal(ev->dur_ns, 2); /* llround(1.5), as Perfetto */
	assert_false(ev->dur_exact);
	assert_false(ev->has_pid);
	expect_text(&ev->pid, TRACE_STRING, "12");
	assert_false(ev->has_tid);
	expect_text(&ev->tid, TRACE_NUMBER, "1.5");
	assert_int_equal(ev->phase, '\0');
	assert_int_equal(ev->ph.type, TRACE_ABSENT);
	assert_null(ev->ph.text);

	assert_int_equal(trace_next(r, &ev), 1);
	assert_true(ev->has_ts && ev->ts_exact);
	assert_int_equal(ev->ts_ns, -2000);
	assert_false(ev->has_dur); /* beyond int64 nanoseconds */
	expect_text(&ev->dur, TRACE_NUMBER, "12345678901234567890");
	assert_int_equal(ev->pid_num, -1);
	assert_int_equal(ev->tid_num, 4294967296);
	assert_int_equal(ev->index, 1);

	assert_int_equal(trace_next(r, &ev), 1);
	assert_false(ev->has_ts);
	expect_text(&ev->ts, TRACE_STRING, "5");
	expect_text(&ev->id, TRACE_NUMBER, "17");
	assert_int_equal(trace_next(r, &ev), 0);
	trace_close(r);
}

static void duplicate_keys_keep_the_last(void **state)
{
	const char *path = write_text("dup.json", "[\n{\"name\":\"a\",\"ts\":1,\"name\":\"b\"}\n]");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_event *ev;

	(void)state;
	assert_int_equal(trace_next(r, &ev), 1);
	expect_text(&ev->name, TRACE_STRING, "b");
	assert_int_equal(ev->duplicates, 1u << TRACE_F_NAME);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.what[0], "issue 10 line 2 col 26");
	trace_close(r);
}

/* ----------------------------------------------------------------- forms */

static void object_form_skips_other_keys(void **state)
{
	const char *path = write_text(
		"object.json",
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"x\":[1,{\"traceEvents\":2}]},\n"
		"\"traceEvents\":[{\"name\":\"a\"},\n{\"name\":\"b\"}],\"metadata\":{\"y\":\"z\"}}"
		"\n");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_status *st;

	(void)state;
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.what[0], "event a");
	assert_string_equal(seen.what[1], "event b");
	st = trace_status(r);
	assert_int_equal(st->form, TRACE_FORM_OBJECT);
	assert_true(st->complete);
	assert_true(st->events_closed);
	trace_close(r);
}

static void cut_inside_a_line_drops_the_partial_event(void **state)
{
	const char *path = write_text("cut.json", "[\n{\"name\":\"a\"},\n{\"name\":\"b\"},\n"
						  "{\"ph\":\"X\",\"na");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_status *st;

	(void)state;
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.what[1], "event b");
	st = trace_status(r);
	assert_true(st->cut);
	assert_true(st->cut_in_event);
	assert_int_equal(st->cut_bytes, 13);
	assert_false(st->complete);
	assert_int_equal(st->error, TRACE_OK);
	trace_close(r);
}

static void cut_after_a_whole_line_loses_nothing(void **state)
{
	const char *path =
		write_text("cutline.json", "[\n{\"name\":\"a\"},\n{\"name\":\"b\"},\n   ");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_status *st;

	(void)state;
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(seen.n, 2);
	st = trace_status(r);
	assert_true(st->cut);
	assert_false(st->cut_in_event);
	assert_int_equal(st->cut_bytes, 0);
	trace_close(r);
}

static void standard_input_is_read_as_dash(void **state)
{
	const char *path = write_text("stdin.json", "[{\"name\":\"in\"}]");
	int saved = dup(0), fd = open(path, 0);
	struct seen seen = {0};
	struct trace *r;

	(void)state;
	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, 0), 0);
	r = open_path("-", 0, &seen);
	assert_string_equal(trace_name(r), "<stdin>");
	assert_int_equal(read_all(r, &seen), 0);
	trace_close(r);
	dup2(saved, 0);
	close(saved);
	close(fd);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.what[0], "event in");
}

/* ------------------------------------------------------------------- gzip */

#define GZ_EVENTS 300

/* GZ_EVENTS events named e0, e1, ... one per line; *len gets the length. */
static char *numbered_trace(size_t *len)
{
	size_t cap = GZ_EVENTS * 64 + 16, n = 0;
	char *t = malloc(cap);

	assert_non_null(t);
	n += (size_t)snprintf(t + n, cap - n, "[\n");
	for (int i = 0; i < GZ_EVENTS; i++)
		n += (size_t)snprintf(
			t + n, cap - n,
			"{\"ph\":\"i\",\"name\":\"e%d\",\"ts\":%d,\"pid\":1,\"tid\":1}%s\n", i, i,
			i + 1 < GZ_EVENTS ? "," : "");
	n += (size_t)snprintf(t + n, cap - n, "]\n");
	*len = n;
	return t;
}

/* Read a gzip file of numbered events: they must come in order from e0. */
static uint64_t read_numbered(const char *path, const struct trace_status **st_out,
			      struct trace **keep)
{
	struct trace *r = open_path(path, 0, NULL);
	const struct trace_event *ev;
	uint64_t n = 0;
	char want[16];

	while (trace_next(r, &ev) == 1) {
		snprintf(want, sizeof(want), "e%llu", (unsigned long long)n);
		expect_text(&ev->name, TRACE_STRING, want);
		assert_int_equal(ev->ts_ns, (int64_t)n * 1000);
		n++;
	}
	*st_out = trace_status(r);
	*keep = r;
	return n;
}

static void gzip_members_read_as_one_text(void **state)
{
	size_t len, gz_len, members;
	char *text = numbered_trace(&len);
	unsigned char *gz = tool_gzip(text, len, 1000, &gz_len, NULL, 0, &members);
	const char *path = tool_tmp("members.json.gz");
	const struct trace_status *st;
	struct trace *r;

	(void)state;
	assert_true(members > 5);
	tool_write(path, gz, gz_len);
	assert_int_equal(read_numbered(path, &st, &r), GZ_EVENTS);
	assert_true(st->gzip);
	assert_true(st->complete);
	assert_false(st->gzip_cut);
	assert_int_equal(st->gzip_members, members);
	assert_int_equal(st->text_bytes, len);
	assert_int_equal(st->input_bytes, gz_len);
	trace_close(r);
	free(gz);
	free(text);
}

static void gzip_cut_inside_a_member_keeps_what_inflates(void **state)
{
	size_t len, gz_len, members, whole = 0;
	char *text = numbered_trace(&len);
	struct gz_member m[64];
	unsigned char *gz = tool_gzip(text, len, 1000, &gz_len, m, 64, &members);
	const char *path = tool_tmp("cutmember.json.gz");
	const struct trace_status *st;
	struct trace *r;
	uint64_t n;

	(void)state;
	/* The events wholly inside the first three members: their lines, but "[". */
	for (size_t i = 0; i < m[2].text_end; i++)
		whole += text[i] == '\n';
	whole--;
	/* Cut in the middle of the fourth member's compressed bytes. */
	tool_write(path, gz, m[2].gz_end + (m[3].gz_end - m[2].gz_end) / 2);
	n = read_numbered(path, &st, &r);
	assert_true(n >= whole);
	assert_true(n < whole + (m[3].text_end - m[2].text_end) / 40);
	assert_true(st->gzip_cut);
	assert_true(st->cut);
	assert_int_equal(st->gzip_members, 4);
	assert_int_equal(st->error, TRACE_OK);
	trace_close(r);
	free(gz);
	free(text);
}

static void gzip_cut_in_the_trailer_loses_no_event(void **state)
{
	size_t len, gz_len;
	char *text = numbered_trace(&len);
	unsigned char *gz = tool_gzip(text, len, 1000, &gz_len, NULL, 0, NULL);
	const char *path = tool_tmp("trailer.json.gz");
	const struct trace_status *st;
	struct trace *r;

	(void)state;
	tool_write(path, gz, gz_len - 3);
	assert_int_equal(read_numbered(path, &st, &r), GZ_EVENTS);
	assert_true(st->gzip_cut);
	assert_true(st->complete); /* the JSON closed; the gzip did not */
	trace_close(r);
	free(gz);
	free(text);
}

static void gzip_corrupt_member_is_an_error_after_the_good_ones(void **state)
{
	size_t len, gz_len, members, first = 0;
	char *text = numbered_trace(&len);
	struct gz_member m[64];
	unsigned char *gz = tool_gzip(text, len, 1000, &gz_len, m, 64, &members);
	const char *path = tool_tmp("corrupt.json.gz");
	const struct trace_status *st;
	struct trace *r;
	uint64_t n;

	(void)state;
	for (size_t i = 0; i < m[0].text_end; i++)
		first += text[i] == '\n';
	first--;
	/* Garble the deflate data of the second member, past its 10-byte header. */
	for (size_t i = m[0].gz_end + 20; i < m[0].gz_end + 60; i++)
		gz[i] ^= 0x5a;
	tool_write(path, gz, gz_len);
	n = read_numbered(path, &st, &r);
	assert_int_equal(st->error, TRACE_ERR_GZIP);
	assert_true(tool_has(st->message, "corrupt gzip data in member 2"));
	assert_true(n >= first);
	assert_true(n < GZ_EVENTS);
	trace_close(r);
	free(gz);
	free(text);
}

/* Bytes after the last member: an issue, and every event. */
static void gzip_trailing_bytes_are_an_issue(void **state)
{
	size_t len, gz_len;
	char *text = numbered_trace(&len);
	unsigned char *gz = tool_gzip(text, len, 1000, &gz_len, NULL, 0, NULL);
	const char *path = tool_tmp("trailing.json.gz");
	struct seen seen = {0};
	struct trace *r;

	(void)state;
	gz = realloc(gz, gz_len + 7);
	assert_non_null(gz);
	memcpy(gz + gz_len, "garbage", 7);
	tool_write(path, gz, gz_len + 7);
	r = open_path(path, 0, &seen);
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(trace_status(r)->events, GZ_EVENTS);
	assert_int_equal(trace_status(r)->issues, 1);
	assert_true(trace_status(r)->complete);
	trace_close(r);
	free(gz);
	free(text);
}

/* -------------------------------------------------------- positions, issues */

static void syntax_error_names_file_line_and_column(void **state)
{
	const char *path =
		write_text("syntax.json", "[\n{\"name\":\"a\"},\n  {\"ph\":\"X\" 5}\n]\n");
	struct seen seen = {0};
	struct trace *r = open_path(path, 0, &seen);
	const struct trace_status *st;
	char want[4200];

	(void)state;
	assert_int_equal(read_all(r, &seen), -1);
	assert_int_equal(seen.n, 1);
	st = trace_status(r);
	assert_int_equal(st->error, TRACE_ERR_SYNTAX);
	assert_int_equal(st->line, 3);
	assert_int_equal(st->col, 13);
	snprintf(want, sizeof(want), "%s:3:13: invalid JSON: ", path);
	assert_memory_equal(st->message, want, strlen(want));
	assert_string_equal(st->what, st->message + strlen(want) - strlen("invalid JSON: "));
	/* It stays an error. */
	assert_int_equal(read_all(r, &seen), -1);
	trace_close(r);
}

/* Lines of 5000 events across many 64 KiB blocks, with (check) or without the
 * scanner, and a raw newline in a string at line 100 that still counts as a line. */
static void lines_are_counted_across_blocks(void **state)
{
	size_t cap = 5000 * 200, n = 0;
	char *t = malloc(cap);
	const char *path = tool_tmp("lines.json");

	(void)state;
	assert_non_null(t);
	n += (size_t)snprintf(t + n, cap - n, "[\n");
	for (int i = 0; i < 5000; i++)
		n += (size_t)snprintf(t + n, cap - n,
				      "{\"ph\":\"i\",\"name\":\"line %d%s\",\"ts\":1,\"pid\":1,"
				      "\"tid\":1,\"args\":{\"pad\":\"%060d\"}},\n",
				      i, i == 98 ? "\nmore" : "", i);
	n += (size_t)snprintf(t + n, cap - n, "{oops}\n]\n");
	tool_write(path, t, n);
	for (unsigned flags = 0; flags <= TRACE_READ_CHECK_STRINGS;
	     flags += TRACE_READ_CHECK_STRINGS) {
		struct seen seen = {0};
		struct trace *r = open_path(path, flags, &seen);
		const struct trace_event *ev;
		const struct trace_status *st;
		uint64_t i = 0;
		int rc;

		while ((rc = trace_next(r, &ev)) == 1) {
			/* Line 2 holds event 0; the raw newline in event 98 adds one. */
			assert_int_equal(ev->line, i + 2 + (i > 98));
			assert_int_equal(ev->col, 1);
			i++;
		}
		st = trace_status(r);
		if (flags == 0) {
			/* Without the scanner, a raw newline is invalid JSON. */
			assert_int_equal(rc, -1);
			assert_int_equal(i, 98);
			assert_int_equal(st->line, 100);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(i, 5000);
			assert_int_equal(st->line, 5003);
			assert_int_equal(st->col, 2);
			assert_int_equal(seen.n, 1);
			assert_string_equal(seen.what[0], "issue 6 line 100 col 26");
		}
		trace_close(r);
	}
	free(t);
}

static void issues_come_in_file_order_with_events(void **state)
{
	const char *path = write_text("order.json", "\xef\xbb\xbf[\n{\"name\":\"one\"},\n"
						    "{\"name\":\"t\x01wo\"},\n"
						    "{\"name\":\"caf\\u00e9\"},\n"
						    "{\"name\":\"\\ud83d\\ude00\"},\n"
						    "{\"name\":\"bad \xc3(\"},\n"
						    "{\"name\":\"six\"},\n]\n");
	struct seen seen = {0};
	struct trace *r = open_path(path, TRACE_READ_CHECK_STRINGS, &seen);
	static const char *const want[] = {
		"issue 0 line 1 col 1",
		"event one",
		"issue 6 line 3 col 11",
		"event t wo",
		"issue 9 line 4 col 13",
		"event caf\xc3\xa9",
		"issue 8 line 5 col 10",
		"event \xf0\x9f\x98\x80",
		"issue 7 line 6 col 14",
		"event bad \xef\xbf\xbd(",
		"event six",
		"issue 2 line 8 col 1",
	};

	(void)state;
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(seen.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < seen.n; i++)
		assert_string_equal(seen.what[i], want[i]);
	assert_true(trace_status(r)->complete);
	assert_int_equal(trace_status(r)->issues, 6);
	trace_close(r);
}

static void zero_bytes_are_read_as_blanks(void **state)
{
	static const char text[] = "[\n{\"name\":\"a\"},\n\0\0\0\0\0\n{\"name\":\"b\"},\n\0\0";
	const char *path = tool_tmp("zeros.json");
	struct seen seen = {0};
	struct trace *r;
	const struct trace_status *st;

	(void)state;
	tool_write(path, text, sizeof(text) - 1);
	r = open_path(path, 0, &seen);
	assert_int_equal(read_all(r, &seen), 0);
	assert_int_equal(seen.n, 4);
	assert_string_equal(seen.what[0], "event a");
	assert_string_equal(seen.what[1], "issue 1 line 3 col 1");
	assert_string_equal(seen.what[2], "event b");
	assert_string_equal(seen.what[3], "issue 1 line 5 col 1");
	st = trace_status(r);
	assert_true(st->cut);
	assert_false(st->cut_in_event);
	trace_close(r);
}

static void not_a_trace_is_an_error(void **state)
{
	static const struct {
		const char *text;
		enum trace_error error;
		const char *what;
	} cases[] = {
		{"", TRACE_ERR_SYNTAX, "empty: no JSON in it"},
		{" \n ", TRACE_ERR_SYNTAX, "blank: no JSON in it"},
		{"42", TRACE_ERR_SYNTAX, "the top level is a number"},
		{"{\"traceEvents\":\"x\"}", TRACE_ERR_SYNTAX, "\"traceEvents\" is a string"},
		{"[] x", TRACE_ERR_SYNTAX, "trailing garbage"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_text("notrace.json", cases[i].text);
		struct trace *r = open_path(path, 0, NULL);
		const struct trace_event *ev;

		assert_int_equal(trace_next(r, &ev), -1);
		assert_int_equal(trace_status(r)->error, cases[i].error);
		if (!tool_has(trace_status(r)->what, cases[i].what))
			fail_msg("case %zu: %s", i, trace_status(r)->message);
		trace_close(r);
	}
}

static void too_deep_nesting_is_a_limit(void **state)
{
	char text[2 * (TRACE_MAX_DEPTH + 10) + 64];
	size_t n = 0;
	const char *path;
	struct trace *r;
	const struct trace_event *ev;

	(void)state;
	n += (size_t)sprintf(text, "[{\"args\":");
	for (int i = 0; i < TRACE_MAX_DEPTH + 5; i++)
		text[n++] = '[';
	text[n] = '\0';
	path = write_text("deep.json", text);
	r = open_path(path, 0, NULL);
	assert_int_equal(trace_next(r, &ev), -1);
	assert_int_equal(trace_status(r)->error, TRACE_ERR_LIMIT);
	trace_close(r);
}

static void missing_file_fails_to_open(void **state)
{
	struct trace *r = (void *)1;

	(void)state;
	assert_int_equal(trace_open(tool_tmp("absent.json"), NULL, &r), -2 /* ENOENT */);
	assert_null(r);
}

/* ---------------------------------------------------------------- helpers */

static void microseconds_are_written_and_parsed_exactly(void **state)
{
	static const struct {
		int64_t ns;
		const char *text;
	} cases[] = {
		{0, "0"},	{1, "0.001"},  {10, "0.01"},
		{100, "0.1"},	{1500, "1.5"}, {1234567, "1234.567"},
		{-1, "-0.001"}, {-2000, "-2"}, {INT64_MAX, "9223372036854775.807"},
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ns;
		bool exact;

		*json_put_us(buf, cases[i].ns) = '\0';
		assert_string_equal(buf, cases[i].text);
		assert_int_equal(json_parse_us(cases[i].text, strlen(cases[i].text), &ns, &exact),
				 0);
		assert_true(exact);
		assert_int_equal(ns, cases[i].ns);
	}
	{
		int64_t ns;
		bool exact;

		assert_int_equal(json_parse_us("2.5e-3", 6, &ns, &exact), 0);
		assert_false(exact);
		assert_int_equal(ns, 3); /* llround(2.5) */
		assert_int_equal(json_parse_us("1.2345", 6, &ns, &exact), 0);
		assert_int_equal(ns, 1235);
		assert_int_equal(json_parse_us("01", 2, &ns, &exact), -1);
		assert_int_equal(json_parse_us("1.", 2, &ns, &exact), -1);
		assert_int_equal(json_parse_us("9223372036854776", 16, &ns, &exact), -1);
		assert_int_equal(json_parse_us("1e400", 5, &ns, &exact), -1);
		/* The fraction can carry past the range: out of range, not wrapped. */
		assert_int_equal(json_parse_us("18446744073709551.999", 21, &ns, &exact), -1);
		assert_int_equal(json_parse_us("9223372036854775.808", 20, &ns, &exact), -1);
		assert_int_equal(json_parse_us("-9223372036854775.808", 21, &ns, &exact), 0);
		assert_int_equal(ns, INT64_MIN);
		assert_int_equal(json_parse_us("-9223372036854775.809", 21, &ns, &exact), -1);
	}
	*rtr__jsontext_i64(buf, INT64_MIN) = '\0';
	assert_string_equal(buf, "-9223372036854775808");
}

static void json_strings_escape_and_replace(void **state)
{
	struct buf b = {0};

	(void)state;
	assert_int_equal(json_put_string(&b, "a\"b\\c\n\t\r\b\f\x01\x1f\x7f/", 14), 0);
	assert_int_equal(b.len, strlen("\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f/\""));
	assert_memory_equal(b.p, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f/\"", b.len);
	b.len = 0;
	/* A stray continuation, an overlong '/', a surrogate, a cut 3-byte sequence: one
	 * U+FFFD per maximal invalid part; valid 2, 3 and 4-byte sequences kept. */
	assert_int_equal(json_put_string(&b,
					 "\x80\xc0\xaf\xed\xa0\x80\xc3\xa9\xe2\x82\xac"
					 "\xf0\x9f\x98\x80\xe2\x82",
					 17),
			 7);
	assert_memory_equal(b.p,
			    "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf"
			    "\xbd\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd\"",
			    b.len);
	b.len = 0;
	assert_int_equal(utf8_put_valid(&b, "ok \xff", 4), 1);
	assert_memory_equal(b.p, "ok \xef\xbf\xbd", 6);
	buf_free(&b);
}

static void table_keeps_values_in_place_and_order(void **state)
{
	struct table t;
	int *first = NULL;

	(void)state;
	table_init(&t, sizeof(int));
	for (int i = 0; i < 10000; i++) {
		bool created;
		int *v = table_put(&t, &i, sizeof(i), &created);

		assert_non_null(v);
		assert_true(created);
		*v = i * 3;
		if (i == 0)
			first = v;
	}
	assert_int_equal(t.count, 10000);
	assert_ptr_equal(table_get(&t, &(int){0}, sizeof(int)), first);
	for (int i = 0; i < 10000; i += 2)
		table_remove(&t, table_get(&t, &i, sizeof(i)));
	assert_int_equal(t.count, 5000);
	{
		int want = 1;

		for (int *v = table_first(&t); v != NULL; v = table_next(v), want += 2) {
			size_t len;
			const int *key = table_key(&t, v, &len);

			assert_int_equal(len, sizeof(int));
			assert_int_equal(*key, want);
			assert_int_equal(*v, want * 3);
			assert_ptr_equal(table_get(&t, key, len), v);
		}
		assert_int_equal(want, 10001);
	}
	for (int i = 0; i < 10000; i += 2)
		assert_null(table_get(&t, &i, sizeof(i)));
	table_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_values_are_typed_and_exact),
		cmocka_unit_test(strings_are_rewritten_as_the_viewers_need),
		cmocka_unit_test(numbers_keep_their_text),
		cmocka_unit_test(duplicate_keys_keep_the_last),
		cmocka_unit_test(object_form_skips_other_keys),
		cmocka_unit_test(cut_inside_a_line_drops_the_partial_event),
		cmocka_unit_test(cut_after_a_whole_line_loses_nothing),
		cmocka_unit_test(standard_input_is_read_as_dash),
		cmocka_unit_test(gzip_members_read_as_one_text),
		cmocka_unit_test(gzip_cut_inside_a_member_keeps_what_inflates),
		cmocka_unit_test(gzip_cut_in_the_trailer_loses_no_event),
		cmocka_unit_test(gzip_corrupt_member_is_an_error_after_the_good_ones),
		cmocka_unit_test(gzip_trailing_bytes_are_an_issue),
		cmocka_unit_test(syntax_error_names_file_line_and_column),
		cmocka_unit_test(lines_are_counted_across_blocks),
		cmocka_unit_test(issues_come_in_file_order_with_events),
		cmocka_unit_test(zero_bytes_are_read_as_blanks),
		cmocka_unit_test(not_a_trace_is_an_error),
		cmocka_unit_test(too_deep_nesting_is_a_limit),
		cmocka_unit_test(missing_file_fails_to_open),
		cmocka_unit_test(microseconds_are_written_and_parsed_exactly),
		cmocka_unit_test(json_strings_escape_and_replace),
		cmocka_unit_test(table_keeps_values_in_place_and_order),
	};

	return cmocka_run_group_tests_name("tools_reader", tests, NULL, NULL);
}
