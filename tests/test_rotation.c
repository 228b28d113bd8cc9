/* SPDX-License-Identifier: MIT */
/*
 * Rotation: max_mb, max_seconds, keep, gzip segments, rtr_snapshot() in
 * stream mode, arguments added to a slice open across a cut, and the environment.
 * Every segment is parsed back strictly and checked on its own (head, what begins
 * again, balanced slices, the cut, the end marker's counts), and the events of all
 * segments together are compared one by one with what the workload recorded
 * (rotation_check.h).
 */
#include "rotation_check.h"

#include <errno.h>
#include <zlib.h>

#define MIB ((uint64_t)1 << 20)
/* A segment's bound: max_mb, one line past it and the closing lines (TAIL_ROOM). */
#define SEG_SLACK 0 /* with its closing lines, within max_mb: its lines are short */
static char path[4096];

/* The pattern <tmp>/rotation-<name>-<pid><ext> in path; files.prefix/suffix for it
 * (".%s" goes before the first ".json"). */
static void name_files(const char *name, const char *ext)
{
	tu_temp_path(path, sizeof(path), "rotation", name, ext);
	size_t len = strlen(path) - strlen(ext);
	snprintf(files.prefix, sizeof(files.prefix), "%.*s", (int)len, path);
	files.suffix = ext;
	wl_glob_remove(&files);
}

static void config(struct rtr_config *cfg)
{
	rtr_config_init(cfg);
	cfg->path = path;
	cfg->on_full = RTR_ON_FULL_BLOCK;
	cfg->ring_bytes = 1 << 20;
}

/* ------------------------------------------------------------------------- */
/* The segment checker                                                        */

/* What the segments so far have shown of the workload. */
struct model {
	uint64_t n;	   /* iterations recorded */
	uint64_t next;	   /* the next event expected */
	uint64_t open[16]; /* items of the slices open, outermost first */
	size_t depth;
	int async_open;	      /* b request seen, e not yet */
	uint64_t last_ts;     /* across segments: continued lines start at the cut */
	uint64_t events;      /* events in the segments so far */
	char origin_mono[64]; /* segment 0's start marker */
	char origin_real[64];
	char host[256];
	int64_t pid;
	uint64_t origin_ns;
	uint64_t seg_bytes[64]; /* each segment's size */
	uint64_t continued[64], cut[64];
};

static const char *arg_str(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	return a != NULL && a->type == TT_STRING ? a->s : NULL;
}

static void check_start_marker(struct model *m, const struct tt_event *e, unsigned no)
{
	assert_string_equal(e->ph, "i");
	assert_true(tu_is(e->name, "ringtrace: start"));
	assert_int_equal(tu_arg_int(e, "segment"), no);
	const char *mono = arg_str(e, "origin_monotonic_ns"),
		   *real = arg_str(e, "origin_realtime_ns");
	const char *host = arg_str(e, "host");
	assert_non_null(mono);
	assert_non_null(real);
	assert_non_null(host);
	if (no == 0) {
		snprintf(m->origin_mono, sizeof(m->origin_mono), "%s", mono);
		snprintf(m->origin_real, sizeof(m->origin_real), "%s", real);
		snprintf(m->host, sizeof(m->host), "%s", host);
		m->pid = tu_arg_int(e, "pid");
		m->origin_ns = strtoull(mono, NULL, 10);
	}
	/* the session's origin, identical in every segment */
	assert_string_equal(mono, m->origin_mono);
	assert_string_equal(real, m->origin_real);
	assert_string_equal(host, m->host);
	assert_int_equal(tu_arg_int(e, "pid"), m->pid);
	assert_int_equal(tu_arg_int(e, "pid"), getpid());
}

