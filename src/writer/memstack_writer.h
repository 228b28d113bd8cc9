/* SPDX-License-Identifier: MIT */
/*
 * The writer's state for memory events and stack samples. Do not include outside
 * src/writer/ and the formats.
 *
 * Memory. A free carries only its address, so the writer keeps every live
 * allocation in a table keyed by (device, address) and a bytes-in-use total per
 * device, from which each event's counter line is written. The table is open
 * addressing (linear probing, deletion by backward shift, so no tombstones pile up
 * under churn) in memory from rtr__mem_map(), made on the first allocation and grown
 * by doubling into a new mapping up to RTR_MEMTAB_MAX_SLOTS. Bounded: when it is
 * full, or RTR_MEMTAB_MAX_DEVICES devices have been seen, a new allocation is not
 * tracked (counted in `untracked`) and left out of its device's total, and its free
 * later counts 0 bytes like any free of an unknown address: a total never counts
 * bytes it cannot take back, so it never drifts and never goes negative.
 *
 * Stacks. Code addresses are resolved by the symbolizer a library registered with
 * rtr__symbolizer_set() (the instrument library's, from the ELF symbol tables: static
 * functions too), else with dladdr(3), into "symbol+0xoff", else
 * "module+0xoff", else "0xaddr", cut to RTR_SYM_MAX_TEXT bytes on a UTF-8 boundary (the
 * bytes as the object holds them: a format escapes or repairs them as it writes). A
 * direct-mapped cache keeps the text by address in its own arena (emptied whole when
 * full), so a repeated stack costs one lookup per frame.
 *
 * Both are reset at each session's start (rtr__memstack_init()). Writer thread only.
 */
#ifndef RTR_WRITER_MEMSTACK_H
#define RTR_WRITER_MEMSTACK_H

#include <stddef.h>
#include <stdint.h>

#define RTR_MEMTAB_MIN_SLOTS   ((size_t)1 << 10)
#define RTR_MEMTAB_MAX_SLOTS   ((size_t)1 << 24) /* 16 Mi entries, 384 MiB at the most */
#define RTR_MEMTAB_MAX_DEVICES 256
/* Longest resolved frame; JSON-escaped, it takes at most 6 times that. */
#define RTR_SYM_MAX_TEXT    256
#define RTR_SYM_MAX_ESCAPED (6 * RTR_SYM_MAX_TEXT)

struct rtr__mem_entry;
struct rtr__sym_slot;

struct rtr__mem_device {
	int64_t device;
	uint64_t in_use; /* bytes of the tracked live allocations */
	uint32_t used;
};

/* How many frees of unknown addresses are kept, in case their allocation, recorded
 * earlier on another thread, is drained after them (see rtr__memstack_free()). */
#define RTR_MEMTAB_EARLY 1024

struct rtr__mem_early {
	int64_t device;
	uint64_t addr, ts;
};

struct rtr__memstack {
	/* Live allocations and early frees: nslots (0 until the first one, else a power
	 * of two), count of both. */
	struct rtr__mem_entry *slots;
	size_t nslots;
	size_t count;
	/* The early frees in the table, oldest first from early_next, to evict them. */
	struct rtr__mem_early early[RTR_MEMTAB_EARLY];
	uint32_t early_next, early_count;
	uint64_t untracked; /* allocations the table had no room for, this session */
	uint32_t ndevices;
	struct rtr__mem_device devices[RTR_MEMTAB_MAX_DEVICES]; /* open addressing */

	/* Resolved frames: a direct-mapped cache and the arena of their texts. */
	struct rtr__sym_slot *syms;
	char *sym_arena;
	size_t sym_used;
	uint64_t sym_epoch; /* bumped when the arena is emptied; slots of older ones miss */
};

/* Start a session's state: empty, nothing mapped yet. */
void rtr__memstack_init(struct rtr__memstack *m);

/* Unmap everything; the state is then as after rtr__memstack_init(). */
void rtr__memstack_destroy(struct rtr__memstack *m);

/* An allocation of bytes at addr on device at time ts (the record's). Returns the
 * device's bytes in use after it. An address already live on the device is replaced
 * (its free was not seen). One whose free was drained first (an early free, at a time
 * after ts) is in use from ts to that free: counted in the value returned, and not
 * kept. */
uint64_t rtr__memstack_alloc(struct rtr__memstack *m, int64_t device, uint64_t addr, uint64_t bytes,
			     uint64_t ts);

/* A free of addr on device at time ts: *bytes gets the size it had (0 when unknown).
 * Returns the device's bytes in use after it. The writer drains one thread's ring
 * after another, so a free recorded on one thread just after the allocation on
 * another may come first: an unknown address is kept as an early free, which the
 * allocation cancels (the last RTR_MEMTAB_EARLY are kept). */
uint64_t rtr__memstack_free(struct rtr__memstack *m, int64_t device, uint64_t addr, uint64_t *bytes,
			    uint64_t ts);

/* The text of the code address addr, *len bytes (at most RTR_SYM_MAX_TEXT), not
 * escaped, maybe not valid UTF-8. Valid until the next call. */
const char *rtr__memstack_symbol(struct rtr__memstack *m, uint64_t addr, size_t *len);

/* Writes "0x" and the lowercase hex digits of v, no leading zeros. At most 18 bytes. */
char *rtr__memstack_hex(char *p, uint64_t v);

/* The name of the function that starts at addr (a slice of the instrument
 * library, RTR__F_CODE_ADDR), as rtr__memstack_symbol() but without "+0x0"; cached
 * apart from frames. Valid until the next call. */
const char *rtr__memstack_function(struct rtr__memstack *m, uint64_t addr, size_t *len);

/* The "file:line" of the code at addr from the resolver registered with
 * rtr__srcline_set(), cached like names; *len 0 when there is none. */
const char *rtr__memstack_srcline(struct rtr__memstack *m, uint64_t addr, size_t *len);

/* The "file:line" of the call that returns to ra (a code argument's value,
 * rtr__arg_key_code), from the resolver registered with rtr__srcline_set() or
 * rtr__srcline_offer(), cached like names; *len 0 when there is none. */
const char *rtr__memstack_code_srcline(struct rtr__memstack *m, uint64_t ra, size_t *len);

#endif
