/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace diff A B`: what got slower between two runs, for benchmark harnesses.
 *
 * Each file goes through the tally `stats` uses (tally.h): per key (name, category or
 * thread) the count and total of its slices, exact, and a quantile sketch of their
 * durations (sketch.h: within RTR__SKETCH_ALPHA). A is read and reduced to its keys before
 * B is read, so memory is that of one tally and the keys of two.
 *
 * For a key in both files it gives, for A and B, count, total, p50 and p99, the
 * ratios B/A of p50 and of total, and a verdict on p50:
 *
 *   significant   |p50_B - p50_A| is larger than the spread of each side, the
 *                 distance p75 - p25 (the interquartile range, from the sketch), and
 *                 larger than 2 RTR__SKETCH_ALPHA of the larger p50 (what the sketches'
 *                 error alone could make of two equal medians);
 *   within noise  otherwise.
 *
 * The median and the interquartile range are the robust pair: one outlier moves
 * neither, so a run with a hiccup is not a regression, while a shift of the whole
 * distribution by more than its own width is. A key of one slice per file has no
 * spread: any change beyond the sketch's error is then significant.
 *
 * Keys in only one file are "added" (only in B) or "removed" (only in A). Threads are
 * matched by name (pids and tids differ from run to run): "process / thread" when an
 * M event names the thread, else "process (pid/tid)"; threads of one name are summed,
 * their sketches merged.
 *
 * --fail-above PCT: exit 1 when a key in both got slower, p50 B/A above 1 + PCT/100,
 * and the change is significant. The rows are sorted by p50 B/A, the largest
 * regression first, then the added keys and the removed ones, each by total.
 */
#include "cli.h"
#include "diff_runs.h"
#include "report.h"
#include "spread.h"
#include "tally_file.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What a verdict needs a change to exceed besides the spreads, as a share of the
 * larger p50: two sketched medians of equal samples differ by up to this much. */
#define NOISE_FLOOR (2 * RTR__SKETCH_ALPHA)

/* The text of the rule, for --help, the table and the JSON document. */
#define RULE_TEXT                                                                            \
	"significant when |p50 B - p50 A| exceeds both sides' p25-p75 spread and 2% of the " \
	"larger p50"

/* One side of a key: its slices in one file. */
struct side {
	uint64_t total;
	struct rtr__sketch dur;
};

/* A key (the table's key: tally.c's format of a string, or absent for "(none)"). */
struct entry {
	struct side s[2];
	bool in[2];
	size_t at; /* order of first appearance */
};

/* What a file was, kept after its tally is freed. */
struct file_info {
	char *name; /* the first file's */
	size_t files, profiles;
	uint64_t events, slices, keys;
	size_t threads;
};

enum kind { KIND_BOTH, KIND_ADDED, KIND_REMOVED };

/* A row of the report. */
struct cmp {
	struct entry *e;
	enum kind kind;
	uint64_t q[2][4]; /* p25, p50, p75, p99 of A and B */
	double p50_ratio, total_ratio;
	bool significant, fails;
};

static const unsigned quantiles[4] = {2500, 5000, 7500, 9900};
enum { Q25, Q50, Q75, Q99 };

struct diff {
	const struct diff_options *opt;
	struct table keys; /* -> struct entry */
	struct buf key, label;
	struct file_info f[2];
	struct cmp *rows;
	size_t nrows;
	size_t n[3];			/* rows by kind */
	size_t slower, faster, failing; /* significant changes of keys in both */
};

/* ------------------------------------------------------------------- keys */

/* The key of a thread: its names when the thread has one (matched across runs), else
 * the label with pid and tid. A string key, as tally.c keys a row by name. */
int diff_thread_key(struct buf *label, struct buf *key, const struct tally_sum *c,
		    const struct row *r)
{
	const struct label *t = tally_sum_label(c, 't', r->file, r->pid, r->tid);
	const struct label *p = tally_sum_label(c, 'p', r->file, r->pid, 0);
	struct trace_value name;

	label->len = 0;
	if (t != NULL) {
		if ((p != NULL && (buf_put(label, p->name, p->len) || buf_puts(label, " / "))) ||
		    buf_put(label, t->name, t->len))
			return -1;
	} else if (tally_sum_thread_label(c, label, r->file, r->pid, r->tid) == 0) {
		label->len--; /* its NUL */
	} else {
		return -1;
	}
	name = (struct trace_value){TRACE_STRING, label->p, label->len};
	key->len = 0;
	return trace_key_add(key, &name);
}

/* The rows of a tally into side i of the keys. 0 or -1 (out of memory). */
static int add_side(struct diff *d, const struct tally_sum *c, int i)
{
	for (const struct row *r = table_first(&c->rows); r != NULL; r = table_next(r)) {
		struct entry *e;
		const void *k;
		size_t klen;
		bool created;

		if (c->by == BY_THREAD) {
			if (diff_thread_key(&d->label, &d->key, c, r))
				return -1;
			k = d->key.p;
			klen = d->key.len;
		} else {
			k = table_key(&c->rows, r, &klen);
		}
		e = table_put(&d->keys, k, klen, &created);
		if (e == NULL)
			return -1;
		if (created)
			e->at = d->keys.count;
		e->in[i] = true;
		e->s[i].total += r->total;
		if (rtr__sketch_merge(&e->s[i].dur, &r->dur))
			return -1;
	}
	return 0;
}

/* Read one side's files into side i. A CLI_* status (said when not CLI_OK); *other when
 * another rank of an MPI job reports. */
static int read_side(struct diff *d, const char *const *paths, size_t n, int i, bool *other)
{
	struct tally_sum sum;
	struct file_info *f = &d->f[i];
	int status, got;

	tally_sum_init(&sum, d->opt->t.by);
	got = tally_inputs_read(&sum, &d->opt->t, "diff", paths, n, d->opt->jobs);
	*other = got == SPREAD_OTHER;
	status = got == SPREAD_ROOT ? sum.status : got == SPREAD_OTHER ? CLI_OK : CLI_ERROR;
	if (got == SPREAD_ROOT && sum.errors > 0) {
		/* Half a file against a whole one would read as a change. */
		cli_error("diff", "%s (diff compares whole files)",
			  sum.files == 1 ? sum.st.message
					 : "an input was read up to malformed input");
		status = CLI_ERROR;
	}
	if (got == SPREAD_ROOT && status == CLI_OK) {
		if (sum.st.cut && sum.files == 1)
			cli_note("diff",
				 "warning: %s is cut short: its %" PRIu64 " whole events "
				 "are compared",
				 paths[0], sum.events);
		/* (a manifest's files counted as the files they are) */
		f->name = strdup(sum.files == 1 ? tally_sum_file_name(&sum, 0) : paths[0]);
		f->files = (size_t)sum.files;
		f->profiles = (size_t)sum.profiles;
		f->events = sum.events;
		f->slices = sum.slices;
		f->keys = sum.rows.count;
		f->threads = (size_t)sum.thread_count;
		if (f->name == NULL || add_side(d, &sum, i)) {
			cli_error("diff", "out of memory");
			status = CLI_ERROR;
		}
	}
	tally_sum_destroy(&sum);
	return status;
}

/* ----------------------------------------------------------------- compare */

static double ratio(uint64_t b, uint64_t a)
{
	if (a == 0)
		return b == 0 ? 1.0 : INFINITY;
	return (double)b / (double)a;
}

static void compare(const struct diff *d, struct cmp *c)
{
	const struct entry *e = c->e;

	c->kind = e->in[0] && e->in[1] ? KIND_BOTH : e->in[1] ? KIND_ADDED : KIND_REMOVED;
	for (int i = 0; i < 2; i++) {
		for (int q = 0; q < 4; q++)
			c->q[i][q] = rtr__sketch_quantile(&e->s[i].dur, quantiles[q]);
	}
	if (c->kind != KIND_BOTH)
		return;
	{
		uint64_t a = c->q[0][Q50], b = c->q[1][Q50];
		uint64_t delta = b > a ? b - a : a - b;
		uint64_t spread_a = c->q[0][Q75] - c->q[0][Q25];
		uint64_t spread_b = c->q[1][Q75] - c->q[1][Q25];
		double floor = NOISE_FLOOR * (double)(a > b ? a : b);

		c->p50_ratio = ratio(b, a);
		c->total_ratio = ratio(e->s[1].total, e->s[0].total);
		c->significant = delta > spread_a && delta > spread_b && (double)delta > floor;
		c->fails = d->opt->fail && c->significant && b > a &&
			   c->p50_ratio > 1.0 + d->opt->fail_above / 100.0;
	}
}

static uint64_t side_total(const struct cmp *c)
{
	return c->e->s[c->kind == KIND_REMOVED ? 0 : 1].total;
}

/* Both first, by p50 ratio (the largest regression first); then added, removed, each
 * by total; ties in order of first appearance. */
static int by_regression(const void *pa, const void *pb)
{
	const struct cmp *x = pa, *y = pb;
	uint64_t tx, ty;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == KIND_BOTH && x->p50_ratio != y->p50_ratio)
		return x->p50_ratio > y->p50_ratio ? -1 : 1;
	tx = side_total(x);
	ty = side_total(y);
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return (x->e->at > y->e->at) - (x->e->at < y->e->at);
}

static int compare_all(struct diff *d)
{
	size_t i = 0;

	d->rows = d->keys.count > 0 ? calloc(d->keys.count, sizeof(*d->rows)) : NULL;
	if (d->keys.count > 0 && d->rows == NULL)
		return -1;
	for (struct entry *e = table_first(&d->keys); e != NULL; e = table_next(e), i++) {
		struct cmp *c = &d->rows[i];

		c->e = e;
		compare(d, c);
		d->n[c->kind]++;
		if (c->kind == KIND_BOTH && c->significant && c->q[1][Q50] > c->q[0][Q50])
			d->slower++;
		else if (c->kind == KIND_BOTH && c->significant)
			d->faster++;
		d->failing += c->fails;
	}
	d->nrows = i;
	qsort(d->rows, d->nrows, sizeof(*d->rows), by_regression);
	return 0;
}

static const char *verdict(const struct cmp *c)
{
	static const char *const kinds[] = {[KIND_ADDED] = "added", [KIND_REMOVED] = "removed"};

	if (c->kind != KIND_BOTH)
		return kinds[c->kind];
	return c->significant ? "significant" : "within noise";
}

static size_t shown(const struct diff *d)
{
	uint64_t top = d->opt->t.top;

	return top == 0 || top > d->nrows ? d->nrows : (size_t)top;
}

/* ------------------------------------------------------------------ report */

static const char *ratio_text(char *out, size_t size, double r)
{
	if (isinf(r))
		snprintf(out, size, "inf");
	else
		snprintf(out, size, "%.3f", r);
	return out;
}

static void print_side_header(const struct diff *d, int i)
{
	const struct file_info *f = &d->f[i];

	printf("%c: ", i == 0 ? 'A' : 'B');
	if (f->files > 1)
		printf("%zu files from %s", f->files, f->name);
	else
		printf("%s", f->name);
	printf(": %" PRIu64 " events on %zu thread%s (%s), %" PRIu64 " slices, %" PRIu64 " keys\n",
	       f->events, f->threads, f->threads == 1 ? "" : "s",
	       f->profiles == f->files ? "as the profiles count them" : TRACE_COUNTS_WHAT,
	       f->slices, f->keys);
}

static void print_report(const struct diff *d)
{
	static const char *const nones[] = {
		[BY_NAME] = "(no name)", [BY_CAT] = "(no cat)", [BY_THREAD] = "(no thread)"};
	size_t n = shown(d);
	char s[10][32];

	printf("diff by %s, B against A; p50, p99 and spreads within %g%% (sketch); verdict on "
	       "p50: %s\n",
	       tally_by_names[d->opt->t.by], RTR__SKETCH_ALPHA * 100, RULE_TEXT);
	print_side_header(d, 0);
	print_side_header(d, 1);
	printf("%zu keys in both: %zu significantly slower, %zu significantly faster, %zu within "
	       "noise; %zu added, %zu removed\n",
	       d->n[KIND_BOTH], d->slower, d->faster, d->n[KIND_BOTH] - d->slower - d->faster,
	       d->n[KIND_ADDED], d->n[KIND_REMOVED]);
	if (n < d->nrows)
		printf("(the top %zu of %zu by regression; --top 0 shows all)\n", n, d->nrows);
	if (d->nrows == 0)
		return;
	printf("\n%9s %9s %10s %10s %10s %10s %10s %10s %10s %10s %8s %8s  %-12s  %s\n", "count A",
	       "count B", "total A", "total B", "p50 A", "p50 B", "spread A", "spread B", "p99 A",
	       "p99 B", "p50 B/A", "tot B/A", "verdict", tally_by_names[d->opt->t.by]);
	for (size_t i = 0; i < n; i++) {
		const struct cmp *c = &d->rows[i];
		const struct entry *e = c->e;
		size_t len;
		const char *k = tally_key_string(&d->keys, e, &len);

		for (int j = 0; j < 2; j++) {
			if (!e->in[j]) {
				printf("%9s ", "-");
				continue;
			}
			printf("%9" PRIu64 " ", e->s[j].dur.count);
		}
		for (int col = 0; col < 4; col++) {
			for (int j = 0; j < 2; j++) {
				uint64_t v = col == 0	? e->s[j].total
					     : col == 1 ? c->q[j][Q50]
					     : col == 2 ? c->q[j][Q75] - c->q[j][Q25]
							: c->q[j][Q99];

				printf("%10s ",
				       e->in[j] ? report_ns(s[col * 2 + j], sizeof(s[0]), v) : "-");
			}
		}
		if (c->kind == KIND_BOTH)
			printf("%8s %8s  ", ratio_text(s[8], sizeof(s[8]), c->p50_ratio),
			       ratio_text(s[9], sizeof(s[9]), c->total_ratio));
		else
			printf("%8s %8s  ", "-", "-");
		printf("%-12s  ", verdict(c));
		if (k != NULL)
			report_clean(stdout, k, len);
		else
			fputs(nones[d->opt->t.by], stdout);
		putchar('\n');
	}
}

static int json_side(struct buf *b, bool *first, const char *name, const struct cmp *c, int i)
{
	const struct entry *e = c->e;
	bool f = true;

	if (report_jkey(b, first, name))
		return -1;
	if (!e->in[i])
		return buf_puts(b, "null");
	return buf_putc(b, '{') || report_ju64(b, &f, "count", e->s[i].dur.count) ||
	       report_ju64(b, &f, "total_ns", e->s[i].total) ||
	       report_ju64(b, &f, "min_ns", e->s[i].dur.min) ||
	       report_ju64(b, &f, "p25_ns", c->q[i][Q25]) ||
	       report_ju64(b, &f, "p50_ns", c->q[i][Q50]) ||
	       report_ju64(b, &f, "p75_ns", c->q[i][Q75]) ||
	       report_ju64(b, &f, "p99_ns", c->q[i][Q99]) ||
	       report_ju64(b, &f, "max_ns", e->s[i].dur.max) ||
	       report_ju64(b, &f, "spread_ns", c->q[i][Q75] - c->q[i][Q25]) || buf_putc(b, '}');
}

static int json_file(struct buf *b, bool *first, const char *name, const struct file_info *f)
{
	bool g = true;

	return report_jkey(b, first, name) || buf_putc(b, '{') || report_jkey(b, &g, "file") ||
	       report_jstr(b, f->name, strlen(f->name)) || report_ju64(b, &g, "files", f->files) ||
	       report_ju64(b, &g, "events", f->events) ||
	       report_ju64(b, &g, "thread_count", f->threads) ||
	       report_ju64(b, &g, "slices", f->slices) || report_ju64(b, &g, "keys", f->keys) ||
	       buf_putc(b, '}');
}

/* A ratio, null when A's value is 0 and B's is not. */
static int json_ratio(struct buf *b, bool *first, const char *key, const struct cmp *c, double r)
{
	if (c->kind != KIND_BOTH || isinf(r))
		return report_jkey(b, first, key) || buf_puts(b, "null");
	return report_jf64(b, first, key, r);
}

static int json_report(const struct diff *d)
{
	struct buf b = {0};
	bool first = true, f2 = true;
	size_t n = shown(d);
	int err;

	err = buf_putc(&b, '{') || report_ju64(&b, &first, "schema_version", DIFF_SCHEMA_VERSION) ||
	      report_jkey(&b, &first, "mode") || buf_puts(&b, "\"single\"") ||
	      report_jkey(&b, &first, "by") ||
	      report_jstr(&b, tally_by_names[d->opt->t.by], strlen(tally_by_names[d->opt->t.by])) ||
	      report_jf64(&b, &first, "relative_error", RTR__SKETCH_ALPHA) ||
	      report_jkey(&b, &first, "verdict_metric") || buf_puts(&b, "\"p50\"") ||
	      report_jkey(&b, &first, "rule") || report_jstr(&b, RULE_TEXT, strlen(RULE_TEXT)) ||
	      json_file(&b, &first, "a", &d->f[0]) || json_file(&b, &first, "b", &d->f[1]) ||
	      (d->opt->fail ? report_jf64(&b, &first, "fail_above_pct", d->opt->fail_above)
			    : report_jkey(&b, &first, "fail_above_pct") || buf_puts(&b, "null")) ||
	      report_jbool(&b, &first, "failed", d->failing > 0) ||
	      report_ju64(&b, &first, "failing", d->failing) ||
	      report_jkey(&b, &first, "summary") || buf_putc(&b, '{') ||
	      report_ju64(&b, &f2, "both", d->n[KIND_BOTH]) ||
	      report_ju64(&b, &f2, "slower", d->slower) ||
	      report_ju64(&b, &f2, "faster", d->faster) ||
	      report_ju64(&b, &f2, "within_noise", d->n[KIND_BOTH] - d->slower - d->faster) ||
	      report_ju64(&b, &f2, "added", d->n[KIND_ADDED]) ||
	      report_ju64(&b, &f2, "removed", d->n[KIND_REMOVED]) || buf_putc(&b, '}') ||
	      report_ju64(&b, &first, "keys", d->nrows) || report_jkey(&b, &first, "rows") ||
	      buf_putc(&b, '[');
	for (size_t i = 0; i < n && !err; i++) {
		static const char *const kinds[] = {
			[KIND_BOTH] = "both", [KIND_ADDED] = "added", [KIND_REMOVED] = "removed"};
		const struct cmp *c = &d->rows[i];
		size_t len;
		const char *k = tally_key_string(&d->keys, c->e, &len);
		bool f = true;

		err = (i > 0 && buf_putc(&b, ',')) || buf_putc(&b, '{') ||
		      report_jkey(&b, &f, "key") ||
		      (k != NULL ? report_jstr(&b, k, len) : buf_puts(&b, "null")) ||
		      report_jkey(&b, &f, "in") ||
		      report_jstr(&b, kinds[c->kind], strlen(kinds[c->kind])) ||
		      json_side(&b, &f, "a", c, 0) || json_side(&b, &f, "b", c, 1) ||
		      json_ratio(&b, &f, "p50_ratio", c, c->p50_ratio) ||
		      json_ratio(&b, &f, "total_ratio", c, c->total_ratio) ||
		      (c->kind == KIND_BOTH
			       ? report_jbool(&b, &f, "significant", c->significant)
			       : report_jkey(&b, &f, "significant") || buf_puts(&b, "null")) ||
		      report_jkey(&b, &f, "verdict") ||
		      report_jstr(&b, verdict(c), strlen(verdict(c))) ||
		      report_jbool(&b, &f, "fails", c->fails) || buf_putc(&b, '}');
	}
	err = err || buf_puts(&b, "]}\n");
	if (!err)
		fwrite(b.p, 1, b.len, stdout);
	buf_free(&b);
	return err ? -1 : 0;
}

/* The keys that fail, on standard error: the first few by name. */
static void say_failing(const struct diff *d)
{
	unsigned shown_keys = 0;

	fprintf(stderr,
		"ringtrace diff: %zu key%s got slower by more than %g%% (p50) and the "
		"change is significant:",
		d->failing, d->failing == 1 ? "" : "s", d->opt->fail_above);
	for (size_t i = 0; i < d->nrows && shown_keys < 5; i++) {
		const struct cmp *c = &d->rows[i];
		size_t len;
		const char *k;

		if (!c->fails)
			continue;
		k = tally_key_string(&d->keys, c->e, &len);
		fputs(shown_keys++ > 0 ? ", " : " ", stderr);
		if (k != NULL)
			fprintf(stderr, "%.*s", (int)(len > 80 ? 80 : len), k);
		else
			fputs("(none)", stderr);
		if (isinf(c->p50_ratio))
			fputs(" (from 0)", stderr);
		else
			fprintf(stderr, " (+%.1f%%)", (c->p50_ratio - 1) * 100);
	}
	if (d->failing > shown_keys)
		fputs(", ...", stderr);
	fputc('\n', stderr);
}

static void free_diff(struct diff *d)
{
	for (struct entry *e = table_first(&d->keys); e != NULL; e = table_next(e)) {
		rtr__sketch_free(&e->s[0].dur);
		rtr__sketch_free(&e->s[1].dur);
	}
	table_destroy(&d->keys);
	buf_free(&d->key);
	buf_free(&d->label);
	free(d->f[0].name);
	free(d->f[1].name);
	free(d->rows);
}

/* --------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace diff [options] A B\n"
		"       ringtrace diff [options] A1 A2 ... -- B1 B2 ...   (or DIR_A DIR_B)\n"
		"       ringtrace diff --calibrate [options] R1 R2 ... Rn\n"
		"\n"
		"Compares the slices (X, and B/E pairs; a profile's call paths) of runs, A the\n"
		"baseline and B the new one, per name (or category, or thread; threads matched\n"
		"by name). Each argument is one run: a trace, a profile (found by its content)\n"
		"or a job's manifest (its rank files summed); a directory stands for its runs.\n"
		"\n"
		"One run a side: count, total, p50, p99 and spread (p75 - p25) per key, the\n"
		"ratios B/A, and \"significant\" when |p50 B - p50 A| exceeds both sides'\n"
		"spread and 2%% of the larger p50 (the sketches' error), else \"within noise\".\n"
		"\n"
		"Several runs a side: per key each run's median, compared by a Mann-Whitney U\n"
		"test on the run medians (exact, two-sided) with the Hodges-Lehmann shift and\n"
		"Cliff's delta; \"slower\"/\"faster\" when p <= ALPHA and the shift is at least\n"
		"PCT %% of A's median and NS ns. A slice count the same in every run of a side\n"
		"and different between the sides is a deterministic change (\"count changed\").\n"
		"--calibrate compares splits of identical runs and prints the false-alarm rate.\n"
		"\n"
		"Counts and totals are exact; percentiles within 1%% (a DDSketch per key).\n"
		"\n"
		"options:\n"
		"  -b, --by KEY          name (the default), cat or thread\n"
		"      --format FORMAT   text (the default), markdown or json\n"
		"      --json            --format json: times in integer nanoseconds\n"
		"  -f, --fail-above PCT  exit 1 when a key got significantly slower by more than\n"
		"                        PCT percent, or (several runs) a count changed\n"
		"      --alpha P         several runs: the test's level (default 0.05)\n"
		"      --min-pct PCT     several runs: the smallest shift, %% of A (default 3)\n"
		"      --min-ns NS       several runs: the smallest shift in ns (default 50)\n"
		"      --calibrate       the false-alarm rate on splits of identical runs\n"
		"      --seed N          --calibrate: the seed of drawn splits (over 1000)\n"
		"  -n, --top N           rows shown (default 20; 0: all), --json included; the\n"
		"                        summary and --fail-above cover every key\n"
		"  -j, --jobs N          read the files on N threads (default: the online CPUs)\n"
		"  -h, --help            this help\n"
		"\n"
		"exit status: 0 compared (and nothing failed --fail-above), 1 a key failed\n"
		"--fail-above, or an input is JSON but neither a trace nor a profile, 2 usage\n"
		"error, unreadable or malformed input.\n");
}

/* A percentage: a non-negative decimal number. 0 or -1. */
static int parse_pct(const char *s, double *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*v = strtod(s, &end);
	return *end != '\0' || !isfinite(*v) ? -1 : 0;
}

/* The '--' between the sides, kept as an operand: getopt would take it for the end of
 * the options (and move it), so it is swapped for this string, which getopt takes for
 * an operand (no '-' first) and which is found by its address. */
static char side_break[] = "\001--";

/* Split the operands into A and B: two files, or A... -- B... 0, or a usage error. */
static int split_sides(char **ops, size_t n, size_t *na)
{
	size_t at = n;

	for (size_t i = 0; i < n && at == n; i++)
		if (ops[i] == side_break)
			at = i;
	if (at == n && n == 2) {
		*na = 1;
		return 0;
	}
	if (at == n)
		return cli_usage_error("diff", n < 2 ? "two FILEs to compare: A B"
						     : "several FILEs a side: A... -- B...");
	if (at == 0 || at == n - 1)
		return cli_usage_error("diff", "a side without FILEs: A... -- B...");
	*na = at;
	return 0;
}

static int diff_sides(struct diff *d, char **ops, size_t n, size_t na)
{
	bool other[2] = {false, false}, brk = ops[na] == side_break;
	int status = read_side(d, (const char *const *)ops, na, 0, &other[0]);
	int status_b =
		read_side(d, (const char *const *)ops + na + brk, n - na - brk, 1, &other[1]);

	/* both sides are read on every rank: each is a gather the ranks must all join */
	if (other[0] || other[1])
		return -1;
	status = status > status_b ? status : status_b;
	if (status == CLI_OK && compare_all(d) != 0) {
		cli_error("diff", "out of memory");
		status = CLI_ERROR;
	}
	return status;
}

/* One option of cmd_diff (not --help). 0 or a usage error. */
static int diff_option(int ch, struct diff_options *opt, uint64_t *jobs)
{
	switch (ch) {
	case 'b':
		if (tally_parse_by(optarg, &opt->t.by))
			return cli_usage_error("diff", "--by wants name, cat or thread, not '%s'",
					       optarg);
		return 0;
	case 'J':
		opt->format = FORMAT_JSON;
		return 0;
	case 'F':
		if (strcmp(optarg, "text") && strcmp(optarg, "markdown") && strcmp(optarg, "json"))
			return cli_usage_error(
				"diff", "--format wants text, markdown or json, not '%s'", optarg);
		opt->format = optarg[0] == 't'	 ? FORMAT_TEXT
			      : optarg[0] == 'm' ? FORMAT_MARKDOWN
						 : FORMAT_JSON;
		return 0;
	case 'f':
		opt->fail = true;
		if (parse_pct(optarg, &opt->fail_above))
			return cli_usage_error(
				"diff", "--fail-above wants a percentage (10, 2.5), not '%s'",
				optarg);
		return 0;
	case 'a':
		if (parse_pct(optarg, &opt->alpha) || opt->alpha <= 0 || opt->alpha > 1)
			return cli_usage_error("diff", "--alpha wants a level in (0, 1], not '%s'",
					       optarg);
		return 0;
	case 'P':
		if (parse_pct(optarg, &opt->min_pct))
			return cli_usage_error("diff", "--min-pct wants a percentage, not '%s'",
					       optarg);
		return 0;
	case 'N':
		if (parse_pct(optarg, &opt->min_ns))
			return cli_usage_error("diff", "--min-ns wants nanoseconds, not '%s'",
					       optarg);
		return 0;
	case 'C':
		opt->calibrate = true;
		return 0;
	case 'S':
		if (cli_parse_u64(optarg, &opt->seed))
			return cli_usage_error("diff", "--seed wants a number, not '%s'", optarg);
		return 0;
	case 'n':
		if (cli_parse_u64(optarg, &opt->t.top))
			return cli_usage_error("diff", "--top wants a number, not '%s'", optarg);
		return 0;
	case 'j':
		if (cli_parse_u64(optarg, jobs) || *jobs == 0 || *jobs > 1024)
			return cli_usage_error(
				"diff", "--jobs wants a number from 1 to 1024, not '%s'", optarg);
		return 0;
	default:
		return cli_usage_error("diff", "unknown option");
	}
}

static bool is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One run against one, as before runs were counted: the rule on spreads. */
static int diff_one(struct diff_options *opt, char **ops, size_t n, size_t na)
{
	struct diff d = {.opt = opt};
	int status;

	table_init(&d.keys, sizeof(struct entry));
	status = diff_sides(&d, ops, n, na);
	if (status == CLI_OK) {
		if (opt->format == FORMAT_JSON) {
			if (json_report(&d) != 0) {
				cli_error("diff", "out of memory");
				status = CLI_ERROR;
			}
		} else {
			/* Markdown: the table as it is, in a code block */
			if (opt->format == FORMAT_MARKDOWN)
				puts("```");
			print_report(&d);
			if (opt->format == FORMAT_MARKDOWN)
				puts("```");
		}
		if (fflush(stdout) != 0 || ferror(stdout)) {
			cli_error("diff", "writing the report failed");
			status = CLI_ERROR;
		} else if (d.failing > 0) {
			say_failing(&d);
			status = CLI_FINDINGS;
		}
	}
	free_diff(&d);
	return status;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"by", required_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'J'},
		{"format", required_argument, NULL, 'F'},
		{"fail-above", required_argument, NULL, 'f'},
		{"alpha", required_argument, NULL, 'a'},
		{"min-pct", required_argument, NULL, 'P'},
		{"min-ns", required_argument, NULL, 'N'},
		{"calibrate", no_argument, NULL, 'C'},
		{"seed", required_argument, NULL, 'S'},
		{"top", required_argument, NULL, 'n'},
		{"jobs", required_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct diff_options opt = {.t = {.by = BY_NAME, .top = 20},
				   .alpha = DIFF_ALPHA,
				   .min_pct = DIFF_MIN_PCT,
				   .min_ns = DIFF_MIN_NS};
	uint64_t jobs = 0;
	size_t n, na = 0, stdins = 0;
	int ch, status;
	char **ops;
	bool brk;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = side_break;
			break;
		}
	}
	while ((ch = getopt_long(argc, argv, "b:f:n:j:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if (diff_option(ch, &opt, &jobs) != 0)
			return CLI_ERROR;
	}
	opt.t.json = opt.format == FORMAT_JSON;
	opt.jobs = (unsigned)jobs;
	n = (size_t)(argc - optind);
	ops = argv + optind;
	for (size_t i = 0; i < n; i++)
		stdins += strcmp(ops[i], "-") == 0;
	if (stdins > 1)
		return cli_usage_error("diff", "standard input can be one of the files, not both");
	if (opt.calibrate) {
		for (size_t i = 0; i < n; i++)
			if (ops[i] == side_break)
				return cli_usage_error("diff",
						       "--calibrate takes one side of runs");
		return n == 0 ? cli_usage_error("diff", "--calibrate wants runs")
			      : diff_runs(&opt, ops, n, n, 0);
	}
	if (split_sides(ops, n, &na) != 0)
		return CLI_ERROR;
	brk = ops[na] == side_break;
	if (na == 1 && n - na - brk == 1 && !is_dir(ops[0]) && !is_dir(ops[n - 1]))
		status = diff_one(&opt, ops, n, na);
	else
		status = diff_runs(&opt, ops, n, na, brk);
	return status < 0 ? CLI_OK : status;
}
