/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-omp, the OMPT tool: progs/omp_prog.c (built with clang -fopenmp, so
 * with LLVM's runtime) run with OMP_TOOL_LIBRARIES naming the tool, its trace read
 * back: every construct the program ran is a slice with its name, on its thread,
 * nested where it ran, as many as the program made; task flows go from the creating
 * thread to the slice that ran the task; nothing is left open. A construct's `code`
 * is its return address in hex and, with libdw, its `src` the "file:line" of its
 * pragma, which the program marks with a comment "src: <what>"; without libdw, or
 * for a program without debug information, there is no `src`.
 */
#include "child.h"
#include "pf_read.h"
#include "test_util.h"

#include "omp/ompt_sites.h"
#include "writer/args.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* What progs/omp_prog.c does. */
#define OUTER  2
#define INNER  2
#define TEAM   4
#define LOOP_N 1000
#define TASKS  8

/* Runs prog with the tool and env, tracing into path; its stderr into err. */
static void spawn(const char *prog, const char *env, const char *path, const char *name, char *err,
		  size_t err_size)
{
	char errpath[512];

	tu_own_file(errpath, sizeof(errpath), "omp", name, ".err");
	pid_t pid = tu_fork();
	if (pid == 0) {
		setenv("OMP_TOOL_LIBRARIES", RTR_TEST_LIBOMP, 1);
		setenv("RINGTRACE_FILE", path, 1);
		if (env != NULL)
			putenv((char *)env);
		if (freopen(errpath, "w", stderr) == NULL)
			_exit(126);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	FILE *f = fopen(errpath, "r");
	assert_non_null(f);
	size_t n = fread(err, 1, err_size - 1, f);
	err[n] = '\0';
	fclose(f);
}

static void run(const char *prog, const char *env, const char *name, struct tt_trace *t, char *err,
		size_t err_size)
{
	char path[512];

	tu_own_file(path, sizeof(path), "omp", name, ".json");
	spawn(prog, env, path, name, err, err_size);
	if (tt_load(path, 0, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	assert_string_equal(tu_end_marker(t)->name, "ringtrace: end");
}

static void run_prog(const char *env, const char *name, struct tt_trace *t, char *err,
		     size_t err_size)
{
	run(RTR_TEST_OMP_PROG, env, name, t, err, err_size);
}

/* The line of progs/omp_prog.c marked "src: <what>". */
static int marked_line(const char *what)
{
	char marker[64], buf[512];
	int n = 0;

	snprintf(marker, sizeof(marker), "/* src: %s */", what);
	FILE *f = fopen(RTR_TEST_OMP_SRC, "r");
	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f) != NULL) {
		n++;
		if (strstr(buf, marker) != NULL) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no \"%s\" in %s", marker, RTR_TEST_OMP_SRC);
	return 0;
}

/* Whether a "src" value is "<dir>/omp_prog.c:<line>" with the line marked `what`. */
static int src_is(const char *src, const char *what)
{
	const char *base = strrchr(src, '/');
	char want[32];

	base = base != NULL ? base + 1 : src;
	snprintf(want, sizeof(want), "omp_prog.c:%d", marked_line(what));
	return strcmp(base, want) == 0;
}

/* e's code is a return address in hex; its src the line marked `what` (one of them,
 * `|`-separated) when lines are expected, else absent. */
static void expect_code(const struct tt_event *e, const char *what, int lines)
{
	const struct tt_arg *code = tt_arg(e, "code"), *src = tt_arg(e, "src");
	char *end;

	if (code == NULL)
		fail_msg("%s at line %zu: no code", e->name, e->line);
	assert_int_equal(code->type, TT_STRING);
	assert_int_equal(strncmp(code->s, "0x", 2), 0);
	assert_true(strtoull(code->s + 2, &end, 16) > 0 && *end == '\0');
	if (!lines) {
		if (src != NULL)
			fail_msg("%s at line %zu: src %s where none is known", e->name, e->line,
				 src->s);
		return;
	}
	if (src == NULL)
		fail_msg("%s at line %zu: no src", e->name, e->line);
	assert_int_equal(src->type, TT_STRING);
	char alts[128];
	snprintf(alts, sizeof(alts), "%s", what);
	for (char *w = strtok(alts, "|"); w != NULL; w = strtok(NULL, "|"))
		if (src_is(src->s, w))
			return;
	fail_msg("%s at line %zu: src %s, not the line of \"src: %s\"", e->name, e->line, src->s,
		 what);
}

#if defined(RTR_TEST_HAVE_LIBDW)
#define LINES 1
#else
#define LINES 0 /* built without libdw: no src */
#endif

static int is_omp(const struct tt_event *e, const char *ph, const char *name)
{
	return tu_is(e->cat, "omp") && strcmp(e->ph, ph) == 0 && tu_is(e->name, name);
}

static size_t count(const struct tt_trace *t, const char *ph, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += is_omp(&t->ev[i], ph, name);
	return n;
}

static int encloses(const struct tt_event *outer, const struct tt_event *inner)
{
	return outer != inner && outer->tid == inner->tid && outer->ts_ns <= inner->ts_ns &&
	       inner->ts_ns + inner->dur_ns <= outer->ts_ns + outer->dur_ns;
}

/* The innermost slice named `name` on e's thread that holds time ts, or NULL. */
static const struct tt_event *around(const struct tt_trace *t, const char *name, int64_t tid,
				     uint64_t ts)
{
	const struct tt_event *best = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *s = &t->ev[i];
		if (is_omp(s, "X", name) && s->tid == tid && s->ts_ns <= ts &&
		    ts <= s->ts_ns + s->dur_ns && (best == NULL || s->dur_ns < best->dur_ns))
			best = s;
	}
	return best;
}

static void every_enclosed(const struct tt_trace *t, const char *inner, const char *outer)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!is_omp(e, "X", inner))
			continue;
		const struct tt_event *o = around(t, outer, e->tid, e->ts_ns);
		if (o == NULL || !encloses(o, e))
			fail_msg("%s at line %zu is not inside a %s", inner, e->line, outer);
	}
}

