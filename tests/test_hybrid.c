/* SPDX-License-Identifier: MIT */
/*
 * Every module in one process: tests/progs/hybrid_prog.c (MPI + OpenMP that also
 * speaks NVTX, ITT and Kokkos' tools interface, built with -finstrument-functions) under
 *
 *	mpirun -np 4 ringtrace record --mpi --omp --nvtx --itt --kokkos --instrument
 *		-o DIR/hybrid-%r.json -- hybrid_prog
 *
 * record says where each rank's trace is; each is complete, drops nothing, and holds
 * every slice the program caused, with its name, on its thread, nested where it ran,
 * as many as the program made: the MPI calls and the messages between the ranks, the
 * OpenMP regions, teams, loops, barriers, criticals and tasks, the NVTX ranges, the
 * ITT tasks, the Kokkos kernels, regions, fences and deep copies, the program's own
 * functions; OpenMP's threads are named; the viewers' rules hold (ringtrace check).
 * The four merge into one file that loads, with every event of theirs.
 *
 * Each part of the program's step (see hybrid_prog.c) has its check_*() here, called
 * from check_rank().
 */
#include "child.h"
#include "hybrid_slices.h"
#include "progs/hybrid_shape.h" /* what each rank of progs/hybrid_prog.c does */
#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#define RANKS	  4
#define TIMEOUT_S 60

static struct rank ranks[RANKS];

/* ------------------------------------------------------------------ MPI */

static void check_mpi(const struct rank *k, int r)
{
	static const char *const names[] = {"MPI_Init_thread", "MPI_Irecv",	"MPI_Isend",
					    "MPI_Waitall",     "MPI_Allreduce", "MPI_Finalize"};
	static const size_t want[] = {1, STEPS, STEPS, STEPS, STEPS, 1};
	size_t total = 0;

	for (size_t i = 0; i < 6; i++) {
		size_t n = count(k, "mpi", names[i]);
		if (n != want[i])
			fail_msg("rank %d: %zu %s, want %zu", r, n, names[i], want[i]);
		total += n;
	}
	int sends = 0, recvs = 0;
	for (size_t i = 0; i < k->n; i++) {
		const struct slice *s = &k->sl[i];
		if (!tu_is(s->e->cat, "mpi"))
			continue;
		total--;
		assert_int_equal(s->tid, k->main_tid); /* MPI_THREAD_FUNNELED */
		must_be_in(k, s, "function", "main");
		if (is(s->e, "mpi", "MPI_Init_thread") || is(s->e, "mpi", "MPI_Finalize"))
			continue;
		must_be_in(k, s, "function", "mpi_part");
		if (is(s->e, "mpi", "MPI_Irecv")) {
			assert_int_equal(tu_arg_int(s->e, "peer"), (r + RANKS - 1) % RANKS);
			assert_int_equal(tu_arg_int(s->e, "tag"), recvs++);
		} else if (is(s->e, "mpi", "MPI_Isend")) {
			assert_int_equal(tu_arg_int(s->e, "peer"), (r + 1) % RANKS);
			assert_int_equal(tu_arg_int(s->e, "tag"), sends++);
		}
	}
	assert_int_equal(total, 0); /* no other MPI call */
	size_t syncs = 0;
	for (size_t i = 0; i < k->t.n; i++)
		syncs += is(&k->t.ev[i], "ringtrace", "ringtrace: clock sync");
	assert_int_equal(syncs, 2); /* at MPI_Init and at MPI_Finalize */
}

/* Every message: one start on its sender, inside an MPI_Isend, one end on the rank to
 * its right, inside the MPI_Waitall that completed it. */
static void check_messages(void)
{
	size_t starts = 0;

	for (int r = 0; r < RANKS; r++) {
		const struct rank *k = &ranks[r];
		for (size_t i = 0; i < k->t.n; i++) {
			const struct tt_event *s = &k->t.ev[i];
			if (!tu_is(s->cat, "mpi") ||
			    (strcmp(s->ph, "s") != 0 && strcmp(s->ph, "f") != 0))
				continue;
			struct slice at = {s, s->tid, s->ts_ns, s->ts_ns};
			must_be_in(k, &at, "mpi", s->ph[0] == 's' ? "MPI_Isend" : "MPI_Waitall");
			if (s->ph[0] != 's')
				continue;
			starts++;
			const struct rank *to = &ranks[(r + 1) % RANKS];
			size_t ends = 0;
			for (int q = 0; q < RANKS; q++)
				for (size_t j = 0; j < ranks[q].t.n; j++) {
					const struct tt_event *f = &ranks[q].t.ev[j];
					if (strcmp(f->ph, "f") != 0 || !tu_is(f->id, s->id))
						continue;
					assert_ptr_equal(&ranks[q], to);
					ends++;
				}
			assert_int_equal(ends, 1);
		}
	}
	assert_int_equal(starts, RANKS * STEPS);
}

