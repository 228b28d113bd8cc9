/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace diff` of several runs a side (diff_runs.c) and its report
 * (diff_runs_out.c): what diff.c, which parses the options and compares one run
 * against one, hands over when a side has several runs, a side is a directory, or
 * --calibrate is given.
 *
 * Each run (a trace, a profile, or a job's manifest: its rank files summed) is reduced
 * per key to its median (p50, from the sketch), its slice count and its total. Per key
 * the sides' run medians are compared by the Mann-Whitney U test (ranktest.h) and the
 * Hodges-Lehmann shift; a change is significant when p <= alpha and the shift is at
 * least min_pct % of A's median and min_ns ns. A count the same in every run of a side
 * and different between the sides is a deterministic change.
 *
 * Thread safety: none; one command.
 */
#ifndef RTR_TOOLS_DIFF_RUNS_H
#define RTR_TOOLS_DIFF_RUNS_H

#include "tally.h"
#include "tally_sum.h"

#include <stdint.h>

enum diff_format { FORMAT_TEXT, FORMAT_MARKDOWN, FORMAT_JSON };

/* The version of the JSON document (docs/diff-schema.json). */
#define DIFF_SCHEMA_VERSION 1

/* The defaults of the verdict on runs (docs/commands/ringtrace-diff.md says why). */
#define DIFF_ALPHA   0.05
#define DIFF_MIN_PCT 3.0
#define DIFF_MIN_NS  50.0
/* --calibrate: every split up to this many, else this many drawn (seeded) */
#define DIFF_SPLITS 1000

struct diff_options {
	struct tally_options t;
	unsigned jobs; /* 0: the online CPUs */
	enum diff_format format;
	bool fail;
	double fail_above; /* percent */
	double alpha, min_pct, min_ns;
	bool calibrate;
	uint64_t seed;
};

/* Compare the runs ops[0 .. na) against ops[na + skip .. n) (skip: 1 when ops[na] is
 * the '--'), or with --calibrate the splits of ops[0 .. n). A directory stands for its
 * runs. A CLI_* status (said when not CLI_OK). */
int diff_runs(const struct diff_options *opt, char **ops, size_t n, size_t na, size_t skip);

/* The key of a thread (diff.c): its names when it has them, matched across runs, else
 * its label with pid and tid, into key (label is scratch). 0 or -1. */
int diff_thread_key(struct buf *label, struct buf *key, const struct tally_sum *c,
		    const struct row *r);

/* ---- between diff_runs.c and diff_runs_out.c */

/* A key and its value in every run: arrays of nruns. */
struct rkey {
	size_t at; /* order of first appearance */
	uint64_t *p50, *count, *total;
	uint8_t *in;
	struct rtr__sketch run_dur; /* the run being read: its slices' durations */
};

struct run_info {
	char *name;
	uint64_t files, events, slices;
};

enum rkind { RK_BOTH, RK_ADDED, RK_REMOVED };

/* A key's comparison. */
struct rrow {
	struct rkey *k;
	enum rkind kind;
	size_t n[2];		 /* runs of each side with the key */
	double median[2];	 /* of the run medians, ns */
	double shift, shift_pct; /* Hodges-Lehmann, ns and % of A's median */
	double cliffs, u, p;
	bool exact, significant, slower, faster;
	bool counted;	    /* the count is the same in every run of each side */
	uint64_t count[2];  /* that count (counted) */
	bool count_changed; /* counted, and the sides' counts differ */
	double total_ratio; /* median totals B/A; INFINITY when A's is 0 */
	bool fails;
};

struct runs {
	const struct diff_options *opt;
	struct table keys; /* -> struct rkey */
	struct buf key, label;
	struct run_info *run;
	size_t nruns, na; /* runs; of them, side A's (the first) */
	bool other;	  /* under MPI, another rank holds the runs: report nothing */
	struct rrow *rows;
	size_t nrows;
	size_t kinds[3];
	size_t slower, faster, count_changes, failing;
	/* --calibrate */
	size_t splits, split_size, alarms, key_checks, key_alarms;
	bool all_splits;
};

int runs_print(const struct runs *r);
void runs_say_failing(const struct runs *r);
const char *runs_verdict(const struct rrow *w);

#endif /* RTR_TOOLS_DIFF_RUNS_H */
