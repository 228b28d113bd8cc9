/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check`'s rules against what the viewers do, one small input each:
 *
 * - false alarms of before, now fine: 0 findings and exit 0, and where the rule still
 *   sees something no viewer acts on, a note under --notes (exit 0 still);
 * - the true findings next to them, still reported with exit 1, and a message that
 *   says which viewer acts and how;
 * - ts + dur at the INT64 extremes: a ts-range finding, never undefined behaviour (this
 *   test runs under the asan preset's UBSan too).
 */
#include "tool_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct rule_case {
	const char *name; /* the file, and what the case shows */
	const char *text;
	int status;		/* of `check FILE` and of `check --notes FILE` */
	const char *finding;	/* in the output without --notes (NULL: "no findings") */
	const char *with_notes; /* in the output with --notes only (NULL: no note) */
	const char *nowhere;	/* in neither output (NULL: nothing) */
};

/* Run check on c's text, with and without --notes, and hold it to the case. */
static void run_case(const struct rule_case *c)
{
	const char *path = tool_tmp(c->name);
	struct tool_run r;

	tool_write(path, c->text, strlen(c->text));
	tool_run(&r, NULL, "check", "-n", "0", path, NULL);
	if (r.status != c->status)
		fail_msg("%s: exit %d, want %d\n%s%s", c->name, r.status, c->status, r.out, r.err);
	if (c->finding != NULL && !tool_has(r.out, c->finding))
		fail_msg("%s: no \"%s\" in:\n%s", c->name, c->finding, r.out);
	if (c->finding == NULL && !tool_has(r.out, "; no findings\n"))
		fail_msg("%s: findings:\n%s", c->name, r.out);
	if (tool_has(r.out, ": note "))
		fail_msg("%s: a note without --notes:\n%s", c->name, r.out);
	if (c->nowhere != NULL && tool_has(r.out, c->nowhere))
		fail_msg("%s: \"%s\" in:\n%s", c->name, c->nowhere, r.out);
	assert_string_equal(r.err, "");
	tool_run_free(&r);

	tool_run(&r, NULL, "check", "-n", "0", "--notes", path, NULL);
	if (r.status != c->status)
		fail_msg("%s --notes: exit %d, want %d\n%s%s", c->name, r.status, c->status, r.out,
			 r.err);
	if (c->with_notes != NULL && !tool_has(r.out, c->with_notes))
		fail_msg("%s --notes: no \"%s\" in:\n%s", c->name, c->with_notes, r.out);
	if (c->with_notes == NULL && tool_has(r.out, ": note "))
		fail_msg("%s --notes: a note:\n%s", c->name, r.out);
	if (c->nowhere != NULL && tool_has(r.out, c->nowhere))
		fail_msg("%s --notes: \"%s\" in:\n%s", c->name, c->nowhere, r.out);
	tool_run_free(&r);
}

static void run_cases(const struct rule_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_case(&cases[i]);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Perfetto's sniffer removes all whitespace from the first 64 bytes before it looks
 * for [{" or {". */
static void file_start_allows_whitespace_anywhere_in_the_sniffed_bytes(void **state)
{
	static const struct rule_case cases[] = {
		{"pretty.json",
		 "[\n  {\n    \"cat\": \"a\", \"name\": \"x\", \"ph\": \"X\", \"ts\": 1, \"dur\": "
		 "2,\n"
		 "    \"pid\": 1, \"tid\": 1\n  }\n]\n",
		 0, NULL, NULL, "file-start"},
		{"pretty-object.json",
		 "\n{ \"traceEvents\" : [ {\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"
		 "\"pid\":1,\"tid\":1} ] }\n",
		 0, NULL, NULL, "file-start"},
		/* Past 64 bytes of blanks the sniffer sees only '[': Perfetto does not load it. */
		{"far.json",
		 "[                                                                      "
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]\n",
		 1,
		 "file-start: the first 64 bytes, blanks removed, do not begin [{\": Perfetto's "
		 "sniffer does not recognise the file as JSON",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* Perfetto parses a string flow id base 16, "0x" or not; Catapult takes any string. */
static void flow_id_takes_hex_strings_without_0x(void **state)
{
	static const struct rule_case cases[] = {
		{"hex-id.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":\"8780d402\",\"ts\":5,\"pid\":"
		 "1,"
		 "\"tid\":1},\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":20,\"dur\":10,\"pid\":1,"
		 "\"tid\":2},\n"
		 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"c\",\"name\":\"fl\",\"id\":\"8780d402\","
		 "\"ts\":25,\"pid\":1,\"tid\":2}\n"
		 "]\n",
		 0, NULL, NULL, "flow-id"},
		{"bad-id.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":\"req-7\",\"ts\":5,\"pid\":1,"
		 "\"tid\":1}\n"
		 "]\n",
		 1,
		 ":3:1: flow-id: flow id \"req-7\" is neither an integer nor a hex string "
		 "(\"0x1f\", \"8780d402\"): Perfetto drops the event (flow_invalid_id)",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* An f without bp binds to the next slice that begins on its thread (Catapult's
 * findNextSliceAfter); only "bp":"e" binds to the slice around it. */
static void flow_f_without_bp_binds_to_the_next_slice(void **state)
{
	static const struct rule_case cases[] = {
		{"f-next.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":5,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"f\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":15,\"pid\":1,\"tid\":"
		 "2},\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":20,\"dur\":10,\"pid\":1,"
		 "\"tid\":2}\n"
		 "]\n",
		 0, NULL, NULL, "flow-outside-slice"},
		/* A B that begins at the f's own time, written before it. */
		{"f-same-ts.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":5,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"b\",\"ts\":15,\"pid\":1,\"tid\":2},\n"
		 "{\"ph\":\"f\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":15,\"pid\":1,\"tid\":"
		 "2},\n"
		 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"b\",\"ts\":16,\"pid\":1,\"tid\":2}\n"
		 "]\n",
		 0, NULL, NULL, "flow-outside-slice"},
		/* Inside a slice, but none begins at or after it: nothing to bind to. */
		{"f-last.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":5,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":20,\"dur\":10,\"pid\":1,"
		 "\"tid\":2},\n"
		 "{\"ph\":\"f\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":25,\"pid\":1,\"tid\":"
		 "2}\n"
		 "]\n",
		 1,
		 ":5:1: flow-outside-slice: flow event \"f\" at ts 25 without \"bp\":\"e\" has no "
		 "slice beginning at or after it on thread 1/2: Catapult and Perfetto bind such "
		 "an f to the next slice that begins, and drop the flow without one",
		 NULL, NULL},
		/* With "bp":"e" the f needs a slice around it. */
		{"f-bp-e.json",
		 "[\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"s\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":5,\"pid\":1,\"tid\":"
		 "1},\n"
		 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"c\",\"name\":\"fl\",\"id\":1,\"ts\":15,"
		 "\"pid\":1,\"tid\":2},\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":20,\"dur\":10,\"pid\":1,"
		 "\"tid\":2}\n"
		 "]\n",
		 1,
		 ":4:1: flow-outside-slice: flow event \"f\" at ts 15 is not inside any slice on "
		 "thread 1/2: Catapult and Perfetto bind it to the slice around it",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* Catapult reads process_labels, num_cpus and TraceConfig without a warning: notes
 * (Perfetto ignores them); a name Catapult warns about stays a finding. */
static void metadata_catapult_reads_is_a_note(void **state)
{
	static const struct rule_case cases[] = {
		{"meta-known.json",
		 "[\n"
		 "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":1,\"tid\":1,\"args\":"
		 "{\"labels\":\"x\"}},\n"
		 "{\"ph\":\"M\",\"name\":\"num_cpus\",\"pid\":1,\"tid\":1,\"args\":{\"number\":8}},"
		 "\n"
		 "{\"ph\":\"M\",\"name\":\"TraceConfig\",\"pid\":1,\"tid\":1,\"args\":{\"value\":{}"
		 "}},\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 0, NULL,
		 ":4:1: note metadata: M \"TraceConfig\": Catapult reads it, Perfetto ignores it, "
		 "no viewer warns",
		 NULL},
		{"meta-unknown.json",
		 "[\n"
		 "{\"ph\":\"M\",\"name\":\"build_id\",\"pid\":1,\"tid\":1,\"args\":{\"id\":\"x\"}},"
		 "\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1, ":2:1: metadata: M \"build_id\": Catapult warns \"Unrecognized metadata name\"",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* Catapult merges an E's args into its slice and warns only about a key on both. */
static void args_on_end_only_for_a_key_on_both(void **state)
{
	static const struct rule_case cases[] = {
		{"e-args.json",
		 "[\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":"
		 "{\"x\":0}},\n"
		 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"a\",\"ts\":2,\"pid\":1,\"tid\":1,\"args\":"
		 "{\"y\":1}}\n"
		 "]\n",
		 0, NULL, NULL, "args-on-end"},
		{"e-args-both.json",
		 "[\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":"
		 "{\"x\":0}},\n"
		 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"a\",\"ts\":2,\"pid\":1,\"tid\":1,\"args\":"
		 "{\"x\":1}}\n"
		 "]\n",
		 1,
		 ":3:1: args-on-end: arg \"x\" on both the B and its E: Catapult warns and keeps "
		 "one",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* An E of another name: speedscope and the DevTools engine act, Catapult and Perfetto
 * end the slice silently; the message says so. */
static void end_mismatch_says_which_viewers_act(void **state)
{
	static const struct rule_case cases[] = {
		{"e-empty-name.json",
		 "[\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
		 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"\",\"ts\":2,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1,
		 ":3:1: end-mismatch: E \"\" (cat \"c\") ends B \"a\" (cat \"c\") of line 2: "
		 "speedscope does not end the slice (it stays open to the end of the profile) and "
		 "the DevTools engine logs \"Begin/End events mismatch\"; Catapult and Perfetto "
		 "end the slice silently",
		 NULL, NULL},
		{"e-other-cat.json",
		 "[\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
		 "{\"ph\":\"E\",\"cat\":\"d\",\"name\":\"a\",\"ts\":2,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1,
		 ":3:1: end-mismatch: E \"a\" (cat \"d\") ends B \"a\" (cat \"c\") of line 2: the "
		 "DevTools engine logs \"Begin/End events mismatch\"; speedscope, Catapult and "
		 "Perfetto end the slice silently",
		 NULL, NULL},
		{"e-no-name.json",
		 "[\n"
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
		 "{\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1, "an E without a name makes the DevTools engine throw", NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* Every viewer decodes a \u escape of non-ASCII: a note. A surrogate stays a finding. */
static void unicode_escape_is_a_note(void **state)
{
	static const struct rule_case cases[] = {
		{"escaped.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"caf\\u00e9\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 0, NULL,
		 ":2:22: note unicode-escape: \\u00e9 escape of non-ASCII U+00E9 in a string",
		 NULL},
		{"surrogate.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"\\ud83d\\ude00\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}"
		 "\n"
		 "]\n",
		 1, "surrogate-escape:", NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* ts + dur is added checked: at the INT64 extremes a ts-range finding, never UB. */
static void ts_plus_dur_at_int64_extremes_is_a_finding(void **state)
{
	static const struct rule_case cases[] = {
		/* ts INT64_MAX ns, dur 1 ns. */
		{"end-max.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":9223372036854775.807,\"dur\":0.001,\"pid\":1,"
		 "\"tid\":1}\n"
		 "]\n",
		 1,
		 ":2:1: ts-range: X at ts 9223372036854775.807 with dur 0.001 ends beyond 64-bit "
		 "nanoseconds",
		 NULL, NULL},
		/* 2^62 ns + 2^62 ns = 2^63 ns: one past INT64_MAX. */
		{"end-2-63.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":4611686018427387.904,\"dur\":"
		 "4611686018427387.904,"
		 "\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1, "ends beyond 64-bit nanoseconds", NULL, NULL},
		/* ts 0, dur INT64_MAX ns: the end fits; the dur itself is beyond 2^53. */
		{"dur-max.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":9223372036854775.807,\"pid\":1,"
		 "\"tid\":1}\n"
		 "]\n",
		 1, "ts-range: \"dur\" 9223372036854775.807 is beyond 2^53 ns", NULL,
		 "ends beyond 64-bit"},
		/* ts INT64_MIN ns: negative, and nothing to overflow. */
		{"ts-min.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":-9223372036854775.808,\"dur\":"
		 "9223372036854775.807,"
		 "\"pid\":1,\"tid\":1}\n"
		 "]\n",
		 1, "negative-ts:", NULL, "ends beyond 64-bit"},
		/* Each below 2^53 ns, the end beyond it. */
		{"end-2-53.json",
		 "[\n"
		 "{\"ph\":\"X\",\"name\":\"a\",\"ts\":5000000000000,\"dur\":5000000000000,\"pid\":"
		 "1,"
		 "\"tid\":1}\n"
		 "]\n",
		 1,
		 ":2:1: ts-range: X at ts 5000000000000 with dur 5000000000000 ends beyond 2^53 "
		 "ns",
		 NULL, NULL},
	};

	(void)state;
	run_cases(cases, COUNT(cases));
}

/* --notes is listed; --rules gives each rule's why. */
static void rules_list_why_and_help_lists_notes(void **state)
{
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "check", "--rules", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "why: Perfetto's sniffer"));
	assert_true(tool_has(r.out, "why: none: every viewer decodes it"));
	tool_run_free(&r);
	tool_run(&r, NULL, "check", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "--notes"));
	tool_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_start_allows_whitespace_anywhere_in_the_sniffed_bytes),
		cmocka_unit_test(flow_id_takes_hex_strings_without_0x),
		cmocka_unit_test(flow_f_without_bp_binds_to_the_next_slice),
		cmocka_unit_test(metadata_catapult_reads_is_a_note),
		cmocka_unit_test(args_on_end_only_for_a_key_on_both),
		cmocka_unit_test(end_mismatch_says_which_viewers_act),
		cmocka_unit_test(unicode_escape_is_a_note),
		cmocka_unit_test(ts_plus_dur_at_int64_extremes_is_a_finding),
		cmocka_unit_test(rules_list_why_and_help_lists_notes),
	};

	return cmocka_run_group_tests_name("tools_check_rules", tests, NULL, NULL);
}
