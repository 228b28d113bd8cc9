/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check --repair`, the command's side: the input opened with a progress
 * bar and its warnings, the output named and opened, the repair itself (repair.h,
 * which prints nothing), and what it did said on standard error.
 */
#include "check.h"

#include "cli.h"
#include "output.h"
#include "progress.h"
#include "repair.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void report(const char *in, const char *out, const struct repair_result *res,
		   const struct trace_status *st)
{
	char what[256] = "";

	if (res->kept) {
		cli_note("check", "%s was complete; %s holds the same %" PRIu64 " events", in, out,
			 st->events);
		return;
	}
	if (st->cut_in_event)
		snprintf(what, sizeof(what), "; a partial last event of %" PRIu64 " bytes dropped",
			 st->cut_bytes);
	else if (st->cut)
		snprintf(what, sizeof(what), "; it ended after a whole event");
	if (res->closed > 0)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 "; %" PRIu64 " open slice%s ended", res->closed,
			 res->closed == 1 ? "" : "s");
	if (res->untracked > 0 || res->refused > 0)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 "; %" PRIu64 " threads or open slices past the state bound (%" PRIu64
			 " items, %" PRIu64 " MiB) not kept, their slices left open",
			 res->refused, STATE_MAX_ITEMS, STATE_MAX_BYTES >> 20);
	cli_note("check",
		 "repaired %s into %s: %" PRIu64 " whole events read%s; end marker written", in,
		 out, st->events, what);
}

int check_repair(const char *input, const char *output)
{
	struct cli_warnings warnings = {.max = 10};
	struct progress bar;
	struct trace_options ro = {.on_issue = cli_warn_issue, .ctx = &warnings, .progress = &bar};
	const struct trace_status *st;
	struct repair_result res;
	struct trace *r;
	struct output *out;
	char *out_path;
	int err, status = CLI_OK;

	progress_init(&bar, "repairing", stderr);
	r = cli_open_trace("check", input, &ro);
	if (r == NULL)
		return CLI_ERROR;
	warnings.file = trace_name(r);
	out_path = output != NULL ? strdup(output) : cli_default_output(input, "repaired");
	if (out_path == NULL) {
		trace_close(r);
		cli_error("check", "out of memory");
		return CLI_ERROR;
	}
	err = output_open(out_path, output_path_is_gzip(out_path), &out);
	if (err != 0) {
		cli_error("check", "cannot write %s: %s", out_path, output_strerror(err));
		free(out_path);
		trace_close(r);
		return CLI_ERROR;
	}
	err = repair_trace(r, out, &res);
	progress_finish(&bar);
	cli_warnings_done(&warnings);
	st = trace_status(r);
	if (err != 0) {
		cli_error("check", "%s",
			  err == -ENODATA  ? st->message
			  : err == -ENOMEM ? "out of memory"
					   : output_error(out));
		status = CLI_ERROR;
	} else if (res.stopped) {
		cli_error("check", "%s", st->message);
		cli_error("check", "%s holds the %" PRIu64 " events before the error, completed",
			  output_name(out), st->events);
		status = CLI_ERROR;
	} else {
		report(warnings.file, output_name(out), &res, st);
	}
	output_free(out);
	free(out_path);
	trace_close(r);
	return status;
}