/* One real event (X already split into B and E) against the next one predicted. */
static void take(struct model *m, const struct tt_event *e, char ph, uint64_t ts, size_t *seg_depth,
		 int *seg_async)
{
	assert_true(m->next < wl_events(m->n));
	struct wl_want w = wl_item(m->next, m->n);
	if (ph != w.ph || !tu_is(e->name, w.name))
		fail_msg("line %zu: event %lu is %c %s, want %c %s", e->line,
			 (unsigned long)m->next, ph, e->name ? e->name : "(null)", w.ph, w.name);
	assert_true(tu_is(e->cat, "app"));
	if (e->ph[0] != 'X' || ph == 'B') /* an X carries its B's arguments */
		if (!wl_args_match(e, &w, NULL))
			fail_msg("line %zu: event %lu (%c %s) has the wrong args", e->line,
				 (unsigned long)m->next, ph, w.name);
	if (ph == 'i') { /* its time is when it was recorded */
		const struct tt_arg *now = tt_arg(e, "now");
		uint64_t abs = m->origin_ns + ts;
		assert_true(now->fits & TT_FITS_U64);
		if (abs + 1000000 < now->u || abs > now->u + 5000000000u)
			fail_msg("line %zu: tick at %lu ns, recorded at %lu", e->line,
				 (unsigned long)abs, (unsigned long)now->u);
	}
	switch (ph) {
	case 'B':
		assert_true(m->depth < 16);
		m->open[m->depth++] = m->next;
		++*seg_depth;
		break;
	case 'E':
		assert_true(m->depth > 0 && *seg_depth > 0);
		assert_true(tu_is(e->name, wl_item(m->open[m->depth - 1], m->n).name));
		m->depth--;
		--*seg_depth;
		break;
	case 'b':
		assert_false(m->async_open);
		assert_true(tu_is(e->id, "0x7"));
		m->async_open = *seg_async = 1;
		break;
	case 'e':
		assert_true(m->async_open && *seg_async);
		m->async_open = *seg_async = 0;
		break;
	}
	m->next++;
}

/*
 * Check segment `no` at p (the JSON text: plain, or decompressed) and advance the model
 * over its events: its head, the lines that begin again what the model has open (the
 * B's own arguments and "continued"), its events in the predicted order with
 * non-decreasing times, the cut's lines ending what is still open (innermost first,
 * "cut"), nothing open after them, and the end marker's counts.
 */
