/* SPDX-License-Identifier: MIT */
/*
 * The MPI module (src/mpi/) under mpirun -np 4: examples/mpi_halo (linked with
 * the module) and tests/mpi_patterns.c (preloaded), each rank file strict JSON, every
 * MPI call a slice, every message one flow whose start and end are in the sender's
 * and the receiver's files with the same id, clock sync events at init and finalize;
 * and a rank killed before MPI_Finalize leaves a file that loads.
 */
#include <ringtrace.h>

#include "child.h"
#include "test_util.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#define RANKS	  4
#define TIMEOUT_S 60
#define MAX_FLOWS 8192

struct flow {
	char id[24];
	int rank;
	int start; /* "s"; else "f" */
};

struct ranks {
	struct tt_trace t[RANKS];
	struct flow flows[MAX_FLOWS];
	size_t nflows;
};

/* The rank files' suffix: .json, or .pftrace for Perfetto's format. */
static const char *rank_suffix = ".json";
/* A variable mpirun passes on too (-x NAME=VALUE), and the directory the job runs in:
 * NULL for none, the test's own. */
static const char *extra_env;
static const char *run_dir;

/* mpirun -np RANKS [-x LD_PRELOAD=preload] cmd..., files at dir/name-%r.json (or
 * rank_suffix); returns mpirun's wait status. */
