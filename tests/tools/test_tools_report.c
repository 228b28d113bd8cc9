/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: rank traces written here with exact times, clock offsets and
 * message flows, and the report's --json read back with yajl (json_tree.h): every
 * wait state with its waiting and causing rank, every rank's times, the imbalance of
 * the imbalanced region, the same at -j 1 and -j 2, a directory as input, the HTML
 * page's data and its lack of URLs; and a real job (mpirun -np 4 of
 * tests/progs/report_waits.c under the MPI module), whose injected waits it finds.
 * The same bytes at -j 1, 2, 4 and under mpirun -np 2 and 4 (the files split over the
 * ranks, reduced on rank 0); the job so far resolved as files come (what is held
 * after each file), and its bytes refused when cut or corrupted.
 */
#include "json.h"
#include "json_tree.h"
#include "report/job_report.h"
#include "tool_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define RANKS	4
#define MS	1000000LL		 /* ns */
#define T0	1000000000000LL		 /* rank 0's clock at the start, ns */
#define SKEW(r) ((long long)(r)*50 * MS) /* rank r's clock is ahead of rank 0's */

/* One rank's file: events in the order the recorder writes them (a slice at its
 * end), times in ms from the common start; each rank's own clock is SKEW(r) ahead,
 * which its clock sync events say. */
struct rank_file {
	struct tool_text t;
	int rank;
};

static void begin(struct rank_file *f, int rank)
{
	memset(f, 0, sizeof(*f));
	f->rank = rank;
	tool_text_printf(
		&f->t,
		"[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"origin_monotonic_ns\":\"%lld\",\"rank\":%d,"
		"\"world_size\":%d}},\n",
		100 + rank, 100 + rank, T0 + SKEW(rank), rank, RANKS);
}

static void sync_at(struct rank_file *f, double ms)
{
	tool_text_printf(
		&f->t,
		"{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"ringtrace\",\"name\":\"ringtrace: clock "
		"sync\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{\"reference_rank\":0,"
		"\"rank\":%d,\"at_ns\":%lld,\"offset_ns\":%lld,\"error_ns\":0,\"rtt_ns\":0,"
		"\"rounds\":50}},\n",
		ms * 1000, 100 + f->rank, 100 + f->rank, f->rank,
		T0 + SKEW(f->rank) + (long long)(ms * MS), -SKEW(f->rank));
}

static void slice(struct rank_file *f, const char *cat, const char *name, double from, double to,
		  const char *args)
{
	tool_text_printf(&f->t,
			 "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,"
			 "\"pid\":%d,\"tid\":%d%s%s%s},\n",
			 cat, name, from * 1000, (to - from) * 1000, 100 + f->rank, 100 + f->rank,
			 args != NULL ? ",\"args\":{" : "", args != NULL ? args : "",
			 args != NULL ? "}" : "");
}

static void flow(struct rank_file *f, bool start, unsigned id, double ms)
{
	tool_text_printf(&f->t,
			 "{\"ph\":\"%s\",%s\"cat\":\"mpi\",\"name\":\"message\",\"ts\":%.3f,"
			 "\"id\":\"0x%x\",\"pid\":%d,\"tid\":%d},\n",
			 start ? "s" : "f", start ? "" : "\"bp\":\"e\",", ms * 1000, id,
			 100 + f->rank, 100 + f->rank);
}

static void finish(struct rank_file *f, const char *path, double main_end)
{
	sync_at(f, main_end - 1);
	slice(f, "app", "main", 0, main_end, NULL);
	tool_text_printf(&f->t,
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%.3f,"
			 "\"pid\":%d,\"tid\":%d,\"args\":{\"final\":true}}\n]\n",
			 main_end * 1000, 100 + f->rank, 100 + f->rank);
	tool_write(path, f->t.p, f->t.len);
	free(f->t.p);
}

/* The job (times in ms; see the expectations in check_job()):
 *   late sender: rank 0's MPI_Recv [20, 30] in solve, rank 1's MPI_Send [25, 26]: 5 ms;
 *   late receiver: rank 2's MPI_Ssend [50, 60] in exchange, rank 3's MPI_Recv [53, 60]: 3 ms;
 *   barrier (comm 1, seq 1): ranks 0, 1, 3 enter at 100, rank 2 at 107, all leave at 107.5;
 *   allreduce (comm 1, seq 2) in step: rank r enters at 200 + {0, 1, 2, 4}, all leave at 205;
 *   compute: 100 ms on ranks 0-2, 300 ms on rank 3; main: [0, 1000], rank 0's [0, 1010]. */
