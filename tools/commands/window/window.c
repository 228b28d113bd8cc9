/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace window`, the command: its options and times, the input opened (searched
 * or read in order), and what it says when done (window.h has the design and the map
 * of the files).
 */
#include "window.h"

#include "manifest.h"

#include "output.h"
#include "pftrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace window (--from T [--to T] | --to T | --around T --width W)\n"
		"                        [--absolute] [--no-clip] [--exact] [--margin T]\n"
		"                        [-o OUT] [--gzip] [--rank R] FILE\n"
		"\n"
		"Writes the part of the trace FILE (.json or .json.gz; - is standard input)\n"
		"that overlaps a time window, as a trace that opens alone in a viewer: the\n"
		"start marker and the names, the events inside the window, X events around it\n"
		"clipped to it, slices open at its start reopened there and those open at its\n"
		"end ended there, each counter's value at its start, an end marker.\n"
		"\n"
		"Times are a number and a unit, s, ms, us or ns (1.5s, 250ms), from the\n"
		"trace's start: the ts of its first event (the recorder's start marker, at 0).\n"
		"A plain file is searched (binary search on its lines, the recorder's one event\n"
		"per line), not read whole; gzip and standard input are read in order.\n"
		"FILE may be a job's manifest (the MPI module's *-job.manifest.json) that\n"
		"lists one file, or with --rank R the one file of rank R it lists.\n"
		"\n"
		"options:\n"
		"  -f, --from T       the window's start (default: the trace's start)\n"
		"  -t, --to T         its end (default: the trace's end)\n"
		"  -a, --around T     the window's middle, with --width\n"
		"  -w, --width W      its width, with --around\n"
		"  -A, --absolute     times are ts values of the file, not from its start\n"
		"  -n, --no-clip      X events around the window whole, not clipped to it\n"
		"  -x, --exact        read a plain file in order too: every slice open at the\n"
		"                     window's start is found, at the reader's speed\n"
		"  -m, --margin T     how far before and after the window a search reads\n"
		"                     (default 250ms: the recorder writes threads' events up\n"
		"                     to its flush interval, 100 ms, out of order)\n"
		"  -o, --output OUT   where to write (default: FILE with .window before\n"
		"                     .json; standard output for standard input); gzip when\n"
		"                     OUT ends in .gz\n"
		"  -z, --gzip         write gzip\n"
		"      --rank R       FILE is a job's manifest: window rank R's file\n"
		"  -h, --help         this help\n"
		"\n"
		"exit status: 0 written, 1 not a trace (nothing written), 2 usage error,\n"
		"unreadable or malformed input (the output then holds the window up to the\n"
		"error), failed output.\n");
}

/*
 * A time with its unit, "1.5s", "250ms", "20us", "7ns" (no sign), in ns. 0, or -1
 * when it is not one or does not fit int64 nanoseconds.
 */
static int parse_time(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {{"s", NS_PER_S}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
	uint64_t whole = 0, frac = 0, frac_scale = 1;
	const char *p = s;
	int64_t unit = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_scale >= 1000000000000000000u)
				return -1; /* finer than any unit's ns */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_scale *= 10;
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit) == 0)
			unit = units[i].ns;
	}
	if (unit == 0 || whole > (uint64_t)INT64_MAX / (uint64_t)unit)
		return -1;
	whole *= (uint64_t)unit;
	/* frac / frac_scale of a unit, in whole ns (frac_scale <= 10^18, unit <= 10^9). */
	if (frac_scale > 1) {
		unsigned __int128 f = (unsigned __int128)frac * (uint64_t)unit / frac_scale;

		if ((unsigned __int128)frac * (uint64_t)unit % frac_scale != 0)
			return -1; /* finer than 1 ns */
		if (f > (uint64_t)INT64_MAX - whole)
			return -1;
		whole += (uint64_t)f;
	}
	*ns = (int64_t)whole;
	return 0;
}

static void free_window(struct window *w)
{
	threads_destroy(&w->threads);
	carry_destroy(&w->carry);
	buf_free(&w->line);
	buf_free(&w->args);
	buf_free(&w->start_json);
	output_free(w->out);
}

static int time_option(const char *opt, const char *arg, int64_t *ns)
{
	if (parse_time(arg, ns) != 0)
		return cli_usage_error("window",
				       "%s wants a time with its unit (1.5s, 250ms, 20us, 7ns), "
				       "not '%s'",
				       opt, arg);
	return 0;
}

static void say_mb(char *out, size_t n, uint64_t bytes)
{
	snprintf(out, n, "%.1f MB", (double)bytes / 1e6);
}

/* What the options say besides the window's fields. */
struct options {
	bool from_set, around_set, width_set, gzip;
	int64_t around, width;
	const char *output;
	long rank; /* --rank: the rank's file of a manifest; -1: none asked */
};

/* The window from the options given: they must say one. -1 to go on, else the exit
 * status. */
static int settle_window(struct window *w, const struct options *o)
{
	if (o->around_set != o->width_set)
		return cli_usage_error("window", "--around and --width go together");
	if (o->around_set && (o->from_set || w->to_set))
		return cli_usage_error("window", "--around/--width or --from/--to, not both");
	if (!o->around_set && !o->from_set && !w->to_set)
		return cli_usage_error(
			"window", "no window: --from T and/or --to T, or --around T --width W");
	if (o->around_set) {
		int64_t around = o->around, width = o->width;

		if (width == 0)
			return cli_usage_error("window", "--width wants a time above 0");
		w->from_rel = around > width / 2 ? around - width / 2 : 0;
		w->to_rel = around > INT64_MAX - (width - width / 2) ? INT64_MAX
								     : around + (width - width / 2);
		w->to_set = true;
	}
	if (w->to_set && w->to_rel < w->from_rel)
		return cli_usage_error("window", "the window ends before it begins");
	return -1;
}

/* The options into w and o. -1 to go on, else the exit status (--help, a usage
 * error). */
static int parse_options(int argc, char **argv, struct window *w, struct options *o)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"around", required_argument, NULL, 'a'},
		{"width", required_argument, NULL, 'w'},
		{"absolute", no_argument, NULL, 'A'},
		{"no-clip", no_argument, NULL, 'n'},
		{"exact", no_argument, NULL, 'x'},
		{"margin", required_argument, NULL, 'm'},
		{"output", required_argument, NULL, 'o'},
		{"gzip", no_argument, NULL, 'z'},
		{"rank", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "f:t:a:w:Anxm:o:zh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (time_option("--from", optarg, &w->from_rel))
				return CLI_ERROR;
			o->from_set = true;
			break;
		case 't':
			if (time_option("--to", optarg, &w->to_rel))
				return CLI_ERROR;
			w->to_set = true;
			break;
		case 'a':
			if (time_option("--around", optarg, &o->around))
				return CLI_ERROR;
			o->around_set = true;
			break;
		case 'w':
			if (time_option("--width", optarg, &o->width))
				return CLI_ERROR;
			o->width_set = true;
			break;
		case 'A':
			w->absolute = true;
			break;
		case 'n':
			w->clip = false;
			break;
		case 'x':
			w->exact = true;
			break;
		case 'm':
			if (time_option("--margin", optarg, &w->margin))
				return CLI_ERROR;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'z':
			o->gzip = true;
			break;
		case 'R': {
			char *end;
			o->rank = strtol(optarg, &end, 10);
			if (end == optarg || *end != '\0' || o->rank < 0)
				return cli_usage_error("window", "--rank wants a rank, 0 or more");
			break;
		}
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("window", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("window",
				       argc == optind ? "no FILE to read" : "one FILE at a time");
	return settle_window(w, o);
}

/* A file (not standard input) opened: *fd, and whether it is read in order rather
 * than searched. 0, or -1 (said). */
static int open_input(const char *path, const struct window *w, struct source *src, int *fd,
		      bool *sequential)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		cli_error("window", "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	/* a .pftrace is read in order, through its JSON (cli_open_trace()) */
	*sequential = w->exact || pf_sniff_path(path) == 1 || !window_searchable(*fd, &src->size);
	return 0;
}

/* The window written: what it holds, and what was read, said. */
static void report(const struct window *w, const struct source *src)
{
	char got[32], all[32];

	if (src->rc < 0) {
		cli_error("window", "%s: %s", w->file, src->st.what);
		cli_error("window", "the window holds what was before the error");
	} else if (src->st.cut) {
		cli_note("window", "warning: %s was cut short: the window holds its whole events",
			 w->file);
	}
	if (w->ends_unknown + w->async_unknown > 0)
		cli_note("window",
			 "note: %" PRIu64 " E and %" PRIu64
			 " e events in the window end slices begun before the part of %s "
			 "that was read: left out (--exact reads all of it)",
			 w->ends_unknown, w->async_unknown, w->file);
	if (src->searched && w->max_lag > w->margin)
		cli_note("window",
			 "warning: %s goes back in time by up to %" PRId64
			 " ns between lines, more than --margin (%" PRId64
			 " ns): events of the window may be missing; use a larger "
			 "--margin, or --exact",
			 w->file, w->max_lag, w->margin);
	say_mb(got, sizeof(got), src->bytes);
	say_mb(all, sizeof(all), src->size);
	cli_note("window",
		 "wrote %s: %" PRIu64 " events (%" PRIu64 " X clipped), %" PRIu64
		 " slices reopened, %" PRIu64 " ended at the window's end; read %s%s%s%s",
		 output_name(w->out), w->events, w->clipped, w->reopened, w->closed, got,
		 src->size > 0 ? " of " : "", src->size > 0 ? all : "",
		 src->searched ? " (searched)" : " (in order)");
}

/* The file to read: the argument, or the one a manifest lists (of o->rank when
 * asked) into *path; 0, or the exit status having said why. */
static int pick_file(const char *arg, const struct options *o, struct manifest_files *files,
		     const char **path)
{
	char *const args[] = {(char *)arg};
	char why[PATH_MAX + 128];
	size_t found = 0;

	if (manifest_expand(args, 1, files, why, sizeof(why)) != 0) {
		cli_error("window", "%s", why);
		return CLI_ERROR;
	}
	for (size_t i = 0; i < files->n; i++)
		if (o->rank < 0 || files->ranks[i] == o->rank)
			*path = files->paths[i], found++;
	if (files->manifests == 0 && o->rank >= 0)
		return cli_usage_error("window", "--rank picks a file of a job's manifest");
	if (found == 1)
		return 0;
	if (o->rank >= 0)
		cli_error("window", "%s lists %zu files of rank %ld: window reads one", arg, found,
			  o->rank);
	else
		cli_error("window",
			  "%s lists %zu files: window reads one (--rank R picks rank R's, "
			  "ringtrace merge -o job.json %s makes one)",
			  arg, found, arg);
	return CLI_ERROR;
}

/* The window of the file at path (or "-") as w and o ask. */
static int window_file(struct window *wp, const struct options *op, const char *path)
{
	struct window w = *wp;
	struct options o = *op;
	struct source src = {.warnings = {.max = 10}};
	bool sequential = true;
	char *out_path = NULL;
	int err = 0, status = CLI_OK, fd = -1;

	w.file = strcmp(path, "-") == 0 ? "<stdin>" : path;
	src.warnings.file = w.file;
	out_path = o.output != NULL ? strdup(o.output) : cli_default_output(path, "window");
	if (out_path == NULL) {
		cli_error("window", "out of memory");
		return CLI_ERROR;
	}
	if (strcmp(path, "-") != 0 && open_input(path, &w, &src, &fd, &sequential)) {
		free(out_path);
		return CLI_ERROR;
	}
	err = output_open(out_path, o.gzip || output_path_is_gzip(out_path), &w.out);
	if (err != 0) {
		cli_error("window", "cannot write %s: %s", out_path, output_strerror(err));
		free(out_path);
		if (fd >= 0)
			close(fd);
		return CLI_ERROR;
	}
	threads_init(&w.threads, sizeof(struct window_thread));
	carry_init(&w.carry);
	err = output_puts(w.out, "[\n");
	if (!err && !sequential)
		err = window_read_searched(&w, &src, fd, &sequential);
	if (!err && sequential)
		err = window_read_part(&w, &src, path, PART_ALL);
	cli_warnings_done(&src.warnings);
	if (!err && cli_not_a_trace("window", w.file, &src.st)) {
		status = CLI_FINDINGS; /* nothing written: the output is not committed */
	} else if (!err && src.rc < 0 && src.st.events == 0) {
		cli_error("window", "%s", src.st.message);
		status = CLI_ERROR;
	} else if (err || window_finish(&w) || output_commit(w.out) != 0) {
		if (w.nomem)
			cli_error("window", "out of memory");
		else if (output_error(w.out) != NULL)
			cli_error("window", "%s", output_error(w.out));
		status = CLI_ERROR;
	} else {
		report(&w, &src);
		status = src.rc < 0 ? CLI_ERROR : CLI_OK;
	}
	free_window(&w);
	free(out_path);
	if (fd >= 0)
		close(fd);
	return status;
}

int cmd_window(int argc, char **argv)
{
	struct window w = {.clip = true, .margin = DEFAULT_MARGIN_NS};
	struct options o = {.rank = -1};
	struct manifest_files files = {0};
	const char *path = NULL;
	int status = parse_options(argc, argv, &w, &o);

	if (status >= 0)
		return status;
	/* a job's manifest: the file it lists (its path lives until the window is cut) */
	status = pick_file(argv[optind], &o, &files, &path);
	if (status == 0)
		status = window_file(&w, &o, path);
	manifest_files_free(&files);
	return status;
}