static void check_regions(const struct tt_trace *t)
{
	/* the outer region, its two nested ones, the team of TEAM */
	assert_int_equal(count(t, "X", "omp parallel"), 1 + OUTER + 1);
	assert_int_equal(count(t, "X", "omp implicit task"), OUTER + OUTER * INNER + TEAM);
	size_t nested = 0, team_tasks = 0;
	int64_t team_tid[TEAM];
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (is_omp(e, "X", "omp parallel")) {
			int64_t req = tu_arg_int(e, "requested");
			assert_int_equal(tu_arg_int(e, "team_size"), req);
			assert_true(req == OUTER || req == INNER || req == TEAM);
			const struct tt_arg *code = tt_arg(e, "code");
			assert_non_null(code);
			assert_int_equal(strncmp(code->s, "0x", 2), 0);
			/* a nested region runs inside an implicit task of the outer team */
			const struct tt_event *o = around(t, "omp implicit task", e->tid, e->ts_ns);
			int in_team = o != NULL && encloses(o, e);
			if (in_team) {
				assert_int_equal(tu_arg_int(o, "team_size"), OUTER);
				nested++;
			}
#if defined(RTR_TEST_HAVE_SYMTAB)
			/* named from the symbol table: a nested region's code is in the outer
			 * region's body, which the compiler outlined */
			const struct tt_arg *fn = tt_arg(e, "function");
			assert_non_null(fn);
			if (in_team)
				assert_int_equal(strncmp(fn->s, ".omp_outlined.", 14), 0);
			else
				assert_string_equal(fn->s, "main");
#endif
		}
		if (is_omp(e, "X", "omp implicit task") && tu_arg_int(e, "team_size") == TEAM) {
			int64_t index = tu_arg_int(e, "index");
			assert_true(index >= 0 && index < TEAM);
			team_tid[index] = e->tid;
			team_tasks++;
		}
	}
	assert_int_equal(nested, OUTER);
	assert_int_equal(team_tasks, TEAM);
	for (int a = 0; a < TEAM; a++)
		for (int b = a + 1; b < TEAM; b++)
			assert_true(team_tid[a] != team_tid[b]);
	/* thread 0 of a team is the thread that met the region: its implicit task is
	 * inside that thread's "omp parallel" slice, with the same team size */
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!is_omp(e, "X", "omp implicit task") || tu_arg_int(e, "index") != 0)
			continue;
		const struct tt_event *p = around(t, "omp parallel", e->tid, e->ts_ns);
		assert_non_null(p);
		assert_true(encloses(p, e));
		assert_int_equal(tu_arg_int(p, "team_size"), tu_arg_int(e, "team_size"));
	}
}

