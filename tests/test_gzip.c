/* SPDX-License-Identifier: MIT */
/*
 * Compressed output (.json.gz, src/sink/sink_gzip.c), in its two layouts.
 *
 * One member (the default): the whole file is one gzip member that decompresses to the
 * same strict JSON a plain file holds, with nothing after its trailer; between two
 * writes it is a complete member closed by the provisional end marker; a file cut
 * anywhere decompresses (tolerantly) to a prefix of the text, which the repair rule
 * reads; a write cut by an error counts none of its events as written.
 *
 * Members (RTR_COMPRESS_GZIP_MEMBERS): a sequence of whole gzip members, one per
 * written chunk; a file cut inside a member reads up to its last whole member; a
 * member cut by a write error counts none of its events as written.
 *
 * Files are read back with zlib member by member (decode()), so that the tests see
 * where each member ends (libdeflate wrote the members; zlib's inflate is still a
 * separate reader of the one-member stream zlib's deflate wrote, and gzip(1) checks
 * the files too); the text goes to a plain file that the strict reader
 * (tests/support/trace_read.h) parses.
 *
 * Faults that change the process (a file-size limit, a kill) run in a forked child.
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "child.h"
#include "seq_trace.h"
#include "sink/sink.h"
#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#if TU_UNDER_TSAN
/* The children start the writer thread after fork: allowed, with this. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

#define CAT "gz"

static void make_file(char *out, size_t size, const char *name, const char *ext)
{
	tu_own_file(out, size, "gzip", name, ext);
}

/* ------------------------------------------------------------------------- */
/* Reading members                                                            */

struct members {
	unsigned char *text; /* the text of the whole members, back to back */
	size_t text_len;
	size_t n;	   /* whole members */
	uint64_t *end;	   /* [n]: file offset just past each */
	size_t *text_end;  /* [n]: text offset just past each */
	int cut;	   /* the file ends inside a member (its text is left out) */
	size_t all_len;	   /* text with what the cut member gave before its end */
	uint64_t size;	   /* file bytes */
	unsigned char *in; /* the file */
};

static void members_free(struct members *m)
{
	free(m->text);
	free(m->end);
	free(m->text_end);
	free(m->in);
	memset(m, 0, sizeof(*m));
}

static unsigned char *read_all(const char *path, uint64_t *size)
{
	uint64_t n = tu_file_size(path);
	unsigned char *buf = malloc(n + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_non_null(buf);
	assert_true(fd >= 0);
	for (uint64_t got = 0; got < n;) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
		assert_true(r > 0);
		got += (uint64_t)r;
	}
	close(fd);
	*size = n;
	return buf;
}

static void write_all(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	for (size_t done = 0; done < n;) {
		ssize_t r = write(fd, (const char *)p + done, n - done);
		assert_true(r > 0);
		done += (size_t)r;
	}
	assert_int_equal(close(fd), 0);
}

/* Decompress in[0, size) member by member with zlib. A member cut short is noted
 * in m->cut and its text left out; any other damage fails the test. */
static void decode_buf(const unsigned char *in, uint64_t size, struct members *m)
{
	size_t cap = (size_t)size * 8 + 65536, pos = 0, mcap = 0;
	z_stream zs;

	m->text = malloc(cap);
	assert_non_null(m->text);
	m->size = size;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK); /* gzip wrapper only */
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)size;
	while (size > 0) {
		if (cap - pos < 65536) {
			cap *= 2;
			m->text = realloc(m->text, cap);
			assert_non_null(m->text);
		}
		zs.next_out = m->text + pos;
		zs.avail_out = (uInt)(cap - pos);
		int ret = inflate(&zs, Z_NO_FLUSH);
		pos = (size_t)(zs.next_out - m->text);
		if (ret == Z_STREAM_END) {
			if (m->n == mcap) {
				mcap = mcap ? 2 * mcap : 64;
				m->end = realloc(m->end, mcap * sizeof(*m->end));
				m->text_end = realloc(m->text_end, mcap * sizeof(*m->text_end));
				assert_non_null(m->end);
				assert_non_null(m->text_end);
			}
			m->end[m->n] = size - zs.avail_in;
			m->text_end[m->n++] = pos;
			if (zs.avail_in == 0)
				break;
			assert_int_equal(inflateReset(&zs), Z_OK);
			continue;
		}
		if (ret == Z_BUF_ERROR && zs.avail_in == 0) {
			m->cut = 1; /* the input ends inside a member */
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			fail_msg("zlib: %d (%s) at file offset %" PRIu64, ret,
				 zs.msg ? zs.msg : "?", size - zs.avail_in);
	}
	inflateEnd(&zs);
	m->text_len = m->n > 0 ? m->text_end[m->n - 1] : 0;
	m->all_len = pos;
}

static void decode(const char *path, struct members *m)
{
	memset(m, 0, sizeof(*m));
	m->in = read_all(path, &m->size);
	decode_buf(m->in, m->size, m);
}

