/* SPDX-License-Identifier: MIT */
/*
 * The report of `ringtrace diff` on several runs a side (diff_runs.h): text, Markdown
 * (for a pull-request comment: the significant changes first) or JSON
 * (docs/diff-schema.json), and --calibrate's false-alarm rate.
 */
#include "diff_runs.h"
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TEST_TEXT "Mann-Whitney U on the run medians, two-sided"

static const char *const nones[] = {
	[BY_NAME] = "(no name)", [BY_CAT] = "(no cat)", [BY_THREAD] = "(no thread)"};

const char *runs_verdict(const struct rrow *w)
{
	if (w->count_changed)
		return "count changed";
	if (w->kind == RK_ADDED)
		return "added";
	if (w->kind == RK_REMOVED)
		return "removed";
	return w->slower ? "slower" : w->faster ? "faster" : "within noise";
}

static size_t shown(const struct runs *r)
{
	uint64_t top = r->opt->t.top;

	return top == 0 || top > r->nrows ? r->nrows : (size_t)top;
}

static void rule(const struct runs *r, FILE *f)
{
	fprintf(f,
		"%s; significant when p <= %g and the Hodges-Lehmann shift is at least %g%% of "
		"A's median and %g ns",
		TEST_TEXT, r->opt->alpha, r->opt->min_pct, r->opt->min_ns);
}

static void print_key(const struct runs *r, const struct rrow *w, bool markdown)
{
	size_t len;
	const char *k = tally_key_string(&r->keys, w->k, &len);

	if (k == NULL) {
		fputs(nones[r->opt->t.by], stdout);
		return;
	}
	if (!markdown) {
		report_clean(stdout, k, len);
		return;
	}
	/* in a Markdown table cell: a '|' ends the cell and a '`' the code span */
	putchar('`');
	for (size_t at = 0, from = 0; at <= len; at++) {
		if (at < len && k[at] != '|' && k[at] != '`')
			continue;
		report_clean(stdout, k + from, at - from);
		if (at < len)
			fputs(k[at] == '|' ? "\\|" : "'", stdout);
		from = at + 1;
	}
	putchar('`');
}

static const char *pct_text(char *out, size_t size, const struct rrow *w)
{
	if (w->kind != RK_BOTH)
		snprintf(out, size, "-");
	else if (isinf(w->shift_pct))
		snprintf(out, size, "from 0");
	else
		snprintf(out, size, "%+.1f%%", w->shift_pct);
	return out;
}

static const char *count_text(char *out, size_t size, const struct rrow *w, int s)
{
	if (w->counted)
		snprintf(out, size, "%" PRIu64, w->count[s]);
	else
		snprintf(out, size, "varies");
	return out;
}

static void summary(const struct runs *r)
{
	printf("%zu keys in both: %zu significantly slower, %zu significantly faster, %zu "
	       "within noise; %zu deterministic count changes; %zu added, %zu removed\n",
	       r->kinds[RK_BOTH], r->slower, r->faster, r->kinds[RK_BOTH] - r->slower - r->faster,
	       r->count_changes, r->kinds[RK_ADDED], r->kinds[RK_REMOVED]);
}

static void print_text(const struct runs *r)
{
	char s[6][32];

	printf("diff of runs by %s, B against A: ", tally_by_names[r->opt->t.by]);
	rule(r, stdout);
	printf("\nA: %zu runs from %s\nB: %zu runs from %s\n", r->na, r->run[0].name,
	       r->nruns - r->na, r->run[r->na].name);
	summary(r);
	if (shown(r) < r->nrows)
		printf("(the top %zu of %zu; --top 0 shows all)\n", shown(r), r->nrows);
	if (r->nrows == 0)
		return;
	printf("\n%10s %10s %8s %10s %7s %9s %9s %9s  %-13s  %s\n", "median A", "median B", "shift",
	       "shift ns", "cliff", "p", "calls A", "calls B", "verdict",
	       tally_by_names[r->opt->t.by]);
	for (size_t i = 0; i < shown(r); i++) {
		const struct rrow *w = &r->rows[i];

		printf("%10s %10s %8s ",
		       w->n[0] ? report_ns(s[0], 32, (uint64_t)w->median[0]) : "-",
		       w->n[1] ? report_ns(s[1], 32, (uint64_t)w->median[1]) : "-",
		       pct_text(s[2], 32, w));
		if (w->kind == RK_BOTH)
			printf("%10.0f %+7.2f %9.4f ", w->shift, w->cliffs, w->p);
		else
			printf("%10s %7s %9s ", "-", "-", "-");
		printf("%9s %9s  %-13s  ", count_text(s[3], 32, w, 0), count_text(s[4], 32, w, 1),
		       runs_verdict(w));
		print_key(r, w, false);
		putchar('\n');
	}
}