/* ------------------------------------------------------------------ OpenMP */

/* The implicit tasks of team size n that begin in region p (an "omp parallel" slice):
 * `teams` teams of n (p's own, or those of the regions nested in p), so n * teams tasks,
 * each index `teams` times. A team's tasks run at once, each on a thread of its own;
 * the runtime may give a worker that left one nested team to the next (so a thread
 * runs two tasks, one after the other). Into tasks. */
static void implicit_tasks(const struct rank *k, const struct slice *p, int n, int teams,
			   const struct slice **tasks)
{
	const struct slice *found[32];
	int per_index[8] = {0}, got = 0;

	size_t all = within(k, "omp", "omp implicit task", -1, p->begin, p->end, found, 32);
	for (size_t i = 0; i < all; i++) {
		if (tu_arg_int(found[i]->e, "team_size") != n)
			continue;
		int64_t index = tu_arg_int(found[i]->e, "index");
		assert_true(index >= 0 && index < n && got < n * teams);
		per_index[index]++;
		tasks[got++] = found[i];
	}
	assert_int_equal(got, n * teams);
	for (int i = 0; i < n; i++)
		assert_int_equal(per_index[i], teams);
	for (int a = 0; a < got; a++)
		for (int b = a + 1; b < got; b++)
			if (tasks[a]->tid == tasks[b]->tid &&
			    (teams == 1 ||
			     (tasks[a]->begin < tasks[b]->end && tasks[b]->begin < tasks[a]->end)))
				fail_msg(
					"lines %zu and %zu: two implicit tasks at once on a thread",
					tasks[a]->e->line, tasks[b]->e->line);
}

/* Region p's team: n threads, index 0 on p's thread inside p; into team[index]. */
static void check_team(const struct rank *k, const struct slice *p, int n,
		       const struct slice **team)
{
	const struct slice *tasks[8];

	assert_int_equal(tu_arg_int(p->e, "requested"), n);
	assert_int_equal(tu_arg_int(p->e, "team_size"), n);
	implicit_tasks(k, p, n, 1, tasks);
	for (int i = 0; i < n; i++)
		team[tu_arg_int(tasks[i]->e, "index")] = tasks[i];
	assert_int_equal(team[0]->tid, p->tid);
	assert_ptr_equal(around(k, team[0], "omp", "omp parallel"), p);
}

/* The outer region of a step: OUTER threads, each pushing "outer body" around a region
 * of INNER threads that each call leaf(). The inner teams run at once: together
 * OUTER * INNER implicit tasks on as many threads, thread 0 of each the outer thread
 * that met the inner region. */
static void check_nested(const struct rank *k, const struct slice *outer)
{
	const struct slice *team[OUTER], *inner[OUTER * INNER], *in[4];

	check_team(k, outer, OUTER, team);
	for (int o = 0; o < OUTER; o++) {
		size_t n = within(k, "omp", "omp parallel", team[o]->tid, team[o]->begin,
				  team[o]->end, in, 4);
		assert_int_equal(n, 1);
		assert_int_equal(tu_arg_int(in[0]->e, "requested"), INNER);
		assert_int_equal(tu_arg_int(in[0]->e, "team_size"), INNER);
		assert_ptr_equal(around(k, in[0], "omp", "omp implicit task"), team[o]);
		const struct slice *body = around(k, in[0], "nvtx", "outer body");
		assert_non_null(body);
		assert_ptr_equal(around(k, body, "omp", "omp implicit task"), team[o]);
	}
	implicit_tasks(k, outer, INNER, OUTER, inner);
	for (int i = 0; i < OUTER * INNER; i++) {
		const struct slice *leaf[2];
		if (tu_arg_int(inner[i]->e, "index") == 0) { /* inside the region it met */
			const struct slice *q = around(k, inner[i], "omp", "omp parallel");
			assert_non_null(q);
			assert_int_equal(tu_arg_int(q->e, "requested"), INNER);
		}
		assert_int_equal(within(k, "function", "leaf", inner[i]->tid, inner[i]->begin,
					inner[i]->end, leaf, 2),
				 1);
		assert_ptr_equal(around(k, leaf[0], "omp", "omp implicit task"), inner[i]);
	}
}