static void write_job(char paths[RANKS][4200], const char *dir)
{
	static const double enter[RANKS] = {200, 201, 202, 204};

	for (int r = 0; r < RANKS; r++) {
		struct rank_file f;
		char args[128];

		snprintf(paths[r], 4200, "%s/rank-%d.json", dir, r);
		begin(&f, r);
		sync_at(&f, 0.5);
		if (r == 0) {
			flow(&f, false, 0x10, 29);
			slice(&f, "mpi", "MPI_Recv", 20, 30, "\"peer\":1,\"tag\":5,\"bytes\":8");
			slice(&f, "app", "solve", 10, 40, NULL);
		} else if (r == 1) {
			flow(&f, true, 0x10, 25.5);
			slice(&f, "mpi", "MPI_Send", 25, 26, "\"peer\":0,\"tag\":5,\"bytes\":8");
			slice(&f, "app", "solve", 10, 40, NULL);
		} else if (r == 2) {
			flow(&f, true, 0x20, 59);
			slice(&f, "mpi", "MPI_Ssend", 50, 60, "\"peer\":3,\"tag\":6,\"bytes\":8");
			slice(&f, "app", "exchange", 45, 65, NULL);
		} else {
			flow(&f, false, 0x20, 59.9);
			slice(&f, "mpi", "MPI_Recv", 53, 60, "\"peer\":2,\"tag\":6,\"bytes\":8");
			slice(&f, "app", "exchange", 45, 65, NULL);
		}
		slice(&f, "mpi", "MPI_Barrier", r == 2 ? 107 : 100, 107.5,
		      "\"bytes\":0,\"comm_size\":4,\"comm\":1,\"seq\":1");
		snprintf(args, sizeof(args), "\"bytes\":8,\"comm_size\":4,\"comm\":1,\"seq\":2");
		slice(&f, "mpi", "MPI_Allreduce", enter[r], 205, args);
		slice(&f, "app", "step", 195, 210, NULL);
		if (r == 1)
			flow(&f, true, 0x99, 500); /* in no mpi slice: counted, left out */
		slice(&f, "app", "compute", 300, r == 3 ? 600 : 400, NULL);
		finish(&f, paths[r], r == 0 ? 1010 : 1000);
	}
}

static const char *job_dir(const char *name)
{
	const char *dir = tool_tmp(name);

	mkdir(dir, 0755);
	return dir;
}

/* The wait row of (kind, rank), checked against path, cause and ns. */
static void expect_wait(yajl_val waits, const char *kind, long long rank, const char *path,
			long long cause, long long ns)
{
	size_t found = 0;

	for (size_t i = 0; i < YAJL_GET_ARRAY(waits)->len; i++) {
		yajl_val w = YAJL_GET_ARRAY(waits)->values[i];

		if (strcmp(jt_str(w, "kind"), kind) != 0 || jt_int(w, "rank") != rank)
			continue;
		found++;
		assert_string_equal(jt_str(w, "path"), path);
		assert_int_equal(jt_int(w, "cause_rank"), cause);
		assert_int_equal(jt_int(w, "ns"), ns);
		assert_int_equal(jt_int(w, "count"), 1);
	}
	if (found != 1)
		fail_msg("%s waits of rank %lld: %zu, not 1", kind, rank, found);
}

static void expect_total(yajl_val doc, const char *kind, long long ns, long long count)
{
	yajl_val t = jt_at(jt_at(doc, "wait_totals"), kind);

	assert_int_equal(jt_int(t, "ns"), ns);
	assert_int_equal(jt_int(t, "count"), count);
}

static void expect_rank(yajl_val doc, int r, long long span, long long mpi, long long idle)
{
	yajl_val k = YAJL_GET_ARRAY(jt_array(doc, "ranks"))->values[r];

	assert_int_equal(jt_int(k, "rank"), r);
	assert_int_equal(jt_int(k, "span_ns"), span);
	assert_int_equal(jt_int(k, "mpi_ns"), mpi);
	assert_int_equal(jt_int(k, "compute_ns"), span - mpi);
	assert_int_equal(jt_int(k, "idle_ns"), idle);
	assert_true(jt_double(k, "mpi_share") == (double)mpi / (double)(1010 * MS));
}

static yajl_val path_row(yajl_val doc, const char *path)
{
	return jt_row_by(jt_array(doc, "paths"), "path", path, NULL);
}

