/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats`: where the time went, from one streaming pass over a trace.
 *
 * Per name (or category, or thread): count, total, self time, mean, p50, p99, max of
 * the slices (X, and B/E pairs); per thread, the share of its observed span covered
 * by top-level slices; async spans (b/e) by name; counter series; and what the
 * recorder's end marker says it dropped. State is per name, per thread, per open
 * slice and per open async id, never per event (see the bounds below).
 *
 * The numbers come from the tally (tally.h; tally_nest.c says how self time is found
 * and what that assumes): percentiles from a sketch per key (sketch.h: within 1 %);
 * count, total, self, min, max and mean are exact integers of nanoseconds.
 */
#include "cli.h"
#include "common/names.h"
#include "json.h"
#include "report.h"
#include "spread.h"
#include "stats_polls.h"
#include "tally_file.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What a report is made of: the tables summed over the inputs, and the options. */
struct stats {
	const struct tally_sum *s;
	const struct tally_options *opt;
	unsigned jobs;
};

/* A value to sort, with its place in the file: ties keep the order of first
 * appearance (qsort is not stable), so that a report does not change from run to run. */
struct ranked {
	void *v;
	uint64_t key; /* the larger, the earlier */
	size_t at;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return (x->at > y->at) - (x->at < y->at);
}

static uint64_t row_rank(const void *v)
{
	return ((const struct row *)v)->total;
}

static uint64_t async_rank(const void *v)
{
	return ((const struct async_row *)v)->total;
}

/* The values of a table by rank, the largest first (*n of them); NULL when empty or out
 * of memory. Each v[i].v is a value of the table. */
static struct ranked *sorted(const struct table *t, uint64_t (*rank)(const void *), size_t *n)
{
	struct ranked *v = t->count > 0 ? malloc(t->count * sizeof(*v)) : NULL;
	size_t i = 0;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (void *p = table_first(t); p != NULL; p = table_next(p), i++)
		v[i] = (struct ranked){p, rank(p), i};
	qsort(v, i, sizeof(*v), by_rank);
	*n = i;
	return v;
}

/* Threads with slices, busiest first. */
static struct ranked *busy_threads(const struct stats *c, size_t *n)
{
	size_t cap = c->s->threads.count, i = 0, at = 0;
	struct ranked *v = cap > 0 ? malloc(cap * sizeof(*v)) : NULL;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (struct sum_thread *t = table_first(&c->s->threads); t != NULL;
	     t = table_next(t), at++) {
		if (t->slices > 0)
			v[i++] = (struct ranked){t, t->busy, at};
	}
	qsort(v, i, sizeof(*v), by_rank);
	*n = i;
	return v;
}

static size_t shown_rows(const struct stats *c, size_t n)
{
	return c->opt->top == 0 || c->opt->top > n ? n : (size_t)c->opt->top;
}

/* ----------------------------------------------------------- human report */

/* The first line: what was read. */
static void print_inputs(const struct stats *c)
{
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "no JSON value",
		[TRACE_FORM_ARRAY] = "bare array",
		[TRACE_FORM_OBJECT] = "object form",
	};
	const struct tally_sum *s = c->s;
	const struct trace_status *st = &s->st;
	const char *floor = s->lost_threads ? "at least " : "";
	char b[32];

	if (s->files > 1)
		printf("%" PRIu64 " inputs (%" PRIu64 " traces, %" PRIu64 " profiles)", s->files,
		       s->files - s->profiles, s->profiles);
	else
		printf("%s: %s", tally_sum_file_name(s, s->first_file),
		       s->profiles > 0 ? "a profile, " : "");
	printf("%s%" PRIu64 " event%s on %s%" PRIu64 " thread%s (%s)", s->files > 1 ? ": " : "",
	       s->events, s->events == 1 ? "" : "s", floor, s->thread_count,
	       s->thread_count == 1 ? "" : "s",
	       s->profiles == s->files ? "as the profiles count them" : TRACE_COUNTS_WHAT);
	if (s->has_time)
		printf(", %s from first to last",
		       report_ns(b, sizeof(b), span_ns(s->first_ns, s->last_ns)));
	if (s->files > 1)
		printf("; %" PRIu64 " read up to malformed input\n", s->errors);
	else if (s->profiles > 0)
		printf("\n");
	else
		printf("; %s%s, %s\n", forms[st->form], st->gzip ? ", gzip" : "",
		       st->error != TRACE_OK ? "read stopped at an error"
		       : st->complete	     ? "complete"
		       : st->cut	     ? "cut short"
					     : "ended");
}

static void print_header(const struct stats *c)
{
	const char *w = c->s->warnings.p;
	const struct end_marker *m = &c->s->end;

	print_inputs(c);
	if (c->s->ends > 0) {
		printf("recorder: dropped %" PRIu64 " (ring full %" PRIu64 ", too large %" PRIu64
		       ", I/O %" PRIu64,
		       m->v[END_DROPPED], m->v[END_FULL], m->v[END_LARGE], m->v[END_IO]);
		/* reasons newer files have: shown when they happened */
		if (m->v[END_REENTRANT] != 0)
			printf(", reentrant %" PRIu64, m->v[END_REENTRANT]);
		if (m->v[END_CORRUPT] != 0)
			printf(", corrupt %" PRIu64, m->v[END_CORRUPT]);
		if (m->v[END_NO_TRACK] != 0)
			printf(", no track %" PRIu64, m->v[END_NO_TRACK]);
		printf("), args cut %" PRIu64, m->v[END_ARGS_CUT]);
		if (c->s->files > 1)
			printf("; end markers in %" PRIu64 " of %" PRIu64 " inputs, %" PRIu64
			       " final\n",
			       c->s->ends, c->s->files, c->s->ends_final);
		else
			printf("; %s %s%s\n", c->s->profiles > 0 ? "profile" : "end marker",
			       !m->has_final ? "without final"
			       : m->final    ? "final"
					     : "not final",
			       m->repaired ? ", repaired" : "");
	} else {
		printf("recorder: no end marker, so no counts of dropped events\n");
	}
	for (size_t i = 0; i < c->s->nwarnings; i++, w += strlen(w) + 1)
		printf("warning: %s\n", w);
}

static void print_slices(const struct stats *c)
{
	static const char *const nones[] = {[BY_NAME] = "(no name)", [BY_CAT] = "(no cat)"};
	char s[7][32];
	struct buf label = {0};
	size_t n, shown;
	struct ranked *rows = sorted(&c->s->rows, row_rank, &n);

	shown = shown_rows(c, n);
	printf("\nslices by %s: %" PRIu64 " slice%s, %zu %s (percentiles within %g%%)\n",
	       tally_by_names[c->opt->by], c->s->slices, c->s->slices == 1 ? "" : "s", n,
	       c->opt->by == BY_NAME  ? (n == 1 ? "name" : "names")
	       : c->opt->by == BY_CAT ? (n == 1 ? "category" : "categories")
				      : (n == 1 ? "thread" : "threads"),
	       RTR__SKETCH_ALPHA * 100);
	if (shown < n)
		printf("(the top %zu by total; --top 0 shows all)\n", shown);
	if (n == 0) {
		free(rows);
		return;
	}
	printf("%10s %10s %10s %10s %10s %10s %10s  %s\n", "count", "total", "self", "mean", "p50",
	       "p99", "max", tally_by_names[c->opt->by]);
	for (size_t i = 0; i < shown; i++) {
		const struct row *r = rows[i].v;

		printf("%10" PRIu64 " %10s %10s %10s %10s %10s %10s  ", r->dur.count,
		       report_ns(s[0], sizeof(s[0]), r->total),
		       report_ns(s[1], sizeof(s[1]), r->self),
		       report_ns(s[2], sizeof(s[2]), report_mean(r->total, r->dur.count)),
		       report_ns(s[3], sizeof(s[3]), rtr__sketch_quantile(&r->dur, 5000)),
		       report_ns(s[4], sizeof(s[4]), rtr__sketch_quantile(&r->dur, 9900)),
		       report_ns(s[5], sizeof(s[5]), r->dur.max));
		if (c->opt->by == BY_THREAD) {
			if (tally_sum_thread_label(c->s, &label, r->file, r->pid, r->tid) == 0)
				report_clean(stdout, label.p, label.len - 1);
		} else {
			size_t len;
			const char *k = tally_key_string(&c->s->rows, r, &len);

			if (k != NULL)
				report_clean(stdout, k, len);
			else
				fputs(nones[c->opt->by], stdout);
		}
		putchar('\n');
	}
	buf_free(&label);
	free(rows);
}

static void print_threads(const struct stats *c)
{
	char s[2][32];
	struct buf label = {0};
	size_t n, shown;
	struct ranked *v = busy_threads(c, &n);

	if (n == 0) {
		free(v);
		return;
	}
	shown = shown_rows(c, n);
	printf("\nbusy share by thread: top-level slices over the span from its first to its "
	       "last event\n");
	if (shown < n)
		printf("(the %zu busiest of %zu; --top 0 shows all)\n", shown, n);
	printf("%10s %10s %7s  %s\n", "busy", "span", "share", "thread");
	for (size_t i = 0; i < shown; i++) {
		const struct sum_thread *t = v[i].v;
		uint64_t span = t->has_span ? span_ns(t->first_ns, t->last_ns) : 0;

		printf("%10s %10s ", report_ns(s[0], sizeof(s[0]), t->busy),
		       report_ns(s[1], sizeof(s[1]), span));
		if (span > 0)
			printf("%6.1f%%  ", 100.0 * (double)t->busy / (double)span);
		else
			printf("%7s  ", "-");
		if (tally_sum_thread_label(c->s, &label, t->file, t->pid, t->tid) == 0)
			report_clean(stdout, label.p, label.len - 1);
		putchar('\n');
	}
	buf_free(&label);
	free(v);
}

static void print_async(const struct stats *c)
{
	char s[5][32];
	size_t n, shown;
	struct ranked *rows = sorted(&c->s->async_rows, async_rank, &n);

	if (n == 0) {
		free(rows);
		return;
	}
	shown = shown_rows(c, n);
	printf("\nasync spans by name: %" PRIu64 " span%s (b/e matched on cat, id and name), %zu "
	       "name%s\n",
	       c->s->async_spans, c->s->async_spans == 1 ? "" : "s", n, n == 1 ? "" : "s");
	if (shown < n)
		printf("(showing %zu; --top 0 shows all)\n", shown);
	printf("%10s %10s %10s %10s %10s %10s  %s\n", "count", "total", "mean", "p50", "p99", "max",
	       "name");
	for (size_t i = 0; i < shown; i++) {
		const struct async_row *r = rows[i].v;
		size_t len;
		const char *k = tally_key_string(&c->s->async_rows, r, &len);

		printf("%10" PRIu64 " %10s %10s %10s %10s %10s  ", r->dur.count,
		       report_ns(s[0], sizeof(s[0]), r->total),
		       report_ns(s[1], sizeof(s[1]), report_mean(r->total, r->dur.count)),
		       report_ns(s[2], sizeof(s[2]), rtr__sketch_quantile(&r->dur, 5000)),
		       report_ns(s[3], sizeof(s[3]), rtr__sketch_quantile(&r->dur, 9900)),
		       report_ns(s[4], sizeof(s[4]), r->dur.max));
		if (k != NULL)
			report_clean(stdout, k, len);
		else
			fputs("(no name)", stdout);
		putchar('\n');
	}
	free(rows);
}

/* The name and series of a counter's key. */
static void counter_key(const struct table *t, const struct counter *k, const char **name,
			size_t *name_len, const char **series, size_t *series_len)
{
	size_t len;
	const char *p = table_key(t, k, &len);

	memcpy(name_len, p, sizeof(*name_len));
	*name = p + sizeof(*name_len);
	*series = *name + *name_len;
	*series_len = len - sizeof(*name_len) - *name_len;
}

static void print_counters(const struct stats *c)
{
	size_t n = c->s->counters.count, shown = shown_rows(c, n), i = 0;

	if (n == 0)
		return;
	printf("\ncounters: %zu series\n", n);
	if (shown < n)
		printf("(the first %zu in file order; --top 0 shows all)\n", shown);
	printf("%10s %14s %14s  %s\n", "samples", "min", "max", "series");
	for (const struct counter *k = table_first(&c->s->counters); k != NULL && i < shown;
	     k = table_next(k), i++) {
		const char *name, *series;
		size_t name_len, series_len;

		counter_key(&c->s->counters, k, &name, &name_len, &series, &series_len);
		printf("%10" PRIu64 " %14.6g %14.6g  ", k->samples, k->min, k->max);
		report_clean(stdout, name, name_len);
		putchar(' ');
		report_clean(stdout, series, series_len);
		putchar('\n');
	}
}

static void print_notes(const struct stats *c)
{
	bool any = false;

	for (int i = 0; i < AN_COUNT; i++) {
		if (c->s->anomaly[i] == 0 || i == AN_LATE || i == AN_APPROX)
			continue; /* those two are warnings */
		if (!any)
			printf("\nnotes:\n");
		any = true;
		printf("  %" PRIu64 " %s\n", c->s->anomaly[i], anomalies[i].what);
	}
}

/* ------------------------------------------------------------ JSON report */

static int jsketch(struct buf *b, bool *first, uint64_t total, const struct rtr__sketch *s)
{
	return report_ju64(b, first, "count", s->count) ||
	       report_ju64(b, first, "total_ns", total) ||
	       report_ju64(b, first, "mean_ns", report_mean(total, s->count)) ||
	       report_ju64(b, first, "min_ns", s->min) ||
	       report_ju64(b, first, "p50_ns", rtr__sketch_quantile(s, 5000)) ||
	       report_ju64(b, first, "p99_ns", rtr__sketch_quantile(s, 9900)) ||
	       report_ju64(b, first, "max_ns", s->max);
}

static int json_rows(const struct stats *c, struct buf *b)
{
	struct buf label = {0};
	size_t n, shown;
	struct ranked *rows = sorted(&c->s->rows, row_rank, &n);
	bool top = true;
	int err;

	if (c->s->rows.count > 0 && rows == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"slices\":{") || report_ju64(b, &top, "count", c->s->slices) ||
	      report_ju64(b, &top, "keys", n) || report_jkey(b, &top, "rows") || buf_putc(b, '[');
	for (size_t i = 0; i < shown && !err; i++) {
		const struct row *r = rows[i].v;
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      report_jkey(b, &first, "key");
		if (err)
			break;
		if (c->opt->by == BY_THREAD) {
			err = tally_sum_thread_label(c->s, &label, r->file, r->pid, r->tid) ||
			      report_jstr(b, label.p, label.len - 1) ||
			      report_ji64(b, &first, "pid", r->pid) ||
			      report_ji64(b, &first, "tid", r->tid);
		} else {
			size_t len;
			const char *k = tally_key_string(&c->s->rows, r, &len);

			err = k != NULL ? report_jstr(b, k, len) : buf_puts(b, "null");
		}
		err = err || jsketch(b, &first, r->total, &r->dur) ||
		      report_ju64(b, &first, "self_ns", r->self) || buf_putc(b, '}');
	}
	err = err || buf_puts(b, "]}");
	buf_free(&label);
	free(rows);
	return err ? -1 : 0;
}

static int json_threads(const struct stats *c, struct buf *b)
{
	struct buf label = {0};
	size_t n, shown;
	struct ranked *v = busy_threads(c, &n);
	int err;

	if (c->s->threads.count > 0 && v == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"threads\":[");
	for (size_t i = 0; i < shown && !err; i++) {
		const struct sum_thread *t = v[i].v;
		const struct label *p = tally_sum_label(c->s, 'p', t->file, t->pid, 0);
		const struct label *tl = tally_sum_label(c->s, 't', t->file, t->pid, t->tid);
		uint64_t span = t->has_span ? span_ns(t->first_ns, t->last_ns) : 0;
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      report_ji64(b, &first, "pid", t->pid) ||
		      report_ji64(b, &first, "tid", t->tid) ||
		      (c->s->files > 1 &&
		       (report_jkey(b, &first, "file") ||
			report_jstr(b, tally_sum_file_name(c->s, t->file),
				    strlen(tally_sum_file_name(c->s, t->file))))) ||
		      report_jkey(b, &first, "process_name") ||
		      (p != NULL ? report_jstr(b, p->name, p->len) : buf_puts(b, "null")) ||
		      report_jkey(b, &first, "thread_name") ||
		      (tl != NULL ? report_jstr(b, tl->name, tl->len) : buf_puts(b, "null")) ||
		      tally_sum_thread_label(c->s, &label, t->file, t->pid, t->tid) ||
		      report_jkey(b, &first, "label") || report_jstr(b, label.p, label.len - 1) ||
		      report_ju64(b, &first, "slices", t->slices) ||
		      report_ji64(b, &first, "first_ns", t->first_ns) ||
		      report_ji64(b, &first, "last_ns", t->last_ns) ||
		      report_ju64(b, &first, "span_ns", span) ||
		      report_ju64(b, &first, "busy_ns", t->busy) ||
		      (span > 0 ? report_jf64(b, &first, "busy_share",
					      (double)t->busy / (double)span)
				: report_jkey(b, &first, "busy_share") || buf_puts(b, "null")) ||
		      buf_putc(b, '}');
	}
	err = err || buf_putc(b, ']');
	buf_free(&label);
	free(v);
	return err ? -1 : 0;
}

static int json_async(const struct stats *c, struct buf *b)
{
	size_t n, shown;
	struct ranked *rows = sorted(&c->s->async_rows, async_rank, &n);
	bool top = true;
	int err;

	if (c->s->async_rows.count > 0 && rows == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"async\":{") || report_ju64(b, &top, "count", c->s->async_spans) ||
	      report_ju64(b, &top, "names", n) || report_jkey(b, &top, "rows") || buf_putc(b, '[');
	for (size_t i = 0; i < shown && !err; i++) {
		size_t len;
		const struct async_row *r = rows[i].v;
		const char *k = tally_key_string(&c->s->async_rows, r, &len);
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      report_jkey(b, &first, "name") ||
		      (k != NULL ? report_jstr(b, k, len) : buf_puts(b, "null")) ||
		      jsketch(b, &first, r->total, &r->dur) || buf_putc(b, '}');
	}
	err = err || buf_puts(b, "]}");
	free(rows);
	return err ? -1 : 0;
}

static int json_counters(const struct stats *c, struct buf *b)
{
	size_t shown = shown_rows(c, c->s->counters.count), i = 0;
	int err = buf_puts(b, "\"counters\":[");

	for (const struct counter *k = table_first(&c->s->counters); k != NULL && i < shown && !err;
	     k = table_next(k), i++) {
		const char *name, *series;
		size_t name_len, series_len;
		bool first = true;

		counter_key(&c->s->counters, k, &name, &name_len, &series, &series_len);
		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      report_jkey(b, &first, "name") || report_jstr(b, name, name_len) ||
		      report_jkey(b, &first, "series") || report_jstr(b, series, series_len) ||
		      report_ju64(b, &first, "samples", k->samples) ||
		      report_jf64(b, &first, "min", k->min) ||
		      report_jf64(b, &first, "max", k->max) || buf_putc(b, '}');
	}
	return err || buf_putc(b, ']') ? -1 : 0;
}

/* The inputs: names, counts, the first one's form and how it ended. */
static int json_inputs(const struct stats *c, struct buf *b, bool *first)
{
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "none",
		[TRACE_FORM_ARRAY] = "array",
		[TRACE_FORM_OBJECT] = "object",
	};
	const struct tally_sum *s = c->s;
	const struct trace_status *st = &s->st;
	const char *name = s->names.p;
	int err = report_jkey(b, first, "file") ||
		  (s->files == 1 ? report_jstr(b, name, strlen(name)) : buf_puts(b, "null")) ||
		  report_jkey(b, first, "files") || buf_putc(b, '[');

	for (uint64_t i = 0; i < s->files && !err; i++, name += strlen(name) + 1)
		err = (i > 0 && buf_putc(b, ',')) || report_jstr(b, name, strlen(name));
	return err || buf_putc(b, ']') || report_ju64(b, first, "profiles", s->profiles) ||
	       report_ju64(b, first, "malformed_inputs", s->errors) ||
	       report_jkey(b, first, "by") || buf_putc(b, '"') ||
	       buf_puts(b, tally_by_names[c->opt->by]) || buf_putc(b, '"') ||
	       report_jf64(b, first, "relative_error", RTR__SKETCH_ALPHA) ||
	       report_ju64(b, first, "events", s->events) ||
	       report_ju64(b, first, "thread_count", s->thread_count) ||
	       report_jkey(b, first, "counts") ||
	       report_jstr(b, TRACE_COUNTS_WHAT, strlen(TRACE_COUNTS_WHAT)) ||
	       report_jkey(b, first, "form") || buf_putc(b, '"') || buf_puts(b, forms[st->form]) ||
	       buf_putc(b, '"') || report_jbool(b, first, "gzip", st->gzip) ||
	       report_jbool(b, first, "complete", st->complete) ||
	       report_jbool(b, first, "cut", st->cut) ||
	       report_ju64(b, first, "partial_event_bytes", st->cut_in_event ? st->cut_bytes : 0) ||
	       report_jkey(b, first, "error") ||
	       (st->error != TRACE_OK ? report_jstr(b, st->message, strlen(st->message))
				      : buf_puts(b, "null"));
}

static int json_recorder(const struct stats *c, struct buf *b, bool *first)
{
	const struct end_marker *m = &c->s->end;
	bool f2 = true;
	int err = report_jkey(b, first, "recorder");

	if (err || c->s->ends == 0)
		return err || buf_puts(b, "null");
	err = buf_putc(b, '{') || report_jkey(b, &f2, RTR__KEY_FINAL) ||
	      buf_puts(b, !m->has_final ? "null"
			  : m->final	? "true"
					: "false") ||
	      report_jbool(b, &f2, "repaired", m->repaired) ||
	      report_ju64(b, &f2, "end_markers", c->s->ends) ||
	      report_ju64(b, &f2, "final_end_markers", c->s->ends_final);
	for (int i = 0; i < END_NCOUNTS && !err; i++)
		err = m->has[i] ? report_ju64(b, &f2, end_keys[i], m->v[i])
				: report_jkey(b, &f2, end_keys[i]) || buf_puts(b, "null");
	return err || buf_putc(b, '}');
}

static int json_report(const struct stats *c)
{
	struct buf b = {0};
	bool first = true, f2 = true;
	const char *w = c->s->warnings.p;
	int err = buf_putc(&b, '{') || json_inputs(c, &b, &first);

	if (!err && c->s->has_time)
		err = report_ji64(&b, &first, "first_ns", c->s->first_ns) ||
		      report_ji64(&b, &first, "last_ns", c->s->last_ns) ||
		      report_ju64(&b, &first, "span_ns", span_ns(c->s->first_ns, c->s->last_ns));
	else if (!err)
		err = buf_puts(&b, ",\"first_ns\":null,\"last_ns\":null,\"span_ns\":null");
	err = err || json_recorder(c, &b, &first) || report_jkey(&b, &first, "warnings") ||
	      buf_putc(&b, '[');
	for (size_t i = 0; i < c->s->nwarnings && !err; i++, w += strlen(w) + 1)
		err = (i > 0 && buf_putc(&b, ',')) || report_jstr(&b, w, strlen(w));
	err = err || buf_puts(&b, "],") || json_rows(c, &b) || buf_putc(&b, ',') ||
	      json_threads(c, &b) || buf_putc(&b, ',') || json_async(c, &b) || buf_putc(&b, ',') ||
	      json_counters(c, &b) || buf_putc(&b, ',') || stats_json_polls(c->s, c->opt, &b) ||
	      buf_puts(&b, ",\"anomalies\":{");
	for (int i = 0; i < AN_COUNT && !err; i++)
		err = report_ju64(&b, &f2, anomalies[i].key, c->s->anomaly[i]);
	err = err || buf_puts(&b, "}}\n");
	if (!err)
		fwrite(b.p, 1, b.len, stdout);
	buf_free(&b);
	return err ? -1 : 0;
}

/* --------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace stats [--by name|cat|thread] [--top N] [--json] [-j N] FILE...\n"
		"\n"
		"Reads the trace or profile FILEs (.json or .json.gz, .pftrace, a profile of\n"
		"RINGTRACE_MODE=profile; - is standard input), each in one pass, and prints\n"
		"where the time went, summed over them (a job's rank files: each thread stays\n"
		"its file's):\n"
		"  - slices (X, and B/E pairs; a profile's call paths) by name, category or\n"
		"    thread: count, total, self time (total less the time of direct children on\n"
		"    the same thread), mean, p50, p99 and max; sorted by total;\n"
		"  - per thread, the share of its span (first to last event; a profile's start\n"
		"    to end) covered by top-level slices;\n"
		"  - async spans (b/e, matched on cat, id and name) by name; counter series;\n"
		"  - MPI polls folded (slices with args \"polls\", a count per call name,\n"
		"    \"poll_ns\"): per call name, its calls and the time inside them;\n"
		"  - what the recorder's end markers say it dropped, and a warning when a\n"
		"    file is cut short or its marker says final:false.\n"
		"\n"
		"Percentiles are within 1%% (a DDSketch per name, merged exactly over files);\n"
		"the other numbers are exact. X events may come in any order the writers use\n"
		"(start order, or the recorder's: each X when it ends); slices too far out of\n"
		"order to nest are counted in a warning. A job profile has no threads.\n"
		"\n"
		"The FILEs are read on N threads, and under mpirun or srun (with the MPI\n"
		"plugin) split over the ranks and reduced to rank 0, which alone prints: the\n"
		"same report at every N and every number of ranks.\n"
		"\n"
		"options:\n"
		"  -b, --by KEY      name (the default), cat or thread\n"
		"  -n, --top N       rows per table (default 20; 0: all), --json included\n"
		"      --json        one JSON document, times in integer nanoseconds\n"
		"  -j, --jobs N      read the FILEs on N threads (default: the online CPUs)\n"
		"  -h, --help        this help\n"
		"\n"
		"exit status: 0 stats of every file (cut short included: a warning says\n"
		"so), 1 stats of the part before malformed input in a file, or a file that is\n"
		"JSON but neither a trace nor a profile, 2 usage error, unreadable input or\n"
		"nothing readable.\n");
}

static int stats_files(const char *const *files, size_t n, const struct tally_options *opt,
		       unsigned jobs)
{
	struct tally_sum sum;
	struct stats c = {&sum, opt, jobs};
	int status, got;

	tally_sum_init(&sum, opt->by);
	got = tally_inputs_read(&sum, opt, "stats", files, n, jobs);
	if (got != SPREAD_ROOT) {
		tally_sum_destroy(&sum);
		return got == SPREAD_OTHER ? CLI_OK : CLI_ERROR;
	}
	status = sum.status;
	if (sum.files > sum.unread) {
		if (opt->json) {
			if (json_report(&c) != 0) {
				cli_error("stats", "out of memory");
				status = CLI_ERROR;
			}
		} else {
			print_header(&c);
			print_slices(&c);
			print_threads(&c);
			print_async(&c);
			print_counters(&c);
			stats_print_polls(c.s, c.opt);
			print_notes(&c);
		}
		if (sum.errors > 0)
			cli_error("stats", "%s",
				  n == 1 ? sum.st.message
					 : "some inputs were read up to malformed input (see the "
					   "warnings)");
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("stats", "writing the report failed");
		status = CLI_ERROR;
	}
	tally_sum_destroy(&sum);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"by", required_argument, NULL, 'b'}, {"top", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'J'},     {"jobs", required_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
	};
	struct tally_options opt = {.by = BY_NAME, .top = 20};
	uint64_t jobs = 0;
	int ch;

	while ((ch = getopt_long(argc, argv, "b:n:j:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (tally_parse_by(optarg, &opt.by))
				return cli_usage_error("stats",
						       "--by wants name, cat or thread, not '%s'",
						       optarg);
			break;
		case 'n':
			if (cli_parse_u64(optarg, &opt.top))
				return cli_usage_error("stats", "--top wants a number, not '%s'",
						       optarg);
			break;
		case 'J':
			opt.json = true;
			break;
		case 'j':
			if (cli_parse_u64(optarg, &jobs) || jobs == 0 || jobs > 1024)
				return cli_usage_error(
					"stats", "--jobs wants a number from 1 to 1024, not '%s'",
					optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("stats", "unknown option");
		}
	}
	if (argc == optind)
		return cli_usage_error("stats", "no FILE to read");
	for (int i = optind, stdins = 0; i < argc; i++)
		if (strcmp(argv[i], "-") == 0 && ++stdins > 1)
			return cli_usage_error("stats", "standard input can be one FILE, not more");
	return stats_files((const char *const *)argv + optind, (size_t)(argc - optind), &opt,
			   (unsigned)jobs);
}