/* Occurrences of needle in text[0, len). */
static uint64_t count_in(const unsigned char *text, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	uint64_t n = 0;

	for (const unsigned char *p = text, *end = text + len;
	     (p = memmem(p, (size_t)(end - p), needle, nl)) != NULL; p += nl)
		n++;
	return n;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* m (decoded from path) is exactly one whole gzip member and nothing after it: the
 * header as the sink writes it, the trailer's CRC-32 and ISIZE those of the text, and
 * gzip(1) agrees. */
static void assert_one_member(const struct members *m, const char *path)
{
	char cmd[4300];

	assert_false(m->cut);
	assert_int_equal(m->n, 1);
	assert_int_equal(m->end[0], m->size); /* nothing follows the trailer */
	assert_true(m->size >= 18);
	assert_true(m->in[0] == 0x1f && m->in[1] == 0x8b && m->in[2] == 8);
	assert_int_equal(m->in[3], 0); /* no name, no extra fields */
	assert_int_equal(le32(m->in + m->size - 8),
			 (uint32_t)crc32(crc32(0L, Z_NULL, 0), m->text, (uInt)m->text_len));
	assert_int_equal(le32(m->in + m->size - 4), (uint32_t)m->text_len);
	snprintf(cmd, sizeof(cmd), "gzip -t '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* Bytes of text[0, len) up to and with its last '\n': what the repair rule keeps. */
static size_t whole_lines(const unsigned char *text, size_t len)
{
	while (len > 0 && text[len - 1] != '\n')
		len--;
	return len;
}

/* Parse text[0, len), written to the plain file json, as a seq trace that process pid
 * recorded (seq_trace.h). */
static struct tt_trace walk_text(const char *json, const unsigned char *text, size_t len, int flags,
				 int64_t pid, struct tu_seq_walk *w)
{
	write_all(json, text, len);
	return tu_seq_walk(json, flags, CAT, pid, w);
}

/* compress: the layout; RTR_COMPRESS_AUTO is the default one member by the suffix. */
static void start_with(const char *path, int io, unsigned flush_ms, int compress)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.io = io;
	cfg.compress = compress;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	if (flush_ms != 0)
		cfg.flush_ms = flush_ms;
	assert_int_equal(rtr_start(&cfg), 0);
}

static void start_at(const char *path, int io, unsigned flush_ms)
{
	start_with(path, io, flush_ms, RTR_COMPRESS_AUTO);
}

/* Record n seq events in `pieces` flushed parts: at least that many writes (members,
 * with RTR_COMPRESS_GZIP_MEMBERS). */
static void record_gz(const char *path, int io, uint64_t n, unsigned pieces, int compress)
{
	struct rtr_stats st;

	start_with(path, io, 0, compress);
	for (unsigned k = 0; k < pieces; k++) {
		tu_record_seq(CAT, n * k / pieces, n * (k + 1) / pieces - n * k / pieces);
		assert_int_equal(rtr_flush(), 0);
	}
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_written, n);
	assert_int_equal(st.events_dropped, 0);
}

/* ------------------------------------------------------------------------- */
/* Exact values                                                               */

struct exact_walk {
	char err[512];
	uint64_t n, seq, origin, t0;
	int seen_name, seen_fixed, seen_copy, seen_span, seen_last, end_seen;
	int64_t end_events, end_dropped, end_bytes, end_threads;
	char compress[16];
};

static int visit_exact(const struct tt_event *e, void *ctx)
{
	struct exact_walk *w = ctx;
	const struct tt_arg *a;

	if (w->n++ == 0) {
		a = tt_arg(e, "origin_monotonic_ns");
		TU_WALK_CHECK(w, e, tu_is(e->name, "ringtrace: start") && a && a->type == TT_STRING,
			      "no start marker with an origin");
		w->origin = strtoull(a->s, NULL, 10);
		a = tt_arg(e, "compress");
		TU_WALK_CHECK(w, e, a != NULL && a->type == TT_STRING, "no \"compress\"");
		snprintf(w->compress, sizeof(w->compress), "%s", a->s);
		return 0;
	}
	TU_WALK_CHECK(w, e, !w->end_seen, "event after the end marker");
	TU_WALK_CHECK(w, e, e->has_pid && e->pid == getpid(), "pid %" PRId64, e->pid);
	if (tu_is(e->ph, "M") && tu_is(e->name, "process_name")) {
		TU_WALK_CHECK(w, e, w->n == 2, "process_name on line %zu", e->line);
	} else if (tu_is(e->ph, "M") && tu_is(e->name, "thread_name")) {
		a = tt_arg(e, "name");
		TU_WALK_CHECK(w, e, a != NULL && tu_is(a->s, "gz main"), "thread name");
		w->seen_name++;
	} else if (tu_is(e->name, "fixed")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "X") && tu_is(e->cat, CAT), "fixed: %s", e->ph);
		TU_WALK_CHECK(w, e, e->has_ts && e->ts_ns + w->origin == w->t0,
			      "ts %" PRIu64 " + origin %" PRIu64 " != %" PRIu64, e->ts_ns,
			      w->origin, w->t0);
		TU_WALK_CHECK(w, e, e->has_dur && e->dur_ns == 1234567, "dur %" PRIu64, e->dur_ns);
		TU_WALK_CHECK(w, e, tu_arg_int(e, "i") == -42, "i");
		a = tt_arg(e, "s");
		TU_WALK_CHECK(w, e, a && a->type == TT_STRING && tu_is(a->s, "say \"hi\"\n\t"),
			      "s");
		a = tt_arg(e, "f");
		TU_WALK_CHECK(w, e, a && a->type == TT_DOUBLE && tu_is(a->raw, "0.5"), "f");
		a = tt_arg(e, "b");
		TU_WALK_CHECK(w, e, a && a->type == TT_BOOL && a->b, "b");
		w->seen_fixed++;
	} else if (tu_is(e->name, "copied \xc3\xbc 7")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "i") && tu_is(e->cat, CAT), "copy: %s", e->ph);
		w->seen_copy++;
	} else if (tu_is(e->name, "span")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "X") || tu_is(e->ph, "B") || tu_is(e->ph, "E"),
			      "span: %s", e->ph);
		w->seen_span += tu_is(e->ph, "X") ? 2 : 1;
	} else if (tu_is(e->name, "seq")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "C") && tu_arg_int(e, "value") == (int64_t)w->seq,
			      "seq %" PRId64 ", want %" PRIu64, tu_arg_int(e, "value"), w->seq);
		w->seq++;
	} else if (tu_is(e->name, "last")) {
		TU_WALK_CHECK(w, e, w->seq > 0, "last before the counters");
		w->seen_last++;
	} else if (tu_is(e->name, "ringtrace: end")) {
		a = tt_arg(e, "final");
		TU_WALK_CHECK(w, e, a && a->type == TT_BOOL && a->b, "end marker not final");
		w->end_seen = 1;
		w->end_events = tu_arg_int(e, "events");
		w->end_dropped = tu_arg_int(e, "dropped");
		w->end_bytes = tu_arg_int(e, "bytes");
		w->end_threads = tu_arg_int(e, "threads");
	} else {
		TU_WALK_CHECK(w, e, 0, "unexpected %s %s", e->ph, e->name);
	}
	return 0;
}