static void check_job(yajl_val doc)
{
	yajl_val waits = jt_array(doc, "waits"), p;

	assert_int_equal(jt_int(doc, "schema_version"), 1);
	assert_int_equal(jt_int(doc, "files"), RANKS);
	assert_int_equal(jt_int(doc, "measured_files"), RANKS);
	assert_int_equal(jt_int(doc, "start_ns"), T0);
	assert_int_equal(jt_int(doc, "span_ns"), 1010 * MS);
	assert_int_equal(jt_int(doc, "messages"), 2);
	assert_int_equal(jt_int(doc, "unmatched_message_ends"), 0);
	assert_int_equal(jt_int(doc, "collective_instances"), 2);
	assert_int_equal(jt_int(doc, "flows_outside_calls"), 1);
	assert_int_equal(jt_int(doc, "approximate_claims"), 0);
	expect_total(doc, "late_sender", 5 * MS, 1);
	expect_total(doc, "late_receiver", 3 * MS, 1);
	expect_total(doc, "barrier", 21 * MS, 3);
	expect_total(doc, "collective", 9 * MS, 3);
	assert_int_equal(YAJL_GET_ARRAY(waits)->len, 8);
	expect_wait(waits, "late_sender", 0, "main;solve;MPI_Recv", 1, 5 * MS);
	expect_wait(waits, "late_receiver", 2, "main;exchange;MPI_Ssend", 3, 3 * MS);
	for (int r = 0; r < RANKS; r++)
		if (r != 2)
			expect_wait(waits, "barrier", r, "main;MPI_Barrier", 2, 7 * MS);
	expect_wait(waits, "collective", 0, "main;step;MPI_Allreduce", 3, 4 * MS);
	expect_wait(waits, "collective", 1, "main;step;MPI_Allreduce", 3, 3 * MS);
	expect_wait(waits, "collective", 2, "main;step;MPI_Allreduce", 3, 2 * MS);
	/* MPI time: the calls above; idle: the job's 1010 ms less the rank's span */
	expect_rank(doc, 0, 1010 * MS, 10 * MS + 7500000 + 5 * MS, 0);
	expect_rank(doc, 1, 1000 * MS, 1 * MS + 7500000 + 4 * MS, 10 * MS);
	expect_rank(doc, 2, 1000 * MS, 10 * MS + 500000 + 3 * MS, 10 * MS);
	expect_rank(doc, 3, 1000 * MS, 7 * MS + 7500000 + 1 * MS, 10 * MS);
	p = path_row(doc, "main;compute");
	assert_int_equal(jt_int(p, "min_ns"), 100 * MS);
	assert_int_equal(jt_int(p, "max_ns"), 300 * MS);
	assert_int_equal(jt_int(p, "sum_ns"), 600 * MS);
	assert_int_equal(jt_int(p, "max_rank"), 3);
	assert_int_equal(jt_int(p, "ranks"), 4);
	assert_true(jt_double(p, "mean_ns") == 150.0 * MS);
	assert_true(jt_double(p, "imbalance") == 2.0);
	p = path_row(doc, "main;MPI_Barrier");
	assert_int_equal(jt_int(jt_at(p, "wait_ns"), "barrier"), 21 * MS);
	assert_int_equal(jt_int(p, "calls"), 4);
	/* the cause of the barrier's waits */
	yajl_val r2 = YAJL_GET_ARRAY(jt_array(doc, "ranks"))->values[2];
	assert_int_equal(jt_int(jt_at(r2, "caused_ns"), "barrier"), 21 * MS);
	assert_int_equal(jt_int(jt_at(r2, "waited_ns"), "collective"), 2 * MS);
	/* the heat map: bins of 10.1 ms; rank 0's barrier [100, 107.5] holds 1 ms of bin 9
	 * and 6.5 ms of bin 10, rank 3's MPI_Recv [53, 60] 7 ms of bin 5 */
	yajl_val heat = jt_array(jt_at(doc, "heatmap"), "mpi_permille");
	yajl_val h0 = YAJL_GET_ARRAY(heat)->values[0], h3 = YAJL_GET_ARRAY(heat)->values[3];
	assert_int_equal(jt_int(jt_at(doc, "heatmap"), "bins"), 100);
	assert_int_equal(YAJL_GET_ARRAY(h0)->len, 100);
	assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(h0)->values[0]), 0);
	assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(h0)->values[9]), 99);	 /* 1 / 10.1 */
	assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(h0)->values[10]), 643); /* 6.5 / 10.1 */
	assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(h3)->values[5]), 693);	 /* 7 / 10.1 */
}

static char *report_json(const char *jobs, char paths[RANKS][4200])
{
	struct tool_run r;
	const char *args[16] = {"report", "-j", jobs, "--top", "0", "--json"};
	size_t n = 6;
	char *out;

	for (int i = 0; i < RANKS; i++)
		args[n++] = paths[RANKS - 1 - i]; /* any order: ranks come from the files */
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("report -j %s: status %d: %s", jobs, r.status, r.err);
	out = r.out;
	r.out = NULL;
	tool_run_free(&r);
	return out;
}

static void waits_ranks_and_imbalance_exact_at_every_j(void **state)
{
	char paths[RANKS][4200];
	char *one, *two, *four;
	yajl_val doc;

	(void)state;
	write_job(paths, job_dir("report-job"));
	one = report_json("1", paths);
	two = report_json("2", paths);
	four = report_json("4", paths);
	doc = jt_parse(one, "report --json");
	check_job(doc);
	yajl_tree_free(doc);
	assert_string_equal(one, two);
	assert_string_equal(one, four);
#ifdef RTR_MPIEXEC
	for (int np = 2; np <= 4; np += 2) {
		char *k = tool_mpirun_report(RTR_MPIEXEC, np, paths, RANKS);

		assert_string_equal(one, k);
		free(k);
	}
#endif
	free(one);
	free(two);
	free(four);
}

/* The same files as Perfetto traces (`ringtrace convert`): the same report. */
static void pftrace_inputs_give_the_same_report(void **state)
{
	char paths[RANKS][4200], pf[RANKS][4200];
	struct tool_run r;
	char *json, *from_pf;

	(void)state;
	write_job(paths, job_dir("report-pf"));
	for (int i = 0; i < RANKS; i++) {
		snprintf(pf[i], sizeof(pf[i]), "%.4000s.pftrace", paths[i]);
		tool_run(&r, NULL, "convert", "-o", pf[i], paths[i], NULL);
		assert_int_equal(r.status, 0);
		tool_run_free(&r);
	}
	json = report_json("2", paths);
	from_pf = report_json("2", pf);
	assert_string_equal(json, from_pf);
	free(json);
	free(from_pf);
}

/* The --json document of the files at -j 1, the same as at -j 2 with every file read
 * twice (--hold 0), parsed. */
