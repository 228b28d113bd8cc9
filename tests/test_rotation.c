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

/* A slice of the workload open in the model: its B is not in the file, its X comes at
 * its E (or at a cut). */
struct level {
	uint64_t item;	      /* its B in the workload */
	unsigned seg;	      /* the segment its B went to */
	uint64_t floor;	      /* its B is no earlier than the event before it */
	uint64_t first_after; /* nor later than the first event after it */
	int has_after;
};

/* What the segments so far have shown of the workload. */
struct model {
	uint64_t n;	       /* iterations recorded */
	uint64_t next;	       /* the next event expected, in recording order */
	struct level open[16]; /* the slices open, outermost first */
	size_t depth;
	int async_open;	      /* b request seen, e not yet */
	uint64_t last_ts;     /* the thread's latest time so far, across segments */
	uint64_t cut_ts;      /* where the last segment was cut: what continues starts */
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

/* The Bs recorded before the next event in the file (theirs are not written) enter the
 * model as open slices; at most `most` of them. */
static void take_begins(struct model *m, unsigned no, size_t most)
{
	while (most-- > 0 && m->next < wl_events(m->n) && wl_item(m->next, m->n).ph == 'B') {
		assert_true(m->depth < 16);
		m->open[m->depth++] = (struct level){m->next, no, m->last_ts, 0, 0};
		m->next++;
	}
}

/* An event at ts (its start): the first after the Bs of the slices just opened. */
static void mark_after(struct model *m, uint64_t ts)
{
	for (size_t d = m->depth; d-- > 0 && !m->open[d].has_after;) {
		m->open[d].first_after = ts;
		m->open[d].has_after = 1;
	}
}

/* The thread's times, in file order, never go backwards: each event's time, an X's end
 * (it is written at its E). */
static void advance(struct model *m, const char *p, const struct tt_event *e, uint64_t at)
{
	if (at < m->last_ts)
		fail_msg("%s:%zu: %s %s at %lu, before %lu", p, e->line, e->ph, e->name,
			 (unsigned long)at, (unsigned long)m->last_ts);
	m->last_ts = at;
}

/* An X's start: the B's time, between the events around it; or, for a slice begun in
 * an earlier segment, the cut where this one starts. */
static void check_start(const struct model *m, const char *p, const struct tt_event *e,
			const struct level *lv, int continued)
{
	if (continued ? e->ts_ns != m->cut_ts
		      : e->ts_ns < lv->floor || (lv->has_after && e->ts_ns > lv->first_after))
		fail_msg("%s:%zu: %s%s starts at %lu: want %s %lu", p, e->line, e->name,
			 continued ? " (continued)" : "", (unsigned long)e->ts_ns,
			 continued ? "the cut at" : "its B's time, at or after",
			 (unsigned long)(continued ? m->cut_ts : lv->floor));
}

/* A real event other than an X against the next one predicted. */
static void take(struct model *m, const char *p, const struct tt_event *e, unsigned no,
		 int *seg_async)
{
	take_begins(m, no, SIZE_MAX);
	assert_true(m->next < wl_events(m->n));
	struct wl_want w = wl_item(m->next, m->n);
	if (e->ph[0] != w.ph || e->ph[1] != '\0' || !tu_is(e->name, w.name))
		fail_msg("%s:%zu: event %lu is %s %s, want %c %s", p, e->line,
			 (unsigned long)m->next, e->ph, e->name ? e->name : "(null)", w.ph, w.name);
	assert_true(tu_is(e->cat, "app"));
	if (!wl_args_match(e, &w, NULL))
		fail_msg("%s:%zu: event %lu (%c %s) has the wrong args", p, e->line,
			 (unsigned long)m->next, w.ph, w.name);
	if (w.ph == 'i') { /* its time is when it was recorded */
		const struct tt_arg *now = tt_arg(e, "now");
		uint64_t abs = m->origin_ns + e->ts_ns;
		assert_true(now->fits & TT_FITS_U64);
		if (abs + 1000000 < now->u || abs > now->u + 5000000000u)
			fail_msg("%s:%zu: tick at %lu ns, recorded at %lu", p, e->line,
				 (unsigned long)abs, (unsigned long)now->u);
	}
	if (w.ph == 'b') {
		assert_false(m->async_open);
		assert_true(tu_is(e->id, "0x7"));
		m->async_open = *seg_async = 1;
	} else if (w.ph == 'e') {
		assert_true(m->async_open && *seg_async);
		m->async_open = *seg_async = 0;
	}
	mark_after(m, e->ts_ns);
	advance(m, p, e, e->ts_ns);
	m->next++;
}

/* An X that is not a cut's: the innermost open slice, ended by the next event
 * predicted, its E. Returns the events it stands for (its E, and its B if the B went
 * to this segment). */
static uint64_t take_x(struct model *m, const char *p, const struct tt_event *e, unsigned no)
{
	take_begins(m, no, SIZE_MAX);
	assert_true(e->has_dur);
	if (m->depth == 0)
		fail_msg("%s:%zu: X %s with nothing open", p, e->line, e->name);
	struct level *lv = &m->open[m->depth - 1];
	struct wl_want b = wl_item(lv->item, m->n);
	int continued = lv->seg < no;
	if (!tu_is(e->name, b.name) || !tu_is(e->cat, "app"))
		fail_msg("%s:%zu: X %s, want X %s", p, e->line, e->name, b.name);
	if (!wl_args_match(e, &b, continued ? "continued" : NULL))
		fail_msg("%s:%zu: X %s%s has the wrong args", p, e->line, b.name,
			 continued ? " (continued)" : "");
	check_start(m, p, e, lv, continued);
	assert_true(m->next < wl_events(m->n));
	struct wl_want w = wl_item(m->next, m->n);
	if (w.ph != 'E' || !tu_is(w.name, b.name))
		fail_msg("%s:%zu: X %s written where %c %s is due", p, e->line, b.name, w.ph,
			 w.name);
	mark_after(m, e->ts_ns);
	advance(m, p, e, e->ts_ns + e->dur_ns);
	m->next++;
	m->depth--;
	return continued ? 1 : 2;
}

/*
 * Check segment `no` at p (the JSON text: plain, or decompressed) and advance the model
 * over its events: its head, the async span begun again ("continued", at the cut), its
 * events in the predicted order (each slice one X where its E is, at its B's time, or
 * at the cut when it began in an earlier segment, then "continued"), the thread's times
 * never going backwards, the cut's lines ending what is still open (innermost first,
 * "cut", all at one time: the thread's latest), and the end marker's counts.
 */
static void check_segment(struct model *m, const char *p, unsigned no, int last)
{
	struct tt_trace t = {0};
	size_t conts = 0, cuts = 0, cut_x = 0, seg_cut = 0;
	int seg_async = 0, phase = 0, named = 0, has_cut = 0;
	uint64_t events = 0, cut_end = 0;
	int64_t tid = -1;

	if (tt_load(p, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	assert_true(t.n >= 3);
	check_start_marker(m, &t.ev[0], no);
	for (size_t k = 1; k + 1 < t.n; k++)
		cut_x += flag_true(&t.ev[k], "cut") && strcmp(t.ev[k].ph, "X") == 0;
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
		int continued = flag_true(e, "continued");
		conts += continued;
		if (flag_true(e, "cut")) {
			if (phase < 3) { /* the slices open at the cut, Bs and all */
				assert_true(cut_x >= m->depth);
				take_begins(m, no, cut_x - m->depth);
				assert_int_equal(m->depth, cut_x);
				seg_cut = m->depth;
			}
			phase = 3;
			cuts++;
			uint64_t at = e->ts_ns;
			if (strcmp(e->ph, "X") == 0) {
				/* innermost first: the model's stack is left as it is */
				assert_true(seg_cut > 0);
				const struct level *lv = &m->open[--seg_cut];
				struct wl_want w = wl_item(lv->item, m->n);
				int began_before = lv->seg < no;
				assert_true(tu_is(e->name, w.name));
				assert_int_equal(continued, began_before);
				if (!wl_args_match2(e, &w, "cut",
						    began_before ? "continued" : NULL))
					fail_msg("%s:%zu: cut %s: wrong args", p, e->line, w.name);
				check_start(m, p, e, lv, began_before);
				events += !began_before; /* its B */
				/* ended at the cut and 1 ns more for each level it holds open
				 * (its own included): what ended inside it stays inside */
				at = e->ts_ns + e->dur_ns - (cut_x - seg_cut);
			} else {
				assert_string_equal(e->ph, "e");
				assert_true(seg_async && tu_is(e->id, "0x7"));
				assert_int_equal(e->nargs, 1); /* {"cut":true} */
				seg_async = 0;
			}
			if (!has_cut)
				cut_end = at;
			has_cut = 1;
			if (at != cut_end)
				fail_msg("%s:%zu: cut %s at %lu, the cut is at %lu", p, e->line,
					 e->name, (unsigned long)at, (unsigned long)cut_end);
			if (at < m->last_ts)
				fail_msg("%s:%zu: cut %s ends at %lu, before the thread's latest "
					 "time %lu",
					 p, e->line, e->name, (unsigned long)at,
					 (unsigned long)m->last_ts);
			continue;
		}
		if (continued && strcmp(e->ph, "b") == 0) {
			assert_true(phase <= 1);
			phase = 1;
			assert_true(m->async_open && !seg_async);
			struct wl_want w = wl_item(0, m->n);
			assert_true(tu_is(e->name, "request") && tu_is(e->id, "0x7"));
			assert_true(wl_args_match(e, &w, "continued"));
			assert_int_equal(e->ts_ns, m->cut_ts);
			seg_async = 1;
			continue;
		}
		if (phase <= 1) /* the async span began again */
			assert_int_equal(seg_async, m->async_open);
		assert_true(phase <= 2); /* nothing after the cut but the end marker */
		phase = 2;
		if (strcmp(e->ph, "X") == 0) {
			events += take_x(m, p, e, no);
		} else {
			assert_false(continued);
			take(m, p, e, no, &seg_async);
			events++;
		}
	}
	if (phase <= 1)
		assert_int_equal(seg_async, m->async_open);
	/* the cut ended everything; after the last segment nothing was open at all */
	assert_int_equal(seg_cut, 0);
	assert_int_equal(seg_async, 0);
	assert_int_equal(cuts, last ? 0 : m->depth + (size_t)m->async_open);
	if (last)
		assert_int_equal(m->depth, 0);
	if (no == 0)
		assert_int_equal(conts, 0);
	if (has_cut) {
		m->cut_ts = cut_end;
		if (cut_end > m->last_ts)
			m->last_ts = cut_end;
	}

	const struct tt_event *end = &t.ev[t.n - 1];
	m->events += events;
	assert_true(tu_is(end->name, "ringtrace: end"));
	assert_true(flag_true(end, "final"));
	if (tu_arg_int(end, "events") != (int64_t)events)
		fail_msg("%s: the end marker counts %ld events, the lines show %lu (each B where "
			 "its X or its cut's X is not \"continued\", each E and other event)",
			 p, (long)tu_arg_int(end, "events"), (unsigned long)events);
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
	/* held, open at the cut: an X from its B to the cut, the thread's latest time */
	load_segment(0, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	assert_true(tu_is(e[0]->name, "before"));
	assert_string_equal(e[1]->ph, "X");
	assert_true(tu_is(e[1]->name, "held") && flag_true(e[1], "cut"));
	assert_false(flag_true(e[1], "continued"));
	assert_int_equal(tu_arg_int(e[1], "n"), 5);
	assert_int_equal(e[1]->nargs, 2);
	assert_true(e[1]->ts_ns <= e[0]->ts_ns);
	uint64_t cut = e[1]->ts_ns + e[1]->dur_ns;
	assert_int_equal(cut, e[0]->ts_ns + 1); /* and 1 ns for the level it holds open */
	const struct tt_event *end = tu_end_marker(&t);
	assert_true(flag_true(end, "continues"));
	assert_int_equal(tu_arg_int(end, "events"), 2);
	assert_int_equal(tu_arg_int(end, "cut"), 1);
	tt_free(&t);

	assert_int_equal(rtr_snapshot(path), -EINVAL);
	assert_int_equal(rtr_snapshot("/tmp/elsewhere.json"), -EINVAL);
	rtr_instant("app", "after");
	rtr_end("app", "held");
	stop_and_check_stats(&st, 4);
	assert_int_equal(st.files, 2);
	wl_glob_count(&files, 0, 2, 1);
	/* and one X from the cut to its E, "continued" */
	load_segment(1, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	assert_true(tu_is(e[0]->name, "after"));
	assert_string_equal(e[1]->ph, "X");
	assert_true(tu_is(e[1]->name, "held") && flag_true(e[1], "continued"));
	assert_false(flag_true(e[1], "cut"));
	assert_int_equal(tu_arg_int(e[1], "n"), 5);
	assert_int_equal(e[1]->nargs, 2);
	assert_int_equal(e[1]->ts_ns, cut - 1); /* the thread's latest time at the cut */
	assert_true(e[1]->ts_ns + e[1]->dur_ns >= e[0]->ts_ns);
	end = tu_end_marker(&t);
	assert_false(flag_true(end, "continues"));
	assert_int_equal(tu_arg_int(end, "events"), 2);
	assert_int_equal(tu_arg_int(end, "segment"), 1);
	assert_int_equal(tu_arg_int(end, "continued"), 1);
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

/* Arguments added to a slice open across a cut: on the cut's X and on the final X. */
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

	/* the B's arguments, those added so far, then "cut" */
	load_segment(0, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 1);
	assert_string_equal(e[0]->ph, "X");
	assert_true(tu_is(e[0]->name, "held"));
	assert_true(flag_true(e[0], "cut"));
	assert_int_equal(e[0]->nargs, 4);
	assert_string_equal(e[0]->args[0].key, "n");
	assert_int_equal(e[0]->args[0].i, 5);
	assert_string_equal(e[0]->args[1].key, "rows");
	assert_int_equal(e[0]->args[1].i, 17);
	assert_string_equal(e[0]->args[2].key, "stage");
	assert_true(tu_is(e[0]->args[2].s, "load"));
	assert_string_equal(e[0]->args[3].key, "cut");
	uint64_t cut = e[0]->ts_ns + e[0]->dur_ns - 1; /* and 1 ns for the level it holds */
	tt_free(&t);

	/* the B's arguments, every one added, then "continued"; from the cut on */
	load_segment(1, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 1);
	assert_string_equal(e[0]->ph, "X");
	assert_true(tu_is(e[0]->name, "held"));
	assert_true(flag_true(e[0], "continued"));
	assert_false(flag_true(e[0], "cut"));
	assert_int_equal(e[0]->nargs, 5);
	assert_int_equal(tu_arg_int(e[0], "n"), 5);
	assert_int_equal(tu_arg_int(e[0], "rows"), 17);
	assert_true(tu_is(arg_str(e[0], "stage"), "load"));
	const struct tt_arg *ratio = tt_arg(e[0], "ratio");
	assert_non_null(ratio);
	assert_true(ratio->d == 0.5);
	assert_string_equal(e[0]->args[4].key, "continued");
	if (e[0]->ts_ns != cut)
		fail_msg("the continued X starts at %lu ns, not at the cut (%lu)",
			 (unsigned long)e[0]->ts_ns, (unsigned long)cut);
	tt_free(&t);
}

/* A resolver of source lines for code arguments: "fake.c:<addr>" below 0x10000. */
static size_t fake_srcline(uint64_t addr, char *out, size_t cap)
{
	int n = snprintf(out, cap, "fake.c:%u", (unsigned)addr);

	return addr < 0x10000 && n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The first event named name among e[0..n), or NULL. */
static const struct tt_event *named(const struct tt_event *const *e, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (tu_is(e[i]->name, name))
			return e[i];
	return NULL;
}

/* e's "code" is the string hex and its "src" src (NULL: none). */
static void expect_code(const struct tt_event *e, const char *hex, const char *src)
{
	assert_non_null(e);
	assert_true(tu_is(arg_str(e, "code"), hex));
	if (src == NULL)
		assert_null(tt_arg(e, "src"));
	else
		assert_true(tu_is(arg_str(e, "src"), src));
}

/* Code arguments (rtr__arg_key_code, the OMPT tool's): "code" in hex and "src", the
 * line of the call before the address, from the resolver: on a slice folded at once,
 * on one held open across a cut (on both of its X), none where the resolver does not
 * know the address, and none without a resolver. A key "code" of the program's own is
 * a number. */
static void code_args_carry_their_source_line_across_a_cut(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	name_files("code", ".json");
	config(&cfg);
	cfg.max_mb = 100;
	assert_true(rtr__srcline_offer(fake_srcline));
	assert_false(rtr__srcline_offer(fake_srcline)); /* one is registered: it stays */
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin_v("app", "held", RTR_ARG_I64("n", 5), RTR_ARG_U64(rtr__arg_key_code, 0x101));
	rtr_begin_v("app", "folded", RTR_ARG_U64(rtr__arg_key_code, 0x2a));
	rtr_end("app", "folded");
	rtr_instant_v("app", "unknown", RTR_ARG_U64(rtr__arg_key_code, 0x123456));
	rtr_instant_v("app", "own", RTR_ARG_U64("code", 7));
	assert_int_equal(rtr_snapshot(NULL), 0);
	rtr_end("app", "held");
	stop_and_check_stats(&st, 6);

	load_segment(0, &t);
	size_t n = tu_events_of(&t, e, 8);
	assert_int_equal(n, 4);
	expect_code(named(e, n, "folded"), "0x2a", "fake.c:41");
	expect_code(named(e, n, "unknown"), "0x123456", NULL);
	const struct tt_arg *own = tt_arg(named(e, n, "own"), "code");
	assert_int_equal(own->type, TT_INT);
	assert_int_equal(own->i, 7);
	const struct tt_event *held = named(e, n, "held");
	expect_code(held, "0x101", "fake.c:256");
	assert_true(flag_true(held, "cut"));
	assert_int_equal(tu_arg_int(held, "n"), 5);
	tt_free(&t);
	load_segment(1, &t);
	n = tu_events_of(&t, e, 8);
	assert_int_equal(n, 1);
	expect_code(e[0], "0x101", "fake.c:256");
	assert_true(flag_true(e[0], "continued"));
	tt_free(&t);

	rtr__srcline_set(NULL); /* none: the code alone */
	wl_glob_remove(&files);
	tu_own_file(path, sizeof(path), "rotation", "code-none", ".json");
	config(&cfg);
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin_v("app", "folded", RTR_ARG_U64(rtr__arg_key_code, 0x2a));
	rtr_end("app", "folded");
	stop_and_check_stats(&st, 2);
	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_int_equal(tu_events_of(&t, e, 8), 1);
	expect_code(e[0], "0x2a", NULL);
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
		TEST(code_args_carry_their_source_line_across_a_cut),
		TEST(environment_sets_rotation_and_a_bad_value_keeps_the_default),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("rotation", tests, NULL, NULL);
}