static void a_gz_path_parses_back_exactly(void **state)
{
	int io = tu_io_of(*state);
	char path[4096], json[4200], name[32];
	char copy_name[32];
	uint64_t n = tu_scaled(200000, 20000); /* ~19 MB of text: many members */
	struct exact_walk w;
	struct members m;
	struct rtr_stats st;

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "exact-%s", rtr_io_name(io));
	make_file(path, sizeof(path), name, ".json.gz");
	make_file(json, sizeof(json), name, ".json");
	memset(&w, 0, sizeof(w));

	start_at(path, io, 0);
	rtr_thread_name("gz main");
	w.t0 = rtr_now_ns() + 1000;
	rtr_complete_v(CAT, "fixed", w.t0, 1234567, RTR_ARG_I64("i", -42),
		       RTR_ARG_STR("s", "say \"hi\"\n\t"), RTR_ARG_F64("f", 0.5),
		       RTR_ARG_BOOL("b", true));
	snprintf(copy_name, sizeof(copy_name), "copied \xc3\xbc %d", 7);
	rtr_instant_copy(CAT, copy_name);
	rtr_begin(CAT, "span");
	rtr_end(CAT, "span");
	tu_record_seq(CAT, 0, n);
	rtr_instant(CAT, "last");
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);

	decode(path, &m);
	assert_one_member(&m, path);
	/* Stats: compressed bytes on disk, and the text they hold. */
	assert_int_equal(st.bytes_written, m.size);
	assert_int_equal(st.bytes_uncompressed, m.text_len);
	assert_true(m.text_len > 4 * m.size);
	assert_int_equal(st.events_written, st.events_recorded);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.io_method, io);

	/* The text: strict JSON with every value as recorded. */
	write_all(json, m.text, m.text_len);
	struct tt_trace info = tu_walk(json, TT_CHECK_ESCAPES, visit_exact, &w, w.err);
	assert_true(info.complete);
	assert_string_equal(w.compress, "gzip");
	assert_int_equal(w.seen_name, 1);
	assert_int_equal(w.seen_fixed, 1);
	assert_int_equal(w.seen_copy, 1);
	assert_int_equal(w.seen_span, 2);
	assert_int_equal(w.seen_last, 1);
	assert_int_equal(w.seq, n);
	assert_true(w.end_seen);
	assert_int_equal(st.events_recorded, n + 6);
	assert_int_equal(w.end_events, (int64_t)st.events_recorded);
	assert_int_equal(w.end_dropped, 0);
	assert_int_equal(w.end_threads, 1);
	/* "bytes": the text before the end marker, not the compressed bytes. */
	const char marker[] = "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\"";
	const unsigned char *last = NULL;
	for (const unsigned char *p = m.text, *end = m.text + m.text_len;
	     (p = memmem(p, (size_t)(end - p), marker, sizeof(marker) - 1)) != NULL; p++)
		last = p;
	assert_non_null(last);
	assert_int_equal(w.end_bytes, (int64_t)(last - m.text));
	members_free(&m);
}

/* ------------------------------------------------------------------------- */
/* One member                                                                 */

/* After each rtr_flush() the file, copied as it is, is one complete member of strict
 * JSON closed by a provisional end marker, and its kept text grows by appending. */
static void between_writes_the_file_is_one_member_closed_by_a_provisional_end(void **state)
{
	(void)state;
	char path[4096], copy[4200], json[4200];
	uint64_t per = tu_scaled(30000, 5000), before = 0;
	unsigned char *prev = NULL;
	struct tu_seq_walk w;
	struct members m;

	make_file(path, sizeof(path), "between", ".json.gz");
	make_file(copy, sizeof(copy), "between-copy", ".json.gz");
	make_file(json, sizeof(json), "between", ".json");
	start_at(path, RTR_IO_AUTO, 60000); /* no timed writes: only the flushes */
	for (unsigned k = 1; k <= 4; k++) {
		uint64_t size;
		unsigned char *in;

		tu_record_seq(CAT, per * (k - 1), per);
		assert_int_equal(rtr_flush(), 0);
		in = read_all(path, &size);
		write_all(copy, in, (size_t)size);
		free(in);
		decode(copy, &m);
		assert_one_member(&m, copy);
		struct tt_trace info =
			walk_text(json, m.text, m.text_len, TT_CHECK_ESCAPES, getpid(), &w);
		assert_true(info.complete); /* strict JSON, not repaired */
		assert_int_equal(w.next, (int64_t)(per * k));
		assert_true(w.end_seen);
		assert_false(w.end_final);
		assert_int_equal(w.end_events, (int64_t)(per * k));
		/* the kept text of the last copy is a prefix of this one */
		if (prev != NULL)
			assert_memory_equal(m.text, prev, before);
		free(prev);
		before = (uint64_t)w.end_bytes; /* the text before the end marker */
		prev = malloc(before + 1);
		assert_non_null(prev);
		memcpy(prev, m.text, before);
		members_free(&m);
	}
	assert_int_equal(rtr_stop(), 0);
	decode(path, &m);
	assert_one_member(&m, path);
	assert_memory_equal(m.text, prev, before);
	struct tt_trace info = walk_text(json, m.text, m.text_len, TT_CHECK_ESCAPES, getpid(), &w);
	assert_true(info.complete);
	assert_true(w.end_seen && w.end_final);
	assert_int_equal(w.next, (int64_t)(4 * per));
	free(prev);
	members_free(&m);
}