/* The marker of the construct of an omp slice or instant that has a code, or NULL
 * for one that has none. */
static const char *construct_of(const struct tt_trace *t, const struct tt_event *e)
{
	static const char *const marks[][2] = {
		{"omp loop", "for"},
		{"omp barrier", "barrier"},
		{"omp single", "single"},
		{"omp taskwait", "taskwait"},
		{"omp task create", "task"},
		{"omp critical wait", "critical"},
		/* a region's end, a loop's, a single's; a worker's at a region's end has
		 * no code ("?": the runtime gives none) */
		{"omp implicit barrier", "?outer|inner|team|for|single"},
	};
	if (is_omp(e, "X", "omp parallel")) {
		const struct tt_event *o = around(t, "omp implicit task", e->tid, e->ts_ns);
		if (o != NULL && encloses(o, e))
			return "inner";
		return tu_arg_int(e, "requested") == TEAM ? "team" : "outer";
	}
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (is_omp(e, "X", marks[i][0]) || is_omp(e, "i", marks[i][0]))
			return marks[i][1];
	return NULL;
}

/* Every construct with a code has it, and its src when `lines`; the others (waits,
 * implicit tasks, tasks) have neither. */
static void check_code(const struct tt_trace *t, int lines)
{
	size_t coded = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!tu_is(e->cat, "omp") || strchr("Xi", e->ph[0]) == NULL)
			continue;
		const char *what = construct_of(t, e);
		if (what == NULL) {
			assert_null(tt_arg(e, "code"));
			assert_null(tt_arg(e, "src"));
			continue;
		}
		if (what[0] == '?' && tt_arg(e, "code") == NULL) {
			assert_null(tt_arg(e, "src"));
			continue;
		}
		expect_code(e, what + (what[0] == '?'), lines);
		coded++;
	}
	/* the parallels, loops, barriers, singles, taskwait, task creations at least */
	assert_true(coded >= 1 + OUTER + 1 + 3 * TEAM + 1 + TASKS);
}

static void check_work_and_sync(const struct tt_trace *t)
{
	/* one loop slice per team thread; LLVM gives each the loop's whole count */
	assert_int_equal(count(t, "X", "omp loop"), TEAM);
	assert_int_equal(count(t, "X", "omp single"), TEAM);
	assert_int_equal(count(t, "X", "omp barrier"), TEAM);
	assert_int_equal(count(t, "X", "omp barrier wait"), TEAM);
	assert_int_equal(count(t, "X", "omp taskwait"), 1);
	size_t executors = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (is_omp(e, "X", "omp loop"))
			assert_int_equal(tu_arg_int(e, "iterations"), LOOP_N);
		if (is_omp(e, "X", "omp single"))
			executors += tt_arg(e, "executor")->b;
	}
	assert_int_equal(executors, 1);
	every_enclosed(t, "omp loop", "omp implicit task");
	every_enclosed(t, "omp single", "omp implicit task");
	every_enclosed(t, "omp barrier", "omp implicit task");
	every_enclosed(t, "omp barrier wait", "omp barrier");
	every_enclosed(t, "omp implicit barrier wait", "omp implicit barrier");
	every_enclosed(t, "omp taskwait", "omp single");
}

