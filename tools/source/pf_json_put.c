/* SPDX-License-Identifier: MIT */
/*
 * The pieces of a .pftrace's JSON events (see pf_json_put.h).
 */
#include "pf_json_put.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- args */

static int put_value(struct buf *b, const struct pf_arg *args, size_t *i);

static int put_members(struct buf *b, const struct pf_arg *args, size_t *i, size_t n, bool named)
{
	for (size_t k = 0; k < n; k++) {
		const struct pf_arg *a = &args[*i];

		if (k > 0 && buf_putc(b, ',') != 0)
			return -1;
		if (named && (json_put_string(b, a->name.s != NULL ? a->name.s : "",
					      a->name.s != NULL ? a->name.len : 0) < 0 ||
			      buf_putc(b, ':') != 0))
			return -1;
		if (put_value(b, args, i) != 0)
			return -1;
	}
	return 0;
}

static int put_value(struct buf *b, const struct pf_arg *args, size_t *i)
{
	const struct pf_arg *a = &args[(*i)++];
	char num[40];

	switch (a->kind) {
	case PF_ARG_NULL:
		return buf_puts(b, "null");
	case PF_ARG_BOOL:
		return buf_puts(b, a->b ? "true" : "false");
	case PF_ARG_UINT:
		return buf_put_u64(b, a->u);
	case PF_ARG_INT:
		return buf_put_i64(b, a->i);
	case PF_ARG_DOUBLE:
		return buf_put(b, num, (size_t)(rtr__jsontext_f64(num, a->d) - num));
	case PF_ARG_STRING:
		return json_put_string(b, a->str.s, a->str.len) < 0 ? -1 : 0;
	case PF_ARG_POINTER:
		snprintf(num, sizeof(num), "\"0x%" PRIx64 "\"", a->u);
		return buf_puts(b, num);
	case PF_ARG_ARRAY:
		return buf_putc(b, '[') || put_members(b, args, i, a->count, false) ||
		       buf_putc(b, ']');
	case PF_ARG_DICT:
		return buf_putc(b, '{') || put_members(b, args, i, a->count, true) ||
		       buf_putc(b, '}');
	}
	return -1;
}

/* The top-level annotations as object members; the start marker's origins as strings,
 * as the recorder writes them (64-bit values a double cannot hold). */