/* Cut the one-member file at `cut` bytes: zlib, tolerant of the missing end, gives a
 * prefix of the text; the repair rule reads its whole lines, every event intact. */
static void check_stream_cut(const struct members *full, uint64_t cut, const char *cut_path,
			     const char *json)
{
	struct members m;
	struct tu_seq_walk w;
	char cmd[4300];

	write_all(cut_path, full->in, (size_t)cut);
	decode(cut_path, &m);
	assert_int_equal(m.n, cut == full->size);
	assert_int_equal(m.cut, cut > 0 && cut < full->size);
	assert_true(m.all_len <= full->text_len);
	assert_memory_equal(m.text, full->text, m.all_len);
	if (m.cut) {
		snprintf(cmd, sizeof(cmd), "gzip -t '%s' 2>/dev/null", cut_path);
		assert_int_not_equal(system(cmd), 0);
	}
	size_t lines = whole_lines(m.text, m.all_len);
	if (count_in(m.text, lines, "\n") >= 3) { /* past the head: repairable */
		struct tt_trace info = walk_text(json, m.text, m.all_len, TT_REPAIR, getpid(), &w);
		assert_int_equal(w.next, (int64_t)count_in(m.text, lines, "\"name\":\"seq\""));
		if (!info.complete) {
			assert_true(info.repaired);
			assert_false(w.end_seen);
		}
	}
	members_free(&m);
}

static void a_file_cut_anywhere_reads_a_prefix_of_the_text(void **state)
{
	(void)state;
	char path[4096], cut_path[4200], json[4200];
	uint64_t n = tu_scaled(40000, 10000);
	struct members full;

	make_file(path, sizeof(path), "stream-cut", ".json.gz");
	make_file(cut_path, sizeof(cut_path), "stream-cut-part", ".json.gz");
	make_file(json, sizeof(json), "stream-cut", ".json");
	record_gz(path, RTR_IO_AUTO, n, 6, RTR_COMPRESS_AUTO);
	decode(path, &full);
	assert_one_member(&full, path);

	/* Inside the header, at many places through the stream, in the trailer. */
	uint64_t fixed[] = {0,	      5, 10, 11, 12, full.size - 8, full.size - 4, full.size - 1,
			    full.size};
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
		check_stream_cut(&full, fixed[k], cut_path, json);
	/* 97 cuts through the stream; 13 under TSan, where the reading back is all
	 * this thread's own and takes most of the preset's time, with no race to find */
	unsigned cuts = TU_UNDER_TSAN ? 13 : 97;
	for (unsigned k = 1; k < cuts; k++)
		check_stream_cut(&full, full.size * k / cuts, cut_path, json);
	members_free(&full);
}

/* ------------------------------------------------------------------------- */
/* Members                                                                    */

static void every_member_is_whole_lines_and_gzip_and_gzread_accept_the_file(void **state)
{
	(void)state;
	char path[4096], json[4200], cmd[8600];
	uint64_t n = tu_scaled(100000, 20000);
	struct members m;
	struct tu_seq_walk w;

	make_file(path, sizeof(path), "members", ".json.gz");
	make_file(json, sizeof(json), "members", ".json");
	record_gz(path, RTR_IO_AUTO, n, 8, RTR_COMPRESS_GZIP_MEMBERS);

	decode(path, &m);
	assert_false(m.cut);
	assert_true(m.n >= 8 + 2); /* the head, at least one per flush, the end */
	for (size_t i = 0; i < m.n; i++) {
		/* each member holds whole lines, none padded to a page */
		size_t from = i > 0 ? m.text_end[i - 1] : 0;
		assert_true(m.text_end[i] > from);
		assert_int_equal(m.text[m.text_end[i] - 1], '\n');
	}
	assert_int_equal(count_in(m.text, m.text_len, "\n "), 0);
	assert_memory_equal(m.text, "[\n", 2);
	assert_memory_equal(m.text + m.text_len - 2, "]\n", 2);

	/* zlib's gzread() reads concatenated members as one stream: the same text. */
	gzFile gz = gzopen(path, "rb");
	unsigned char *all = malloc(m.text_len + 1);
	size_t got = 0;
	int r;
	assert_non_null(gz);
	assert_non_null(all);
	while ((r = gzread(gz, all + got, (unsigned)(m.text_len + 1 - got))) > 0)
		got += (size_t)r;
	assert_int_equal(r, 0);
	assert_int_equal(gzclose(gz), Z_OK);
	assert_int_equal(got, m.text_len);
	assert_memory_equal(all, m.text, got);
	free(all);

	/* gzip(1) */
	snprintf(cmd, sizeof(cmd), "gzip -t '%s'", path);
	assert_int_equal(system(cmd), 0);

	struct tt_trace info = walk_text(json, m.text, m.text_len, TT_CHECK_ESCAPES, getpid(), &w);
	assert_true(info.complete);
	assert_string_equal(w.compress, "gzip");
	assert_int_equal(w.next, (int64_t)n);
	assert_true(w.end_seen && w.end_final);
	assert_int_equal(w.end_events, (int64_t)n);
	members_free(&m);
}

/* Cut the file at `cut` bytes: the whole members before it decompress to a prefix of
 * the text, ending after a whole line, with every event in it intact. */
