/* SPDX-License-Identifier: MIT */
/*
 * bench/gen_ranks end to end: four generated rank files in %h/%R directories with a
 * manifest, each passing `ringtrace check` with no findings, merged with every
 * message joined and none moved, and the injected delays in the merged slices' times,
 * the ranks' clocks 50 ms apart and drifting 20 ppm a rank mapped back (the late
 * sender's send 5 ms after its receiver began to wait, the slow rank's
 * compute twice the others' and the others waiting for it at each Allreduce, the
 * imbalanced region growing with the rank); expected.json says exactly these. And the
 * manifest (tools/lib/manifest.c): `merge MANIFEST` writes what the merge of its
 * four files writes, `window --rank R MANIFEST` what the window of rank R's file
 * does, a manifest is known by its content whatever its name, and one of another
 * schema is refused; `report MANIFEST` writes the same bytes at -j 1 and 2 and under
 * mpirun -np 2 and 4.
 */
#include "json_tree.h"
#include "tool_test.h"
#include "trace_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define RANKS	   4
#define ITERATIONS 6
#define PID_BASE   20000 /* gen_ranks' pid of rank 0 */
#define LATE_NS	   5000000
#define COMPUTE_NS 200000
#define REGION_NS  50000
#define NOISE_NS   5000 /* expected.json's bound on the pattern's own waits */

static char dir[4096];

/* gen_ranks with the job every test here reads, into dir. */
static void generate(void)
{
	char pattern[4200];
	snprintf(dir, sizeof(dir), "%s", tool_tmp("gen"));
	snprintf(pattern, sizeof(pattern), "%s/%%h/%%R/t-%%r.json", dir);
	const char *argv[] = {RTR_GEN_RANKS,
			      "-n",
			      "4",
			      "-i",
			      "6",
			      "--barrier-every",
			      "3",
			      "-o",
			      pattern,
			      "--manifest",
			      "--ranks-per-host",
			      "2",
			      "--late-sender",
			      "1:2:5",
			      "--slow-rank",
			      "3:2",
			      "--imbalance",
			      "assemble:1",
			      "--clock-drift-ppm",
			      "20",
			      "--quiet",
			      NULL};
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(RTR_GEN_RANKS, (char *const *)argv);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void rank_file(char *out, size_t size, int r)
{
	snprintf(out, size, "%s/node%03d/000/t-%d.json", dir, r / 2, r);
}

static void files_land_in_their_directories_and_check_clean(void **state)
{
	(void)state;
	char path[4400];

	generate();
	for (int r = 0; r < RANKS; r++) {
		struct tool_run run;
		rank_file(path, sizeof(path), r);
		tool_run(&run, NULL, "check", path, NULL);
		assert_int_equal(run.status, 0);
		assert_true(tool_has(run.out, "complete; no findings"));
		tool_run_free(&run);
	}
	/* the manifest lists exactly them, relative to its directory */
	snprintf(path, sizeof(path), "%s/t-job.manifest.json", dir);
	yajl_val m = jt_parse_file(path);
	assert_int_equal(jt_int(m, "schema_version"), 1);
	assert_string_equal(jt_str(m, "type"), "ringtrace manifest");
	assert_int_equal(jt_int(m, "world_size"), RANKS);
	yajl_val files = jt_array(m, "files");
	assert_int_equal(YAJL_GET_ARRAY(files)->len, RANKS);
	for (int r = 0; r < RANKS; r++) {
		yajl_val f = YAJL_GET_ARRAY(files)->values[r];
		char want[64], host[16];
		snprintf(want, sizeof(want), "node%03d/000/t-%d.json", r / 2, r);
		snprintf(host, sizeof(host), "node%03d", r / 2);
		assert_int_equal(jt_int(f, "rank"), r);
		assert_int_equal(jt_int(f, "pid"), PID_BASE + r);
		assert_string_equal(jt_str(f, "host"), host);
		assert_string_equal(jt_str(f, "path"), want);
	}
	yajl_tree_free(m);
}

/* Times the merge mapped back from a drifting clock (20 ppm a rank): right within the
 * nanosecond it rounds to, either way. */
#define assert_near(got, want)                                                              \
	do {                                                                                \
		int64_t d_ = (int64_t)(got) - (int64_t)(want);                              \
		if (d_ < -2 || d_ > 2)                                                      \
			fail_msg("%s = %lld, not %lld within 2 ns", #got, (long long)(got), \
				 (long long)(want));                                        \
	} while (0)

/* Rank r's n-th slice named name (from 0) in the merged events, or fail. */
static const struct tt_event *nth(const struct tt_trace *t, int r, const char *name, int n,
				  int peer)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (strcmp(e->ph, "X") != 0 || e->pid != PID_BASE + r || strcmp(e->name, name) != 0)
			continue;
		const struct tt_arg *p = tt_arg(e, "peer");
		if (peer >= 0 && (p == NULL || p->i != peer))
			continue;
		if (n-- == 0)
			return e;
	}
	fail_msg("rank %d has no slice %s number %d", r, name, n);
	return NULL;
}