/* The team region of a step: each thread's loop, barrier, critical and single. */
static void check_worksharing(const struct rank *k, const struct slice *p)
{
	const struct slice *team[TEAM], *x[4];
	size_t executors = 0;

	check_team(k, p, TEAM, team);
	for (int i = 0; i < TEAM; i++) {
		int64_t tid = team[i]->tid;
		uint64_t from = team[i]->begin, to = team[i]->end;
		assert_int_equal(within(k, "omp", "omp loop", tid, from, to, x, 4), 1);
		assert_int_equal(tu_arg_int(x[0]->e, "iterations"), LOOP_N);
		assert_int_equal(within(k, "omp", "omp barrier", tid, from, to, x, 4), 1);
		assert_int_equal(within(k, "omp", "omp barrier wait", tid, from, to, x, 4), 1);
		must_be_in(k, x[0], "omp", "omp barrier");
		assert_int_equal(within(k, "omp", "omp critical wait", tid, from, to, x, 4), 1);
		must_be_in(k, x[0], "omp", "omp implicit task");
		assert_int_equal(within(k, "omp", "omp single", tid, from, to, x, 4), 1);
		executors += tt_arg(x[0]->e, "executor")->b;
	}
	assert_int_equal(executors, 1);
}

static void check_omp(const struct rank *k)
{
	const struct slice *all[5 * STEPS], *regions[3 * STEPS], *kk_team[KK_TEAM];
	size_t n = 0;

	/* the main thread's regions: per step the outer one (which holds the inner region
	 * the main thread, its thread 0, meets), then the team's, then the Kokkos part's
	 * (check_kokkos() checks its kernel) */
	size_t on_main =
		within(k, "omp", "omp parallel", k->main_tid, 0, UINT64_MAX, all, 5 * STEPS);
	for (size_t i = 0; i < on_main; i++)
		if (around(k, all[i], "omp", "omp parallel") == NULL) {
			assert_true(n < 3 * STEPS);
			regions[n++] = all[i];
		}
	assert_int_equal(n, 3 * STEPS);
	for (int s = 0; s < STEPS; s++) {
		must_be_in(k, regions[3 * s], "function", "omp_part");
		must_be_in(k, regions[3 * s + 1], "function", "omp_part");
		must_be_in(k, regions[3 * s + 2], "function", "kokkos_part");
		check_nested(k, regions[3 * s]);
		check_worksharing(k, regions[3 * s + 1]);
		check_team(k, regions[3 * s + 2], KK_TEAM, kk_team);
	}
	/* and nothing more than those */
	assert_int_equal(count(k, "omp", "omp parallel"), STEPS * (3 + OUTER));
	assert_int_equal(count(k, "omp", "omp implicit task"),
			 STEPS * (OUTER + OUTER * INNER + TEAM + KK_TEAM));
	assert_int_equal(count(k, "omp", "omp loop"), STEPS * TEAM);
	assert_int_equal(count(k, "omp", "omp barrier"), STEPS * TEAM);
	assert_int_equal(count(k, "omp", "omp critical wait"), STEPS * TEAM);
	assert_int_equal(count(k, "omp", "omp single"), STEPS * TEAM);
	assert_int_equal(count(k, "omp", "omp taskwait"), STEPS);
	assert_int_equal(count(k, "omp", "omp task"), STEPS * TASKS);
	/* each task: created (an instant and a flow's start), run in an "omp task" slice
	 * where its flow ends, holding its ITT task */
	size_t created = 0, flows = 0;
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *e = &k->t.ev[i];
		created += strcmp(e->ph, "i") == 0 && is(e, "omp", "omp task create");
		if (strcmp(e->ph, "s") != 0 || !is(e, "omp", "omp task"))
			continue;
		size_t ends = 0;
		for (size_t j = 0; j < k->t.n; j++) {
			const struct tt_event *f = &k->t.ev[j];
			if (strcmp(f->ph, "f") != 0 || !tu_is(f->id, e->id))
				continue;
			struct slice at = {f, f->tid, f->ts_ns, f->ts_ns};
			must_be_in(k, &at, "omp", "omp task");
			ends++;
		}
		assert_int_equal(ends, 1);
		flows++;
	}
	assert_int_equal(created, STEPS * TASKS);
	assert_int_equal(flows, STEPS * TASKS);
}

