/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace split`, the command: its options, the prefix of the pieces, and what it
 * says when done (split.h has the design and the map of the files).
 */
#include "split.h"

#include "cli.h"
#include "output.h"
#include "progress.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Open slices reopened per thread at a cut, by default (--max-reopen). */
#define DEFAULT_MAX_REOPEN 256

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace split (--max-mb N | --max-events N) [-o PREFIX] [--gzip] "
		   "FILE\n"
		   "\n"
		   "Cuts the trace FILE (.json or .json.gz; - is standard input) into pieces\n"
		   "PREFIX-0001.json, PREFIX-0002.json, ... that each open alone in a viewer:\n"
		   "each begins with the start marker and the process and thread names seen so\n"
		   "far, reopens the slices open at its start, closes those open at its end, and\n"
		   "ends with an end marker. chrome://tracing fails past about 256 MB or a\n"
		   "million events; the Perfetto UI near 2 GB.\n"
		   "\n"
		   "options:\n"
		   "  -m, --max-mb N       at most N MB (10^6 bytes) of text per piece (before\n"
		   "                       gzip)\n"
		   "  -e, --max-events N   at most N events per piece, its markers, names and\n"
		   "                       closed and reopened slices included\n"
		   "  -r, --max-reopen N   slices reopened per thread at a cut, the innermost\n"
		   "                       (and never more than half a piece in all)\n"
		   "                       (default 256; the E of the others are left out)\n"
		   "  -o, --output PREFIX  where to write (default: FILE without .json or\n"
		   "                       .json.gz); a PREFIX ending in .gz (or .json.gz) writes\n"
		   "                       gzip\n"
		   "  -z, --gzip           write gzip pieces (PREFIX-0001.json.gz, ...)\n"
		   "  -h, --help           this help\n"
		   "\n"
		   "exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		   "pieces then hold the events before the error), failed output.\n");
}

static void free_split(struct split *sp)
{
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		for (size_t i = 0; i < st->nheld; i++)
			free(st->held[i].json);
		free(st->held);
		free(st->inner_end);
		buf_free(&st->last_x);
	}
	threads_destroy(&sp->threads);
	carry_destroy(&sp->carry);
	for (struct open_flow *f = table_first(&sp->flows); f != NULL; f = table_next(f)) {
		free(f->s);
		free(f->x);
	}
	table_destroy(&sp->flows);
	buf_free(&sp->flow_key);
	buf_free(&sp->line);
	buf_free(&sp->args);
	buf_free(&sp->start_json);
	buf_free(&sp->end_json);
	buf_free(&sp->end_args);
	buf_free(&sp->px.json);
	output_free(sp->out);
	free(sp->path);
	free(sp->prefix);
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* PREFIX without .json, .json.gz or .gz (either of the last two means gzip). */
static char *make_prefix(const char *path, bool *gzip)
{
	size_t n = strlen(path);

	if (ends_with(path, n, ".json.gz")) {
		n -= 8;
		*gzip = true;
	} else if (ends_with(path, n, ".gz")) {
		n -= 3;
		*gzip = true;
	} else if (ends_with(path, n, ".json")) {
		n -= 5;
	}
	return text_dup(path, n);
}

static int parse_limit(const char *opt, const char *arg, uint64_t *v, uint64_t unit)
{
	if (cli_parse_u64(arg, v) || *v == 0 || *v > UINT64_MAX / unit)
		return cli_usage_error("split", "%s wants a positive number, not '%s'", opt, arg);
	*v *= unit;
	return 0;
}

/* The options into sp, and the prefix made. -1 to go on, else the exit status
 * (--help, a usage error, out of memory). */
static int parse_options(int argc, char **argv, struct split *sp)
{
	static const struct option longopts[] = {
		{"max-mb", required_argument, NULL, 'm'},
		{"max-events", required_argument, NULL, 'e'},
		{"max-reopen", required_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"gzip", no_argument, NULL, 'z'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *output = NULL;
	bool gzip_opt = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "m:e:r:o:zh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (parse_limit("--max-mb", optarg, &sp->max_bytes, MB))
				return CLI_ERROR;
			break;
		case 'e':
			if (parse_limit("--max-events", optarg, &sp->max_events, 1))
				return CLI_ERROR;
			break;
		case 'r':
			if (cli_parse_u64(optarg, &sp->max_reopen))
				return cli_usage_error(
					"split", "--max-reopen wants a number, not '%s'", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'z':
			gzip_opt = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("split", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("split",
				       argc == optind ? "no FILE to split" : "one FILE at a time");
	if (sp->max_bytes == 0 && sp->max_events == 0)
		return cli_usage_error("split", "no limit: --max-mb N or --max-events N");
	if (output == NULL && strcmp(argv[optind], "-") == 0)
		return cli_usage_error("split", "standard input needs -o PREFIX");
	if (output != NULL && strcmp(output, "-") == 0)
		return cli_usage_error("split", "pieces are files: -o PREFIX, not -");
	sp->prefix = make_prefix(output != NULL ? output : argv[optind], &sp->gzip);
	sp->gzip |= gzip_opt;
	if (sp->prefix == NULL) {
		cli_error("split", "out of memory");
		return CLI_ERROR;
	}
	return -1;
}

/* The pieces written: what they hold, said. */
static void report(const struct split *sp, const struct trace_status *st, int rc)
{
	if (rc < 0) {
		cli_error("split", "%s", st->message);
		cli_error("split", "the pieces hold the %" PRIu64 " events before the error",
			  st->events);
	} else if (st->cut) {
		cli_note("split",
			 "warning: %s was cut short: the pieces hold its %" PRIu64 " whole events",
			 sp->file, st->events);
	}
	if (sp->flows_repeated > 0 || sp->flows_forgotten > 0)
		cli_note("split",
			 "note: %" PRIu64 " flow starts repeated after the cuts they crossed"
			 "%s",
			 sp->flows_repeated,
			 sp->flows_forgotten > 0 ? " (some flows left open forgotten: at most 256 "
						   "at once)"
						 : "");
	if (sp->not_reopened > 0)
		cli_note("split",
			 "note: %" PRIu64 " open slices beyond --max-reopen %" PRIu64
			 " per thread, or beyond half a piece in all, were not reopened at "
			 "the cuts, and %" PRIu64 " of their E events left out",
			 sp->not_reopened, sp->max_reopen, sp->ends_left_out);
	cli_note("split",
		 "wrote %u piece%s, %s-0001.json%s to %s: %" PRIu64 " events; %" PRIu64
		 " slices closed at the cuts and reopened",
		 sp->piece, sp->piece == 1 ? "" : "s", sp->prefix, sp->gzip ? ".gz" : "", sp->path,
		 sp->events, sp->reopened);
}

int cmd_split(int argc, char **argv)
{
	struct cli_warnings warnings = {.max = 10};
	struct progress bar;
	struct trace_options ro = {.on_issue = cli_warn_issue, .ctx = &warnings, .progress = &bar};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct split sp = {.max_reopen = DEFAULT_MAX_REOPEN};
	struct trace *r;
	int rc, err = 0, status = parse_options(argc, argv, &sp);

	if (status >= 0)
		return status;
	status = CLI_OK;
	progress_init(&bar, "splitting", stderr);
	r = cli_open_trace("split", argv[optind], &ro);
	if (r == NULL) {
		free(sp.prefix);
		return CLI_ERROR;
	}
	sp.file = warnings.file = trace_name(r);
	threads_init(&sp.threads, sizeof(struct split_thread));
	carry_init(&sp.carry);
	table_init(&sp.flows, sizeof(struct open_flow));
	while ((rc = trace_next(r, &ev)) == 1) {
		err = split_take(&sp, ev);
		if (err)
			break;
	}
	progress_finish(&bar);
	cli_warnings_done(&warnings);
	st = trace_status(r);
	if (!err && cli_not_a_trace("split", sp.file, st)) {
		status = CLI_FINDINGS; /* no piece written */
	} else if (!err && rc < 0 && st->events == 0) {
		/* Nothing read before the error: no trace here, so write nothing. */
		cli_error("split", "%s", st->message);
		status = CLI_ERROR;
	} else if (err || split_finish(&sp, st->cut || rc < 0)) {
		if (sp.nomem)
			cli_error("split", "out of memory");
		else if (sp.out != NULL && output_error(sp.out) != NULL)
			cli_error("split", "%s", output_error(sp.out));
		status = CLI_ERROR;
	} else {
		report(&sp, st, rc);
		status = rc < 0 ? CLI_ERROR : CLI_OK;
	}
	free_split(&sp);
	trace_close(r);
	return status;
}
