/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check`, the command: its options, and each file checked in one pass
 * (check.h has the design and the map of the files).
 */
#include "check.h"

#include "cli.h"
#include "pftrace.h"
#include "progress.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_event(struct check *c, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&c->threads, ev);
	struct check_thread *ct;
	int64_t end;
	char b[96];

	if (th == NULL) {
		/* Past the state bound, a new thread's events are checked alone. */
		if (threads_refused(&c->threads))
			check_fields(c, ev);
		else
			c->nomem = true;
		return;
	}
	ct = thread_extra(th);
	check_fields(c, ev);
	switch (ev->phase) {
	case 'B':
		check_be_order(c, ct, ev);
		check_begin(c, th, ev);
		if (ev->has_ts)
			check_slice_began(ct, ev->ts_ns);
		break;
	case 'E':
		check_be_order(c, ct, ev);
		check_end(c, th, ct, ev);
		break;
	case 'X':
		if (ev->has_ts)
			check_slice_began(ct, ev->ts_ns);
		if (ev->has_ts && ev->has_dur && ev->dur_ns >= 0 && check_x_end(c, ev, &end))
			check_slice_closed(ct, ev->ts_ns, end);
		break;
	case 'i':
	case 'I':
		if (ev->s.type != TRACE_ABSENT && !trace_value_is(&ev->s, "g") &&
		    !trace_value_is(&ev->s, "p") && !trace_value_is(&ev->s, "t"))
			check_finding(c, RULE_INSTANT_SCOPE, ev->line, ev->col,
				      "instant scope \"s\" %s is not \"g\", \"p\" or \"t\"",
				      check_shown(b, sizeof(b), &ev->s));
		break;
	case 'C':
		check_counter(c, ev);
		break;
	case 'b':
	case 'e':
	case 'n':
		check_async(c, ev);
		break;
	case 's':
	case 't':
	case 'f':
		check_flow(c, th, ct, ev);
		break;
	case 'M':
		check_metadata(c, ev);
		break;
	default:
		break;
	}
}

/*
 * Perfetto's sniffer (GuessTraceType(), trace_type.cc): the first
 * kGuessTraceMaxLookahead bytes with all whitespace removed must begin {" or [{".
 * (docs/format.md once said 128 bytes; the importer's source says 64.) A byte-order
 * mark is the bom rule's: skipped here.
 */
#define SNIFF_BYTES 64

static bool sniffed_as_json(const struct trace_status *st)
{
	size_t i = st->head_len >= 3 && memcmp(st->head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	size_t end = i + SNIFF_BYTES < st->head_len ? i + SNIFF_BYTES : st->head_len;
	char got[3];
	size_t n = 0;

	for (; i < end && n < sizeof(got); i++) {
		unsigned char ch = st->head[i];

		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\v' && ch != '\f')
			got[n++] = (char)ch;
	}
	if (n >= 2 && got[0] == '{' && got[1] == '"')
		return true;
	return n == 3 && memcmp(got, "[{\"", 3) == 0;
}

/* The file as a whole, from the reader's status. */
static void check_file(struct check *c, const struct trace_status *st)
{
	if ((st->form == TRACE_FORM_ARRAY || st->form == TRACE_FORM_OBJECT) && st->events > 0 &&
	    !sniffed_as_json(st))
		check_finding(
			c, RULE_FILE_START, 1, 1,
			"the first %d bytes, blanks removed, do not begin %s: Perfetto's sniffer "
			"does not recognise the file as JSON",
			SNIFF_BYTES, st->form == TRACE_FORM_ARRAY ? "[{\"" : "{\"");
	if (st->cut && st->form == TRACE_FORM_OBJECT)
		check_finding(c, RULE_OBJECT_CUT, 0, 0,
			      "the object form {\"traceEvents\":[...]} cut short: Perfetto and the "
			      "others refuse the whole file");
	if (st->gzip_cut)
		check_finding(c, RULE_GZIP, 0, 0,
			      "the last gzip member is cut short: its whole events were read");
	if (st->cut_in_event)
		check_finding(c, RULE_PARTIAL_EVENT, 0, 0,
			      "the file ends inside an event (%" PRIu64
			      " bytes, not read): Catapult and speedscope fail on it",
			      st->cut_bytes);
	if (st->cut)
		check_finding(c, RULE_CUT, 0, 0,
			      "the file ends after %" PRIu64
			      " event%s without its closing ']': Perfetto, Catapult and speedscope "
			      "load it, DevTools and JSON.parse do not ('ringtrace check --repair' "
			      "completes it)",
			      st->events, st->events == 1 ? "" : "s");
	if (st->events == 0 && (st->complete || st->cut) && c->count[RULE_EMPTY] == 0)
		check_finding(c, RULE_EMPTY, 0, 0, "no events: the viewers refuse an empty trace");
}

static void free_state(struct check *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th))
		free(((struct check_thread *)thread_extra(th))->pending);
	threads_destroy(&c->threads);
	for (struct async_state *as = table_first(&c->async); as != NULL; as = table_next(as))
		free(as->label);
	table_destroy(&c->async);
	for (struct flow_state *fs = table_first(&c->flows); fs != NULL; fs = table_next(fs)) {
		free(fs->name);
		free(fs->cat);
	}
	table_destroy(&c->flows);
	buf_free(&c->key);
}

static void summary(const struct check *c, const struct trace_status *st, size_t threads,
		    bool stopped)
{
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "no JSON value",
		[TRACE_FORM_ARRAY] = "bare array",
		[TRACE_FORM_OBJECT] = "object form",
	};

	printf("%s: %" PRIu64 " event%s on %s%zu thread%s (" TRACE_COUNTS_WHAT "); %s%s", c->file,
	       st->events, st->events == 1 ? "" : "s", threads_count_floor(&c->threads), threads,
	       threads == 1 ? "" : "s", forms[st->form], st->gzip ? ", gzip" : "");
	if (stopped)
		printf(", read stopped at an error");
	else if (st->complete)
		printf(", complete");
	else if (st->cut)
		printf(", cut short");
	if (c->total == 0) {
		printf("; no findings");
	} else {
		printf("; %" PRIu64 " finding%s:", c->total, c->total == 1 ? "" : "s");
		for (int r = 0, n = 0; r < RULE_COUNT; r++) {
			if (c->count[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", check_rules[r].name,
				       c->count[r]);
		}
	}
	if (c->opt->notes && c->total_notes > 0) {
		printf("; %" PRIu64 " note%s:", c->total_notes, c->total_notes == 1 ? "" : "s");
		for (int r = 0, n = 0; r < RULE_COUNT; r++) {
			if (c->notes[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", check_rules[r].name,
				       c->notes[r]);
		}
	}
	putchar('\n');
}

/* Check one file. Returns the exit status for it. */
static int check_one(const char *path, const struct check_options *opt)
{
	struct progress bar;
	struct check c = {.opt = opt};
	struct trace_options ro = {.flags = TRACE_READ_CHECK_STRINGS,
				   .on_issue = check_on_issue,
				   .ctx = &c,
				   .progress = &bar};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct trace *r;
	int rc, status;

	if (pf_sniff_path(path) == 1)
		return pf_check_file(path, opt->quiet, opt->notes, opt->max_per_rule,
				     cli_max_event_bytes());
	progress_init(&bar, "checking", stderr);
	r = cli_open_trace("check", path, &ro);
	if (r == NULL)
		return CLI_ERROR;
	c.file = trace_name(r);
	threads_init(&c.threads, sizeof(struct check_thread));
	table_init(&c.async, sizeof(struct async_state));
	table_init(&c.flows, sizeof(struct flow_state));
	while ((rc = trace_next(r, &ev)) == 1 && !c.nomem)
		check_event(&c, ev);
	progress_finish(&bar);
	st = trace_status(r);
	status = CLI_OK;
	if (c.nomem) {
		cli_error("check", "%s: out of memory", c.file);
		status = CLI_ERROR;
	} else if (rc < 0 && (st->error == TRACE_ERR_SYNTAX || st->error == TRACE_ERR_GZIP)) {
		check_finding(&c, st->error == TRACE_ERR_GZIP ? RULE_GZIP : RULE_JSON, st->line,
			      st->col, "%s", st->what);
	} else if (rc < 0) {
		cli_error("check", "%s", st->message);
		status = CLI_ERROR;
	}
	if (status == CLI_OK) {
		if (rc == 0) {
			check_leftovers(&c);
			check_file(&c, st);
		}
		summary(&c, st, threads_count(&c.threads), rc < 0);
		status = c.total > 0 ? CLI_FINDINGS : CLI_OK;
	}
	free_state(&c);
	trace_close(r);
	return status;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace check [options] FILE...\n"
		   "       ringtrace check --repair [-o OUT] FILE\n"
		   "\n"
		   "Reads each trace (.json or .json.gz; - is standard input) and reports what\n"
		   "the viewers would refuse or misread: one line per finding,\n"
		   "FILE:LINE:COL: RULE: message, then a summary line per file. A Perfetto\n"
		   "trace (.pftrace, plain or gzip, found by its bytes) is checked by the\n"
		   "protobuf rules instead: FILE:@OFFSET: RULE: packet N: message.\n"
		   "\n"
		   "With --repair, writes a complete copy of a FILE that was cut short instead:\n"
		   "the partial last event dropped, open B slices ended at the latest time of\n"
		   "their thread, an end marker that records the repair, the array closed.\n"
		   "\n"
		   "options:\n"
		   "  -q, --quiet            print only the summary line of each file\n"
		   "  -n, --max-per-rule N   print at most N findings of each rule (default 20;\n"
		   "                         0: all of them)\n"
		   "      --notes            print the notes too: what the rules see but no\n"
		   "                         viewer acts on (never in the exit status)\n"
		   "      --rules            list the rules, with why each matters, and exit\n"
		   "  -r, --repair           repair instead of checking (one FILE)\n"
		   "  -o, --output OUT       with --repair: where to write; gzip when OUT ends in\n"
		   "                         .gz; - for standard output (default: FILE with\n"
		   "                         .repaired before .json)\n"
		   "  -h, --help             this help\n"
		   "\n"
		   "exit status: 0 no findings (--repair: the copy is written), 1 findings,\n"
		   "2 usage error, unreadable input or failed output.\n");
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_RULES = 256, OPT_NOTES };
	static const struct option longopts[] = {
		{"quiet", no_argument, NULL, 'q'},
		{"max-per-rule", required_argument, NULL, 'n'},
		{"rules", no_argument, NULL, OPT_RULES},
		{"notes", no_argument, NULL, OPT_NOTES},
		{"repair", no_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct check_options opt = {.max_per_rule = 20};
	const char *output = NULL;
	bool repair = false;
	int ch, status = CLI_OK;

	while ((ch = getopt_long(argc, argv, "qn:ro:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			opt.quiet = true;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &opt.max_per_rule))
				return cli_usage_error("check",
						       "--max-per-rule wants a number, not "
						       "'%s'",
						       optarg);
			break;
		case OPT_RULES:
			for (int r = 0; r < RULE_COUNT; r++)
				printf("%-19s %s\n%-19s   why: %s\n", check_rules[r].name,
				       check_rules[r].what, "", check_rules[r].why);
			pf_check_list_rules();
			return CLI_OK;
		case OPT_NOTES:
			opt.notes = true;
			break;
		case 'r':
			repair = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("check", "unknown option");
		}
	}
	if (optind == argc)
		return cli_usage_error("check", "no FILE to check");
	if (repair) {
		if (argc - optind != 1)
			return cli_usage_error("check", "--repair takes one FILE");
		return check_repair(argv[optind], output);
	}
	if (output != NULL)
		return cli_usage_error("check", "-o goes with --repair");
	for (int i = optind; i < argc; i++) {
		int s = check_one(argv[i], &opt);

		if (s > status)
			status = s;
	}
	return status;
}
