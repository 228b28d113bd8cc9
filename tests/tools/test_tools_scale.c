/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats` and `ringtrace diff` over profiles and over many files: a profile
 * reads as the trace of the same run; several files sum to their concatenation; the
 * answer is the same byte for byte at every -j and under mpirun -np 2 and 3; hostile
 * profiles are refused with a message; the sketch's JSON form and the sum's bytes
 * round-trip.
 *
 * The runs are generated here: a model of nested slices written both as a trace (X
 * events, ns exact as whole µs) and as the profile the recorder would write of it
 * (docs/profile.md: call-path nodes, their sketches through rtr__sketch_json()).
 */
#include "common/sketch.h"
#include "json_tree.h"
#include "tally_file.h"
#include "tool_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------ the model */

#define MAX_KIDS 8

/* A call path of the model, as the profile writes it. */
struct node {
	const char *name, *cat;
	uint64_t n, t, s, min, max;
	struct rtr__sketch q;
	struct node *kids[MAX_KIDS];
	int nkids;
};

struct gen {
	uint64_t rng;
	int64_t pid;
	struct buf trace; /* the events, one per line, each ending ",\n" */
	uint64_t events, last_end;
};

static uint64_t rnd(struct gen *g, uint64_t n)
{
	g->rng = g->rng * 6364136223846793005u + 1442695040888963407u;
	return (g->rng >> 33) % n;
}

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(line));
	assert_int_equal(buf_put(b, line, (size_t)n), 0);
}

static struct node *kid(struct node *parent, const char *name, const char *cat)
{
	for (int i = 0; i < parent->nkids; i++)
		if (strcmp(parent->kids[i]->name, name) == 0)
			return parent->kids[i];
	assert_true(parent->nkids < MAX_KIDS);
	struct node *k = calloc(1, sizeof(*k));
	assert_non_null(k);
	k->name = name;
	k->cat = cat;
	parent->kids[parent->nkids++] = k;
	return k;
}

static const char *const names[] = {"solve", "mpi_wait", "pack", "io"};
static const char *const cats[] = {"app", "mpi", "app", "io"};

/* One slice from start (ns) under parent, at depth, with its children inside; written
 * as an X after them (the recorder's order). Returns its end. */
static uint64_t gen_slice(struct gen *g, struct node *parent, int64_t tid, uint64_t start,
			  int depth)
{
	int k = depth == 0 ? 0 : 1 + (int)rnd(g, 3);
	struct node *nd = kid(parent, depth == 0 ? "step" : names[k], depth == 0 ? "" : cats[k]);
	uint64_t at = start + 1000 * (1 + rnd(g, 3)), children = 0, end, dur;
	unsigned nk = depth < 3 ? (unsigned)rnd(g, 3) : 0;

	for (unsigned i = 0; i < nk; i++) {
		uint64_t s = at;

		at = gen_slice(g, nd, tid, s, depth + 1);
		children += at - s;
		at += 1000 * rnd(g, 2);
	}
	end = at + 1000 * (1 + rnd(g, 20));
	dur = end - start;
	nd->min = nd->n == 0 || dur < nd->min ? dur : nd->min;
	nd->max = nd->n == 0 || dur > nd->max ? dur : nd->max;
	nd->n++;
	nd->t += dur;
	nd->s += dur - children;
	assert_int_equal(rtr__sketch_add(&nd->q, dur), 0);
	put(&g->trace,
	    "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%llu,\"dur\":%llu,\"pid\":%lld,"
	    "\"tid\":%lld},\n", /* an empty category as the recorder writes it */
	    nd->cat, nd->name, (unsigned long long)(start / 1000), (unsigned long long)(dur / 1000),
	    (long long)g->pid, (long long)tid);
	g->events++;
	g->last_end = end > g->last_end ? end : g->last_end;
	return end;
}

static void put_node(struct buf *b, const struct node *nd)
{
	char q[RTR__SKETCH_JSON_MAX + 1];

	put(b, "{\"name\":\"%s\"%s%s%s,\"n\":%llu,\"t\":%llu,\"s\":%llu,\"min\":%llu,\"max\":%llu",
	    nd->name, *nd->cat ? ",\"cat\":\"" : "", nd->cat, *nd->cat ? "\"" : "",
	    (unsigned long long)nd->n, (unsigned long long)nd->t, (unsigned long long)nd->s,
	    (unsigned long long)nd->min, (unsigned long long)nd->max);
	if (nd->n > 1) { /* q may be left out for one slice */
		rtr__sketch_json(&nd->q, q, sizeof(q));
		put(b, ",\"q\":%s", q);
	}
	if (nd->nkids > 0) {
		put(b, ",\"calls\":[");
		for (int i = 0; i < nd->nkids; i++) {
			if (i > 0)
				put(b, ",");
			put_node(b, nd->kids[i]);
		}
		put(b, "]");
	}
	put(b, "}");
}

static void free_node(struct node *nd, bool self)
{
	for (int i = 0; i < nd->nkids; i++)
		free_node(nd->kids[i], true);
	rtr__sketch_free(&nd->q);
	if (self)
		free(nd);
}

/*
 * A run of one process (pid) with two threads, `steps` top-level slices each and a
 * counter, written as a trace at trace_path and as its profile at profile_path
 * (either may be NULL). with_end: the trace's end marker and the profile's dropped.
 */
static void write_run(uint64_t seed, int64_t pid, int steps, const char *trace_path,
		      const char *profile_path, bool with_end)
{
	struct gen g = {.rng = seed, .pid = pid};
	struct node root[2];
	struct buf prof = {0}, out = {0};

	memset(root, 0, sizeof(root));
	put(&g.trace,
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,"
	    "\"args\":{\"name\":\"main\"}},\n",
	    (long long)pid, (long long)pid + 1);
	for (int th = 0; th < 2; th++) {
		uint64_t at = 0;

		for (int i = 0; i < steps; i++)
			at = gen_slice(&g, &root[th], pid + 1 + th, at, 0) + 1000 * rnd(&g, 3);
	}
	for (int i = 0; i < 5; i++)
		put(&g.trace,
		    "{\"ph\":\"C\",\"name\":\"rss\",\"ts\":%d,\"pid\":%lld,\"tid\":%lld,"
		    "\"args\":{\"value\":%d}},\n",
		    i, (long long)pid, (long long)pid + 1, 10 * (i % 3) + 1);
	if (with_end)
		put(&g.trace,
		    "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%llu,"
		    "\"pid\":%lld,\"tid\":%lld,\"args\":{\"final\":true,\"events\":%llu,"
		    "\"dropped\":7}},\n",
		    (unsigned long long)(g.last_end / 1000), (long long)pid, (long long)pid + 1,
		    (unsigned long long)g.events);
	put(&out, "[\n");
	buf_put(&out, g.trace.p, g.trace.len - 2); /* no comma after the last */
	put(&out, "\n]\n");
	if (trace_path != NULL)
		tool_write(trace_path, out.p, out.len);
	put(&prof,
	    "{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
	    "\"library\":\"ringtrace 0\",\"host\":\"h\",\"pid\":%lld,\"rank\":null,"
	    "\"world\":null,\"clock\":\"tsc\",\"start_ns\":0,\"end_ns\":%llu,\"final\":true,"
	    "\"reason\":\"stop\",\"events\":%llu,%s\"depth_limit\":64,\"deeper\":0,"
	    "\"threads\":[",
	    (long long)pid, (unsigned long long)g.last_end, (unsigned long long)g.events,
	    with_end ? "\"dropped\":7," : "");
	for (int th = 0; th < 2; th++) {
		put(&prof, "%s{\"tid\":%lld,%s\"events\":1,\"dropped\":0,\"calls\":[",
		    th > 0 ? "," : "", (long long)pid + 1 + th,
		    th == 0 ? "\"name\":\"main\"," : "");
		for (int i = 0; i < root[th].nkids; i++) {
			if (i > 0)
				put(&prof, ",");
			put_node(&prof, root[th].kids[i]);
		}
		put(&prof, "]}");
		free_node(&root[th], false);
	}
	put(&prof,
	    "],\"counters\":[{\"tid\":%lld,\"cat\":\"mem\",\"name\":\"rss\",\"samples\":5,"
	    "\"min\":1,\"max\":21,\"mean\":9,\"last\":11}]}\n",
	    (long long)pid + 1);
	if (profile_path != NULL)
		tool_write(profile_path, prof.p, prof.len);
	buf_free(&prof);
	buf_free(&out);
	buf_free(&g.trace);
}

/* ------------------------------------------------------------- running */

/* `ringtrace ARGS` (NULL-terminated); stdout parsed as JSON when it exits 0. */
static yajl_val stats_json(const char *const *args)
{
	struct tool_run r;
	yajl_val doc;

	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	doc = jt_parse(r.out, "stats --json");
	tool_run_free(&r);
	return doc;
}

/* The row of rows whose "key" is key (NULL: null). */
static yajl_val row_of(yajl_val rows, const char *key)
{
	for (size_t i = 0; i < rows->u.array.len; i++) {
		const char *k = jt_str_or_null(rows->u.array.values[i], "key");

		if ((k == NULL && key == NULL) || (k != NULL && key != NULL && strcmp(k, key) == 0))
			return rows->u.array.values[i];
	}
	fail_msg("no row \"%s\"", key != NULL ? key : "(null)");
	return NULL;
}

/* Every number of rows a and b (by key) is the same. */
static void expect_same_rows(yajl_val a, yajl_val b)
{
	static const char *const fields[] = {"count",  "total_ns", "self_ns", "mean_ns",
					     "min_ns", "p50_ns",   "p99_ns",  "max_ns"};
	yajl_val ra = jt_array(jt_at(a, "slices"), "rows"),
		 rb = jt_array(jt_at(b, "slices"), "rows");

	assert_int_equal(ra->u.array.len, rb->u.array.len);
	assert_true(ra->u.array.len > 0);
	for (size_t i = 0; i < ra->u.array.len; i++) {
		yajl_val x = ra->u.array.values[i];
		const char *key = jt_str_or_null(x, "key");
		yajl_val y = row_of(rb, key);

		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (jt_int(x, fields[f]) != jt_int(y, fields[f]))
				fail_msg("%s %s: %lld against %lld", key ? key : "-", fields[f],
					 jt_int(x, fields[f]), jt_int(y, fields[f]));
	}
	assert_int_equal(jt_int(jt_at(a, "slices"), "count"), jt_int(jt_at(b, "slices"), "count"));
}

static void profile_reads_as_its_trace(void **state)
{
	char trace[4096], prof[4096];
	static const char *const bys[] = {"name", "cat", "thread"};

	(void)state;
	snprintf(trace, sizeof(trace), "%s", tool_tmp("run.json"));
	snprintf(prof, sizeof(prof), "%s", tool_tmp("run.profile.json"));
	write_run(42, 100, 40, trace, prof, true);
	for (size_t i = 0; i < 3; i++) {
		const char *ta[] = {"stats", "--json", "--top", "0", "--by", bys[i], trace, NULL};
		const char *pa[] = {"stats", "--json", "--top", "0", "--by", bys[i], prof, NULL};
		yajl_val a = stats_json(ta), b = stats_json(pa);

		expect_same_rows(a, b);
		if (i == 0) {
			yajl_val ca = jt_array(a, "counters"), cb = jt_array(b, "counters");
			yajl_val ta0 = jt_array(a, "threads"), tb0 = jt_array(b, "threads");

			assert_int_equal(cb->u.array.len, 1);
			assert_string_equal(jt_str(cb->u.array.values[0], "name"), "rss");
			assert_string_equal(jt_str(cb->u.array.values[0], "series"), "value");
			for (size_t k = 0; k < 3; k++) {
				const char *f[] = {"samples", "min", "max"};

				assert_true(jt_double(ca->u.array.values[0], f[k]) ==
					    jt_double(cb->u.array.values[0], f[k]));
			}
			assert_int_equal(jt_int(jt_at(b, "recorder"), "dropped"), 7);
			assert_int_equal(jt_int(jt_at(a, "recorder"), "dropped"), 7);
			assert_int_equal(jt_int(b, "profiles"), 1);
			/* busy time per thread: the top-level slices, the same */
			assert_int_equal(ta0->u.array.len, tb0->u.array.len);
			for (size_t t = 0; t < ta0->u.array.len; t++) {
				yajl_val x = ta0->u.array.values[t], y = tb0->u.array.values[t];

				assert_int_equal(jt_int(x, "tid"), jt_int(y, "tid"));
				assert_int_equal(jt_int(x, "busy_ns"), jt_int(y, "busy_ns"));
				assert_int_equal(jt_int(x, "slices"), jt_int(y, "slices"));
			}
		}
		yajl_tree_free(a);
		yajl_tree_free(b);
	}
	unlink(trace);
	unlink(prof);
}

/* The trace and profile of a run, and a diff of the two: nothing changed. */
static void diff_reads_profiles_on_either_side(void **state)
{
	char trace[4096], prof[4096];
	struct tool_run r;

	(void)state;
	snprintf(trace, sizeof(trace), "%s", tool_tmp("d.json"));
	snprintf(prof, sizeof(prof), "%s", tool_tmp("d.profile.json"));
	write_run(7, 300, 30, trace, prof, false);
	for (int side = 0; side < 2; side++) {
		const char *a[] = {
			"diff", "--json", "--top", "0", side ? prof : trace, side ? trace : prof,
			NULL};
		yajl_val doc, rows;

		tool_runv(&r, NULL, NULL, a);
		assert_int_equal(r.status, 0);
		doc = jt_parse(r.out, "diff --json");
		rows = jt_array(doc, "rows");
		assert_true(rows->u.array.len >= 3);
		for (size_t i = 0; i < rows->u.array.len; i++) {
			yajl_val row = rows->u.array.values[i];

			assert_string_equal(jt_str(row, "verdict"), "within noise");
			assert_true(jt_double(row, "p50_ratio") == 1.0);
			assert_true(jt_double(row, "total_ratio") == 1.0);
		}
		yajl_tree_free(doc);
		tool_run_free(&r);
	}
	/* several files a side: A A -- B B is 2 A against 2 B: ratios 1 again */
	{
		const char *a[] = {"diff", "--json", trace, trace, "--", prof, prof, NULL};
		yajl_val doc;

		tool_runv(&r, NULL, NULL, a);
		assert_int_equal(r.status, 0);
		doc = jt_parse(r.out, "diff --json");
		assert_int_equal(jt_int(jt_at(doc, "a"), "files"), 2);
		assert_int_equal(jt_int(jt_at(doc, "b"), "files"), 2);
		assert_true(jt_double(jt_array(doc, "rows")->u.array.values[0], "total_ratio") ==
			    1.0);
		yajl_tree_free(doc);
		tool_run_free(&r);
	}
	unlink(trace);
	unlink(prof);
}

/* ---------------------------------------------------------- many files */

#define NFILES 3

/* stats over 3 files (distinct pids) = stats over one file of all their events. */
static void stats_of_files_is_stats_of_their_concatenation(void **state)
{
	char paths[NFILES][4096], merged[4096];
	struct buf all = {0};
	static const char *const bys[] = {"name", "cat", "thread"};

	(void)state;
	put(&all, "[\n");
	for (int i = 0; i < NFILES; i++) {
		char name[32];
		size_t len;
		char *text;

		snprintf(name, sizeof(name), "part%d.json", i);
		snprintf(paths[i], sizeof(paths[i]), "%s", tool_tmp(name));
		write_run(1000 + (uint64_t)i, 1000 * (i + 1), 10 + 5 * i, paths[i], NULL, false);
		text = tu_read_file(paths[i], &len);
		/* the events between "[\n" and "\n]\n", joined by commas */
		if (i > 0)
			put(&all, ",\n");
		buf_put(&all, text + 2, len - 5);
		free(text);
	}
	put(&all, "\n]\n");
	/* `ringtrace merge` of the three gives the same rows too */
	snprintf(merged, sizeof(merged), "%s", tool_tmp("merged.json"));
	{
		struct tool_run r;
		const char *ma[] = {"merge", "-o", merged, paths[0], paths[1], paths[2], NULL};
		const char *pa[] = {"stats",  "--json", "--top",  "0",
				    paths[0], paths[1], paths[2], NULL};
		const char *sa[] = {"stats", "--json", "--top", "0", merged, NULL};
		yajl_val p, m;

		tool_runv(&r, NULL, NULL, ma);
		assert_int_equal(r.status, 0);
		tool_run_free(&r);
		p = stats_json(pa);
		m = stats_json(sa);
		expect_same_rows(p, m);
		yajl_tree_free(p);
		yajl_tree_free(m);
	}
	tool_write(merged, all.p, all.len);
	for (size_t b = 0; b < 3; b++) {
		const char *pa[] = {"stats", "--json", "--top",	 "0",	   "--by",
				    bys[b],  paths[0], paths[1], paths[2], NULL};
		const char *ma[] = {"stats", "--json", "--top", "0", "--by", bys[b], merged, NULL};
		yajl_val p = stats_json(pa), m = stats_json(ma);

		if (b < 2)
			expect_same_rows(p, m);
		else /* the thread keys name their file: compare in order of total */
			assert_int_equal(jt_array(jt_at(p, "slices"), "rows")->u.array.len,
					 jt_array(jt_at(m, "slices"), "rows")->u.array.len);
		assert_int_equal(jt_int(p, "events"), jt_int(m, "events"));
		assert_int_equal(jt_int(p, "thread_count"), jt_int(m, "thread_count"));
		assert_int_equal(jt_array(p, "files")->u.array.len, NFILES);
		assert_int_equal(jt_int(jt_array(p, "counters")->u.array.values[0], "samples"),
				 5 * NFILES);
		yajl_tree_free(p);
		yajl_tree_free(m);
	}
	for (int i = 0; i < NFILES; i++)
		unlink(paths[i]);
	unlink(merged);
	buf_free(&all);
}

#define NMIXED 8

/* Traces and profiles, mixed, for the runs below. */
static void write_mixed(char paths[NMIXED][4096])
{
	for (int i = 0; i < NMIXED; i++) {
		char name[32];

		snprintf(name, sizeof(name), "mixed%d.json", i);
		snprintf(paths[i], sizeof(paths[i]), "%s", tool_tmp(name));
		write_run(77 + (uint64_t)i, 10 * (i % 3), 5 + i, i % 3 == 2 ? NULL : paths[i],
			  i % 3 == 2 ? paths[i] : NULL, true);
	}
}

/* stdout of ringtrace stats [-j J] ARGS over the mixed files. */
static char *mixed_output(char paths[NMIXED][4096], const char *jobs, const char *const *opts)
{
	const char *args[32] = {"stats"};
	size_t n = 1;
	struct tool_run r;
	char *out;

	if (jobs != NULL) {
		args[n++] = "-j";
		args[n++] = jobs;
	}
	while (*opts != NULL)
		args[n++] = *opts++;
	for (int i = 0; i < NMIXED; i++)
		args[n++] = paths[i];
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	assert_int_equal(r.status, 0);
	out = strdup(r.out);
	tool_run_free(&r);
	return out;
}

static void same_output_at_every_jobs(void **state)
{
	char paths[NMIXED][4096];
	static const char *const text[] = {"--top", "0", NULL};
	static const char *const json[] = {"--json", "--top", "0", NULL};
	static const char *const thread[] = {"--json", "--by", "thread", NULL};
	const char *const *opts[] = {text, json, thread};

	(void)state;
	write_mixed(paths);
	for (size_t o = 0; o < 3; o++) {
		char *one = mixed_output(paths, "1", opts[o]);

		assert_true(strlen(one) > 500);
		for (const char *j = "2"; j != NULL; j = strcmp(j, "2") == 0 ? "4" : NULL) {
			char *many = mixed_output(paths, j, opts[o]);

			assert_string_equal(one, many);
			free(many);
		}
		free(one);
	}
	for (int i = 0; i < NMIXED; i++)
		unlink(paths[i]);
}

/* Run argv (argv[0] a path) with stdout into out_path and stderr into err_path (NULL:
 * inherited); its exit status. */
static int run_to(const char *const *argv, const char *out_path, const char *err_path)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (freopen(out_path, "w", stdout) == NULL ||
		    (err_path != NULL && freopen(err_path, "w", stderr) == NULL))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#ifdef RTR_MPIEXEC
/* stdout of mpirun -np np ringtrace stats (or diff, the files halved by a --) ARGS
 * into out_path; its exit status. */
static int mpirun_stats(int np, const char *out_path, char paths[NMIXED][4096], bool diff)
{
	char npn[8];
	const char *argv[32] = {
		RTR_MPIEXEC, "--allow-run-as-root", "--oversubscribe",	    "-np", npn, "--timeout",
		"60",	     RTR_TOOL_PATH,	    diff ? "diff" : "stats"};
	int n = 9;

	snprintf(npn, sizeof(npn), "%d", np);
	argv[n++] = "--json";
	argv[n++] = "--top";
	argv[n++] = "0";
	for (int i = 0; i < NMIXED; i++) {
		if (diff && i == NMIXED / 2)
			argv[n++] = "--";
		argv[n++] = paths[i];
	}
	argv[n] = NULL;
	return run_to(argv, out_path, NULL);
}
#endif

/* Started by a launcher (its rank variables set) from a folder without the MPI
 * plugin: rank 0 says so in one line and reports every file, another rank nothing. */
static void launcher_without_plugin_reads_on_rank_zero(void **state)
{
	char dir[4096], bin[4200], out[4096], err[4096], paths[NMIXED][4096], cmd[8600];
	static const char *const json[] = {"--json", "--top", "0", NULL};
	const char *argv[16] = {bin, "stats", "--json", "--top", "0"};
	char *one, *got, *said;

	(void)state;
	write_mixed(paths);
	one = mixed_output(paths, "1", json);
	snprintf(dir, sizeof(dir), "%s", tool_tmp("alone"));
	snprintf(bin, sizeof(bin), "%s/ringtrace", dir);
	snprintf(out, sizeof(out), "%s", tool_tmp("alone.out"));
	snprintf(err, sizeof(err), "%s", tool_tmp("alone.err"));
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s'", dir, RTR_TOOL_PATH, bin);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < NMIXED; i++)
		argv[5 + i] = paths[i];
	argv[5 + NMIXED] = NULL;
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	assert_int_equal(run_to(argv, out, err), 0);
	got = tu_read_file(out, NULL);
	said = tu_read_file(err, NULL);
	assert_string_equal(one, got);
	assert_true(tool_has(said, "the MPI plugin (libringtrace-tools-mpi.so) is not there"));
	free(got);
	free(said);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	assert_int_equal(run_to(argv, out, err), 0);
	got = tu_read_file(out, NULL);
	said = tu_read_file(err, NULL);
	assert_string_equal(got, "");
	assert_string_equal(said, "");
	free(got);
	free(said);
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("OMPI_COMM_WORLD_RANK");
	free(one);
	unlink(bin);
	rmdir(dir);
	unlink(out);
	unlink(err);
	for (int i = 0; i < NMIXED; i++)
		unlink(paths[i]);
}

/* Under mpirun -np 2 and 3 the files are split over the ranks and reduced on rank 0,
 * which alone prints: the same document as one process. */
static void same_output_under_mpirun(void **state)
{
#ifdef RTR_MPIEXEC
	char paths[NMIXED][4096], out[4096];
	static const char *const json[] = {"--json", "--top", "0", NULL};
	char *one, *diff;
	struct tool_run r;
	const char *da[32] = {"diff", "--json", "--top", "0"};
	int n = 4;

	(void)state;
	write_mixed(paths);
	one = mixed_output(paths, "1", json);
	for (int i = 0; i < NMIXED; i++) {
		if (i == NMIXED / 2)
			da[n++] = "--";
		da[n++] = paths[i];
	}
	tool_runv(&r, NULL, NULL, da);
	assert_int_equal(r.status, 0);
	diff = strdup(r.out);
	tool_run_free(&r);
	snprintf(out, sizeof(out), "%s", tool_tmp("mpirun.out"));
	for (int np = 2; np <= 3; np++) {
		char *got;

		assert_int_equal(mpirun_stats(np, out, paths, false), 0);
		got = tu_read_file(out, NULL);
		assert_string_equal(one, got);
		free(got);
		/* diff: each side is a gather of its own */
		assert_int_equal(mpirun_stats(np, out, paths, true), 0);
		got = tu_read_file(out, NULL);
		assert_string_equal(diff, got);
		free(got);
	}
	free(diff);
	free(one);
	unlink(out);
	for (int i = 0; i < NMIXED; i++)
		unlink(paths[i]);
#else
	(void)state;
	skip(); /* no MPI, or a sanitizer build */
#endif
}

/* --------------------------------------------------------- job profiles */

static const char job_profile[] =
	"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"job\",\"pid\":null,"
	"\"rank\":null,\"world\":2,\"start_ns\":0,\"end_ns\":1000000,\"final\":true,"
	"\"reason\":\"finalize\",\"events\":500,\"dropped\":4,\"depth_limit\":64,\"deeper\":2,"
	"\"ranks\":[{\"rank\":0,\"host\":\"a\",\"pid\":1,\"events\":250,\"dropped\":4,"
	"\"start_ns\":0,\"end_ns\":1000000},{\"rank\":1,\"host\":\"b\",\"pid\":2,\"events\":250,"
	"\"dropped\":0,\"start_ns\":0,\"end_ns\":1000000}],"
	"\"calls\":[{\"name\":\"main\",\"cat\":\"app\",\"n\":2,\"t\":1800,\"s\":600,\"min\":800,"
	"\"max\":1000,\"q\":{\"v\":[800,1000]},\"r\":{\"min\":800,\"mean\":900,\"max\":1000,"
	"\"max_rank\":1,\"with\":2,\"imbalance\":1.11},\"calls\":[{\"name\":\"MPI_Barrier\","
	"\"cat\":\"mpi\",\"n\":3,\"t\":1200,\"s\":1200,\"min\":100,\"max\":700,"
	"\"q\":{\"v\":[100,400,700]},\"r\":{\"min\":500,\"mean\":600,\"max\":700,\"max_rank\":0,"
	"\"with\":2,\"imbalance\":1.17}}]}],"
	"\"counters\":[{\"tid\":0,\"cat\":\"mem\",\"name\":\"rss\",\"samples\":4,\"min\":2,"
	"\"max\":8,\"mean\":5,\"last\":8}]}";

static void job_profile_has_calls_but_no_threads(void **state)
{
	const char *path = tool_tmp("job.json");
	yajl_val doc, rows;
	struct tool_run r;

	(void)state;
	tool_write(path, job_profile, sizeof(job_profile) - 1);
	{
		const char *a[] = {"stats", "--json", path, NULL};

		doc = stats_json(a);
	}
	rows = jt_array(jt_at(doc, "slices"), "rows");
	assert_int_equal(rows->u.array.len, 2);
	assert_int_equal(jt_int(jt_row(rows, "main", NULL), "total_ns"), 1800);
	assert_int_equal(jt_int(jt_row(rows, "main", NULL), "self_ns"), 600);
	assert_int_equal(jt_int(jt_row(rows, "MPI_Barrier", NULL), "count"), 3);
	assert_int_equal(jt_int(jt_row(rows, "MPI_Barrier", NULL), "p50_ns"), 400);
	assert_int_equal(jt_int(jt_at(doc, "recorder"), "dropped"), 4);
	assert_int_equal(jt_int(doc, "thread_count"), 0);
	assert_int_equal(jt_array(doc, "warnings")->u.array.len, 2); /* deeper, job */
	yajl_tree_free(doc);
	tool_run(&r, NULL, "stats", "--by", "thread", path, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "is a job profile"));
	assert_true(tool_has(r.out, "no rows --by thread"));
	assert_true(tool_has(r.out, "0 threads"));
	tool_run_free(&r);
	unlink(path);
}

/* A call path of 2 or 3 slices without "q" (the recorder leaves it out): its values
 * are min and max, and t - min - max. */
static void left_out_sketch_reads_as_its_values(void **state)
{
	static const char text[] =
		"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
		"\"pid\":1,\"threads\":[{\"tid\":2,\"calls\":["
		"{\"name\":\"two\",\"n\":2,\"t\":900,\"s\":900,\"min\":300,\"max\":600},"
		"{\"name\":\"three\",\"n\":3,\"t\":1000,\"s\":1000,\"min\":100,\"max\":700}]}]}";
	const char *path = tool_tmp("left_out.json");
	const char *a[] = {"stats", "--json", path, NULL};
	yajl_val doc, rows, row;

	(void)state;
	tool_write(path, text, sizeof(text) - 1);
	doc = stats_json(a);
	rows = jt_array(jt_at(doc, "slices"), "rows");
	row = jt_row(rows, "two", NULL);
	assert_int_equal(jt_int(row, "count"), 2);
	assert_int_equal(jt_int(row, "min_ns"), 300);
	assert_int_equal(jt_int(row, "p50_ns"), 300);
	assert_int_equal(jt_int(row, "max_ns"), 600);
	row = jt_row(rows, "three", NULL);
	assert_int_equal(jt_int(row, "count"), 3);
	assert_int_equal(jt_int(row, "p50_ns"), 200); /* 100, 200, 700 */
	assert_int_equal(jt_int(row, "max_ns"), 700);
	yajl_tree_free(doc);
	unlink(path);
}

/* ------------------------------------------------------ hostile profiles */

#define HEAD                                                                          \
	"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\"," \
	"\"pid\":1,\"threads\":[{\"tid\":2,\"calls\":["
#define TAIL "]}]}"

static void hostile_profiles_are_refused_with_a_message(void **state)
{
	static const struct {
		const char *text, *says;
	} cases[] = {
		{"{\"schema_version\":2,\"type\":\"ringtrace-profile\",\"scope\":\"process\"}",
		 "schema_version 2"},
		{"{\"schema_version\":1,\"type\":\"ringtrace-profile\"}", "scope"},
		{HEAD "{\"name\":\"a\",\"n\":-1,\"t\":1,\"s\":1,\"min\":1,\"max\":1}" TAIL,
		 "whole number"},
		{HEAD "{\"name\":\"a\",\"n\":2,\"t\":1,\"s\":5,\"min\":1,\"max\":1}" TAIL,
		 "self over total"},
		{HEAD "{\"name\":\"a\",\"n\":3,\"t\":9,\"s\":9,\"min\":1,\"max\":5,"
		      "\"q\":{\"v\":[1,5]}}" TAIL,
		 "holds 2 values"},
		{HEAD "{\"name\":\"a\",\"n\":4,\"t\":9,\"s\":9,\"min\":1,\"max\":5}" TAIL,
		 "without its sketch"},
		/* left out at n <= 3, the values are min, max and t - min - max: 14 > max */
		{HEAD "{\"name\":\"a\",\"n\":3,\"t\":20,\"s\":9,\"min\":1,\"max\":5}" TAIL,
		 "disagree"},
		{HEAD "{\"name\":\"a\",\"n\":9,\"t\":9,\"s\":9,\"min\":1,\"max\":5,"
		      "\"q\":{\"z\":0,\"i\":2218,\"b\":[4,5]}}" TAIL,
		 "do not fit"},
		{HEAD "{\"name\":\"a\",\"n\":9,\"t\":9,\"s\":9,\"min\":1,\"max\":5,"
		      "\"q\":{\"z\":0,\"i\":\"x\",\"b\":[9]}}" TAIL,
		 "\"i\""},
		{HEAD "{\"n\":1,\"t\":1,\"s\":1,\"min\":1,\"max\":1}" TAIL, "\"name\""},
		{HEAD "7" TAIL, "not an object"},
		{"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
		 "\"threads\":{}}",
		 "not an array"},
	};
	const char *path = tool_tmp("bad.json");
	struct tool_run r;
	struct buf deep = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tool_write(path, cases[i].text, strlen(cases[i].text));
		tool_run(&r, NULL, "stats", path, NULL);
		if (r.status != 2 || !tool_has(r.err, "profile: ") ||
		    !tool_has(r.err, cases[i].says) || r.out[0] != '\0')
			fail_msg("case %zu: status %d\nstdout: %s\nstderr: %s", i, r.status, r.out,
				 r.err);
		tool_run_free(&r);
	}
	/* call paths nested past the bound (within the reader's) */
	put(&deep, HEAD);
	for (int i = 0; i < PROFILE_MAX_DEPTH + 10; i++)
		put(&deep,
		    "{\"name\":\"a\",\"n\":1,\"t\":1,\"s\":0,\"min\":1,\"max\":1,\"calls\":[");
	for (int i = 0; i < PROFILE_MAX_DEPTH + 10; i++)
		put(&deep, "]}");
	put(&deep, TAIL);
	tool_write(path, deep.p, deep.len);
	tool_run(&r, NULL, "stats", path, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "nest deeper than"));
	tool_run_free(&r);
	buf_free(&deep);
	unlink(path);
}

/* --------------------------------------------------------- the sketch */

static void sketch_json_has_both_forms_and_round_trips(void **state)
{
	struct rtr__sketch s, back;
	char text[RTR__SKETCH_JSON_MAX + 1], small[8];
	uint64_t counts[RTR__SKETCH_BUCKETS];
	yajl_val doc, b;

	(void)state;
	rtr__sketch_init(&s);
	assert_int_equal(rtr__sketch_add(&s, 5), 0);
	assert_int_equal(rtr__sketch_add(&s, 0), 0);
	assert_int_equal(rtr__sketch_json(&s, text, sizeof(text)), 11);
	assert_string_equal(text, "{\"v\":[5,0]}");
	/* a short buffer: the whole length, what fits, NUL-terminated */
	assert_int_equal(rtr__sketch_json(&s, small, sizeof(small)), 11);
	assert_string_equal(small, "{\"v\":[5");
	for (int i = 0; i < 9; i++) /* 9 ones: bucket 0 */
		assert_int_equal(rtr__sketch_add(&s, 1), 0);
	assert_int_equal(rtr__sketch_add(&s, 1), 0);
	assert_int_equal(rtr__sketch_add(&s, 3), 0);
	rtr__sketch_json(&s, text, sizeof(text));
	/* 0 (z), 1 x10 (bucket 0), 3 (bucket 55), 5 (bucket 81) */
	doc = jt_parse(text, "sketch");
	b = jt_array(doc, "b");
	assert_int_equal(jt_int(doc, "z"), 1);
	assert_int_equal(jt_int(doc, "i"), 0);
	assert_int_equal(b->u.array.len, 82);
	assert_int_equal(YAJL_GET_INTEGER(b->u.array.values[0]), 10);
	assert_int_equal(YAJL_GET_INTEGER(b->u.array.values[1]), 0);
	assert_int_equal(YAJL_GET_INTEGER(b->u.array.values[55]), 1);
	assert_int_equal(YAJL_GET_INTEGER(b->u.array.values[81]), 1);
	yajl_tree_free(doc);
	rtr__sketch_free(&s);

	/* a wide sample: the buckets read back give the same quantiles */
	rtr__sketch_init(&s);
	for (uint64_t v = 0; v < 5000; v++)
		assert_int_equal(rtr__sketch_add(&s, (v * 7919) % 100000), 0);
	assert_true(rtr__sketch_json(&s, text, sizeof(text)) < sizeof(text));
	doc = jt_parse(text, "sketch");
	b = jt_array(doc, "b");
	for (size_t i = 0; i < b->u.array.len; i++)
		counts[i] = (uint64_t)YAJL_GET_INTEGER(b->u.array.values[i]);
	rtr__sketch_init(&back);
	assert_int_equal(rtr__sketch_load(&back, (uint64_t)jt_int(doc, "z"),
					  (int32_t)jt_int(doc, "i"), counts,
					  (uint32_t)b->u.array.len, s.min, s.max),
			 0);
	assert_int_equal(back.count, s.count);
	for (unsigned q = 0; q <= 10000; q += 250)
		assert_int_equal(rtr__sketch_quantile(&back, q), rtr__sketch_quantile(&s, q));
	yajl_tree_free(doc);
	rtr__sketch_free(&back);
	rtr__sketch_free(&s);

	/* what does not fit is refused, the sketch left empty */
	rtr__sketch_init(&back);
	counts[0] = 1;
	assert_int_equal(rtr__sketch_load(&back, 0, RTR__SKETCH_BUCKETS, counts, 1, 1, 1), -2);
	assert_int_equal(rtr__sketch_load(&back, 0, 0, counts, 1, 5, 1), -2);
	assert_int_equal(rtr__sketch_load(&back, 1, 0, counts, 1, 3, 9), -2); /* zeros, min 3 */
	assert_int_equal(rtr__sketch_load(&back, 0, 0, counts, 1, 0, 0), -2); /* max 0 */
	counts[1] = UINT64_MAX;
	assert_int_equal(rtr__sketch_load(&back, 0, 0, counts, 2, 1, 2), -2); /* overflow */
	assert_int_equal(back.count, 0);
	assert_null(back.bins);
}

/* ------------------------------------------------------ the sum as bytes */

static void sum_bytes_round_trip_and_refuse_truncation(void **state)
{
	char paths[NMIXED][4096];
	const char *p[NMIXED];
	struct tally_options opt = {.by = BY_THREAD, .top = 20};
	struct tally_sum sum, back;
	struct buf one = {0}, two = {0};

	(void)state;
	write_mixed(paths);
	for (int i = 0; i < NMIXED; i++)
		p[i] = paths[i];
	tally_sum_init(&sum, opt.by);
	assert_int_equal(tally_inputs_read(&sum, &opt, "test", p, NMIXED, 2), SPREAD_ROOT);
	assert_int_equal(sum.files, NMIXED);
	assert_true(sum.rows.count > 0);
	assert_int_equal(tally_sum_pack(&sum, &one), 0);
	tally_sum_init(&back, opt.by);
	assert_int_equal(tally_sum_unpack(&back, one.p, one.len), 0);
	assert_int_equal(tally_sum_pack(&back, &two), 0);
	assert_int_equal(one.len, two.len);
	assert_memory_equal(one.p, two.p, one.len);
	assert_string_equal(tally_sum_file_name(&back, 3), paths[3]);
	tally_sum_destroy(&back);
	/* every cut, and a wrong --by, is refused */
	for (size_t cut = 0; cut < one.len; cut += 1 + cut / 16) {
		tally_sum_init(&back, opt.by);
		assert_int_not_equal(tally_sum_unpack(&back, one.p, cut), 0);
		tally_sum_destroy(&back);
	}
	tally_sum_init(&back, BY_NAME);
	assert_int_equal(tally_sum_unpack(&back, one.p, one.len), -2);
	tally_sum_destroy(&back);
	buf_free(&one);
	buf_free(&two);
	tally_sum_destroy(&sum);
	for (int i = 0; i < NMIXED; i++)
		unlink(paths[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sketch_json_has_both_forms_and_round_trips),
		cmocka_unit_test(profile_reads_as_its_trace),
		cmocka_unit_test(diff_reads_profiles_on_either_side),
		cmocka_unit_test(job_profile_has_calls_but_no_threads),
		cmocka_unit_test(left_out_sketch_reads_as_its_values),
		cmocka_unit_test(hostile_profiles_are_refused_with_a_message),
		cmocka_unit_test(stats_of_files_is_stats_of_their_concatenation),
		cmocka_unit_test(same_output_at_every_jobs),
		cmocka_unit_test(same_output_under_mpirun),
		cmocka_unit_test(launcher_without_plugin_reads_on_rank_zero),
		cmocka_unit_test(sum_bytes_round_trip_and_refuse_truncation),
	};

	return cmocka_run_group_tests_name("tools_scale", tests, NULL, NULL);
}
