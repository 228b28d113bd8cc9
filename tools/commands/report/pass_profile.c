/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`, one profile (docs/profile.md) as a file's partial (job_report.h).
 *
 * A process profile (scope "process") gives its rank's span (end_ns - start_ns, its
 * start taken as the job's: a profile has no clock to align), its MPI time (the
 * totals of its outermost `mpi` nodes, threads summed) and the inclusive time and
 * slices per call path ("a;b;c", as a trace's). A job profile (scope "job") gives the
 * ranks' spans and, per call path, its sum and its "r" across the ranks (min, max,
 * the max's rank, the ranks with it). No message or collective: wait states need
 * traces.
 */
#include "job_report.h"
#include "json.h"
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

struct walk {
	struct rank_part *part;
	struct table paths; /* path text -> struct walk_path */
	struct buf path;
	bool job;
	int err; /* -1 out of memory, -2 malformed */
};

struct walk_path {
	uint64_t incl, calls;
	struct prof_path r;
};

static yajl_val member(yajl_val obj, const char *key)
{
	const char *p[] = {key, NULL};

	return YAJL_IS_OBJECT(obj) ? yajl_tree_get(obj, p, yajl_t_any) : NULL;
}

/* A whole number >= 0 at key (absent: dflt when not required). */
static bool get_u64(yajl_val obj, const char *key, bool required, uint64_t dflt, uint64_t *v)
{
	yajl_val x = member(obj, key);

	if (x == NULL && !required) {
		*v = dflt;
		return true;
	}
	if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 0)
		return false;
	*v = (uint64_t)YAJL_GET_INTEGER(x);
	return true;
}

static const char *get_str(yajl_val obj, const char *key)
{
	yajl_val x = member(obj, key);

	return YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
}

static int bad(struct walk *w, const char *what)
{
	if (w->err == 0) {
		w->err = -2;
		snprintf(w->part->error, sizeof(w->part->error), "%s: profile: %s", w->part->path,
			 what);
	}
	return w->err;
}

static int walk_calls(struct walk *w, yajl_val calls, unsigned depth, bool in_mpi);

static int walk_node(struct walk *w, yajl_val node, unsigned depth, bool in_mpi)
{
	const char *name = get_str(node, "name"), *cat = get_str(node, "cat");
	size_t at = w->path.len;
	uint64_t n, t;
	struct walk_path *p;
	bool mpi = cat != NULL && strcmp(cat, "mpi") == 0;

	if (name == NULL || !get_u64(node, "n", true, 0, &n) || !get_u64(node, "t", true, 0, &t))
		return bad(w, "a call path node without a \"name\", \"n\" or \"t\"");
	if ((at > 0 && buf_putc(&w->path, ';')) || buf_put(&w->path, name, strlen(name)))
		return w->err = -1;
	p = table_put(&w->paths, w->path.p, w->path.len, NULL);
	if (p == NULL)
		return w->err = -1;
	p->incl += t;
	p->calls += n;
	if (mpi && !in_mpi)
		w->part->mpi_ns += t;
	if (w->job) {
		yajl_val r = member(node, "r");
		uint64_t min, max, with, rank;

		if (!get_u64(r, "min", true, 0, &min) || !get_u64(r, "max", true, 0, &max) ||
		    !get_u64(r, "with", true, 0, &with) ||
		    !get_u64(r, "max_rank", true, 0, &rank) || min > max || rank > INT64_MAX)
			return bad(w, "a job node without its \"r\" (min, max, max_rank, with)");
		/* a path on two nodes (not written so): the first's */
		if (p->r.with == 0 && p->r.max == 0)
			p->r = (struct prof_path){min, max, (int64_t)rank, with};
	}
	if (member(node, "calls") != NULL)
		walk_calls(w, member(node, "calls"), depth + 1, in_mpi || mpi);
	w->path.len = at;
	return w->err;
}

static int walk_calls(struct walk *w, yajl_val calls, unsigned depth, bool in_mpi)
{
	if (depth >= PROFILE_MAX_DEPTH)
		return bad(w, "call paths nest too deep");
	if (!YAJL_IS_ARRAY(calls))
		return bad(w, "\"calls\" is not an array");
	for (size_t i = 0; i < calls->u.array.len && w->err == 0; i++)
		walk_node(w, calls->u.array.values[i], depth, in_mpi);
	return w->err;
}

/* The paths walked into the part's arrays. */
static int take_paths(struct walk *w)
{
	struct rank_part *r = w->part;
	size_t n = w->paths.count;

	r->paths = calloc(n + 1, sizeof(*r->paths));
	r->incl = calloc(n + 1, sizeof(*r->incl));
	r->calls = calloc(n + 1, sizeof(*r->calls));
	r->jp = w->job ? calloc(n + 1, sizeof(*r->jp)) : NULL;
	if (r->paths == NULL || r->incl == NULL || r->calls == NULL || (w->job && r->jp == NULL))
		return w->err = -1;
	for (struct walk_path *p = table_first(&w->paths); p != NULL; p = table_next(p)) {
		size_t len;
		const char *key = table_key(&w->paths, p, &len);

		r->paths[r->npaths] = text_dup(key, len);
		if (r->paths[r->npaths] == NULL)
			return w->err = -1;
		r->incl[r->npaths] = p->incl;
		r->calls[r->npaths] = p->calls;
		if (w->job)
			r->jp[r->npaths] = p->r;
		r->npaths++;
	}
	return 0;
}

/* A job profile's ranks: each one's span. */
static int job_ranks(struct walk *w, yajl_val ranks)
{
	struct rank_part *r = w->part;

	if (!YAJL_IS_ARRAY(ranks))
		return bad(w, "a job profile without its \"ranks\"");
	r->jr = calloc(ranks->u.array.len + 1, sizeof(*r->jr));
	if (r->jr == NULL)
		return w->err = -1;
	for (size_t i = 0; i < ranks->u.array.len; i++) {
		yajl_val k = ranks->u.array.values[i];
		uint64_t rank, start, end;

		if (!get_u64(k, "rank", true, 0, &rank) ||
		    !get_u64(k, "start_ns", false, 0, &start) ||
		    !get_u64(k, "end_ns", false, start, &end) || end < start || rank > INT32_MAX ||
		    end - start > INT64_MAX / 4)
			return bad(w, "a job profile's rank without a \"rank\", or ending before "
				      "it starts");
		r->jr[r->njr++] = (struct prof_rank){(int64_t)rank, (int64_t)(end - start)};
	}
	return 0;
}

static int read_doc(struct walk *w, yajl_val doc)
{
	struct rank_part *r = w->part;
	const char *scope = get_str(doc, "scope");
	uint64_t start, end, rank;

	w->job = scope != NULL && strcmp(scope, "job") == 0;
	if (scope == NULL || (!w->job && strcmp(scope, "process") != 0))
		return bad(w, "\"scope\" is neither \"process\" nor \"job\"");
	r->profile = w->job ? PART_JOB_PROFILE : PART_PROFILE;
	if (w->job) {
		if (job_ranks(w, member(doc, "ranks")) ||
		    (member(doc, "calls") != NULL && walk_calls(w, member(doc, "calls"), 0, false)))
			return w->err;
		return take_paths(w);
	}
	if (!get_u64(doc, "start_ns", true, 0, &start) || !get_u64(doc, "end_ns", true, 0, &end) ||
	    end < start || end - start > INT64_MAX / 4)
		return bad(w, "\"start_ns\" and \"end_ns\" are not a span");
	if (get_u64(doc, "rank", true, 0, &rank) && rank <= INT32_MAX)
		r->has_rank = true, r->rank = (int64_t)rank;
	r->has_time = true;
	r->first = 0;
	r->last = (int64_t)(end - start);
	yajl_val threads = member(doc, "threads");
	if (!YAJL_IS_ARRAY(threads))
		return bad(w, "\"threads\" is not an array");
	for (size_t i = 0; i < threads->u.array.len && w->err == 0; i++) {
		yajl_val calls = member(threads->u.array.values[i], "calls");

		if (calls != NULL)
			walk_calls(w, calls, 0, false);
	}
	return w->err ? w->err : take_paths(w);
}

int pass_profile(struct rank_part *part, const struct buf *json)
{
	struct walk w = {.part = part};
	char *text = malloc(json->len + 2), err[256];
	yajl_val doc;

	if (text == NULL)
		return -2;
	/* the kept keys, "{...", closed here */
	if (json->len > 0)
		memcpy(text, json->p, json->len);
	text[json->len] = '}';
	text[json->len + 1] = '\0';
	doc = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	if (doc == NULL) {
		snprintf(part->error, sizeof(part->error), "%s: profile: %s", part->path, err);
		part->failed = true;
		return -1;
	}
	table_init(&w.paths, sizeof(struct walk_path));
	read_doc(&w, doc);
	table_destroy(&w.paths);
	buf_free(&w.path);
	yajl_tree_free(doc);
	if (w.err == -2) {
		/* nothing of a malformed profile counts */
		part_free(part);
		part->paths = NULL, part->incl = NULL, part->calls = NULL;
		part->jp = NULL, part->jr = NULL;
		part->npaths = part->njr = 0;
		part->failed = true;
		return -1;
	}
	return w.err == -1 ? -2 : 0;
}
