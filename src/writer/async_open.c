/* SPDX-License-Identifier: MIT */
/* The async spans the writer has opened: see async_open.h. */
#include "writer/async_open.h"

#include "common/mem.h"

#include <stdlib.h>
#include <string.h>

#define NSLOTS (2 * RTR_ASYNC_OPEN_MAX)

static size_t slot_of(uint64_t cat, uint64_t id)
{
	uint64_t x = (cat ^ (id * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 53) & (NSLOTS - 1); /* NSLOTS is 2048: the top 11 bits */
}

_Static_assert(NSLOTS == 2048, "slot_of() takes 11 bits");

void rtr__async_open_add(struct rtr__async_open *t, const struct rtr__async_desc *d)
{
	uint32_t name_len = d->copied ? d->name_len : 0;
	uint32_t args_len = d->args.n > 0 ? (uint32_t)sizeof(uint32_t) + d->args.len : 0;

	if (t->slots == NULL && (t->slots = rtr__mem_map(NSLOTS * sizeof(*t->slots))) == NULL) {
		t->untracked++;
		return;
	}
	if (t->count == RTR_ASYNC_OPEN_MAX || name_len > RTR_ASYNC_TEXT_MAX) {
		t->untracked++;
		return;
	}
	if (name_len + args_len > RTR_ASYNC_TEXT_MAX) {
		t->args_cut++;
		args_len = 0;
	}
	size_t i = slot_of((uintptr_t)d->cat, d->id);
	while (t->slots[i].seq != 0)
		i = (i + 1) & (NSLOTS - 1);
	struct rtr__async_span *s = &t->slots[i];
	s->cat = d->cat;
	s->id = d->id;
	s->seq = ++t->next_seq;
	s->name = d->copied ? NULL : d->name;
	s->tid = d->tid;
	s->pid = d->pid;
	s->copied = d->copied != 0;
	s->on_track = d->on_track != 0;
	s->name_len = (uint16_t)name_len;
	s->args_len = (uint16_t)args_len;
	memcpy(s->text, d->name, name_len);
	if (args_len > 0) {
		memcpy(s->text + name_len, &d->args.n, sizeof(uint32_t));
		memcpy(s->text + name_len + sizeof(uint32_t), d->args.types, d->args.len);
	}
	t->count++;
}

void rtr__async_open_desc(const struct rtr__async_span *s, struct rtr__async_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->cat = s->cat;
	d->id = s->id;
	d->name = s->copied ? s->text : s->name;
	d->name_len = s->name_len;
	d->copied = s->copied;
	d->on_track = s->on_track;
	d->tid = s->tid;
	d->pid = s->pid;
	if (s->args_len > 0) {
		memcpy(&d->args.n, s->text + s->name_len, sizeof(uint32_t));
		d->args.types = (const uint8_t *)s->text + s->name_len + sizeof(uint32_t);
		d->args.len = s->args_len - (uint32_t)sizeof(uint32_t);
	}
}

void rtr__async_open_end(struct rtr__async_open *t, const char *cat, uint64_t id)
{
	size_t found = NSLOTS;

	if (t->count == 0) {
		t->lost++;
		return;
	}
	/* The newest of the key: every slot of the key lies in its probe run. */
	for (size_t i = slot_of((uintptr_t)cat, id); t->slots[i].seq != 0;
	     i = (i + 1) & (NSLOTS - 1))
		if (t->slots[i].cat == cat && t->slots[i].id == id &&
		    (found == NSLOTS || t->slots[i].seq > t->slots[found].seq))
			found = i;
	if (found == NSLOTS) {
		t->lost++;
		return;
	}
	/* Backward-shift deletion: move each later slot of the run into the hole when
	 * its home does not lie between the hole and it (cyclically). */
	size_t hole = found;
	for (size_t j = (hole + 1) & (NSLOTS - 1); t->slots[j].seq != 0;
	     j = (j + 1) & (NSLOTS - 1)) {
		size_t home = slot_of((uintptr_t)t->slots[j].cat, t->slots[j].id);
		int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (stays)
			continue;
		t->slots[hole] = t->slots[j];
		hole = j;
	}
	t->slots[hole].seq = 0;
	t->count--;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = (*(const struct rtr__async_span *const *)a)->seq;
	uint64_t y = (*(const struct rtr__async_span *const *)b)->seq;

	return x < y ? -1 : x > y;
}

size_t rtr__async_open_list(const struct rtr__async_open *t, int order,
			    const struct rtr__async_span **out)
{
	size_t n = 0;

	if (t->slots == NULL)
		return 0;
	for (size_t i = 0; i < NSLOTS && n < RTR_ASYNC_OPEN_MAX; i++)
		if (t->slots[i].seq != 0)
			out[n++] = &t->slots[i];
	qsort(out, n, sizeof(*out), by_seq);
	if (order < 0)
		for (size_t i = 0; i < n / 2; i++) {
			const struct rtr__async_span *x = out[i];
			out[i] = out[n - 1 - i];
			out[n - 1 - i] = x;
		}
	return n;
}

void rtr__async_open_free(struct rtr__async_open *t)
{
	rtr__mem_unmap(t->slots, NSLOTS * sizeof(*t->slots));
	memset(t, 0, sizeof(*t));
}
