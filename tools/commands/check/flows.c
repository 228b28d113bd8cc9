/* SPDX-License-Identifier: MIT */
/*
 * The rules that match events across a file in `ringtrace check` (check.h): the
 * events of one flow id agree on name and cat, and every async b has its e. State is
 * per open flow and span, within the state bound (threads.h).
 */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hex string id as Perfetto parses it (base 16, "0x" optional): "0x1f", "8780d402". */
static bool is_hex_id(const struct trace_value *v)
{
	size_t i = 0;

	if (v->type != TRACE_STRING)
		return false;
	if (v->len > 2 && v->text[0] == '0' && (v->text[1] == 'x' || v->text[1] == 'X'))
		i = 2;
	if (i == v->len)
		return false;
	for (; i < v->len; i++) {
		char ch = v->text[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		      (ch >= 'A' && ch <= 'F')))
			return false;
	}
	return true;
}

/* What a table entry costs beside its value and key (an estimate), for the state
 * bound (threads.h). */
#define ENTRY_COST 96

/* A new open flow's cost: as budget_give() gives it back when the flow ends. */
static uint64_t flow_cost(const struct check *c, const struct trace_event *ev)
{
	return sizeof(struct flow_state) + c->key.len +
	       (ev->name.type == TRACE_STRING ? ev->name.len : 0) +
	       (ev->cat.type == TRACE_STRING ? ev->cat.len : 0) + ENTRY_COST;
}

void check_flow(struct check *c, struct thread_state *th, struct check_thread *ct,
		const struct trace_event *ev)
{
	struct flow_state *fs;
	bool created;
	char b1[96], b2[96], b3[96], b4[96];

	if (ev->phase == 'f' && !trace_value_is(&ev->bp, "e")) {
		if (ev->has_ts && !(ct->has_begin && ct->max_begin_ns >= ev->ts_ns))
			check_wait_for_slice(c, th, ct, ev, true);
	} else if (ev->has_ts && !check_enclosed(th, ct, ev->ts_ns)) {
		check_wait_for_slice(c, th, ct, ev, false);
	}
	if (ev->id.type == TRACE_ABSENT) {
		check_finding(c, RULE_FLOW_ID, ev->line, ev->col,
			      "flow event \"%c\" without \"id\": Perfetto drops it", ev->phase);
		return;
	}
	if (!check_is_integer(&ev->id) && !is_hex_id(&ev->id))
		check_finding(c, RULE_FLOW_ID, ev->line, ev->col,
			      "flow id %s is neither an integer nor a hex string (\"0x1f\", "
			      "\"8780d402\"): Perfetto drops the event (flow_invalid_id)",
			      check_shown(b1, sizeof(b1), &ev->id));
	c->key.len = 0;
	if (trace_key_add(&c->key, &ev->id)) {
		c->nomem = true;
		return;
	}
	fs = table_get(&c->flows, c->key.p, c->key.len);
	if (fs == NULL && !budget_take(&c->threads.budget, flow_cost(c, ev)))
		return; /* not tracked: a state-limit */
	if (fs == NULL)
		fs = table_put(&c->flows, c->key.p, c->key.len, &created);
	else
		created = false;
	if (fs == NULL) {
		c->nomem = true;
		return;
	}
	if (created) {
		fs->name = trace_value_dup(&ev->name);
		fs->cat = trace_value_dup(&ev->cat);
		fs->name_len = fs->name != NULL ? ev->name.len : 0;
		fs->cat_len = fs->cat != NULL ? ev->cat.len : 0;
		fs->line = ev->line;
		fs->first_phase = ev->phase;
	} else if (!check_same_str(&ev->name, fs->name, fs->name_len) ||
		   !check_same_str(&ev->cat, fs->cat, fs->cat_len)) {
		check_finding(
			c, RULE_FLOW_MISMATCH, ev->line, ev->col,
			"flow \"%c\" %s (cat %s) of id %s, but its \"%c\" of line %" PRIu64
			" is %s (cat %s): Perfetto keys a flow on (id, cat, name) and does not "
			"join them",
			ev->phase, check_shown(b1, sizeof(b1), &ev->name),
			check_shown(b2, sizeof(b2), &ev->cat), check_shown(b3, sizeof(b3), &ev->id),
			fs->first_phase, fs->line,
			check_shown_str(b4, sizeof(b4), fs->name, fs->name_len),
			check_shown_str(b2, sizeof(b2), fs->cat, fs->cat_len));
	}
	fs->saw_s |= ev->phase == 's';
	fs->saw_f |= ev->phase == 'f';
	if (fs->saw_s && fs->saw_f) {
		budget_give(&c->threads.budget,
			    sizeof(*fs) + c->key.len + fs->name_len + fs->cat_len + ENTRY_COST);
		free(fs->name);
		free(fs->cat);
		table_remove(&c->flows, fs);
	}
}

void check_async(struct check *c, const struct trace_event *ev)
{
	struct async_state *as;
	bool created;
	char b1[96], b2[96], b3[96];

	if (ev->cat.type != TRACE_STRING)
		check_finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			      "async event \"%c\" without a string \"cat\"", ev->phase);
	if (ev->id.type == TRACE_ABSENT)
		check_finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			      "async event \"%c\" without \"id\"", ev->phase);
	else if (ev->id.type == TRACE_NUMBER && !check_is_integer(&ev->id))
		check_finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			      "async id %s is not an integer (a float id is refused)",
			      check_shown(b1, sizeof(b1), &ev->id));
	if (ev->phase == 'n' || ev->cat.type != TRACE_STRING || ev->id.type == TRACE_ABSENT)
		return;
	if (trace_async_key(&c->key, ev)) {
		c->nomem = true;
		return;
	}
	if (ev->phase == 'e') {
		as = table_get(&c->async, c->key.p, c->key.len);
		if (as == NULL) {
			check_finding(
				c, RULE_ASYNC_UNMATCHED, ev->line, ev->col,
				"e %s (cat %s, id %s) without a b open: b and e match on cat, id "
				"and name",
				check_shown(b1, sizeof(b1), &ev->name),
				check_shown(b2, sizeof(b2), &ev->cat),
				check_shown(b3, sizeof(b3), &ev->id));
		} else if (--as->open == 0) {
			budget_give(&c->threads.budget, sizeof(*as) + c->key.len + ENTRY_COST);
			free(as->label);
			table_remove(&c->async, as);
		}
		return;
	}
	as = table_get(&c->async, c->key.p, c->key.len);
	if (as == NULL && !budget_take(&c->threads.budget, sizeof(*as) + c->key.len + ENTRY_COST))
		return; /* not tracked: a state-limit */
	if (as == NULL)
		as = table_put(&c->async, c->key.p, c->key.len, &created);
	else
		created = false;
	if (as == NULL) {
		c->nomem = true;
		return;
	}
	if (created) {
		char label[320];

		snprintf(label, sizeof(label), "%s (cat %s, id %s)",
			 check_shown(b1, sizeof(b1), &ev->name),
			 check_shown(b2, sizeof(b2), &ev->cat),
			 check_shown(b3, sizeof(b3), &ev->id));
		as->label = strdup(label);
		as->line = ev->line;
		as->col = ev->col;
	}
	as->open++;
}
