/* SPDX-License-Identifier: MIT */
/*
 * The tracks of a .pftrace (see pf_internal.h): each TrackDescriptor read into the
 * track of its uuid, as its latest descriptor describes it (a process, a thread, a
 * counter, or another track: an async one, a named lane), with copies of its
 * strings, within the state bound.
 */
#include "pf_internal.h"

#include "json.h"

#include <stdlib.h>
#include <string.h>

static size_t len_of(const char *s)
{
	return s != NULL ? strlen(s) + 32 : 0;
}

/* The bytes of a track's strings, for the bound. */
static size_t track_strings(const struct pf_track *t)
{
	return len_of(t->name) + len_of(t->process_name) + len_of(t->thread_name) +
	       len_of(t->labels) + len_of(t->unit_name) + len_of(t->categories);
}

static void track_free_strings(struct pf_track *t)
{
	free(t->name);
	free(t->process_name);
	free(t->thread_name);
	free(t->labels);
	free(t->unit_name);
	free(t->categories);
}

/* ---------------------------------------------------------------- packets */

static char *dup_field(struct pf_decoder *d, const struct field *f)
{
	char *s = text_dup(f->data, f->len);

	if (s == NULL)
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
	return s;
}

static int replace_string(struct pf_decoder *d, char **to, const struct field *f)
{
	char *s = dup_field(d, f);

	if (s == NULL)
		return -1;
	free(*to);
	*to = s;
	return 0;
}

/* A repeated string (process_labels, a counter's categories): appended to *to, joined
 * with ",". 0, or -1. */
static int add_joined(struct pf_decoder *d, char **to, const struct field *g)
{
	size_t n = *to != NULL ? strlen(*to) : 0;
	char *l = realloc(*to, n + g->len + 2);

	if (l == NULL) {
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (n > 0)
		l[n++] = ',';
	memcpy(l + n, g->data, g->len);
	l[n + g->len] = '\0';
	*to = l;
	return 0;
}

/* A field g of the ProcessDescriptor, ThreadDescriptor or CounterDescriptor (which
 * is field `which` of the TrackDescriptor) into t. 0, or -1. */
static int read_kind_field(struct pf_decoder *d, struct pf_track *t, uint32_t which,
			   const struct field *g)
{
	bool varint = g->wt == RTR__PB_VARINT, len = g->wt == RTR__PB_LEN;

	if (which == RTR__PF_TRACK_COUNTER) {
		if (g->num == RTR__PF_COUNTER_UNIT && varint)
			t->counter_unit = (uint32_t)g->v;
		else if (g->num == RTR__PF_COUNTER_UNIT_NAME && len)
			return replace_string(d, &t->unit_name, g);
		else if (g->num == RTR__PF_COUNTER_CATEGORIES && len)
			return add_joined(d, &t->categories, g);
		return 0;
	}
	/* pid and the sort index have the same numbers in both descriptors */
	if (varint && g->num == RTR__PF_PROCESS_PID) {
		t->has_pid = true;
		t->pid = (int32_t)g->v;
	} else if (varint && g->num == RTR__PF_THREAD_TID && which == RTR__PF_TRACK_THREAD) {
		t->has_tid = true;
		t->tid = (int32_t)g->v;
	} else if (varint && g->num == RTR__PF_PROCESS_SORT_INDEX) {
		t->has_sort_index = true;
		t->sort_index = (int32_t)g->v;
	} else if (len && g->num == RTR__PF_PROCESS_NAME && which == RTR__PF_TRACK_PROCESS) {
		return replace_string(d, &t->process_name, g);
	} else if (len && g->num == RTR__PF_THREAD_NAME && which == RTR__PF_TRACK_THREAD) {
		return replace_string(d, &t->thread_name, g);
	} else if (len && g->num == RTR__PF_PROCESS_LABELS && which == RTR__PF_TRACK_PROCESS) {
		return add_joined(d, &t->labels, g);
	}
	return 0;
}

/* The TrackDescriptor's fields into t. 0, or -1. */
static int read_track_fields(struct pf_decoder *d, const struct field *msg, struct pf_track *t)
{
	struct pb b = pb_sub(msg), sb;
	struct field f, g;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == RTR__PF_TRACK_UUID && f.wt == RTR__PB_VARINT) {
			t->uuid = f.v;
		} else if (f.num == RTR__PF_TRACK_SIBLING_ORDER_RANK && f.wt == RTR__PB_VARINT) {
			t->has_rank = true;
			t->rank = (int32_t)f.v;
		} else if (f.num == RTR__PF_TRACK_PARENT_UUID && f.wt == RTR__PB_VARINT) {
			t->parent_uuid = f.v;
			t->has_parent = true;
		} else if (f.num == RTR__PF_TRACK_NAME && f.wt == RTR__PB_LEN) {
			if (replace_string(d, &t->name, &f) < 0)
				return -1;
		} else if ((f.num == RTR__PF_TRACK_PROCESS || f.num == RTR__PF_TRACK_THREAD ||
			    f.num == RTR__PF_TRACK_COUNTER) &&
			   f.wt == RTR__PB_LEN) {
			/* a thread's descriptor wins; else the first of the others */
			if (t->kind == PF_TRACK_OTHER || f.num == RTR__PF_TRACK_THREAD)
				t->kind = f.num == RTR__PF_TRACK_PROCESS  ? PF_TRACK_PROCESS
					  : f.num == RTR__PF_TRACK_THREAD ? PF_TRACK_THREAD
									  : PF_TRACK_COUNTER;
			sb = pb_sub(&f);
			while ((rc = pb_next(d, &sb, &g, 3)) == 1) {
				if (read_kind_field(d, t, f.num, &g) < 0)
					return -1;
			}
			if (rc < 0)
				return -1;
		}
	}
	return rc < 0 ? -1 : 0;
}

int pfd_read_descriptor(struct pf_decoder *d, const struct field *msg, struct pf_packet *pk)
{
	struct pf_track t = {0}, *old;
	bool created;

	if (read_track_fields(d, msg, &t) < 0)
		goto fail;
	old = table_get(&d->tracks, &t.uuid, sizeof(t.uuid));
	if (old == NULL) {
		if (!pfd_take(d, sizeof(t) + PF_ENTRY_COST + track_strings(&t))) {
			track_free_strings(&t);
			return 0;
		}
		old = table_put(&d->tracks, &t.uuid, sizeof(t.uuid), &created);
		if (old == NULL) {
			pfd_fail(d, PF_ERR_NOMEM, "out of memory");
			goto fail;
		}
	}
	t.descriptors = old->descriptors + 1;
	track_free_strings(old);
	*old = t;
	pk->track = old;
	return 0;
fail:
	track_free_strings(&t);
	return -1;
}

const struct pf_track *pf_track_get(const struct pf_packet *p, uint64_t uuid)
{
	return table_get(p->tracks_, &uuid, sizeof(uuid));
}

void pfd_tracks_free(struct pf_decoder *d)
{
	for (struct pf_track *t = table_first(&d->tracks); t != NULL; t = table_next(t))
		track_free_strings(t);
	table_destroy(&d->tracks);
}
