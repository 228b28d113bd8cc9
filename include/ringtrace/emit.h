/* SPDX-License-Identifier: MIT */
/*
 * The producer's fast path, inline. Do not include directly: include <ringtrace.h>.
 *
 * Everything named rtr__* here is internal and may change between versions; it is
 * visible only because the event calls are inlined into the program.
 *
 * The record. One event is one 32-byte record, written by value into the calling
 * thread's ring, optionally followed by continuation records carrying bytes that do
 * not fit (a counter value, a copied name, arguments): `ext` says how many bytes
 * follow, rounded up to whole records. An event is published in one release store,
 * so the writer never sees half of one and events of one thread keep their order.
 *
 *	ts	clock reading in ticks (see rtr__clock_is_tsc), or nanoseconds when
 *		RTR__F_TS_NS is set (events with explicit timestamps)
 *	a	name (static string), or the call site for RTR__K_SCOPE (with
 *		RTR__F_CODE_ADDR: a function's address); with RTR__F_SITE_ARGS, a
 *		site with its arguments
 *	b	category (static string), or the duration in ticks for RTR__K_SCOPE
 *	kind	RTR__K_*
 *	nargs	number of arguments in the continuation bytes
 *	flags	RTR__F_*
 *	ext	continuation bytes after this record
 */
#ifndef RINGTRACE_EMIT_H
#define RINGTRACE_EMIT_H

#ifndef RINGTRACE_H
#error "include <ringtrace.h>, not <ringtrace/emit.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RTR__LIKELY(x)	 __builtin_expect(!!(x), 1)
#define RTR__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RTR__CACHELINE	 64
/* Not instrumented by -finstrument-functions: the inline calls are inlined into the
 * program, which may be built with it (and the instrument library calls them). */
#define RTR__NOINSTR __attribute__((no_instrument_function))

struct rtr__rec {
	uint64_t ts;
	uint64_t a;
	uint64_t b;
	uint8_t kind;
	uint8_t nargs;
	uint16_t flags;
	uint32_t ext;
};

enum {
	RTR__K_BEGIN = 1,	   /* B: a name, b cat */
	RTR__K_END = 2,		   /* E: a name, b cat */
	RTR__K_INSTANT = 3,	   /* i (thread scope): a name, b cat */
	RTR__K_COUNTER_I64 = 4,	   /* C: a name, b cat; ext: int64 value */
	RTR__K_COUNTER_F64 = 5,	   /* C: a name, b cat; ext: double value */
	RTR__K_COMPLETE = 6,	   /* X: a name, b cat; ext: uint64 duration */
	RTR__K_SCOPE = 7,	   /* X: a site, b duration in ticks */
	RTR__K_THREAD_NAME = 8,	   /* M thread_name: ext: copied name */
	RTR__K_COUNTERS = 9,	   /* C with one series per argument: a name, b cat */
	RTR__K_FLOW_START = 10,	   /* s: a name, b cat; ext: uint64 id */
	RTR__K_FLOW_STEP = 11,	   /* t: a name, b cat; ext: uint64 id */
	RTR__K_FLOW_END = 12,	   /* f, bound to the enclosing slice: a name, b cat; ext: id */
	RTR__K_ASYNC_BEGIN = 13,   /* b: a name, b cat; ext: uint64 id */
	RTR__K_ASYNC_INSTANT = 14, /* n: a name, b cat; ext: uint64 id */
	RTR__K_ASYNC_END = 15,	   /* e: a name, b cat; ext: uint64 id */
	RTR__K_MEM_ALLOC = 16,	   /* i + the device's counter: a address, b bytes; ext: device */
	RTR__K_MEM_FREE = 17,	   /* i + the device's counter: a address; ext: device */
	RTR__K_STACK = 18,	   /* i with a call stack: a name, b cat; ext: frames */
	RTR__K_META = 19,	   /* M of the process or thread: a what; ext: the value */
	RTR__K_SLICE_ARG = 20,	   /* an argument for the innermost open slice's E: ext: it */
	RTR__K_LAST = RTR__K_SLICE_ARG,
};

