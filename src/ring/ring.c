/* SPDX-License-Identifier: MIT */
/* Rings: creation, the producer's slow paths, thread exit, the registry. See ring.h. */
#include "ring/ring.h"

#include "clock/clock.h"
#include "common/atomic.h"
#include "common/compiler.h"
#include "common/mem.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

RTR_API __thread struct rtr__ring *rtr__tls_ring __attribute__((tls_model("initial-exec")));
/* The name given with rtr_thread_name(), for a ring made later. */
__thread char rtr__tls_thread_name[64];
__thread int rtr__tls_thread_sort;
/* Set when this thread's key destructor ran: it must not make a new ring. */
static __thread int tls_exited;
/* This thread is registering a ring or holds the registry lock: a signal handler's
 * event on it must not try to take the lock again. Own only; fenced for a handler. */
static __thread int tls_in_registry;
/* Events dropped because they came from a signal handler while their thread was in
 * the registry (it has no ring to count them in yet). */
static uint64_t reentrant_unattached; /* relaxed: a count; the writer sums it */

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t ring_key;
static int key_error;

/* The registry: every ring not yet freed, newest first. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rtr__ring *registry_head; /* under registry_lock */
static uint64_t rings_created;		/* under registry_lock */

/* Session parameters, read by producers in the slow paths only. */
static uint32_t ring_records = 1u << 15; /* under registry_lock */
static int on_full_policy;		 /* relaxed: rtr_start() stores it before R0 */

/*
 * The doorbell (ring.h): the futex word the writer sleeps on, and its sleep flag, each
 * read by every producer's slow path; on a line of their own, away from the registry.
 */
static struct {
	uint32_t seq;	   /* futex: bumped to wake the writer */
	uint32_t sleeping; /* the writer is about to sleep or sleeps */
} doorbell __attribute__((aligned(RTR__CACHELINE)));

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

uint32_t rtr__rings_sleep_prepare(void)
{
	/* A4: pairs with R4 in rtr__rings_wake(); a wake after this read changes seq */
	uint32_t seq = rtr_atomic_load_acquire(&doorbell.seq);

	rtr_atomic_store_relaxed(&doorbell.sleeping, 1);
	/* Orders the flag store before the caller reads the rings; pairs with the fence in
	 * rtr__ring_make_room(): either the writer sees its fill or it sees the flag. */
	rtr_atomic_fence_seq_cst();
	return seq;
}

void rtr__rings_sleep(uint32_t seq, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	futex(&doorbell.seq, FUTEX_WAIT_PRIVATE, seq, &ts);
}

void rtr__rings_sleep_done(void)
{
	/* relaxed: only a hint to producers; a stale 1 costs one needless wake-up */
	rtr_atomic_store_relaxed(&doorbell.sleeping, 0);
}