static yajl_val report_doc_every_way(char paths[RANKS][4200], const char *what)
{
	char *one = report_json("1", paths), *again;
	struct tool_run r;
	yajl_val doc;

	tool_run(&r, NULL, "report", "-j", "2", "--hold", "0", "--top", "0", "--json", paths[0],
		 paths[1], paths[2], paths[3], NULL);
	assert_int_equal(r.status, 0);
	again = r.out;
	r.out = NULL;
	tool_run_free(&r);
	assert_string_equal(one, again);
	doc = jt_parse(one, what);
	free(one);
	free(again);
	return doc;
}

/* Rooted collectives, times in ms:
 *   MPI_Bcast (comm 7, seq 1, root 0 of comm 7 = world rank 3): ranks 0-2 enter at
 *   100, 101, 102 and leave at 110, the root at 108: a late broadcast of 8, 7, 6 ms;
 *   MPI_Reduce (comm 1, seq 1, root 0): the root enters at 200 and leaves at 212, the
 *   others enter at 205, 210, 203: an early reduce of 10 ms, caused by rank 2;
 *   MPI_Bcast (comm 1, seq 2) without root_world, as an older recorder wrote it:
 *   left out, though its root (rank 1) is late;
 *   MPI_Scatter (comm 1, seq 3, root world rank 1), the root first: no wait. */
static void write_rooted(char paths[RANKS][4200], const char *dir)
{
	for (int r = 0; r < RANKS; r++) {
		struct rank_file f;
		char args[160];

		snprintf(paths[r], 4200, "%s/rank-%d.json", dir, r);
		begin(&f, r);
		sync_at(&f, 0.5);
		snprintf(args, sizeof(args),
			 "\"bytes\":8,\"comm_size\":4,\"comm\":7,\"seq\":1,\"root\":0,"
			 "\"root_world\":3");
		slice(&f, "mpi", "MPI_Bcast", r == 3 ? 108 : 100 + r, r == 3 ? 109 : 110, args);
		snprintf(args, sizeof(args),
			 "\"bytes\":8,\"comm_size\":4,\"comm\":1,\"seq\":1,\"root\":0,"
			 "\"root_world\":0");
		slice(&f, "mpi", "MPI_Reduce", (double[]){200, 205, 210, 203}[r],
		      r == 0 ? 212 : (double[]){0, 206, 211, 204}[r], args);
		slice(&f, "mpi", "MPI_Bcast", r == 1 ? 300 : 290, 301,
		      "\"bytes\":8,\"comm_size\":4,\"comm\":1,\"seq\":2,\"root\":1");
		snprintf(args, sizeof(args),
			 "\"bytes\":8,\"comm_size\":4,\"comm\":1,\"seq\":3,\"root\":1,"
			 "\"root_world\":1");
		slice(&f, "mpi", "MPI_Scatter", r == 1 ? 400 : 401 + r, 410, args);
		finish(&f, paths[r], 1000);
	}
}

static void late_broadcast_and_early_reduce_exact(void **state)
{
	char paths[RANKS][4200];
	yajl_val doc, waits;

	(void)state;
	write_rooted(paths, job_dir("report-rooted"));
	doc = report_doc_every_way(paths, "report --json (rooted)");
	waits = jt_array(doc, "waits");
	assert_int_equal(jt_int(doc, "collective_instances"), 3);
	assert_int_equal(YAJL_GET_ARRAY(waits)->len, 4);
	expect_total(doc, "late_broadcast", 21 * MS, 3);
	expect_total(doc, "early_reduce", 10 * MS, 1);
	expect_total(doc, "collective", 0, 0);
	for (int k = 0; k < 3; k++)
		expect_wait(waits, "late_broadcast", k, "main;MPI_Bcast", 3, (8 - k) * MS);
	expect_wait(waits, "early_reduce", 0, "main;MPI_Reduce", 2, 10 * MS);
	yajl_tree_free(doc);
}

/* Nonblocking collectives, times in ms (the I-calls last 0.1 ms):
 *   MPI_Iallreduce (comm 1, seq 1): ranks 0-2 start it at 100, 101, 102, rank 3 at
 *   110; ranks 0-2 complete it in an MPI_Wait [103, 111] (rank 0's written as B and
 *   E, the E holding "collectives"), rank 3 in [110.2, 110.5]: 7 ms each of ranks
 *   0-2, caused by rank 3;
 *   MPI_Iallreduce (seq 2) and MPI_Ibcast (seq 3, root world rank 0), both completed
 *   by one MPI_Waitall: rank 2 starts the Iallreduce at 205, the others at 200; the
 *   root starts the Ibcast at 209, the others right after their Iallreduce; the
 *   Waitalls are [209.5, 212],
 *   [201, 212], [205.5, 212], [203, 212] on ranks 0-3: each waits once, for the
 *   latest of the two: the late broadcast, 8, 3.5 and 6 ms of ranks 1-3; the root
 *   waits for nothing. */