static void check_cut(const struct members *full, uint64_t cut, const char *cut_path,
		      const char *json)
{
	struct members m;
	struct tu_seq_walk w;
	size_t whole = 0;
	char cmd[4300];

	while (whole < full->n && full->end[whole] <= cut)
		whole++;
	write_all(cut_path, full->in, (size_t)cut);
	decode(cut_path, &m);
	assert_int_equal(m.n, whole);
	assert_int_equal(m.cut, whole == 0 ? cut > 0 : cut > full->end[whole - 1]);
	assert_int_equal(m.text_len, whole > 0 ? full->text_end[whole - 1] : 0);
	assert_memory_equal(m.text, full->text, m.text_len);
	if (m.cut) {
		snprintf(cmd, sizeof(cmd), "gzip -t '%s' 2>/dev/null", cut_path);
		assert_int_not_equal(system(cmd), 0);
	}
	if (whole > 0) {
		struct tt_trace info = walk_text(json, m.text, m.text_len, TT_REPAIR, getpid(), &w);
		uint64_t seqs = count_in(m.text, m.text_len, "\"name\":\"seq\"");
		assert_int_equal(w.next, (int64_t)seqs);
		if (whole < full->n) {
			/* the final member is gone: repaired, no end marker */
			assert_true(info.repaired);
			assert_false(w.end_seen);
		}
	}
	members_free(&m);
}

static void a_file_cut_inside_a_member_reads_up_to_its_last_whole_member(void **state)
{
	(void)state;
	char path[4096], cut_path[4200], json[4200];
	uint64_t n = tu_scaled(40000, 10000);
	struct members full;

	make_file(path, sizeof(path), "cut", ".json.gz");
	make_file(cut_path, sizeof(cut_path), "cut-part", ".json.gz");
	make_file(json, sizeof(json), "cut", ".json");
	record_gz(path, RTR_IO_AUTO, n, 6, RTR_COMPRESS_GZIP_MEMBERS);
	decode(path, &full);
	assert_false(full.cut);
	assert_true(full.n >= 6 + 2);

	check_cut(&full, 0, cut_path, json);
	check_cut(&full, 5, cut_path, json); /* inside the first header */
	for (size_t i = 0; i < full.n; i++) {
		uint64_t start = i > 0 ? full.end[i - 1] : 0, end = full.end[i];
		uint64_t cuts[] = {start + 1, start + 10, start + 11, (start + end) / 2,
				   end - 8,   end - 1,	  end};
		for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
			if (cuts[k] > start && cuts[k] <= end)
				check_cut(&full, cuts[k], cut_path, json);
	}
	members_free(&full);
}

/* ------------------------------------------------------------------------- */
/* Faults                                                                     */

#define FLUSH_EVERY 5000

static void sigkill_leaves_every_flushed_event_readable(void **state)
{
	(void)state;
	char trace[4096], json[4200];
	struct rtr_config cfg;
	pid_t pid;

	make_file(trace, sizeof(trace), "kill", ".json.gz");
	make_file(json, sizeof(json), "kill", ".json");
	rtr_config_init(&cfg);
	cfg.path = trace;
	int64_t last = tu_record_until_killed(&cfg, CAT, FLUSH_EVERY,
					      (int64_t)tu_scaled(200000, 20000), &pid);

	struct members m;
	struct tu_seq_walk w;
	decode(trace, &m);
	assert_true(m.n <= 1); /* one member, maybe cut */
	/* all the text zlib gives, up to a cut: every flushed event is in it */
	struct tt_trace info = walk_text(json, m.text, m.all_len, TT_REPAIR, pid, &w);
	assert_true(w.next > last);
	if (info.complete) {
		/* killed between writes (or inside the trailer): strict JSON closed by a
		 * provisional end marker */
		assert_true(w.end_seen);
		assert_false(w.end_final);
		assert_int_equal(w.end_events, w.next);
	} else {
		/* killed inside a write: the provisional close was cut off already, or is
		 * cut itself */
		assert_true(info.repaired);
		assert_false(w.end_seen);
	}
	print_message("killed after seq %" PRId64
		      " was flushed: %zu whole members%s, seq 0..%" PRId64 ", %s\n",
		      last, m.n, m.cut ? " and a cut one" : "", w.next - 1,
		      info.complete ? "closed by a provisional end marker" : "repaired");
	members_free(&m);
}

#define FSIZE_LIMIT ((rlim_t)128 << 10)

struct fsize_report {
	int start_rc, stop_rc;
	struct rtr_stats st;
};