static void merge_joins_every_message_and_shows_the_delays(void **state)
{
	(void)state;
	char files[RANKS][4400];
	const char *merged = tool_tmp("gen-merged.json");
	struct tool_run run;
	struct tt_trace t;

	generate();
	for (int r = 0; r < RANKS; r++)
		rank_file(files[r], sizeof(files[r]), r);
	tool_run(&run, NULL, "merge", "-o", merged, files[0], files[1], files[2], files[3], NULL);
	assert_int_equal(run.status, 0);
	/* 2 messages a rank an iteration */
	assert_true(tool_has(run.err, "messages: 48 joined across files; 0 received before"));
	assert_true(tool_has(run.err, "0 events moved"));
	assert_true(tool_has(run.err, "4 of 4 files mapped onto rank 0's clock"));
	tool_run_free(&run);
	assert_int_equal(tt_load(merged, 0, &t), 0);

	/* the late sender: rank 1's send to rank 2 in iteration 2 starts 5 ms after rank
	 * 2 began to wait in its Waitall (the clocks, 50 ms apart a rank, aligned) */
	const struct tt_event *send = nth(&t, 1, "MPI_Isend", 2, 2);
	const struct tt_event *wait = nth(&t, 2, "MPI_Waitall", 2, -1);
	assert_near(send->ts_ns - wait->ts_ns, LATE_NS);
	assert_true(wait->dur_ns > LATE_NS);
	/* no other wait in the halo: the pattern's own are below noise_ns */
	for (int i = 0; i < ITERATIONS; i++)
		for (int r = 0; r < RANKS; r++)
			if (i != 2 || r != 2)
				assert_true(nth(&t, r, "MPI_Waitall", i, -1)->dur_ns < NOISE_NS);

	for (int i = 0; i < ITERATIONS; i++) {
		for (int r = 0; r < RANKS; r++) {
			/* the slow rank computes twice as long */
			uint64_t c = nth(&t, r, "compute", i, -1)->dur_ns;
			assert_near(c, r == 3 ? 2 * COMPUTE_NS : COMPUTE_NS);
			/* the region grows with the rank: 1 + r / 3 times */
			uint64_t a = nth(&t, r, "assemble", i, -1)->dur_ns;
			assert_near(a, (uint64_t)(REGION_NS * (1.0 + r / 3.0)));
			/* who waits at the Allreduce: all but the slow rank; in iteration 2
			 * all but the late sender and its receiver, about 5 ms */
			uint64_t w = nth(&t, r, "MPI_Allreduce", i, -1)->dur_ns;
			if (i == 2 && (r == 0 || r == 3))
				assert_true(w >= LATE_NS - 2 * COMPUTE_NS);
			else if (i == 2) /* the region's imbalance only */
				assert_true(w < 2 * REGION_NS);
			else if (r != 3)
				assert_true(w >= COMPUTE_NS - (uint64_t)(REGION_NS * r / 3.0));
			else
				assert_true(w < 10000);
		}
	}
	tt_free(&t);
}

