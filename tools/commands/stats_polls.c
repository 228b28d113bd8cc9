/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats`: the folded polls, per call name (tally_polls.h). With --by name
 * the slices of a call name that are not folded are its calls that completed
 * something, so every call of the name is told, as a run that records every call as a
 * slice (RINGTRACE_MPI_POLLS=all) would count them. The time inside the calls is
 * exact per folded slice: a name's is that of its runs alone and of its completed
 * calls; the runs of several names have a row of their own.
 */
#include "stats_polls.h"

#include "common/names.h"
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>

/* A row and its place in the table (insertion order: the file's). */
struct ranked_poll {
	const struct poll_row *r;
	size_t at;
};

/* The most calls first; ties in the file's order, so that a report does not change. */
static int more_calls(const void *a, const void *b)
{
	const struct ranked_poll *x = a, *y = b;

	if (x->r->calls != y->r->calls)
		return x->r->calls < y->r->calls ? 1 : -1;
	return (x->at > y->at) - (x->at < y->at);
}

/* The rows by calls (*n of them); NULL when empty or out of memory. */
static struct ranked_poll *by_calls(const struct table *t, size_t *n)
{
	struct ranked_poll *v = t->count > 0 ? malloc(t->count * sizeof(*v)) : NULL;
	size_t i = 0;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (const struct poll_row *r = table_first(t); r != NULL; r = table_next(r), i++)
		v[i] = (struct ranked_poll){r, i};
	qsort(v, i, sizeof(*v), more_calls);
	*n = i;
	return v;
}

static size_t shown_rows(const struct tally_options *opt, size_t n)
{
	return opt->top == 0 || opt->top > n ? n : (size_t)opt->top;
}

/* The row of r's call name among the slices, by name: its calls that completed
 * something are those of its slices that are not folded. NULL otherwise. */
static const struct row *completed_row(const struct tally_sum *c, const struct tally_options *opt,
				       const struct poll_row *r, struct buf *key)
{
	struct trace_value v = {TRACE_STRING, NULL, 0};
	const struct row *row;

	v.text = table_key(&c->polls.rows, r, &v.len);
	key->len = 0;
	if (opt->by != BY_NAME || trace_key_add(key, &v) ||
	    (row = table_get(&c->rows, key->p, key->len)) == NULL ||
	    row->dur.count < r->alone_slices || row->total < r->alone_dur)
		return NULL;
	return row;
}

/* Per call name: its calls, those that completed something (their own slices, by
 * name), and the time inside them, but for the runs of several names (the last row). */
void stats_print_polls(const struct tally_sum *c, const struct tally_options *opt)
{
	const struct tally_polls *p = &c->polls;
	char s[32];
	struct buf key = {0};
	size_t n, shown;
	struct ranked_poll *rows = by_calls(&p->rows, &n);

	if (n == 0) {
		free(rows);
		return;
	}
	shown = shown_rows(opt, n);
	printf("\npolls folded: %" PRIu64 " calls of %zu name%s that completed nothing, in %" PRIu64
	       " slices, %s inside the calls\n(by name: every call of the name, those that "
	       "completed something, the time inside them but for runs of several names)\n",
	       p->calls, n, n == 1 ? "" : "s", p->slices, report_ns(s, sizeof(s), p->inside_ns));
	if (shown < n)
		printf("(the top %zu by calls; --top 0 shows all)\n", shown);
	printf("%10s %10s %10s  %s\n", "calls", "completed", "inside", "name");
	for (size_t i = 0; i < shown; i++) {
		const struct poll_row *r = rows[i].r;
		const struct row *row = completed_row(c, opt, r, &key);
		uint64_t done = row != NULL ? row->dur.count - r->alone_slices : 0;
		uint64_t ns = r->alone_ns + (row != NULL ? row->total - r->alone_dur : 0);
		size_t len;
		const char *k = table_key(&p->rows, r, &len);

		printf("%10" PRIu64 " %10" PRIu64 " %10s  ", r->calls + done, done,
		       report_ns(s, sizeof(s), ns));
		report_clean(stdout, k, len);
		putchar('\n');
	}
	if (p->mixed_slices > 0)
		printf("%10" PRIu64 " %10s %10s  (in runs of several names: " RTR__POLLS_MIXED
		       ")\n",
		       p->mixed_calls, "", report_ns(s, sizeof(s), p->mixed_ns));
	buf_free(&key);
	free(rows);
}

int stats_json_polls(const struct tally_sum *c, const struct tally_options *opt, struct buf *b)
{
	const struct tally_polls *p = &c->polls;
	struct buf key = {0};
	size_t n, shown;
	struct ranked_poll *rows = by_calls(&p->rows, &n);
	bool top = true, mixed = true;
	int err;

	if (p->rows.count > 0 && rows == NULL)
		return -1;
	shown = shown_rows(opt, n);
	err = buf_puts(b, "\"polls\":{") || report_ju64(b, &top, "slices", p->slices) ||
	      report_ju64(b, &top, "calls", p->calls) ||
	      report_ju64(b, &top, "inside_ns", p->inside_ns) || report_ju64(b, &top, "names", n) ||
	      report_jkey(b, &top, "rows") || buf_putc(b, '[');
	for (size_t i = 0; i < shown && !err; i++) {
		const struct poll_row *r = rows[i].r;
		const struct row *row = completed_row(c, opt, r, &key);
		size_t len;
		const char *k = table_key(&p->rows, r, &len);
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      report_jkey(b, &first, "name") || report_jstr(b, k, len) ||
		      report_ju64(b, &first, "folded_calls", r->calls) ||
		      report_ju64(b, &first, "alone_slices", r->alone_slices) ||
		      report_ju64(b, &first, "alone_inside_ns", r->alone_ns) ||
		      report_jkey(b, &first, "completed_calls");
		if (!err && row != NULL)
			err = buf_put_u64(b, row->dur.count - r->alone_slices) ||
			      report_ju64(b, &first, "completed_ns", row->total - r->alone_dur);
		else if (!err)
			err = buf_puts(b, "null,\"completed_ns\":null");
		err = err || buf_putc(b, '}');
	}
	err = err || buf_putc(b, ']') || report_jkey(b, &top, "mixed") || buf_putc(b, '{') ||
	      report_ju64(b, &mixed, "slices", p->mixed_slices) ||
	      report_ju64(b, &mixed, "calls", p->mixed_calls) ||
	      report_ju64(b, &mixed, "inside_ns", p->mixed_ns) || buf_puts(b, "}}");
	buf_free(&key);
	free(rows);
	return err ? -1 : 0;
}