static int run(const char *name, const char *preload, const char *const *cmd,
	       char files[RANKS][4096])
{
	char pattern[3900], env_file[4000], env_preload[4000], np[8];
	const char *argv[32] = {RTR_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np"};
	int n = 4;

	tu_temp_path(pattern, sizeof(pattern), "mpi", name, "");
	for (int r = 0; r < RANKS; r++) {
		snprintf(files[r], 4096, "%s-%d%s", pattern, r, rank_suffix);
		unlink(files[r]);
	}
	snprintf(env_file, sizeof(env_file), "RINGTRACE_FILE=%s-%%r%s", pattern, rank_suffix);
	snprintf(np, sizeof(np), "%d", RANKS);
	argv[n++] = np;
	argv[n++] = "--timeout"; /* mpirun ends a hung job itself */
	argv[n++] = "50";
	argv[n++] = "-x";
	argv[n++] = env_file;
	if (preload != NULL) {
		snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", preload);
		argv[n++] = "-x";
		argv[n++] = env_preload;
	}
	if (extra_env != NULL) {
		argv[n++] = "-x";
		argv[n++] = extra_env;
	}
	while (*cmd != NULL && n < 31)
		argv[n++] = *cmd++;
	argv[n] = NULL;
	pid_t pid = tu_fork();
	if (pid == 0) {
		if (run_dir != NULL && chdir(run_dir) != 0)
			_exit(126);
		execv(RTR_MPIEXEC, (char *const *)argv);
		_exit(127);
	}
	return tu_wait_child(pid, TIMEOUT_S);
}

/* Load the RANKS files strictly and gather their flows. */
static void load(struct ranks *k, char files[RANKS][4096])
{
	memset(k, 0, sizeof(*k));
	for (int r = 0; r < RANKS; r++) {
		if (tt_load(files[r], TT_CHECK_ESCAPES, &k->t[r]) != 0)
			fail_msg("rank %d: %s", r, k->t[r].error);
		assert_true(k->t[r].complete);
		for (size_t i = 0; i < k->t[r].n; i++) {
			const struct tt_event *e = &k->t[r].ev[i];
			if (strcmp(e->ph, "s") != 0 && strcmp(e->ph, "f") != 0)
				continue;
			assert_string_equal(e->cat, "mpi");
			assert_non_null(e->id);
			assert_true(k->nflows < MAX_FLOWS);
			struct flow *f = &k->flows[k->nflows++];
			snprintf(f->id, sizeof(f->id), "%s", e->id);
			f->rank = r;
			f->start = e->ph[0] == 's';
		}
	}
}

static void unload(struct ranks *k)
{
	for (int r = 0; r < RANKS; r++)
		tt_free(&k->t[r]);
}

/* Every flow start has exactly one end with its id, on another rank (or the same,
 * for a message to itself), and every end one start; returns the number of flows. */
static size_t check_flows(const struct ranks *k)
{
	size_t starts = 0;

	for (size_t i = 0; i < k->nflows; i++) {
		const struct flow *a = &k->flows[i];
		size_t ends = 0, others = 0;
		for (size_t j = 0; j < k->nflows; j++) {
			const struct flow *b = &k->flows[j];
			if (j == i || strcmp(a->id, b->id) != 0)
				continue;
			if (b->start != a->start)
				ends++;
			else
				others++;
		}
		if (ends != 1 || others != 0)
			fail_msg("flow %s (%s on rank %d): %zu partners, %zu alike", a->id,
				 a->start ? "start" : "end", a->rank, ends, others);
		starts += (size_t)a->start;
	}
	return starts;
}

/* Slices named name on rank r: X events (the writer joins a B and its E) and B/E
 * pairs. */
static size_t slices(const struct ranks *k, int r, const char *name)
{
	size_t b = 0, e = 0, x = 0;

	for (size_t i = 0; i < k->t[r].n; i++) {
		const struct tt_event *ev = &k->t[r].ev[i];
		if (ev->name == NULL || strcmp(ev->name, name) != 0)
			continue;
		assert_string_equal(ev->cat, "mpi");
		b += strcmp(ev->ph, "B") == 0;
		e += strcmp(ev->ph, "E") == 0;
		x += strcmp(ev->ph, "X") == 0;
	}
	assert_int_equal(b, e);
	return b + x;
}

/* The slices named name on rank r carry comm 1 (the world) and seq 1, 2, ... in file
 * order (the n-th collective on the world: the only ones the program calls). */
static void check_world_seq(const struct ranks *k, int r, const char *name, int64_t count)
{
	int64_t seq = 0;

	for (size_t i = 0; i < k->t[r].n; i++) {
		const struct tt_event *ev = &k->t[r].ev[i];
		if (ev->name == NULL || strcmp(ev->name, name) != 0 || strcmp(ev->ph, "E") == 0)
			continue;
		assert_int_equal(tu_arg_int(ev, "comm"), 1);
		assert_int_equal(tu_arg_int(ev, "seq"), ++seq);
	}
	assert_int_equal(seq, count);
}

/* The clock sync events of rank r: at least `min`, in the format the merge reads,
 * each offset within its bound of `want` (the injected offsets' difference). */
static void check_sync(const struct ranks *k, int r, size_t min, int64_t want)
{
	size_t n = 0;
	/* With the TSC, each process's clock is its own fit of the TSC to
	 * CLOCK_MONOTONIC (calibrated over 10 ms, then paired again every second), and two
	 * fits differ by up to a few hundred ns: the measurement sees that difference too,
	 * which the merge then corrects. With CLOCK_MONOTONIC the ranks share one clock and
	 * the bound holds exactly. */
	const struct tt_arg *clock = tt_arg(&k->t[r].ev[0], "clock");
	int64_t fits = clock != NULL && clock->s != NULL && strcmp(clock->s, "tsc") == 0 ? 2000 : 0;

	for (size_t i = 0; i < k->t[r].n; i++) {
		const struct tt_event *e = &k->t[r].ev[i];
		if (e->name == NULL || strcmp(e->name, "ringtrace: clock sync") != 0)
			continue;
		assert_string_equal(e->ph, "i");
		assert_string_equal(e->scope, "p");
		assert_string_equal(e->cat, "ringtrace");
		assert_int_equal(tu_arg_int(e, "reference_rank"), 0);
		assert_int_equal(tu_arg_int(e, "rank"), r);
		assert_int_equal(tu_arg_int(e, "rounds"), 50);
		int64_t rtt = tu_arg_int(e, "rtt_ns"), off = tu_arg_int(e, "offset_ns");
		int64_t bound = tu_arg_int(e, "error_ns");
		assert_true(tu_arg_int(e, "at_ns") > 0);
		if (r == 0) {
			assert_int_equal(off, 0);
			assert_int_equal(rtt, 0);
			assert_int_equal(bound, 0);
		} else {
			/* One host: the offset is the injected one within its error bound
			 * (a causal bound: it holds whatever the load) and the TSC fits'
			 * difference; the bound is within rtt / 2, below 50 ms even
			 * oversubscribed. */
			assert_true(rtt > 0 && rtt < 50000000);
			assert_true(bound >= 0 && bound <= (rtt + 1) / 2);
			if (off > want + bound + 1 + fits || off < want - bound - 1 - fits)
				fail_msg("rank %d: offset %lld ns, error bound %lld ns (+ %lld ns "
					 "for the TSC fits), want %lld",
					 r, (long long)off, (long long)bound, (long long)fits,
					 (long long)want);
			print_message("rank %d: offset error %lld ns (bound %lld, rtt %lld)\n", r,
				      (long long)(off - want), (long long)bound, (long long)rtt);
		}
		n++;
	}
	if (n < min)
		fail_msg("rank %d: %zu clock sync events, want %zu", r, n, min);
}

static void check_named(const struct ranks *k, int r)
{
	int named = 0;

	for (size_t i = 0; i < k->t[r].n; i++) {
		const struct tt_event *e = &k->t[r].ev[i];
		const struct tt_arg *a = tt_arg(e, "name");
		if (strcmp(e->ph, "M") == 0 && strcmp(e->name, "process_name") == 0 && a) {
			char want[16];
			snprintf(want, sizeof(want), "rank %d", r);
			assert_string_equal(a->s, want);
			named = 1;
		}
	}
	assert_true(named);
	assert_int_equal(tu_arg_int(&k->t[r].ev[0], "rank"), r);
	assert_int_equal(tu_arg_int(&k->t[r].ev[0], "world_size"), RANKS);
}

static int by_text(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* The nonblocking collectives rank r's Wait and Test slices say they completed (their
 * "collectives"), against the calls that started them: each call once, named by its
 * comm, seq and root_world args. */
static void completions_name_their_calls(const struct ranks *k, int r, size_t calls)
{
	static char want[64][96], got[64][96];
	size_t nw = 0, ng = 0;

	for (size_t i = 0; i < k->t[r].n; i++) {
		const struct tt_event *e = &k->t[r].ev[i];
		const struct tt_arg *seq = tt_arg(e, "seq"), *done = tt_arg(e, "collectives");

		if (e->name != NULL && strncmp(e->name, "MPI_I", 5) == 0 && seq != NULL &&
		    strcmp(e->ph, "E") != 0) {
			const struct tt_arg *root = tt_arg(e, "root_world");
			assert_true(nw < 64);
			if (root != NULL)
				snprintf(want[nw++], 96, "%s@%s:%s:%s", e->name,
					 tt_arg(e, "comm")->raw, seq->raw, root->raw);
			else
				snprintf(want[nw++], 96, "%s@%s:%s", e->name,
					 tt_arg(e, "comm")->raw, seq->raw);
		}
		if (done == NULL)
			continue;
		assert_true(strncmp(e->name, "MPI_Wait", 8) == 0 ||
			    strncmp(e->name, "MPI_Test", 8) == 0);
		assert_null(tt_arg(e, "collectives_left_out"));
		char text[512], *save = NULL;
		snprintf(text, sizeof(text), "%s", done->s);
		for (char *w = strtok_r(text, " ", &save); w != NULL;
		     w = strtok_r(NULL, " ", &save)) {
			assert_true(ng < 64);
			snprintf(got[ng++], 96, "%s", w);
		}
	}
	assert_int_equal(nw, calls);
	assert_int_equal(ng, nw);
	qsort(want, nw, sizeof(want[0]), by_text);
	qsort(got, ng, sizeof(got[0]), by_text);
	for (size_t i = 0; i < nw; i++)
		assert_string_equal(got[i], want[i]);
}

static void halo_example_traces_every_call_and_message(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;
	const int steps = 12;

	(void)state;
	const char *const cmd[] = {RTR_EXAMPLE_MPI_HALO, "12", NULL};
	tu_expect_exit_0(run("halo", NULL, cmd, files));
	load(&k, files);
	for (int r = 0; r < RANKS; r++) {
		check_named(&k, r);
		assert_int_equal(slices(&k, r, "MPI_Init"), 1);
		assert_int_equal(slices(&k, r, "MPI_Irecv"), 2 * steps);
		assert_int_equal(slices(&k, r, "MPI_Isend"), 2 * steps);
		assert_int_equal(slices(&k, r, "MPI_Waitall"), steps);
		assert_int_equal(slices(&k, r, "MPI_Allreduce"), steps);
		check_world_seq(&k, r, "MPI_Allreduce", steps);
		assert_int_equal(slices(&k, r, "MPI_Finalize"), 1);
		check_sync(&k, r, 3, 0); /* init, rtr_mpi_sync() halfway, finalize */
	}
	assert_int_equal(check_flows(&k), (size_t)RANKS * 2 * steps);
	unload(&k);
}

static void preloaded_patterns_join_wildcards_nonblocking_and_same_tags(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;

	(void)state;
	const char *const cmd[] = {RTR_MPI_PATTERNS, "all", NULL};
	tu_expect_exit_0(run("patterns", RTR_MPI_LIB, cmd, files));
	load(&k, files);
	for (int r = 0; r < RANKS; r++) {
		check_named(&k, r);
		check_sync(&k, r, 2, 0);
		/* Ibarrier, Ibcast, Iallreduce; the eight completed by one Waitall */
		completions_name_their_calls(&k, r, 3 + 8);
		assert_int_equal(slices(&k, r, "MPI_Sendrecv"), 1);
		assert_int_equal(slices(&k, r, "MPI_Sendrecv_replace"), 1);
		assert_int_equal(slices(&k, r, "MPI_Comm_split"), 1);
		assert_int_equal(slices(&k, r, "MPI_Comm_free"), 2);
		assert_int_equal(slices(&k, r, "MPI_Comm_dup"), 1);
		assert_int_equal(slices(&k, r, "MPI_Win_fence"), 4);
		assert_int_equal(slices(&k, r, "MPI_Put"), 2);
		assert_int_equal(slices(&k, r, "MPI_Get"), 2);
		assert_int_equal(slices(&k, r, "MPI_Accumulate"), 1);
		assert_int_equal(slices(&k, r, "MPI_Win_lock"), 1);
		assert_int_equal(slices(&k, r, "MPI_Win_unlock"), 1);
		assert_int_equal(slices(&k, r, "MPI_Testall"), 1);
		assert_true(slices(&k, r, "MPI_Waitsome") >= 1);
		assert_int_equal(slices(&k, r, "MPI_Barrier"), 3);
		assert_int_equal(slices(&k, r, "MPI_Send_init"), 1);
		assert_int_equal(slices(&k, r, "MPI_Recv_init"), 1);
		assert_int_equal(slices(&k, r, "MPI_Startall"), 2);
		assert_int_equal(slices(&k, r, "MPI_Start"), 2);
		assert_int_equal(slices(&k, r, "MPI_Win_allocate"), 1);
		assert_int_equal(slices(&k, r, "MPI_Win_free"), 2);
		static const char *const rma[] = {"MPI_Win_lock_all",	  "MPI_Rput",
						  "MPI_Win_flush",	  "MPI_Fetch_and_op",
						  "MPI_Compare_and_swap", "MPI_Get_accumulate",
						  "MPI_Win_flush_all",	  "MPI_Win_unlock_all",
						  "MPI_Win_post",	  "MPI_Win_start",
						  "MPI_Win_complete",	  "MPI_Win_wait"};
		for (size_t i = 0; i < sizeof(rma) / sizeof(rma[0]); i++)
			assert_int_equal(slices(&k, r, rma[i]), 1);
		/* clang-format off */
		static const char *const coll[] = {
			"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Scatter",
			"MPI_Allgather", "MPI_Alltoall", "MPI_Scan", "MPI_Gatherv", "MPI_Scatterv",
			"MPI_Allgatherv", "MPI_Alltoallv", "MPI_Exscan", "MPI_Reduce_scatter",
			"MPI_Ibarrier", "MPI_Ibcast", "MPI_Iallreduce", "MPI_Ireduce",
			"MPI_Ialltoall", "MPI_Igather", "MPI_Iscatter", "MPI_Iallgather",
			"MPI_Iscan", "MPI_Iexscan", "MPI_Ireduce_scatter_block",
			"MPI_Reduce_scatter_block", "MPI_Alltoallw"};
		/* clang-format on */
		for (size_t i = 0; i < sizeof(coll) / sizeof(coll[0]); i++)
			assert_int_equal(slices(&k, r, coll[i]), 1);
	}
	assert_int_equal(slices(&k, 0, "MPI_Recv"), 3 + 1);
	assert_int_equal(slices(&k, 0, "MPI_Waitany"), 3);
	assert_int_equal(slices(&k, 0, "MPI_Probe"), 1);
	assert_int_equal(slices(&k, 1, "MPI_Send"), 2 + 3 + 1); /* wildcards, same tag, half */
	assert_int_equal(slices(&k, 1, "MPI_Isend"), 3);
	assert_int_equal(slices(&k, 2, "MPI_Irecv"), 3);
	assert_int_equal(slices(&k, 3, "MPI_Issend"), 1);
	assert_int_equal(slices(&k, 0, "MPI_Ssend"), 1);
	assert_true(slices(&k, 1, "MPI_Iprobe") >= 1);
	assert_true(slices(&k, 3, "MPI_Test") >= 1);
	assert_int_equal(slices(&k, 2, "MPI_Send"), 2 + 2); /* wildcards, matched probes */
	assert_int_equal(slices(&k, 3, "MPI_Mprobe"), 1);
	assert_int_equal(slices(&k, 3, "MPI_Mrecv"), 1);
	assert_true(slices(&k, 3, "MPI_Improbe") >= 1);
	assert_int_equal(slices(&k, 3, "MPI_Imrecv"), 1);
	/* wildcards 3 + 3, same tag 6, Sendrecv 4, _replace 4, Issend 1, halves 2, Ssend 1,
	 * persistent 3 rounds of 4, matched probes 2 */
	assert_int_equal(check_flows(&k), 3 + 3 + 6 + 4 + 4 + 1 + 2 + 1 + 12 + 2);
	unload(&k);
}

/* The id of the one flow event of rank r inside the nth (from 0, in time order)
 * slice named name: an X, or a B and the next E of that name. */
static const char *flow_in_slice(const struct ranks *k, int r, const char *name, int nth)
{
	const struct tt_trace *t = &k->t[r];
	uint64_t from = 0, to = 0;
	int seen = -1;

	for (size_t i = 0; i < t->n && seen < nth; i++) {
		const struct tt_event *e = &t->ev[i];
		if (e->name == NULL || strcmp(e->name, name) != 0)
			continue;
		if (strcmp(e->ph, "X") == 0) {
			from = e->ts_ns;
			to = e->ts_ns + e->dur_ns;
			seen++;
		} else if (strcmp(e->ph, "B") == 0) {
			from = e->ts_ns;
			for (size_t j = i + 1; j < t->n; j++)
				if (t->ev[j].name != NULL && strcmp(t->ev[j].name, name) == 0 &&
				    strcmp(t->ev[j].ph, "E") == 0) {
					to = t->ev[j].ts_ns;
					break;
				}
			seen++;
		}
	}
	if (seen < nth)
		fail_msg("rank %d: no slice %s number %d", r, name, nth);
	const char *id = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if ((strcmp(e->ph, "s") == 0 || strcmp(e->ph, "f") == 0) && e->ts_ns >= from &&
		    e->ts_ns <= to) {
			if (id != NULL)
				fail_msg("rank %d: two flows in %s number %d", r, name, nth);
			id = e->id;
		}
	}
	if (id == NULL)
		fail_msg("rank %d: no flow in %s number %d", r, name, nth);
	return id;
}

