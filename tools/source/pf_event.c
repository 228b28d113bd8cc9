/* SPDX-License-Identifier: MIT */
/*
 * The track events of a .pftrace (see pf_internal.h): a TrackEvent's type, name
 * (inline or interned), categories (inline or interned, joined with ","), track
 * (its own, else its sequence's default), counter value, flow ids, and its debug
 * annotations, flattened in pre-order (a dict or an array, then its children). The
 * arrays live in the decoder, reused for each event.
 */
#include "pf_internal.h"

#include <inttypes.h>
#include <string.h>

/* What the annotations of an event look their interned strings up in. */
struct ev_ctx {
	struct pf_decoder *d;
	struct sequence *s;
	uint32_t seq_id;
};

static int add_flow(struct pf_decoder *d, uint64_t v, void *unused)
{
	(void)unused;
	uint64_t *flows = array_grow(d->flows, &d->flows_cap, d->nflows + 1, sizeof(*flows), 16);

	if (flows == NULL) {
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	d->flows = flows;
	d->flows[d->nflows++] = v;
	return 0;
}

static int add_category(struct pf_decoder *d, const char *s, size_t len)
{
	char *cats = array_grow(d->cats, &d->cats_cap, d->cats_len + len + 2, 1, 16);

	if (cats == NULL) {
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	d->cats = cats;
	if (d->cats_len > 0)
		d->cats[d->cats_len++] = ',';
	memcpy(d->cats + d->cats_len, s, len);
	d->cats_len += len;
	return 0;
}

static int add_category_iid(struct pf_decoder *d, uint64_t iid, void *ctx)
{
	struct ev_ctx *e = ctx;
	struct pf_str c = pfd_lookup(d, e->s, e->seq_id, IN_CATEGORIES, iid);

	return c.s != NULL ? add_category(d, c.s, c.len) : 0;
}

/* One DebugAnnotation, appended with its children (pre-order). */
static int read_annotation(struct pf_decoder *d, struct ev_ctx *e, const struct field *msg,
			   unsigned depth)
{
	struct pb b = pb_sub(msg);
	struct field f;
	size_t at = d->nargs;
	uint32_t children = 0;
	int rc;
	bool dict = false;

	if (depth > PF_MAX_DEPTH) {
		pfd_malformed(d, msg->data, "nesting over 64 levels");
		return -1;
	}
	struct pf_arg *args = array_grow(d->args, &d->args_cap, d->nargs + 1, sizeof(*args), 16);

	if (args == NULL) {
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	d->args = args;
	d->nargs++;
	struct pf_arg a = {.kind = PF_ARG_NULL};

	while ((rc = pb_next(d, &b, &f, depth)) == 1) {
		if (f.wt == RTR__PB_LEN &&
		    (f.num == RTR__PF_ANN_DICT_ENTRIES || f.num == RTR__PF_ANN_ARRAY_VALUES)) {
			if (f.num == RTR__PF_ANN_DICT_ENTRIES)
				dict = true;
			continue;
		}
		switch (f.num) {
		case RTR__PF_ANN_NAME_IID:
			if (f.wt == RTR__PB_VARINT)
				a.name = pfd_lookup(d, e->s, e->seq_id, IN_ANNOTATION_NAMES, f.v);
			break;
		case RTR__PF_ANN_NAME:
			if (f.wt == RTR__PB_LEN)
				a.name = (struct pf_str){(const char *)f.data, f.len};
			break;
		case RTR__PF_ANN_BOOL:
			a.kind = PF_ARG_BOOL;
			a.b = f.v != 0;
			break;
		case RTR__PF_ANN_UINT:
			a.kind = PF_ARG_UINT;
			a.u = f.v;
			break;
		case RTR__PF_ANN_INT:
			a.kind = PF_ARG_INT;
			a.i = (int64_t)f.v;
			break;
		case RTR__PF_ANN_DOUBLE:
			if (f.wt == RTR__PB_I64) {
				a.kind = PF_ARG_DOUBLE;
				memcpy(&a.d, &f.v, sizeof(a.d));
			}
			break;
		case RTR__PF_ANN_STRING:
			if (f.wt == RTR__PB_LEN) {
				a.kind = PF_ARG_STRING;
				a.str = (struct pf_str){(const char *)f.data, f.len};
			}
			break;
		case RTR__PF_ANN_POINTER:
			a.kind = PF_ARG_POINTER;
			a.u = f.v;
			break;
		case RTR__PF_ANN_STRING_IID:
			a.str = pfd_lookup(d, e->s, e->seq_id, IN_STRINGS, f.v);
			a.kind = a.str.s != NULL ? PF_ARG_STRING : PF_ARG_NULL;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return -1;
	/* Children: dict entries make a dict; else array values an array. */
	b = pb_sub(msg);
	while (pb_next(d, &b, &f, depth) == 1) {
		if (f.wt != RTR__PB_LEN ||
		    f.num != (dict ? RTR__PF_ANN_DICT_ENTRIES : RTR__PF_ANN_ARRAY_VALUES))
			continue;
		if (read_annotation(d, e, &f, depth + 1) < 0)
			return -1;
		children++;
	}
	if (d->failed)
		return -1;
	if (dict || children > 0) {
		a.kind = dict ? PF_ARG_DICT : PF_ARG_ARRAY;
		a.count = children;
	}
	d->args[at] = a;
	return 0;
}

int pfd_read_track_event(struct pf_decoder *d, struct sequence *s, const struct field *msg,
			 struct pf_packet *pk)
{
	struct pb b = pb_sub(msg);
	struct field f;
	struct pf_event *ev = &pk->event;
	struct ev_ctx e = {d, s, pk->sequence_id};
	bool has_track = false;
	size_t nflow = 0;
	int rc;

	d->nargs = d->nflows = d->cats_len = 0;
	/* Flows first, terminating ones after, so that both sit in one array. */
	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == RTR__PF_EVENT_TYPE && f.wt == RTR__PB_VARINT) {
			ev->type = (enum pf_event_type)f.v;
		} else if (f.num == RTR__PF_EVENT_NAME && f.wt == RTR__PB_LEN) {
			ev->name = (struct pf_str){(const char *)f.data, f.len};
		} else if (f.num == RTR__PF_EVENT_NAME_IID && f.wt == RTR__PB_VARINT) {
			ev->name = pfd_lookup(d, s, pk->sequence_id, IN_NAMES, f.v);
		} else if (f.num == RTR__PF_EVENT_CATEGORIES && f.wt == RTR__PB_LEN) {
			if (add_category(d, (const char *)f.data, f.len) < 0)
				return -1;
		} else if (f.num == RTR__PF_EVENT_CATEGORY_IIDS) {
			if (pb_repeated(d, &f, false, add_category_iid, &e) < 0)
				return -1;
		} else if (f.num == RTR__PF_EVENT_TRACK_UUID && f.wt == RTR__PB_VARINT) {
			has_track = true;
			ev->track_uuid = f.v;
		} else if (f.num == RTR__PF_EVENT_COUNTER_VALUE && f.wt == RTR__PB_VARINT) {
			ev->has_counter = true;
			ev->counter_is_double = false;
			ev->counter_int = (int64_t)f.v;
		} else if (f.num == RTR__PF_EVENT_DOUBLE_COUNTER_VALUE && f.wt == RTR__PB_I64) {
			ev->has_counter = ev->counter_is_double = true;
			memcpy(&ev->counter_double, &f.v, sizeof(double));
		} else if (f.num == RTR__PF_EVENT_FLOW_IDS &&
			   (f.wt == RTR__PB_LEN || f.wt == RTR__PB_I64)) {
			if (pb_repeated(d, &f, true, add_flow, NULL) < 0)
				return -1;
		} else if (f.num == RTR__PF_EVENT_DEBUG_ANNOTATIONS && f.wt == RTR__PB_LEN) {
			if (read_annotation(d, &e, &f, 3) < 0)
				return -1;
			ev->ntop++;
		}
		if (d->failed)
			return -1;
	}
	if (rc < 0)
		return -1;
	nflow = d->nflows;
	b = pb_sub(msg);
	while (pb_next(d, &b, &f, 2) == 1) {
		if (f.num == RTR__PF_EVENT_TERMINATING_FLOW_IDS &&
		    (f.wt == RTR__PB_LEN || f.wt == RTR__PB_I64) &&
		    pb_repeated(d, &f, true, add_flow, NULL) < 0)
			return -1;
	}
	if (d->failed)
		return -1;
	ev->flow_ids = d->flows;
	ev->nflow_ids = nflow;
	ev->terminating_flow_ids = d->flows != NULL ? d->flows + nflow : NULL;
	ev->nterminating_flow_ids = d->nflows - nflow;
	ev->args = d->args;
	ev->nargs = d->nargs;
	if (d->cats_len > 0 || ev->categories.s != NULL)
		ev->categories = (struct pf_str){d->cats, d->cats_len};
	if (!has_track && s != NULL && s->has_default_track)
		ev->track_uuid = s->default_track;
	if (ev->track_uuid != 0) {
		ev->track = table_get(&d->tracks, &ev->track_uuid, sizeof(ev->track_uuid));
		if (ev->track == NULL && !d->refused)
			pfd_issue(d, PF_ISSUE_UNDECLARED_TRACK,
				  "track_uuid %" PRIu64 " (0x%" PRIx64
				  ") used before its TrackDescriptor: Perfetto puts the event on "
				  "a track it knows nothing of",
				  ev->track_uuid, ev->track_uuid);
	}
	return 0;
}

size_t pf_arg_span(const struct pf_arg *args, size_t i)
{
	size_t n = 1;

	if (args[i].kind == PF_ARG_ARRAY || args[i].kind == PF_ARG_DICT)
		for (uint32_t c = 0; c < args[i].count; c++)
			n += pf_arg_span(args, i + n);
	return n;
}
