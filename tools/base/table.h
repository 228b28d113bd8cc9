/* SPDX-License-Identifier: MIT */
/*
 * A hash table from byte-string keys to fixed-size values, in which the tools keep
 * their state per thread, per open slice, per async id or per flow while they stream
 * a trace. Never per event: that is what keeps their memory bounded.
 *
 * Values do not move: a pointer from table_put() stays valid until that entry is
 * removed or the table destroyed, whatever else is added. Iteration follows the
 * order of insertion, so reports made from a table come out in the order of the
 * file. Open addressing with linear probing, grown at 70 % load; removal shifts the
 * following slots back (no tombstones).
 *
 * Thread safety: none; one table per thread.
 */
#ifndef RTR_TOOLS_TABLE_H
#define RTR_TOOLS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct table_entry;

struct table {
	size_t value_size;
	size_t count;
	size_t mask; /* slots - 1; 0 before the first insertion */
	struct table_entry **slots;
	struct table_entry *first; /* insertion order */
	struct table_entry *last;
};

/* An empty table of values of value_size bytes; allocates nothing yet. */
void table_init(struct table *t, size_t value_size);

/* Frees every entry. Values that own memory must be released by the caller first. */
void table_destroy(struct table *t);

/* The value stored under key, or NULL. */
void *table_get(const struct table *t, const void *key, size_t key_len);

/*
 * The value under key, added (zero-filled, *created = true) when absent. NULL when
 * out of memory. created may be NULL.
 */
void *table_put(struct table *t, const void *key, size_t key_len, bool *created);

/* Remove the entry whose value this is (from table_get/put/first/next). */
void table_remove(struct table *t, void *value);

/* The first value in insertion order, or NULL when the table is empty. */
void *table_first(const struct table *t);

/* The value after this one in insertion order, or NULL. */
void *table_next(const void *value);

/* The key of a value; *len gets its length. */
const void *table_key(const struct table *t, const void *value, size_t *len);

#endif /* RTR_TOOLS_TABLE_H */
