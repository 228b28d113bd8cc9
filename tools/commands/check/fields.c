/* SPDX-License-Identifier: MIT */
/*
 * The rules of an event's own fields in `ringtrace check` (check.h): each known key's
 * type and range, the phase, an X's end, and what M and C events hold.
 */
#include "check.h"

#include <inttypes.h>
#include <string.h>

/* Phases the viewers import, and the ones Perfetto leaves out (docs/format.md "Phases"). */
#define KNOWN_PHASES	  "XBEiICbenstfM"
#define UNIMPORTED_PHASES "STFpNODc"

#define TS_LIMIT_NS ((int64_t)1 << 53)
#define ID_LIMIT    ((int64_t)UINT32_MAX)

bool check_is_integer(const struct trace_value *v)
{
	int64_t i;

	return v->type == TRACE_NUMBER && json_parse_i64(v->text, v->len, &i) == 0;
}

static void check_id_field(struct check *c, const struct trace_event *ev, enum rule rule, bool has,
			   int64_t v, const struct trace_value *raw, const char *key)
{
	char b[96];

	if (raw->type == TRACE_ABSENT)
		check_finding(c, rule, ev->line, ev->col,
			      "no \"%s\": the viewers need it on every event", key);
	else if (!has || v < 0 || v > ID_LIMIT)
		check_finding(c, rule, ev->line, ev->col,
			      "\"%s\" %s is not an integer 0 .. 4294967295: Perfetto reads it as 0",
			      key, check_shown(b, sizeof(b), raw));
}

static void check_time_field(struct check *c, const struct trace_event *ev,
			     const struct trace_value *raw, bool has, int64_t ns, bool is_ts)
{
	char b[96];
	const char *key = is_ts ? "ts" : "dur";

	if (raw->type == TRACE_ABSENT)
		return;
	if (raw->type != TRACE_NUMBER) {
		check_finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"%s\" is %s, not a number",
			      key, check_shown(b, sizeof(b), raw));
		return;
	}
	if (!has) {
		check_finding(c, RULE_TS_RANGE, ev->line, ev->col,
			      "\"%s\" %s does not fit 64-bit nanoseconds", key,
			      check_shown(b, sizeof(b), raw));
		return;
	}
	if (ns < 0)
		check_finding(
			c, is_ts ? RULE_NEGATIVE_TS : RULE_NEGATIVE_DUR, ev->line, ev->col,
			"\"%s\" %s is negative%s", key, check_shown(b, sizeof(b), raw),
			is_ts ? ": Perfetto drops the event"
			      : ": speedscope keeps the slice open to the end of the profile");
	else if (ns > TS_LIMIT_NS)
		check_finding(
			c, RULE_TS_RANGE, ev->line, ev->col,
			"\"%s\" %s is beyond 2^53 ns: the viewers' doubles lose nanoseconds (use "
			"a trace-relative origin)",
			key, check_shown(b, sizeof(b), raw));
}

void check_fields(struct check *c, const struct trace_event *ev)
{
	static const char *const string_keys[] = {"name", "cat", "s", "bp"};
	const struct trace_value *string_values[] = {&ev->name, &ev->cat, &ev->s, &ev->bp};
	char b[96];

	if (ev->ph.type == TRACE_ABSENT)
		check_finding(c, RULE_PHASE, ev->line, ev->col, "an event without \"ph\"");
	else if (ev->ph.type != TRACE_STRING)
		check_finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"ph\" is %s, not a string",
			      check_shown(b, sizeof(b), &ev->ph));
	else if (ev->phase != '\0' && strchr(UNIMPORTED_PHASES, ev->phase) != NULL)
		check_finding(
			c, RULE_PHASE, ev->line, ev->col,
			"phase \"%c\" is not imported by Perfetto (legacy async S/T/F/p, object "
			"events N/O/D, clock sync c)",
			ev->phase);
	else if (ev->phase == '\0' || strchr(KNOWN_PHASES, ev->phase) == NULL)
		check_finding(c, RULE_PHASE, ev->line, ev->col, "unknown phase %s",
			      check_shown(b, sizeof(b), &ev->ph));
	for (size_t i = 0; i < sizeof(string_keys) / sizeof(string_keys[0]); i++) {
		const struct trace_value *v = string_values[i];

		if (v->type != TRACE_ABSENT && v->type != TRACE_STRING)
			check_finding(c, RULE_FIELD_TYPE, ev->line, ev->col,
				      "\"%s\" is %s, not a string", string_keys[i],
				      check_shown(b, sizeof(b), v));
	}
	if (ev->args.type != TRACE_ABSENT && ev->args.type != TRACE_OBJECT)
		check_finding(c, RULE_FIELD_TYPE, ev->line, ev->col,
			      "\"args\" is %s, not an object",
			      check_shown(b, sizeof(b), &ev->args));
	if (ev->id.type != TRACE_ABSENT && ev->id.type != TRACE_STRING &&
	    ev->id.type != TRACE_NUMBER)
		check_finding(c, RULE_FIELD_TYPE, ev->line, ev->col,
			      "\"id\" is %s, not a number or a string",
			      check_shown(b, sizeof(b), &ev->id));
	check_id_field(c, ev, RULE_PID, ev->has_pid, ev->pid_num, &ev->pid, "pid");
	check_id_field(c, ev, RULE_TID, ev->has_tid, ev->tid_num, &ev->tid, "tid");
	if (ev->ts.type == TRACE_ABSENT && ev->phase != 'M')
		check_finding(c, RULE_MISSING_TS, ev->line, ev->col,
			      "no \"ts\": every event but M needs one");
	check_time_field(c, ev, &ev->ts, ev->has_ts, ev->ts_ns, true);
	if (ev->dur.type == TRACE_ABSENT && ev->phase == 'X')
		check_finding(c, RULE_MISSING_DUR, ev->line, ev->col,
			      "an X without \"dur\": the viewers drop it");
	check_time_field(c, ev, &ev->dur, ev->has_dur, ev->dur_ns, false);
}

