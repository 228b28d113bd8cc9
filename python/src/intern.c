/* SPDX-License-Identifier: MIT */
/*
 * Names from Python strings, interned.
 *
 * The library keeps a name by pointer: the record holds it, and the writer thread
 * reads it later, on its own, and caches what it wrote by that pointer. So a name
 * given from Python must be a copy that never moves, never dies and is never reused
 * for other bytes while the process lives — never a pointer into a str object, which
 * may be freed once the call returns. This file keeps those copies:
 *
 *  - the string table maps UTF-8 bytes to one NUL-terminated copy, made once and
 *    never freed (equal names share it, so the writer's caches hit);
 *  - the site table maps a pair of interned (category, name) pointers to a
 *    struct pyrtr_site, also never freed, which the scope records by pointer;
 *  - in front of each, a small direct-mapped cache keyed by the str objects
 *    themselves, holding a reference to them: a hit is a pointer compare, with no
 *    hashing or UTF-8 conversion, and since the cache keeps the object alive its
 *    address cannot be reused by another string. Only exact str objects are cached
 *    (releasing one runs no Python code).
 *
 * The memory grows with the number of distinct names and is kept until the process
 * ends: a name made per call (f"step {i}") is better an argument.
 *
 * The GIL serializes every access to these tables.
 */
#include "pyrtr.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* The arena: copies that never move                                          */

#define ARENA_CHUNK (64 * 1024)

static char *arena_cur;
static size_t arena_left;
static size_t arena_bytes; /* all bytes taken, for pyrtr_intern_counts() */

/* n bytes aligned for a struct pyrtr_site, never freed; NULL when out of memory. */
static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > ARENA_CHUNK / 4) {
		arena_bytes += n;
		return malloc(n); /* a long name: a block of its own */
	}
	if (n > arena_left) {
		char *chunk = malloc(ARENA_CHUNK);
		if (chunk == NULL)
			return NULL;
		arena_cur = chunk;
		arena_left = ARENA_CHUNK;
	}
	void *p = arena_cur;
	arena_cur += n;
	arena_left -= n;
	arena_bytes += n;
	return p;
}

/* ------------------------------------------------------------------------- */
/* Open-addressing tables of pointers, grown at three quarters full           */

struct table {
	void **slots;
	uint64_t *hashes;
	size_t mask; /* slots - 1; 0 before the first insert */
	size_t used;
};

static struct table strings, sites;

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return h;
}

static uint64_t hash_pair(const void *a, const void *b)
{
	uint64_t h = (uint64_t)(uintptr_t)a * UINT64_C(0x9E3779B97F4A7C15);

	return (h ^ (h >> 29) ^ (uint64_t)(uintptr_t)b) * UINT64_C(0xBF58476D1CE4E5B9);
}

/* Room for one more entry; -1 when out of memory. */
static int table_reserve(struct table *t)
{
	if (t->mask != 0 && (t->used + 1) * 4 < (t->mask + 1) * 3)
		return 0;
	size_t n = t->mask == 0 ? 256 : (t->mask + 1) * 2;
	void **slots = calloc(n, sizeof(*slots));
	uint64_t *hashes = calloc(n, sizeof(*hashes));
	if (slots == NULL || hashes == NULL) {
		free(slots);
		free(hashes);
		return -1;
	}
	for (size_t i = 0; t->mask != 0 && i <= t->mask; i++) {
		if (t->slots[i] == NULL)
			continue;
		size_t j = t->hashes[i] & (n - 1);
		while (slots[j] != NULL)
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
		hashes[j] = t->hashes[i];
	}
	free(t->slots);
	free(t->hashes);
	t->slots = slots;
	t->hashes = hashes;
	t->mask = n - 1;
	return 0;
}

/* The copy of len bytes at s, made on first sight; NULL when out of memory. */
static const char *intern_bytes(const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t i = h & strings.mask;

	for (; strings.mask != 0 && strings.slots[i] != NULL; i = (i + 1) & strings.mask) {
		const char *e = strings.slots[i];
		if (strings.hashes[i] == h && strncmp(e, s, len) == 0 && e[len] == '\0')
			return e;
	}
	if (table_reserve(&strings) != 0)
		return NULL;
	char *copy = arena_alloc(len + 1);
	if (copy == NULL)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	for (i = h & strings.mask; strings.slots[i] != NULL; i = (i + 1) & strings.mask)
		;
	strings.slots[i] = copy;
	strings.hashes[i] = h;
	strings.used++;
	return copy;
}

