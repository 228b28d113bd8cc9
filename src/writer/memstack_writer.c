/* SPDX-License-Identifier: MIT */
/* Memory totals and symbol resolution for the writer. See memstack_writer.h. */
#include "writer/memstack_writer.h"

#include "common/compiler.h"
#include "common/mem.h"
#include <ringtrace.h>

#include <dlfcn.h>
#include <string.h>

struct rtr__mem_entry {
	uint64_t addr;
	uint64_t bytes;
	int64_t device;
	uint64_t used; /* 0: empty; ENTRY_LIVE; ENTRY_EARLY_FREE (bytes holds its time) */
};

enum { ENTRY_LIVE = 1, ENTRY_EARLY_FREE = 2 };

#define SYM_BITS    12
#define SYM_SLOTS   ((size_t)1 << SYM_BITS)
#define SYM_ARENA   ((size_t)1 << 20)
#define MAX_LOAD(n) ((n) / 4 * 3)

struct rtr__sym_slot {
	uint64_t addr;
	uint64_t epoch; /* sym_epoch + 1 when filled: a zeroed slot never matches */
	uint32_t off;	/* the text in sym_arena */
	uint32_t len;
};

void rtr__memstack_init(struct rtr__memstack *m)
{
	memset(m, 0, sizeof(*m));
}

void rtr__memstack_destroy(struct rtr__memstack *m)
{
	rtr__mem_unmap(m->slots, m->nslots * sizeof(*m->slots));
	rtr__mem_unmap(m->syms, SYM_SLOTS * sizeof(*m->syms));
	rtr__mem_unmap(m->sym_arena, SYM_ARENA);
	rtr__memstack_init(m);
}

/* The murmur3 finalizer over the address and the device: allocators hand out
 * addresses with equal low bits, which must not land in neighbouring slots. */