/*
 * The end of an X, ts + dur (dur >= 0), checked: false, with a ts-range finding, when it
 * does not fit 64-bit nanoseconds. An end beyond 2^53 ns whose ts and dur are each
 * below it is a finding too (each beyond it is one already, in check_time_field()).
 */
bool check_x_end(struct check *c, const struct trace_event *ev, int64_t *end)
{
	char t1[32], t2[32];

	if (__builtin_add_overflow(ev->ts_ns, ev->dur_ns, end)) {
		check_finding(
			c, RULE_TS_RANGE, ev->line, ev->col,
			"X at ts %s with dur %s ends beyond 64-bit nanoseconds: no viewer can "
			"place its end",
			check_us(t1, ev->ts_ns), check_us(t2, ev->dur_ns));
		return false;
	}
	if (*end > TS_LIMIT_NS && ev->ts_ns <= TS_LIMIT_NS && ev->dur_ns <= TS_LIMIT_NS)
		check_finding(
			c, RULE_TS_RANGE, ev->line, ev->col,
			"X at ts %s with dur %s ends beyond 2^53 ns: the viewers' doubles lose "
			"nanoseconds (use a trace-relative origin)",
			check_us(t1, ev->ts_ns), check_us(t2, ev->dur_ns));
	return true;
}

/* M names Catapult's importer (processMetadataEvent) handles without a warning, beyond
 * the four Perfetto reads too. */
static bool catapult_metadata(const struct trace_value *name)
{
	static const char *const names[] = {"process_labels", "process_uptime_seconds", "num_cpus",
					    "TraceConfig", "trace_buffer_overflowed"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (trace_value_is(name, names[i]))
			return true;
	}
	return false;
}

void check_metadata(struct check *c, const struct trace_event *ev)
{
	const struct trace_value *a;
	char b[96];

	if (trace_value_is(&ev->name, "process_name") || trace_value_is(&ev->name, "thread_name")) {
		a = trace_event_arg(ev, "name");
		if (a == NULL || a->type != TRACE_STRING || a->len == 0)
			check_finding(c, RULE_METADATA, ev->line, ev->col,
				      "M %s without a non-empty string args.name: Perfetto ignores "
				      "it (the track keeps no name)",
				      check_shown(b, sizeof(b), &ev->name));
	} else if (trace_value_is(&ev->name, "process_sort_index") ||
		   trace_value_is(&ev->name, "thread_sort_index")) {
		a = trace_event_arg(ev, "sort_index");
		if (a == NULL || !check_is_integer(a))
			check_finding(
				c, RULE_METADATA, ev->line, ev->col,
				"M %s without an integer args.sort_index: Perfetto ignores it (the "
				"tracks keep their default order)",
				check_shown(b, sizeof(b), &ev->name));
	} else if (catapult_metadata(&ev->name)) {
		check_note(c, RULE_METADATA, ev->line, ev->col,
			   "M %s: Catapult reads it, Perfetto ignores it, no viewer warns",
			   check_shown(b, sizeof(b), &ev->name));
	} else {
		check_finding(
			c, RULE_METADATA, ev->line, ev->col,
			"M %s: Catapult warns \"Unrecognized metadata name\" (Perfetto ignores it; "
			"it reads process_name, thread_name, process_sort_index and "
			"thread_sort_index)",
			check_shown(b, sizeof(b), &ev->name));
	}
}

void check_counter(struct check *c, const struct trace_event *ev)
{
	char b[96];

	if (ev->nargs == 0) {
		check_finding(c, RULE_COUNTER_ARGS, ev->line, ev->col,
			      "C %s without args: a counter needs at least one numeric series",
			      check_shown(b, sizeof(b), &ev->name));
		return;
	}
	for (size_t i = 0; i < ev->nargs; i++) {
		if (ev->arg[i].value.type != TRACE_NUMBER) {
			check_finding(c, RULE_COUNTER_ARGS, ev->line, ev->col,
				      "C %s: args.%s is %s, not a number",
				      check_shown(b, sizeof(b), &ev->name), ev->arg[i].key,
				      ev->arg[i].value.type == TRACE_STRING ? "a string"
									    : "not a number");
			return;
		}
	}
}