enum {
	RTR__F_NAME_COPY = 1 << 0,     /* the name is a copied string in ext, not `a` */
	RTR__F_TS_NS = 1 << 1,	       /* ts and duration are nanoseconds, not ticks */
	RTR__F_SCOPE_PROCESS = 1 << 2, /* an instant shown across the process */
	RTR__F_SCOPE_GLOBAL = 1 << 3,  /* an instant shown across the trace */
	RTR__F_TRACK = 1 << 4,	       /* on a track: ext begins with the struct rtr_track * */
	RTR__F_POP = 1 << 5,	       /* an E of the innermost open slice: name from its B */
	/* RTR__K_SCOPE: `a` is a function's code address, named by the writer (the
	 * instrument library); category "function" */
	RTR__F_CODE_ADDR = 1 << 6,
	/* RTR__K_COMPLETE: a poll, an MPI test or probe call that completed nothing
	 * (rtr__poll_args()); ts and the word, its duration, in ticks. The writer folds
	 * a thread's consecutive polls into one slice (src/writer/polls.c). Internal:
	 * written by the library's own modules only. */
	RTR__F_POLL = 1 << 7,
	/* RTR__K_SCOPE or RTR__K_BEGIN: `a` is a struct rtr__site_args
	 * (src/record/record.h), a site whose name, category and arguments are the same
	 * at every event, encoded once in it and read from there by the writer: the event
	 * carries none (the Kokkos tool's kernels, the OMPT tool's regions). A B's E has
	 * the site's name. Internal: written by the library's own modules only. */
	RTR__F_SITE_ARGS = 1 << 8,
};

/*
 * A producer thread's ring. Single producer (the owning thread), single consumer
 * (the writer). head and tail run freely as uint32 and are masked on use; the ring
 * holds mask + 1 records. Protocol essay and the slow paths: src/ring/ring.h.
 */
struct rtr__ring {
	/* Producer's lines: written only by the owning thread. head: next record to write. */
	uint32_t head __attribute__((aligned(RTR__CACHELINE)));

	uint32_t cached_tail;	/* producer's last view of tail */
	uint32_t limit;		/* take the slow path when the fill would pass this */
	uint32_t mask;		/* copy of the read-only mask, on the producer's line */
	struct rtr__rec *slots; /* copy of the read-only slot pointer */
	/* Inside an event call, from reserve to publish (a signal handler's event on this
	 * thread finds it set); read by the writer when the session stops. */
	uint32_t busy;
	uint32_t depth;		   /* B slices open on this thread, recorded or dropped; own only */
	uint64_t events;	   /* events published; relaxed, summed by the writer */
	uint64_t dropped_full;	   /* events dropped on a full ring; relaxed */
	uint64_t dropped_large;	   /* events larger than half the ring; relaxed */
	uint64_t dropped_begins;   /* bit d: the E closing depth d must go; own only */
	uint64_t doomed_reentrant; /* of those, the ones counted as dropped_reentrant; own only */
	uint64_t dropped_reentrant; /* events begun inside another on this thread; relaxed */
	uint64_t dropped_no_track;  /* events on a track that could not be made; relaxed */
	uint64_t args_cut;	    /* events recorded with only RTR_MAX_ARGS arguments; relaxed */
	uint64_t waited_full;	    /* block mode: events that waited for room; relaxed */
	uint64_t waited_ns;	    /* the time they waited, in ns; relaxed */

	/* Consumer's line: written only by the writer. tail: next record to read. */
	uint32_t tail __attribute__((aligned(RTR__CACHELINE)));
	uint32_t rmask; /* the writer's copy of mask, so it never reads the producer's line */
	struct rtr__rec *rslots; /* ... and of slots */

	/* Read-mostly: set at creation, or rarely. closed: the owning thread has exited. */
	uint32_t closed __attribute__((aligned(RTR__CACHELINE)));

	uint32_t capacity;	/* records: mask + 1 */
	uint32_t hwm;		/* fill at which the producer wakes the writer */
	int32_t tid;		/* kernel thread id of the owner */
	uint64_t id;		/* unique per process, never reused */
	struct rtr__ring *next; /* registry list; under the registry lock */
	size_t map_bytes;	/* size of the mapping that holds this ring */
	char name[64];		/* the thread's name when the ring was made */
	int32_t sort_index;	/* rtr_thread_sort_index() + 1, 0 if none; relaxed */
	uint64_t reader[29];	/* the writer's per-ring state; writer only */
};

/*
 * The symbols the inline code below reads carry RTR__ABI (see ringtrace.h): a
 * program built against another layout of struct rtr__ring or the record fails to
 * link (undefined rtr__tls_ring_v<N>) instead of writing rings the library misreads.
 * A name costs nothing at run time: the same loads, of a differently named symbol.
 */
#define RTR__ABI_PASTE(name, n) name##_v##n
#define RTR__ABI_NAME2(name, n) RTR__ABI_PASTE(name, n)
#define RTR__ABI_NAME(name)	RTR__ABI_NAME2(name, RTR__ABI)
#define rtr__active		RTR__ABI_NAME(rtr__active)
#define rtr__tls_ring		RTR__ABI_NAME(rtr__tls_ring)

#ifndef RINGTRACE_DISABLE

/*
 * The recorder's state word, stored with release by rtr_start()/rtr_stop():
 *	0			stopped
 *	RTR__STATE_ALL		recording every category
 *	RTR__STATE_FILTERED | epoch << 2
 *				recording through a category filter, the epoch new at
 *				every start (src/producer/filter.h). Bit 0 is clear, so a cached
 *				decision is the state it was made under, | 1 when recorded.
 * Nonzero while the recorder runs.
 */
