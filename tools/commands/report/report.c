/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the command (job_report.h): its options, its inputs (files, the
 * trace files of a directory, the files a job's manifest lists), the files spread over
 * -j threads and the ranks of an MPI job (spread.h) and read twice (job_report.h),
 * then the finish and the outputs on one process.
 */
#include "cli.h"
#include "job_report.h"
#include "json.h"
#include "manifest.h"
#include "spread.h"

#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_JOBS 256
/* What the first reading keeps for the second by default, per process. */
#define DEFAULT_HOLD_MIB 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace report [-j N] [--top N] [--json] [--html FILE] [--hold MB]\n"
		"                        FILE|DIR...\n"
		"       mpirun -np K ringtrace report [options] FILE|DIR...\n"
		"\n"
		"Where an MPI job's time went, from its rank traces (JSON or .pftrace, plain or\n"
		"gzip; a directory stands for its trace files, a job's manifest for the files\n"
		"it lists): ranks aligned on rank 0's clock\n"
		"by their clock sync measurements, as merge aligns them, then\n"
		"  - per rank: computation, MPI and idle time on the job's span, and shares;\n"
		"  - wait states: late sender, late receiver, wait at N-to-N collectives and at\n"
		"    barriers, late broadcast, early reduce, by call path, by the rank that\n"
		"    waited and the rank that caused it;\n"
		"  - per call path: inclusive time per rank, min, mean, max, the max's rank and\n"
		"    the imbalance (max / mean);\n"
		"  - the ranks and call paths that cost the most.\n"
		"Profiles (RINGTRACE_MODE=profile) are read too when no trace is given: per\n"
		"rank spans, MPI time and imbalance, no wait states.\n"
		"Every time is exact integer nanoseconds; the answer is the same at every -j\n"
		"and, under mpirun, at every K (the files split over the ranks, rank 0 writes).\n"
		"The files are read twice: the second reading gives each collective entry its\n"
		"wait and each file its heat map row once the first has found the job's span\n"
		"and every collective's last entry; what it needs of a file is kept from the\n"
		"first while it fits in --hold, so memory stays bounded whatever the ranks.\n"
		"\n"
		"options:\n"
		"  -j, --jobs N      read the files on N threads (default: the online CPUs;\n"
		"                    per rank under mpirun)\n"
		"  -n, --top N       rows per table (default 10; 0: all), --json included\n"
		"      --json        one JSON document on standard output (schema_version 1)\n"
		"      --html FILE   also write a self-contained page of pictures to FILE\n"
		"      --hold MB     keep up to MB MiB (KiB with a k: 512k) of the first\n"
		"                    reading per process for the second (default %d; 0: read\n"
		"                    every file twice)\n"
		"  -h, --help        this help\n"
		"\n"
		"exit status: 0 done, 2 usage error, no readable input, or out of memory.\n",
		DEFAULT_HOLD_MIB);
}

/* spread_run()'s context: how a file is read, and in the second reading what the
 * first found. */
struct report_ctx {
	struct pass_options po;
	const struct replay *replay; /* NULL in the first reading */
	bool broken;		     /* the replay did not come: every read fails */
	/* the first reading's trimmed partials by file index, taken by the second instead
	 * of the file while their bytes fit in hold_max (NULL: every file read again) */
	struct rank_part **held;
	size_t hold_max;
	_Atomic size_t held_bytes; /* relaxed: a sum the reading threads share; orders nothing */
};

/* Keep a trace's partial for the second reading when it fits. Is it kept? */
static bool hold(struct report_ctx *ctx, size_t index, struct rank_part *part)
{
	size_t bytes;

	if (ctx->held == NULL || part->failed || part->profile != PART_TRACE)
		return false;
	bytes = replay_trim(part);
	if (atomic_fetch_add_explicit(&ctx->held_bytes, bytes, memory_order_relaxed) + bytes >
	    ctx->hold_max) {
		atomic_fetch_sub_explicit(&ctx->held_bytes, bytes, memory_order_relaxed);
		return false;
	}
	ctx->held[index] = part;
	return true;
}

/* spread_run()'s partial is the job so far (struct job_acc). */
static int op_init(void *ctx, void *p)
{
	return ((struct report_ctx *)ctx)->broken ? -1 : acc_init(p);
}

static int op_read(void *vctx, size_t index, const char *path, void *p)
{
	struct report_ctx *ctx = vctx;
	struct rank_part *part = calloc(1, sizeof(*part));
	int rc;

	if (part == NULL)
		return -1;
	if (ctx->replay != NULL && ctx->held != NULL && ctx->held[index] != NULL) {
		/* kept by the first reading: the file is not read again */
		free(part);
		part = ctx->held[index];
		ctx->held[index] = NULL;
		rc = acc_add_replay(p, part, ctx->replay) != 0 ? -2 : 0;
		part_free(part);
		free(part);
		return rc == -2 ? -1 : 0;
	}
	part->index = index;
	part->path = path;
	rc = pass_file(part, &ctx->po);
	/* said once, in the first reading; the second counts what it could not read */
	if (part->error[0] != '\0' && ctx->replay == NULL)
		cli_note("report", "warning: %s", part->error);
	if (rc != -2 && (ctx->replay == NULL ? acc_add_part(p, part)
					     : acc_add_replay(p, part, ctx->replay)) != 0)
		rc = -2;
	if (rc != -2 && ctx->replay == NULL && hold(ctx, index, part))
		return 0;
	part_free(part);
	free(part);
	return rc == -2 ? -1 : 0;
}