static void check_tasks(const struct tt_trace *t)
{
	assert_int_equal(count(t, "i", "omp task create"), TASKS);
	assert_int_equal(count(t, "X", "omp task"), TASKS);
	assert_int_equal(count(t, "s", "omp task"), TASKS);
	assert_int_equal(count(t, "f", "omp task"), TASKS);
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *s = &t->ev[i];
		if (!is_omp(s, "s", "omp task"))
			continue;
		/* created inside the single, ended inside an "omp task" slice */
		assert_non_null(around(t, "omp single", s->tid, s->ts_ns));
		size_t ends = 0;
		for (size_t j = 0; j < t->n; j++) {
			const struct tt_event *f = &t->ev[j];
			if (!is_omp(f, "f", "omp task") || strcmp(f->id, s->id) != 0)
				continue;
			ends++;
			assert_true(f->ts_ns >= s->ts_ns);
			assert_non_null(around(t, "omp task", f->tid, f->ts_ns));
		}
		assert_int_equal(ends, 1);
	}
}

static void check_threads(const struct tt_trace *t)
{
	/* every slice is whole: nothing of OpenMP left open at the end */
	for (size_t i = 0; i < t->n; i++)
		if (tu_is(t->ev[i].cat, "omp"))
			assert_true(strchr("Xisf", t->ev[i].ph[0]) != NULL);
	size_t workers = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (strcmp(e->ph, "M") != 0 || !tu_is(e->name, "thread_name"))
			continue;
		const struct tt_arg *a = tt_arg(e, "name");
		unsigned n;
		if (sscanf(a->s, "OpenMP thread %u", &n) == 1) {
			assert_true(n >= 1);
			workers++;
		}
	}
	assert_true(workers >= TEAM - 1);
}

static void test_constructs(void **state)
{
	(void)state;
	struct tt_trace t;
	char err[1024];
	run_prog(NULL, "constructs", &t, err, sizeof(err));
	assert_string_equal(err, "");
	check_regions(&t);
	check_work_and_sync(&t);
	check_tasks(&t);
	check_threads(&t);
	check_code(&t, LINES);
	assert_int_equal(count(&t, "X", "omp critical wait"), 0);
	tt_free(&t);
}

/* The same program built without -g: each code is there, and no src (not a wrong one). */
static void test_no_debug_info_no_src(void **state)
{
	(void)state;
	struct tt_trace t;
	char err[1024];
	run(RTR_TEST_OMP_PROG_NODEBUG, NULL, "nodebug", &t, err, sizeof(err));
	assert_string_equal(err, "");
	check_regions(&t);
	check_code(&t, 0);
	tt_free(&t);
}