/* ------------------------------------------------------------------ NVTX, ITT, functions */

static void check_annotations(const struct rank *k)
{
	const struct slice *steps[STEPS + 1];

	assert_int_equal(within(k, "nvtx", "step", -1, 0, UINT64_MAX, steps, STEPS + 1), STEPS);
	for (int s = 0; s < STEPS; s++) {
		assert_int_equal(steps[s]->tid, k->main_tid);
		assert_int_equal(tu_arg_int(steps[s]->e, "payload"), s);
		must_be_in(k, steps[s], "function", "step");
	}
	assert_int_equal(count(k, "nvtx", "outer body"), STEPS * OUTER); /* check_nested() */
	/* "exchange": a start/end range around each step's MPI calls */
	size_t begun = 0, ended = 0;
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *b = &k->t.ev[i];
		if (!is(b, "nvtx", "exchange"))
			continue;
		assert_int_equal(b->tid, k->main_tid);
		struct slice at = {b, b->tid, b->ts_ns, b->ts_ns};
		must_be_in(k, &at, "function", "mpi_part");
		begun += strcmp(b->ph, "b") == 0;
		ended += strcmp(b->ph, "e") == 0;
		for (size_t j = 0; strcmp(b->ph, "b") == 0 && j < k->t.n; j++) {
			const struct tt_event *e = &k->t.ev[j];
			if (is(e, "nvtx", "exchange") && strcmp(e->ph, "e") == 0 &&
			    tu_is(e->id, b->id)) {
				const struct slice *calls[8];
				assert_int_equal(within(k, "mpi", "MPI_Irecv", b->tid, b->ts_ns,
							e->ts_ns, calls, 8),
						 1);
			}
		}
	}
	assert_int_equal(begun, STEPS);
	assert_int_equal(ended, STEPS);
	/* ITT: each explicit task's "tile", inside the slice that ran the task */
	assert_int_equal(count(k, "hybrid", "tile"), STEPS * TASKS);
	for (size_t i = 0; i < k->n; i++)
		if (is(k->sl[i].e, "hybrid", "tile"))
			must_be_in(k, &k->sl[i], "omp", "omp task");
}

/* ------------------------------------------------------------------ Kokkos */

/* The kokkos events by phase, none other, all on the main thread: per step 7 slices (a
 * region, a deep copy the writer may fold into an X, or not when its B and E are drained
 * apart; the kernels and the fence always X) and a counter sample; the init instant. */
static void check_kokkos_phases(const struct rank *k)
{
	size_t ph[128] = {0}, all = 0;

	for (size_t i = 0; i < k->t.n; i++)
		if (tu_is(k->t.ev[i].cat, "kokkos")) {
			assert_int_equal(k->t.ev[i].tid, k->main_tid);
			ph[(unsigned char)k->t.ev[i].ph[0] & 127]++;
			all++;
		}
	assert_int_equal(ph['X'] + ph['B'], STEPS * 7); /* the slices */
	assert_true(ph['X'] >= STEPS * 4);		/* axpy, dot, sync, team axpy */
	assert_int_equal(ph['E'], ph['B']);
	assert_int_equal(ph['C'], STEPS); /* the deep copies' bytes */
	assert_int_equal(ph['i'], 1);	  /* kokkos init */
	assert_int_equal(all, ph['X'] + ph['B'] + ph['E'] + ph['C'] + ph['i']);
}

/* Kernel or fence s: its kind, on the Serial backend's instance 0. */
static void assert_span(const struct slice *s, const char *kind)
{
	assert_string_equal(tt_arg(s->e, "kind")->s, kind);
	assert_string_equal(tt_arg(s->e, "device")->s, "Serial");
	assert_int_equal(tu_arg_int(s->e, "device_id"), 0);
}

