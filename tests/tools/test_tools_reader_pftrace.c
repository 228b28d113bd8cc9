/* SPDX-License-Identifier: MIT */
/*
 * The one pull interface (tools/source/trace.h) on both formats: a trace the library
 * records as JSON and as a .pftrace reads as the same events, field by field; a
 * .pftrace reads as the events `convert --to json` writes of it, each placed by its
 * packet; standard input works for both, from a pipe; a .pftrace cut inside a packet
 * reads as cut, and a malformed one stops with "FILE: packet N at byte O: what"; and
 * reading one writes no file anywhere, not even in $TMPDIR.
 *
 * The traces come from the library (rtr_start() with a path ending in .json or
 * .pftrace), recorded once for the group, in one process so that pid and tid agree.
 * Their slices have explicit times, so that ts agrees between the two recordings
 * too, from the first slice; the events timed by the library as they are called (B,
 * E, i) agree in all else.
 */
#include <ringtrace.h>
#include <ringtrace/value.h>

#include "tool_test.h"
#include "trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define ROUNDS 40

static char json_path[4200], pf_path[4200], packed_path[4200];

/* {"shape":[3,4],"dtype":"f\"32","ok":true,"x":-1.5,"n":null,"deep":[[1],{"a":"b"}],
 * "u":9223372036854775808}: a value of every kind a .pftrace reads back alike (an
 * empty array or object has no annotation there, so none here). */
static uint32_t build_value(unsigned char *buf, size_t cap)
{
	struct rtr_value v;

	rtr_value_init(&v, buf, cap);
	rtr_value_object(&v, 7);
	rtr_value_key(&v, "shape", 5);
	rtr_value_array(&v, 2);
	rtr_value_i64(&v, 3);
	rtr_value_i64(&v, 4);
	rtr_value_key(&v, "dtype", 5);
	rtr_value_str(&v, "f\"32", 4);
	rtr_value_key(&v, "ok", 2);
	rtr_value_bool(&v, true);
	rtr_value_key(&v, "x", 1);
	rtr_value_f64(&v, -1.5);
	rtr_value_key(&v, "n", 1);
	rtr_value_null(&v);
	rtr_value_key(&v, "deep", 4);
	rtr_value_array(&v, 2);
	rtr_value_array(&v, 1);
	rtr_value_i64(&v, 1);
	rtr_value_object(&v, 1);
	rtr_value_key(&v, "a", 1);
	rtr_value_str(&v, "b", 1);
	rtr_value_key(&v, "u", 1);
	rtr_value_u64(&v, 1ull << 63);
	assert_false(v.cut);
	return v.len;
}

/* The same events into path: slices with explicit times and args of every type,
 * and events the library times itself. A .pftrace of plain packets, unless packed
 * (compressed batches): the tests that place events by their packets read the plain
 * one. */
static void record(const char *path, unsigned packed)
{
	static const int64_t nums[] = {1, -2, 3};
	static const char *const strs[] = {"a", "b\"c"};
	struct rtr_config cfg;
	uint64_t base;
	unsigned char value[256];
	uint32_t value_len = build_value(value, sizeof(value));

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.pf_compress = packed;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	base = rtr_now_ns();
	rtr_complete("app", "anchor", base, 1);
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t = base + 10000 * (uint64_t)i + 10;

		rtr_complete_v("solver", "step", t, 5000, RTR_ARG_I64("i", i),
			       RTR_ARG_STR("note", "quote \" backslash \\ tab \t \xc3\xa9 \xff"),
			       RTR_ARG_F64("f", 0.25 * i), RTR_ARG_U64("u", 1ull << 60),
			       RTR_ARG_BOOL("b", i & 1), RTR_ARG_I64_ARRAY("nums", nums, 3),
			       RTR_ARG_STR_ARRAY("strs", strs, 2),
			       RTR_ARG_VALUE("value", value, value_len));
		rtr_complete("solver", "inner", t + 10, 1000);
		rtr_begin("solver", "outer");
		rtr_instant("solver", "mid");
		rtr_end("solver", "outer");
	}
	assert_int_equal(rtr_stop(), 0);
}