void rtr__rings_wake(void)
{
	/* R4: pairs with A4 in rtr__rings_sleep_prepare() */
	rtr_atomic_add_acq_rel(&doorbell.seq, 1);
	futex(&doorbell.seq, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Producers' slow path: wake the writer if it sleeps; cheap when it is awake. */
static void doorbell_ring(void)
{
	/* relaxed peek first: producers come here often while a ring is above the mark.
	 * The exchange (acq_rel) lets one of them make the system call; the order that
	 * matters is the fence pair, and R4 in rtr__rings_wake(). */
	if (rtr_atomic_load_relaxed(&doorbell.sleeping) &&
	    rtr_atomic_exchange_acq_rel(&doorbell.sleeping, 0))
		rtr__rings_wake();
}

static void registry_enter(void)
{
	tls_in_registry++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the flag before the lock, for a handler */
	pthread_mutex_lock(&registry_lock);
}

static void registry_leave(void)
{
	pthread_mutex_unlock(&registry_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the lock released before the flag */
	tls_in_registry--;
}

void rtr__rings_configure(size_t ring_bytes, int on_full)
{
	uint32_t records = 128;

	while ((size_t)records * RTR_REC_BYTES < ring_bytes && records < (1u << 25))
		records <<= 1;
	registry_enter();
	ring_records = records;
	registry_leave();
	/* published to producers by R0 in rtr_start(), which follows */
	rtr_atomic_store_relaxed(&on_full_policy, on_full);
}

static void ring_thread_exit(void *arg)
{
	struct rtr__ring *r = arg;

	rtr__tls_ring = NULL;
	tls_exited = 1;
	/* R2: pairs with A2 in the writer; all our records were published before this */
	rtr_atomic_store_release(&r->closed, 1);
}

static void make_key(void)
{
	key_error = pthread_key_create(&ring_key, ring_thread_exit);
}

static struct rtr__ring *ring_create(uint32_t records)
{
	size_t head_bytes = (sizeof(struct rtr__ring) + 4095) & ~(size_t)4095;
	size_t bytes = head_bytes + (size_t)records * RTR_REC_BYTES;
	struct rtr__ring *r = rtr__mem_map(bytes);

	if (r == NULL)
		return NULL;
	r->map_bytes = bytes;
	r->capacity = records;
	r->mask = records - 1;
	r->hwm = records / 2;
	r->limit = r->hwm;
	r->slots = (struct rtr__rec *)(void *)((char *)r + head_bytes); /* page-aligned */
	r->rmask = r->mask;
	r->rslots = r->slots;
	r->tid = (int32_t)gettid();
	if (rtr__tls_thread_name[0] != '\0')
		memcpy(r->name, rtr__tls_thread_name, sizeof(r->name));
	else if (prctl(PR_GET_NAME, r->name) != 0) /* writes at most 16 bytes */
		r->name[0] = '\0';
	r->name[sizeof(r->name) - 1] = '\0';
	r->sort_index = rtr__tls_thread_sort;
	return r;
}

RTR_COLD struct rtr__ring *rtr__ring_attach(void)
{
	if (tls_exited || !rtr__recording())
		return NULL;
	if (tls_in_registry) {
		/* A signal handler interrupted this thread in the registry (making its
		 * ring, or in rtr_start()): the lock is taken. */
		__atomic_fetch_add(&reentrant_unattached, 1, __ATOMIC_RELAXED); /* a count */
		return NULL;
	}
	registry_enter();
	pthread_once(&key_once, make_key);
	struct rtr__ring *r = key_error == 0 ? ring_create(ring_records) : NULL;
	if (r != NULL) {
		r->id = ++rings_created;
		r->next = registry_head;
		registry_head = r;
	}
	registry_leave();
	if (r == NULL)
		return NULL;
	if (pthread_setspecific(ring_key, r) != 0) {
		/* Without a destructor the ring would never be freed: do without. */
		rtr_atomic_store_release(&r->closed, 1); /* R2, as at thread exit */
		tls_exited = 1;
		return NULL;
	}
	rtr__tls_ring = r;
	return r;
}

static void backoff(unsigned round)
{
	if (round < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else if (round < 128) {
		sched_yield();
	} else {
		struct timespec ts = {0, 50 * 1000};
		nanosleep(&ts, NULL);
	}
}

/*
 * Leave the reserved window around a system call (a wake-up, a wait): a signal is
 * delivered as the call returns, so a handler that records then would otherwise
 * always find the thread busy. Nothing of the event is written yet; a handler's event
 * lands at head, and the caller reads head again afterwards. window_enter() returns
 * false when the recorder stopped meanwhile (the state is tested again inside the
 * window, as in rtr__reserve()).
 */
static void window_leave(struct rtr__ring *r)
{
	/* R8: pairs with A8 in the writer's stop, as in rtr__unreserve() */
	rtr_atomic_store_release(&r->busy, 0);
}

static bool window_enter(struct rtr__ring *r)
{
	/* relaxed: as in rtr__reserve(), whose order this repeats */
	rtr_atomic_store_relaxed(&r->busy, 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return rtr__recording() != 0;
}

/* Block mode: a wait that began at since_ns (0: none) is over; count it. */
static void waited(struct rtr__ring *r, uint64_t since_ns)
{
	if (since_ns == 0)
		return;
	/* relaxed, one instruction each: counters the writer sums, as dropped_full */
	__atomic_fetch_add(&r->waited_full, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->waited_ns, rtr__mono_ns() - since_ns, __ATOMIC_RELAXED);
}

RTR_COLD bool rtr__ring_make_room(struct rtr__ring *r, uint32_t n)
{
	int woke = 0;
	uint64_t wait_since = 0; /* block mode: when this event began to wait */

	if (n > r->capacity / 2) {
		/* relaxed, one instruction: a count that a signal handler on this thread
		 * may add to at the same time (an E doomed with its B, emit.h) */
		__atomic_fetch_add(&r->dropped_large, 1, __ATOMIC_RELAXED);
		return false;
	}
	for (unsigned round = 0;; round++) {
		uint32_t head = r->head; /* own index; a handler may have moved it, see above */
		/* A3: pairs with R3 in rtr__ring_consume(); the writer is done with slots below */
		uint32_t tail = rtr_atomic_load_acquire(&r->tail);
		uint32_t fill = head + n - tail;

		r->cached_tail = tail;
		/* The mark is tested on the published fill, head - tail, without this
		 * event: the very predicate the writer tests before it sleeps. Were it
		 * tested with this event, not yet published, a writer going to sleep in
		 * between would see the ring under the mark, this thread would not wake it
		 * and would not look again until the ring is full. */
		if (rtr__ring_over_mark(r, head - tail)) {
			/* Woken once: come back only when this view of the ring is full. By
			 * then the writer has drained (the limit drops back to the mark) or
			 * the ring is really full. */
			r->limit = r->capacity;
			if (!woke) {
				woke = 1;
				/* Orders our head stores before reading the writer's sleep
				 * flag; pairs with the fence in rtr__rings_sleep_prepare() (no
				 * lost wake-up). */
				rtr_atomic_fence_seq_cst();
				window_leave(r);
				doorbell_ring();
				if (!window_enter(r))
					return false;
				continue; /* head may have moved */
			}
		} else {
			/* Under the mark, or this event crosses it: the next event looks
			 * again, with this one published. */
			r->limit = r->hwm;
		}
		if (fill <= r->capacity) {
			waited(r, wait_since);
			return true;
		}
		if (!rtr__recording()) {
			waited(r, wait_since);
			return false; /* stopping: the event is outside the session */
		}
		if (rtr_atomic_load_relaxed(&on_full_policy) == RTR_ON_FULL_DROP) {
			/* relaxed, one instruction: as dropped_large above */
			__atomic_fetch_add(&r->dropped_full, 1, __ATOMIC_RELAXED);
			return false;
		}
		if (wait_since == 0)
			wait_since = rtr__mono_ns();
		window_leave(r);
		backoff(round);
		if (!window_enter(r)) {
			waited(r, wait_since);
			return false;
		}
	}
}

size_t rtr__rings_list(struct rtr__ring_list *l)
{
	size_t n = 0, cap = RTR__RING_LIST_INLINE;

	l->v = l->inline_v;
	l->mapped = 0;
	registry_enter();
	for (struct rtr__ring *r = registry_head; r != NULL; r = r->next)
		n++;
	if (n > cap) {
		struct rtr__ring **v = rtr__mem_map(n * sizeof(*v));
		if (v != NULL) {
			l->v = v;
			l->mapped = n * sizeof(*v);
			cap = n;
		}
	}
	l->n = 0;
	for (struct rtr__ring *r = registry_head; r != NULL && l->n < cap; r = r->next)
		l->v[l->n++] = r;
	registry_leave();
	return l->n;
}

void rtr__rings_list_done(struct rtr__ring_list *l)
{
	if (l->mapped != 0)
		rtr__mem_unmap(l->v, l->mapped);
	l->v = l->inline_v;
	l->n = l->mapped = 0;
}

void rtr__rings_free(struct rtr__ring *r)
{
	registry_enter();
	for (struct rtr__ring **p = &registry_head; *p != NULL; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			break;
		}
	}
	registry_leave();
	rtr__mem_unmap(r, r->map_bytes);
}

uint64_t rtr__rings_created(void)
{
	registry_enter();
	uint64_t n = rings_created;
	registry_leave();
	return n;
}

uint64_t rtr__rings_reentrant_unattached(void)
{
	return __atomic_load_n(&reentrant_unattached, __ATOMIC_RELAXED); /* a count */
}

/*
 * The process-wide barrier of a stop (ring.h): MEMBARRIER_CMD_PRIVATE_EXPEDITED when
 * the process could register for it at start (Linux 4.14), else the global command
 * (Linux 4.3, slower: it waits for every CPU to pass a grace period).
 */
static int barrier_cmd;	  /* relaxed: set by rtr_start() before a stop can use it */
static pid_t barrier_pid; /* the process that registered (a fork's child registers anew) */

void rtr__rings_barrier_init(void)
{
	/* Once per process: registering may wait for an RCU grace period. */
	if (barrier_pid == getpid())
		return;
	barrier_pid = getpid();
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	int cmd = 0;

	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
	else if (cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL))
		cmd = MEMBARRIER_CMD_GLOBAL;
	rtr_atomic_store_relaxed(&barrier_cmd, cmd);
}

static bool rings_barrier(void)
{
	int cmd = rtr_atomic_load_relaxed(&barrier_cmd);

	return cmd != 0 && syscall(SYS_membarrier, cmd, 0, 0) == 0;
}

/* Most the stop waits for an event call in progress to finish (a thread stopped in
 * one, or a signal handler that never returns, must not hold the stop forever). */
#define QUIESCE_MAX_NS (1000u * 1000u * 1000u)
/* The grace period that stands in for the barrier where membarrier is refused. */
#define GRACE_NS (5u * 1000u * 1000u)

void rtr__rings_quiesce(struct rtr__ring *const *rings, size_t n, const uint32_t *give_up,
			const struct rtr__ring *skip)
{
	uint64_t start = rtr__mono_ns();

	if (!rings_barrier()) {
		struct timespec grace = {0, GRACE_NS};
		nanosleep(&grace, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		/* closed (A2): its thread is gone and publishes nothing more (a fork's
		 * child may find one busy that will never finish) */
		if (rtr__ring_closed(rings[i]) || rings[i] == skip)
			continue;
		for (unsigned round = 0; rtr__ring_busy(rings[i]); round++) {
			/* relaxed: a flag the stop sets past its timeout, nothing behind it */
			if (rtr__mono_ns() - start > QUIESCE_MAX_NS ||
			    rtr_atomic_load_relaxed(give_up))
				return;
			backoff(round);
		}
	}
}

void rtr__rings_fork_prepare(void)
{
	registry_enter();
}

void rtr__rings_fork_parent(void)
{
	registry_leave();
}

void rtr__rings_after_fork_child(void)
{
	/* Only the forking thread exists in the child; its ring stays usable, under the
	 * child's own thread id. The others have no producer and no writer here: nothing
	 * in the child can hold a pointer into them but the registry (the registry lock
	 * was held across fork(), so the list is whole), and they go now. This thread
	 * holds the lock here too and lets it go at the end: unlocked by its owner, not
	 * initialized over (which ThreadSanitizer takes for a second lock). */
	for (struct rtr__ring **p = &registry_head; *p != NULL;) {
		struct rtr__ring *r = *p;

		if (r == rtr__tls_ring) {
			r->tid = (int32_t)gettid();
			p = &r->next;
			continue;
		}
		*p = r->next;
		rtr__mem_unmap(r, r->map_bytes);
	}
	registry_leave();
}