static void expected_names_exactly_the_injected_delays(void **state)
{
	(void)state;
	char path[4400];

	generate();
	snprintf(path, sizeof(path), "%s/expected.json", dir);
	yajl_val e = jt_parse_file(path);
	assert_int_equal(jt_int(e, "schema_version"), 1);
	assert_int_equal(jt_int(e, "ranks"), RANKS);
	assert_string_equal(jt_str(e, "manifest"), "t-job.manifest.json");
	yajl_val inj = jt_array(e, "injected");
	assert_int_equal(YAJL_GET_ARRAY(inj)->len, 3);
	yajl_val late = YAJL_GET_ARRAY(inj)->values[0];
	assert_string_equal(jt_str(late, "kind"), "late_sender");
	assert_int_equal(jt_int(late, "rank"), 1);
	assert_int_equal(jt_int(late, "receiver"), 2);
	assert_int_equal(jt_int(late, "iteration"), 2);
	assert_int_equal(jt_int(late, "amount_ns"), LATE_NS);
	assert_string_equal(jt_str(late, "wait_call_path"), "MPI_Waitall");
	/* iteration 2's Allreduce is the third collective: no Barrier before it */
	assert_int_equal(jt_int(jt_at(late, "collective"), "seq"), 3);
	yajl_val slow = YAJL_GET_ARRAY(inj)->values[1];
	assert_string_equal(jt_str(slow, "kind"), "slow_rank");
	assert_int_equal(jt_int(slow, "rank"), 3);
	assert_int_equal(jt_int(slow, "amount_ns"), COMPUTE_NS);
	yajl_val imb = YAJL_GET_ARRAY(inj)->values[2];
	assert_string_equal(jt_str(imb, "kind"), "imbalance");
	assert_string_equal(jt_str(imb, "call_path"), "assemble");
	assert_int_equal(jt_int(imb, "max_rank"), 3);
	assert_int_equal(jt_int(imb, "max_ns"), 2 * REGION_NS);
	assert_true(jt_double(imb, "imbalance") > 1.3333 && jt_double(imb, "imbalance") < 1.3334);
	yajl_tree_free(e);
}

/* The whole of both files is the same. */
static void same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *ta = tu_read_file(a, &la), *tb = tu_read_file(b, &lb);

	assert_true(la > 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	free(ta);
	free(tb);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *text = tu_read_file(from, &len);

	tool_write(to, text, len);
	free(text);
}

static void a_manifest_stands_for_its_files(void **state)
{
	(void)state;
	char files[RANKS][4400], manifest[4400], renamed[4400], fake[4400];
	const char *by_files = tool_tmp("gen-by-files.json"),
		   *by_manifest = tool_tmp("gen-by-m.json");
	struct tool_run run;

	generate();
	for (int r = 0; r < RANKS; r++)
		rank_file(files[r], sizeof(files[r]), r);
	snprintf(manifest, sizeof(manifest), "%s/t-job.manifest.json", dir);
	tool_run(&run, NULL, "merge", "-o", by_files, files[0], files[1], files[2], files[3], NULL);
	assert_int_equal(run.status, 0);
	tool_run_free(&run);
	tool_run(&run, NULL, "merge", "-o", by_manifest, manifest, NULL);
	assert_int_equal(run.status, 0);
	assert_true(tool_has(run.err, "read from 4 files"));
	tool_run_free(&run);
	same_file(by_files, by_manifest);

	/* stats and diff of the manifest: those of its files */
	{
		struct tool_run a, b;

		tool_run(&a, NULL, "stats", "--json", "--top", "0", files[0], files[1], files[2],
			 files[3], NULL);
		tool_run(&b, NULL, "stats", "--json", "--top", "0", manifest, NULL);
		assert_int_equal(a.status, 0);
		assert_int_equal(b.status, 0);
		assert_true(tool_has(b.out, "\"MPI_Allreduce\""));
		assert_string_equal(a.out, b.out);
		tool_run_free(&a);
		tool_run_free(&b);
		tool_run(&a, NULL, "diff", "--json", manifest, "--", files[0], files[1], files[2],
			 files[3], NULL);
		assert_int_equal(a.status, 0);
		assert_true(tool_has(a.out, "\"files\":4,"));
		assert_true(tool_has(a.out, "\"slower\":0,\"faster\":0,"));
		assert_true(tool_has(a.out, "\"added\":0,\"removed\":0}"));
		tool_run_free(&a);
	}

	/* by its content: a manifest by any other name, and a trace named like one */
	snprintf(renamed, sizeof(renamed), "%s/listing.json", dir);
	copy_file(manifest, renamed);
	tool_run(&run, NULL, "merge", "-o", by_manifest, renamed, NULL);
	assert_int_equal(run.status, 0);
	tool_run_free(&run);
	same_file(by_files, by_manifest);
	snprintf(fake, sizeof(fake), "%s/rank2.manifest.json", dir);
	copy_file(files[2], fake);
	tool_run(&run, NULL, "merge", "-o", by_manifest, fake, NULL);
	assert_int_equal(run.status, 0);
	assert_true(tool_has(run.err, "read from 1 files") ||
		    tool_has(run.err, "read from 1 file"));
	tool_run_free(&run);

	/* another schema: refused, saying so */
	const char other[] = "{\"schema_version\":2,\"type\":\"ringtrace manifest\",\"files\":[]}";
	tool_write(renamed, other, strlen(other));
	tool_run(&run, NULL, "merge", "-o", by_manifest, renamed, NULL);
	assert_int_equal(run.status, 2);
	assert_true(tool_has(run.err, "a manifest of schema_version 2, not 1"));
	tool_run_free(&run);
}