static void receives_numbered_in_matching_order_not_completion_order(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;

	(void)state;
	const char *const cmd[] = {RTR_MPI_PATTERNS, "order", NULL};
	tu_expect_exit_0(run("order", RTR_MPI_LIB, cmd, files));
	load(&k, files);
	assert_int_equal(check_flows(&k), 5);
	/* Rank 0 waits for the tag 15 receives last to first: its first Wait has the
	 * third message, its last (the wildcard's) the first. */
	for (int w = 0; w < 3; w++)
		assert_string_equal(flow_in_slice(&k, 0, "MPI_Wait", w),
				    flow_in_slice(&k, 1, "MPI_Send", 2 - w));
	/* The blocking Recv(1, 16) has the second of tag 16, the Irecv(1, MPI_ANY_TAG)
	 * posted before it, completed by the fourth Wait, the first. */
	assert_string_equal(flow_in_slice(&k, 0, "MPI_Recv", 0),
			    flow_in_slice(&k, 1, "MPI_Send", 4));
	assert_string_equal(flow_in_slice(&k, 0, "MPI_Wait", 3),
			    flow_in_slice(&k, 1, "MPI_Send", 3));
	unload(&k);
}

/* ------------------------------------------------------------------ merged */

/* `ringtrace merge -o out files...` of the RANKS files; exits 0. */
/* The ringtrace command with argv (argv[0] RTR_TOOL), which must exit 0. */
static void run_tool(const char *const *argv)
{
	pid_t pid = tu_fork();
	if (pid == 0) {
		execv(RTR_TOOL, (char *const *)argv);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TIMEOUT_S));
}

