/* SPDX-License-Identifier: MIT */
/*
 * Trace files and profiles read into tallies, with the frame's bar, warnings and
 * messages (see tally_file.h).
 */
#include "tally_file.h"

#include "manifest.h"

#include "spread.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reader's issues, but for a profile's want of "traceEvents": it has none. */
static void on_issue(void *ctx, const struct trace_issue *issue)
{
	struct tally_file *f = ctx;

	if (issue->kind != TRACE_ISSUE_NO_EVENTS_KEY || !f->profile.is_profile)
		cli_warn_issue(&f->warnings, issue);
}

int tally_file_read(struct tally_file *f, const struct tally_options *opt, const char *cmd,
		    const char *path, bool bar)
{
	struct trace_options ro = {.on_issue = on_issue,
				   .ctx = f,
				   .progress = &f->bar,
				   .on_top_level = profile_on_top_level,
				   .top_level_ctx = &f->profile};
	struct tally *c = &f->tally;
	int found;

	tally_init(c, opt);
	c->file = path;
	f->is_profile = false;
	profile_doc_init(&f->profile);
	f->warnings = (struct cli_warnings){.file = path, .max = 10};
	progress_init(&f->bar, "reading", bar ? stderr : NULL);
	f->r = cli_open_trace(cmd, path, &ro);
	if (f->r == NULL)
		return CLI_ERROR;
	f->warnings.file = trace_name(f->r);
	found = tally_read(c, f->r);
	progress_finish(&f->bar);
	cli_warnings_done(&f->warnings);
	switch (found) {
	case TALLY_NOMEM:
		cli_error(cmd, "%s: out of memory", c->file);
		return CLI_ERROR;
	case TALLY_NOT_A_TRACE:
		if (f->profile.is_profile) {
			f->is_profile = true;
			return CLI_OK;
		}
		cli_not_a_trace(cmd, c->file, c->st);
		return CLI_FINDINGS;
	case TALLY_UNREADABLE:
		cli_error(cmd, "%s", c->st->message);
		return CLI_ERROR;
	default:
		return CLI_OK;
	}
}

void tally_file_close(struct tally_file *f)
{
	tally_destroy(&f->tally);
	trace_close(f->r);
	f->r = NULL;
	profile_doc_destroy(&f->profile);
}

/* ------------------------------------------------------------ many inputs */

struct inputs {
	const struct tally_options *opt;
	const char *cmd;
	size_t n;
};