static int op_merge(void *ctx, void *into, const void *from)
{
	(void)ctx;
	return acc_merge(into, from);
}

static int op_pack(void *ctx, const void *p, struct buf *out)
{
	(void)ctx;
	return acc_pack(p, out);
}

static int op_unpack(void *ctx, const void *bytes, size_t len, void *p)
{
	(void)ctx;
	return acc_unpack(p, bytes, len) != 0 ? -1 : 0;
}

static void op_destroy(void *ctx, void *p)
{
	(void)ctx;
	acc_destroy(p);
}

static void op_say(void *ctx, const char *line)
{
	(void)ctx;
	cli_note("report", "%s", line);
}

static bool trace_name_ok(const char *n)
{
	static const char *const ends[] = {".json", ".json.gz", ".pftrace", ".pftrace.gz"};
	size_t len = strlen(n);

	if (n[0] == '.')
		return false;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t e = strlen(ends[i]);

		if (len > e && strcmp(n + len - e, ends[i]) == 0)
			return true;
	}
	return false;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add a path (a directory: its trace files, sorted) to *list. 0, -1 out of memory. */
static int add_input(char ***list, size_t *n, size_t *cap, const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	size_t from = *n;

	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		char **l = array_grow(*list, cap, *n + 1, sizeof(**list), 64);

		if (l == NULL || (l[*n] = strdup(path)) == NULL)
			return -1;
		*list = l;
		(*n)++;
		return 0;
	}
	d = opendir(path);
	if (d == NULL)
		return 0; /* reported when opened as a file */
	while ((e = readdir(d)) != NULL) {
		char **l;
		size_t len = strlen(path) + strlen(e->d_name) + 2;

		if (!trace_name_ok(e->d_name))
			continue;
		l = array_grow(*list, cap, *n + 1, sizeof(**list), 64);
		if (l == NULL || (l[*n] = malloc(len)) == NULL) {
			closedir(d);
			return -1;
		}
		*list = l;
		snprintf(l[*n], len, "%s/%s", path, e->d_name);
		(*n)++;
	}
	closedir(d);
	if (*n > from)
		qsort(*list + from, *n - from, sizeof(**list), by_str);
	return 0;
}

/* --hold: MiB, or KiB with a trailing k. 0, or -1 when malformed. */
static int parse_hold(const char *s, size_t *bytes)
{
	char num[32];
	size_t len = strlen(s);
	unsigned shift = 20;
	uint64_t v;

	if (len > 0 && (s[len - 1] == 'k' || s[len - 1] == 'K'))
		shift = 10, len--;
	if (len == 0 || len >= sizeof(num))
		return -1;
	memcpy(num, s, len);
	num[len] = '\0';
	if (cli_parse_u64(num, &v) || v > ((uint64_t)1 << 40) >> shift)
		return -1;
	*bytes = (size_t)(v << shift);
	return 0;
}

static int parse_args(int argc, char **argv, unsigned *jobs, struct report_options *o)
{
	static const struct option longs[] = {
		{"jobs", required_argument, NULL, 'j'},
		{"top", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'J'},
		{"html", required_argument, NULL, 'H'},
		{"hold", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "j:n:h", longs, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (cli_parse_u64(optarg, &v) || v < 1 || v > MAX_JOBS)
				return cli_usage_error("report", "-j takes 1 to %d", MAX_JOBS);
			*jobs = (unsigned)v;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &v) || v > 1000000)
				return cli_usage_error("report", "--top takes a number");
			o->top = (unsigned)v;
			break;
		case 'J':
			o->json = true;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'K':
			if (parse_hold(optarg, &o->hold))
				return cli_usage_error("report", "--hold takes MiB (KiB with a k), "
								 "up to 1 TiB");
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return cli_usage_error("report", "unknown option");
		}
	}
	if (optind >= argc)
		return cli_usage_error("report", "no input files");
	return 0;
}

static const struct spread_ops ops = {
	.size = sizeof(struct job_acc),
	.init = op_init,
	.read = op_read,
	.merge = op_merge,
	.pack = op_pack,
	.unpack = op_unpack,
	.destroy = op_destroy,
	.say = op_say,
};

/* The second reading (job_report.h) after the first, whose spread_run() gave r, on
 * every rank of an MPI job: rank 0 shares what the first found (nothing when it
 * failed or needs no second reading). Merged into acc on rank 0. Returns r, or
 * SPREAD_FAILED. */