static void merge_files(char files[RANKS][4096], const char *out)
{
	const char *argv[RANKS + 5] = {RTR_TOOL, "merge", "-o", out};

	for (int r = 0; r < RANKS; r++)
		argv[4 + r] = files[r];
	argv[RANKS + 4] = NULL;
	run_tool(argv);
}

static size_t check_merged(const char *path);

/* Merge the files (temporary name), check the result has `sent` messages. */
static void check_merge_of(char files[RANKS][4096], const char *name, size_t sent)
{
	char out[4096];

	tu_temp_path(out, sizeof(out), "mpi", name, ".json");
	merge_files(files, out);
	assert_int_equal(check_merged(out), sent);
	unlink(out);
}

struct slice {
	int64_t pid, tid;
	uint64_t begin, end;
};

#define MAX_SLICES 65536

/* The innermost slice of (pid, tid) around ts (the latest begun), or NULL. */
static const struct slice *around(const struct slice *sl, size_t n, int64_t pid, int64_t tid,
				  uint64_t ts)
{
	const struct slice *best = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct slice *x = &sl[i];
		if (x->pid == pid && x->tid == tid && x->begin <= ts && ts <= x->end &&
		    (best == NULL || x->begin >= best->begin))
			best = x;
	}
	return best;
}

/*
 * The merged file of a run whose ranks' clocks were 50 ms apart: strict JSON, ranks
 * named and ordered, every message one arrow (one s and one f of its id), and no
 * receive ending before its send begins (the slices the flow events bind to), nor
 * a receive's f before its send's s. Returns the number of messages.
 */
static size_t check_merged(const char *path)
{
	static struct slice sl[MAX_SLICES];
	static size_t open_at[64];
	struct tt_trace t;
	size_t n = 0, messages = 0, depth = 0;
	int named[RANKS] = {0}, nsorted = 0;
	int64_t pids[RANKS] = {0}, sorted[64][2];

	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s: %s", path, t.error);
	assert_true(t.complete);
	/* Slices: X events, and B/E pairs in file order per thread (one thread a rank). */
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (strcmp(e->ph, "X") == 0) {
			assert_true(n < MAX_SLICES);
			sl[n++] = (struct slice){e->pid, e->tid, e->ts_ns, e->ts_ns + e->dur_ns};
		} else if (strcmp(e->ph, "B") == 0) {
			assert_true(n < MAX_SLICES && depth < 64);
			open_at[depth++] = n;
			sl[n++] = (struct slice){e->pid, e->tid, e->ts_ns, UINT64_MAX};
		} else if (strcmp(e->ph, "E") == 0) {
			/* The innermost open B of the thread. */
			size_t k = depth;
			while (k > 0 && (sl[open_at[k - 1]].pid != e->pid ||
					 sl[open_at[k - 1]].tid != e->tid))
				k--;
			assert_true(k > 0);
			struct slice *b = &sl[open_at[k - 1]];
			assert_true(e->ts_ns >= b->begin);
			b->end = e->ts_ns;
			memmove(&open_at[k - 1], &open_at[k], (depth - k) * sizeof(open_at[0]));
			depth--;
		} else if (strcmp(e->ph, "M") == 0 && strcmp(e->name, "process_name") == 0) {
			const char *name = tt_arg(e, "name")->s;
			int r = -1;
			assert_int_equal(sscanf(name, "rank %d \xc2\xb7 ", &r), 1);
			assert_true(r >= 0 && r < RANKS);
			named[r]++;
			pids[r] = e->pid;
		} else if (strcmp(e->ph, "M") == 0 && strcmp(e->name, "process_sort_index") == 0) {
			assert_true(nsorted < 64); /* the merge's own, and the rank's own */
			sorted[nsorted][0] = e->pid;
			sorted[nsorted++][1] = tu_arg_int(e, "sort_index");
		}
	}
	assert_int_equal(depth, 0);
	/* Each rank named once, and sorted among the ranks by its rank. */
	for (int r = 0; r < RANKS; r++)
		assert_int_equal(named[r], 1);
	assert_true(nsorted >= RANKS);
	for (int i = 0; i < nsorted; i++)
		for (int r = 0; r < RANKS; r++)
			if (pids[r] == sorted[i][0])
				assert_int_equal(sorted[i][1] / 1024, r);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *s = &t.ev[i], *f = NULL;
		if (strcmp(s->ph, "s") != 0)
			continue;
		for (size_t j = 0; j < t.n; j++) {
			const struct tt_event *e = &t.ev[j];
			if (strcmp(e->ph, "f") == 0 && strcmp(e->id, s->id) == 0) {
				if (f != NULL)
					fail_msg("message %s: two receives", s->id);
				f = e;
			}
		}
		if (f == NULL)
			fail_msg("message %s (line %zu): no receive", s->id, s->line);
		if (f->ts_ns < s->ts_ns)
			fail_msg("message %s: received at %llu ns, sent at %llu", s->id,
				 (unsigned long long)f->ts_ns, (unsigned long long)s->ts_ns);
		const struct slice *send = around(sl, n, s->pid, s->tid, s->ts_ns);
		const struct slice *recv = around(sl, n, f->pid, f->tid, f->ts_ns);
		assert_non_null(send);
		assert_non_null(recv);
		if (recv->end < send->begin)
			fail_msg("message %s: its receive ends at %llu ns, before its send begins "
				 "at %llu",
				 s->id, (unsigned long long)recv->end,
				 (unsigned long long)send->begin);
		messages++;
	}
	/* And no receive without its send. */
	for (size_t j = 0; j < t.n; j++) {
		const struct tt_event *e = &t.ev[j];
		size_t sends = 0;
		if (strcmp(e->ph, "f") != 0)
			continue;
		for (size_t i = 0; i < t.n; i++)
			sends += strcmp(t.ev[i].ph, "s") == 0 && strcmp(t.ev[i].id, e->id) == 0;
		assert_int_equal(sends, 1);
	}
	tt_free(&t);
	return messages;
}