static int record_both(void **state)
{
	(void)state;
	snprintf(json_path, sizeof(json_path), "%s", tool_tmp("src.json"));
	snprintf(pf_path, sizeof(pf_path), "%s", tool_tmp("src.pftrace"));
	snprintf(packed_path, sizeof(packed_path), "%s", tool_tmp("src-packed.pftrace"));
	record(json_path, 0);
	record(pf_path, 0);
	record(packed_path, 1);
	return 0;
}

/* ------------------------------------------------------------ helpers */

static struct trace *open_ok(const char *path)
{
	struct trace *t;

	assert_int_equal(trace_open(path, NULL, &t), 0);
	return t;
}

static bool value_eq(const struct trace_value *a, const struct trace_value *b)
{
	return a->type == b->type && a->len == b->len &&
	       (a->len == 0 || memcmp(a->text, b->text, a->len) == 0);
}

static const char *shown(const struct trace_event *ev)
{
	static char buf[2][400];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%.*s", (int)(ev->json_len < 390 ? ev->json_len : 390),
		 ev->json);
	return buf[k];
}

/* The same event but perhaps its time: every known key, every arg by key, type and
 * text. */
static void expect_same_event(const struct trace_event *a, const struct trace_event *b)
{
	/* dur by its ns below: its text may be a double's where ts + dur needs it */
	const struct trace_value *ka[] = {&a->ph,  &a->name, &a->cat, &a->pid,
					  &a->tid, &a->id,   &a->s,   &a->bp};
	const struct trace_value *kb[] = {&b->ph,  &b->name, &b->cat, &b->pid,
					  &b->tid, &b->id,   &b->s,   &b->bp};

	for (size_t i = 0; i < sizeof(ka) / sizeof(ka[0]); i++)
		if (!value_eq(ka[i], kb[i]))
			fail_msg("key %zu differs:\n%s\n%s", i, shown(a), shown(b));
	assert_int_equal(a->phase, b->phase);
	assert_int_equal(a->has_dur, b->has_dur);
	assert_int_equal(a->dur_ns, b->dur_ns);
	assert_int_equal(a->has_pid, b->has_pid);
	assert_int_equal(a->pid_num, b->pid_num);
	assert_int_equal(a->has_tid, b->has_tid);
	assert_int_equal(a->tid_num, b->tid_num);
	assert_int_equal(a->has_ts, b->has_ts);
	if (a->nargs != b->nargs)
		fail_msg("args differ:\n%s\n%s", shown(a), shown(b));
	for (size_t i = 0; i < a->nargs; i++) {
		assert_int_equal(a->arg[i].key_len, b->arg[i].key_len);
		assert_memory_equal(a->arg[i].key, b->arg[i].key, a->arg[i].key_len);
		if (!value_eq(&a->arg[i].value, &b->arg[i].value))
			fail_msg("arg %s differs:\n%s\n%s", a->arg[i].key, shown(a), shown(b));
	}
}

/* Events that only one format has: the markers (their origins differ, and the
 * .pftrace's says "format") and the counters the Perfetto writer adds. */
static bool format_own(const struct trace_event *ev)
{
	return ev->name.type == TRACE_STRING && ev->name.len > 11 &&
	       memcmp(ev->name.text, "ringtrace: ", 11) == 0;
}

static int next_shared(struct trace *t, const struct trace_event **ev)
{
	int rc;

	while ((rc = trace_next(t, ev)) == 1 && format_own(*ev))
		;
	return rc;
}

/* The byte offsets of a .pftrace's packets (field 1 of Trace); their count. */
static size_t packet_offsets(const unsigned char *p, size_t len, size_t *at, size_t max)
{
	size_t n = 0, k = 0;

	while (k < len) {
		uint64_t size = 0;
		unsigned shift = 0;
		size_t q = k + 1;

		assert_int_equal(p[k], 0x0a);
		assert_true(n < max);
		at[n++] = k;
		while (q < len && (p[q] & 0x80))
			size |= (uint64_t)(p[q++] & 0x7f) << shift, shift += 7;
		size |= (uint64_t)p[q++] << shift;
		k = q + (size_t)size;
	}
	return n;
}

