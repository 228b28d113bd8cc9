/* SPDX-License-Identifier: MIT */
/*
 * Per-thread SPSC rings and the registry of rings.
 *
 * Each producer thread owns one ring, made on its first event (rtr__ring_attach, the
 * only producer path that locks or allocates) and registered in a global list. The
 * writer is the single consumer of every ring.
 *
 * Indices. head (next record to write) is stored only by the producer; tail (next
 * record to read) only by the writer. Both run freely as uint32 and are masked on
 * use, so head - tail is the fill even across wrap-around. Each side keeps a private
 * view of the other's index and re-reads the shared one only when its view says the
 * ring is too full (producer) or empty (writer), so in the steady state the two cores
 * touch each other's cache line once per batch, not once per event.
 *
 * Memory order, the four edges:
 *   R1 producer: records written, then head stored with release   (emit.h)
 *   A1 writer:   head loaded with acquire, then records read        (rtr__ring_readable)
 *   R3 writer:   records read, then tail stored with release        (rtr__ring_consume)
 *   A3 producer: tail loaded with acquire, then slots reused        (rtr__ring_make_room)
 * plus R2/A2 for `closed` (thread exit), R8/A8 for `busy` (a stop, below), and a
 * seq_cst fence pair with the doorbell's sleep flag so that a wake-up is never lost
 * (rtr__ring_make_room / rtr__rings_sleep_prepare).
 *
 * Cache lines. The producer's line holds head, its view of tail and its copies of
 * mask and slots; the consumer's line holds tail and the writer's own copies of
 * mask and slots (rmask, rslots), so that per record the writer reads its own line
 * and the slots, never the line the producer keeps writing (as ck_ring does).
 *
 * Events. One event is one header record plus ceil(ext / 32) continuation records,
 * published together, so an event is always whole and contiguous modulo wrap-around.
 * Continuation bytes may wrap from the last slot to slot 0; the producer's copy
 * (record/encode.h) and rtr__ring_ext() split there.
 *
 * Full ring. In drop mode the event is dropped and counted in the ring (producer-only
 * relaxed counters the writer sums); in block mode the producer waits for the writer,
 * spinning briefly, then yielding, then sleeping in short steps. When the published
 * fill passes the high-water mark (half the ring) the producer wakes the writer
 * early, once: its fast-path limit then rises to the whole ring, and falls back to
 * the mark when a later look at tail finds the ring drained below it. Producer and
 * writer test the same predicate on the same state (rtr__ring_over_mark(): published
 * head, tail), with the seq_cst fence pair between the test and the sleep flag, so a
 * ring over the mark either keeps the writer from sleeping or wakes it: the wake-up
 * is never lost. An event that carries the fill over the mark, not yet published,
 * leaves the limit at the mark, so the next event tests again with it published.
 *
 * The doorbell. The wake-up goes through a futex word that this module owns, not a
 * call into the writer: the consumer sleeps on it (rtr__rings_sleep_prepare(), test
 * for work, rtr__rings_sleep()), and producers past the mark ring it when its sleep
 * flag says the consumer sleeps. The consumer's own wakers (a flush, a stop) ring it
 * unconditionally with rtr__rings_wake(). Nothing in this module knows the writer.
 *
 * Reentrancy. From reserve to publish the producer sets `busy` in its ring. A signal
 * handler that records on the same thread inside that window finds it set and its
 * event is dropped and counted (dropped_reentrant); one that runs outside it records
 * normally, since it runs whole before the interrupted code goes on. The slow path
 * leaves the window around its system calls (the wake-up, the waits of block mode),
 * where a signal is most likely delivered: nothing of the event is written yet, and
 * head is read again after them. A handler on a
 * thread that is registering its ring, or holds the registry lock, is dropped the
 * same way (rtr__rings_reentrant_unattached()).
 *
 * Stop. rtr_stop() turns the recorder off (R0); the writer then makes a process-wide
 * memory barrier (membarrier) and waits until no ring is busy (A8). A producer sets
 * busy, then reads the recorder's state once more (emit.h): either its busy store
 * came before the barrier, and the writer waits for its publish, or its state load
 * came after, and it sees the recorder off and records nothing. After that wait no
 * ring of the session changes, so the writer's final totals are exact:
 * recorded = written + dropped. Without membarrier (seccomp), the wait is a grace
 * period of a few milliseconds, and the totals are exact unless a producer was
 * preempted for longer between its state test and its reserve.
 *
 * Thread exit. A pthread key destructor marks the ring closed; the writer drains what
 * is left and frees it. A thread that records after its destructor ran (from another
 * key's destructor) records nothing.
 */
#ifndef RTR_RING_H
#define RTR_RING_H

#include "record/record.h"
#include <ringtrace.h>
#include <stddef.h>
#include <string.h>

/* Records one event of `ext` continuation bytes takes (the record format's count). */
static inline uint32_t rtr__ring_event_records(uint32_t ext)
{
	return rtr__rec_records(ext);
}

/* The calling thread's name from rtr_thread_name(), "" if none; a new ring takes it. */
extern __thread char rtr__tls_thread_name[64];
/* rtr_thread_sort_index() + 1 of the calling thread, 0 if none; a new ring takes it. */
extern __thread int rtr__tls_thread_sort;

/* Session parameters for rings made from now on; set by rtr_start() before it
 * publishes rtr__active. on_full is RTR_ON_FULL_*. */
void rtr__rings_configure(size_t ring_bytes, int on_full);