/* RINGTRACE_CLOCK_OFFSET_NS of (r - 1) * 50 ms on rank r: each rank's measured offset
 * to rank 0 is the injected difference, within the measurement's error bound; and
 * the halo's ranks merge into one causal timeline. */
static void clock_sync_measures_simulated_offsets(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;

	(void)state;
	const char *const cmd[] = {"/bin/sh", "-c",
				   "RINGTRACE_CLOCK_OFFSET_NS=$(((OMPI_COMM_WORLD_RANK - 1) * "
				   "50000000)) exec " RTR_EXAMPLE_MPI_HALO " 4",
				   NULL};
	tu_expect_exit_0(run("offsets", NULL, cmd, files));
	load(&k, files);
	for (int r = 0; r < RANKS; r++)
		check_sync(&k, r, 3, -(int64_t)r * 50000000);
	size_t sent = check_flows(&k);
	unload(&k);
	/* Merged: every halo message one arrow pointing forward, ranks named and sorted. */
	check_merge_of(files, "offsets-merged", sent);
}

/* The patterns (wildcards, nonblocking, the same tag in a row), preloaded, with rank
 * clocks -50, +50, -50, +50 ms off, merged: every message an arrow that points
 * forward, every rank named. */
static void merged_ranks_with_offsets_have_joined_forward_arrows(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;

	(void)state;
	const char *const cmd[] = {
		"/bin/sh", "-c",
		"RINGTRACE_CLOCK_OFFSET_NS=$(((OMPI_COMM_WORLD_RANK % 2 * 2 - 1) "
		"* 50000000)) exec " RTR_MPI_PATTERNS " all",
		NULL};
	tu_expect_exit_0(run("merged", RTR_MPI_LIB, cmd, files));
	load(&k, files);
	for (int r = 0; r < RANKS; r++)
		check_sync(&k, r, 2, r % 2 == 0 ? 0 : -100000000);
	size_t sent = check_flows(&k);
	unload(&k);
	check_merge_of(files, "merged", sent);
}

/* `ringtrace convert` of each file in files to JSON, into json. */
static void convert_files(char files[RANKS][4096], char json[RANKS][4096])
{
	for (int r = 0; r < RANKS; r++) {
		snprintf(json[r], 4096, "%s.json", files[r]);
		const char *argv[] = {RTR_TOOL, "convert", "--to",   "json",
				      "-o",	json[r],   files[r], NULL};
		run_tool(argv);
	}
}

/* The same with the ranks writing Perfetto's format (RINGTRACE_FILE ending in
 * .pftrace): each rank's file converted has its clock sync measurements and every
 * message's flow, and merged straight from the .pftrace files the arrows are joined
 * and point forward: the merge reads the measurements from a Perfetto trace too. */
static void perfetto_rank_files_merge_aligned(void **state)
{
	char files[RANKS][4096], json[RANKS][4096];
	static struct ranks k;

	(void)state;
	const char *const cmd[] = {
		"/bin/sh", "-c",
		"RINGTRACE_CLOCK_OFFSET_NS=$(((OMPI_COMM_WORLD_RANK % 2 * 2 - 1) "
		"* 50000000)) exec " RTR_EXAMPLE_MPI_HALO " 8",
		NULL};
	rank_suffix = ".pftrace";
	int status = run("perfetto", NULL, cmd, files);
	rank_suffix = ".json";
	tu_expect_exit_0(status);
	convert_files(files, json);
	load(&k, json);
	for (int r = 0; r < RANKS; r++) {
		check_named(&k, r);
		check_sync(&k, r, 3, r % 2 == 0 ? 0 : -100000000);
		unlink(json[r]);
	}
	size_t sent = check_flows(&k);
	assert_int_equal(sent, (size_t)RANKS * 2 * 8);
	unload(&k);
	check_merge_of(files, "perfetto-merged", sent);
}

/* At MPI_THREAD_MULTIPLE the tables are under the lock: threads numbering their own
 * tags at once still give every message one flow. */
static void threads_at_thread_multiple_join_every_message(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;
	const int threads = 3, rounds = 250; /* as in mpi_patterns.c */

	(void)state;
	const char *const cmd[] = {RTR_MPI_PATTERNS, "threads", NULL};
	int status = run("threads", RTR_MPI_LIB, cmd, files);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip(); /* MPI without MPI_THREAD_MULTIPLE */
	tu_expect_exit_0(status);
	load(&k, files);
	for (int r = 0; r < RANKS; r++) {
		assert_int_equal(slices(&k, r, "MPI_Irecv"), threads * rounds);
		assert_int_equal(slices(&k, r, "MPI_Isend"), threads * rounds);
	}
	assert_int_equal(check_flows(&k), (size_t)RANKS * threads * rounds);
	unload(&k);
}

/* ------------------------------------------------------------------ polls */

#define POLLS 100 /* as in mpi_patterns.c */

static int is_poll_name(const char *k)
{
	static const char *const names[] = {"MPI_Test",	    "MPI_Testany", "MPI_Testall",
					    "MPI_Testsome", "MPI_Iprobe",  "MPI_Improbe"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(k, names[i]) == 0)
			return 1;
	return 0;
}

/* Whether e is a folded slice of polls (its first argument "polls"), every value it
 * says checked: its calls, the calls per name (known names, summing to the calls), a
 * count of requests when tests are among them, the time inside the calls within its
 * duration, its name. Returns its calls, or 0 when it is not one. */