static void markdown_row(const struct runs *r, const struct rrow *w)
{
	char s[5][32];

	fputs("| ", stdout);
	print_key(r, w, true);
	printf(" | %s | %s | %s | ", w->n[0] ? report_ns(s[0], 32, (uint64_t)w->median[0]) : "-",
	       w->n[1] ? report_ns(s[1], 32, (uint64_t)w->median[1]) : "-", pct_text(s[2], 32, w));
	if (w->kind == RK_BOTH)
		printf("%.4f | %+.2f | ", w->p, w->cliffs);
	else
		fputs("- | - | ", stdout);
	printf("%s | %s | %s%s |\n", count_text(s[3], 32, w, 0), count_text(s[4], 32, w, 1),
	       w->fails ? "**fails** " : "", runs_verdict(w));
}

static void markdown_head(void)
{
	puts("| name | median A | median B | shift | p | Cliff's δ | calls A | calls B | verdict "
	     "|\n|---|---:|---:|---:|---:|---:|---:|---:|---|");
}

static void print_markdown(const struct runs *r)
{
	size_t noted = 0;

	printf("### ringtrace diff: %s\n\n", r->failing ? "**regression**"
					     : r->slower || r->count_changes
						     ? "changes"
						     : "no significant change");
	printf("%zu runs against %zu, by %s. ", r->nruns - r->na, r->na,
	       tally_by_names[r->opt->t.by]);
	summary(r);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rrow *w = &r->rows[i];

		if (!w->significant && !w->count_changed)
			continue;
		if (noted++ == 0)
			puts("\n#### Significant changes\n"), markdown_head();
		markdown_row(r, w);
	}
	printf("\n<details><summary>All %zu keys%s</summary>\n\n", r->nrows,
	       shown(r) < r->nrows ? " (the top shown)" : "");
	markdown_head();
	for (size_t i = 0; i < shown(r); i++)
		markdown_row(r, &r->rows[i]);
	fputs("\n</details>\n\n", stdout);
	rule(r, stdout);
	puts(".");
}

/* -------------------------------------------------------------------- JSON */

static int json_f64_or_null(struct buf *b, bool *first, const char *key, double v, bool ok)
{
	if (!ok || !isfinite(v))
		return report_jkey(b, first, key) || buf_puts(b, "null");
	return report_jf64(b, first, key, v);
}

static int json_common(struct buf *b, bool *first, const struct runs *r, const char *mode)
{
	const struct diff_options *o = r->opt;
	const char *by = tally_by_names[o->t.by];

	return report_ju64(b, first, "schema_version", DIFF_SCHEMA_VERSION) ||
	       report_jkey(b, first, "mode") || report_jstr(b, mode, strlen(mode)) ||
	       report_jkey(b, first, "by") || report_jstr(b, by, strlen(by)) ||
	       report_jkey(b, first, "test") || buf_puts(b, "\"mann-whitney-u\"") ||
	       report_jf64(b, first, "alpha", o->alpha) ||
	       report_jf64(b, first, "min_pct", o->min_pct) ||
	       report_jf64(b, first, "min_ns", o->min_ns) ||
	       json_f64_or_null(b, first, "fail_above_pct", o->fail_above, o->fail);
}

static int json_side_info(struct buf *b, bool *first, const char *name, const struct runs *r,
			  size_t from, size_t to)
{
	bool f = true;
	uint64_t files = 0;

	for (size_t i = from; i < to; i++)
		files += r->run[i].files;
	return report_jkey(b, first, name) || buf_putc(b, '{') ||
	       report_ju64(b, &f, "runs", to - from) || report_ju64(b, &f, "files", files) ||
	       report_jkey(b, &f, "first") ||
	       report_jstr(b, r->run[from].name, strlen(r->run[from].name)) || buf_putc(b, '}');
}

