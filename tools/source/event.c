/* SPDX-License-Identifier: MIT */
/*
 * The helpers of the tools' event model (see event.h).
 */
#include "event.h"

#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *const trace_field_names[TRACE_F_COUNT] = {
	[TRACE_F_PH] = "ph",   [TRACE_F_NAME] = "name", [TRACE_F_CAT] = "cat",
	[TRACE_F_TS] = "ts",   [TRACE_F_DUR] = "dur",	[TRACE_F_PID] = "pid",
	[TRACE_F_TID] = "tid", [TRACE_F_ID] = "id",	[TRACE_F_S] = "s",
	[TRACE_F_BP] = "bp",   [TRACE_F_ARGS] = "args",
};

int trace_key_add(struct buf *key, const struct trace_value *v)
{
	size_t len = v->type == TRACE_ABSENT ? 0 : v->len;

	return buf_putc(key, (char)v->type) || buf_put(key, &len, sizeof(len)) ||
	       buf_put(key, v->text, len);
}

const char *trace_key_string(const char *key, size_t *len)
{
	if (key[0] != (char)TRACE_STRING) {
		*len = 0;
		return NULL;
	}
	memcpy(len, key + 1, sizeof(*len));
	return key + 1 + sizeof(*len);
}

int trace_async_key(struct buf *key, const struct trace_event *ev)
{
	key->len = 0;
	return trace_key_add(key, &ev->cat) || trace_key_add(key, &ev->id) ||
	       trace_key_add(key, &ev->name);
}

char *trace_value_dup(const struct trace_value *v)
{
	return v->type == TRACE_STRING ? text_dup(v->text, v->len) : NULL;
}

const struct trace_value *trace_event_arg(const struct trace_event *ev, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < ev->nargs; i++) {
		if (ev->arg[i].key_len == len && memcmp(ev->arg[i].key, key, len) == 0)
			return &ev->arg[i].value;
	}
	return NULL;
}

bool trace_value_is(const struct trace_value *v, const char *s)
{
	size_t len = strlen(s);

	return v->type == TRACE_STRING && v->len == len && memcmp(v->text, s, len) == 0;
}

void trace_event_thread(const struct trace_event *ev, int64_t *pid, int64_t *tid)
{
	*pid = ev->has_pid ? ev->pid_num : 0;
	*tid = ev->has_tid ? ev->tid_num : *pid;
}

char *trace_place_format(char *out, size_t size, const char *file, uint64_t line, uint64_t col,
			 bool in_packet, uint64_t packet, uint64_t offset)
{
	if (in_packet)
		snprintf(out, size, "%s: packet %" PRIu64 " at byte %" PRIu64, file, packet,
			 offset);
	else if (line > 0)
		snprintf(out, size, "%s:%" PRIu64 ":%" PRIu64, file, line, col);
	else
		snprintf(out, size, "%s", file);
	return out;
}

char *trace_issue_place(char *out, size_t size, const char *file, const struct trace_issue *issue)
{
	return trace_place_format(out, size, file, issue->line, issue->col, issue->in_packet,
				  issue->packet, issue->offset);
}