static int64_t check_folded(const struct tt_event *e)
{
	int64_t sum = 0, inside = -1;
	size_t names = 0;
	const char *one = NULL;
	int has_count = 0, tests = 0;

	if (strcmp(e->ph, "X") != 0 || e->nargs == 0 || strcmp(e->args[0].key, "polls") != 0)
		return 0;
	assert_string_equal(e->cat, "mpi");
	for (size_t i = 1; i < e->nargs; i++) {
		const struct tt_arg *a = &e->args[i];
		if (strcmp(a->key, "count") == 0) {
			assert_int_equal(i, 1);
			assert_true(a->i > 0);
			has_count = 1;
		} else if (strcmp(a->key, "poll_ns") == 0) {
			assert_int_equal(i, e->nargs - 1);
			inside = a->i;
		} else {
			if (!is_poll_name(a->key))
				fail_msg("line %zu: a folded slice counts %s", e->line, a->key);
			assert_true(a->i > 0);
			sum += a->i;
			names++;
			one = a->key;
			tests |= strncmp(a->key, "MPI_Test", 8) == 0;
		}
	}
	assert_true(e->args[0].i > 0);
	assert_int_equal(sum, e->args[0].i);
	assert_true(inside >= 0 && (uint64_t)inside <= e->dur_ns);
	assert_int_equal(has_count, tests);
	assert_string_equal(e->name, names == 1 ? one : "MPI polls");
	return e->args[0].i;
}

/* A slice of a rank file: an X, or a B and its E (in file order on the rank's one
 * thread), with its times. */
struct span_of {
	const struct tt_event *e; /* the X or the B */
	uint64_t begin, end;
};

static int by_begin(const void *a, const void *b)
{
	const struct span_of *x = a, *y = b;

	return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The slices of t, by their start (free() them), *n of them: as many as the rank
 * made, which under load is thousands of polls with RINGTRACE_MPI_POLLS=all. */
static struct span_of *spans_of(const struct tt_trace *t, size_t *count)
{
	size_t n = 0, open[64], depth = 0;
	struct span_of *s = calloc(t->n + 1, sizeof(*s));

	assert_non_null(s);
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (strcmp(e->ph, "X") == 0 || strcmp(e->ph, "B") == 0) {
			s[n] = (struct span_of){e, e->ts_ns, e->ts_ns + e->dur_ns};
			if (e->ph[0] == 'B') {
				assert_true(depth < 64);
				open[depth++] = n;
			}
			n++;
		} else if (strcmp(e->ph, "E") == 0) {
			assert_true(depth > 0);
			s[open[--depth]].end = e->ts_ns;
		}
	}
	assert_int_equal(depth, 0);
	qsort(s, n, sizeof(*s), by_begin);
	*count = n;
	return s;
}

/* The slices named name of s[0, n) that begin in [from, to) and are not folded. */
static size_t unfolded(const struct span_of *s, size_t n, uint64_t from, uint64_t to,
		       const char *name)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i].begin >= from && s[i].begin < to && s[i].e->name != NULL &&
		     strcmp(s[i].e->name, name) == 0 && check_folded(s[i].e) == 0;
	return k;
}

/* The first slice named name of s[0, n). */
static const struct span_of *first_named(const struct span_of *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].e->name != NULL && strcmp(s[i].e->name, name) == 0)
			return &s[i];
	fail_msg("no slice %s", name);
	return NULL;
}

/* Rank 0 polls POLLS rounds of Testany, Test and Iprobe that cannot complete, sends a
 * go-ahead, then polls until its receives complete (mpi_patterns.c): the first rounds
 * are one slice that counts each call, before the send; each call that completes
 * something is a slice of its own, around the flow of its message; every message is
 * joined across the files. */
static void polls_fold_and_completing_calls_keep_their_flows(void **state)
{
	char files[RANKS][4096];
	static struct ranks k;
	struct span_of *s;

	(void)state;
	const char *const cmd[] = {RTR_MPI_PATTERNS, "polls", NULL};
	tu_expect_exit_0(run("polls", RTR_MPI_LIB, cmd, files));
	load(&k, files);
	assert_int_equal(check_flows(&k), 4); /* the go-ahead, tags 20, 22, 23 */
	const struct tt_trace *t = &k.t[0];
	size_t n;
	s = spans_of(t, &n);
	const struct span_of *fold = NULL;
	int64_t testany = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t calls = check_folded(s[i].e);
		if (calls > 0 && fold == NULL)
			fold = &s[i];
		const struct tt_arg *a = tt_arg(s[i].e, "MPI_Testany");
		testany += calls > 0 && a != NULL ? a->i : 0;
	}
	assert_non_null(fold);
	const struct tt_event *f = fold->e;
	assert_string_equal(f->name, "MPI polls");
	assert_int_equal(f->nargs, 6);
	static const char *const keys[] = {"polls",    "count",	     "MPI_Testany",
					   "MPI_Test", "MPI_Iprobe", "poll_ns"};
	const int64_t values[] = {3 * POLLS, 2, POLLS, POLLS, POLLS};
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(f->args[i].key, keys[i]);
		if (i < 5)
			assert_int_equal(f->args[i].i, values[i]);
	}
	/* then the go-ahead, after the polls, and none of them a slice of its own */
	const struct span_of *send = first_named(s, n, "MPI_Send");
	assert_true(send->begin >= fold->end);
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Testany"), 0);
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Test"), 0);
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Iprobe"), 0);
	/* the calls that completed something: two Testany, one Iprobe, each its own slice;
	 * each message's f inside the Testany or the Recv that completes it */
	assert_int_equal(unfolded(s, n, send->begin, UINT64_MAX, "MPI_Testany"), 2);
	assert_int_equal(unfolded(s, n, send->begin, UINT64_MAX, "MPI_Test"), 0);
	assert_int_equal(unfolded(s, n, send->begin, UINT64_MAX, "MPI_Iprobe"), 1);
	size_t ends = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		const char *in = NULL;
		if (strcmp(e->ph, "f") != 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (s[j].begin <= e->ts_ns && e->ts_ns <= s[j].end &&
			    check_folded(s[j].e) == 0)
				in = s[j].e->name;
		assert_non_null(in);
		assert_string_equal(in, ends < 2 ? "MPI_Testany" : "MPI_Recv");
		ends++;
	}
	assert_int_equal(ends, 3);
	assert_true(testany >= POLLS);
	unload(&k);

	/* RINGTRACE_MPI_POLLS=all: every call a slice, none folded */
	extra_env = "RINGTRACE_MPI_POLLS=all";
	int status = run("polls-all", RTR_MPI_LIB, cmd, files);
	extra_env = NULL;
	tu_expect_exit_0(status);
	load(&k, files);
	assert_int_equal(check_flows(&k), 4);
	for (int r = 0; r < RANKS; r++)
		for (size_t i = 0; i < k.t[r].n; i++)
			assert_int_equal(check_folded(&k.t[r].ev[i]), 0);
	free(s);
	s = spans_of(&k.t[0], &n);
	send = first_named(s, n, "MPI_Send");
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Testany"), POLLS);
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Test"), POLLS);
	assert_int_equal(unfolded(s, n, 0, send->begin, "MPI_Iprobe"), POLLS);
	free(s);
	unload(&k);
}

