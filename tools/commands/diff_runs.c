/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace diff A1 A2 ... -- B1 B2 ...`: the verdict on several runs a side
 * (diff_runs.h). Every run is read (tally_file.h: a manifest's files summed as one
 * run) and reduced to a value per key and run before the next is read, so memory is
 * one run's tally and the keys' three numbers per run.
 */
#include "diff_runs.h"
#include "cli.h"
#include "ranktest.h"
#include "tally_file.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------- runs */

/* Whether path is a job's manifest: known by its content, as manifest.h knows it. */
static bool is_manifest(const char *path)
{
	char head[4096];
	size_t got;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return false;
	got = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[got] = '\0';
	return strstr(head, "\"ringtrace manifest\"") != NULL;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The runs of a directory, by name: its manifests when it has any (their rank files
 * beside them are theirs), else every regular file not starting with '.'. 0 or -1. */
static int dir_runs(const char *dir, char ***out, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	size_t from = *n, manifests = 0;
	struct dirent *e;

	if (d == NULL)
		return cli_error("diff", "%s: %s", dir, strerror(errno)), -1;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char *p;

		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			break;
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (*n == *cap) {
			char **grown = realloc(*out, (*cap = *cap * 2 + 8) * sizeof(char *));

			if (grown == NULL) {
				free(p);
				break;
			}
			*out = grown;
		}
		(*out)[(*n)++] = p;
	}
	closedir(d);
	qsort(*out + from, *n - from, sizeof(char *), cmp_str);
	for (size_t i = from; i < *n; i++)
		manifests += is_manifest((*out)[i]);
	if (manifests > 0) {
		size_t kept = from;

		for (size_t i = from; i < *n; i++) {
			if (is_manifest((*out)[i]))
				(*out)[kept++] = (*out)[i];
			else
				free((*out)[i]);
		}
		*n = kept;
	}
	if (*n == from)
		return cli_error("diff", "%s: no runs in the directory", dir), -1;
	return 0;
}

/* ops[0 .. n) as run paths into *out (each malloc'd), directories expanded. 0 or -1. */
static int expand_runs(char **ops, size_t n, char ***out, size_t *nout)
{
	size_t cap = 0;
	struct stat st;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ops[i], "-") != 0 && stat(ops[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (dir_runs(ops[i], out, nout, &cap))
				return -1;
			continue;
		}
		if (*nout == cap) {
			char **grown = realloc(*out, (cap = cap * 2 + 8) * sizeof(char *));

			if (grown == NULL)
				return -1;
			*out = grown;
		}
		if (((*out)[*nout] = strdup(ops[i])) == NULL)
			return -1;
		(*nout)++;
	}
	return 0;
}

static void free_paths(char **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
	free(p);
}

/* The rows of run number i's tally into the keys. 0 or -1 (out of memory). */
static int add_run(struct runs *r, const struct tally_sum *c, size_t i)
{
	for (const struct row *w = table_first(&c->rows); w != NULL; w = table_next(w)) {
		struct rkey *k;
		const void *key;
		size_t klen;
		bool created;

		if (c->by == BY_THREAD) {
			if (diff_thread_key(&r->label, &r->key, c, w))
				return -1;
			key = r->key.p;
			klen = r->key.len;
		} else {
			key = table_key(&c->rows, w, &klen);
		}
		k = table_put(&r->keys, key, klen, &created);
		if (k == NULL)
			return -1;
		if (created) {
			k->at = r->keys.count;
			k->p50 = calloc(r->nruns * 3, sizeof(uint64_t));
			k->in = calloc(r->nruns, 1);
			if (k->p50 == NULL || k->in == NULL)
				return -1;
			k->count = k->p50 + r->nruns;
			k->total = k->count + r->nruns;
		}
		/* threads of one name in a run: summed, their sketches merged */
		k->in[i] = 1;
		k->count[i] += w->dur.count;
		k->total[i] += w->total;
		if (rtr__sketch_merge(&k->run_dur, &w->dur))
			return -1;
	}
	for (struct rkey *k = table_first(&r->keys); k != NULL; k = table_next(k)) {
		if (!k->in[i])
			continue;
		k->p50[i] = rtr__sketch_quantile(&k->run_dur, 5000);
		rtr__sketch_free(&k->run_dur);
		memset(&k->run_dur, 0, sizeof(k->run_dur));
	}
	return 0;
}

/* Read run number i (path) into the keys. A CLI_* status (said). */
static int read_run(struct runs *r, const char *path, size_t i)
{
	struct tally_sum sum;
	struct run_info *info = &r->run[i];
	int status, got;

	tally_sum_init(&sum, r->opt->t.by);
	got = tally_inputs_read(&sum, &r->opt->t, "diff", &path, 1, r->opt->jobs);
	status = got == SPREAD_ROOT ? sum.status : CLI_ERROR;
	if (got == SPREAD_ROOT && sum.errors > 0) {
		cli_error("diff", "%s: read up to malformed input (diff compares whole runs)",
			  path);
		status = CLI_ERROR;
	}
	if (got == SPREAD_OTHER) {
		/* under mpirun: another rank holds the run; every rank joins every run */
		r->other = true;
		status = CLI_OK;
	}
	if (got == SPREAD_ROOT && status == CLI_OK) {
		info->name = strdup(path);
		info->files = sum.files;
		info->events = sum.events;
		info->slices = sum.slices;
		if (info->name == NULL || add_run(r, &sum, i)) {
			cli_error("diff", "out of memory");
			status = CLI_ERROR;
		}
	}
	tally_sum_destroy(&sum);
	return status;
}

/* ----------------------------------------------------------------- compare */

/* Side s of key k over the runs idx[0 .. n): its run medians into v (those with the
 * key), whether its count is the same in each (a run without the key counts 0). */
static size_t side_values(const struct rkey *k, const size_t *idx, size_t n, double *v,
			  double *totals, bool *same, uint64_t *count)
{
	size_t got = 0;

	*same = true;
	*count = k->count[idx[0]];
	for (size_t j = 0; j < n; j++) {
		size_t i = idx[j];

		*same = *same && k->count[i] == *count;
		if (!k->in[i])
			continue;
		totals[got] = (double)k->total[i];
		v[got++] = (double)k->p50[i];
	}
	return got;
}

/* Compare key k, side A the runs idx[0 .. na), side B idx[na .. na + nb), into w;
 * scratch holds 4 (na + nb) doubles. 0 or -1 (out of memory). */
static int compare_key(const struct diff_options *o, struct rkey *k, const size_t *idx, size_t na,
		       size_t nb, struct rrow *w, double *scratch)
{
	double *a = scratch, *b = a + na, *ta = b + nb, *tb = ta + na;
	bool same[2];
	struct rank_test t;

	memset(w, 0, sizeof(*w));
	w->k = k;
	w->n[0] = side_values(k, idx, na, a, ta, &same[0], &w->count[0]);
	w->n[1] = side_values(k, idx + na, nb, b, tb, &same[1], &w->count[1]);
	w->kind = w->n[0] > 0 && w->n[1] > 0 ? RK_BOTH : w->n[1] > 0 ? RK_ADDED : RK_REMOVED;
	w->counted = same[0] && same[1];
	w->count_changed = w->counted && w->count[0] != w->count[1];
	w->p = 1;
	if (w->kind == RK_BOTH) {
		double total_a, total_b;

		if (rank_test(a, w->n[0], b, w->n[1], &t))
			return -1;
		w->u = t.u;
		w->p = t.p;
		w->exact = t.exact;
		w->shift = t.shift;
		w->cliffs = t.cliffs;
		w->median[0] = rank_median(a, w->n[0]);
		w->median[1] = rank_median(b, w->n[1]);
		w->shift_pct = w->median[0] > 0 ? w->shift / w->median[0] * 100
			       : w->shift > 0	? INFINITY
						: 0;
		w->significant = w->p <= o->alpha && fabs(w->shift) >= o->min_ns &&
				 fabs(w->shift_pct) >= o->min_pct;
		w->slower = w->significant && w->shift > 0;
		w->faster = w->significant && w->shift < 0;
		total_a = rank_median(ta, w->n[0]);
		total_b = rank_median(tb, w->n[1]);
		w->total_ratio = total_a > 0 ? total_b / total_a : total_b > 0 ? INFINITY : 1;
	} else {
		w->median[w->kind == RK_ADDED] =
			rank_median(w->kind == RK_ADDED ? b : a, w->n[w->kind == RK_ADDED]);
	}
	w->fails = o->fail && ((w->slower && w->shift_pct > o->fail_above) || w->count_changed);
	return 0;
}

/* Order: keys in both by shift %, the largest regression first; then added, then
 * removed, each by median. */
static int cmp_rows(const void *x, const void *y)
{
	const struct rrow *a = x, *b = y;

	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	if (a->kind == RK_BOTH && a->shift_pct != b->shift_pct)
		return a->shift_pct < b->shift_pct ? 1 : -1;
	if (a->kind != RK_BOTH) {
		double ma = a->median[a->kind == RK_ADDED], mb = b->median[b->kind == RK_ADDED];

		if (ma != mb)
			return ma < mb ? 1 : -1;
	}
	return a->k->at < b->k->at ? -1 : a->k->at > b->k->at;
}

static int compare_all(struct runs *r)
{
	size_t *idx = malloc(r->nruns * sizeof(size_t));
	double *scratch = malloc(4 * r->nruns * sizeof(double));
	int err = idx == NULL || scratch == NULL;

	r->rows = calloc(r->keys.count + 1, sizeof(struct rrow));
	err = err || r->rows == NULL;
	for (size_t i = 0; !err && i < r->nruns; i++)
		idx[i] = i;
	for (struct rkey *k = table_first(&r->keys); !err && k != NULL; k = table_next(k)) {
		struct rrow *w = &r->rows[r->nrows++];

		err = compare_key(r->opt, k, idx, r->na, r->nruns - r->na, w, scratch);
		r->kinds[w->kind]++;
		r->slower += w->slower;
		r->faster += w->faster;
		r->count_changes += w->count_changed;
		r->failing += w->fails;
	}
	if (!err)
		qsort(r->rows, r->nrows, sizeof(struct rrow), cmp_rows);
	free(idx);
	free(scratch);
	return err ? -1 : 0;
}

/* --------------------------------------------------------------- calibrate */

/* The next combination of k of n in c (ascending), false after the last. */
static bool next_combination(size_t *c, size_t k, size_t n)
{
	size_t i = k;

	while (i > 0 && c[i - 1] == n - k + i - 1)
		i--;
	if (i == 0)
		return false;
	c[i - 1]++;
	for (size_t j = i; j < k; j++)
		c[j] = c[j - 1] + 1;
	return true;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One split (A: the runs in pick[0 .. half), in order, B the rest): an alarm when a
 * key fails the gate (with --fail-above) or is significant (without). */
static int calibrate_split(struct runs *r, const size_t *pick, size_t half, size_t *idx,
			   double *scratch)
{
	size_t na = 0, nb = 0;
	bool alarm = false;
	uint8_t *inside = calloc(r->nruns, 1);

	if (inside == NULL)
		return -1;
	for (size_t i = 0; i < half; i++)
		inside[pick[i]] = 1;
	for (size_t i = 0; i < r->nruns; i++) {
		if (inside[i])
			idx[na++] = i;
		else
			idx[half + nb++] = i;
	}
	free(inside);
	for (struct rkey *k = table_first(&r->keys); k != NULL; k = table_next(k)) {
		struct rrow w;
		bool hit;

		if (compare_key(r->opt, k, idx, na, nb, &w, scratch))
			return -1;
		if (w.kind != RK_BOTH)
			continue;
		hit = r->opt->fail ? w.fails : w.significant;
		r->key_checks++;
		r->key_alarms += hit;
		alarm = alarm || hit;
	}
	r->splits++;
	r->alarms += alarm;
	return 0;
}

static int calibrate(struct runs *r)
{
	size_t n = r->nruns, half = n / 2;
	size_t *pick = malloc(n * sizeof(size_t)), *idx = malloc(n * sizeof(size_t));
	double *scratch = malloc(4 * n * sizeof(double));
	double combos = 1;
	uint64_t seed = r->opt->seed ? r->opt->seed : 0x9e3779b97f4a7c15u;
	int err = pick == NULL || idx == NULL || scratch == NULL;

	for (size_t i = 0; i < half; i++)
		combos = combos * (double)(n - i) / (double)(i + 1);
	r->split_size = half;
	r->all_splits = combos <= DIFF_SPLITS;
	for (size_t i = 0; !err && i < n; i++)
		pick[i] = i;
	if (!err && r->all_splits) {
		do
			err = calibrate_split(r, pick, half, idx, scratch);
		while (!err && next_combination(pick, half, n));
	}
	for (size_t s = 0; !err && !r->all_splits && s < DIFF_SPLITS; s++) {
		for (size_t i = 0; i < half; i++) { /* the first half of a shuffle */
			size_t j = i + (size_t)(xorshift(&seed) % (n - i)), t = pick[i];

			pick[i] = pick[j];
			pick[j] = t;
		}
		err = calibrate_split(r, pick, half, idx, scratch);
	}
	free(pick);
	free(idx);
	free(scratch);
	return err ? -1 : 0;
}

/* ------------------------------------------------------------------ entry */

/* The smallest two-sided p of na runs against nb: the two extreme subsets of all. */
static double smallest_p(size_t na, size_t nb)
{
	double ways = 1;

	for (size_t i = 0; i < na; i++)
		ways = ways * (double)(na + nb - i) / (double)(i + 1);
	return ways > 2 ? 2 / ways : 1;
}

static void free_runs(struct runs *r)
{
	for (struct rkey *k = table_first(&r->keys); k != NULL; k = table_next(k)) {
		free(k->p50);
		free(k->in);
		rtr__sketch_free(&k->run_dur);
	}
	table_destroy(&r->keys);
	buf_free(&r->key);
	buf_free(&r->label);
	for (size_t i = 0; i < r->nruns && r->run != NULL; i++)
		free(r->run[i].name);
	free(r->run);
	free(r->rows);
}

/* The runs of both sides, in order, into *paths; r->na and r->nruns set. 0 or -1. */
static int side_runs(struct runs *r, char **ops, size_t n, size_t na, size_t skip, char ***paths)
{
	char **b = NULL;
	size_t nb = 0;

	if (expand_runs(ops, na, paths, &r->na))
		return free_paths(*paths, r->na), *paths = NULL, -1;
	r->nruns = r->na;
	if (r->opt->calibrate)
		return r->nruns < 2 ? cli_usage_error("diff", "--calibrate wants 2 runs or more"),
		       -1	    : 0;
	if (expand_runs(ops + na + skip, n - na - skip, &b, &nb)) {
		free_paths(b, nb);
		return -1;
	}
	{
		char **all = realloc(*paths, (r->na + nb) * sizeof(char *));

		if (all == NULL) {
			free_paths(b, nb);
			return -1;
		}
		memcpy(all + r->na, b, nb * sizeof(char *));
		free(b);
		*paths = all;
		r->nruns = r->na + nb;
	}
	return 0;
}

int diff_runs(const struct diff_options *opt, char **ops, size_t n, size_t na, size_t skip)
{
	struct runs r = {.opt = opt};
	char **paths = NULL;
	int status = CLI_OK;

	table_init(&r.keys, sizeof(struct rkey));
	if (side_runs(&r, ops, n, na, skip, &paths)) {
		free_runs(&r);
		return CLI_ERROR;
	}
	r.run = calloc(r.nruns, sizeof(struct run_info));
	if (r.run == NULL)
		status = CLI_ERROR;
	for (size_t i = 0; i < r.nruns && status == CLI_OK; i++)
		status = read_run(&r, paths[i], i);
	free_paths(paths, r.nruns);
	if (r.other) { /* rank 0 of an MPI job reports */
		free_runs(&r);
		return status;
	}
	{
		size_t side_a = opt->calibrate ? r.nruns / 2 : r.na;
		double least = smallest_p(side_a, r.nruns - side_a);

		if (status == CLI_OK && least > opt->alpha)
			cli_note("diff",
				 "warning: %zu runs against %zu can never reach p <= %g (the "
				 "smallest p is %.3g): no timing can be significant; 4 runs a side "
				 "or more",
				 side_a, r.nruns - side_a, opt->alpha, least);
	}
	if (status == CLI_OK && (opt->calibrate ? calibrate(&r) : compare_all(&r)) != 0) {
		cli_error("diff", "out of memory");
		status = CLI_ERROR;
	}
	if (status == CLI_OK) {
		if (runs_print(&r) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
			cli_error("diff", "writing the report failed");
			status = CLI_ERROR;
		} else if (r.failing > 0) {
			runs_say_failing(&r);
			status = CLI_FINDINGS;
		}
	}
	free_runs(&r);
	return status;
}
