/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace`: command-line tools over trace files. This file is the frame only:
 * it finds the subcommand in the table and hands it the rest of the command line
 * (see cli.h for how to add one).
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifndef RTR_TOOLS_VERSION
#define RTR_TOOLS_VERSION "unknown"
#endif

static const struct command commands[] = {
	{"check", "check a trace against the viewers' rules; --repair completes a cut one",
	 cmd_check},
	{"convert",
	 "write a trace in the object form {\"traceEvents\":[...]} (or back; a .pftrace as JSON)",
	 cmd_convert},
	{"stats", "where the time went: totals, self time and percentiles per name", cmd_stats},
	{"merge", "one timeline from the traces of several processes or MPI ranks", cmd_merge},
	{"split", "cut a trace into self-contained pieces the viewers can open", cmd_split},
	{"window", "the part of a trace in a time window, self-contained, without reading all",
	 cmd_window},
	{"diff", "what got slower between two runs: p50, p99, totals per name, and the verdict",
	 cmd_diff},
	{"report",
	 "where an MPI job's time went: per rank, wait states, imbalance; text, JSON, a page",
	 cmd_report},
	{"record",
	 "run a program with the recorder and the modules asked for, then say where "
	 "the trace is",
	 cmd_record},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace <command> [options] [FILE...]\n"
		   "       ringtrace --help | --version\n"
		   "\n"
		   "Tools over Chrome Trace Event Format files (.json or .json.gz; - is\n"
		   "standard input or output), of any size, in bounded memory. Perfetto\n"
		   "protobuf traces (.pftrace, .pftrace.gz) are read too, found by their bytes.\n"
		   "\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n"
		   "'ringtrace <command> --help' shows a command's options. Every command\n"
		   "also takes --max-event-mb N: events over N MiB (default 16) are skipped\n"
		   "and reported, so that memory stays bounded.\n"
		   "Exit status: 0 fine, 1 findings (check) or a regression (diff --fail-above),\n"
		   "2 usage or I/O error.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static char help_option[] = "--help";
	const struct command *cmd;
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return CLI_ERROR;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(name, "--version") == 0) {
		printf("ringtrace %s\n", RTR_TOOLS_VERSION);
		return CLI_OK;
	}
	if (strcmp(name, "help") == 0) {
		/* `ringtrace help CMD` is `ringtrace CMD --help`. */
		char *help_argv[] = {argv[2], help_option, NULL};

		if (argc < 3) {
			usage(stdout);
			return CLI_OK;
		}
		name = argv[2];
		cmd = find(name);
		if (cmd != NULL)
			return cmd->run(2, help_argv);
	} else {
		cmd = find(name);
		if (cmd != NULL) {
			int n = cli_common_options(name, argc - 1, argv + 1);

			return n < 0 ? CLI_ERROR : cmd->run(n, argv + 1);
		}
	}
	fprintf(stderr, "ringtrace: no command '%s'\n\n", name);
	usage(stderr);
	return CLI_ERROR;
}