extern RTR_API int rtr__active;
#define RTR__STATE_ALL	    1
#define RTR__STATE_FILTERED 2
/* Nonzero when the clock is the TSC; set before rtr__active with release. */
extern RTR_API int rtr__clock_is_tsc;
/* The calling thread's ring, NULL until its first event. */
extern RTR_API __thread struct rtr__ring *rtr__tls_ring __attribute__((tls_model("initial-exec")));

/* Cold paths, out of line: register the thread's ring; make room in a full ring (it
 * may let a signal handler record meanwhile: head is read again after it). */
RTR_API struct rtr__ring *rtr__ring_attach(void);
RTR_API bool rtr__ring_make_room(struct rtr__ring *r, uint32_t n);
RTR_API uint64_t rtr__ticks_slow(void);
/* Nanoseconds as ticks of the current clock (a duration; 0 when ns is 0). Any thread,
 * async-signal-safe. */
RTR_API uint64_t rtr__ns_ticks(uint64_t ns);

/*
 * For libraries built with ringtrace (the instrument library): register fn as the
 * writer's resolver of code addresses, in place of dladdr(3). fn writes the name of
 * the function containing addr into out (at most cap bytes, no NUL needed), sets
 * *start to that function's address and returns the name's length, or returns 0 when
 * it does not know addr. The writer calls it on its thread only, once per address (it
 * caches the result); fn must stay valid for the life of the process. Any thread.
 */
RTR_API void rtr__symbolizer_set(size_t (*fn)(uint64_t addr, char *out, size_t cap,
					      uint64_t *start));
/* Likewise, fn writes "file:line" of the code at addr (at most cap bytes, no NUL
 * needed) and returns its length, or 0; the writer then adds {"src": ...} to the
 * slices of RTR__F_CODE_ADDR. */
RTR_API void rtr__srcline_set(size_t (*fn)(uint64_t addr, char *out, size_t cap));
/* As rtr__srcline_set(), for the code arguments only (rtr__arg_key_code), and only
 * while no resolver is registered: RTR__F_CODE_ADDR slices stay without "src".
 * Returns whether fn was registered. Any thread. */
RTR_API bool rtr__srcline_offer(size_t (*fn)(uint64_t addr, char *out, size_t cap));
/* The key of a code argument: RTR_ARG_U64(rtr__arg_key_code, return_address) (the
 * OMPT tool's codeptr_ra). The writer knows it by its address and writes the value as
 * "code": "0x..." and, when a registered resolver knows the call before it (the
 * address minus 1), "src": "file:line" next to it. Resolved on the writer's thread,
 * never by the producer. */
RTR_API extern const char rtr__arg_key_code[];

/*
 * For the modules that start the recorder on the program's behalf (the MPI module at
 * MPI_Init, the OMPT tool): rtr_start(), except that a running session is never taken
 * over, not even an autostarted one (which stays the program's to adopt with
 * rtr_start(), and the exit handler's to end). Returns as rtr_start(): 0 when this call
 * started the session (the caller may stop it), -EBUSY when one runs. As rtr_start().
 */
RTR_API int rtr__start_module(const struct rtr_config *cfg);
/* The process name the running session's file gives (the last session's after
 * rtr_stop(); "" before the first start). Valid until the next start; call from the
 * thread that starts the recorder, or after the start. */
RTR_API const char *rtr__process_name(void);
/* For the MPI module's manifest: the i-th file (from 0, in the order written) of the
 * running session that is still there: the one file; with rotation each segment kept
 * (the last the one being written); in flight mode each snapshot and the one the stop
 * writes. 0, -ENOENT past the last (or no session), -ENAMETOOLONG. Takes the
 * lifecycle lock. */
RTR_API int rtr__session_file(uint64_t i, char *out, size_t size);

/*
 * For the MPI module's job profile (docs/profile.md): where rank 0 writes it (the
 * session's path pattern, "job" for the rank), -ENOTCONN when the session keeps no
 * profile; the process's profile so far with its threads merged (every event recorded
 * before counted; freeze: the process's own profile file is written now and is final),
 * in memory to give back with rtr__profile_free(); rank 0's merge of the world ranks'
 * (len[r] 0: none from rank r), written at path, began_ns when the reduction began
 * (CLOCK_MONOTONIC as the system has it: the file's reduce_ns). 0 or -errno.
 */
RTR_API int rtr__profile_job_path(char *out, size_t size);
RTR_API int rtr__profile_export(char **data, size_t *len, size_t *cap, int freeze);
RTR_API void rtr__profile_free(char *data, size_t cap);
RTR_API int rtr__profile_job_write(const char *path, int world, const char *const *data,
				   const size_t *len, uint64_t began_ns);