/* One step's Kokkos part: what hybrid_prog.c's kokkos_part() reports, nested so. */
static void check_kokkos_step(const struct rank *k, const struct slice *step, int s)
{
	const struct slice *r[2], *x[2], *solve;
	int64_t tid = k->main_tid;

	assert_int_equal(within(k, "kokkos", "kokkos step", tid, step->begin, step->end, r, 2), 1);
	must_be_in(k, r[0], "function", "kokkos_part");
	assert_ptr_equal(around(k, r[0], "nvtx", "step"), step);
	assert_int_equal(within(k, "kokkos", "axpy", tid, r[0]->begin, r[0]->end, x, 2), 1);
	assert_span(x[0], "parallel_for");
	assert_ptr_equal(around(k, x[0], "kokkos", "kokkos step"), r[0]);
	assert_null(around(k, x[0], "kokkos", "solve"));
	assert_int_equal(within(k, "kokkos", "solve", tid, r[0]->begin, r[0]->end, x, 2), 1);
	solve = x[0];
	assert_ptr_equal(around(k, solve, "kokkos", "kokkos step"), r[0]);
	assert_int_equal(within(k, "kokkos", "dot", tid, solve->begin, solve->end, x, 2), 1);
	assert_span(x[0], "parallel_reduce");
	assert_ptr_equal(around(k, x[0], "kokkos", "solve"), solve);
	assert_int_equal(within(k, "kokkos", "deep copy", tid, solve->begin, solve->end, x, 2), 1);
	assert_ptr_equal(around(k, x[0], "kokkos", "solve"), solve);
	assert_string_equal(tt_arg(x[0]->e, "dst_space")->s, "Host");
	assert_string_equal(tt_arg(x[0]->e, "dst")->s, "x mirror");
	assert_string_equal(tt_arg(x[0]->e, "src_space")->s, "Host");
	assert_string_equal(tt_arg(x[0]->e, "src")->s, "x");
	assert_int_equal(tu_arg_int(x[0]->e, "bytes"), COPY_BYTES);
	/* its counter sample, as it begins: the bytes copied so far */
	size_t samples = 0;
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *c = &k->t.ev[i];
		if (strcmp(c->ph, "C") != 0 || !is(c, "kokkos", "kokkos deep copy bytes") ||
		    c->ts_ns < solve->begin || c->ts_ns > x[0]->begin)
			continue;
		assert_int_equal(c->nargs, 1);
		assert_int_equal(c->args[0].i, (s + 1) * COPY_BYTES);
		samples++;
	}
	assert_int_equal(samples, 1);
	assert_int_equal(within(k, "kokkos", "sync", tid, r[0]->begin, r[0]->end, x, 2), 1);
	assert_span(x[0], "fence");
	assert_ptr_equal(around(k, x[0], "kokkos", "kokkos step"), r[0]);
	assert_true(x[0]->begin >= solve->end);
	/* the kernel the master thread of the part's region launched, in its task 0 */
	const struct slice *f = around(k, r[0], "function", "kokkos_part");
	assert_int_equal(within(k, "kokkos", "team axpy", tid, f->begin, f->end, x, 2), 1);
	assert_span(x[0], "parallel_for");
	assert_true(x[0]->begin >= r[0]->end);
	const struct slice *task = around(k, x[0], "omp", "omp implicit task");
	assert_non_null(task);
	assert_int_equal(tu_arg_int(task->e, "index"), 0);
	assert_int_equal(tu_arg_int(task->e, "team_size"), KK_TEAM);
	assert_ptr_equal(around(k, task, "function", "kokkos_part"), f);
}

/* The tool's init, once on the main thread between MPI_Init and the first step; each
 * step's part; nothing else. */
static void check_kokkos(const struct rank *k)
{
	const struct slice *steps[STEPS], *mpi_init[2];
	size_t inits = 0;

	check_kokkos_phases(k);
	assert_int_equal(within(k, "nvtx", "step", -1, 0, UINT64_MAX, steps, STEPS), STEPS);
	assert_int_equal(within(k, "mpi", "MPI_Init_thread", -1, 0, UINT64_MAX, mpi_init, 2), 1);
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *e = &k->t.ev[i];
		if (!is(e, "kokkos", "kokkos init"))
			continue;
		assert_string_equal(e->ph, "i");
		assert_int_equal(tu_arg_int(e, "interface_version"), 20210225);
		assert_int_equal(tu_arg_int(e, "load_sequence"), 0);
		assert_int_equal(tu_arg_int(e, "devices"), 0);
		struct slice at = {e, e->tid, e->ts_ns, e->ts_ns};
		must_be_in(k, &at, "function", "main");
		assert_true(e->ts_ns >= mpi_init[0]->end && e->ts_ns <= steps[0]->begin);
		inits++;
	}
	assert_int_equal(inits, 1);
	for (int s = 0; s < STEPS; s++)
		check_kokkos_step(k, steps[s], s);
	assert_int_equal(count(k, "kokkos", "kokkos step"), STEPS);
	assert_int_equal(count(k, "kokkos", "solve"), STEPS);
	assert_int_equal(count(k, "kokkos", "axpy"), STEPS);
	assert_int_equal(count(k, "kokkos", "dot"), STEPS);
	assert_int_equal(count(k, "kokkos", "deep copy"), STEPS);
	assert_int_equal(count(k, "kokkos", "sync"), STEPS);
	assert_int_equal(count(k, "kokkos", "team axpy"), STEPS);
}

