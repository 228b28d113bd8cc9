/* SPDX-License-Identifier: MIT */
/*
 * A trace file read into a tally (tally.h) the way `stats` and `diff` read theirs:
 * opened through the frame (cli_open_trace()), with a progress bar and the reader's
 * warnings on standard error (the first 10), and what went wrong said as the
 * command's message. The tally itself prints nothing; this is where its result
 * becomes the command's words and exit status.
 *
 * Thread safety: none; one per thread.
 */
#ifndef RTR_TOOLS_TALLY_FILE_H
#define RTR_TOOLS_TALLY_FILE_H

#include "cli.h"
#include "progress.h"
#include "tally.h"

struct tally_file {
	struct tally tally;
	struct trace *r; /* NULL when it could not be opened */
	struct progress bar;
	struct cli_warnings warnings;
};

/*
 * Read the trace at path ("-": standard input) to its end into f->tally, as
 * subcommand cmd. f->tally is initialised whatever happens (tally_file_close() it).
 * Returns:
 *   CLI_OK        f->tally holds the file; its st->error may be set (malformed
 *                 input: it holds the events before it; the caller says so);
 *   CLI_FINDINGS  JSON that is not a trace (said: cli_not_a_trace());
 *   CLI_ERROR     unreadable, out of memory, or nothing readable (said).
 */
int tally_file_read(struct tally_file *f, const struct tally_options *opt, const char *cmd,
		    const char *path);

/* Free the tally and close the file. */
void tally_file_close(struct tally_file *f);

#endif /* RTR_TOOLS_TALLY_FILE_H */