/*
 * For the modules that hear a runtime name its own threads (the ITT collector, from
 * the OpenMP runtime's ITT calls): rtr_thread_name(name), unless the calling thread
 * was named already (by the program, through any module), whose name then stays.
 * The calling thread only; any thread.
 */
RTR_API void rtr__thread_name_unless_named(const char *name);

/*
 * For the MPI module, whose test and probe calls learn only at their end whether they
 * completed anything. A call that began at `ticks` (rtr__ticks()) and completed
 * something is a slice as any: rtr__begin_args_at() records its B now, at `ticks`
 * (rtr_end() its E, as usual). One that completed nothing is one record,
 * rtr__poll_args(): RTR__K_COMPLETE with RTR__F_POLL, from `ticks` for `dur_ticks`,
 * with its arguments (numbers and static strings), which the writer folds with the
 * polls next to it. Any thread; as rtr_begin_args().
 */
RTR_API void rtr__begin_args_at(const char *cat, const char *name, uint64_t ticks,
				const struct rtr_arg *args, unsigned n);
RTR_API void rtr__poll_args(const char *cat, const char *name, uint64_t ticks, uint64_t dur_ticks,
			    const struct rtr_arg *args, unsigned n);

/*
 * For modules whose spans end by an id rather than in stack order (the Kokkos tool's
 * kernels and fences): the whole span is one record written at its end, an
 * RTR__K_SCOPE of `site` (a call site kept for the process's life) from `ticks`
 * (rtr__ticks()) for `dur_ticks`, with arguments, as RTR_SCOPE writes it without them.
 * Nothing is recorded at the begin, so nothing is left unbalanced when the end never
 * comes. Any thread; as rtr_begin_args().
 */
RTR_API void rtr__scope_args_at(const struct rtr_site *site, uint64_t ticks, uint64_t dur_ticks,
				const struct rtr_arg *args, unsigned n);

/* The category filter's per-thread cache of decisions, direct-mapped by category
 * pointer (categories are static strings). A zeroed slot never matches: its decision
 * word is 0, never a filtered state. */
#define RTR__CAT_SLOTS_LOG2 4
#define RTR__CAT_SLOTS	    (1 << RTR__CAT_SLOTS_LOG2)
struct rtr__cat_slot {
	const char *cat; /* the category decided */
	int decision;	 /* the state word it was decided under, | 1 when recorded */
};
extern RTR_API __thread struct rtr__cat_slot rtr__tls_cat_cache[RTR__CAT_SLOTS]
	__attribute__((tls_model("initial-exec")));
/* Cache misses, out of line: compare the category with the session's list, fill the
 * thread's slot (or the call site's word) and return the decision. */
RTR_API bool rtr__cat_lookup(int state, const char *cat);
RTR_API bool rtr__site_lookup(int state, const struct rtr_site *site, int *decision);

#if defined(RTR_EXPORT_HOT)
#define RTR_HOT RTR_API /* src/producer/exports.c: one exported definition of each call */
#else
#define RTR_HOT static inline RTR__NOINSTR
#endif

/* The state word (see rtr__active): nonzero while recording. Calls that take a
 * category use rtr__recording_cat() instead. */
static inline RTR__NOINSTR int rtr__recording(void)
{
	/* A0: pairs with R0 in rtr_start(); the clock kind and origin, and the filter
	 * table, are set */
	return __atomic_load_n(&rtr__active, __ATOMIC_ACQUIRE);
}

static inline RTR__NOINSTR struct rtr__cat_slot *rtr__cat_slot_of(const char *cat)
{
	/* Fibonacci hashing: the top bits of the product spread neighbouring literals */
	uint64_t h = (uint64_t)(uintptr_t)cat * UINT64_C(0x9E3779B97F4A7C15);

	return &rtr__tls_cat_cache[h >> (64 - RTR__CAT_SLOTS_LOG2)];
}

/* Under a filtered state: whether cat is recorded, from the thread's cache. */
static inline RTR__NOINSTR bool rtr__cat_cached(int state, const char *cat)
{
	const struct rtr__cat_slot *slot = rtr__cat_slot_of(cat);
	unsigned verdict = (unsigned)(slot->decision ^ state); /* 0 or 1 when current */

	if (RTR__LIKELY(slot->cat == cat && verdict <= 1))
		return verdict;
	return rtr__cat_lookup(state, cat);
}

/*
 * Whether an event of category cat is to be recorded now: the recorder runs and its
 * category filter, if any, lets cat through. Every event call that takes a category
 * asks this instead of rtr__recording(). Stopped: a load and a branch. Recording
 * with no filter: a load and two branches. With a filter: a lookup in the thread's
 * cache besides (two loads, a compare and a branch when it hits).
 */