static void fsize_child(const char *trace, int out_fd, int io, int compress, uint64_t events)
{
	struct fsize_report rep;
	struct rlimit lim = {FSIZE_LIMIT, FSIZE_LIMIT};
	struct rtr_config cfg;

	memset(&rep, 0, sizeof(rep));
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		_exit(20);
	if (freopen("/dev/null", "w", stderr) == NULL) /* the one report: not ours to see */
		_exit(21);
	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.io = io;
	cfg.compress = compress;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.flush_ms = 5; /* many writes */
	rep.start_rc = rtr_start(&cfg);
	if (rep.start_rc == 0) {
		tu_record_seq(CAT, 0, events);
		rep.stop_rc = rtr_stop();
		rtr_stats_get(&rep.st);
	}
	if (write(out_fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(22);
	_exit(0);
}

static void file_size_limit(int io, int compress, const char *what)
{
	char trace[4096], json[4200], name[48];
	uint64_t events = tu_scaled(400000, 100000); /* ~4 MB compressed: far past the limit */
	struct fsize_report rep;
	int pfd[2];

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "%s-%s", what, rtr_io_name(io));
	make_file(trace, sizeof(trace), name, ".json.gz");
	make_file(json, sizeof(json), name, ".json");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(pfd[0]);
		fsize_child(trace, pfd[1], io, compress, events);
	}
	close(pfd[1]);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	assert_int_equal(read(pfd[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	close(pfd[0]);

	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, -EFBIG);
	assert_int_equal(rep.st.write_error, -EFBIG);
	assert_int_equal(rep.st.events_recorded, events);
	assert_true(rep.st.events_dropped_io > 0);
	assert_int_equal(rep.st.events_dropped, rep.st.events_dropped_io);
	assert_int_equal(rep.st.events_written + rep.st.events_dropped, events);

	struct members m;
	struct tu_seq_walk w;
	decode(trace, &m);
	assert_true(m.size <= FSIZE_LIMIT);
	if (compress != RTR_COMPRESS_GZIP_MEMBERS) {
		/* One member, cut by the limit. Honest to the event: the text of the writes
		 * that landed whole is a prefix of what zlib gives, and holds exactly the
		 * events counted as written; a cut write gives readers more, uncounted. */
		assert_true(m.cut);
		assert_int_equal(m.n, 0);
		assert_true(rep.st.bytes_written <= m.size);
		assert_true(rep.st.bytes_uncompressed <= m.all_len);
		walk_text(json, m.text, rep.st.bytes_uncompressed, TT_REPAIR, pid, &w);
		assert_false(w.end_seen);
		assert_true(w.next > 0);
		assert_int_equal(w.next, (int64_t)rep.st.events_written);
		print_message("%s: %" PRIu64 " of %" PRIu64 " text bytes counted, %" PRId64
			      " events in them; %" PRIu64 " lost to EFBIG\n",
			      rtr_io_name(io), rep.st.bytes_uncompressed, (uint64_t)m.all_len,
			      w.next, rep.st.events_dropped_io);
		members_free(&m);
		return;
	}
	/* Members. Honest to the event: the whole members hold exactly the events counted
	 * as written, and the text counted is exactly theirs. */
	/* bytes_written leaves out a provisional member, in the rare case that the limit
	 * falls inside one: it was to be cut off */
	assert_true(rep.st.bytes_written == m.size ||
		    (m.cut && m.n > 0 && rep.st.bytes_written == m.end[m.n - 1]));
	assert_int_equal(rep.st.bytes_uncompressed, m.text_len);
	walk_text(json, m.text, m.text_len, TT_REPAIR, pid, &w);
	assert_false(w.end_seen);
	assert_true(w.next > 0);
	assert_int_equal(w.next, (int64_t)rep.st.events_written);
	print_message("%s: %zu whole members%s, %" PRId64 " events in them; %" PRIu64
		      " lost to EFBIG\n",
		      rtr_io_name(io), m.n, m.cut ? " and a cut one" : "", w.next,
		      rep.st.events_dropped_io);
	members_free(&m);
}

static void file_size_limit_counts_a_cut_write_as_lost(void **state)
{
	file_size_limit(tu_io_of(*state), RTR_COMPRESS_AUTO, "fsize");
}

static void file_size_limit_counts_a_cut_member_as_lost(void **state)
{
	file_size_limit(tu_io_of(*state), RTR_COMPRESS_GZIP_MEMBERS, "fsize-members");
}

/* ------------------------------------------------------------------------- */
/* Choosing compression                                                       */

/* rtr_config_init() with RINGTRACE_COMPRESS set to value (NULL: unset), then the
 * variable as it was. */
static void config_with_env(struct rtr_config *cfg, const char *value)
{
	const char *old = getenv("RINGTRACE_COMPRESS");
	char *saved = old ? strdup(old) : NULL;

	if (value != NULL)
		assert_int_equal(setenv("RINGTRACE_COMPRESS", value, 1), 0);
	else
		unsetenv("RINGTRACE_COMPRESS");
	rtr_config_init(cfg);
	if (saved != NULL)
		setenv("RINGTRACE_COMPRESS", saved, 1);
	else
		unsetenv("RINGTRACE_COMPRESS");
	free(saved);
}

/* Record 100 seq events with cfg; the file must be gzip or not, and say which. */
/* gzip: 0 plain, 1 one member, 2 members. */
static void record_and_expect(struct rtr_config *cfg, const char *path, int gzip)
{
	char json[4200];
	unsigned char magic[2] = {0, 0};
	struct tu_seq_walk w;
	struct rtr_stats st;
	int fd;

	make_file(json, sizeof(json), "choice", ".json");
	cfg->path = path;
	cfg->on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(cfg), 0);
	tu_record_seq(CAT, 0, 100);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_written, 100);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, magic, 2), 2);
	close(fd);
	if (gzip) {
		struct members m;
		assert_true(magic[0] == 0x1f && magic[1] == 0x8b);
		decode(path, &m);
		assert_false(m.cut);
		if (gzip == 1)
			assert_one_member(&m, path);
		else
			assert_true(m.n >= 2); /* the head, the rest, the end */
		assert_int_equal(st.bytes_uncompressed, m.text_len);
		walk_text(json, m.text, m.text_len, TT_CHECK_ESCAPES, getpid(), &w);
		members_free(&m);
	} else {
		assert_int_equal(magic[0], '[');
		assert_int_equal(st.bytes_uncompressed, st.bytes_written);
		tu_seq_walk(path, TT_CHECK_ESCAPES, CAT, getpid(), &w);
	}
	assert_int_equal(w.next, 100);
	assert_int_equal(w.end_events, 100);
	assert_string_equal(w.compress, gzip ? "gzip" : "none");
}