/* The site of two interned strings, made on first sight; NULL when out of memory. */
static struct pyrtr_site *intern_site(const char *cat, const char *name)
{
	uint64_t h = hash_pair(cat, name);
	size_t i = h & sites.mask;

	for (; sites.mask != 0 && sites.slots[i] != NULL; i = (i + 1) & sites.mask) {
		struct pyrtr_site *e = sites.slots[i];
		if (e->site.cat == cat && e->site.name == name)
			return e;
	}
	if (table_reserve(&sites) != 0)
		return NULL;
	struct pyrtr_site *site = arena_alloc(sizeof(*site));
	if (site == NULL)
		return NULL;
	site->site.cat = cat;
	site->site.name = name;
	site->decision = 0;
	for (i = h & sites.mask; sites.slots[i] != NULL; i = (i + 1) & sites.mask)
		;
	sites.slots[i] = site;
	sites.hashes[i] = h;
	sites.used++;
	return site;
}

/* ------------------------------------------------------------------------- */
/* The caches in front, keyed by the str objects                             */

#define CACHE_LOG2 9

struct str_slot {
	PyObject *obj; /* a reference we hold, or NULL */
	const char *str;
};

struct site_slot {
	PyObject *cat, *name; /* references we hold, or NULL */
	struct pyrtr_site *site;
};

static struct str_slot str_cache[1 << CACHE_LOG2];
static struct site_slot site_cache[1 << CACHE_LOG2];

static size_t slot_of(const void *a, const void *b)
{
	return (size_t)(hash_pair(a, b) >> (64 - CACHE_LOG2));
}

/* Replace a cache reference; the old one is an exact str, whose release runs no
 * Python code. */
static void cache_set(PyObject **ref, PyObject *o)
{
	PyObject *old = *ref;

	Py_INCREF(o);
	*ref = o;
	Py_XDECREF(old);
}

static const char *intern_object(PyObject *s, const char *what)
{
	Py_ssize_t len;

	if (!PyUnicode_Check(s)) {
		PyErr_Format(PyExc_TypeError, "ringtrace: the %s must be a str, not %.100s", what,
			     Py_TYPE(s)->tp_name);
		return NULL;
	}
	const char *utf8 = PyUnicode_AsUTF8AndSize(s, &len);
	if (utf8 == NULL)
		return NULL;
	if (memchr(utf8, '\0', (size_t)len) != NULL) {
		PyErr_Format(PyExc_ValueError, "ringtrace: the %s %R has a NUL character", what, s);
		return NULL;
	}
	const char *copy = intern_bytes(utf8, (size_t)len);
	if (copy == NULL)
		PyErr_NoMemory();
	return copy;
}

const char *pyrtr_intern(PyObject *s, const char *what)
{
	struct str_slot *slot = &str_cache[slot_of(s, NULL)];

	if (slot->obj == s)
		return slot->str;
	const char *copy = intern_object(s, what);
	if (copy != NULL && PyUnicode_CheckExact(s)) {
		cache_set(&slot->obj, s);
		slot->str = copy;
	}
	return copy;
}

struct pyrtr_site *pyrtr_site(PyObject *cat, PyObject *name)
{
	struct site_slot *slot = &site_cache[slot_of(cat, name)];

	if (slot->cat == cat && slot->name == name)
		return slot->site;
	const char *c = pyrtr_intern(cat, "category");
	const char *n = c != NULL ? pyrtr_intern(name, "name") : NULL;
	if (n == NULL)
		return NULL;
	struct pyrtr_site *site = intern_site(c, n);
	if (site == NULL)
		return (struct pyrtr_site *)PyErr_NoMemory();
	if (PyUnicode_CheckExact(cat) && PyUnicode_CheckExact(name)) {
		cache_set(&slot->cat, cat);
		cache_set(&slot->name, name);
		slot->site = site;
	}
	return site;
}

void pyrtr_intern_counts(size_t *nstrings, size_t *nsites, size_t *bytes)
{
	*nstrings = strings.used;
	*nsites = sites.used;
	*bytes = arena_bytes;
}
