/* SPDX-License-Identifier: MIT */
/*
 * The folded polls of a trace: what tally_polls.h says.
 */
#include "tally_polls.h"

#include "common/names.h"
#include "json.h"

#include <string.h>

void tally_polls_init(struct tally_polls *p)
{
	memset(p, 0, sizeof(*p));
	table_init(&p->rows, sizeof(struct poll_row));
}

void tally_polls_destroy(struct tally_polls *p)
{
	table_destroy(&p->rows);
}

static bool key_is(const struct trace_arg *a, const char *key)
{
	return a->key_len == strlen(key) && memcmp(a->key, key, a->key_len) == 0;
}

/* a's value, when it is an integer of at least 0. */
static bool count_of(const struct trace_arg *a, uint64_t *v)
{
	int64_t n;

	if (a->value.type != TRACE_NUMBER || json_parse_i64(a->value.text, a->value.len, &n) != 0 ||
	    n < 0)
		return false;
	*v = (uint64_t)n;
	return true;
}

/* Whether a is one of the call names of a folded slice: any integer but its own keys. */
static bool is_name(const struct trace_arg *a)
{
	return a->value.type == TRACE_NUMBER && !key_is(a, RTR__KEY_POLLS) &&
	       !key_is(a, RTR__KEY_REQUESTS) && !key_is(a, RTR__KEY_POLL_NS);
}

int tally_polls_add(struct tally_polls *p, const struct trace_event *ev)
{
	uint64_t polls, inside = 0, names = 0, v;
	const struct trace_arg *alone = NULL;

	if (ev->nargs < 2 || !key_is(&ev->arg[0], RTR__KEY_POLLS) || !count_of(&ev->arg[0], &polls))
		return 0;
	for (size_t i = 1; i < ev->nargs; i++) {
		const struct trace_arg *a = &ev->arg[i];
		if (key_is(a, RTR__KEY_POLL_NS))
			count_of(a, &inside);
		else if (is_name(a) && count_of(a, &v)) {
			names++;
			alone = a;
		}
	}
	p->slices++;
	p->calls += polls;
	p->inside_ns += inside;
	if (names != 1) {
		p->mixed_slices++;
		p->mixed_calls += polls;
		p->mixed_ns += inside;
	}
	for (size_t i = 1; i < ev->nargs; i++) {
		const struct trace_arg *a = &ev->arg[i];
		struct poll_row *r;
		if (!is_name(a) || !count_of(a, &v))
			continue;
		r = table_put(&p->rows, a->key, a->key_len, NULL);
		if (r == NULL)
			return -1;
		r->calls += v;
		if (a == alone && names == 1) {
			r->alone_calls += v;
			r->alone_slices++;
			r->alone_ns += inside;
			r->alone_dur += ev->has_dur && ev->dur_ns > 0 ? (uint64_t)ev->dur_ns : 0;
		}
	}
	return 0;
}