static void write_nonblocking(char paths[RANKS][4200], const char *dir)
{
	static const double waitall[RANKS] = {209.5, 201, 205.5, 203};

	for (int r = 0; r < RANKS; r++) {
		struct rank_file f;
		char args[160];
		double at = r == 3 ? 110 : 100 + r;

		snprintf(paths[r], 4200, "%s/rank-%d.json", dir, r);
		begin(&f, r);
		sync_at(&f, 0.5);
		slice(&f, "mpi", "MPI_Iallreduce", at, at + 0.1,
		      "\"bytes\":4,\"comm_size\":4,\"comm\":1,\"seq\":1");
		if (r == 0) {
			tool_text_printf(&f.t,
					 "{\"ph\":\"B\",\"cat\":\"mpi\",\"name\":\"MPI_Wait\","
					 "\"ts\":103000,\"pid\":100,\"tid\":100,\"args\":{"
					 "\"count\":1}},\n{\"ph\":\"E\",\"cat\":\"mpi\",\"name\":"
					 "\"MPI_Wait\",\"ts\":111000,\"pid\":100,\"tid\":100,"
					 "\"args\":{\"collectives\":\"MPI_Iallreduce@1:1\"}},\n");
		} else {
			slice(&f, "mpi", "MPI_Wait", r == 3 ? 110.2 : 103, r == 3 ? 110.5 : 111,
			      "\"count\":1,\"collectives\":\"MPI_Iallreduce@1:1\"");
		}
		at = r == 2 ? 205 : 200;
		slice(&f, "mpi", "MPI_Iallreduce", at, at + 0.1,
		      "\"bytes\":4,\"comm_size\":4,\"comm\":1,\"seq\":2");
		at = r == 0 ? 209 : at + 0.1;
		slice(&f, "mpi", "MPI_Ibcast", at, at + 0.1,
		      "\"bytes\":4,\"comm_size\":4,\"comm\":1,\"seq\":3,\"root\":0,"
		      "\"root_world\":0");
		snprintf(args, sizeof(args),
			 "\"count\":2,\"collectives\":\"MPI_Iallreduce@1:2 MPI_Ibcast@1:3:0\"");
		slice(&f, "mpi", "MPI_Waitall", waitall[r], 212, args);
		finish(&f, paths[r], 1000);
	}
}

static void nonblocking_collectives_wait_in_their_completion(void **state)
{
	char paths[RANKS][4200];
	yajl_val doc, waits;

	(void)state;
	write_nonblocking(paths, job_dir("report-nb"));
	doc = report_doc_every_way(paths, "report --json (nonblocking)");
	waits = jt_array(doc, "waits");
	assert_int_equal(jt_int(doc, "collective_instances"), 3);
	assert_int_equal(YAJL_GET_ARRAY(waits)->len, 6);
	expect_total(doc, "collective", 21 * MS, 3);
	expect_total(doc, "late_broadcast", 17500000, 3);
	for (int k = 0; k < 3; k++)
		expect_wait(waits, "collective", k, "main;MPI_Wait", 3, 7 * MS);
	expect_wait(waits, "late_broadcast", 1, "main;MPI_Waitall", 0, 8 * MS);
	expect_wait(waits, "late_broadcast", 2, "main;MPI_Waitall", 0, 3500000);
	expect_wait(waits, "late_broadcast", 3, "main;MPI_Waitall", 0, 6 * MS);
	yajl_tree_free(doc);
}

/* A trace without MPI: one rank, all computation, no wait. */
static void a_trace_without_mpi_has_no_waits(void **state)
{
	struct tool_run r;
	yajl_val doc, k;

	(void)state;
	tool_run(&r, NULL, "report", "--json", tool_data("data/good.json"), NULL);
	assert_int_equal(r.status, 0);
	doc = jt_parse(r.out, "report --json good.json");
	assert_int_equal(jt_int(doc, "messages"), 0);
	assert_int_equal(jt_int(doc, "collective_instances"), 0);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "waits"))->len, 0);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "ranks"))->len, 1);
	k = YAJL_GET_ARRAY(jt_array(doc, "ranks"))->values[0];
	assert_int_equal(jt_int(k, "mpi_ns"), 0);
	assert_int_equal(jt_int(k, "compute_ns"), jt_int(doc, "span_ns"));
	assert_true(jt_int(doc, "span_ns") > 0);
	yajl_tree_free(doc);
	tool_run_free(&r);
}

static void a_directory_reads_its_trace_files(void **state)
{
	char paths[RANKS][4200];
	struct tool_run r;
	const char *dir = job_dir("report-dir");
	yajl_val doc;

	(void)state;
	write_job(paths, dir);
	tool_write(tool_tmp("report-dir/notes.txt"), "x", 1); /* not a trace: left out */
	tool_run(&r, NULL, "report", "--json", "-n", "0", dir, NULL);
	assert_int_equal(r.status, 0);
	doc = jt_parse(r.out, "report --json DIR");
	check_job(doc);
	yajl_tree_free(doc);
	tool_run_free(&r);
	tool_run(&r, NULL, "report", dir, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "late_sender 5.000 ms (1)"));
	assert_true(tool_has(r.out, "main;compute"));
	tool_run_free(&r);
	/* standard input cannot be read twice: refused, said */
	tool_run(&r, NULL, "report", dir, "-", NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "reads its files twice"));
	assert_int_equal(r.out[0], '\0');
	tool_run_free(&r);
}