/* ------------------------------------------------------------------ hpcc */

#ifdef RTR_HPCC
/* HPC Challenge's input (read from the working directory): the example Debian ships,
 * with a problem of 200 (1000 there) in blocks of 40, so that the job takes seconds. */
static const char hpccinf[] =
	"HPLinpack benchmark input file\n"
	"Innovative Computing Laboratory, University of Tennessee\n"
	"HPL.out      output file name (if any)\n"
	"8            device out (6=stdout,7=stderr,file)\n"
	"1            # of problems sizes (N)\n"
	"200          Ns\n"
	"1            # of NBs\n"
	"40           NBs\n"
	"0            PMAP process mapping (0=Row-,1=Column-major)\n"
	"1            # of process grids (P x Q)\n"
	"2            Ps\n"
	"2            Qs\n"
	"16.0         threshold\n"
	"1            # of panel fact\n"
	"2            PFACTs (0=left, 1=Crout, 2=Right)\n"
	"1            # of recursive stopping criterium\n"
	"4            NBMINs (>= 1)\n"
	"1            # of panels in recursion\n"
	"2            NDIVs\n"
	"1            # of recursive panel fact.\n"
	"1            RFACTs (0=left, 1=Crout, 2=Right)\n"
	"1            # of broadcast\n"
	"1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)\n"
	"1            # of lookahead depth\n"
	"1            DEPTHs (>=0)\n"
	"2            SWAP (0=bin-exch,1=long,2=mix)\n"
	"64           swapping threshold\n"
	"0            L1 in (0=transposed,1=no-transposed) form\n"
	"0            U  in (0=transposed,1=no-transposed) form\n"
	"1            Equilibration (0=no,1=yes)\n"
	"8            memory alignment in double (> 0)\n"
	"##### This line (no. 32) is ignored (it serves as a separator). ######\n"
	"0                               Number of additional problem sizes for PTRANS\n"
	"1200 10000 30000                values of N\n"
	"0                               number of additional blocking sizes for PTRANS\n"
	"40 9 8 13 13 20 16 32 64        values of NB\n";

/* What a rank file holds: its event objects, its folded slices, per poll name the
 * calls folded and those not (slices of their own), and its flows. */
struct rank_polls {
	size_t objects, folded;
	int64_t calls[6], own[6];
};

static const char *const hpcc_names[6] = {"MPI_Test",	  "MPI_Testany", "MPI_Testall",
					  "MPI_Testsome", "MPI_Iprobe",	 "MPI_Improbe"};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Load the RANKS files strictly, check every folded slice, count; every message's
 * flow has one start and one end, across the files (by sorting their ids: the job
 * sends tens of thousands). */
static void hpcc_load(char files[RANKS][4096], struct rank_polls *p)
{
	static struct tt_trace t[RANKS];
	size_t nids = 0, cap = 0;
	char **ids = NULL;

	memset(p, 0, RANKS * sizeof(*p));
	for (int r = 0; r < RANKS; r++) {
		if (tt_load(files[r], TT_CHECK_ESCAPES, &t[r]) != 0)
			fail_msg("rank %d: %s", r, t[r].error);
		assert_true(t[r].complete);
		p[r].objects = t[r].n;
		for (size_t i = 0; i < t[r].n; i++) {
			const struct tt_event *e = &t[r].ev[i];
			int64_t calls = check_folded(e);
			p[r].folded += calls > 0;
			for (int k = 0; k < 6; k++) {
				const struct tt_arg *a =
					calls > 0 ? tt_arg(e, hpcc_names[k]) : NULL;
				p[r].calls[k] += a != NULL ? a->i : 0;
				p[r].own[k] += calls == 0 && e->name != NULL &&
					       strcmp(e->name, hpcc_names[k]) == 0 &&
					       (strcmp(e->ph, "X") == 0 || strcmp(e->ph, "B") == 0);
			}
			if (strcmp(e->ph, "s") != 0 && strcmp(e->ph, "f") != 0)
				continue;
			if (nids == cap) {
				cap = cap ? 2 * cap : 65536;
				ids = realloc(ids, cap * sizeof(*ids));
				assert_non_null(ids);
			}
			ids[nids] = malloc(strlen(e->id) + 2);
			assert_non_null(ids[nids]);
			sprintf(ids[nids++], "%s%c", e->id, e->ph[0]);
		}
	}
	qsort(ids, nids, sizeof(*ids), cmp_str);
	/* Each id once as an end ('f') and once as a start ('s'): the sorted ids in pairs.
	 * docs/mpi.md names where the numbering may slip, a receive completing while an
	 * earlier wildcard receive that could take its message is still under way (hpcc's
	 * large messages, on a loaded machine): a slip leaves the rest of its channel's
	 * messages unpaired (their numbers one apart), 444 of 27,837 in one loaded run. So
	 * up to 5 % are tolerated, and an end whose record was dropped (a full ring,
	 * counted in the end marker) leaves its other end alone; every other message is
	 * one start and one end. */
	size_t messages = 0, unpaired = 0, dropped = 0;
	for (int r = 0; r < RANKS; r++)
		dropped += (size_t)tu_arg_int(tu_end_marker(&t[r]), "dropped");
	const char *first_unpaired = NULL;
	for (size_t i = 0; i < nids;) {
		size_t len = strlen(ids[i]), j = i + 1;

		while (j < nids && strlen(ids[j]) == len && strncmp(ids[j], ids[i], len - 1) == 0)
			j++;
		messages++;
		if (j - i != 2 || ids[i][len - 1] != 'f' || ids[i + 1][len - 1] != 's') {
			unpaired++;
			first_unpaired = first_unpaired != NULL ? first_unpaired : ids[i];
		}
		i = j;
	}
	assert_true(messages > 1000);
	if (unpaired > messages / 20 + dropped)
		fail_msg("%zu of %zu messages: not one start and one end (%zu events dropped), "
			 "as %s",
			 unpaired, messages, dropped, first_unpaired);
	if (unpaired > 0)
		print_message("hpcc: %zu of %zu messages unpaired, %zu events dropped\n", unpaired,
			      messages, dropped);
	for (size_t i = 0; i < nids; i++)
		free(ids[i]);
	free(ids);
	for (int r = 0; r < RANKS; r++)
		tt_free(&t[r]);
}