static int json_values(struct buf *b, bool *first, const char *key, const struct runs *r,
		       const struct rkey *k, const uint64_t *v, size_t from, size_t to)
{
	int err = report_jkey(b, first, key) || buf_putc(b, '[');

	for (size_t i = from; i < to && !err; i++) {
		char num[24];

		snprintf(num, sizeof(num), "%" PRIu64, v[i]);
		err = (i > from && buf_putc(b, ',')) || buf_puts(b, k->in[i] ? num : "null");
	}
	(void)r;
	return err || buf_putc(b, ']');
}

static int json_row_side(struct buf *b, bool *first, const char *name, const struct runs *r,
			 const struct rrow *w, int s)
{
	size_t from = s ? r->na : 0, to = s ? r->nruns : r->na;
	bool f = true;

	return report_jkey(b, first, name) || buf_putc(b, '{') ||
	       report_ju64(b, &f, "runs", w->n[s]) ||
	       json_f64_or_null(b, &f, "median_ns", w->median[s], w->n[s] > 0) ||
	       (w->counted ? report_ju64(b, &f, "count", w->count[s])
			   : report_jkey(b, &f, "count") || buf_puts(b, "null")) ||
	       json_values(b, &f, "p50_ns", r, w->k, w->k->p50, from, to) ||
	       json_values(b, &f, "counts", r, w->k, w->k->count, from, to) ||
	       json_values(b, &f, "total_ns", r, w->k, w->k->total, from, to) || buf_putc(b, '}');
}

static int json_row(struct buf *b, const struct runs *r, const struct rrow *w)
{
	static const char *const kinds[] = {
		[RK_BOTH] = "both", [RK_ADDED] = "added", [RK_REMOVED] = "removed"};
	size_t len;
	const char *k = tally_key_string(&r->keys, w->k, &len);
	bool f = true, both = w->kind == RK_BOTH;

	return buf_putc(b, '{') || report_jkey(b, &f, "key") ||
	       (k != NULL ? report_jstr(b, k, len) : buf_puts(b, "null")) ||
	       report_jkey(b, &f, "in") || report_jstr(b, kinds[w->kind], strlen(kinds[w->kind])) ||
	       json_row_side(b, &f, "a", r, w, 0) || json_row_side(b, &f, "b", r, w, 1) ||
	       json_f64_or_null(b, &f, "shift_ns", w->shift, both) ||
	       json_f64_or_null(b, &f, "shift_pct", w->shift_pct, both) ||
	       json_f64_or_null(b, &f, "cliffs_delta", w->cliffs, both) ||
	       json_f64_or_null(b, &f, "u", w->u, both) ||
	       json_f64_or_null(b, &f, "p_value", w->p, both) ||
	       report_jbool(b, &f, "exact", w->exact) ||
	       json_f64_or_null(b, &f, "total_ratio", w->total_ratio, both) ||
	       report_jbool(b, &f, "significant", w->significant) ||
	       report_jbool(b, &f, "count_changed", w->count_changed) ||
	       report_jkey(b, &f, "verdict") ||
	       report_jstr(b, runs_verdict(w), strlen(runs_verdict(w))) ||
	       report_jbool(b, &f, "fails", w->fails) || buf_putc(b, '}');
}

static int json_runs(struct buf *b, const struct runs *r)
{
	bool first = true, f = true;
	int err = buf_putc(b, '{') || json_common(b, &first, r, "runs") ||
		  json_side_info(b, &first, "a", r, 0, r->na) ||
		  json_side_info(b, &first, "b", r, r->na, r->nruns) ||
		  report_jbool(b, &first, "failed", r->failing > 0) ||
		  report_ju64(b, &first, "failing", r->failing) ||
		  report_jkey(b, &first, "summary") || buf_putc(b, '{') ||
		  report_ju64(b, &f, "both", r->kinds[RK_BOTH]) ||
		  report_ju64(b, &f, "slower", r->slower) ||
		  report_ju64(b, &f, "faster", r->faster) ||
		  report_ju64(b, &f, "within_noise", r->kinds[RK_BOTH] - r->slower - r->faster) ||
		  report_ju64(b, &f, "count_changed", r->count_changes) ||
		  report_ju64(b, &f, "added", r->kinds[RK_ADDED]) ||
		  report_ju64(b, &f, "removed", r->kinds[RK_REMOVED]) || buf_putc(b, '}') ||
		  report_ju64(b, &first, "keys", r->nrows) || report_jkey(b, &first, "rows") ||
		  buf_putc(b, '[');

	for (size_t i = 0; i < shown(r) && !err; i++)
		err = (i > 0 && buf_putc(b, ',')) || json_row(b, r, &r->rows[i]);
	return err || buf_puts(b, "]}\n");
}

