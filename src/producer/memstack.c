/* SPDX-License-Identifier: MIT */
/*
 * Memory events and stack samples, the producer's side. The writer's side (the
 * table of live allocations, the per-device totals, symbol resolution) is in
 * src/writer/memstack_writer.c; nothing here knows about it.
 *
 * Records (see ringtrace/emit.h):
 *
 *	MEM_ALLOC	a address, b bytes; one continuation word: the device (int64)
 *	MEM_FREE	a address, b 0; one continuation word: the device
 *	STACK		a name, b category; ext / 8 code addresses, innermost first
 *
 * Held to the hot path's rules: no lock, no allocation, no formatting, no system
 * call. The one exception is rtr_stack_sample_here(), whose backtrace(3) walks the
 * unwind tables (documented in ringtrace.h); its one-time setup is done at
 * rtr_start() by rtr__stack_warm().
 *
 * Memory events are in the category "memory", so the category filter can leave them
 * out ("-memory"); a session records both halves of every pair or neither.
 */
#include "producer/memstack.h"

#include "common/compiler.h"
#include "record/record.h"
#include "ring/ring.h"

#include <execinfo.h>
#include <pthread.h>
#include <string.h>

static const char mem_cat[] = "memory";

RTR_API void rtr_mem_alloc(int device, const void *addr, uint64_t bytes)
{
	if (RTR_LIKELY(!rtr__recording_cat(mem_cat)))
		return;
	rtr__emit_word(RTR__K_MEM_ALLOC, 0, rtr__ticks(), (uintptr_t)addr, bytes,
		       (uint64_t)(int64_t)device);
}

RTR_API void rtr_mem_free(int device, const void *addr)
{
	if (RTR_LIKELY(!rtr__recording_cat(mem_cat)))
		return;
	rtr__emit_word(RTR__K_MEM_FREE, 0, rtr__ticks(), (uintptr_t)addr, 0,
		       (uint64_t)(int64_t)device);
}

static void emit_stack(uint64_t ts, const char *cat, const char *name, const void *const *frames,
		       unsigned n)
{
	if (frames == NULL)
		n = 0;
	if (n > RTR_MAX_FRAMES)
		n = RTR_MAX_FRAMES;

	uint32_t ext = n * (uint32_t)sizeof(uint64_t);
	uint32_t nrec = rtr__ring_event_records(ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);
	if (RTR_UNLIKELY(r == NULL))
		return;

	struct rtr__ext_event e = {.kind = RTR__K_STACK, .ts = ts, .cat = cat, .name = name};
	rtr__rec_header(&r->slots[head & r->mask], &e, (uintptr_t)name, 0, ext);
	rtr__rec_put_frames(r->slots, r->mask, head, frames, n);
	rtr__publish(r, head, nrec);
}

RTR_API void rtr_stack_sample(const char *cat, const char *name, const void *const *frames,
			      unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	emit_stack(rtr__ticks(), cat, name, frames, n);
}

/* noinline: a frame of its own, whose return address is the caller's frame. */
RTR_API __attribute__((noinline)) void rtr_stack_sample_here(const char *cat, const char *name)
{
	void *frames[RTR_MAX_FRAMES + 2];

	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	uint64_t ts = rtr__ticks(); /* the moment of the call, not the end of the walk */
	int n = backtrace(frames, RTR_MAX_FRAMES + 2);
	/* The stack starts at the caller. Frames above it are this function's, and under
	 * a sanitizer also its backtrace() interceptor's: find the caller's by its return
	 * address rather than skip a fixed count. */
	void *caller = __builtin_return_address(0);
	int skip = 1;
	for (int i = 0; i < n && i < 4; i++) {
		if (frames[i] == caller) {
			skip = i;
			break;
		}
	}
	if (n > skip)
		emit_stack(ts, cat, name, (const void *const *)(frames + skip),
			   (unsigned)(n - skip));
	else
		emit_stack(ts, cat, name, NULL, 0);
}

static void stack_warm(void)
{
	void *frame;

	backtrace(&frame, 1);
}

void rtr__stack_warm(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* glibc's first backtrace() dlopens libgcc_s (the dynamic loader's lock, malloc,
	 * file I/O). Done here, at rtr_start(), that never happens inside a traced call,
	 * and rtr_stack_sample_here() only walks the stack. */
	pthread_once(&once, stack_warm);
}