/* `ringtrace stats --json` of file: its "polls" rows agree with what the test counted
 * in the same file (p): per name, the calls folded and the calls that completed
 * something (the name's slices not folded). */
static void hpcc_stats_agree(const char *file, const struct rank_polls *p)
{
	char out[4096], cmd[9000], err[256];

	tu_temp_path(out, sizeof(out), "mpi", "hpcc-stats", ".json");
	snprintf(cmd, sizeof(cmd), "%s stats --json --top 0 %s > %s", RTR_TOOL, file, out);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(out, "r");
	assert_non_null(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	unlink(out);
	text[n] = '\0';
	yajl_val doc = yajl_tree_parse(text, err, sizeof(err));
	if (doc == NULL)
		fail_msg("stats --json: %s", err);
	const char *rows_path[] = {"polls", "rows", NULL};
	yajl_val rows = yajl_tree_get(doc, rows_path, yajl_t_array);
	assert_non_null(rows);
	size_t seen = 0;
	for (size_t i = 0; i < rows->u.array.len; i++) {
		yajl_val row = rows->u.array.values[i];
		const char *name_path[] = {"name", NULL}, *folded_path[] = {"folded_calls", NULL},
			   *done_path[] = {"completed_calls", NULL};
		const char *name = YAJL_GET_STRING(yajl_tree_get(row, name_path, yajl_t_string));
		for (int k = 0; k < 6; k++) {
			if (strcmp(name, hpcc_names[k]) != 0)
				continue;
			assert_int_equal(
				YAJL_GET_INTEGER(yajl_tree_get(row, folded_path, yajl_t_number)),
				p->calls[k]);
			assert_int_equal(
				YAJL_GET_INTEGER(yajl_tree_get(row, done_path, yajl_t_number)),
				p->own[k]);
			seen++;
		}
	}
	size_t want = 0;
	for (int k = 0; k < 6; k++)
		want += p->calls[k] > 0;
	assert_int_equal(seen, want);
	yajl_tree_free(doc);
}
#endif

/* HPC Challenge (Debian's hpcc), unmodified, preloaded: folded, each rank file is
 * strict JSON with every folded slice as it must be and every message joined across
 * the files; the same job with every call a slice writes more event objects on every
 * rank, none folded; `ringtrace stats` tells the calls per name that the test counts. */
static void hpcc_polls_fold_and_stats_count_every_call(void **state)
{
	(void)state;
#ifndef RTR_HPCC
	skip(); /* hpcc not installed: scripts/deps installs it */
#else
	char files[RANKS][4096], dir[4096], inf[4200];
	struct rank_polls folded[RANKS], all[RANKS];

	tu_temp_path(dir, sizeof(dir), "mpi", "hpcc", "");
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(inf, sizeof(inf), "%s/hpccinf.txt", dir);
	FILE *f = fopen(inf, "w");
	assert_non_null(f);
	assert_int_equal(fputs(hpccinf, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	const char *const cmd[] = {RTR_HPCC, NULL};
	run_dir = dir;
	int status = run("hpcc", RTR_MPI_LIB, cmd, files);
	run_dir = NULL;
	tu_expect_exit_0(status);
	hpcc_load(files, folded);
	hpcc_stats_agree(files[0], &folded[0]);
	run_dir = dir;
	extra_env = "RINGTRACE_MPI_POLLS=all";
	status = run("hpcc-all", RTR_MPI_LIB, cmd, files);
	run_dir = NULL;
	extra_env = NULL;
	tu_expect_exit_0(status);
	hpcc_load(files, all);
	for (int r = 0; r < RANKS; r++) {
		print_message("rank %d: %zu event objects folded (%zu slices of %lld Testany and "
			      "%lld Test calls), %zu with every call (%lld Testany, %lld Test)\n",
			      r, folded[r].objects, folded[r].folded, (long long)folded[r].calls[1],
			      (long long)folded[r].calls[0], all[r].objects,
			      (long long)all[r].own[1], (long long)all[r].own[0]);
		assert_true(folded[r].folded > 0);
		assert_int_equal(all[r].folded, 0);
		assert_true(folded[r].objects < all[r].objects);
	}
	unlink(inf);
	snprintf(inf, sizeof(inf), "%s/hpccoutf.txt", dir);
	unlink(inf);
	rmdir(dir);
	for (int r = 0; r < RANKS; r++)
		unlink(files[r]);
#endif
}

static void rank_killed_before_finalize_leaves_a_file_that_loads(void **state)
{
	char files[RANKS][4096];
	struct tt_trace t;

	(void)state;
	const char *const cmd[] = {RTR_MPI_PATTERNS, "kill", NULL};
	int status = run("kill", RTR_MPI_LIB, cmd, files);
	assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	memset(&t, 0, sizeof(t));
	if (tt_load(files[1], 0, &t) != 0)
		fail_msg("%s", t.error);
	int sent = 0, synced = 0;
	for (size_t i = 0; i < t.n; i++) {
		sent += t.ev[i].name && strcmp(t.ev[i].name, "MPI_Send") == 0 &&
			(strcmp(t.ev[i].ph, "X") == 0 || strcmp(t.ev[i].ph, "B") == 0);
		synced += t.ev[i].name && strcmp(t.ev[i].name, "ringtrace: clock sync") == 0;
	}
	assert_int_equal(sent, 1); /* an X, or a B and its E */
	assert_int_equal(synced, 1);
	tt_free(&t);

	/* The files merge: the killed rank's whole events, its open slices ended. */
	char out[4096];
	tu_temp_path(out, sizeof(out), "mpi", "kill-merged", ".json");
	merge_files(files, out);
	memset(&t, 0, sizeof(t));
	if (tt_load(out, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	tt_free(&t);
	unlink(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(halo_example_traces_every_call_and_message),
		cmocka_unit_test(preloaded_patterns_join_wildcards_nonblocking_and_same_tags),
		cmocka_unit_test(receives_numbered_in_matching_order_not_completion_order),
		cmocka_unit_test(clock_sync_measures_simulated_offsets),
		cmocka_unit_test(merged_ranks_with_offsets_have_joined_forward_arrows),
		cmocka_unit_test(perfetto_rank_files_merge_aligned),
		cmocka_unit_test(threads_at_thread_multiple_join_every_message),
		cmocka_unit_test(rank_killed_before_finalize_leaves_a_file_that_loads),
		cmocka_unit_test(polls_fold_and_completing_calls_keep_their_flows),
		cmocka_unit_test(hpcc_polls_fold_and_stats_count_every_call),
	};

	return cmocka_run_group_tests_name("mpi", tests, NULL, NULL);
}