/* Perfetto: the code and src as string annotations, "src" right after "code". */
static void test_perfetto_code_and_src(void **state)
{
	(void)state;
	char path[512], err[1024];
	struct pf_trace t;
	size_t parallels = 0, loops = 0;

	tu_own_file(path, sizeof(path), "omp", "perfetto", ".pftrace");
	spawn(RTR_TEST_OMP_PROG, NULL, path, "perfetto", err, sizeof(err));
	assert_string_equal(err, "");
	if (pf_read(path, &t, 0) != 0)
		fail_msg("%s", t.error);
	for (size_t i = 0; i < t.nevents; i++) {
		const struct pf_event *e = &t.events[i];
		const struct pf_ann *code = pf_ann(e, "code"), *src = pf_ann(e, "src");
		int parallel = strcmp(e->name, "omp parallel") == 0;
		int loop = strcmp(e->name, "omp loop") == 0;
		if (e->type != 1 || (!parallel && !loop))
			continue;
		parallels += parallel;
		loops += loop;
		assert_non_null(code);
		assert_int_equal(code->kind, 's');
		assert_int_equal(strncmp(code->s, "0x", 2), 0);
		if (!LINES) {
			assert_null(src);
			continue;
		}
		assert_non_null(src);
		assert_int_equal(src->kind, 's');
		assert_ptr_equal(src, code + 1);
		if (loop)
			assert_true(src_is(src->s, "for"));
		else
			assert_true(src_is(src->s, "outer") || src_is(src->s, "inner") ||
				    src_is(src->s, "team"));
	}
	assert_int_equal(parallels, 1 + OUTER + 1);
	assert_int_equal(loops, TEAM);
	pf_free(&t);
}

static void test_mutex(void **state)
{
	(void)state;
	struct tt_trace t;
	char err[1024];
	run_prog("RINGTRACE_OMP_MUTEX=1", "mutex", &t, err, sizeof(err));
	assert_string_equal(err, "");
	assert_int_equal(count(&t, "X", "omp critical wait"), TEAM);
	int64_t tids[TEAM];
	size_t n = 0;
	for (size_t i = 0; i < t.n; i++)
		if (is_omp(&t.ev[i], "X", "omp critical wait"))
			tids[n++] = t.ev[i].tid;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			assert_true(tids[a] != tids[b]);
	every_enclosed(&t, "omp critical wait", "omp implicit task");
	check_regions(&t);
	check_code(&t, LINES);
	tt_free(&t);
}

/* The last name of thread tid in t, or NULL. */
static const char *last_name(const struct tt_trace *t, int64_t tid)
{
	const char *name = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (strcmp(e->ph, "M") == 0 && tu_is(e->name, "thread_name") && e->tid == tid)
			name = tt_arg(e, "name")->s;
	}
	return name;
}

/* With the ITT collector too: LLVM's runtime names its threads through ITT as it
 * starts ("OMP Primary Thread #0" on the program's thread, "OMP Worker Thread #N"),
 * but a name the program gave first stays: the main thread, named "omp main" through
 * ITT before the runtime started, keeps it; the workers end named by the tool. */
static void test_itt_runtime_names_keep_the_programs(void **state)
{
	(void)state;
	struct tt_trace t;
	char err[1024];
	run_prog("INTEL_LIBITTNOTIFY64=" RTR_TEST_LIBITT, "itt", &t, err, sizeof(err));
	assert_string_equal(err, "");
	check_regions(&t);
	int64_t main_tid = t.ev[0].pid; /* the program's initial thread */
	assert_string_equal(last_name(&t, main_tid), "omp main");
	size_t runtime_names = 0, workers = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (strcmp(e->ph, "M") != 0 || !tu_is(e->name, "thread_name"))
			continue;
		const char *name = tt_arg(e, "name")->s;
		assert_true(strncmp(name, "OMP Primary Thread", 18) != 0);
		runtime_names += strncmp(name, "OMP Worker Thread #", 19) == 0;
		unsigned n;
		if (e->tid != main_tid && last_name(&t, e->tid) == name) {
			assert_int_equal(sscanf(name, "OpenMP thread %u", &n), 1);
			workers++;
		}
	}
	assert_true(runtime_names >= TEAM - 1); /* the runtime speaks ITT here */
	assert_true(workers >= TEAM - 1);
	tt_free(&t);
}