/* Is the packet at p (n bytes to the file's end) a compressed batch: its first field
 * compressed_packets (50, length-delimited: the key's varint 0x92 0x03)? */
static bool is_batch(const unsigned char *p, size_t n)
{
	size_t k = 1;

	while (k < n && (p[k] & 0x80))
		k++;
	return k + 2 < n && p[k + 1] == 0x92 && p[k + 2] == 0x03;
}

/* ------------------------------------------------------------ the same events */

/* "outer", a slice of rtr_begin() and rtr_end() at the times the run took: one X in
 * either file, where its E came (the .pftrace's BEGIN held by the reader until its
 * END), the same but for its times. Returns whether ea is one. */
static bool same_timed_slice(const struct trace_event *ea, const struct trace_event *eb)
{
	if (!trace_value_is(&ea->name, "outer"))
		return false;
	if (ea->phase != 'X' || eb->phase != 'X' || !value_eq(&ea->name, &eb->name) ||
	    !value_eq(&ea->cat, &eb->cat) || !value_eq(&ea->pid, &eb->pid) ||
	    !value_eq(&ea->tid, &eb->tid) || ea->nargs != eb->nargs || !ea->has_dur || !eb->has_dur)
		fail_msg("not the same slice:\n%s\n%s", shown(ea), shown(eb));
	return true;
}

/* The library's JSON and .pftrace of the same run: the same events in the same
 * order, each slice one X where its E is (the JSON writes it so, the reader of the
 * .pftrace holds its BEGIN until its END), the slices with explicit times at the
 * same ts from the first one. */
static void json_and_pftrace_read_as_the_same_events(void **state)
{
	struct trace *a = open_ok(json_path), *b = open_ok(pf_path);
	const struct trace_event *ea, *eb;
	int64_t anchor_a = 0, anchor_b = 0;
	size_t n = 0, timed = 0, slices = 0;
	int ra, rb;

	(void)state;
	for (;;) {
		ra = next_shared(a, &ea);
		rb = next_shared(b, &eb);
		assert_int_equal(ra, rb);
		if (ra != 1)
			break;
		assert_false(ea->in_packet);
		assert_true(eb->in_packet);
		n++;
		if (same_timed_slice(ea, eb)) {
			slices++;
			continue;
		}
		expect_same_event(ea, eb);
		if (trace_value_is(&ea->name, "anchor")) {
			anchor_a = ea->ts_ns;
			anchor_b = eb->ts_ns;
		}
		if (ea->phase == 'X') { /* the slices with explicit times */
			if (ea->ts_ns - anchor_a != eb->ts_ns - anchor_b)
				fail_msg("ts differs:\n%s\n%s", shown(ea), shown(eb));
			timed++;
		}
	}
	assert_int_equal(ra, 0);
	/* M events, the anchor, and four lines a round */
	assert_true(n >= 1 + 4 * ROUNDS);
	assert_int_equal(timed, 1 + 2 * ROUNDS);
	assert_int_equal(slices, ROUNDS);
	assert_int_equal(trace_status(a)->format, TRACE_FORMAT_JSON);
	assert_int_equal(trace_status(b)->format, TRACE_FORMAT_PFTRACE);
	assert_true(trace_status(b)->complete);
	assert_false(trace_status(b)->cut);
	assert_int_equal(trace_status(b)->error, TRACE_OK);
	trace_close(a);
	trace_close(b);
}

/* Packed (compressed batches) and plain .pftrace of the same run read as the same
 * events, the batches' packets each placed at its batch's packet; every command reads
 * the packed one, and one cut inside its last batch reads as cut after the others. */
