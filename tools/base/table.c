/* SPDX-License-Identifier: MIT */
/*
 * Hash table of the tools (see table.h for the contract).
 *
 * Each entry is one allocation: links for the insertion order, the hash, then the
 * value (aligned for any type) and the key bytes after it. The slot array holds
 * pointers only, so growing it never moves a value.
 */
#include "table.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct table_entry {
	struct table_entry *prev, *next;
	uint64_t hash;
	size_t key_len;
};

/* Where the value starts in an entry: after the header, aligned for any type. */
#define VALUE_OFFSET \
	((sizeof(struct table_entry) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

static void *value_of(const struct table_entry *e)
{
	return (char *)e + VALUE_OFFSET;
}

static struct table_entry *entry_of(const void *value)
{
	return (struct table_entry *)(void *)((char *)value - VALUE_OFFSET);
}

static const unsigned char *key_of(const struct table *t, const struct table_entry *e)
{
	return (const unsigned char *)e + VALUE_OFFSET + t->value_size;
}

/* FNV-1a, then the murmur3 finalizer so that linear probing sees every bit. */
static uint64_t hash_key(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	return h;
}

void table_init(struct table *t, size_t value_size)
{
	memset(t, 0, sizeof(*t));
	t->value_size = (value_size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
}

void table_destroy(struct table *t)
{
	struct table_entry *e = t->first;

	while (e != NULL) {
		struct table_entry *next = e->next;

		free(e);
		e = next;
	}
	free(t->slots);
	table_init(t, t->value_size);
}

static size_t find_slot(const struct table *t, uint64_t h, const void *key, size_t len)
{
	size_t i = (size_t)h & t->mask;

	for (;; i = (i + 1) & t->mask) {
		const struct table_entry *e = t->slots[i];

		if (e == NULL ||
		    (e->hash == h && e->key_len == len && memcmp(key_of(t, e), key, len) == 0))
			return i;
	}
}

void *table_get(const struct table *t, const void *key, size_t key_len)
{
	uint64_t h;
	struct table_entry *e;

	if (t->count == 0)
		return NULL;
	h = hash_key(key, key_len);
	e = t->slots[find_slot(t, h, key, key_len)];
	return e != NULL ? value_of(e) : NULL;
}

static int grow(struct table *t)
{
	size_t n = t->mask ? (t->mask + 1) * 2 : 16;
	struct table_entry **slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (struct table_entry *e = t->first; e != NULL; e = e->next) {
		size_t i = (size_t)e->hash & (n - 1);

		while (slots[i] != NULL)
			i = (i + 1) & (n - 1);
		slots[i] = e;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

void *table_put(struct table *t, const void *key, size_t key_len, bool *created)
{
	uint64_t h = hash_key(key, key_len);
	struct table_entry *e;
	size_t i;

	if (created != NULL)
		*created = false;
	if ((t->count + 1) * 10 > (t->mask + 1) * 7 && grow(t) != 0)
		return NULL;
	i = find_slot(t, h, key, key_len);
	if (t->slots[i] != NULL)
		return value_of(t->slots[i]);
	e = calloc(1, VALUE_OFFSET + t->value_size + key_len);
	if (e == NULL)
		return NULL;
	e->hash = h;
	e->key_len = key_len;
	memcpy((unsigned char *)e + VALUE_OFFSET + t->value_size, key, key_len);
	e->prev = t->last;
	if (t->last != NULL)
		t->last->next = e;
	else
		t->first = e;
	t->last = e;
	t->slots[i] = e;
	t->count++;
	if (created != NULL)
		*created = true;
	return value_of(e);
}

void table_remove(struct table *t, void *value)
{
	struct table_entry *e = entry_of(value);
	size_t i = (size_t)e->hash & t->mask, j;

	while (t->slots[i] != e)
		i = (i + 1) & t->mask;
	/* Shift back every following entry whose home slot does not lie in (i, j]. */
	for (j = (i + 1) & t->mask; t->slots[j] != NULL; j = (j + 1) & t->mask) {
		size_t home = (size_t)t->slots[j]->hash & t->mask;

		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = NULL;
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		t->first = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		t->last = e->prev;
	t->count--;
	free(e);
}

void *table_first(const struct table *t)
{
	return t->first != NULL ? value_of(t->first) : NULL;
}

void *table_next(const void *value)
{
	const struct table_entry *e = entry_of(value);

	return e->next != NULL ? value_of(e->next) : NULL;
}

const void *table_key(const struct table *t, const void *value, size_t *len)
{
	const struct table_entry *e = entry_of(value);

	*len = e->key_len;
	return key_of(t, e);
}