static void the_suffix_chooses_and_ringtrace_compress_overrides_it(void **state)
{
	(void)state;
	char gz[4096], plain[4096];
	struct rtr_config cfg;

	make_file(gz, sizeof(gz), "choice", ".json.gz");
	make_file(plain, sizeof(plain), "choice-plain", ".json");

	config_with_env(&cfg, NULL);
	assert_int_equal(cfg.compress, RTR_COMPRESS_AUTO);
	record_and_expect(&cfg, gz, 1);
	record_and_expect(&cfg, plain, 0);

	config_with_env(&cfg, "gzip");
	assert_int_equal(cfg.compress, RTR_COMPRESS_GZIP);
	record_and_expect(&cfg, plain, 1);

	config_with_env(&cfg, "none");
	assert_int_equal(cfg.compress, RTR_COMPRESS_NONE);
	record_and_expect(&cfg, gz, 0);

	config_with_env(&cfg, "gzip-members");
	assert_int_equal(cfg.compress, RTR_COMPRESS_GZIP_MEMBERS);
	record_and_expect(&cfg, gz, 2);
	record_and_expect(&cfg, plain, 2);

	config_with_env(&cfg, "GZip");
	assert_int_equal(cfg.compress, RTR_COMPRESS_GZIP);
	config_with_env(&cfg, "auto");
	assert_int_equal(cfg.compress, RTR_COMPRESS_AUTO);

	/* A bad value warns and keeps the default. */
	config_with_env(&cfg, "zstd");
	assert_int_equal(cfg.compress, RTR_COMPRESS_AUTO);

	/* A field set in code overrides the environment. */
	config_with_env(&cfg, "none");
	cfg.compress = RTR_COMPRESS_GZIP;
	record_and_expect(&cfg, plain, 1);
}

static void bad_paths_and_values_fail_start_and_lose_nothing_recorded(void **state)
{
	(void)state;
	char dir[4096], missing[4200], good[4096], json[4200];
	struct rtr_config cfg;
	struct rtr_stats st;

	snprintf(dir, sizeof(dir), "%s/gzip-dir-%d.json.gz", tu_tmpdir(), (int)getpid());
	/* a directory the recorder cannot make: a file in the way */
	snprintf(missing, sizeof(missing), "%s/gzip-not-a-dir-%d/t.json.gz", tu_tmpdir(),
		 (int)getpid());
	*strrchr(missing, '/') = '\0';
	unlink(missing);
	int in_way = open(missing, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(in_way >= 0);
	close(in_way);
	missing[strlen(missing)] = '/';
	make_file(good, sizeof(good), "after-errors", ".json.gz");
	make_file(json, sizeof(json), "after-errors", ".json");
	rtr_config_init(&cfg);
	cfg.on_full = RTR_ON_FULL_BLOCK;

	/* A directory it cannot make, a directory, a bad compress value: clear errors, no
	 * file. */
	cfg.path = missing;
	assert_int_equal(rtr_start(&cfg), -ENOTDIR);
	*strrchr(missing, '/') = '\0';
	unlink(missing);
	missing[strlen(missing)] = '/';
	rmdir(dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	cfg.path = dir;
	int err = rtr_start(&cfg);
	rmdir(dir);
	assert_int_equal(err, -EISDIR);
	cfg.path = good;
	cfg.compress = 7;
	assert_int_equal(rtr_start(&cfg), -EINVAL);
	assert_int_equal(access(good, F_OK), -1);
	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);

	/* While a session records, a second start is refused and costs it nothing. */
	cfg.compress = RTR_COMPRESS_AUTO;
	assert_int_equal(rtr_start(&cfg), 0);
	tu_record_seq(CAT, 0, 500);
	cfg.compress = 7;
	assert_int_equal(rtr_start(&cfg), -EBUSY);
	cfg.compress = RTR_COMPRESS_GZIP;
	assert_int_equal(rtr_start(&cfg), -EBUSY);
	tu_record_seq(CAT, 500, 500);
	assert_int_equal(rtr_stop(), 0);

	struct members m;
	struct tu_seq_walk w;
	decode(good, &m);
	assert_false(m.cut);
	struct tt_trace info = walk_text(json, m.text, m.text_len, 0, getpid(), &w);
	assert_true(info.complete);
	assert_int_equal(w.next, 1000);
	assert_int_equal(w.end_events, 1000);
	members_free(&m);
}

/* ------------------------------------------------------------------------- */
/* The gzip sink alone                                                        */

#define CHUNK	   (64u << 10)
#define LINES	   200
#define LINE_BYTES 100
#define KEEP_LINES 150

/* Open a gzip sink on a fresh file; returns the fd. */
static int open_gzip(struct rtr__sink *s, const char *path, int io, int members)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(rtr__sink_open_gzip(s, fd, io, CHUNK, 4, members), 0);
	assert_non_null(s->text);
	return fd;
}

/* LINES lines of varied text, the last LINES - KEEP_LINES a provisional tail (none
 * when final: the last chunk); every line but the last two an event. */
static void submit_lines_final(struct rtr__sink *s, int final)
{
	struct rtr__chunk *c = rtr__sink_acquire(s);
	uint64_t x = 12345;

	assert_ptr_equal(c, s->text);
	assert_null(rtr__sink_acquire(s)); /* one text chunk, and we hold it */
	for (int i = 0; i < LINES * LINE_BYTES; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		c->data[i] = (i + 1) % LINE_BYTES == 0 ? '\n' : (char)('a' + (x >> 59));
	}
	c->len = LINES * LINE_BYTES;
	c->keep = final ? 0 : KEEP_LINES * LINE_BYTES;
	c->final = final;
	c->events = LINES - 2;
	rtr__sink_submit(s, c);
}

static void submit_lines(struct rtr__sink *s)
{
	submit_lines_final(s, 0);
}