static void the_page_holds_the_pictures_data_and_no_url(void **state)
{
	char paths[RANKS][4200];
	struct tool_run r;
	const char *page = tool_tmp("report.html");
	char *html;

	(void)state;
	write_job(paths, job_dir("report-job"));
	tool_run(&r, NULL, "report", "--html", page, paths[0], paths[1], paths[2], paths[3], NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	html = tu_read_file(page, NULL);
	assert_false(tool_has(html, "http:"));
	assert_false(tool_has(html, "https:"));
	assert_false(tool_has(html, "<script src"));
	assert_false(tool_has(html, "<link"));
	assert_true(tool_has(html, "\"ranks\":[0,1,2,3]"));
	/* the heat map: a string of 100 levels per rank */
	char *heat = strstr(html, "\"heat\":[\"");
	assert_non_null(heat);
	heat += strlen("\"heat\":[\"");
	for (int k = 0; k < RANKS; k++) {
		char *end = strchr(heat, '"');
		assert_non_null(end);
		assert_int_equal(end - heat, 100);
		heat = end + 3; /* "," */
	}
	assert_true(tool_has(html, "[\"late_sender\",\"main;solve;MPI_Recv\",5000000,1]"));
	assert_true(tool_has(html, "[\"barrier\",\"main;MPI_Barrier\",21000000,3]"));
	assert_true(tool_has(html, "[\"main;compute\",2,300000000,3]"));
	free(html);
}

#ifdef RTR_MPIEXEC
/* mpirun -np 4 report_waits under the MPI module: the injected 50 ms waits, found. */
static void a_real_job_finds_the_injected_waits(void **state)
{
	char pattern[4200], env_file[4300], env_pre[4300], files[RANKS][4200];
	struct tool_run r;
	yajl_val doc, waits;
	const char *dir = tool_tmp("report-mpi");
	long long barrier = 0, late = 0, bcast[3] = {0}, reduce = 0, nb[4] = {0};

	(void)state;
	mkdir(dir, 0755);
	snprintf(pattern, sizeof(pattern), "%s/waits-%%r.json", dir);
	snprintf(env_file, sizeof(env_file), "RINGTRACE_FILE=%s", pattern);
	snprintf(env_pre, sizeof(env_pre), "LD_PRELOAD=%s", RTR_MPI_LIB);
	const char *run[] = {"--allow-run-as-root",
			     "--oversubscribe",
			     "-np",
			     "4",
			     "--timeout",
			     "60",
			     "-x",
			     env_file,
			     "-x",
			     env_pre,
			     RTR_REPORT_WAITS,
			     NULL};
	char cmd[20000];
	size_t len = (size_t)snprintf(cmd, sizeof(cmd), "%s", RTR_MPIEXEC);
	for (size_t i = 0; run[i] != NULL; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " '%s'", run[i]);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < RANKS; i++)
		snprintf(files[i], sizeof(files[i]), "%s/waits-%d.json", dir, i);
	tool_run(&r, NULL, "report", "--json", "-n", "0", files[0], files[1], files[2], files[3],
		 NULL);
	assert_int_equal(r.status, 0);
	doc = jt_parse(r.out, "report --json (mpirun)");
	assert_int_equal(jt_int(doc, "measured_files"), RANKS);
	waits = jt_array(doc, "waits");
	for (size_t i = 0; i < YAJL_GET_ARRAY(waits)->len; i++) {
		yajl_val w = YAJL_GET_ARRAY(waits)->values[i];
		const char *kind = jt_str(w, "kind");

		if (strcmp(kind, "barrier") == 0 && jt_int(w, "cause_rank") == 2 &&
		    jt_int(w, "rank") == 3)
			barrier += jt_int(w, "ns");
		if (strcmp(kind, "late_broadcast") == 0) {
			assert_int_equal(jt_int(w, "cause_rank"), 3);
			assert_string_equal(jt_str(w, "path"), "MPI_Bcast");
			assert_true(jt_int(w, "rank") >= 0 && jt_int(w, "rank") < 3);
			bcast[jt_int(w, "rank")] += jt_int(w, "ns");
		}
		if (strcmp(kind, "collective") == 0 && strcmp(jt_str(w, "path"), "MPI_Wait") == 0) {
			assert_int_equal(jt_int(w, "cause_rank"), 2);
			nb[jt_int(w, "rank") & 3] += jt_int(w, "ns");
		}
		if (strcmp(kind, "early_reduce") == 0) {
			assert_int_equal(jt_int(w, "rank"), 0);
			if (jt_int(w, "cause_rank") == 1)
				reduce += jt_int(w, "ns");
		}
		if (strcmp(kind, "late_sender") == 0 && jt_int(w, "rank") == 0) {
			assert_int_equal(jt_int(w, "cause_rank"), 1);
			assert_string_equal(jt_str(w, "path"), "MPI_Recv");
			late += jt_int(w, "ns");
		}
	}
	/* injected: 50 ms; the program's sleeps only last longer on a loaded machine */
	if (barrier < 40 * MS || barrier > 5000 * MS)
		fail_msg("rank 3's wait for rank 2 at the barrier: %lld ns", barrier);
	if (late < 40 * MS || late > 5000 * MS)
		fail_msg("rank 0's wait for rank 1's late send: %lld ns", late);
	for (int k = 0; k < 3; k++)
		if (bcast[k] < 40 * MS || bcast[k] > 5000 * MS)
			fail_msg("rank %d's wait for rank 3's late broadcast: %lld ns", k,
				 bcast[k]);
	if (reduce < 40 * MS || reduce > 5000 * MS)
		fail_msg("root 0's wait for rank 1 at its early reduce: %lld ns", reduce);
	for (int k = 0; k < 4; k++)
		if (k != 2 && (nb[k] < 40 * MS || nb[k] > 5000 * MS))
			fail_msg("rank %d's MPI_Wait for rank 2's MPI_Iallreduce: %lld ns", k,
				 nb[k]);
	yajl_tree_free(doc);
	for (int np = 2; np <= 4; np += 2) {
		char *k = tool_mpirun_report(RTR_MPIEXEC, np, files, RANKS);

		assert_string_equal(r.out, k);
		free(k);
	}
	tool_run_free(&r);
	tool_run(&r, NULL, "report", "--json", "-n", "0", "-j", "2", files[0], files[1], files[2],
		 files[3], NULL);
	char *one = r.out;
	r.out = NULL;
	tool_run_free(&r);
	tool_run(&r, NULL, "report", "--json", "-n", "0", "-j", "4", files[0], files[1], files[2],
		 files[3], NULL);
	assert_string_equal(one, r.out);
	free(one);
	tool_run_free(&r);
}
#endif

