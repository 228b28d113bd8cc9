/* SPDX-License-Identifier: MIT */
/*
 * The `ringtrace` command end to end: the executable is run on golden files, on the
 * corpus of broken inputs (tests/tools/corpus/EXPECT), on files cut short (mid-line,
 * mid-gzip-member), from standard input; what it writes is parsed back with parsers
 * that are not the tool's own (tests/support/trace_read.c, yajl's tree API) and
 * compared value by value.
 */
#include "json_tree.h"
#include "tool_test.h"
#include "trace_read.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ helpers */

static void expect_same_arg(const struct tt_arg *a, const struct tt_arg *b)
{
	assert_string_equal(a->key, b->key);
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case TT_BOOL:
		assert_int_equal(a->b, b->b);
		break;
	case TT_STRING:
		assert_int_equal(a->s_len, b->s_len);
		assert_memory_equal(a->s, b->s, a->s_len);
		break;
	case TT_NULL:
		break;
	default:
		assert_string_equal(a->raw, b->raw);
		break;
	}
}

static void expect_same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* Every value of two events. */
static void expect_same_event(const struct tt_event *a, const struct tt_event *b)
{
	assert_string_equal(a->ph, b->ph);
	expect_same_str(a->name, b->name);
	expect_same_str(a->cat, b->cat);
	expect_same_str(a->scope, b->scope);
	expect_same_str(a->id, b->id);
	expect_same_str(a->bp, b->bp);
	assert_int_equal(a->has_ts, b->has_ts);
	assert_int_equal(a->ts_ns, b->ts_ns);
	assert_int_equal(a->has_dur, b->has_dur);
	assert_int_equal(a->dur_ns, b->dur_ns);
	assert_int_equal(a->has_pid, b->has_pid);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->has_tid, b->has_tid);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->nkeys, b->nkeys);
	assert_int_equal(a->nargs, b->nargs);
	for (size_t i = 0; i < a->nargs; i++)
		expect_same_arg(&a->args[i], &b->args[i]);
}

/* The args object of an event in a tt_trace, as raw text of one key. */
static const struct tt_arg *arg_of(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	if (a == NULL)
		fail_msg("event at line %zu has no args.%s", e->line, key);
	return a;
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *p = tu_read_file(from, &len);

	tool_write(to, p, len);
	free(p);
}

/* ------------------------------------------------------------------ the frame */

static void help_usage_and_exit_statuses(void **state)
{
	static const struct {
		const char *args[5];
		int status;
		const char *out, *err;
	} cases[] = {
		{{"--help"}, 0, "usage: ringtrace <command>", NULL},
		{{"--version"}, 0, "ringtrace 0.1.0", NULL},
		{{"check", "--help"}, 0, "usage: ringtrace check", NULL},
		{{"convert", "-h"}, 0, "usage: ringtrace convert", NULL},
		{{"help", "check"}, 0, "usage: ringtrace check", NULL},
		{{"check", "--rules"}, 0, "end-mismatch", NULL},
		{{NULL}, 2, NULL, "usage: ringtrace"},
		{{"frobnicate"}, 2, NULL, "no command 'frobnicate'"},
		{{"check"}, 2, NULL, "no FILE to check"},
		{{"check", "--bogus", "x.json"}, 2, NULL, "Try 'ringtrace check --help'"},
		{{"check", "-n", "many", "x.json"}, 2, NULL, "--max-per-rule wants a number"},
		{{"check", "-o", "out.json", "x.json"}, 2, NULL, "-o goes with --repair"},
		{{"check", "--repair", "a.json", "b.json"}, 2, NULL, "--repair takes one FILE"},
		{{"convert", "--to", "yaml", "x.json"},
		 2,
		 NULL,
		 "--to wants object, array, json or pftrace"},
		{{"convert"}, 2, NULL, "no FILE to convert"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;
		struct tool_run r;

		tool_run(&r, NULL, a[0], a[1], a[2], a[3], a[4], NULL);
		if (r.status != cases[i].status ||
		    (cases[i].out && !tool_has(r.out, cases[i].out)) ||
		    (cases[i].err && !tool_has(r.err, cases[i].err)))
			fail_msg("case %zu: status %d\nstdout: %s\nstderr: %s", i, r.status, r.out,
				 r.err);
		tool_run_free(&r);
	}
}

static void unreadable_input_is_exit_2(void **state)
{
	const char *missing = tool_tmp("missing.json");
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", missing, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "cannot read"));
	assert_true(tool_has(r.err, missing));
	tool_run_free(&r);
	tool_run(&r, NULL, "convert", missing, NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	tool_run(&r, NULL, "check", "--repair", RTR_TOOLS_TMP_DIR, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "Is a directory"));
	tool_run_free(&r);
}

/* ------------------------------------------------------------------- check */

static void good_file_has_no_findings(void **state)
{
	struct tool_run r;
	char want[4200];

	(void)state;
	tool_run(&r, NULL, "check", tool_data("data/good.json"), NULL);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want),
		 "%s: 15 events on 3 threads (every event object, M included; distinct pid/tid); "
		 "bare array, complete; no findings\n",
		 tool_data("data/good.json"));
	assert_string_equal(r.out, want);
	assert_string_equal(r.err, "");
	tool_run_free(&r);
}