static void window_takes_a_rank_of_the_manifest(void **state)
{
	(void)state;
	char file[4400], manifest[4400];
	const char *by_file = tool_tmp("gen-w-file.json"), *by_manifest = tool_tmp("gen-w-m.json");
	struct tool_run run;

	generate();
	rank_file(file, sizeof(file), 2);
	snprintf(manifest, sizeof(manifest), "%s/t-job.manifest.json", dir);
	tool_run(&run, NULL, "window", "--from", "200ms", "--to", "201ms", "-o", by_file, file,
		 NULL);
	assert_int_equal(run.status, 0);
	tool_run_free(&run);
	tool_run(&run, NULL, "window", "--rank", "2", "--from", "200ms", "--to", "201ms", "-o",
		 by_manifest, manifest, NULL);
	assert_int_equal(run.status, 0);
	tool_run_free(&run);
	same_file(by_file, by_manifest);
	/* four files and no rank asked, a rank it does not list: usage errors */
	tool_run(&run, NULL, "window", "--from", "200ms", "-o", by_manifest, manifest, NULL);
	assert_int_equal(run.status, 2);
	assert_true(tool_has(run.err, "lists 4 files: window reads one"));
	tool_run_free(&run);
	tool_run(&run, NULL, "window", "--rank", "7", "--from", "200ms", "-o", by_manifest,
		 manifest, NULL);
	assert_int_equal(run.status, 2);
	assert_true(tool_has(run.err, "lists 0 files of rank 7"));
	tool_run_free(&run);
}

/* `ringtrace report --json` of the files listed (a manifest, or them one by one) into
 * a parsed tree. */
static yajl_val report_of(const char *const *inputs, size_t n)
{
	const char *args[8] = {"report", "--json"};
	struct tool_run run;

	for (size_t i = 0; i < n; i++)
		args[2 + i] = inputs[i];
	args[2 + n] = NULL;
	tool_runv(&run, NULL, NULL, args);
	assert_int_equal(run.status, 0);
	yajl_val v = jt_parse(run.out, "report --json");
	tool_run_free(&run);
	return v;
}

