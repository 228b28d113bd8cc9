/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace merge`, the command: its options, the open-files limit, and what it
 * says when done (merge.h has the design and the map of the files).
 */
#include "merge.h"

#include "manifest.h"

#include "output.h"
#include "progress.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* The least time from a send to its receive, by default (--min-latency). */
#define DEFAULT_MIN_LATENCY_NS 100

/* Open files besides the inputs: the output, its temporary, standard streams, zlib. */
#define SPARE_FILES 16

const char *const merge_clock_names[] = {
	[CLOCK_AUTO] = "auto", [CLOCK_MONO] = "monotonic", [CLOCK_REAL] = "realtime",
	[CLOCK_SYNC] = "sync", [CLOCK_NONE] = "none",
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace merge [--clock auto|sync|monotonic|realtime] [--min-latency NS]\n"
		"                       [--no-correction] [--to json|pftrace] -o OUT FILE...\n"
		"\n"
		"Merges the traces of several processes or MPI ranks (.json or .json.gz;\n"
		"- is standard input) into one timeline, streaming:\n"
		"  - times on one clock: MPI ranks' mapped onto the reference rank's by their\n"
		"    clock sync measurements (linear between them, so drift is followed);\n"
		"    else aligned on the earliest file's origin (each file's start marker),\n"
		"    on CLOCK_MONOTONIC when all files come from one host, else on\n"
		"    CLOCK_REALTIME;\n"
		"  - flows joined across files (the MPI module's messages, rtr_flow_id()\n"
		"    flows), and an MPI receive still before its send after that moved\n"
		"    forward (controlled logical clock), with the counts on standard error\n"
		"    and in the end marker;\n"
		"  - pids made collision-free (a pid two files use is remapped in the later\n"
		"    one), processes named \"rank R \xc2\xb7 host \xc2\xb7 name\" and sorted by "
		"rank;\n"
		"  - other flow and async ids kept apart between files;\n"
		"  - one start marker and one end marker for the whole.\n"
		"A file cut short gives its whole events (its open slices ended). The output\n"
		"is JSON, or Perfetto's protobuf trace (OUT ending in .pftrace, or --to\n"
		"pftrace): ranks as processes, messages as flows, the alignment in its start\n"
		"marker; every ringtrace command reads it. A job's manifest (the MPI module's\n"
		"*-job.manifest.json, known by its content) among the FILEs stands for the\n"
		"files it lists.\n"
		"\n"
		"options:\n"
		"  -o, --output OUT       where to write (required); gzip when OUT ends in .gz;\n"
		"                         - for standard output\n"
		"  -t, --to FORMAT        json, or pftrace (the default for an OUT ending in\n"
		"                         .pftrace or .perfetto-trace, .gz or not)\n"
		"  -c, --clock CLOCK      auto (the default: sync when a file has clock sync\n"
		"                         events), sync, monotonic or realtime\n"
		"      --min-latency NS   the least time from a send to its receive (default\n"
		"                         %d)\n"
		"      --no-correction    count the receives before their send, move nothing\n"
		"  -h, --help             this help\n"
		"\n"
		"exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		"output then holds the events before the error), failed output.\n",
		DEFAULT_MIN_LATENCY_NS);
}

/* Room for n inputs in the open-files limit: the soft limit raised up to the hard
 * one. 0, or -1 (reported). */
static int room_for_files(size_t n)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)n + SPARE_FILES;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		cli_error("merge",
			  "%zu files need %llu open files, and the hard limit is %llu: raise it "
			  "(ulimit -Hn), or merge the ranks in groups and merge the groups",
			  n, (unsigned long long)need, (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		cli_error("merge", "cannot raise the open-files limit to %llu: %s",
			  (unsigned long long)need, strerror(errno));
		return -1;
	}
	return 0;
}

/* What the messages say about the alignment, on standard error. */
static void report_messages(const struct merge *m)
{
	if (m->messages + m->unmatched + m->sends.count + m->forgotten == 0)
		return;
	cli_note("merge",
		 "messages: %" PRIu64 " joined across files; %" PRIu64
		 " received before they were sent after the clock alignment; %" PRIu64
		 " moved forward to %" PRId64 " ns after their send (controlled logical clock%s): "
		 "%" PRIu64 " events moved, at most %.3f us",
		 m->messages, m->violations, m->corrected, m->min_latency_ns,
		 m->correct ? "" : ", off", m->moved_events, (double)m->max_move_ns / 1e3);
	if (m->unmatched + m->sends.count + m->forgotten > 0)
		cli_note("merge",
			 "messages: %" PRIu64 " receives without their send and %" PRIu64
			 " sends without their receive in these files",
			 m->unmatched, (uint64_t)m->sends.count + m->forgotten);
}

static void free_merge(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		trace_close(in->r);
		free(in->host);
		free(in->label);
		table_destroy(&in->pids);
		table_destroy(&in->ids);
		threads_destroy(&in->threads);
		table_destroy(&in->clc);
		sync_free(&in->sync);
		buf_free(&in->held_json);
		buf_free(&in->end_args);
	}
	free(m->in);
	free(m->ready.a);
	free(m->wait.a);
	table_destroy(&m->sends);
	table_destroy(&m->waiters);
	buf_free(&m->key);
	table_destroy(&m->claims);
	table_destroy(&m->tags);
	buf_free(&m->line);
	buf_free(&m->text);
	buf_free(&m->args);
	pf_writer_free(m->pf);
	output_free(m->out);
}

/* The options into m and *output, and the file names checked. -1 to go on, else the
 * exit status (--help, a usage error). */
static int parse_options(int argc, char **argv, struct merge *m, const char **output, int *pftrace)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"to", required_argument, NULL, 't'},
		{"clock", required_argument, NULL, 'c'},
		{"min-latency", required_argument, NULL, 'L'},
		{"no-correction", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool stdin_seen = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "o:c:t:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			*output = optarg;
			break;
		case 't':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "pftrace") != 0)
				return cli_usage_error(
					"merge", "--to wants json or pftrace, not '%s'", optarg);
			*pftrace = strcmp(optarg, "pftrace") == 0;
			break;
		case 'c':
			if (strcmp(optarg, "auto") == 0)
				m->clock = CLOCK_AUTO;
			else if (strcmp(optarg, "monotonic") == 0)
				m->clock = CLOCK_MONO;
			else if (strcmp(optarg, "realtime") == 0)
				m->clock = CLOCK_REAL;
			else if (strcmp(optarg, "sync") == 0)
				m->clock = CLOCK_SYNC;
			else
				return cli_usage_error(
					"merge",
					"--clock wants auto, sync, monotonic or realtime, not '%s'",
					optarg);
			break;
		case 'L':
			if (json_parse_i64(optarg, strlen(optarg), &m->min_latency_ns) != 0 ||
			    m->min_latency_ns < 0 || m->min_latency_ns > STALL_NS)
				return cli_usage_error("merge",
						       "--min-latency wants nanoseconds (0 .. "
						       "1000000000), not '%s'",
						       optarg);
			break;
		case 'N':
			m->correct = false;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("merge", "unknown option");
		}
	}
	if (optind == argc)
		return cli_usage_error("merge", "no FILE to merge");
	if (*output == NULL)
		return cli_usage_error("merge", "no output: -o OUT");
	if (*pftrace < 0)
		*pftrace = pf_path_is_pftrace(*output);
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0)
			continue;
		if (stdin_seen)
			return cli_usage_error("merge", "standard input (-) given twice");
		stdin_seen = true;
	}
	return -1;
}

/* The merged markers' thread: the first input's own process (as the merge named it)
 * and thread. */
static void marker_thread(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (in->has_main) {
			const struct pid_map *pm =
				table_get(&in->pids, &in->main_pid, sizeof(in->main_pid));

			m->marker_pid = pm->pid;
			m->marker_tid = in->main_tid;
			break;
		}
	}
}

/* What a Perfetto output holds, and what it left out. */
static void pftrace_notes(const struct merge *m)
{
	const struct pf_writer_counts *c = pf_writer_counts(m->pf);

	cli_note("merge",
		 "%s is Perfetto's protobuf trace: %" PRIu64 " events in %" PRIu64
		 " packets, %" PRIu64 " bytes (%.1f a packet)",
		 output_name(m->out), c->events, c->packets, output_bytes(m->out),
		 c->packets > 0 ? (double)output_bytes(m->out) / (double)c->packets : 0.0);
	if (c->no_place + c->no_time + c->over_bound > 0)
		cli_note("merge",
			 "left out of %s: %" PRIu64
			 " events of phases the Perfetto format has no place for (%s), %" PRIu64
			 " without a time, %" PRIu64 " past the state bound",
			 output_name(m->out), c->no_place, c->phases, c->no_time, c->over_bound);
}

/* The output committed, and what was done said. err: the merge failed. Returns the
 * exit status. */
static int finish(struct merge *m, int err)
{
	bool input_error = false;
	uint64_t read = 0;
	size_t threads = 0;

	for (size_t i = 0; i < m->n; i++)
		input_error |= m->in[i].rc < 0;
	if (err || output_commit(m->out) != 0) {
		cli_error("merge", "%s", m->nomem ? "out of memory" : output_error(m->out));
		return CLI_ERROR;
	}
	if (input_error) {
		cli_error("merge", "%s holds the events before the error, completed",
			  output_name(m->out));
		return CLI_ERROR;
	}
	for (size_t i = 0; i < m->n; i++) {
		read += trace_status(m->in[i].r)->events;
		threads += threads_count(&m->in[i].threads);
	}
	/* What it read is what check and stats count in the inputs (threads.h); what it
	 * wrote leaves out their markers and M events (the merged file has its own).
	 * Threads of different files are different threads. */
	cli_note("merge",
		 "wrote %s: %" PRIu64 " events on %zu thread%s (" TRACE_COUNTS_WHAT
		 ") read from %zu file%s, of which %" PRIu64
		 " are not markers or M events (clock %s)",
		 output_name(m->out), read, threads, threads == 1 ? "" : "s", m->n,
		 m->n == 1 ? "" : "s", m->written, merge_clock_names[m->clock]);
	if (m->pf != NULL)
		pftrace_notes(m);
	return CLI_OK;
}

/* The merge of the files (the arguments, manifests expanded) into output. */
static int merge_files(const struct manifest_files *files, struct merge *mp, const char *output,
		       int pftrace)
{
	struct merge m = *mp;
	struct progress bar;
	int err, status;

	m.bar = &bar;
	if (files->n == 0)
		return cli_usage_error("merge", "no FILE to merge: the manifest lists none");
	if (room_for_files(files->n))
		return CLI_ERROR;
	progress_init(&bar, "merging", stderr);
	table_init(&m.claims, sizeof(struct claim));
	table_init(&m.tags, sizeof(size_t));
	table_init(&m.sends, sizeof(struct send));
	table_init(&m.waiters, sizeof(size_t));
	if (merge_open_inputs(&m, files->paths, files->n) || merge_group_processes(&m) ||
	    merge_scan_syncs(&m)) {
		free_merge(&m);
		return CLI_ERROR;
	}
	merge_align(&m);
	if (merge_make_labels(&m) || merge_claim_main_pids(&m)) {
		cli_error("merge", "out of memory");
		free_merge(&m);
		return CLI_ERROR;
	}
	marker_thread(&m);
	err = output_open(output, output_path_is_gzip(output), &m.out);
	if (err != 0) {
		cli_error("merge", "cannot write %s: %s", output, output_strerror(err));
		free_merge(&m);
		return CLI_ERROR;
	}
	if (pftrace && pf_writer_create(m.out, &m.pf) != 0) {
		cli_error("merge", "out of memory");
		free_merge(&m);
		return CLI_ERROR;
	}
	err = (m.pf == NULL && output_puts(m.out, "[\n")) || merge_write_start(&m) ||
	      merge_run(&m) || merge_write_end(&m);
	progress_finish(&bar);
	report_messages(&m);
	status = finish(&m, err);
	free_merge(&m);
	return status;
}

int cmd_merge(int argc, char **argv)
{
	struct merge m = {
		.clock = CLOCK_AUTO, .correct = true, .min_latency_ns = DEFAULT_MIN_LATENCY_NS};
	const char *output = NULL;
	int pftrace = -1; /* -1: by the output's name */
	int status = parse_options(argc, argv, &m, &output, &pftrace);
	struct manifest_files files;
	char why[PATH_MAX + 128];

	if (status >= 0)
		return status;
	/* a job's manifest among the inputs: the files it lists (their paths live until
	 * the merge is done) */
	if (manifest_expand(argv + optind, (size_t)(argc - optind), &files, why, sizeof(why)) ==
	    0) {
		status = merge_files(&files, &m, output, pftrace);
	} else {
		cli_error("merge", "%s", why);
		status = CLI_ERROR;
	}
	manifest_files_free(&files);
	return status;
}
