/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace convert`: a trace in the object form, {"traceEvents":[...],
 * "otherData":{...}}, for tools that insist on it; or back to the bare array; or
 * into Perfetto's protobuf format (lib/pf_write.h), a .pftrace into JSON.
 *
 * Streaming: events are copied through one per line as they are read. The start
 * marker's args (origin, host, pid, rank, version, configuration) are kept, and
 * written after the array as "otherData", the object form's key for metadata,
 * which chrome://tracing shows in its metadata view. An input cut short gives a
 * complete output of its whole events (its open slices stay open: `ringtrace check
 * --repair` ends them).
 */
#include "cli.h"
#include "common/names.h"
#include "json.h"
#include "output.h"
#include "pf_write.h"
#include "pftrace.h"
#include "progress.h"
#include "trace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum form { TO_OBJECT, TO_ARRAY, TO_JSON, TO_PFTRACE };

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace convert [--to object|array|json|pftrace] [-o OUT] FILE\n"
		   "\n"
		   "Writes the trace FILE (.json or .json.gz; - is standard input) in another\n"
		   "form, streaming, one event per line:\n"
		   "  object   {\"traceEvents\":[...],\"otherData\":{...}}: the start marker's\n"
		   "           args (origin, host, pid, ...) as otherData; for tools that\n"
		   "           want the object form. Never for a file that may be cut short:\n"
		   "           every viewer refuses a cut object.\n"
		   "  array    the bare array [...] the recorder writes (other top-level keys\n"
		   "           of an object-form input are left out, and named in a note)\n"
		   "  json     a Perfetto trace (.pftrace, .pftrace.gz: found by its bytes) as\n"
		   "           the JSON the recorder writes (the default for one); for a JSON\n"
		   "           input, the same as array. A .pftrace converts to object or\n"
		   "           array too.\n"
		   "  pftrace  Perfetto's protobuf trace (what the recorder writes to a\n"
		   "           .pftrace): processes, threads, slices, instants, counters,\n"
		   "           flows, async spans and the markers, for the Perfetto UI and\n"
		   "           trace_processor; `convert --to json` reads it back\n"
		   "\n"
		   "The other top-level keys of an object-form input (stackFrames, samples,\n"
		   "metadata, systemTraceEvents, otherData, ...) are carried over to object\n"
		   "output after the events, up to --max-event-mb in all; an input's otherData\n"
		   "is kept in place of the start marker's.\n"
		   "\n"
		   "options:\n"
		   "  -t, --to FORM        object (the default; json for a .pftrace), array,\n"
		   "                       json or pftrace\n"
		   "  -o, --output OUT     where to write; gzip when OUT ends in .gz; - for\n"
		   "                       standard output (default: FILE with .object or .array\n"
		   "                       before .json, FILE.json for FILE.pftrace, FILE.pftrace\n"
		   "                       for FILE.json with --to pftrace; standard output for\n"
		   "                       standard input)\n"
		   "  -h, --help           this help\n"
		   "\n"
		   "exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		   "output then holds the events before the error), failed output.\n");
}

/* The start marker's args: the first RTR__MARK_START event's, an object. */
static int keep_start_args(struct buf *kept, bool *have, const struct trace_event *ev)
{
	if (*have || ev->phase != 'i' || !trace_value_is(&ev->name, RTR__MARK_START) ||
	    ev->args.type != TRACE_OBJECT)
		return 0;
	*have = true;
	return buf_put(kept, ev->args.text, ev->args.len);
}

/*
 * The object form's other top-level keys ("stackFrames", "samples", "metadata",
 * "systemTraceEvents", "otherData", ...), as the reader hands them over: kept as
 * ,"key":value members for an object output, up to a total of the event limit;
 * named for the note of what an output left out.
 */
struct carried {
	struct buf members;  /* ,"key":value... */
	struct buf left_out; /* "key" (N bytes), ... */
	uint64_t limit;	     /* bytes of members kept at most */
	bool keep;	     /* object output */
	bool has_other_data; /* an "otherData" among them */
	bool nomem;
};

static void carry_member(void *ctx, const char *key, size_t key_len, const char *json, size_t len)
{
	struct carried *c = ctx;
	size_t before = c->members.len;
	char size[48];

	if (c->keep && json != NULL && c->members.len + key_len + len <= c->limit) {
		if (buf_putc(&c->members, ',') || json_put_string(&c->members, key, key_len) < 0 ||
		    buf_putc(&c->members, ':') || buf_put(&c->members, json, len)) {
			c->members.len = before;
			c->nomem = true;
			return;
		}
		c->has_other_data |= key_len == 9 && memcmp(key, "otherData", 9) == 0;
		return;
	}
	snprintf(size, sizeof(size), " (%zu bytes)", len);
	if ((c->left_out.len > 0 && buf_puts(&c->left_out, ", ")) ||
	    json_put_string(&c->left_out, key, key_len) < 0 || buf_puts(&c->left_out, size))
		c->nomem = true;
}

/* The events into a Perfetto trace (pf_write.h). */
static int convert_to_pftrace(struct trace *r, struct output *out, bool *nomem,
			      struct pf_writer **pf)
{
	const struct trace_event *ev;
	int err = pf_writer_create(out, pf);

	if (err != 0) {
		*nomem = true;
		return -1;
	}
	while (!err && trace_next(r, &ev) == 1)
		err = pf_writer_event(*pf, ev);
	err = err || pf_writer_finish(*pf);
	*nomem |= err && pf_writer_nomem(*pf);
	return err ? -1 : 0;
}

static int convert(struct trace *r, struct output *out, enum form to, bool *nomem,
		   const struct carried *carried)
{
	struct buf start_args = {0};
	bool have_start = false;
	const struct trace_event *ev;
	uint64_t n = 0;
	int err;

	err = output_puts(out, to == TO_OBJECT ? "{\"traceEvents\":[\n" : "[\n");
	while (!err && trace_next(r, &ev) == 1) {
		if (keep_start_args(&start_args, &have_start, ev)) {
			*nomem = true;
			err = -1;
			break;
		}
		/* The comma goes before each event but the first: no comma before ']'. */
		err = (n++ > 0 && output_write(out, ",\n", 2)) ||
		      output_write(out, ev->json, ev->json_len);
	}
	if (!err) {
		const char *close = n > 0 ? "\n]" : "]";

		if (to == TO_ARRAY)
			err = output_puts(out, close) || output_puts(out, "\n");
		else
			err = output_puts(out, close) ||
			      (carried->members.len > 0 &&
			       output_write(out, carried->members.p, carried->members.len)) ||
			      (have_start && !carried->has_other_data &&
			       (output_puts(out, ",\"otherData\":") ||
				output_write(out, start_args.p, start_args.len))) ||
			      output_puts(out, "}\n");
	}
	buf_free(&start_args);
	return err ? -1 : 0;
}

static int output_write_ctx(void *ctx, const void *p, size_t n)
{
	return output_write(ctx, p, n);
}

/* t.pftrace -> t.json, t.pftrace.gz -> t.json.gz (likewise .perfetto-trace). */
static char *pftrace_output_name(const char *input)
{
	static const char *const ext[] = {".pftrace", ".perfetto-trace"};
	size_t n = strlen(input);
	char *out;

	if (strcmp(input, "-") == 0)
		return strdup("-");
	for (int gz = 1; gz >= 0; gz--) {
		for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
			size_t k = strlen(ext[i]) + (gz ? 3 : 0);

			if (n < k || strncmp(input + n - k, ext[i], strlen(ext[i])) != 0 ||
			    (gz && strcmp(input + n - 3, ".gz") != 0))
				continue;
			out = malloc(n - k + 9);
			if (out != NULL)
				sprintf(out, "%.*s.json%s", (int)(n - k), input, gz ? ".gz" : "");
			return out;
		}
	}
	return cli_default_output(input, "json");
}

/* A .pftrace as the recorder's JSON, straight from the decoder. */
static int convert_pftrace(const char *input, const char *output)
{
	const char *name = strcmp(input, "-") == 0 ? "<stdin>" : input;
	struct pf_options po = {.max_packet_bytes = cli_max_event_bytes()};
	char *out_path = output != NULL ? strdup(output) : pftrace_output_name(input);
	struct pf_status st;
	struct output *out;
	uint64_t events;
	int err, rc, status = CLI_OK;

	if (out_path == NULL) {
		cli_error("convert", "out of memory");
		return CLI_ERROR;
	}
	err = output_open(out_path, output_path_is_gzip(out_path), &out);
	if (err != 0) {
		cli_error("convert", "cannot write %s: %s", out_path, output_strerror(err));
		free(out_path);
		return CLI_ERROR;
	}
	rc = pf_to_json(input, output_write_ctx, out, &po, &st, &events);
	if (rc != 0 && (st.error == PF_ERR_IO || st.error == PF_ERR_NOMEM) && st.packets == 0) {
		cli_error("convert", "cannot read %s: %s", name, st.message);
		status = CLI_ERROR;
	} else if (output_commit(out) != 0 || (rc != 0 && st.error == PF_ERR_STOPPED)) {
		cli_error("convert", "%s",
			  output_error(out) != NULL ? output_error(out) : st.message);
		status = CLI_ERROR;
	} else if (rc != 0) {
		cli_error("convert", "%s: %s", name, st.message);
		cli_error("convert",
			  "%s holds the %" PRIu64 " events of the %" PRIu64
			  " packets before the error",
			  output_name(out), events, st.packets);
		status = CLI_ERROR;
	} else if (st.cut) {
		cli_note("convert",
			 "%s was cut inside a packet at byte %" PRIu64 ": %s holds the %" PRIu64
			 " events of its %" PRIu64 " whole packets",
			 name, st.cut_offset, output_name(out), events, st.packets);
	} else {
		cli_note("convert", "wrote %s: %" PRIu64 " events from %" PRIu64 " packets",
			 output_name(out), events, st.packets);
	}
	output_free(out);
	free(out_path);
	return status;
}

/* t.json, t.json.gz -> t.pftrace; a Perfetto input t.pftrace -> t.converted.pftrace. */
static char *pftrace_default_name(const char *input)
{
	static const char *const ext[] = {".json", ".pftrace", ".perfetto-trace"};
	size_t n = strlen(input);
	char *out;

	if (strcmp(input, "-") == 0)
		return strdup("-");
	if (n >= 3 && strcmp(input + n - 3, ".gz") == 0)
		n -= 3;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);

		if (n > k && strncmp(input + n - k, ext[i], k) == 0) {
			n -= k;
			break;
		}
	}
	out = malloc(n + sizeof(".converted.pftrace"));
	if (out == NULL)
		return NULL;
	sprintf(out, "%.*s.pftrace", (int)n, input);
	if (strcmp(out, input) == 0)
		sprintf(out, "%.*s.converted.pftrace", (int)n, input);
	return out;
}

/* What a Perfetto output left out, and why. */
static void pftrace_notes(const struct pf_writer *pf, const char *out)
{
	const struct pf_writer_counts *c = pf_writer_counts(pf);

	if (c->no_place > 0)
		cli_note("convert",
			 "left out of %s: %" PRIu64
			 " events of phases the Perfetto format has no place for (%s)",
			 out, c->no_place, c->phases);
	if (c->no_time > 0)
		cli_note("convert", "left out of %s: %" PRIu64 " events without a time", out,
			 c->no_time);
	if (c->over_bound > 0)
		cli_note("convert",
			 "left out of %s: %" PRIu64
			 " events on tracks past the state bound (1 M items, 24 MiB)",
			 out, c->over_bound);
}

/* The options into *to (*to_given: --to was given) and *output. -1 to go on, else the
 * exit status (--help, a usage error). */
static int parse_options(int argc, char **argv, enum form *to, bool *to_given, const char **output)
{
	static const struct option longopts[] = {
		{"to", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "t:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (strcmp(optarg, "object") == 0)
				*to = TO_OBJECT;
			else if (strcmp(optarg, "array") == 0)
				*to = TO_ARRAY;
			else if (strcmp(optarg, "json") == 0)
				*to = TO_JSON;
			else if (strcmp(optarg, "pftrace") == 0)
				*to = TO_PFTRACE;
			else
				return cli_usage_error(
					"convert",
					"--to wants object, array, json or pftrace, not '%s'",
					optarg);
			*to_given = true;
			break;
		case 'o':
			*output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("convert", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("convert", argc == optind ? "no FILE to convert"
								 : "one FILE at a time");
	return -1;
}

int cmd_convert(int argc, char **argv)
{
	struct cli_warnings warnings = {.max = 10};
	struct progress bar;
	struct carried carried = {.limit = TRACE_MAX_EVENT_BYTES};
	struct trace_options ro = {.on_issue = cli_warn_issue,
				   .ctx = &warnings,
				   .progress = &bar,
				   .on_top_level = carry_member,
				   .top_level_ctx = &carried};
	const struct trace_status *st;
	enum form to = TO_OBJECT;
	const char *output = NULL;
	struct pf_writer *pf = NULL;
	struct trace *r;
	struct output *out;
	char *out_path;
	bool nomem = false, to_given = false;
	int err, status;

	status = parse_options(argc, argv, &to, &to_given, &output);
	if (status >= 0)
		return status;
	status = CLI_OK;
	if (pf_sniff_path(argv[optind]) == 1 && (to == TO_JSON || !to_given))
		return convert_pftrace(argv[optind], output);
	if (to == TO_JSON)
		to = TO_ARRAY;
	carried.keep = to == TO_OBJECT;
	progress_init(&bar, "converting", stderr);
	r = cli_open_trace("convert", argv[optind], &ro);
	if (r == NULL)
		return CLI_ERROR;
	warnings.file = trace_name(r);
	out_path = output != NULL ? strdup(output)
		   : to == TO_PFTRACE
			   ? pftrace_default_name(argv[optind])
			   : cli_default_output(argv[optind], to == TO_OBJECT ? "object" : "array");
	if (out_path == NULL) {
		cli_error("convert", "out of memory");
		trace_close(r);
		return CLI_ERROR;
	}
	err = output_open(out_path, output_path_is_gzip(out_path), &out);
	if (err != 0) {
		cli_error("convert", "cannot write %s: %s", out_path, output_strerror(err));
		free(out_path);
		trace_close(r);
		return CLI_ERROR;
	}
	err = to == TO_PFTRACE ? convert_to_pftrace(r, out, &nomem, &pf)
			       : convert(r, out, to, &nomem, &carried);
	nomem |= carried.nomem;
	progress_finish(&bar);
	cli_warnings_done(&warnings);
	st = trace_status(r);
	if (err == 0 && cli_not_a_trace("convert", warnings.file, st)) {
		status = CLI_FINDINGS; /* nothing written: output_free() removes it */
	} else if (err == 0 && st->error != TRACE_OK && st->events == 0) {
		/* Nothing read before the error: no trace here, so write nothing. */
		cli_error("convert", "%s", st->message);
		status = CLI_ERROR;
	} else if (err != 0 || output_commit(out) != 0) {
		cli_error("convert", "%s", nomem ? "out of memory" : output_error(out));
		status = CLI_ERROR;
	} else if (st->error != TRACE_OK) {
		cli_error("convert", "%s", st->message);
		cli_error("convert", "%s holds the %" PRIu64 " events before the error",
			  output_name(out), st->events);
		status = CLI_ERROR;
	} else if (st->cut) {
		cli_note("convert",
			 "%s was cut short: %s holds its %" PRIu64 " whole events; its open "
			 "slices stay open ('ringtrace check --repair' ends them)",
			 warnings.file, output_name(out), st->events);
	} else {
		cli_note("convert", "wrote %s: %" PRIu64 " events", output_name(out), st->events);
	}
	if (pf != NULL && status != CLI_FINDINGS)
		pftrace_notes(pf, output_name(out));
	if (status != CLI_FINDINGS && carried.left_out.len > 0)
		cli_note("convert", "left out of %s: the top-level key%s %.*s of %s%s",
			 output_name(out),
			 memchr(carried.left_out.p, ',', carried.left_out.len) != NULL ? "s" : "",
			 (int)carried.left_out.len, carried.left_out.p, warnings.file,
			 to == TO_ARRAY	    ? " (the array form has no place for them)"
			 : to == TO_PFTRACE ? " (the Perfetto format has no place for them)"
					    : " (over the size limit: --max-event-mb)");
	pf_writer_free(pf);
	buf_free(&carried.members);
	buf_free(&carried.left_out);
	output_free(out);
	free(out_path);
	trace_close(r);
	return status;
}