static double pct(size_t part, size_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0;
}

static int json_calibrate(struct buf *b, const struct runs *r)
{
	bool first = true;

	return buf_putc(b, '{') || json_common(b, &first, r, "calibrate") ||
	       report_ju64(b, &first, "runs", r->nruns) ||
	       report_ju64(b, &first, "split_a", r->split_size) ||
	       report_ju64(b, &first, "split_b", r->nruns - r->split_size) ||
	       report_ju64(b, &first, "splits", r->splits) ||
	       report_jbool(b, &first, "all_splits", r->all_splits) ||
	       report_ju64(b, &first, "keys", r->keys.count) ||
	       report_ju64(b, &first, "false_alarms", r->alarms) ||
	       report_jf64(b, &first, "false_alarm_pct", pct(r->alarms, r->splits)) ||
	       report_ju64(b, &first, "key_comparisons", r->key_checks) ||
	       report_ju64(b, &first, "key_false_alarms", r->key_alarms) ||
	       report_jf64(b, &first, "key_false_alarm_pct", pct(r->key_alarms, r->key_checks)) ||
	       buf_puts(b, "}\n");
}

static void print_calibrate(const struct runs *r)
{
	printf("calibrate by %s: %zu identical runs, %s %zu splits of %zu against %zu; ",
	       tally_by_names[r->opt->t.by], r->nruns, r->all_splits ? "all" : "drawn (seeded)",
	       r->splits, r->split_size, r->nruns - r->split_size);
	rule(r, stdout);
	printf("\nfalse alarms: %zu of %zu splits (%.1f%%)%s; keys: %zu of %zu comparisons "
	       "(%.2f%%), %zu keys\n",
	       r->alarms, r->splits, pct(r->alarms, r->splits),
	       r->opt->fail ? " would fail --fail-above" : " call a key significant", r->key_alarms,
	       r->key_checks, pct(r->key_alarms, r->key_checks), (size_t)r->keys.count);
	if (r->opt->format == FORMAT_MARKDOWN)
		printf("\n**False-alarm rate: %.1f%%** (%zu of %zu splits)\n",
		       pct(r->alarms, r->splits), r->alarms, r->splits);
}

int runs_print(const struct runs *r)
{
	struct buf b = {0};
	int err = 0;

	if (r->opt->format != FORMAT_JSON) {
		if (r->opt->calibrate)
			print_calibrate(r);
		else if (r->opt->format == FORMAT_MARKDOWN)
			print_markdown(r);
		else
			print_text(r);
		return 0;
	}
	err = r->opt->calibrate ? json_calibrate(&b, r) : json_runs(&b, r);
	if (!err)
		fwrite(b.p, 1, b.len, stdout);
	buf_free(&b);
	return err ? -1 : 0;
}

void runs_say_failing(const struct runs *r)
{
	unsigned said = 0;

	fprintf(stderr,
		"ringtrace diff: %zu key%s failed the gate (a significant regression "
		"above %g%%, or a deterministic count change):",
		r->failing, r->failing == 1 ? "" : "s", r->opt->fail_above);
	for (size_t i = 0; i < r->nrows && said < 5; i++) {
		const struct rrow *w = &r->rows[i];
		size_t len;
		const char *k;

		if (!w->fails)
			continue;
		k = tally_key_string(&r->keys, w->k, &len);
		fputs(said++ > 0 ? ", " : " ", stderr);
		fprintf(stderr, "%.*s", k != NULL ? (int)(len > 80 ? 80 : len) : 6,
			k != NULL ? k : "(none)");
		if (w->count_changed)
			fprintf(stderr, " (count %" PRIu64 " -> %" PRIu64 ")", w->count[0],
				w->count[1]);
		else
			fprintf(stderr, " (%+.1f%%, p %.3g)", w->shift_pct, w->p);
	}
	if (r->failing > said)
		fputs(", ...", stderr);
	fputc('\n', stderr);
}