/* Both sides: whether the published fill (head - tail) is over the high-water mark. */
static inline bool rtr__ring_over_mark(const struct rtr__ring *r, uint32_t published_fill)
{
	return published_fill > r->hwm;
}

/* Writer, at a stop: whether the owner is inside an event call. A8. */
static inline bool rtr__ring_busy(struct rtr__ring *r)
{
	/* A8: pairs with R8 in rtr__publish(); its head and counters are visible */
	return __atomic_load_n(&r->busy, __ATOMIC_ACQUIRE) != 0;
}

/* Writer: the record at index pos. */
static inline const struct rtr__rec *rtr__ring_rec(const struct rtr__ring *r, uint32_t pos)
{
	return &r->rslots[pos & r->rmask];
}

/* Writer: records published and not yet consumed. A1. */
static inline uint32_t rtr__ring_readable(struct rtr__ring *r)
{
	/* A1: pairs with R1 in rtr__publish(); records below head are fully written */
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	return head - r->tail; /* tail: own index, only the writer stores it */
}

/* Writer: the `len` continuation bytes of the event at record index `pos`: in place
 * when they are contiguous, else copied whole into `scratch` (they wrap). */
static inline const char *rtr__ring_ext(const struct rtr__ring *r, uint32_t pos, size_t len,
					char *scratch)
{
	size_t ring_bytes = (size_t)r->capacity * RTR_REC_BYTES; /* a power of two */
	size_t at = (size_t)((pos + 1) & r->rmask) * RTR_REC_BYTES;
	const char *base = (const char *)r->rslots;

	if (__builtin_expect(at + len <= ring_bytes, 1))
		return base + at;
	memcpy(scratch, base + at, ring_bytes - at);
	memcpy(scratch + (ring_bytes - at), base, len - (ring_bytes - at));
	return scratch;
}

/* Writer: hand `n` records back to the producer. R3. */
static inline void rtr__ring_consume(struct rtr__ring *r, uint32_t n)
{
	/* R3: pairs with A3 in rtr__ring_make_room(); we are done reading these slots */
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
}

/* Writer: the owning thread has exited (A2); read before the last rtr__ring_readable(). */
static inline int rtr__ring_closed(struct rtr__ring *r)
{
	/* A2: pairs with R2 at thread exit; every record was published before closed */
	return __atomic_load_n(&r->closed, __ATOMIC_ACQUIRE);
}

/*
 * Writer: the registered rings, copied for one walk over them. Rings stay valid until
 * the writer itself frees them with rtr__rings_free(). Every walk takes its own list:
 * walks nest (a drain pass fills a chunk, whose provisional close walks every ring's
 * held slices), and an inner walk that rewrote a shared array under the outer one
 * handed it a ring already freed. Up to RTR__RING_LIST_INLINE rings need no mapping.
 */
#define RTR__RING_LIST_INLINE 64
struct rtr__ring_list {
	struct rtr__ring **v; /* the rings, newest first */
	size_t n;
	size_t mapped; /* bytes of v from rtr__mem_map(), or 0 when v is inline */
	struct rtr__ring *inline_v[RTR__RING_LIST_INLINE];
};

/* Fill l (takes the registry lock briefly); return l->n. Short of memory for a
 * larger list, it holds the newest rings: the rest wait for the next walk. */
size_t rtr__rings_list(struct rtr__ring_list *l);
/* Give back what rtr__rings_list() mapped. */
void rtr__rings_list_done(struct rtr__ring_list *l);

/* Writer (or rtr_start/rtr_stop with no writer running): unlink and unmap a closed,
 * drained ring. */
void rtr__rings_free(struct rtr__ring *r);

/* Number of rings registered since the process started (monotonic). */
uint64_t rtr__rings_created(void);

/* Events dropped from signal handlers on threads without a usable ring (see the top). */
uint64_t rtr__rings_reentrant_unattached(void);

/* rtr_start(): register for the stop's barrier. */
void rtr__rings_barrier_init(void);

/* Writer, at a stop, after the state word went to 0: the stop's wait (see the top). A
 * process-wide barrier (a grace period where membarrier is refused), then until none
 * of the n rings is busy, at most 1 s, or until *give_up is set. From then on no
 * producer of the session publishes. `skip`: a ring not waited for (NULL: none), the
 * one of a thread whose signal handler is finishing the file: it may have been
 * interrupted inside an event call, which cannot go on before the handler returns. */
void rtr__rings_quiesce(struct rtr__ring *const *rings, size_t n, const uint32_t *give_up,
			const struct rtr__ring *skip);

/*
 * The doorbell (see the top). Consumer, to sleep: seq = rtr__rings_sleep_prepare()
 * sets the sleep flag and fences; then, only if a test for work (the rings' fill
 * against the mark among it) finds none, rtr__rings_sleep(seq, ns) waits until the
 * doorbell rings or ns pass; then rtr__rings_sleep_done(). A ring after the prepare
 * makes the sleep return at once.
 */
uint32_t rtr__rings_sleep_prepare(void);
void rtr__rings_sleep(uint32_t seq, uint64_t ns);
void rtr__rings_sleep_done(void);
/* Any thread: wake the consumer now, asleep or about to be (a flush, a stop). R4. */
void rtr__rings_wake(void);

/* After fork, in the child: rings of threads that do not exist there are freed. */
void rtr__rings_after_fork_child(void);
/* Around fork() in the parent: hold the registry lock, so the child's copy is whole. */
void rtr__rings_fork_prepare(void);
void rtr__rings_fork_parent(void);

#endif