static int read_again(struct report_ctx *ctx, const char *const *files, size_t n, unsigned jobs,
		      int r, struct job_acc *acc)
{
	struct buf b = {0};
	struct replay rp;
	struct job_acc again;
	int unpacked, r2;
	bool packed = true;

	if (r == SPREAD_ROOT && acc_needs_replay(acc) && replay_pack(acc, &b) != 0) {
		buf_free(&b);
		packed = false;
	}
	if (spread_share(&b) != 0 || !packed)
		return SPREAD_FAILED;
	if (b.len == 0)
		return r;
	unpacked = replay_unpack(&rp, b.p, b.len);
	buf_free(&b);
	/* a rank that cannot take the replay still joins the reading, failing it */
	ctx->replay = &rp;
	ctx->broken = acc_init(&again) != 0 || unpacked != 0;
	r2 = spread_run(&ops, ctx, files, n, jobs, &again);
	ctx->replay = NULL;
	replay_free(&rp);
	if (r2 == SPREAD_ROOT && r == SPREAD_ROOT) {
		if (again.replayed < acc->ok)
			cli_note(
				"report",
				"warning: %zu of %zu traces could not be read a second time: their "
				"collective waits and heat rows are missing",
				acc->ok - (size_t)again.replayed, acc->ok);
		if (acc_merge(acc, &again) != 0)
			r2 = SPREAD_FAILED;
	}
	acc_destroy(&again);
	return r2 == SPREAD_FAILED ? SPREAD_FAILED : r;
}

/* The files over -j threads and the MPI job's ranks, read twice; rank 0 (or the only
 * process) writes. */
static int report_job(const char *const *files, size_t n, unsigned jobs,
		      const struct report_options *o)
{
	struct report_ctx ctx = {.po = {.max_event_bytes = cli_max_event_bytes()},
				 .hold_max = o->hold};
	struct job_acc acc;
	struct job j = {0};
	int r, rc = CLI_ERROR;

	/* none kept when this cannot be had: every file is read again */
	ctx.held = o->hold > 0 ? calloc(n, sizeof(*ctx.held)) : NULL;
	if (acc_init(&acc)) {
		free(ctx.held);
		return CLI_ERROR;
	}
	r = spread_run(&ops, &ctx, files, n, jobs, &acc);
	if (r != SPREAD_OTHER || spread_is_rank())
		r = read_again(&ctx, files, n, jobs, r, &acc);
	/* what the second reading did not take (none came, or it failed) */
	for (size_t i = 0; ctx.held != NULL && i < n; i++)
		if (ctx.held[i] != NULL) {
			part_free(ctx.held[i]);
			free(ctx.held[i]);
		}
	free(ctx.held);
	if (r == SPREAD_OTHER) {
		acc_destroy(&acc);
		return CLI_OK;
	}
	if (r == SPREAD_FAILED)
		cli_error("report", "reading the inputs failed (out of memory, or the MPI step)");
	else if (acc_readable(&acc) == 0)
		cli_error("report", "no input could be read");
	else if (acc_finish(&acc, &j))
		cli_error("report", "out of memory");
	else if (o->html != NULL && job_write_html(&j, o))
		cli_error("report", "%s: cannot write the page", o->html);
	else if (o->json ? job_print_json(&j, o) : job_print_text(&j, o))
		cli_error("report", "cannot write the report");
	else
		rc = CLI_OK;
	acc_destroy(&acc);
	job_free(&j);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_options o = {.top = 10, .hold = (size_t)DEFAULT_HOLD_MIB << 20};
	unsigned jobs = 0; /* spread.h: the online CPUs */
	char **list = NULL;
	size_t n = 0, cap = 0;
	struct manifest_files files = {0};
	char why[PATH_MAX + 128];
	int rc;

	argc = cli_common_options("report", argc, argv);
	if (argc < 0)
		return CLI_ERROR;
	rc = parse_args(argc, argv, &jobs, &o);
	if (rc != 0)
		return rc == -1 ? CLI_OK : rc;
	/* a job's manifest among the inputs: the files it lists */
	if (manifest_expand(argv + optind, (size_t)(argc - optind), &files, why, sizeof(why))) {
		cli_error("report", "%s", why);
		rc = CLI_ERROR;
		goto out;
	}
	for (size_t i = 0; i < files.n; i++)
		if (add_input(&list, &n, &cap, files.paths[i])) {
			cli_error("report", "out of memory");
			rc = CLI_ERROR;
			goto out;
		}
	if (n == 0) {
		cli_error("report", "no trace files in the directories given");
		rc = CLI_ERROR;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], "-") == 0) {
			cli_error("report", "reads its files twice: give a file, not - (standard "
					    "input)");
			rc = CLI_ERROR;
			goto out;
		}
	rc = report_job((const char *const *)list, n, jobs, &o);
out:
	manifest_files_free(&files);
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}
