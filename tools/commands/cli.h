/* SPDX-License-Identifier: MIT */
/*
 * The frame of the `ringtrace` command: the subcommand table's entry type, exit
 * statuses, and what every subcommand does the same way (messages, numbers,
 * default output names, warnings about the input).
 *
 * Adding a subcommand: write tools/commands/<name>.c (or a folder
 * tools/commands/<name>/ when it takes several files) with an entry point
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the subcommand's name; it
 * handles its own --help), declare it below, add one line to the table in
 * tools/ringtrace.c and the files to tools/CMakeLists.txt.
 */
#ifndef RTR_TOOLS_CLI_H
#define RTR_TOOLS_CLI_H

#include "trace.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, the same for every subcommand. */
enum {
	CLI_OK = 0,	  /* done, nothing to report */
	CLI_FINDINGS = 1, /* check found something; stats read only up to malformed input */
	CLI_ERROR = 2	  /* bad usage, unreadable input, failed output */
};

struct command {
	const char *name;
	const char *summary; /* one line for `ringtrace --help` */
	int (*run)(int argc, char **argv);
};

int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_split(int argc, char **argv);
int cmd_window(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* "ringtrace CMD: message" on standard error: what went wrong. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same for what was done ("wrote OUT: N events"). */
void cli_note(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cli_error() and a pointer to --help; returns CLI_ERROR. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A decimal number with no sign and nothing after it. 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);

/*
 * The output path a subcommand uses when -o is not given: "t.json" -> "t.TAG.json",
 * "t.json.gz" -> "t.TAG.json.gz", "-" -> "-", anything else gets ".TAG.json" (and
 * ".gz" when the input is gzip by its name). Returns a malloc'd string or NULL.
 */
char *cli_default_output(const char *input, const char *tag);

/*
 * Options every subcommand takes, taken out of its arguments before it sees them:
 *   --max-event-mb N   the largest event read, in MiB (trace_options
 *                      .max_event_bytes); a larger one is skipped and reported.
 * Returns the new argc, or -1 after printing a usage error.
 */
int cli_common_options(const char *cmd, int argc, char **argv);

/* --max-event-mb in bytes; 0: the default. */
uint64_t cli_max_event_bytes(void);

/*
 * Open a trace for a subcommand, with the common options (trace_open(): JSON or a
 * Perfetto trace, told by its bytes; nothing is written); on failure print why and
 * return NULL.
 */
struct trace *cli_open_trace(const char *cmd, const char *path,
			     const struct trace_options *options);

/* Issues of an input that a subcommand reads past: printed as warnings, the first
 * few only. Pass as trace_options.on_issue with a struct cli_warnings. */
struct cli_warnings {
	const char *file;
	unsigned shown, max;
	uint64_t count;
};

void cli_warn_issue(void *ctx, const struct trace_issue *issue);

/* "... and N more warnings" when some were not shown. */
void cli_warnings_done(const struct cli_warnings *w);

/* When the input read to its end is JSON but not a trace: says so ("FILE: not a
 * trace: why") and returns true; the tool then exits CLI_FINDINGS and writes
 * nothing. */
bool cli_not_a_trace(const char *cmd, const char *file, const struct trace_status *st);

#endif /* RTR_TOOLS_CLI_H */