/* A warning about the file as a whole into s, "NAME: " first when several. */
static int warn(struct tally_sum *s, const struct inputs *in, const char *name, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static int warn(struct tally_sum *s, const struct inputs *in, const char *name, const char *fmt,
		...)
{
	char w[1024];
	int k = in->n > 1 ? snprintf(w, sizeof(w), "%s: ", name) : 0;
	va_list ap;

	if (k < 0 || (size_t)k >= sizeof(w))
		k = 0;
	va_start(ap, fmt);
	vsnprintf(w + k, sizeof(w) - (size_t)k, fmt, ap);
	va_end(ap);
	return tally_sum_warn(s, w);
}

/* The warnings about a trace as a whole, one line each. */
static int file_warnings(struct tally_sum *s, const struct inputs *in, const struct tally *c)
{
	const struct trace_status *st = c->st;
	const char *f = c->file;

	return (st->error != TRACE_OK &&
		warn(s, in, f,
		     "the read stopped at an error (%s): these stats cover the %" PRIu64
		     " events before it",
		     st->message, st->events)) ||
	       (st->cut_in_event &&
		warn(s, in, f, "the file ends inside an event (%" PRIu64 " bytes, left out)",
		     st->cut_bytes)) ||
	       (st->cut && warn(s, in, f,
				"the file is cut short (no closing ']'): these stats cover its "
				"%" PRIu64 " whole events",
				st->events)) ||
	       (st->gzip_cut && warn(s, in, f, "the last gzip member is cut short")) ||
	       (c->end.seen && c->end.has_final && !c->end.final &&
		warn(s, in, f,
		     "the end marker says final:false: the run did not stop cleanly, and its "
		     "counts are as of the recorder's last write")) ||
	       (!c->end.seen && c->saw_start && st->error == TRACE_OK &&
		warn(s, in, f,
		     "no end marker: the recorder did not finish the file (killed?), so what it "
		     "dropped is unknown")) ||
	       (c->anomaly[AN_LATE] > 0 &&
		warn(s, in, f,
		     "%" PRIu64 " slices came too far out of order to be nested: their self time "
		     "counts as their whole time, and their parents' self time is too high",
		     c->anomaly[AN_LATE])) ||
	       (c->anomaly[AN_APPROX] > 0 &&
		warn(s, in, f,
		     "%" PRIu64 " slices have an estimated self time: a parent arrived after more "
		     "than %d of its thread's slices and began inside a merged run of them",
		     c->anomaly[AN_APPROX], TALLY_UNCLAIMED_MAX));
}

/* A profile read as a trace read into s; *status as the command's. 0 or -1 (no memory). */
static int add_profile(struct tally_sum *s, const struct inputs *in, struct tally_file *f,
		       uint32_t index, int *status)
{
	char msg[768];
	const char *name = f->tally.file;
	int err = profile_sum(&f->profile, f->tally.st, s, index, name, msg, sizeof(msg));

	if (err == -1)
		return -1;
	if (err != 0) {
		/* nothing of a malformed profile counts: no half tables */
		cli_error(in->cmd, "%s", msg);
		tally_sum_destroy(s);
		tally_sum_init(s, in->opt->by);
		*status = CLI_ERROR;
		return tally_sum_add_nothing(s, index, name, CLI_ERROR);
	}
	if (s->end.has_final && !s->end.final &&
	    warn(s, in, name,
		 "the profile says final:false: it was written while the run went on, and its "
		 "counts are as of then"))
		return -1;
	return 0;
}

static int read_input(void *ctx, size_t index, const char *path, void *p)
{
	struct inputs *in = ctx;
	struct tally_sum *s = p;
	struct tally_file f;
	int status = tally_file_read(&f, in->opt, in->cmd, path, in->n == 1), err = 0;
	const struct tally *c = &f.tally;

	if (status == CLI_OK && f.is_profile) {
		err = add_profile(s, in, &f, (uint32_t)index, &status);
	} else if (status == CLI_OK) {
		err = tally_sum_add_tally(s, c, (uint32_t)index, c->file) ||
		      file_warnings(s, in, c);
		if (c->st->error != TRACE_OK)
			s->status = CLI_FINDINGS;
	} else {
		err = tally_sum_add_nothing(s, (uint32_t)index, path, status);
	}
	tally_file_close(&f);
	if (err != 0)
		cli_error(in->cmd, "%s: out of memory", path);
	return err ? -1 : 0;
}

static int sum_init(void *ctx, void *p)
{
	const struct inputs *in = ctx;

	tally_sum_init(p, in->opt->by);
	return 0;
}

static int sum_merge(void *ctx, void *into, const void *from)
{
	(void)ctx;
	return tally_sum_merge(into, from);
}

static int sum_pack(void *ctx, const void *p, struct buf *out)
{
	(void)ctx;
	return tally_sum_pack(p, out);
}

static int sum_unpack(void *ctx, const void *bytes, size_t len, void *p)
{
	(void)ctx;
	return tally_sum_unpack(p, bytes, len) != 0 ? -1 : 0;
}

static void sum_destroy(void *ctx, void *p)
{
	(void)ctx;
	tally_sum_destroy(p);
}

static void say(void *ctx, const char *line)
{
	const struct inputs *in = ctx;

	cli_note(in->cmd, "%s", line);
}

int tally_inputs_read(struct tally_sum *s, const struct tally_options *opt, const char *cmd,
		      const char *const *paths, size_t n, unsigned jobs)
{
	static const struct spread_ops ops = {
		.size = sizeof(struct tally_sum),
		.init = sum_init,
		.read = read_input,
		.merge = sum_merge,
		.pack = sum_pack,
		.unpack = sum_unpack,
		.destroy = sum_destroy,
		.say = say,
	};
	struct manifest_files files = {0};
	char why[512];
	int r;

	/* a job's manifest among them: the files it lists (every rank does the same) */
	if (manifest_expand((char *const *)paths, n, &files, why, sizeof(why)) != 0) {
		cli_error(cmd, "%s", why);
		manifest_files_free(&files);
		return SPREAD_FAILED;
	}
	struct inputs in = {opt, cmd, files.n};
	r = spread_run(&ops, &in, (const char *const *)files.paths, files.n, jobs, s);
	if (r == SPREAD_FAILED)
		cli_error(cmd, "reading the inputs failed (out of memory, or the MPI step)");
	manifest_files_free(&files);
	return r;
}
