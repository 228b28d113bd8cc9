/* SPDX-License-Identifier: MIT */
/*
 * Trace files and profiles read into tallies (tally.h, tally_sum.h) the way `stats`
 * and `diff` read theirs: opened through the frame (cli_open_trace()), with a progress
 * bar (one input only) and the reader's warnings on standard error (the first 10 per
 * file), and what went wrong said as the command's message. The tally itself prints
 * nothing; this is where its result becomes the command's words and exit status.
 *
 * A profile (profile.h) is found by its content: JSON that is not a trace but an object
 * whose "type" is "ringtrace-profile".
 *
 * Thread safety: tally_file_read() on several threads at once, each with its own f;
 * tally_inputs_read() from one thread (it starts its own).
 */
#ifndef RTR_TOOLS_TALLY_FILE_H
#define RTR_TOOLS_TALLY_FILE_H

#include "cli.h"
#include "profile.h"
#include "progress.h"
#include "spread.h"
#include "tally.h"
#include "tally_sum.h"

struct tally_file {
	struct tally tally;
	struct trace *r; /* NULL when it could not be opened */
	struct progress bar;
	struct cli_warnings warnings;
	struct profile_doc profile; /* the top-level keys of a JSON object */
	bool is_profile;	    /* the input is a profile: f->profile holds it */
};

/*
 * Read the trace at path ("-": standard input) to its end into f->tally, as
 * subcommand cmd, with a progress bar when bar. f->tally is initialised whatever
 * happens (tally_file_close() it). Returns:
 *   CLI_OK        f->tally holds the file; its st->error may be set (malformed
 *                 input: it holds the events before it; the caller says so); or
 *                 f->is_profile: the input is a profile, in f->profile;
 *   CLI_FINDINGS  JSON that is neither a trace nor a profile (said: cli_not_a_trace());
 *   CLI_ERROR     unreadable, out of memory, or nothing readable (said).
 */
int tally_file_read(struct tally_file *f, const struct tally_options *opt, const char *cmd,
		    const char *path, bool bar);

/* Free the tally and close the file. */
void tally_file_close(struct tally_file *f);

/*
 * Read the inputs paths[0..n) (traces and profiles, mixed) into s, an empty sum by
 * opt->by, on jobs threads (0: the online CPUs) and over the ranks of an MPI job
 * (spread.h), as subcommand cmd. Each input's problems are said as it is read, its
 * warnings kept in s (prefixed with its name when n > 1) and its exit status in
 * s->status (CLI_FINDINGS for one read up to malformed input, s->errors counts them).
 * Returns SPREAD_ROOT (s holds every input), SPREAD_OTHER (another rank reports) or
 * SPREAD_FAILED (out of memory, said).
 */
int tally_inputs_read(struct tally_sum *s, const struct tally_options *opt, const char *cmd,
		      const char *const *paths, size_t n, unsigned jobs);

#endif /* RTR_TOOLS_TALLY_FILE_H */
