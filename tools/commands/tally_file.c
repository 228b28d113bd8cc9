/* SPDX-License-Identifier: MIT */
/*
 * A trace file read into a tally, with the frame's bar, warnings and messages (see
 * tally_file.h).
 */
#include "tally_file.h"

int tally_file_read(struct tally_file *f, const struct tally_options *opt, const char *cmd,
		    const char *path)
{
	struct trace_options ro = {
		.on_issue = cli_warn_issue, .ctx = &f->warnings, .progress = &f->bar};
	struct tally *c = &f->tally;
	int found;

	tally_init(c, opt);
	c->file = path;
	f->warnings = (struct cli_warnings){.file = path, .max = 10};
	progress_init(&f->bar, "reading", stderr);
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
}