static void check_segment(struct model *m, const char *p, unsigned no, int last)
{
	struct tt_trace t = {0};
	size_t seg_depth = 0, conts = 0, cuts = 0, cont_slices = 0;
	int seg_async = 0, phase = 0, named = 0, cont_async = 0;
	uint64_t events = 0;
	int64_t tid = -1;

	if (tt_load(p, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	assert_true(t.n >= 3);
	check_start_marker(m, &t.ev[0], no);
	for (size_t k = 1; k + 1 < t.n; k++) {
		const struct tt_event *e = &t.ev[k];
		if (strcmp(e->ph, "M") == 0) {
			if (tu_is(e->name, "thread_name"))
				named = 1;
			continue;
		}
		if (tid < 0)
			tid = e->tid;
		assert_int_equal(e->tid, tid); /* one thread records */
		assert_true(named);	       /* named before its first line */
		assert_true(e->has_ts);
		if (e->ts_ns < m->last_ts)
			fail_msg("%s:%zu: ts %lu before %lu", p, e->line, (unsigned long)e->ts_ns,
				 (unsigned long)m->last_ts);
		m->last_ts = e->ts_ns;
		if (flag_true(e, "continued")) {
			assert_true(phase <= 1);
			phase = 1;
			conts++;
			if (strcmp(e->ph, "B") == 0) {
				/* what was open, outermost first, with the B's own arguments */
				assert_true(cont_slices < m->depth);
				struct wl_want w = wl_item(m->open[cont_slices], m->n);
				assert_true(tu_is(e->name, w.name));
				if (!wl_args_match(e, &w, "continued"))
					fail_msg("%s:%zu: continued %s: wrong args", p, e->line,
						 w.name);
				cont_slices++;
				seg_depth++;
			} else {
				assert_string_equal(e->ph, "b");
				assert_true(m->async_open && !cont_async);
				struct wl_want w = wl_item(0, m->n);
				assert_true(tu_is(e->name, "request") && tu_is(e->id, "0x7"));
				assert_true(wl_args_match(e, &w, "continued"));
				cont_async = seg_async = 1;
			}
			continue;
		}
		if (phase <= 1) { /* everything open began again */
			assert_int_equal(cont_slices, m->depth);
			assert_int_equal(cont_async, m->async_open);
		}
		if (flag_true(e, "cut")) {
			phase = 3;
			cuts++;
			assert_int_equal(e->nargs, 1); /* {"cut":true}: no scope args here */
			if (strcmp(e->ph, "E") == 0) {
				/* innermost first: the model's stack is left as it is */
				assert_true(seg_depth > 0 && seg_depth <= m->depth);
				struct wl_want w = wl_item(m->open[seg_depth - 1], m->n);
				assert_true(tu_is(e->name, w.name));
				seg_depth--;
			} else {
				assert_string_equal(e->ph, "e");
				assert_true(seg_async && tu_is(e->id, "0x7"));
				seg_async = 0;
			}
			continue;
		}
		assert_true(phase <= 2); /* nothing after the cut but the end marker */
		phase = 2;
		if (strcmp(e->ph, "X") == 0) {
			assert_true(e->has_dur);
			take(m, e, 'B', e->ts_ns, &seg_depth, &seg_async);
			take(m, e, 'E', e->ts_ns + e->dur_ns, &seg_depth, &seg_async);
			events += 2;
		} else {
			assert_int_equal(strlen(e->ph), 1);
			take(m, e, e->ph[0], e->ts_ns, &seg_depth, &seg_async);
			events++;
		}
	}
	if (phase <= 1) {
		assert_int_equal(cont_slices, m->depth);
		assert_int_equal(cont_async, m->async_open);
	}
	/* the cut closed everything; after the last segment nothing was open at all */
	assert_int_equal(seg_depth, 0);
	assert_int_equal(seg_async, 0);
	assert_int_equal(cuts, last ? 0 : m->depth + (size_t)m->async_open);
	if (no == 0)
		assert_int_equal(conts, 0);

	const struct tt_event *end = &t.ev[t.n - 1];
	m->events += events;
	assert_true(tu_is(end->name, "ringtrace: end"));
	assert_true(flag_true(end, "final"));
	assert_int_equal(tu_arg_int(end, "events"), events);
	assert_int_equal(tu_arg_int(end, "segment"), no);
	const struct tt_arg *cont = tt_arg(end, "continues");
	assert_non_null(cont);
	assert_int_equal(cont->type, TT_BOOL);
	assert_int_equal(cont->b, !last);
	assert_int_equal(tu_arg_int(end, "events_session"), m->events);
	assert_int_equal(tu_arg_int(end, "continued"), conts);
	assert_int_equal(tu_arg_int(end, "cut"), cuts);
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
	assert_true(end->ts_ns >= m->last_ts);
	if (no < 64) {
		m->continued[no] = conts;
		m->cut[no] = cuts;
	}
	tt_free(&t);
}

/* Check segments [first, first + count) of a finished session as plain files. */
static void check_all(struct model *m, unsigned first, unsigned count, uint64_t limit)
{
	char seg[4200];

	for (unsigned no = first; no < first + count; no++) {
		wl_file(&files, no, seg, sizeof(seg));
		uint64_t size = tu_file_size(seg);
		if (limit != 0 && size > limit + SEG_SLACK)
			fail_msg("%s: %lu bytes, more than %lu + %u", seg, (unsigned long)size,
				 (unsigned long)limit, SEG_SLACK);
		if (no < 64)
			m->seg_bytes[no] = size;
		check_segment(m, seg, no, no + 1 == first + count);
	}
}

static void stop_and_check_stats(struct rtr_stats *st, uint64_t events)
{
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(st);
	assert_int_equal(st->events_dropped, 0);
	assert_int_equal(st->events_recorded, events);
	assert_int_equal(st->events_written, events);
}

/* Start with cfg, record the whole workload of n iterations (head, iterations, tail),
 * stop, and check the stats: every event written, none dropped. */
static void record_workload(const struct rtr_config *cfg, uint64_t n, struct rtr_stats *st)
{
	assert_int_equal(rtr_start(cfg), 0);
	wl_head();
	wl_iterations(0, n);
	wl_tail();
	stop_and_check_stats(st, wl_events(n));
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                      */

/* ~10 MB in 1 MiB segments: every segment whole and within its size, the slice and the
 * async span open across everything in each one, and all events, in order. */
static void size_rotation_makes_whole_segments_of_every_event(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct model m;
	uint64_t n = tu_scaled(15000, 7000);

	memset(&m, 0, sizeof(m));
	name_files("size", ".json");
	config(&cfg);
	cfg.max_mb = 1;
	record_workload(&cfg, n, &st);

	unsigned count = (unsigned)st.files;
	assert_true(count >= 4); /* the outer slice is open across at least three cuts */
	/* .0000 .. contiguous, nothing else: no file at the pattern, no temp file */
	wl_glob_count(&files, 0, count, 1);
	m.n = n;
	check_all(&m, 0, count, MIB);
	assert_int_equal(m.next, wl_events(n));
	assert_int_equal(m.events, st.events_written);
	for (unsigned no = 0; no + 1 < count && no < 64; no++) {
		/* outer and the async span at least, begun again and cut */
		if (no > 0)
			assert_true(m.continued[no] >= 2);
		assert_true(m.cut[no] >= 2);
	}
}

/*
 * A segment ends with room for one more line and its closing lines: so every segment
 * but the last holds max_mb MiB less that room (16 KiB and the closing lines),
 * whatever the events' worst-case sizes.
 */
static void size_rotation_fills_each_segment_to_max_mb(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	uint64_t n = tu_scaled(6000, 4000);
	char seg[4200];

	name_files("fill", ".json");
	config(&cfg);
	cfg.max_mb = 1;
	record_workload(&cfg, n, &st);
	assert_true(st.files >= 2);
	for (unsigned no = 0; no + 1 < st.files; no++) {
		wl_file(&files, no, seg, sizeof(seg));
		uint64_t size = tu_file_size(seg);
		if (size < MIB - 32 * 1024)
			fail_msg("%s: %lu bytes, want at least 1 MiB - 32 KiB (%lu)", seg,
				 (unsigned long)size, (unsigned long)(MIB - 32 * 1024));
	}
}

/* keep = 3: the writer deletes all but the newest three. */
static void keep_leaves_the_newest_segments(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	uint64_t n = tu_scaled(9000, 7000);
	char seg[4200];

	name_files("keep", ".json");
	config(&cfg);
	cfg.max_mb = 1;
	cfg.keep = 3;
	record_workload(&cfg, n, &st);
	unsigned count = (unsigned)st.files;
	assert_true(count > 3);
	wl_glob_count(&files, count - 3, 3, 1);
	uint64_t sum = 0, session = 0;
	for (unsigned no = count - 3; no < count; no++) {
		struct tt_trace t = {0};
		wl_file(&files, no, seg, sizeof(seg));
		if (tt_load(seg, TT_CHECK_ESCAPES, &t) != 0)
			fail_msg("%s", t.error);
		assert_true(t.complete);
		assert_int_equal(tu_arg_int(&t.ev[0], "segment"), no);
		const struct tt_event *end = tu_end_marker(&t);
		assert_int_equal(tu_arg_int(end, "segment"), no);
		sum += (uint64_t)tu_arg_int(end, "events");
		session = (uint64_t)tu_arg_int(end, "events_session");
		tt_free(&t);
	}
	assert_int_equal(session, st.events_written);
	assert_true(sum < st.events_written); /* the deleted ones held the rest */
}

/* max_seconds = 1, a slow producer for 2.5 s: at least two segments, each whole, and
 * no more than one a second of the session. */
static void seconds_rotation_cuts_a_slow_run(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct model m;
	uint64_t n = 0, t0 = rtr_now_ns();

	memset(&m, 0, sizeof(m));
	name_files("seconds", ".json");
	config(&cfg);
	cfg.max_seconds = 1;
	uint64_t session_from = tu_mono_ns();
	assert_int_equal(rtr_start(&cfg), 0);
	wl_head();
	while (rtr_now_ns() - t0 < 2500000000u) {
		wl_iterations(n, n + 1);
		n++;
		usleep(2000);
	}
	wl_tail();
	stop_and_check_stats(&st, wl_events(n));
	uint64_t session_ns = tu_mono_ns() - session_from;
	unsigned count = (unsigned)st.files;
	assert_true(count >= 2);
	/* A segment ends a second after it began, so a session of s seconds has at most
	 * 1 + s segments: measured, as a loaded machine stretches the 2.5 s run and
	 * rtr_stop() (it had a fixed 4). */
	if (count > 1 + session_ns / 1000000000u)
		fail_msg("%u segments in a session of %.2f s", count, (double)session_ns / 1e9);
	wl_glob_count(&files, 0, count, 1);
	m.n = n;
	check_all(&m, 0, count, 0);
	assert_int_equal(m.next, wl_events(n));
	assert_int_equal(m.events, st.events_written);
}

/* Decompress gz to out with zlib; returns the bytes of text. */
static uint64_t gunzip(const char *gz, const char *out)
{
	char buf[65536];
	uint64_t total = 0;
	int r;
	unsigned char magic[2];
	FILE *in = fopen(gz, "rb");

	assert_non_null(in);
	assert_int_equal(fread(magic, 1, 2, in), 2);
	fclose(in);
	assert_true(magic[0] == 0x1f && magic[1] == 0x8b);
	gzFile g = gzopen(gz, "rb");
	assert_non_null(g);
	FILE *o = fopen(out, "wb");
	assert_non_null(o);
	while ((r = gzread(g, buf, sizeof(buf))) > 0) {
		assert_int_equal(fwrite(buf, 1, (size_t)r, o), (size_t)r);
		total += (uint64_t)r;
	}
	int zerr;
	const char *msg = gzerror(g, &zerr);
	if (r < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR))
		fail_msg("%s: %s", gz, msg);
	assert_true(gzeof(g));
	assert_int_equal(gzclose(g), Z_OK);
	assert_int_equal(fclose(o), 0);
	return total;
}

/* .json.gz: each segment is a gzip file of its own holding a whole trace. */
static void gzip_segments_are_each_a_gzip_file_of_a_whole_trace(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct model m;
	uint64_t n = tu_scaled(6000, 4000);
	char seg[4200], txt[4300];

	memset(&m, 0, sizeof(m));
	name_files("gzip", ".json.gz");
	config(&cfg);
	cfg.max_mb = 1;
	record_workload(&cfg, n, &st);
	unsigned count = (unsigned)st.files;
	assert_true(count >= 2);
	wl_glob_count(&files, 0, count, 1);
	m.n = n;
	for (unsigned no = 0; no < count; no++) {
		wl_file(&files, no, seg, sizeof(seg));
		snprintf(txt, sizeof(txt), "%s.txt", seg); /* under the prefix: removed */
		uint64_t len = gunzip(seg, txt);
		assert_true(len <= MIB + SEG_SLACK);
		check_segment(&m, txt, no, no + 1 == count);
		unlink(txt);
	}
	assert_int_equal(m.next, wl_events(n));
	assert_int_equal(m.events, st.events_written);
	/* the recorder's text count covers the JSON of every segment */
	assert_true(st.bytes_uncompressed > st.bytes_written);
}

static void load_segment(unsigned no, struct tt_trace *t)
{
	char seg[4200];

	wl_file(&files, no, seg, sizeof(seg));
	if (tt_load(seg, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

/* rtr_snapshot() in stream mode: with rotation it ends the segment now; errors else. */
static void snapshot_in_stream_mode_ends_the_segment(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct tt_trace t = {0};
	char seg[4200];
	const struct tt_event *e[8];

	assert_int_equal(rtr_snapshot(NULL), -ENOTCONN);
	name_files("snap", ".json");
	config(&cfg);
	cfg.max_mb = 100;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin_v("app", "held", RTR_ARG_I64("n", 5));
	rtr_instant("app", "before");
	assert_int_equal(rtr_snapshot(NULL), 0);
	/* on return the next segment is in place and the first complete */
	wl_file(&files, 1, seg, sizeof(seg));
	assert_int_equal(access(seg, F_OK), 0);
	load_segment(0, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 3);
	assert_string_equal(e[0]->ph, "B");
	assert_true(tu_is(e[0]->name, "held"));
	assert_true(tu_is(e[1]->name, "before"));
	assert_string_equal(e[2]->ph, "E");
	assert_true(tu_is(e[2]->name, "held") && flag_true(e[2], "cut"));
	const struct tt_event *end = tu_end_marker(&t);
	assert_true(flag_true(end, "continues"));
	assert_int_equal(tu_arg_int(end, "events"), 2);
	tt_free(&t);

	assert_int_equal(rtr_snapshot(path), -EINVAL);
	assert_int_equal(rtr_snapshot("/tmp/elsewhere.json"), -EINVAL);
	rtr_instant("app", "after");
	rtr_end("app", "held");
	stop_and_check_stats(&st, 4);
	assert_int_equal(st.files, 2);
	wl_glob_count(&files, 0, 2, 1);
	load_segment(1, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 3);
	assert_true(tu_is(e[0]->name, "held") && flag_true(e[0], "continued"));
	assert_int_equal(tu_arg_int(e[0], "n"), 5);
	assert_true(tu_is(e[1]->name, "after"));
	assert_true(tu_is(e[2]->name, "held") && !flag_true(e[2], "cut"));
	end = tu_end_marker(&t);
	assert_false(flag_true(end, "continues"));
	assert_int_equal(tu_arg_int(end, "events"), 2);
	assert_int_equal(tu_arg_int(end, "segment"), 1);
	tt_free(&t);
	assert_int_equal(rtr_snapshot(NULL), -ENOTCONN);

	/* without rotation */
	wl_glob_remove(&files);
	tu_own_file(path, sizeof(path), "rotation", "plain", ".json");
	config(&cfg);
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(rtr_snapshot(NULL), -ENOTSUP);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.files, 0);
}

/* Arguments added to a slice open across a cut: on the cut's E and on the final E. */
static void scope_args_go_on_the_cut_and_the_final_end(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	name_files("scope", ".json");
	config(&cfg);
	cfg.max_mb = 100;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin_v("app", "held", RTR_ARG_I64("n", 5));
	rtr_scope_arg_i64("app", "rows", 17);
	rtr_scope_arg_str_copy("app", "stage", "load");
	assert_int_equal(rtr_snapshot(NULL), 0);
	rtr_scope_arg_f64("app", "ratio", 0.5);
	rtr_end("app", "held");
	stop_and_check_stats(&st, 5);

	load_segment(0, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	assert_true(tu_is(e[0]->name, "held"));
	assert_int_equal(tu_arg_int(e[0], "n"), 5);
	assert_string_equal(e[1]->ph, "E");
	assert_true(flag_true(e[1], "cut"));
	assert_int_equal(tu_arg_int(e[1], "rows"), 17);
	assert_true(tu_is(arg_str(e[1], "stage"), "load"));
	assert_int_equal(e[1]->nargs, 3);
	tt_free(&t);

	load_segment(1, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	assert_string_equal(e[0]->ph, "B");
	assert_true(flag_true(e[0], "continued"));
	assert_int_equal(tu_arg_int(e[0], "n"), 5);
	assert_int_equal(e[0]->nargs, 2);
	assert_string_equal(e[1]->ph, "E");
	assert_false(flag_true(e[1], "cut"));
	assert_int_equal(tu_arg_int(e[1], "rows"), 17);
	assert_true(tu_is(arg_str(e[1], "stage"), "load"));
	const struct tt_arg *ratio = tt_arg(e[1], "ratio");
	assert_non_null(ratio);
	assert_true(ratio->d == 0.5);
	assert_int_equal(e[1]->nargs, 3);
	tt_free(&t);
}

static void environment_sets_rotation_and_a_bad_value_keeps_the_default(void **state)
{
	(void)state;
	struct rtr_config cfg;
	char err[4096];

	setenv("RINGTRACE_MAX_MB", "5", 1);
	setenv("RINGTRACE_MAX_SECONDS", "7", 1);
	setenv("RINGTRACE_KEEP", "2", 1);
	wl_config_init_capture(&cfg, "rotation", err, sizeof(err));
	assert_int_equal(cfg.max_mb, 5);
	assert_int_equal(cfg.max_seconds, 7);
	assert_int_equal(cfg.keep, 2);
	assert_int_equal(cfg.version, RTR_CONFIG_VERSION);
	assert_string_equal(err, "");

	setenv("RINGTRACE_MAX_MB", "lots", 1);
	setenv("RINGTRACE_MAX_SECONDS", "31536001", 1);
	setenv("RINGTRACE_KEEP", "-1", 1);
	wl_config_init_capture(&cfg, "rotation", err, sizeof(err));
	unsetenv("RINGTRACE_MAX_MB");
	unsetenv("RINGTRACE_MAX_SECONDS");
	unsetenv("RINGTRACE_KEEP");
	assert_int_equal(cfg.max_mb, 0);
	assert_int_equal(cfg.max_seconds, 0);
	assert_int_equal(cfg.keep, 0);
	assert_non_null(strstr(err, "RINGTRACE_MAX_MB=\"lots\""));
	assert_non_null(strstr(err, "RINGTRACE_MAX_SECONDS=\"31536001\""));
	assert_non_null(strstr(err, "RINGTRACE_KEEP=\"-1\""));
	assert_non_null(strstr(err, "keeping the default"));

	setenv("RINGTRACE_MAX_MB", "1048577", 1);
	wl_config_init_capture(&cfg, "rotation", err, sizeof(err));
	unsetenv("RINGTRACE_MAX_MB");
	assert_int_equal(cfg.max_mb, 0);
	assert_non_null(strstr(err, "RINGTRACE_MAX_MB"));
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, wl_setup, wl_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(size_rotation_makes_whole_segments_of_every_event),
		TEST(size_rotation_fills_each_segment_to_max_mb),
		TEST(keep_leaves_the_newest_segments),
		TEST(seconds_rotation_cuts_a_slow_run),
		TEST(gzip_segments_are_each_a_gzip_file_of_a_whole_trace),
		TEST(snapshot_in_stream_mode_ends_the_segment),
		TEST(scope_args_go_on_the_cut_and_the_final_end),
		TEST(environment_sets_rotation_and_a_bad_value_keeps_the_default),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("rotation", tests, NULL, NULL);
}