/* File i of the hand-written job read into an accumulator (in file order). */
static void add_file(struct job_acc *a, char (*paths)[4200], int i)
{
	struct rank_part *p = calloc(1, sizeof(*p));
	struct pass_options o = {.max_event_bytes = 1 << 20};

	assert_non_null(p);
	p->index = (size_t)i;
	p->path = paths[i];
	assert_int_equal(pass_file(p, &o), 0);
	assert_int_equal(acc_add_part(a, p), 0);
	part_free(p);
	free(p);
}

/* The second reading of files order[0..n) with what a (the first reading, merged)
 * found, merged into a; the replay's bytes come back the same, and every cut or
 * corrupted word of them is refused or read without harm. */
static void replay_files(struct job_acc *a, char (*paths)[4200], const int *order, int n)
{
	struct buf b = {0};
	struct replay rp;
	struct job_acc second;

	assert_int_equal(replay_pack(a, &b), 0);
	assert_int_equal(replay_unpack(&rp, b.p, b.len), 0);
	assert_int_equal(acc_init(&second), 0);
	for (int i = 0; i < n; i++) {
		struct rank_part *p = calloc(1, sizeof(*p));
		struct pass_options o = {.max_event_bytes = 1 << 20};

		assert_non_null(p);
		p->index = (size_t)order[i];
		p->path = paths[order[i]];
		assert_int_equal(pass_file(p, &o), 0);
		assert_int_equal(acc_add_replay(&second, p, &rp), 0);
		part_free(p);
		free(p);
	}
	assert_int_equal(acc_merge(a, &second), 0);
	acc_destroy(&second);
	replay_free(&rp);
	/* the bytes of what a replay holds: the span, one (comm, seq, start, rank) each */
	assert_int_equal(b.len, 4 * 8 + a->insts.count * 32);
	for (size_t cut = 0; cut < b.len; cut++) {
		assert_int_not_equal(replay_unpack(&rp, b.p, cut), 0);
		replay_free(&rp);
	}
	for (size_t at = 0; at + 8 <= b.len; at += 8) {
		unsigned char *c = malloc(b.len);

		assert_non_null(c);
		memcpy(c, b.p, b.len);
		c[at] ^= 0xff, c[at + 7] ^= 0x80;
		if (replay_unpack(&rp, c, b.len) == 0)
			assert_int_equal(rp.lasts.count, a->insts.count);
		replay_free(&rp);
		free(c);
	}
	buf_free(&b);
}

/* The --json document of an accumulator (spent). */
static char *acc_json(struct job_acc *a)
{
	struct report_options o = {.top = 0};
	struct job j;
	struct buf b = {0};
	char *out;

	assert_int_equal(acc_finish(a, &j), 0);
	assert_int_equal(job_json(&b, &j, &o), 0);
	assert_int_equal(buf_putc(&b, '\0'), 0);
	out = strdup(b.p);
	buf_free(&b);
	job_free(&j);
	return out;
}

static size_t pending_ends(const struct job_acc *a)
{
	size_t n = 0;

	for (const struct pend_q *q = table_first(&a->pending); q != NULL; q = table_next(q))
		n += q->n;
	return n;
}

/* A message is paired as soon as its second end is in, and of a collective instance
 * only its last entry is held, whatever the number of its members: only what waits
 * for a later file is held, and nothing per member. */
static void the_job_so_far_holds_only_what_waits(void **state)
{
	char paths[RANKS][4200];
	struct job_acc a;
	/* after files 0..i: endpoints held, instances held, messages paired */
	static const size_t ends[RANKS] = {1, 0, 1, 0}, insts[RANKS] = {2, 2, 2, 2},
			    pairs[RANKS] = {0, 1, 1, 2};

	(void)state;
	write_job(paths, job_dir("report-acc"));
	assert_int_equal(acc_init(&a), 0);
	for (int i = 0; i < RANKS; i++) {
		add_file(&a, paths, i);
		assert_int_equal(pending_ends(&a), ends[i]);
		assert_int_equal(a.insts.count, insts[i]);
		assert_int_equal(a.messages, pairs[i]);
	}
	assert_int_equal(a.groups.count, 0);
	acc_destroy(&a);
}

/* Two halves packed, unpacked and merged give the document of one accumulator; the
 * bytes of a job with held endpoints and members come back the same, and every cut
 * of them, and every corrupted word, is refused or read without harm. */