int pfj_put_args(struct buf *b, const struct pf_event *ev, bool start_marker)
{
	size_t i = 0;

	for (size_t k = 0; k < ev->ntop; k++) {
		const struct pf_arg *a = &ev->args[i];

		if (k > 0 && buf_putc(b, ',') != 0)
			return -1;
		if (json_put_string(b, a->name.s != NULL ? a->name.s : "",
				    a->name.s != NULL ? a->name.len : 0) < 0 ||
		    buf_putc(b, ':') != 0)
			return -1;
		if (start_marker && a->kind == PF_ARG_UINT &&
		    a->name.len > sizeof(PF_JSON_ORIGIN_PREFIX) - 1 &&
		    memcmp(a->name.s, PF_JSON_ORIGIN_PREFIX, sizeof(PF_JSON_ORIGIN_PREFIX) - 1) ==
			    0) {
			i++;
			if (buf_putc(b, '"') || buf_put_u64(b, a->u) || buf_putc(b, '"'))
				return -1;
		} else if (put_value(b, ev->args, &i) != 0) {
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- places */

bool pfj_str_is(struct pf_str s, const char *lit)
{
	return s.s != NULL && s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0;
}

/* The pid of the process a track belongs to (its own, or an ancestor's). */
static bool process_of(const struct pf_packet *pk, const struct pf_track *t, int64_t *pid)
{
	for (int hops = 0; t != NULL && hops < 16; hops++) {
		if ((t->kind == PF_TRACK_PROCESS || t->kind == PF_TRACK_THREAD) && t->has_pid) {
			*pid = t->pid;
			return true;
		}
		if (!t->has_parent)
			break;
		t = pf_track_get(pk, t->parent_uuid);
	}
	return false;
}

struct place pfj_place_of(const struct pf_packet *pk, uint64_t uuid, const struct pf_track *t)
{
	struct place at = {PLACE_THREAD, 0, 0};
	int64_t pid = 0;

	if (t == NULL) {
		/* Undeclared: where ringtrace's writer would have put it (pid << 32 | tid). */
		at.pid = (int64_t)(uuid >> 32);
		at.tid = (int64_t)(uuid & 0xffffffffu);
		if (at.tid == 0)
			at.tid = at.pid;
		return at;
	}
	switch (t->kind) {
	case PF_TRACK_THREAD:
		at.pid = t->has_pid ? t->pid : 0;
		at.tid = t->has_tid ? t->tid : at.pid;
		return at;
	case PF_TRACK_PROCESS:
		at.kind = PLACE_PROCESS;
		at.pid = at.tid = t->has_pid ? t->pid : 0;
		return at;
	case PF_TRACK_COUNTER:
		process_of(pk, t, &pid);
		return (struct place){PLACE_COUNTER, pid, pid};
	case PF_TRACK_OTHER:
		break;
	}
	if (!t->has_parent) /* a global track (ringtrace's global instants) */
		return (struct place){PLACE_GLOBAL, 0, 0};
	process_of(pk, t, &pid);
	/*
	 * A lane of a ringtrace track: uuid ppid << 32 | lane tid under its pseudo-process
	 * ppid, a pid above any the kernel gives (pid_max is at most 2^22); or a uuid
	 * pid << 32 | tid below ringtrace's async range (0x40000000 | n). A thread.
	 */
	uint64_t low = uuid & 0xffffffffu;

	if (t->has_parent && uuid >> 32 == (uint64_t)pid && low > 0 &&
	    (pid >= 0x40000000 || low < 0x40000000u))
		return (struct place){PLACE_THREAD, pid, (int64_t)low};
	return (struct place){PLACE_ASYNC, pid, pid};
}

void pfj_place_on_writer(const struct pf_packet *pk, struct place *at)
{
	const struct pf_track *th =
		pk->sequence_track != 0 ? pf_track_get(pk, pk->sequence_track) : NULL;

	if (th != NULL && th->kind == PF_TRACK_THREAD) {
		struct place p = pfj_place_of(pk, th->uuid, th);
		at->pid = p.pid;
		at->tid = p.tid;
	}
}

/* ,"ts":..,"pid":..,"tid":.. */
int pfj_put_where(struct buf *b, int64_t ts, const struct place *at)
{
	return buf_puts(b, ",\"ts\":") || buf_put_us(b, ts) || buf_puts(b, ",\"pid\":") ||
	       buf_put_i64(b, at->pid) || buf_puts(b, ",\"tid\":") || buf_put_i64(b, at->tid);
}

static int put_str_key(struct buf *b, const char *key, const char *s, size_t len)
{
	return buf_puts(b, key) || json_put_string(b, s, len) < 0;
}

/* ,"cat":..,"name":.. (each when present) */
int pfj_put_names(struct buf *b, struct pf_str cat, struct pf_str name)
{
	if (cat.s != NULL && put_str_key(b, ",\"cat\":", cat.s, cat.len))
		return -1;
	if (name.s != NULL && put_str_key(b, ",\"name\":", name.s, name.len))
		return -1;
	return 0;
}

int pfj_put_where_id(struct buf *b, int64_t ts, uint64_t id, const struct place *at)
{
	char hex[32];

	/* "0x..." as the recorder writes an id: a string, so that no double rounds it */
	snprintf(hex, sizeof(hex), ",\"id\":\"0x%" PRIx64 "\"", id);
	return buf_puts(b, ",\"ts\":") || buf_put_us(b, ts) || buf_puts(b, hex) ||
	       buf_puts(b, ",\"pid\":") || buf_put_i64(b, at->pid) || buf_puts(b, ",\"tid\":") ||
	       buf_put_i64(b, at->tid);
}
