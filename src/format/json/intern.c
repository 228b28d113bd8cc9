/* SPDX-License-Identifier: MIT */
/* The intern cache. See intern.h. Open addressing with linear probing. */
#include "format/json/intern.h"

#include "common/compiler.h"
#include "common/jsontext.h"
#include "common/mem.h"

#include <errno.h>
#include <string.h>

enum { SLOT_EMPTY = 0, SLOT_STATIC = 1, SLOT_CONTENT = 2 };

struct rtr__intern_slot {
	uint64_t key;	  /* the pointer (static) or the content hash */
	uint32_t off;	  /* arena offset: raw bytes (content only), then escaped */
	uint32_t raw_len; /* content only */
	uint32_t esc_len;
	uint32_t kind;
};

int rtr__intern_init(struct rtr__intern *in, size_t arena_bytes, size_t nslots)
{
	memset(in, 0, sizeof(*in));
	if (arena_bytes < 2 * (RTR_INTERN_MAX_ESCAPED + RTR_INTERN_MAX_INPUT) || nslots < 4 ||
	    (nslots & (nslots - 1)) != 0 || arena_bytes > UINT32_MAX)
		return -EINVAL;
	in->slots = rtr__mem_map(nslots * sizeof(*in->slots));
	in->arena = rtr__mem_map(arena_bytes);
	if (in->slots == NULL || in->arena == NULL) {
		rtr__intern_destroy(in);
		return -ENOMEM;
	}
	in->nslots = nslots;
	in->arena_cap = arena_bytes;
	return 0;
}

void rtr__intern_destroy(struct rtr__intern *in)
{
	rtr__mem_unmap(in->slots, in->nslots * sizeof(*in->slots));
	rtr__mem_unmap(in->arena, in->arena_cap);
	memset(in, 0, sizeof(*in));
}

static void intern_reset(struct rtr__intern *in)
{
	memset(in->slots, 0, in->nslots * sizeof(*in->slots));
	in->count = 0;
	in->arena_used = 0;
	in->resets++;
}

/* The murmur3 finalizer: invertible, so distinct pointers get distinct keys. */
static uint64_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over 8-byte words: names are short, and this runs once per copied name. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

/* Make room for one more entry of up to `need` arena bytes, resetting when full. */
static void ensure_room(struct rtr__intern *in, size_t need)
{
	if (in->arena_cap - in->arena_used < need || in->count + 1 > in->nslots / 2)
		intern_reset(in);
}

static struct rtr__intern_slot *find(struct rtr__intern *in, uint64_t key, uint32_t kind,
				     const char *raw, size_t raw_len)
{
	size_t mask = in->nslots - 1;

	for (size_t i = key & mask;; i = (i + 1) & mask) {
		struct rtr__intern_slot *s = &in->slots[i];
		if (s->kind == SLOT_EMPTY)
			return s;
		if (s->key == key && s->kind == kind &&
		    (kind == SLOT_STATIC ||
		     (s->raw_len == raw_len && memcmp(in->arena + s->off, raw, raw_len) == 0)))
			return s;
	}
}

static struct rtr__istr result(const struct rtr__intern *in, const struct rtr__intern_slot *s)
{
	return (struct rtr__istr){in->arena + s->off + s->raw_len, s->esc_len};
}

struct rtr__istr rtr__intern_static(struct rtr__intern *in, const char *str)
{
	/* hash_ptr() is a bijection, so the key identifies the pointer exactly */
	uint64_t key = hash_ptr(str);
	struct rtr__intern_slot *s = find(in, key, SLOT_STATIC, NULL, 0);

	if (RTR_LIKELY(s->kind != SLOT_EMPTY)) {
		in->hits++;
		return result(in, s);
	}
	in->misses++;
	size_t len = strnlen(str, RTR_INTERN_MAX_INPUT);
	ensure_room(in, RTR_JSONTEXT_ESCAPE_BOUND(len));
	s = find(in, key, SLOT_STATIC, NULL, 0);
	char *end = rtr__jsontext_escape(in->arena + in->arena_used, str, len);
	s->key = key;
	s->kind = SLOT_STATIC;
	s->off = (uint32_t)in->arena_used;
	s->raw_len = 0;
	s->esc_len = (uint32_t)(end - (in->arena + in->arena_used));
	in->arena_used += s->esc_len;
	in->count++;
	return result(in, s);
}

struct rtr__istr rtr__intern_bytes(struct rtr__intern *in, const char *str, size_t len)
{
	uint64_t key = hash_bytes(str, len);
	struct rtr__intern_slot *s = find(in, key, SLOT_CONTENT, str, len);

	if (RTR_LIKELY(s->kind != SLOT_EMPTY)) {
		in->hits++;
		return result(in, s);
	}
	in->misses++;
	ensure_room(in, len + RTR_JSONTEXT_ESCAPE_BOUND(len));
	s = find(in, key, SLOT_CONTENT, str, len);
	char *raw = in->arena + in->arena_used;
	memcpy(raw, str, len);
	char *end = rtr__jsontext_escape(raw + len, str, len);
	s->key = key;
	s->kind = SLOT_CONTENT;
	s->off = (uint32_t)in->arena_used;
	s->raw_len = (uint32_t)len;
	s->esc_len = (uint32_t)(end - (raw + len));
	in->arena_used += len + s->esc_len;
	in->count++;
	return result(in, s);
}
