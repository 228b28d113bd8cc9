/* SPDX-License-Identifier: MIT */
/*
 * The findings of `ringtrace check` (check.h): the rules' table, each finding or
 * note counted and printed (FILE:LINE:COL: RULE: message, the first --max-per-rule of
 * a rule), and the helpers that put values into messages.
 */
#include "check.h"

#include "cli.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The rules' table, from their X-macro (check.h). */
#define RULE_ROW(id, name, what, why) {name, what, why},

const struct check_rule check_rules[RULE_COUNT] = {RULES(RULE_ROW)};

/* The rule of each issue the reader reports (TRACE_READ_CHECK_STRINGS). */
static const enum rule issue_rules[TRACE_ISSUE_COUNT] = {
	[TRACE_ISSUE_BOM] = RULE_BOM,
	[TRACE_ISSUE_ZERO_BYTES] = RULE_ZERO_BYTES,
	[TRACE_ISSUE_TRAILING_COMMA] = RULE_TRAILING_COMMA,
	[TRACE_ISSUE_NOT_AN_EVENT] = RULE_NOT_AN_EVENT,
	[TRACE_ISSUE_NO_EVENTS_KEY] = RULE_EMPTY,
	[TRACE_ISSUE_GZIP_TRAILING] = RULE_GZIP,
	[TRACE_ISSUE_CONTROL_BYTE] = RULE_CONTROL_BYTE,
	[TRACE_ISSUE_INVALID_UTF8] = RULE_INVALID_UTF8,
	[TRACE_ISSUE_SURROGATE] = RULE_SURROGATE,
	[TRACE_ISSUE_UNICODE_ESCAPE] = RULE_UNICODE_ESCAPE,
	[TRACE_ISSUE_DUPLICATE_KEY] = RULE_DUPLICATE_KEY,
	[TRACE_ISSUE_EVENT_TOO_LARGE] = RULE_EVENT_SIZE,
};

static void report(struct check *c, bool is_note, enum rule rule, uint64_t line, uint64_t col,
		   const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

static void report(struct check *c, bool is_note, enum rule rule, uint64_t line, uint64_t col,
		   const char *fmt, va_list ap)
{
	uint64_t n = is_note ? ++c->notes[rule] : ++c->count[rule];

	if (is_note)
		c->total_notes++;
	else
		c->total++;
	if (c->opt->quiet || (is_note && !c->opt->notes))
		return;
	if (c->opt->max_per_rule > 0 && n > c->opt->max_per_rule) {
		if (n == c->opt->max_per_rule + 1)
			printf("%s: %s%s: more %s of this rule not shown (--max-per-rule 0 "
			       "shows all)\n",
			       c->file, is_note ? "note " : "", check_rules[rule].name,
			       is_note ? "notes" : "findings");
		return;
	}
	if (line > 0)
		printf("%s:%" PRIu64 ":%" PRIu64 ": %s%s: ", c->file, line, col,
		       is_note ? "note " : "", check_rules[rule].name);
	else
		printf("%s: %s%s: ", c->file, is_note ? "note " : "", check_rules[rule].name);
	vprintf(fmt, ap);
	putchar('\n');
}

/* Something a consumer acts on: printed, counted, exit status 1. */
void check_finding(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt,
		   ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, false, rule, line, col, fmt, ap);
	va_end(ap);
}

/* Something no consumer acts on: printed with --notes only, never in the exit status. */
void check_note(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, true, rule, line, col, fmt, ap);
	va_end(ap);
}

void check_on_issue(void *ctx, const struct trace_issue *issue)
{
	struct check *c = ctx;

	enum rule rule = issue_rules[issue->kind];

	if (rule == RULE_UNICODE_ESCAPE)
		check_note(c, rule, issue->line, issue->col, "%s (every viewer decodes it)",
			   issue->message);
	else
		check_finding(c, rule, issue->line, issue->col, "%s", issue->message);
}

/* A value for a message: a string quoted and shortened, anything else as text. */
const char *check_shown(char *buf, size_t size, const struct trace_value *v)
{
	size_t max = size - 8, n;

	if (v->type == TRACE_ABSENT)
		return "(none)";
	n = v->len < max ? v->len : max;
	/* Do not cut inside a UTF-8 sequence. */
	while (n < v->len && n > 0 && ((unsigned char)v->text[n] & 0xc0) == 0x80)
		n--;
	if (v->type == TRACE_STRING)
		snprintf(buf, size, "\"%.*s%s\"", (int)n, v->text, n < v->len ? "..." : "");
	else
		snprintf(buf, size, "%.*s%s", (int)n, v->text, n < v->len ? "..." : "");
	for (char *p = buf; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?'; /* nothing that moves a terminal's cursor */
	}
	return buf;
}

const char *check_shown_str(char *buf, size_t size, const char *s, size_t len)
{
	struct trace_value v = {s != NULL ? TRACE_STRING : TRACE_ABSENT, s, len};

	return check_shown(buf, size, &v);
}

/* ns as microseconds, for messages. */
const char *check_us(char *buf, int64_t ns)
{
	*json_put_us(buf, ns) = '\0';
	return buf;
}

/* Is the value the string s[0 .. len)? An absent value matches only s == NULL. */
bool check_same_str(const struct trace_value *v, const char *s, size_t len)
{
	if (v->type != TRACE_STRING)
		return s == NULL;
	return s != NULL && v->len == len && memcmp(v->text, s, len) == 0;
}