/* ------------------------------------------------------------------ functions */

/* The program's functions, and the bodies the compiler outlined for its regions and
 * tasks (".omp_outlined..N"), each inside the implicit or explicit task that ran it. */
static void check_functions(const struct rank *k)
{
	assert_int_equal(count(k, "function", "main"), 1);
	assert_int_equal(count(k, "function", "step"), STEPS);
	assert_int_equal(count(k, "function", "omp_part"), STEPS);
	assert_int_equal(count(k, "function", "mpi_part"), STEPS);
	assert_int_equal(count(k, "function", "kokkos_part"), STEPS);
	assert_int_equal(count(k, "function", "leaf"), STEPS * OUTER * INNER);
	size_t outlined = 0;
	for (size_t i = 0; i < k->n; i++) {
		const struct slice *s = &k->sl[i];
		if (!tu_is(s->e->cat, "function"))
			continue;
		if (strncmp(s->e->name, ".omp", 4) == 0) {
			if (around(k, s, "omp", "omp implicit task") == NULL)
				must_be_in(k, s, "omp", "omp task");
			outlined++;
		} else if (tu_is(s->e->name, "main")) {
			assert_int_equal(s->tid, k->main_tid);
		} else if (!tu_is(s->e->name, "leaf")) {
			must_be_in(k, s, "function", tu_is(s->e->name, "step") ? "main" : "step");
		}
	}
	assert_true(outlined >= STEPS * (OUTER + OUTER * INNER + TEAM + TASKS + KK_TEAM));
}

/* ------------------------------------------------------------------ a rank */

static void check_rank(int r)
{
	struct rank *k = &ranks[r];
	const struct tt_event *start = &k->t.ev[0], *end = tu_end_marker(&k->t);

	assert_true(k->t.complete);
	assert_string_equal(start->name, "ringtrace: start");
	assert_int_equal(tu_arg_int(start, "rank"), r);
	assert_int_equal(tu_arg_int(start, "world_size"), RANKS);
	assert_true(tt_arg(end, "final")->b);
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
	k->main_tid = start->tid; /* autostarted as the program loaded, on its thread */
	gather_slices(k);
	check_nesting(k);
	check_mpi(k, r);
	check_omp(k);
	check_annotations(k);
	check_kokkos(k);
	check_functions(k);

	/* Names: the rank's process, the program's main thread, OpenMP's workers. */
	char want[16];
	snprintf(want, sizeof(want), "rank %d", r);
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *e = &k->t.ev[i];
		if (strcmp(e->ph, "M") == 0 && tu_is(e->name, "process_name"))
			assert_string_equal(tt_arg(e, "name")->s, want);
		assert_false(strcmp(e->ph, "M") == 0 && tu_is(e->name, "process_labels"));
		assert_true(e->cat == NULL || tu_is(e->cat, "mpi") || tu_is(e->cat, "omp") ||
			    tu_is(e->cat, "nvtx") || tu_is(e->cat, "hybrid") ||
			    tu_is(e->cat, "kokkos") || tu_is(e->cat, "function") ||
			    tu_is(e->cat, "ringtrace"));
	}
	assert_string_equal(thread_name(k, k->main_tid), "hybrid main");
	unsigned numbers[64];
	size_t workers = 0;
	for (size_t i = 0; i < k->n; i++) {
		int64_t tid = k->sl[i].tid;
		int seen = tid == k->main_tid;
		for (size_t j = 0; j < i && !seen; j++)
			seen = k->sl[j].tid == tid;
		if (seen)
			continue;
		const char *name = thread_name(k, tid);
		assert_non_null(name);
		assert_true(workers < 64);
		if (sscanf(name, "OpenMP thread %u", &numbers[workers]) != 1)
			fail_msg("rank %d: thread %lld named %s", r, (long long)tid, name);
		assert_true(numbers[workers] >= 1);
		for (size_t w = 0; w < workers; w++)
			assert_true(numbers[w] != numbers[workers]);
		workers++;
	}
	/* at least the outer team's worker and one inner team's at once (the runtime may
	 * give the second inner team the first one's workers) */
	assert_true(workers >= OUTER - 1 + INNER - 1);
}