/* Findings of check's output as "rule@line" or "rule", sorted, one per line. */
static char *findings_of(const char *out, const char *path)
{
	size_t plen = strlen(path), cap = strlen(out) + 1, n = 0, count = 0;
	char *list = malloc(cap), **items = calloc(cap, sizeof(char *)), *result = malloc(cap);

	assert_true(list != NULL && items != NULL && result != NULL);
	memcpy(list, out, cap);
	for (char *line = strtok(list, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char *p = line + plen, *rule;
		long at = 0;

		if (strncmp(line, path, plen) != 0 || *p != ':')
			continue;
		p++;
		if (*p >= '0' && *p <= '9') {
			at = strtol(p, &p, 10);
			p = strchr(p + 1, ':') + 1; /* past the column */
		}
		if (*p != ' ' || p[1] < 'a' || p[1] > 'z')
			continue; /* the summary line */
		rule = p + 1;
		*strchr(rule, ':') = '\0';
		if (at > 0)
			sprintf(rule + strlen(rule), "@%ld", at);
		items[count++] = rule;
	}
	for (size_t i = 1; i < count; i++) {
		for (size_t j = i; j > 0 && strcmp(items[j - 1], items[j]) > 0; j--) {
			char *t = items[j];

			items[j] = items[j - 1];
			items[j - 1] = t;
		}
	}
	result[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		if (i > 0 && strcmp(items[i], items[i - 1]) == 0)
			continue;
		n += (size_t)sprintf(result + n, "%s%s", n > 0 ? " " : "", items[i]);
	}
	free(items);
	free(list);
	return result;
}

/* Output of --repair or convert on a broken input: strict JSON when there is any. */
static void expect_strict_or_absent(const char *path, const struct tool_run *r, const char *input)
{
	struct stat sb;
	yajl_val v;

	if (r->status == 1 && tool_has(r->err, input) && tool_has(r->err, "not a trace")) {
		/* JSON that is not a trace: said, and nothing written. */
		if (access(path, F_OK) == 0)
			fail_msg("%s: not a trace, but %s was written", input, path);
		return;
	}
	if (r->status != 0 && r->status != 2)
		fail_msg("%s: exit status %d\n%s", input, r->status, r->err);
	if (r->status == 2 && !tool_has(r->err, input))
		fail_msg("%s: exit 2 without naming the file:\n%s", input, r->err);
	if (stat(path, &sb) != 0) {
		if (r->status == 0)
			fail_msg("%s: exit 0 but nothing written", input);
		return;
	}
	v = jt_parse_file(path);
	assert_true(YAJL_IS_ARRAY(v) || YAJL_IS_OBJECT(v));
	yajl_tree_free(v);
	unlink(path);
}

/* One line of corpus/EXPECT. */
struct expectation {
	char name[256], path[4200];
	int status;
	const char *findings;
};

static size_t read_expectations(char *manifest, struct expectation *e, size_t max)
{
	size_t n = 0;

	for (char *save = NULL, *line = strtok_r(manifest, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		int used;

		if (line[0] == '#' || line[0] == '\0')
			continue;
		assert_true(n < max);
		if (sscanf(line, "%255s %d %n", e[n].name, &e[n].status, &used) != 2)
			fail_msg("bad EXPECT line: %s", line);
		e[n].findings = line + used;
		snprintf(e[n].path, sizeof(e[n].path), "%s%s", tool_data("corpus/"), e[n].name);
		n++;
	}
	return n;
}

static void corpus_gets_its_findings(void **state)
{
	char *manifest = tu_read_file(tool_data("corpus/EXPECT"), NULL);
	struct expectation e[64];
	size_t n = read_expectations(manifest, e, 64);
	const char *args[64 + 4] = {"check", "-n", "0"};
	int worst = 0;
	struct tool_run r;

	(void)state;
	assert_true(n >= 40);
	args[3 + n] = NULL;
	/* One run over every file: each has its own lines and summary. */
	for (size_t i = 0; i < n; i++) {
		args[3 + i] = e[i].path;
		if (e[i].status > worst)
			worst = e[i].status;
	}
	tool_runv(&r, NULL, NULL, args);
	assert_int_equal(r.status, worst);
	for (size_t i = 0; i < n; i++) {
		char *got = findings_of(r.out, e[i].path);

		if (strcmp(got, e[i].findings) != 0)
			fail_msg("%s:\nfindings: %s\nwanted:   %s\n%s", e[i].name, got,
				 e[i].findings, r.out);
		if (e[i].status == 2 && !tool_has(r.err, e[i].path))
			fail_msg("%s: exit 2 without naming the file:\n%s", e[i].name, r.err);
		if (e[i].status == 1 && !tool_has(r.out, e[i].path))
			fail_msg("%s: no summary", e[i].name);
		free(got);
	}
	tool_run_free(&r);
	/* And one at a time: the exit status of each. */
	for (size_t i = 0; i < n && !TT_TSAN; i++) {
		tool_run(&r, NULL, "check", "-q", e[i].path, NULL);
		if (r.status != e[i].status)
			fail_msg("%s: exit %d, want %d\n%s%s", e[i].name, r.status, e[i].status,
				 r.out, r.err);
		tool_run_free(&r);
	}
	free(manifest);
}

static void corpus_repairs_and_converts_without_a_crash(void **state)
{
	char *manifest = tu_read_file(tool_data("corpus/EXPECT"), NULL);
	struct expectation e[64];
	size_t n = read_expectations(manifest, e, 64);

	(void)state;
	if (TT_TSAN)
		skip(); /* single-threaded: the asan and release runs cover it */
	for (size_t i = 0; i < n; i++) {
		const char *out = tool_tmp("corpus-out.json");
		struct tool_run r;

		tool_run(&r, NULL, "check", "--repair", "-o", out, e[i].path, NULL);
		expect_strict_or_absent(out, &r, e[i].path);
		tool_run_free(&r);
		out = tool_tmp("corpus-out.json");
		tool_run(&r, NULL, "convert", "-o", out, e[i].path, NULL);
		expect_strict_or_absent(out, &r, e[i].path);
		tool_run_free(&r);
	}
	free(manifest);
}

static void findings_per_rule_are_capped_and_quiet_is_quiet(void **state)
{
	const char *path = tool_data("corpus/field_types.json");
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", "-n", "2", path, NULL);
	assert_int_equal(r.status, 1);
	assert_true(tool_has(r.out, "field-type: more findings of this rule not shown"));
	assert_true(tool_has(r.out, "; 5 findings: field-type 5\n"));
	tool_run_free(&r);
	tool_run(&r, NULL, "check", "-q", path, tool_data("data/good.json"), NULL);
	assert_int_equal(r.status, 1); /* the worse of the two */
	assert_false(tool_has(r.out, "field-type:"));
	assert_true(tool_has(r.out, "; 5 findings: field-type 5\n"));
	assert_true(tool_has(r.out, "good.json: 15 events on 3 threads"));
	tool_run_free(&r);
}

static void standard_input_is_checked(void **state)
{
	struct tool_run r;

	(void)state;
	tool_run(&r, tool_data("data/cut_midline.json"), "check", "-q", "-", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "<stdin>: 9 events on 3 threads (every event object, M "
				   "included; distinct pid/tid); bare array, cut short; 5 "
				   "findings: cut 1, partial-event 1, unended 3\n");
	tool_run_free(&r);
}

/* ------------------------------------------------------------------ repair */

static void repaired_cut_file_matches_its_golden(void **state)
{
	const char *out = tool_tmp("cut.repaired.json");
	struct tt_trace got, want;
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", "--repair", "-o", out, tool_data("data/cut_midline.json"),
		 NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "a partial last event of 30 bytes dropped"));
	assert_true(tool_has(r.err, "3 open slices ended"));
	tool_run_free(&r);
	tool_load_strict(out, &got);
	tool_load_strict(tool_data("data/cut_midline.repaired.json"), &want);
	assert_int_equal(got.n, 13);
	assert_int_equal(got.n, want.n);
	for (size_t i = 0; i < got.n; i++)
		expect_same_event(&got.ev[i], &want.ev[i]);
	/* The values that matter, spelled out. */
	assert_string_equal(got.ev[9].name, "inner");
	assert_int_equal(got.ev[9].ts_ns, 10501); /* 1 ns after the end of the X in it */
	assert_string_equal(got.ev[11].name, "nocat");
	assert_null(got.ev[11].cat);
	assert_int_equal(got.ev[11].ts_ns, 12001);
	assert_int_equal(got.ev[11].tid, 202);
	assert_true(arg_of(&got.ev[12], "repaired")->b);
	assert_int_equal(arg_of(&got.ev[12], "partial_bytes_dropped")->i, 30);
	tt_free(&got);
	tt_free(&want);
	/* The repaired file passes check. */
	tool_run(&r, NULL, "check", out, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
}

static void repair_writes_beside_the_input_and_says_so(void **state)
{
	const char *in = tool_tmp("t.json"), *out = tool_tmp("t.repaired.json");
	struct tt_trace t;
	struct tool_run r;

	(void)state;
	copy_file(tool_data("data/cut_midline.json"), in);
	tool_run(&r, NULL, "check", "--repair", in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, out));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_int_equal(t.n, 13);
	tt_free(&t);
	/* In place: the same path in and out. */
	tool_run(&r, NULL, "check", "--repair", "-o", in, in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_load_strict(in, &t);
	assert_int_equal(t.n, 13);
	tt_free(&t);
	unlink(in);
	unlink(out);
}

/*
 * The tools never write through a symbolic link: output to a link, given with -o or
 * planted at the default name (FILE.repaired.json), is refused with exit 2 and the
 * link and what it points to stay as they were; output to a FIFO (like /dev/stdout:
 * not a regular file), or to a link to one, is written into, never renamed over.
 */
static void repair_output_refuses_links_and_writes_into_fifos(void **state)
{
	/* Copies: tool_tmp() and tool_data() results live only 8 calls. */
	char real[4200], link[4200], fifo[4200], got[4200], victim[4200], in[4200];
	char planted[4200], fifo_link[4200], data[4200];
	struct tt_trace t;
	struct tool_run r;
	struct stat sb;
	char buf[65536], *text;
	ssize_t n;
	int fd;

	(void)state;
	snprintf(real, sizeof(real), "%s", tool_tmp("real.json"));
	snprintf(link, sizeof(link), "%s", tool_tmp("link.json"));
	snprintf(fifo, sizeof(fifo), "%s", tool_tmp("fifo"));
	snprintf(got, sizeof(got), "%s", tool_tmp("from-fifo.json"));
	snprintf(victim, sizeof(victim), "%s", tool_tmp("victim.txt"));
	snprintf(in, sizeof(in), "%s", tool_tmp("planted.json"));
	snprintf(planted, sizeof(planted), "%s", tool_tmp("planted.repaired.json"));
	snprintf(fifo_link, sizeof(fifo_link), "%s", tool_tmp("fifo-link.json"));
	snprintf(data, sizeof(data), "%s", tool_data("data/cut_midline.json"));
	copy_file(data, real);
	assert_int_equal(symlink(real, link), 0);
	tool_run(&r, NULL, "check", "--repair", "-o", link, link, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "symbolic link"));
	tool_run_free(&r);
	assert_int_equal(lstat(link, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	{
		/* What the link points to is still the cut original, byte for byte. */
		size_t a, b;
		char *now = tu_read_file(real, &a), *was = tu_read_file(data, &b);

		assert_int_equal(a, b);
		assert_memory_equal(now, was, a);
		free(now);
		free(was);
	}

	/* A link planted at the default output name, pointing to an unrelated file. */
	tool_write(victim, "precious\n", 9);
	copy_file(data, in);
	assert_int_equal(symlink(victim, planted), 0);
	tool_run(&r, NULL, "check", "--repair", in, NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	text = tu_read_file(victim, NULL);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(lstat(planted, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	/* And a dangling one: its target is not created. */
	unlink(planted);
	unlink(victim);
	assert_int_equal(symlink(victim, planted), 0);
	tool_run(&r, NULL, "check", "--repair", in, NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	assert_int_equal(access(victim, F_OK), -1);

	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, fifo_link), 0);
	for (int k = 0; k < 2; k++) {
		/* A reader first, so that the tool's open does not wait; the output fits
		 * the pipe's buffer. */
		fd = open(fifo, O_RDONLY | O_NONBLOCK);
		assert_true(fd >= 0);
		tool_run(&r, NULL, "check", "--repair", "-o", k == 0 ? fifo : fifo_link, data,
			 NULL);
		assert_int_equal(r.status, 0);
		tool_run_free(&r);
		n = read(fd, buf, sizeof(buf));
		close(fd);
		assert_true(n > 0);
		tool_write(got, buf, (size_t)n);
		tool_load_strict(got, &t);
		assert_int_equal(t.n, 13);
		tt_free(&t);
	}
	assert_int_equal(lstat(fifo, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	unlink(real);
	unlink(link);
	unlink(fifo);
	unlink(fifo_link);
	unlink(got);
	unlink(in);
	unlink(planted);
}

static void repair_of_a_complete_file_changes_nothing(void **state)
{
	const char *out = tool_tmp("good.repaired.json");
	struct tt_trace got, want;
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", "--repair", "-o", out, tool_data("data/good.json"), NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "was complete"));
	tool_run_free(&r);
	tool_load_strict(out, &got);
	tool_load_strict(tool_data("data/good.json"), &want);
	assert_int_equal(got.n, want.n);
	for (size_t i = 0; i < got.n; i++)
		expect_same_event(&got.ev[i], &want.ev[i]);
	assert_null(tt_arg(&got.ev[got.n - 1], "repaired"));
	tt_free(&got);
	tt_free(&want);
	unlink(out);
}

/* Killed between two writes: strict JSON with a provisional end marker, a B open. */
static void repair_replaces_a_provisional_end_marker(void **state)
{
	const char *out = tool_tmp("prov.repaired.json");
	struct tt_trace t;
	const struct tt_event *e, *m;
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", "--repair", "-o", out, tool_data("data/provisional.json"),
		 NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_int_equal(t.n, 5);
	e = &t.ev[3];
	assert_string_equal(e->ph, "E");
	assert_string_equal(e->name, "long");
	assert_string_equal(e->cat, "a");
	assert_int_equal(e->ts_ns, 3001); /* 1 ns after the end of the X inside it */
	assert_int_equal(e->tid, 301);
	m = &t.ev[4];
	assert_string_equal(m->name, "ringtrace: end");
	assert_int_equal(m->ts_ns, 4500);
	assert_int_equal(m->tid, 300);
	assert_true(arg_of(m, "final")->b);
	assert_true(arg_of(m, "repaired")->b);
	assert_int_equal(arg_of(m, "dropped")->i, 5);
	assert_int_equal(arg_of(m, "dropped_ring_full")->i, 5);
	assert_int_equal(arg_of(m, "events")->i, 2);
	assert_int_equal(arg_of(m, "slices_closed")->i, 1);
	assert_int_equal(arg_of(m, "partial_bytes_dropped")->i, 0);
	assert_null(tt_arg(m, "bytes"));
	tt_free(&t);
	unlink(out);
}

static void repair_reads_stdin_and_writes_stdout(void **state)
{
	const char *out = tool_tmp("stdout.json");
	struct tt_trace got, want;
	struct tool_run r;

	(void)state;
	tool_run_to(&r, tool_data("data/cut_midline.json"), out, "check", "--repair", "-", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "<stdout>"));
	tool_run_free(&r);
	tool_load_strict(out, &got);
	tool_load_strict(tool_data("data/cut_midline.repaired.json"), &want);
	assert_int_equal(got.n, want.n);
	for (size_t i = 0; i < got.n; i++)
		expect_same_event(&got.ev[i], &want.ev[i]);
	tt_free(&got);
	tt_free(&want);
	unlink(out);
}

/*
 * A recorder-like gzip file of members cut inside a member: the repair keeps every
 * event up to the cut, in order, ends the slices open there, and writes gzip.
 */
static void repair_of_a_gzip_cut_inside_a_member(void **state)
{
	enum { THREADS = 3, STEPS = 400 };
	size_t cap = THREADS * STEPS * 300, n = 0, gz_len, members;
	char *text = malloc(cap);
	struct gz_member m[256];
	unsigned char *gz;
	const char *in = tool_tmp("rec.json.gz"), *plain = tool_tmp("rec-plain.json");
	const char *out = tool_tmp("rec.repaired.json.gz"), *unz = tool_tmp("rec.unz.json");
	struct tt_trace all, got;
	struct tool_run r;
	char *text_out;
	size_t kept, closed, whole = 0, len;
	long open = 0;

	(void)state;
	assert_non_null(text);
	n += (size_t)snprintf(text + n, cap - n,
			      "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			      "\"pid\":9,\"tid\":9,\"args\":{\"host\":\"h\"}},\n");
	for (int s = 0; s < STEPS; s++) {
		for (int t = 0; t < THREADS; t++) {
			int64_t base = (int64_t)s * 100 + t;

			n += (size_t)snprintf(text + n, cap - n,
					      "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"step\","
					      "\"ts\":%lld,\"pid\":9,"
					      "\"tid\":%d,\"args\":{\"s\":%d}},\n"
					      "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"k\",\"ts\":%"
					      "lld.5,\"dur\":20.25,"
					      "\"pid\":9,\"tid\":%d},\n"
					      "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"step\","
					      "\"ts\":%lld,\"pid\":9,"
					      "\"tid\":%d},\n",
					      (long long)base, 10 + t, s, (long long)base + 1,
					      10 + t, (long long)base + 50, 10 + t);
		}
	}
	n -= 2; /* the last comma */
	n += (size_t)snprintf(text + n, cap - n, "\n]\n");
	tool_write(plain, text, n);
	gz = tool_gzip(text, n, 8192, &gz_len, m, 256, &members);
	assert_true(members > 10);
	/* Cut in the middle of member 6. */
	tool_write(in, gz, m[5].gz_end + (m[6].gz_end - m[5].gz_end) / 2);
	tool_run(&r, NULL, "check", "--repair", "-o", out, in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "a partial last event of"));
	tool_run_free(&r);

	text_out = tool_gunzip(out, &len);
	tool_write(unz, text_out, len);
	free(text_out);
	tool_load_strict(unz, &got);
	tool_load_strict(plain, &all);
	/* Kept events, then one E per slice closed, then the end marker. */
	closed = (size_t)arg_of(&got.ev[got.n - 1], "slices_closed")->i;
	assert_string_equal(got.ev[got.n - 1].name, "ringtrace: end");
	kept = got.n - 1 - closed;
	for (size_t i = 0; i < kept; i++)
		expect_same_event(&got.ev[i], &all.ev[i]);
	for (size_t i = 0; i < m[5].text_end; i++)
		whole += text[i] == '\n';
	assert_true(kept >= whole - 1); /* every event of the whole members ("[" is a line) */
	assert_true(kept < all.n);
	assert_int_equal(arg_of(&got.ev[got.n - 1], "events")->i, (int64_t)kept - 1);
	/* The slices open at the cut, each ended at its thread's latest time. */
	for (size_t i = 0; i < kept; i++)
		open += strcmp(all.ev[i].ph, "B") == 0	 ? 1
			: strcmp(all.ev[i].ph, "E") == 0 ? -1
							 : 0;
	assert_int_equal(closed, open);
	for (size_t i = kept; i < got.n - 1; i++) {
		int64_t latest = 0;

		assert_string_equal(got.ev[i].ph, "E");
		assert_string_equal(got.ev[i].name, "step");
		assert_string_equal(got.ev[i].cat, "c");
		for (size_t k = 0; k < kept; k++) {
			const struct tt_event *e = &all.ev[k];
			int64_t end = (int64_t)e->ts_ns;

			if (strcmp(e->ph, "X") == 0)
				end += (int64_t)e->dur_ns;
			if (e->tid == got.ev[i].tid && end > latest)
				latest = end;
		}
		assert_int_equal(got.ev[i].ts_ns, latest + 1);
	}
	tt_free(&got);
	tt_free(&all);
	free(gz);
	free(text);
	unlink(in);
	unlink(plain);
	unlink(out);
	unlink(unz);
}

/* ----------------------------------------------------------------- convert */

static void convert_to_object_matches_its_golden(void **state)
{
	const char *out = tool_tmp("good.object.json");
	yajl_val got, want;
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "convert", "--to", "object", "-o", out, tool_data("data/good.json"),
		 NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "wrote"));
	tool_run_free(&r);
	got = jt_parse_file(out);
	want = jt_parse_file(tool_data("data/good.object.json"));
	jt_expect_same(got, want);
	/* The start marker's args as otherData. */
	assert_string_equal(jt_str(jt_at(got, "otherData"), "origin_realtime_ns"),
			    "1700000000000000000");
	assert_int_equal(jt_array(got, "traceEvents")->u.array.len, 15);
	yajl_tree_free(got);
	yajl_tree_free(want);
	unlink(out);
}

static void convert_round_trip_keeps_every_value(void **state)
{
	const char *obj = tool_tmp("rt.object.json.gz"), *arr = tool_tmp("rt.array.json");
	struct tt_trace got, want;
	struct tool_run r;
	char *text;
	size_t len;

	(void)state;
	tool_run(&r, NULL, "convert", "-o", obj, tool_data("data/good.json"), NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	text = tool_gunzip(obj, &len);
	assert_true(tool_has(text, "{\"traceEvents\":[\n"));
	free(text);
	tool_run(&r, NULL, "convert", "--to", "array", "-o", arr, obj, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_load_strict(arr, &got);
	tool_load_strict(tool_data("data/good.json"), &want);
	assert_int_equal(got.n, want.n);
	for (size_t i = 0; i < got.n; i++)
		expect_same_event(&got.ev[i], &want.ev[i]);
	tt_free(&got);
	tt_free(&want);
	unlink(obj);
	unlink(arr);
}

static void convert_of_a_cut_file_says_so(void **state)
{
	const char *out = tool_tmp("cut.object.json");
	struct tool_run r;
	yajl_val v;

	(void)state;
	tool_run(&r, NULL, "convert", "-o", out, tool_data("data/cut_midline.json"), NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "was cut short"));
	tool_run_free(&r);
	v = jt_parse_file(out);
	assert_int_equal(jt_array(v, "traceEvents")->u.array.len, 9);
	yajl_tree_free(v);
	unlink(out);
}

/* Times at the ends of int64 (and past them): every tool takes them without an
 * overflow (UBSan watches in the asan build, and stops the tool at the first) and
 * writes strict JSON. */
static void extreme_times_overflow_nothing(void **state)
{
	static const char text[] =
		"[\n"
		"{\"ph\":\"B\",\"name\":\"a\",\"ts\":9223372036854775.807,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"x\",\"ts\":9223372036854775.000,\"dur\":"
		"9223372036854775.807,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"y\",\"ts\":-9223372036854775.808,\"dur\":"
		"9223372036854775.807,\"pid\":1,\"tid\":2},\n"
		"{\"ph\":\"B\",\"ts\":-9223372036854775.808,\"pid\":1,\"tid\":3},\n"
		"{\"ph\":\"E\",\"ts\":9223372036854775.807,\"pid\":1,\"tid\":3},\n"
		"{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"as\",\"id\":1,\"ts\":-9223372036854775.808,"
		"\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"e\",\"name\":\"as\",\"id\":1,\"ts\":9223372036854775.807,\"pid\":1,"
		"\"tid\":1},\n"
		"{\"ph\":\"i\",\"name\":\"i\",\"ts\":18446744073709551.999,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"B\",\"name\":\"z\",\"ts\":-9223372036854775.808,\"pid\":1,\"tid\":4}\n";
	char in[4200], out[4200], prefix[4200];
	const char *const runs[][8] = {
		{"check", in, NULL},
		{"check", "--repair", "-o", out, in, NULL},
		{"stats", in, NULL},
		{"stats", "--json", "--by", "thread", in, NULL},
		{"split", "--max-events", "2", "-o", prefix, in, NULL},
		{"convert", "-o", out, in, NULL},
		{"merge", "-o", out, in, in, NULL},
	};

	(void)state;
	snprintf(in, sizeof(in), "%s", tool_tmp("extreme.json"));
	snprintf(out, sizeof(out), "%s", tool_tmp("extreme-out.json"));
	snprintf(prefix, sizeof(prefix), "%s", tool_tmp("extreme-piece"));
	tool_write(in, text, sizeof(text) - 1);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct tool_run r;

		tool_runv(&r, NULL, NULL, runs[i]);
		if (r.status > 2 || tool_has(r.err, "runtime error"))
			fail_msg("ringtrace %s: exit %d\n%s", runs[i][0], r.status, r.err);
		/* The array form (convert writes the object form: its test checks it). */
		if ((strcmp(runs[i][0], "check") == 0 && runs[i][2] != NULL) ||
		    strcmp(runs[i][0], "merge") == 0)
			tool_expect_strict_or_absent(out, &r, in);
		tool_run_free(&r);
	}
	unlink(in);
}

/* JSON that is not a trace (a credentials file, an array of numbers): stats,
 * convert and split say so, exit 1 and write nothing; an empty array is an empty
 * trace. */
static void json_that_is_not_a_trace_is_said_so(void **state)
{
	static const char *const texts[] = {"{\"aws_access_key_id\":\"AKIA\",\"secret\":\"x\"}\n",
					    "[1, 2, 3]\n"};
	char in[4200], out[4200], piece[4300], prefix[4200];
	struct tool_run r;

	(void)state;
	snprintf(in, sizeof(in), "%s", tool_tmp("credentials.json"));
	snprintf(out, sizeof(out), "%s", tool_tmp("credentials-out.json"));
	snprintf(prefix, sizeof(prefix), "%s", tool_tmp("credentials-piece"));
	snprintf(piece, sizeof(piece), "%s-0001.json", prefix);
	for (size_t i = 0; i < 2; i++) {
		const char *const runs[][8] = {
			{"stats", in, NULL},
			{"convert", "-o", out, in, NULL},
			{"split", "--max-events", "5", "-o", prefix, in, NULL},
		};

		tool_write(in, texts[i], strlen(texts[i]));
		for (size_t k = 0; k < 3; k++) {
			tool_runv(&r, NULL, NULL, runs[k]);
			assert_int_equal(r.status, 1);
			assert_true(tool_has(r.err, "not a trace"));
			assert_true(tool_has(r.err, in));
			tool_run_free(&r);
			assert_int_equal(access(out, F_OK), -1);
			assert_int_equal(access(piece, F_OK), -1);
		}
	}
	tool_write(in, "[]\n", 3);
	tool_run(&r, NULL, "stats", in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	unlink(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_usage_and_exit_statuses),
		cmocka_unit_test(unreadable_input_is_exit_2),
		cmocka_unit_test(good_file_has_no_findings),
		cmocka_unit_test(corpus_gets_its_findings),
		cmocka_unit_test(corpus_repairs_and_converts_without_a_crash),
		cmocka_unit_test(findings_per_rule_are_capped_and_quiet_is_quiet),
		cmocka_unit_test(standard_input_is_checked),
		cmocka_unit_test(repaired_cut_file_matches_its_golden),
		cmocka_unit_test(repair_writes_beside_the_input_and_says_so),
		cmocka_unit_test(repair_output_refuses_links_and_writes_into_fifos),
		cmocka_unit_test(repair_of_a_complete_file_changes_nothing),
		cmocka_unit_test(repair_replaces_a_provisional_end_marker),
		cmocka_unit_test(repair_reads_stdin_and_writes_stdout),
		cmocka_unit_test(repair_of_a_gzip_cut_inside_a_member),
		cmocka_unit_test(convert_to_object_matches_its_golden),
		cmocka_unit_test(convert_round_trip_keeps_every_value),
		cmocka_unit_test(convert_of_a_cut_file_says_so),
		cmocka_unit_test(extreme_times_overflow_nothing),
		cmocka_unit_test(json_that_is_not_a_trace_is_said_so),
	};

	return cmocka_run_group_tests_name("tools_cli", tests, NULL, NULL);
}