/* Loaded where no runtime with OMPT is: one line on stderr says so. */
static void test_no_ompt_runtime(void **state)
{
	(void)state;
	char errpath[512];
	tu_own_file(errpath, sizeof(errpath), "omp", "no_runtime", ".err");
	pid_t pid = tu_fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", RTR_TEST_LIBOMP, 1);
		if (freopen(errpath, "w", stderr) == NULL)
			_exit(126);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	char err[1024];
	FILE *f = fopen(errpath, "r");
	assert_non_null(f);
	size_t n = fread(err, 1, sizeof(err) - 1, f);
	err[n] = '\0';
	fclose(f);
	assert_string_equal(err, "ringtrace: no OpenMP runtime with OMPT (LLVM's libomp) is "
				 "loaded; libringtrace-omp records nothing of OpenMP\n");
}

/* The sites themselves (src/omp/ompt_sites.c, built into this test, without the
 * symbol table: no function): one per kind, key and key2, found again; their
 * arguments encoded as the writer reads them; NULL once the arena is full, the known
 * ones still found. */
static void test_sites(void **state)
{
	const char *key;
	(void)state;

	const struct rtr__omp_site *p = rtr__omp_site(RTR_OMP_SITE_PARALLEL, 0x401234, 4);
	assert_non_null(p);
	assert_ptr_equal(rtr__omp_site(RTR_OMP_SITE_PARALLEL, 0x401234, 4), p);
	assert_true(rtr__omp_site(RTR_OMP_SITE_PARALLEL, 0x401234, 2) != p);
	assert_true(rtr__omp_site(RTR_OMP_SITE_IMPLICIT, 0x401234, 4) != p);
	assert_ptr_equal(p->sa.site.name, rtr__omp_parallel);
	assert_ptr_equal(p->sa.site.cat, rtr__omp_cat);
	struct rtr__args a = {p->sa.args, p->sa.nargs, p->sa.len};
	assert_int_equal(a.n, 2); /* no symbol table here: no function */
	assert_int_equal(rtr__args_get(&a, 0, &key), 4);
	assert_string_equal(key, "requested");
	assert_int_equal(rtr__args_get(&a, 1, &key), 0x401234);
	assert_ptr_equal(key, rtr__arg_key_code);

	const struct rtr__omp_site *t = rtr__omp_site(RTR_OMP_SITE_IMPLICIT, 3, 8);
	assert_ptr_equal(t->sa.site.name, rtr__omp_implicit_task);
	struct rtr__args b = {t->sa.args, t->sa.nargs, t->sa.len};
	assert_int_equal(b.n, 2);
	assert_int_equal(rtr__args_get(&b, 0, &key), 3);
	assert_string_equal(key, "index");
	assert_int_equal(rtr__args_get(&b, 1, &key), 8);
	assert_string_equal(key, "team_size");

	/* past every slot of the recent table and the arena's room: NULL, then no more */
	uint32_t made = 0;
	while (made < (1u << 16) && rtr__omp_site(RTR_OMP_SITE_IMPLICIT, made, 1000) != NULL)
		made++;
	assert_true(made > 1000 && made < (1u << 16));
	assert_null(rtr__omp_site(RTR_OMP_SITE_PARALLEL, 0x999999, 1));
	assert_ptr_equal(rtr__omp_site(RTR_OMP_SITE_PARALLEL, 0x401234, 4), p);
	assert_ptr_equal(rtr__omp_site(RTR_OMP_SITE_IMPLICIT, 3, 8), t);
	assert_int_equal(rtr__omp_site(RTR_OMP_SITE_IMPLICIT, made - 1, 1000)->key, made - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_constructs, tu_teardown),
		cmocka_unit_test_teardown(test_mutex, tu_teardown),
		cmocka_unit_test_teardown(test_no_debug_info_no_src, tu_teardown),
		cmocka_unit_test_teardown(test_perfetto_code_and_src, tu_teardown),
		cmocka_unit_test_teardown(test_itt_runtime_names_keep_the_programs, tu_teardown),
		cmocka_unit_test_teardown(test_no_ompt_runtime, tu_teardown),
		cmocka_unit_test(test_sites),
	};
	return cmocka_run_group_tests_name("omp", tests, NULL, NULL);
}