/* ------------------------------------------------------------------ the run */

/* The ringtrace command with args (NULL-terminated), its output into out (NULL: the
 * test's); returns its wait status. */
static int run_tool(const char *const *args, const char *out)
{
	const char *argv[16] = {RTR_TOOL};
	size_t n = 1;

	while (*args != NULL && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid_t pid = tu_fork();
	if (pid == 0) {
		if (out != NULL && freopen(out, "w", stdout) == NULL)
			_exit(126);
		execv(RTR_TOOL, (char *const *)argv);
		_exit(127);
	}
	return tu_wait_child(pid, TIMEOUT_S);
}

/* A file's text, NUL-terminated, into buf. */
static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* `ringtrace check FILE`: exit 0, no finding. */
static void viewers_accept(const char *path)
{
	char out[4200], text[4096];
	const char *args[] = {"check", path, NULL};

	snprintf(out, sizeof(out), "%s.check", path);
	tu_expect_exit_0(run_tool(args, out));
	slurp(out, text, sizeof(text));
	if (strstr(text, "; no findings\n") == NULL)
		fail_msg("ringtrace check %s: %s", path, text);
	unlink(out);
}

/*
 * mpirun -np RANKS ringtrace record --mpi --omp --nvtx --itt --kokkos --instrument -o
 * pattern-%r.json -- hybrid_prog, its output into pattern.out and pattern.err.
 */
static void run_job(const char *pattern)
{
	char file[4096], out[4096], err[4096], np[8];

	snprintf(file, sizeof(file), "%s-%%r.json", pattern);
	snprintf(out, sizeof(out), "%s.out", pattern);
	snprintf(err, sizeof(err), "%s.err", pattern);
	snprintf(np, sizeof(np), "%d", RANKS);
	const char *argv[] = {RTR_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", np,
			      "--timeout", "50", /* mpirun ends a hung job itself */
			      /* waiting threads sleep: 4 ranks of up to 8 threads on 2 cores */
			      "-x", "OMP_WAIT_POLICY=passive", "-x", "OMP_DYNAMIC=false",
			      /* the critical's wait is a slice too */
			      "-x", "RINGTRACE_OMP_MUTEX=1", RTR_TOOL, "record", "--mpi", "--omp",
			      "--nvtx", "--itt", "--kokkos", "--instrument", "-o", file, "--",
			      RTR_HYBRID_PROG, NULL};
	pid_t pid = tu_fork();
	if (pid == 0) {
		unsetenv("RINGTRACE_FILE"); /* the test's own environment stays out */
		unsetenv("RINGTRACE_PROCESS_NAME");
		unsetenv("RINGTRACE_AUTOSTART");
		if (freopen(out, "w", stdout) == NULL || freopen(err, "w", stderr) == NULL)
			_exit(126);
		execv(RTR_MPIEXEC, (char *const *)argv);
		_exit(127);
	}
	int status = tu_wait_child(pid, TIMEOUT_S);
	char text[16384];
	slurp(err, text, sizeof(text));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("mpirun: status %#x: %s", status, text);
	/* each rank's record says where its trace is */
	for (int r = 0; r < RANKS; r++) {
		char said[4300];
		snprintf(said, sizeof(said),
			 "ringtrace record: the trace: %s-%d.json -- drag it onto "
			 "https://ui.perfetto.dev\n",
			 pattern, r);
		const char *at = strstr(text, said);
		if (at == NULL || strstr(at + 1, said) != NULL)
			fail_msg("record did not say once where rank %d's trace is: %s", r, text);
	}
	slurp(out, text, sizeof(text));
	assert_string_equal(text, ""); /* the program prints nothing */
	unlink(out);
	unlink(err);
}

/* Events by phase; the markers (start, end) apart. */
struct tally {
	size_t ph[128], markers, m;
};

static void tally(const struct tt_trace *t, struct tally *c)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (e->name != NULL &&
		    (tu_is(e->name, "ringtrace: start") || tu_is(e->name, "ringtrace: end")))
			c->markers++;
		else if (strcmp(e->ph, "M") == 0)
			c->m++;
		else
			c->ph[(unsigned char)e->ph[0] & 127]++;
	}
}