static void packed_reads_as_plain(void **state)
{
	struct trace *a = open_ok(pf_path), *b = open_ok(packed_path);
	const struct trace_event *ea, *eb;
	int64_t anchor_a = 0, anchor_b = 0;
	size_t plain_len, packed_len, at[4096], n = 0;
	unsigned char *packed = (unsigned char *)tu_read_file(packed_path, &packed_len);
	int ra, rb;

	(void)state;
	free(tu_read_file(pf_path, &plain_len));
	assert_true(packed_len * 2 < plain_len); /* packed it is */
	size_t npackets = packet_offsets(packed, packed_len, at, 4096);
	for (;;) {
		ra = next_shared(a, &ea);
		rb = next_shared(b, &eb);
		assert_int_equal(ra, rb);
		if (ra != 1)
			break;
		if (!same_timed_slice(ea, eb))
			expect_same_event(ea, eb);
		if (trace_value_is(&ea->name, "anchor")) {
			anchor_a = ea->ts_ns;
			anchor_b = eb->ts_ns;
		}
		if (ea->phase == 'X' && !trace_value_is(&ea->name, "outer") &&
		    ea->ts_ns - anchor_a != eb->ts_ns - anchor_b)
			fail_msg("ts differs:\n%s\n%s", shown(ea), shown(eb));
		/* placed at a packet of the file: its own, or its batch's */
		size_t k = 0;
		while (k < npackets && at[k] != eb->offset)
			k++;
		assert_true(k < npackets);
		n++;
	}
	assert_int_equal(ra, 0);
	assert_true(n >= 1 + 4 * ROUNDS); /* the anchor, four lines a round (outer one X) */
	assert_true(trace_status(b)->complete);
	trace_close(a);
	trace_close(b);

	struct tool_run r;
	tool_run(&r, NULL, "check", packed_path, NULL);
	if (r.status != 0 || !tool_has(r.out, "compressed batch"))
		fail_msg("check: %d\n%s%s", r.status, r.out, r.err);
	tool_run_free(&r);
	tool_run(&r, NULL, "stats", packed_path, NULL);
	if (r.status != 0 || !tool_has(r.out, "bare array, complete"))
		fail_msg("stats: %d\n%s%s", r.status, r.out, r.err);
	tool_run_free(&r);

	/* cut inside its last batch (before the end markers' plain packets) */
	size_t last = npackets;
	while (last-- > 0 && !is_batch(packed + at[last], packed_len - at[last]))
		;
	assert_true(last < npackets);
	const char *cut = tool_tmp("packed-cut.pftrace");
	tool_write(cut, packed, at[last] + 10);
	b = open_ok(cut);
	size_t whole = 0;
	while (trace_next(b, &eb) == 1)
		whole++;
	assert_true(whole > 0 && whole < n);
	assert_true(trace_status(b)->cut);
	assert_int_equal(trace_status(b)->offset, at[last]);
	trace_close(b);
	free(packed);
}

/* A .pftrace reads as the JSON convert writes of it, to the byte, each event placed
 * by the packet it came from. */