static void gzip_sink(int io, int members, const char *what)
{
	char path[4][4096], name[48];
	struct rtr__sink s;
	struct members m;
	uint64_t head, total;
	struct rlimit saved, lim;

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "%s-%s", what, rtr_io_name(io));
	for (int i = 0; i < 4; i++) {
		char ext[16];
		snprintf(ext, sizeof(ext), "-%d.gz", i);
		make_file(path[i], sizeof(path[i]), name, ext);
	}

	/* Written in full: the kept part and the provisional close after it. */
	int fd = open_gzip(&s, path[0], io, members);
	submit_lines(&s);
	assert_int_equal(rtr__sink_wait(&s), 0);
	head = s.offset; /* where the next chunk would go: the provisional member's start */
	total = s.end;
	assert_true(head > 0 && total > head);
	assert_int_equal(s.text_offset, KEEP_LINES * LINE_BYTES);
	assert_int_equal(s.bytes_written, head);
	assert_int_equal(s.bytes_text, KEEP_LINES * LINE_BYTES);
	assert_int_equal(s.events_written, LINES - 2);
	assert_int_equal(s.events_failed, 0);
	assert_non_null(rtr__sink_acquire(&s)); /* the text chunk is free again */
	rtr__sink_close(&s);
	close(fd);
	decode(path[0], &m);
	assert_false(m.cut);
	if (members) {
		assert_int_equal(m.n, 2);
		assert_int_equal(m.end[0], head);
		assert_int_equal(m.text_end[0], KEEP_LINES * LINE_BYTES);
	} else {
		/* one member: the deflate part, then a stored block and the trailer */
		assert_one_member(&m, path[0]);
		assert_int_equal(m.in[head], 1); /* BFINAL 1, BTYPE 00 */
		assert_int_equal(total - head, 5 + (LINES - KEEP_LINES) * LINE_BYTES + 8);
	}
	assert_int_equal(m.size, total);
	assert_int_equal(m.text_len, LINES * LINE_BYTES);
	members_free(&m);

	getrlimit(RLIMIT_FSIZE, &saved);
	lim = saved;

	/* Cut inside the kept part: none of its events landed. */
	fd = open_gzip(&s, path[1], io, members);
	lim.rlim_cur = head / 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	submit_lines(&s);
	int err = rtr__sink_wait(&s);
	setrlimit(RLIMIT_FSIZE, &saved);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(s.bytes_written, head / 2);
	assert_int_equal(s.bytes_text, 0);
	assert_int_equal(s.events_written, 0);
	assert_int_equal(s.events_failed, LINES - 2);
	rtr__sink_close(&s);
	close(fd);

	/* Cut inside the provisional close: the kept part is whole, its events landed. */
	fd = open_gzip(&s, path[2], io, members);
	lim.rlim_cur = head + (total - head) / 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	submit_lines(&s);
	err = rtr__sink_wait(&s);
	setrlimit(RLIMIT_FSIZE, &saved);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(s.bytes_written, head);
	assert_int_equal(s.bytes_text, KEEP_LINES * LINE_BYTES);
	assert_int_equal(s.events_written, LINES - 2);
	assert_int_equal(s.events_failed, 0);
	rtr__sink_close(&s);
	close(fd);
	decode(path[2], &m);
	assert_true(m.cut);
	if (members) {
		assert_int_equal(m.n, 1);
		assert_int_equal(m.text_len, KEEP_LINES * LINE_BYTES);
	} else {
		assert_int_equal(m.n, 0); /* the member is cut, but zlib gives its text */
		assert_true(m.all_len >= KEEP_LINES * LINE_BYTES);
	}
	members_free(&m);

	if (members)
		return;
	/* One member: a second chunk goes over the first's provisional close and
	 * continues the stream; as the last, it ends it. */
	fd = open_gzip(&s, path[3], io, members);
	submit_lines(&s);
	submit_lines_final(&s, 1);
	assert_int_equal(rtr__sink_wait(&s), 0);
	assert_int_equal(s.offset, s.end); /* nothing provisional left */
	assert_int_equal(s.bytes_text, (KEEP_LINES + LINES) * LINE_BYTES);
	assert_int_equal(s.events_written, 2 * (LINES - 2));
	rtr__sink_close(&s);
	close(fd);
	decode(path[3], &m);
	assert_one_member(&m, path[3]);
	assert_int_equal(m.size, s.bytes_written);
	assert_int_equal(m.text_len, (KEEP_LINES + LINES) * LINE_BYTES);
	assert_memory_equal(m.text, m.text + KEEP_LINES * LINE_BYTES, KEEP_LINES * LINE_BYTES);
	members_free(&m);
}

static void gzip_sink_counts_only_whole_writes(void **state)
{
	gzip_sink(tu_io_of(*state), 0, "sink");
}

static void gzip_members_sink_counts_only_whole_members(void **state)
{
	gzip_sink(tu_io_of(*state), 1, "sink-members");
}

/* Every test leaves the recorder stopped and its files removed, pass or fail. */
#define TEST(f)	    cmocka_unit_test_teardown(f, tu_teardown)
#define IO_TESTS(f) TU_IO_CASES(f, NULL, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		IO_TESTS(a_gz_path_parses_back_exactly),
		TEST(between_writes_the_file_is_one_member_closed_by_a_provisional_end),
		TEST(a_file_cut_anywhere_reads_a_prefix_of_the_text),
		TEST(every_member_is_whole_lines_and_gzip_and_gzread_accept_the_file),
		TEST(a_file_cut_inside_a_member_reads_up_to_its_last_whole_member),
		TEST(sigkill_leaves_every_flushed_event_readable),
		IO_TESTS(file_size_limit_counts_a_cut_write_as_lost),
		IO_TESTS(file_size_limit_counts_a_cut_member_as_lost),
		TEST(the_suffix_chooses_and_ringtrace_compress_overrides_it),
		TEST(bad_paths_and_values_fail_start_and_lose_nothing_recorded),
		IO_TESTS(gzip_sink_counts_only_whole_writes),
		IO_TESTS(gzip_members_sink_counts_only_whole_members),
	};

	/* A write past a file-size limit must give EFBIG, never kill the test. */
	signal(SIGXFSZ, SIG_IGN);
	tu_filter_from_env();
	return cmocka_run_group_tests_name("gzip", tests, NULL, NULL);
}