static void job_bytes_round_trip_and_refuse_truncation(void **state)
{
	static const char prof[] =
		"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
		"\"rank\":1,\"start_ns\":0,\"end_ns\":900,\"threads\":[{\"tid\":1,\"calls\":"
		"[{\"name\":\"main\",\"n\":1,\"t\":900,\"calls\":[{\"name\":\"MPI_Recv\","
		"\"cat\":\"mpi\",\"n\":2,\"t\":300}]}]}]}\n";
	static const char job[] =
		"{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"job\","
		"\"world\":2,\"ranks\":[{\"rank\":0,\"start_ns\":0,\"end_ns\":800},"
		"{\"rank\":1,\"start_ns\":0,\"end_ns\":900}],\"calls\":[{\"name\":\"main\","
		"\"n\":2,\"t\":1700,\"r\":{\"min\":800,\"max\":900,\"max_rank\":1,"
		"\"with\":2}}]}\n";
	/* the traces 0..2, a process profile, a job profile | the trace 3 */
	static const int order[] = {0, 1, 2, 4, 5, 3}, cut_at = 5;
	char paths[RANKS + 2][4200];
	struct job_acc whole, half[2], back, merged;
	struct buf bytes[2] = {{0}, {0}}, again = {0};
	char *one, *two;

	(void)state;
	write_job(paths, job_dir("report-bytes"));
	snprintf(paths[4], sizeof(paths[4]), "%s", tool_tmp("report-bytes/prof-1.json"));
	snprintf(paths[5], sizeof(paths[5]), "%s", tool_tmp("report-bytes/prof-job.json"));
	tool_write(paths[4], prof, strlen(prof));
	tool_write(paths[5], job, strlen(job));
	assert_int_equal(acc_init(&whole), 0);
	for (int i = 0; i < RANKS + 2; i++)
		add_file(&whole, paths, order[i]);
	replay_files(&whole, paths, order, RANKS + 2);
	one = acc_json(&whole);
	/* the second reading's part: the collective waits, the heat rows */
	assert_non_null(strstr(one, "\"kind\":\"barrier\""));
	assert_non_null(strstr(one, "\"kind\":\"collective\""));
	acc_destroy(&whole);
	assert_true(strstr(one, "\"profiles_left_out\":2") != NULL);
	assert_int_equal(acc_init(&merged), 0);
	for (int h = 0; h < 2; h++) {
		assert_int_equal(acc_init(&half[h]), 0);
		for (int i = h == 0 ? 0 : cut_at; i < (h == 0 ? cut_at : RANKS + 2); i++)
			add_file(&half[h], paths, order[i]);
		assert_int_equal(acc_pack(&half[h], &bytes[h]), 0);
		assert_int_equal(acc_init(&back), 0);
		assert_int_equal(acc_unpack(&back, bytes[h].p, bytes[h].len), 0);
		assert_int_equal(acc_merge(&merged, &back), 0);
		acc_destroy(&back);
	}
	replay_files(&merged, paths, order, RANKS + 2);
	two = acc_json(&merged);
	acc_destroy(&merged);
	assert_string_equal(one, two);
	/* files 0..2 hold an endpoint and three members of each instance; the profiles
	 * their sides */
	assert_int_equal(pending_ends(&half[0]), 1);
	assert_non_null(half[0].side[0]);
	assert_int_equal(half[0].side[1]->njp, 1);
	assert_int_equal(acc_init(&back), 0);
	assert_int_equal(acc_unpack(&back, bytes[0].p, bytes[0].len), 0);
	assert_int_equal(acc_pack(&back, &again), 0);
	assert_int_equal(again.len, bytes[0].len);
	assert_memory_equal(again.p, bytes[0].p, again.len);
	acc_destroy(&back);
	for (size_t cut = 0; cut < bytes[0].len; cut++) {
		assert_int_equal(acc_init(&back), 0);
		assert_int_not_equal(acc_unpack(&back, bytes[0].p, cut), 0);
		acc_destroy(&back);
	}
	for (size_t at = 0; at + 8 <= bytes[0].len; at += 8) {
		unsigned char *c = malloc(bytes[0].len);
		struct job j;

		assert_non_null(c);
		memcpy(c, bytes[0].p, bytes[0].len);
		c[at] ^= 0xff, c[at + 7] ^= 0x80;
		assert_int_equal(acc_init(&back), 0);
		if (acc_unpack(&back, c, bytes[0].len) == 0 && acc_finish(&back, &j) == 0)
			job_free(&j);
		acc_destroy(&back);
		free(c);
	}
	for (int h = 0; h < 2; h++) {
		acc_destroy(&half[h]);
		buf_free(&bytes[h]);
	}
	buf_free(&again);
	free(one);
	free(two);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(waits_ranks_and_imbalance_exact_at_every_j),
		cmocka_unit_test(pftrace_inputs_give_the_same_report),
		cmocka_unit_test(late_broadcast_and_early_reduce_exact),
		cmocka_unit_test(nonblocking_collectives_wait_in_their_completion),
		cmocka_unit_test(a_trace_without_mpi_has_no_waits),
		cmocka_unit_test(a_directory_reads_its_trace_files),
		cmocka_unit_test(the_page_holds_the_pictures_data_and_no_url),
		cmocka_unit_test(the_job_so_far_holds_only_what_waits),
		cmocka_unit_test(job_bytes_round_trip_and_refuse_truncation),
#ifdef RTR_MPIEXEC
		cmocka_unit_test(a_real_job_finds_the_injected_waits),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