/* An integer at path in a JSON object's text (an argument the reader keeps raw). */
static long long json_int(const char *raw, const char *key)
{
	char err[128];
	yajl_val doc = yajl_tree_parse(raw, err, sizeof(err));
	assert_non_null(doc);
	const char *path[] = {key, NULL};
	yajl_val v = yajl_tree_get(doc, path, yajl_t_number);
	assert_non_null(v);
	long long n = YAJL_GET_INTEGER(v);
	yajl_tree_free(doc);
	return n;
}

/* `ringtrace merge` of the rank files: one file that loads, strict and complete, each
 * rank a process named after it, every event of theirs in it (the merge's own markers
 * in place of theirs), every message joined. */
static void check_merge(const char *pattern, char files[RANKS][4096])
{
	char merged[4200];
	struct tt_trace t = {0};
	struct tally sum = {0}, got = {0};

	snprintf(merged, sizeof(merged), "%s-merged.json", pattern);
	const char *args[] = {"merge", "-o", merged, files[0], files[1], files[2], files[3], NULL};
	tu_expect_exit_0(run_tool(args, NULL));
	viewers_accept(merged);
	if (tt_load(merged, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	for (int r = 0; r < RANKS; r++)
		tally(&ranks[r].t, &sum);
	tally(&t, &got);
	assert_int_equal(got.markers, 2);
	for (int ph = 0; ph < 128; ph++)
		if (got.ph[ph] != sum.ph[ph])
			fail_msg("merged: %zu events of phase %c, the ranks have %zu", got.ph[ph],
				 ph, sum.ph[ph]);
	const struct tt_event *end = tu_end_marker(&t);
	assert_int_equal(tu_arg_int(end, "merged_from"), RANKS);
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
	size_t events = 0;
	for (int ph = 0; ph < 128; ph++)
		events += sum.ph[ph];
	assert_int_equal(tu_arg_int(end, "merged_events"), events);
	const char *messages = tt_arg(end, "messages")->raw;
	assert_int_equal(json_int(messages, "joined"), RANKS * STEPS);
	assert_int_equal(json_int(messages, "violations"), 0);
	assert_int_equal(json_int(messages, "receives_without_send"), 0);
	assert_int_equal(json_int(messages, "sends_without_receive"), 0);
	int named[RANKS] = {0};
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		int r = -1;
		if (strcmp(e->ph, "M") == 0 && tu_is(e->name, "process_name") &&
		    sscanf(tt_arg(e, "name")->s, "rank %d \xc2\xb7 ", &r) == 1 && r >= 0 &&
		    r < RANKS)
			named[r]++;
	}
	for (int r = 0; r < RANKS; r++)
		assert_int_equal(named[r], 1);
	tt_free(&t);
	unlink(merged);
}

static void hybrid_job_records_every_module(void **state)
{
	char pattern[3900], files[RANKS][4096];

	(void)state;
	tu_temp_path(pattern, sizeof(pattern), "hybrid", "job", "");
	for (int r = 0; r < RANKS; r++) {
		snprintf(files[r], sizeof(files[r]), "%s-%d.json", pattern, r);
		unlink(files[r]);
	}
	run_job(pattern);
	for (int r = 0; r < RANKS; r++) {
		viewers_accept(files[r]);
		if (tt_load(files[r], TT_CHECK_ESCAPES, &ranks[r].t) != 0)
			fail_msg("rank %d: %s", r, ranks[r].t.error);
		check_rank(r);
	}
	check_messages();
	check_merge(pattern, files);
	for (int r = 0; r < RANKS; r++) {
		tt_free(&ranks[r].t);
		if (getenv("RTR_TEST_KEEP") == NULL)
			unlink(files[r]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hybrid_job_records_every_module),
	};

	return cmocka_run_group_tests_name("hybrid", tests, NULL, NULL);
}