static void report_finds_exactly_the_injected_delays(void **state)
{
	(void)state;
	char files[RANKS][4400], manifest[4400];

	generate();
	for (int r = 0; r < RANKS; r++)
		rank_file(files[r], sizeof(files[r]), r);
	snprintf(manifest, sizeof(manifest), "%s/t-job.manifest.json", dir);
	const char *one[] = {manifest};
	const char *four[] = {files[0], files[1], files[2], files[3]};
	yajl_val by_manifest = report_of(one, 1), by_files = report_of(four, RANKS);
	jt_expect_same(by_manifest, by_files);
	yajl_tree_free(by_files);

	/* one late sender: rank 2 waited 5 ms in its Waitall for rank 1 */
	yajl_val totals = jt_at(by_manifest, "wait_totals");
	assert_int_equal(jt_int(jt_at(totals, "late_sender"), "count"), 1);
	assert_near(jt_int(jt_at(totals, "late_sender"), "ns"), LATE_NS);
	assert_int_equal(jt_int(jt_at(totals, "late_receiver"), "count"), 0);
	yajl_val waits = jt_array(by_manifest, "waits");
	size_t late = 0, slow = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(waits)->len; i++) {
		yajl_val w = YAJL_GET_ARRAY(waits)->values[i];
		const char *kind = jt_str(w, "kind");
		long long count = jt_int(w, "count"), ns = jt_int(w, "ns");
		long long cause = jt_int(w, "cause_rank");
		if (strcmp(kind, "late_sender") == 0) {
			assert_int_equal(jt_int(w, "rank"), 2);
			assert_int_equal(cause, 1);
			assert_string_equal(jt_str(w, "path"), "MPI_Waitall");
			late++;
		} else if (ns > NOISE_NS * count) {
			/* above the noise, only what the delays cause: the slow rank at every
			 * Allreduce but iteration 2's, which the late pair reaches last */
			assert_string_equal(kind, "collective");
			assert_string_equal(jt_str(w, "path"), "MPI_Allreduce");
			assert_true(cause == 3 ? count == ITERATIONS - 1
					       : cause == 2 && count == 1);
			slow += cause == 3;
		}
	}
	assert_int_equal(late, 1);
	assert_int_equal(slow, RANKS - 1); /* ranks 0, 1 and 2 waited for rank 3 */
	/* the imbalanced region: max / mean = 2 / 1.5, the last rank's */
	yajl_val paths = jt_array(by_manifest, "paths");
	size_t found = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(paths)->len; i++) {
		yajl_val p = YAJL_GET_ARRAY(paths)->values[i];
		if (strcmp(jt_str(p, "path"), "assemble") != 0)
			continue;
		found++;
		assert_true(jt_double(p, "imbalance") > 1.3333 &&
			    jt_double(p, "imbalance") < 1.3334);
		assert_int_equal(jt_int(p, "max_rank"), RANKS - 1);
	}
	assert_int_equal(found, 1);
	yajl_tree_free(by_manifest);
}

/* stdout of [mpirun -np np] ringtrace report -j jobs --hold hold --json --top 0
 * MANIFEST. */
static char *report_text(int np, const char *jobs, const char *hold, const char *manifest)
{
	char cmd[12000], *out;
	const char *to = tool_tmp("gen-report.out");

	snprintf(cmd, sizeof(cmd), "%s%s%s '%s' report -j %s --hold %s --json --top 0 '%s' > '%s'",
#ifdef RTR_MPIEXEC
		 np > 0 ? RTR_MPIEXEC : "",
		 np > 0 ? " --allow-run-as-root --oversubscribe --timeout 60 -np " : "",
#else
		 "", "",
#endif
		 np > 0 ? (np == 2 ? "2" : "4") : "", RTR_TOOL_PATH, jobs, hold, manifest, to);
	assert_int_equal(system(cmd), 0);
	out = tu_read_file(to, NULL);
	assert_non_null(out);
	unlink(to);
	return out;
}

/* The same answer at every -j and K, and whatever the second reading takes from the
 * first: every file kept (the default), none (--hold 0: every file read twice), or
 * some (20 KiB: two files' partials of about 9 KiB, the others read again). */
static void report_of_a_manifest_is_the_same_at_every_j_and_k(void **state)
{
	static const char *const holds[] = {"256", "0", "20k"};
	char manifest[4400], *one, *other;

	(void)state;
	generate();
	snprintf(manifest, sizeof(manifest), "%s/t-job.manifest.json", dir);
	one = report_text(0, "1", "256", manifest);
	assert_true(strstr(one, "\"files\":4,") != NULL);
	assert_true(strstr(one, "\"kind\":\"barrier\"") != NULL);
	for (int h = 0; h < 3; h++) {
		other = report_text(0, h == 0 ? "2" : "1", holds[h], manifest);
		assert_string_equal(one, other);
		free(other);
	}
#ifdef RTR_MPIEXEC
	for (int np = 2; np <= 4; np += 2)
		for (int h = 0; h < 3; h++) {
			other = report_text(np, "1", holds[h], manifest);
			assert_string_equal(one, other);
			free(other);
		}
#endif
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(files_land_in_their_directories_and_check_clean),
		cmocka_unit_test(merge_joins_every_message_and_shows_the_delays),
		cmocka_unit_test(expected_names_exactly_the_injected_delays),
		cmocka_unit_test(a_manifest_stands_for_its_files),
		cmocka_unit_test(window_takes_a_rank_of_the_manifest),
		cmocka_unit_test(report_finds_exactly_the_injected_delays),
		cmocka_unit_test(report_of_a_manifest_is_the_same_at_every_j_and_k),
	};
	return cmocka_run_group_tests_name("tools_gen_ranks", tests, NULL, NULL);
}