static uint64_t mix(int64_t device, uint64_t addr)
{
	uint64_t x = addr ^ ((uint64_t)device * 0x9e3779b97f4a7c15ull);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ------------------------------------------------------------------------- */
/* Devices                                                                    */

/* The device's total, or NULL when RTR_MEMTAB_MAX_DEVICES others were seen first. */
static struct rtr__mem_device *device_of(struct rtr__memstack *m, int64_t device, int add)
{
	size_t mask = RTR_MEMTAB_MAX_DEVICES - 1;

	for (size_t i = (size_t)mix(device, 0) & mask, k = 0; k <= mask; i = (i + 1) & mask, k++) {
		struct rtr__mem_device *d = &m->devices[i];
		if (d->used && d->device == device)
			return d;
		if (!d->used) {
			if (!add)
				return NULL;
			d->used = 1;
			d->device = device;
			m->ndevices++;
			return d;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------------- */
/* Live allocations                                                           */

static struct rtr__mem_entry *find(const struct rtr__memstack *m, int64_t device, uint64_t addr)
{
	size_t mask = m->nslots - 1;

	for (size_t i = (size_t)mix(device, addr) & mask;; i = (i + 1) & mask) {
		struct rtr__mem_entry *e = &m->slots[i];
		if (!e->used || (e->addr == addr && e->device == device))
			return e;
	}
}

/* Double the table (or make its first mapping). 0, or -1 at the cap or when no
 * memory is left: the old table then stays as it was. */
static int grow(struct rtr__memstack *m)
{
	size_t n = m->nslots == 0 ? RTR_MEMTAB_MIN_SLOTS : m->nslots * 2;

	if (n > RTR_MEMTAB_MAX_SLOTS)
		return -1;
	struct rtr__mem_entry *slots = rtr__mem_map(n * sizeof(*slots));
	if (slots == NULL)
		return -1;
	struct rtr__mem_entry *old = m->slots;
	size_t old_n = m->nslots;
	m->slots = slots;
	m->nslots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].used)
			*find(m, old[i].device, old[i].addr) = old[i];
	rtr__mem_unmap(old, old_n * sizeof(*old));
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The slot for (device, addr), the table grown for one more entry if need be; NULL
 * when it cannot grow. */
static struct rtr__mem_entry *slot_for(struct rtr__memstack *m, int64_t device, uint64_t addr)
{
	if (m->count + 1 > MAX_LOAD(m->nslots) && grow(m) != 0)
		return NULL;
	return find(m, device, addr);
}

static void remove_at(struct rtr__memstack *m, size_t i);

uint64_t rtr__memstack_alloc(struct rtr__memstack *m, int64_t device, uint64_t addr, uint64_t bytes,
			     uint64_t ts)
{
	struct rtr__mem_device *d = device_of(m, device, 1);

	if (RTR_UNLIKELY(d == NULL)) {
		m->untracked++;
		return 0; /* a device beyond the cap has no total */
	}
	struct rtr__mem_entry *e = m->nslots != 0 ? find(m, device, addr) : NULL;
	if (e != NULL && e->used == ENTRY_EARLY_FREE && ts <= e->bytes) {
		/* freed already, later than this: in use until then */
		remove_at(m, (size_t)(e - m->slots));
		return sat_add(d->in_use, bytes);
	}
	if (e != NULL && e->used == ENTRY_LIVE) {
		/* the same address again: its free was not seen, so the new size replaces it */
		d->in_use -= e->bytes < d->in_use ? e->bytes : d->in_use;
		e->bytes = bytes;
		d->in_use = sat_add(d->in_use, bytes);
		return d->in_use;
	}
	if (e == NULL || !e->used) { /* else an older early free: its slot is reused */
		e = slot_for(m, device, addr);
		if (e == NULL) {
			m->untracked++; /* full: left out of the total, its free counts 0 */
			return d->in_use;
		}
		m->count++;
	}
	e->addr = addr;
	e->bytes = bytes;
	e->device = device;
	e->used = ENTRY_LIVE;
	d->in_use = sat_add(d->in_use, bytes);
	return d->in_use;
}

/* Keep the free of an unknown address at ts, evicting the oldest kept one when
 * RTR_MEMTAB_EARLY are. */
static void keep_early_free(struct rtr__memstack *m, int64_t device, uint64_t addr, uint64_t ts)
{
	struct rtr__mem_early *slot = &m->early[m->early_next];

	if (m->early_count == RTR_MEMTAB_EARLY) {
		struct rtr__mem_entry *old = find(m, slot->device, slot->addr);
		if (old->used == ENTRY_EARLY_FREE && old->bytes == slot->ts)
			remove_at(m, (size_t)(old - m->slots));
		m->early_count--;
	}
	struct rtr__mem_entry *e = slot_for(m, device, addr);
	if (e == NULL)
		return; /* no room: the allocation, if it comes, stays counted */
	if (!e->used)
		m->count++;
	*e = (struct rtr__mem_entry){
		.addr = addr, .bytes = ts, .device = device, .used = ENTRY_EARLY_FREE};
	*slot = (struct rtr__mem_early){device, addr, ts};
	m->early_next = (m->early_next + 1) % RTR_MEMTAB_EARLY;
	m->early_count++;
}

/* Empty slot i, moving later entries of its probe run back so that lookups never
 * stop early at the hole (Knuth's algorithm R). */
static void remove_at(struct rtr__memstack *m, size_t i)
{
	size_t mask = m->nslots - 1;

	for (size_t j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		size_t home = (size_t)mix(m->slots[j].device, m->slots[j].addr) & mask;
		/* j's entry may move to i when its home is not cyclically in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	m->count--;
}

uint64_t rtr__memstack_free(struct rtr__memstack *m, int64_t device, uint64_t addr, uint64_t *bytes,
			    uint64_t ts)
{
	struct rtr__mem_device *d = device_of(m, device, 1);

	*bytes = 0;
	if (d == NULL)
		return 0;
	struct rtr__mem_entry *e = m->nslots != 0 ? find(m, device, addr) : NULL;
	if (e == NULL || e->used != ENTRY_LIVE) {
		keep_early_free(m, device, addr, ts); /* unknown address: 0 bytes */
		return d->in_use;
	}
	*bytes = e->bytes;
	d->in_use -= e->bytes < d->in_use ? e->bytes : d->in_use;
	remove_at(m, (size_t)(e - m->slots));
	return d->in_use;
}

/* ------------------------------------------------------------------------- */
/* Symbols                                                                    */

char *rtr__memstack_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	*p++ = '0';
	*p++ = 'x';
	while (shift > 0 && ((v >> shift) & 0xf) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	return p;
}

/* Bytes of s to keep within max: cut before a UTF-8 continuation byte, never inside a
 * character (an invalid sequence is the format's to replace). */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t len = strnlen(s, max + 1);

	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* Frames, function entries and source lines share the cache: an entry's key has the
 * top bit set, a source line's the next (no user-space code address has either). */
#define SYM_FUNCTION (UINT64_C(1) << 63)
#define SYM_SRCLINE  (UINT64_C(1) << 62)
#define MODE_SRCLINE 2

/* The source-line resolver a library registered (rtr__srcline_set() or
 * rtr__srcline_offer()), or NULL. */
static size_t (*srcliner)(uint64_t addr, char *out, size_t cap);
/* 1 once rtr__srcline_set() registered one: functions' slices get lines too. */
static int function_lines;

RTR_API const char rtr__arg_key_code[] = "code";

/* The symbolizer a library registered (rtr__symbolizer_set()), or NULL: dladdr. */
static size_t (*symbolizer)(uint64_t addr, char *out, size_t cap, uint64_t *start);

RTR_API void rtr__symbolizer_set(size_t (*fn)(uint64_t addr, char *out, size_t cap,
					      uint64_t *start))
{
	/* R0: pairs with A0 in resolve(); what fn reads was set up before it is seen */
	__atomic_store_n(&symbolizer, fn, __ATOMIC_RELEASE);
}

/*
 * "symbol+0xoff", "module+0xoff" or "0xaddr" into out (RTR_SYM_MAX_TEXT bytes); with
 * `exact`, a function's entry: "symbol" alone when addr is where it starts.
 */
static size_t resolve(char *out, uint64_t addr, int exact)
{
	if (exact == MODE_SRCLINE) {
		/* A1: pairs with R1 in rtr__srcline_set(), R1' in rtr__srcline_offer() */
		size_t (*sl)(uint64_t, char *, size_t) =
			__atomic_load_n(&srcliner, __ATOMIC_ACQUIRE);
		size_t n = sl != NULL ? sl(addr, out, RTR_SYM_MAX_TEXT) : 0;
		return n <= RTR_SYM_MAX_TEXT ? n : 0; /* the format mends a cut character */
	}
	Dl_info info;
	const char *base = NULL;
	uint64_t from = 0;
	char name[RTR_SYM_MAX_TEXT];
	/* A0: pairs with R0 in rtr__symbolizer_set() */
	size_t (*fn)(uint64_t, char *, size_t, uint64_t *) =
		__atomic_load_n(&symbolizer, __ATOMIC_ACQUIRE);

	if (fn != NULL) {
		size_t n = fn(addr, name, sizeof(name) - 1, &from);
		if (n > 0 && n < sizeof(name) && from <= addr) {
			name[n] = '\0';
			base = name;
		}
	}
	/* The names come from the loaded objects as they are now: an object unloaded
	 * since the sample, or another loaded in its place, resolves wrongly or not. */
	if (base == NULL && dladdr((const void *)(uintptr_t)addr, &info) != 0) {
		if (info.dli_sname != NULL && info.dli_sname[0] != '\0') {
			base = info.dli_sname;
			from = (uintptr_t)info.dli_saddr;
		} else if (info.dli_fname != NULL && info.dli_fname[0] != '\0') {
			const char *slash = strrchr(info.dli_fname, '/');
			base = slash != NULL && slash[1] != '\0' ? slash + 1 : info.dli_fname;
			from = (uintptr_t)info.dli_fbase;
		}
	}
	if (base == NULL || from > addr)
		return (size_t)(rtr__memstack_hex(out, addr) - out);
	if (exact && from == addr) {
		size_t keep = utf8_cut(base, RTR_SYM_MAX_TEXT);
		memcpy(out, base, keep);
		return keep;
	}

	char off[24];
	off[0] = '+';
	size_t off_len = (size_t)(rtr__memstack_hex(off + 1, addr - from) - off);
	size_t keep = utf8_cut(base, RTR_SYM_MAX_TEXT - off_len);
	memcpy(out, base, keep);
	memcpy(out + keep, off, off_len);
	return keep + off_len;
}

RTR_API void rtr__srcline_set(size_t (*fn)(uint64_t addr, char *out, size_t cap))
{
	/* R1: pairs with A1 in rtr__memstack_code_srcline() and resolve() */
	__atomic_store_n(&srcliner, fn, __ATOMIC_RELEASE);
	/* R2: pairs with A2 in rtr__memstack_srcline(); after R1, so fn is seen with it */
	__atomic_store_n(&function_lines, fn != NULL, __ATOMIC_RELEASE);
}

RTR_API bool rtr__srcline_offer(size_t (*fn)(uint64_t addr, char *out, size_t cap))
{
	size_t (*none)(uint64_t, char *, size_t) = NULL;

	/* R1': pairs with A1 as R1 does; a registered resolver stays */
	return __atomic_compare_exchange_n(&srcliner, &none, fn, false, __ATOMIC_RELEASE,
					   __ATOMIC_RELAXED);
}

static const char *symbol(struct rtr__memstack *m, uint64_t addr, int exact, size_t *len);

const char *rtr__memstack_srcline(struct rtr__memstack *m, uint64_t addr, size_t *len)
{
	/* A2: pairs with R2 in rtr__srcline_set() */
	if (!__atomic_load_n(&function_lines, __ATOMIC_ACQUIRE)) {
		*len = 0;
		return "";
	}
	return symbol(m, addr, MODE_SRCLINE, len);
}

const char *rtr__memstack_code_srcline(struct rtr__memstack *m, uint64_t ra, size_t *len)
{
	/* A1: pairs with R1 in rtr__srcline_set() and R1' in rtr__srcline_offer() */
	if (ra == 0 || __atomic_load_n(&srcliner, __ATOMIC_ACQUIRE) == NULL) {
		*len = 0;
		return "";
	}
	return symbol(m, ra - 1, MODE_SRCLINE, len); /* the call's last byte: its line */
}

const char *rtr__memstack_symbol(struct rtr__memstack *m, uint64_t addr, size_t *len)
{
	return symbol(m, addr, 0, len);
}

const char *rtr__memstack_function(struct rtr__memstack *m, uint64_t addr, size_t *len)
{
	return symbol(m, addr, 1, len);
}

static const char *symbol(struct rtr__memstack *m, uint64_t addr, int exact, size_t *len)
{
	static char fallback[RTR_SYM_MAX_TEXT]; /* writer only: when nothing could be mapped */

	if (RTR_UNLIKELY(m->syms == NULL)) {
		m->syms = rtr__mem_map(SYM_SLOTS * sizeof(*m->syms));
		m->sym_arena = rtr__mem_map(SYM_ARENA);
		if (m->syms == NULL || m->sym_arena == NULL) {
			rtr__mem_unmap(m->syms, SYM_SLOTS * sizeof(*m->syms));
			rtr__mem_unmap(m->sym_arena, SYM_ARENA);
			m->syms = NULL;
			m->sym_arena = NULL;
		}
	}

	if (RTR_UNLIKELY(m->syms == NULL)) {
		*len = resolve(fallback, addr, exact);
		return fallback;
	}
	uint64_t key = exact == MODE_SRCLINE ? addr | SYM_SRCLINE
		       : exact		     ? addr | SYM_FUNCTION
					     : addr;

	/* Fibonacci hashing of the address: neighbouring return addresses spread out */
	struct rtr__sym_slot *s = &m->syms[(key * 0x9e3779b97f4a7c15ull) >> (64 - SYM_BITS)];
	if (RTR_LIKELY(s->epoch == m->sym_epoch + 1 && s->addr == key)) {
		*len = s->len;
		return m->sym_arena + s->off;
	}
	if (SYM_ARENA - m->sym_used < RTR_SYM_MAX_TEXT) {
		m->sym_epoch++; /* every slot filled before now misses */
		m->sym_used = 0;
	}
	char *at = m->sym_arena + m->sym_used;
	s->addr = key;
	s->epoch = m->sym_epoch + 1;
	s->off = (uint32_t)m->sym_used;
	s->len = (uint32_t)resolve(at, addr, exact);
	m->sym_used += s->len;
	*len = s->len;
	return at;
}