static inline RTR__NOINSTR bool rtr__recording_cat(const char *cat)
{
	int state = rtr__recording();

	/* Two tests, not one test and two jumps on its flags: GCC can then still
	 * push registers after the first jump, so a stopped recorder stays one branch. */
	if (state == 0)
		return false;
	if (RTR__UNLIKELY(state & RTR__STATE_FILTERED))
		return rtr__cat_cached(state, cat);
	return true;
}

static inline RTR__NOINSTR uint64_t rtr__ticks(void)
{
#if defined(__x86_64__)
	/* relaxed: published by R0 in rtr_start(); a thread still in an event call of
	 * the last session while a new one starts may read either kind */
	if (RTR__LIKELY(__atomic_load_n(&rtr__clock_is_tsc, __ATOMIC_RELAXED))) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return rtr__ticks_slow();
}

/* A signal fence: orders this thread's accesses against a signal handler that
 * interrupts it on the same thread; costs no instruction. */
#define RTR__SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Rare: count an event dropped because it began inside another event call on the
 * same thread (a signal handler's). */
static inline RTR__NOINSTR void rtr__reentered(struct rtr__ring *r)
{
	/* relaxed: one instruction, so a handler nested in this one cannot lose it */
	__atomic_fetch_add(&r->dropped_reentrant, 1, __ATOMIC_RELAXED);
}

/*
 * Reserve n records at the head, or return NULL (dropped, or recorder stopping).
 * The caller fills them and calls rtr__publish(), or rtr__unreserve() to give up.
 *
 * Reentrancy. From here to publish the thread is `busy`. A signal handler that
 * records on this thread in that window would reserve the same head, so its event
 * is dropped instead and counted (dropped_reentrant). A handler that interrupts
 * before busy is set runs to its end before this thread reads head, and one that
 * interrupts after publish finds busy clear: both record normally.
 *
 * Stop. After busy is set the recorder is checked once more: rtr_stop() stores the
 * state word, then a process-wide barrier (membarrier), then waits for every ring's
 * busy to clear, so an event either got in before that wait ended and is drained,
 * or sees the recorder off here and is not recorded at all (see ring.h).
 */
/* Give up a reservation without publishing anything (or leave the window). */
static inline RTR__NOINSTR void rtr__unreserve(struct rtr__ring *r)
{
	/* R8: pairs with A8 in the writer's stop; drop counts are stored */
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

static inline RTR__NOINSTR struct rtr__ring *rtr__reserve(uint32_t n, uint32_t *head_out)
{
	struct rtr__ring *r = rtr__tls_ring;

	if (RTR__UNLIKELY(r == NULL) && (r = rtr__ring_attach()) == NULL)
		return NULL;
	if (RTR__UNLIKELY(r->busy)) { /* own flag: only this thread stores it */
		rtr__reentered(r);
		return NULL;
	}
	/* relaxed: a handler on this thread reads it (the fence orders it for that), and
	 * the writer at stop, after the barrier that rtr_stop() makes */
	__atomic_store_n(&r->busy, 1, __ATOMIC_RELAXED);
	RTR__SIGNAL_FENCE(); /* busy before head and the state word, for a handler */
	if (RTR__UNLIKELY(!rtr__recording())) {
		rtr__unreserve(r);
		return NULL;
	}
	uint32_t head = r->head; /* own index: only this thread stores it */
	if (RTR__UNLIKELY(head + n - r->cached_tail > r->limit)) {
		if (!rtr__ring_make_room(r, n)) {
			rtr__unreserve(r);
			return NULL;
		}
		head = r->head; /* a signal handler may have recorded meanwhile */
	}
	*head_out = head;
	return r;
}

static inline RTR__NOINSTR void rtr__publish(struct rtr__ring *r, uint32_t head, uint32_t n)
{
	/* own counter: only this thread stores it; the writer reads it for stats */
	__atomic_store_n(&r->events, r->events + 1, __ATOMIC_RELAXED);
	/* R1: pairs with A1 in the writer's drain; the records are visible before head */
	__atomic_store_n(&r->head, head + n, __ATOMIC_RELEASE);
	/* R8: pairs with A8 in the writer's stop; head and events are stored */
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

/* rtr__emit() with flags. */
static inline RTR__NOINSTR bool rtr__emit_flags(uint8_t kind, uint16_t flags, uint64_t ts,
						uint64_t a, uint64_t b)
{
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(1, &head);

	if (RTR__UNLIKELY(r == NULL))
		return false;
	struct rtr__rec *rec = &r->slots[head & r->mask];
	rec->ts = ts;
	rec->a = a;
	rec->b = b;
	rec->kind = kind;
	rec->nargs = 0;
	rec->flags = flags;
	rec->ext = 0;
	rtr__publish(r, head, 1);
	return true;
}

/* Returns whether the event was recorded (not dropped, recorder not stopping). */
static inline RTR__NOINSTR bool rtr__emit(uint8_t kind, uint64_t ts, uint64_t a, uint64_t b)
{
	return rtr__emit_flags(kind, 0, ts, a, b);
}

/* An event with one 64-bit payload word in a continuation record. */
static inline RTR__NOINSTR void rtr__emit_word(uint8_t kind, uint16_t flags, uint64_t ts,
					       uint64_t a, uint64_t b, uint64_t word)
{
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(2, &head);

	if (RTR__UNLIKELY(r == NULL))
		return;
	struct rtr__rec *rec = &r->slots[head & r->mask];
	rec->ts = ts;
	rec->a = a;
	rec->b = b;
	rec->kind = kind;
	rec->nargs = 0;
	rec->flags = flags;
	rec->ext = sizeof(uint64_t);
	r->slots[(head + 1) & r->mask].ts = word;
	rtr__publish(r, head, 2);
}

/*
 * B/E balance under drops. Viewers match an E with the innermost open B, so an E
 * whose B was dropped would end the wrong slice, and so would the E after an E that
 * was dropped. A thread's ring keeps its B depth and which of the innermost 64
 * levels must lose their E: a level whose B was dropped, and every level enclosing an
 * E that was dropped (their Bs stay open in the viewer, unterminated). Such an E is
 * dropped too and counted under the reason of the drop that doomed it, so the trace
 * keeps only whole pairs and unterminated Bs. The masks are updated outside the
 * reserved window; a signal handler's events nest whole, so they leave them as found.
 */
RTR_API void rtr__begin_lost(struct rtr__ring *r, uint32_t depth);
RTR_API void rtr__end_lost(void);
RTR_API bool rtr__end_doomed(struct rtr__ring *r, uint32_t depth);

static inline RTR__NOINSTR void rtr__begin_done(bool recorded)
{
	struct rtr__ring *r = rtr__tls_ring;

	if (RTR__UNLIKELY(r == NULL))
		return; /* never recorded on this thread: nothing to balance */
	uint32_t d = r->depth++;
	if (RTR__UNLIKELY(!recorded))
		rtr__begin_lost(r, d);
}

/* Whether the E closing the current level must go (it is then counted). */
static inline RTR__NOINSTR bool rtr__end_dropped(void)
{
	struct rtr__ring *r = rtr__tls_ring;

	if (RTR__UNLIKELY(r == NULL) || r->depth == 0)
		return false; /* an E without a B: written, the viewer judges it */
	uint32_t d = --r->depth;
	if (RTR__LIKELY(r->dropped_begins == 0))
		return false;
	return rtr__end_doomed(r, d);
}

/* Record a slice beginning on the calling thread. Any thread; wait-free in drop mode. */
RTR_HOT void rtr_begin(const char *cat, const char *name)
{
	if (RTR__LIKELY(rtr__recording_cat(cat)))
		rtr__begin_done(
			rtr__emit(RTR__K_BEGIN, rtr__ticks(), (uintptr_t)name, (uintptr_t)cat));
}

/* Record the end of the innermost slice begun with the same cat and name. */
RTR_HOT void rtr_end(const char *cat, const char *name)
{
	if (RTR__LIKELY(rtr__recording_cat(cat)) && !rtr__end_dropped() &&
	    RTR__UNLIKELY(!rtr__emit(RTR__K_END, rtr__ticks(), (uintptr_t)name, (uintptr_t)cat)))
		rtr__end_lost();
}

/* Whether an event of category cat would be recorded now (the recorder runs and its
 * filter lets cat through): skip computing costly arguments when it would not. */
RTR_HOT bool rtr_category_enabled(const char *cat)
{
	return rtr__recording_cat(cat);
}

/* Record a thread-scoped instant. */
RTR_HOT void rtr_instant(const char *cat, const char *name)
{
	if (RTR__LIKELY(rtr__recording_cat(cat)))
		rtr__emit(RTR__K_INSTANT, rtr__ticks(), (uintptr_t)name, (uintptr_t)cat);
}

/* Record a counter sample; each name is one series in the viewer. */
RTR_HOT void rtr_counter_i64(const char *cat, const char *name, int64_t value)
{
	if (RTR__LIKELY(rtr__recording_cat(cat)))
		rtr__emit_word(RTR__K_COUNTER_I64, 0, rtr__ticks(), (uintptr_t)name, (uintptr_t)cat,
			       (uint64_t)value);
}

/* Record a complete event with explicit times in the rtr_now_ns() clock. */
RTR_HOT void rtr_complete(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns)
{
	if (RTR__LIKELY(rtr__recording_cat(cat)))
		rtr__emit_word(RTR__K_COMPLETE, RTR__F_TS_NS, ts_ns, (uintptr_t)name,
			       (uintptr_t)cat, dur_ns);
}

/* RTR_SCOPE: the state a scope carries from its start to its end. */
struct rtr__scope {
	const struct rtr_site *site; /* NULL when the recorder was off at the start */
	uint64_t start;
};

/*
 * Under a filtered state: whether the site's category is recorded, from the decision
 * cached in the call site (shared by every thread), else from the thread's cache.
 */
static inline RTR__NOINSTR bool rtr__site_cached(int state, const struct rtr_site *site,
						 int *decision)
{
	/* relaxed: the word carries its own tag (the state it was decided under); a
	 * stale or another thread's tag is only a miss */
	unsigned verdict = (unsigned)(__atomic_load_n(decision, __ATOMIC_RELAXED) ^ state);

	if (RTR__LIKELY(verdict <= 1))
		return verdict;
	return rtr__site_lookup(state, site, decision);
}

/* decision: the call site's cached filter decision (see rtr__cat_slot.decision). */
static inline RTR__NOINSTR struct rtr__scope rtr__scope_begin(const struct rtr_site *site,
							      int *decision)
{
	struct rtr__scope s = {0, 0};
	int state = rtr__recording();

	if (state == 0)
		return s;
	if (RTR__UNLIKELY(state & RTR__STATE_FILTERED) && !rtr__site_cached(state, site, decision))
		return s;
	s.site = site;
	s.start = rtr__ticks();
	return s;
}

static inline RTR__NOINSTR void rtr__scope_end(struct rtr__scope *s)
{
	if (RTR__UNLIKELY(s->site != NULL) && rtr__recording())
		rtr__emit(RTR__K_SCOPE, s->start, (uintptr_t)s->site, rtr__ticks() - s->start);
}

#define RTR__CAT2(a, b) a##b
#define RTR__CAT(a, b)	RTR__CAT2(a, b)
#define RTR__UNIQ(p)	RTR__CAT(p, __COUNTER__)

/*
 * RTR_SCOPE(cat, name): a complete event ("X") from here to the end of the enclosing
 * block. cat and name are string literals (they initialize a static call site): each
 * is pasted after "", so anything else (a `const char *`, s.c_str() in C++, which a
 * static site would keep from its first call on) fails to compile. With
 * a category filter, the site also keeps the filter's decision for its category, so
 * a disabled scope costs a load and a branch more than a stopped recorder.
 */
#define RTR_SCOPE(cat, name) RTR__SCOPE(cat, name, RTR__UNIQ(rtr__site_))
#define RTR__SCOPE(cat, name, site)                                \
	static const struct rtr_site site = {"" cat, "" name};     \
	static int RTR__CAT(site, _decision);                      \
	struct rtr__scope RTR__CAT(site, _scope)                   \
		__attribute__((cleanup(rtr__scope_end), unused)) = \
			rtr__scope_begin(&site, &RTR__CAT(site, _decision))

#else /* RINGTRACE_DISABLE: every call compiles to nothing. */

static inline RTR__NOINSTR void rtr_config_init(struct rtr_config *cfg)
{
	__builtin_memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->version = RTR_CONFIG_VERSION;
}
static inline RTR__NOINSTR int rtr_start(const struct rtr_config *cfg)
{
	(void)cfg;
	return 0;
}
static inline RTR__NOINSTR int rtr_flush(void)
{
	return 0;
}
static inline RTR__NOINSTR int rtr_stop(void)
{
	return 0;
}
static inline RTR__NOINSTR int rtr_snapshot(const char *path)
{
	(void)path;
	return 0;
}
static inline RTR__NOINSTR void rtr_stats_get_sized(struct rtr_stats *out, size_t size)
{
	__builtin_memset(out, 0, size);
}
static inline RTR__NOINSTR void(rtr_stats_get)(struct rtr_stats *out)
{
	__builtin_memset(out, 0, sizeof(*out));
}
static inline RTR__NOINSTR const char *rtr_version(void)
{
	return RTR_VERSION_STRING;
}
static inline RTR__NOINSTR unsigned rtr_version_number(void)
{
	return RTR_VERSION_NUMBER;
}
static inline RTR__NOINSTR const char *rtr_io_name(int io_method)
{
	(void)io_method;
	return "disabled";
}
static inline RTR__NOINSTR uint64_t rtr_now_ns(void)
{
	return 0;
}
static inline RTR__NOINSTR const char *rtr_trace_path(void)
{
	return "";
}
static inline RTR__NOINSTR int rtr_profile_walk(rtr_profile_fn fn, void *user)
{
	(void)fn;
	(void)user;
	return -107; /* -ENOTCONN: no session aggregates */
}
static inline RTR__NOINSTR uint64_t rtr_flow_id(void)
{
	return 0;
}
static inline RTR__NOINSTR struct rtr_track *rtr_track_create(const struct rtr_track_desc *desc)
{
	(void)desc;
	return (struct rtr_track *)0;
}
/* The arguments are named but never evaluated: variables used only for tracing stay
 * "used" without costing anything. C names them in a call inside sizeof; C++ (whose argument
 * macros hold lambdas, not allowed in sizeof before C++20) in a lambda never called. */
#ifdef __cplusplus
extern "C++" {
template <typename... T> static inline void rtr__unused_args(const T &...)
{
}
}
#define RTR__UNUSED(...) ((void)[&] { rtr__unused_args(__VA_ARGS__); })
#else
int rtr__unused_args(int, ...); /* never defined: only named inside sizeof */
#define RTR__UNUSED(...) ((void)sizeof(rtr__unused_args(0, __VA_ARGS__)))
#endif
#define rtr_thread_name(n)			RTR__UNUSED(n)
#define rtr_begin(c, n)				RTR__UNUSED(c, n)
#define rtr_end(c, n)				RTR__UNUSED(c, n)
#define rtr_end_copy(c, n)			RTR__UNUSED(c, n)
#define rtr_pop(c)				RTR__UNUSED(c)
#define rtr_category_enabled(c)			(RTR__UNUSED(c), false)
#define rtr_scope_arg_i64(c, k, v)		RTR__UNUSED(c, k, v)
#define rtr_scope_arg_f64(c, k, v)		RTR__UNUSED(c, k, v)
#define rtr_scope_arg_str_copy(c, k, v)		RTR__UNUSED(c, k, v)
#define rtr_instant(c, n)			RTR__UNUSED(c, n)
#define rtr_counter_i64(c, n, v)		RTR__UNUSED(c, n, v)
#define rtr_counter_f64(c, n, v)		RTR__UNUSED(c, n, v)
#define rtr_complete(c, n, t, d)		RTR__UNUSED(c, n, t, d)
#define rtr_begin_args(c, n, a, k)		RTR__UNUSED(c, n, a, k)
#define rtr_instant_args(c, n, a, k)		RTR__UNUSED(c, n, a, k)
#define rtr_complete_args(c, n, t, d, a, k)	RTR__UNUSED(c, n, t, d, a, k)
#define rtr_begin_copy(c, n)			RTR__UNUSED(c, n)
#define rtr_instant_copy(c, n)			RTR__UNUSED(c, n)
#define rtr_complete_copy(c, n, t, d)		RTR__UNUSED(c, n, t, d)
#define RTR_SCOPE(cat, name)			RTR__UNUSED("" cat, "" name)
#define rtr_instant_scoped(c, n, s, a, k)	RTR__UNUSED(c, n, s, a, k)
#define rtr_counter_args(c, n, a, k)		RTR__UNUSED(c, n, a, k)
#define rtr_flow_start(c, n, i)			RTR__UNUSED(c, n, i)
#define rtr_flow_step(c, n, i)			RTR__UNUSED(c, n, i)
#define rtr_flow_end(c, n, i)			RTR__UNUSED(c, n, i)
#define rtr_async_begin(c, n, i, a, k)		RTR__UNUSED(c, n, i, a, k)
#define rtr_async_instant(c, n, i, a, k)	RTR__UNUSED(c, n, i, a, k)
#define rtr_async_end(c, n, i)			RTR__UNUSED(c, n, i)
#define rtr_track_clock_pair(t, a, b)		RTR__UNUSED(t, a, b)
#define rtr_track_clock_offset(t, o)		RTR__UNUSED(t, o)
#define rtr_track_complete(t, c, n, s, d, a, k) RTR__UNUSED(t, c, n, s, d, a, k)
#define rtr_track_instant(t, c, n, s, a, k)	RTR__UNUSED(t, c, n, s, a, k)
#define rtr_track_counter(t, c, n, s, a, k)	RTR__UNUSED(t, c, n, s, a, k)
#define rtr_track_flow_start(t, c, n, s, i)	RTR__UNUSED(t, c, n, s, i)
#define rtr_track_flow_end(t, c, n, s, i)	RTR__UNUSED(t, c, n, s, i)
#define rtr_process_label(l)			RTR__UNUSED(l)
#define rtr_process_sort_index(i)		RTR__UNUSED(i)
#define rtr_thread_sort_index(i)		RTR__UNUSED(i)
#define rtr_mem_alloc(d, a, b)			RTR__UNUSED(d, a, b)
#define rtr_mem_free(d, a)			RTR__UNUSED(d, a)
#define rtr_stack_sample(c, n, f, k)		RTR__UNUSED(c, n, f, k)
#define rtr_stack_sample_here(c, n)		RTR__UNUSED(c, n)

#endif /* RINGTRACE_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* RINGTRACE_EMIT_H */