static void pftrace_reads_as_converts_json(void **state)
{
	const char *out = tool_tmp("src.converted.json");
	size_t len, at[4096], npackets;
	unsigned char *bytes = (unsigned char *)tu_read_file(pf_path, &len);
	const struct trace_event *ea, *eb;
	struct trace *a, *b;
	struct tool_run r;
	int ra, rb;

	(void)state;
	npackets = packet_offsets(bytes, len, at, 4096);
	tool_run(&r, NULL, "convert", "--to", "json", "-o", out, pf_path, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	a = open_ok(out);
	b = open_ok(pf_path);
	while ((ra = trace_next(a, &ea)) == 1) {
		rb = trace_next(b, &eb);
		assert_int_equal(rb, 1);
		if (ea->json_len != eb->json_len || memcmp(ea->json, eb->json, ea->json_len) != 0)
			fail_msg("event %llu:\n%s\nnot\n%s", (unsigned long long)ea->index,
				 shown(eb), shown(ea));
		expect_same_event(ea, eb);
		assert_int_equal(ea->ts_ns, eb->ts_ns);
		assert_int_equal(ea->index, eb->index);
		/* its line in convert's JSON; its place, a packet of the file */
		assert_int_equal(ea->line, eb->line);
		assert_true(eb->in_packet);
		assert_true(eb->packet < npackets);
		assert_int_equal(eb->offset, at[eb->packet]);
	}
	assert_int_equal(ra, 0);
	assert_int_equal(trace_next(b, &eb), 0);
	assert_int_equal(trace_status(a)->events, trace_status(b)->events);
	assert_int_equal(trace_status(b)->input_bytes, len);
	trace_close(a);
	trace_close(b);
	free(bytes);
}

/* ------------------------------------------------------------ standard input */

struct feeder {
	const char *fifo;
	const void *p;
	size_t len;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	int fd = open(f->fifo, O_WRONLY | O_CLOEXEC);
	const char *p = f->p;
	size_t left = f->len;

	while (fd >= 0 && left > 0) {
		ssize_t n = write(fd, p, left);

		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* The events of path read from a pipe as standard input: the same as from the path. */
static void expect_stdin_reads_as_path(const void *bytes, size_t len, const char *path)
{
	const char *fifo = tool_tmp("stdin.fifo");
	struct feeder f = {fifo, bytes, len};
	const struct trace_event *ea, *eb;
	struct trace *a, *b;
	pthread_t th;
	int saved, in, ra;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	in = open(fifo, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	saved = dup(STDIN_FILENO);
	assert_true(saved >= 0 && dup2(in, STDIN_FILENO) == STDIN_FILENO);
	close(in);
	a = open_ok(path);
	b = open_ok("-");
	assert_string_equal(trace_name(b), "<stdin>");
	while ((ra = trace_next(a, &ea)) == 1) {
		assert_int_equal(trace_next(b, &eb), 1);
		assert_int_equal(ea->json_len, eb->json_len);
		assert_memory_equal(ea->json, eb->json, ea->json_len);
		assert_int_equal(ea->in_packet, eb->in_packet);
		assert_int_equal(ea->packet, eb->packet);
		assert_int_equal(ea->offset, eb->offset);
	}
	assert_int_equal(ra, 0);
	assert_int_equal(trace_next(b, &eb), 0);
	assert_int_equal(trace_status(b)->format, trace_status(a)->format);
	assert_int_equal(trace_status(b)->gzip, trace_status(a)->gzip);
	assert_true(trace_status(b)->complete);
	assert_int_equal(trace_status(b)->events, trace_status(a)->events);
	assert_true(trace_status(b)->events > 4 * ROUNDS); /* a JSON round is four lines */
	trace_close(a);
	trace_close(b);
	assert_true(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
	close(saved);
	pthread_join(th, NULL);
	unlink(fifo);
}

static void stdin_pipe_reads_both_formats(void **state)
{
	const char *gz = tool_tmp("src.pftrace.gz");
	size_t len, zlen;
	char *json = tu_read_file(json_path, &len);
	char *pf;
	unsigned char *z;

	(void)state;
	expect_stdin_reads_as_path(json, len, json_path);
	free(json);
	pf = tu_read_file(pf_path, &len);
	expect_stdin_reads_as_path(pf, len, pf_path);
	z = tool_gzip(pf, len, 512, &zlen, NULL, 0, NULL);
	tool_write(gz, z, zlen);
	expect_stdin_reads_as_path(z, zlen, gz);
	free(z);
	free(pf);
}

/* A tool reads a piped .pftrace as one in a file. */
static void a_tool_reads_a_piped_pftrace(void **state)
{
	const char *fifo = tool_tmp("tool.fifo");
	size_t len;
	char *pf = tu_read_file(pf_path, &len);
	struct feeder f = {fifo, pf, len};
	struct tool_run from_file, from_pipe;
	pthread_t th;
	const char *line;

	(void)state;
	tool_run(&from_file, pf_path, "stats", "-", NULL);
	assert_int_equal(from_file.status, 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	tool_run(&from_pipe, fifo, "stats", "-", NULL);
	pthread_join(th, NULL);
	if (from_pipe.status != 0)
		fail_msg("stats of a piped .pftrace: %d\n%s", from_pipe.status, from_pipe.err);
	/* the same report, but for what a pipe cannot say (its size) */
	line = strchr(from_pipe.out, '\n');
	assert_non_null(line);
	assert_true(tool_has(from_pipe.out, "<stdin>: "));
	assert_true(tool_has(from_pipe.out, "bare array, complete"));
	assert_memory_equal(from_pipe.out, from_file.out, (size_t)(line - from_pipe.out));
	tool_run_free(&from_file);
	tool_run_free(&from_pipe);
	unlink(fifo);
	free(pf);
}

/* ------------------------------------------------------------ cut, malformed */

/* Cut inside its last packet: every event of the packets before, the status cut,
 * its message on the packet and byte. */
static void cut_pftrace_reads_every_whole_packet(void **state)
{
	const char *cut_path = tool_tmp("cut.pftrace");
	size_t len, at[4096], npackets, last, cuts[4];
	unsigned char *bytes = (unsigned char *)tu_read_file(pf_path, &len);
	char want[4400];

	(void)state;
	npackets = packet_offsets(bytes, len, at, 4096);
	last = at[npackets - 1];
	cuts[0] = last + 1;
	cuts[1] = last + 2;
	cuts[2] = (last + len) / 2;
	cuts[3] = len - 1;
	for (size_t c = 0; c < 4; c++) {
		const struct trace_event *ea, *eb;
		const struct trace_status *st;
		struct trace *a, *b;
		int ra;

		tool_write(cut_path, bytes, cuts[c]);
		a = open_ok(pf_path);
		b = open_ok(cut_path);
		while ((ra = trace_next(a, &ea)) == 1 && ea->packet < npackets - 1) {
			assert_int_equal(trace_next(b, &eb), 1);
			assert_int_equal(ea->json_len, eb->json_len);
			assert_memory_equal(ea->json, eb->json, ea->json_len);
			assert_int_equal(ea->packet, eb->packet);
		}
		assert_int_equal(ra, 1); /* the full file has more: its last packet's */
		assert_int_equal(trace_next(b, &eb), 0);
		st = trace_status(b);
		assert_true(st->cut);
		assert_false(st->complete);
		assert_true(st->cut_in_event);
		assert_int_equal(st->cut_bytes, cuts[c] - last);
		assert_int_equal(st->error, TRACE_OK);
		assert_true(st->in_packet);
		assert_int_equal(st->packet, npackets - 1);
		assert_int_equal(st->offset, last);
		snprintf(want, sizeof(want),
			 "%s: packet %zu at byte %zu: the file ends inside this packet (%zu bytes "
			 "of it, not read)",
			 cut_path, npackets - 1, last, cuts[c] - last);
		if (strncmp(st->message, want, strlen(want)) != 0)
			fail_msg("message:\n%s\nnot\n%s", st->message, want);
		trace_close(a);
		trace_close(b);
	}
	free(bytes);
}

/* A packet whose varint runs over 10 bytes, after the recorder's: every event
 * before it, then the error, placed by packet and byte. */
static void malformed_packet_stops_with_its_place(void **state)
{
	static const unsigned char bad[] = {0x0a, 0x0d, 0x40, 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	const char *path = tool_tmp("malformed.pftrace");
	size_t len, at[4096], npackets;
	char *bytes = tu_read_file(pf_path, &len);
	char *copy = malloc(len + sizeof(bad));
	const struct trace_event *ea, *eb;
	const struct trace_status *st;
	struct trace *a, *b;
	struct tool_run r;
	char want[4400];
	int ra;

	(void)state;
	npackets = packet_offsets((unsigned char *)bytes, len, at, 4096);
	memcpy(copy, bytes, len);
	memcpy(copy + len, bad, sizeof(bad));
	tool_write(path, copy, len + sizeof(bad));
	a = open_ok(pf_path);
	b = open_ok(path);
	while ((ra = trace_next(a, &ea)) == 1) {
		assert_int_equal(trace_next(b, &eb), 1);
		assert_int_equal(ea->json_len, eb->json_len);
		assert_memory_equal(ea->json, eb->json, ea->json_len);
	}
	assert_int_equal(trace_next(b, &eb), -1);
	assert_int_equal(trace_next(b, &eb), -1);
	st = trace_status(b);
	assert_int_equal(st->error, TRACE_ERR_SYNTAX);
	assert_false(st->complete);
	assert_true(st->in_packet);
	assert_int_equal(st->packet, npackets);
	/* the varint's first byte: after the packet's key and length, and its own key */
	assert_int_equal(st->offset, len + 3);
	assert_string_equal(st->what, "a varint over 10 bytes");
	snprintf(want, sizeof(want), "%s: packet %zu at byte %zu: a varint over 10 bytes", path,
		 npackets, len + 3);
	assert_string_equal(st->message, want);
	trace_close(a);
	trace_close(b);
	/* what a tool says */
	tool_run(&r, NULL, "stats", path, NULL);
	assert_int_equal(r.status, 1);
	if (!tool_has(r.err, want))
		fail_msg("stats said:\n%s", r.err);
	assert_false(tool_has(r.err, ".pftrace:1:"));
	tool_run_free(&r);
	free(copy);
	free(bytes);
}

/* ------------------------------------------------------------ no file */

/* Is the directory empty? */
static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = false;
	closedir(d);
	return empty;
}

/* The commands that read a .pftrace, each in an empty working directory with $TMPDIR
 * set as given: their reports, and what they left there. */
static void run_reading_commands(const char *cwd, const char *tmpdir, const char *out_dir)
{
	char here[4096], out[4200];
	struct tool_run r;

	assert_non_null(getcwd(here, sizeof(here)));
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(setenv("TMPDIR", tmpdir, 1), 0);
	tool_run(&r, NULL, "stats", pf_path, NULL);
	if (r.status != 0 || !tool_has(r.out, "bare array, complete"))
		fail_msg("stats: %d\n%s%s", r.status, r.out, r.err);
	tool_run_free(&r);
	tool_run(&r, NULL, "diff", pf_path, pf_path, NULL);
	if (r.status != 0 || !tool_has(r.out, "within noise"))
		fail_msg("diff: %d\n%s%s", r.status, r.out, r.err);
	tool_run_free(&r);
	snprintf(out, sizeof(out), "%s/array.json", out_dir);
	tool_run(&r, NULL, "convert", "--to", "array", "-o", out, pf_path, NULL);
	if (r.status != 0 || !tool_has(r.err, "wrote"))
		fail_msg("convert: %d\n%s", r.status, r.err);
	tool_run_free(&r);
	tool_expect_no_findings(out);
	unlink(out);
	assert_int_equal(unsetenv("TMPDIR"), 0);
	assert_int_equal(chdir(here), 0);
}

static void reading_a_pftrace_creates_no_file(void **state)
{
	char cwd[4200], tmp[4200], out[4200], not_dir[4200];

	(void)state;
	snprintf(cwd, sizeof(cwd), "%s", tool_tmp("nofile-cwd"));
	snprintf(tmp, sizeof(tmp), "%s", tool_tmp("nofile-tmp"));
	snprintf(out, sizeof(out), "%s", tool_tmp("nofile-out"));
	snprintf(not_dir, sizeof(not_dir), "%s", tool_tmp("nofile-not-a-dir"));
	rmdir(cwd);
	rmdir(tmp);
	rmdir(out);
	assert_int_equal(mkdir(cwd, 0700), 0);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_equal(mkdir(out, 0700), 0);
	run_reading_commands(cwd, tmp, out);
	assert_true(empty_dir(cwd));
	assert_true(empty_dir(tmp));
	/* $TMPDIR where no file can be made (a file, not a directory): all the same */
	tool_write(not_dir, "x", 1);
	run_reading_commands(cwd, not_dir, out);
	assert_true(empty_dir(cwd));
	unlink(not_dir);
	rmdir(cwd);
	rmdir(tmp);
	rmdir(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_and_pftrace_read_as_the_same_events),
		cmocka_unit_test(pftrace_reads_as_converts_json),
		cmocka_unit_test(packed_reads_as_plain),
		cmocka_unit_test(stdin_pipe_reads_both_formats),
		cmocka_unit_test(a_tool_reads_a_piped_pftrace),
		cmocka_unit_test(cut_pftrace_reads_every_whole_packet),
		cmocka_unit_test(malformed_packet_stops_with_its_place),
		cmocka_unit_test(reading_a_pftrace_creates_no_file),
	};

	return cmocka_run_group_tests_name("tools_reader_pftrace", tests, record_both, NULL);
}
