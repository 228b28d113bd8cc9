/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-omp: a first-party OMPT tool. An OpenMP runtime with OMPT (LLVM's
 * libomp) calls ompt_start_tool() as it initializes, when this library is named in
 * OMP_TOOL_LIBRARIES, preloaded or linked; the tool starts the recorder (unless the
 * program runs one already) and registers its callbacks. Each construct is a slice on
 * the thread that runs it, begun and ended through the library's event calls:
 *
 *	omp parallel		the encountering thread; args requested, team_size, code
 *				and, with libelf, function (the function holding it, named
 *				through the instrument library's symbol table, built as the
 *				tool starts)
 *	omp implicit task	every team thread; args index, team_size
 *	omp loop, omp sections, omp single, omp workshare, omp distribute, omp taskloop
 *				args iterations (the runtime's count), code
 *	omp barrier, omp implicit barrier, omp taskwait, omp taskgroup, omp reduction
 *				arg code, with the wait nested inside as "<name> wait"
 *	omp task create		an instant where an explicit task is created, arg code,
 *				starting a flow that ends in the task's "omp task" slice
 *	omp lock wait, omp critical wait, omp ordered wait	with RINGTRACE_OMP_MUTEX=1;
 *				arg code
 *
 * `code` is the construct's return address as the runtime gives it (codeptr_ra; left
 * out where it gives none), recorded as a number under rtr__arg_key_code: the writer
 * writes it "0x..." and, with libdw, adds "src", the construct's "file:line" from the
 * DWARF line tables, resolved on its thread (the instrument library's srcline.c,
 * offered at the tool's start; the instrument library's own, registered with
 * RINGTRACE_INSTRUMENT_LINES=1, is the same code and serves both).
 *
 * A parallel region's and an implicit task's arguments are the same every time that
 * region runs with that team (an implicit task's: at that index): each is made once,
 * as a site that holds them (ompt_sites.c, RTR__F_SITE_ARGS), and the slice's begin
 * is one record, as rtr_begin()'s.
 *
 * Every callback runs on the thread the event belongs to, so a slice never crosses
 * threads and the per-thread count of open slices (`open_depth`) is enough to end
 * what is left: at a thread's end and at the tool's finalize.
 *
 * The shutdown. LLVM reports a worker's last implicit barrier and implicit-task end
 * only when the runtime shuts down, which happens after the recorder's own atexit
 * handler stopped it. So the tool registers an atexit handler after starting the
 * recorder (atexit runs in reverse: ours first) that shuts the runtime down through
 * ompt_finalize_tool(): the workers report their ends and exit while the recorder
 * still runs.
 *
 * With a runtime without OMPT (GCC's libgomp) nothing calls ompt_start_tool(): the
 * constructor says so on stderr, once.
 */
#include "omp/ompt_callbacks.h"
#include "omp/ompt_sites.h"
#include "producer/events.h"

#include <ringtrace.h>

#if defined(RTR_HAVE_SYMTAB)
#include "instrument/symtab.h"
#endif
#if defined(RTR_HAVE_LIBDW)
#include "instrument/srcline.h"
#endif

#include <omp-tools.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#define CAT rtr__omp_cat

/* Set by ompt_initialize on the thread that initializes the runtime, before any team
 * thread exists; read-only afterwards. */
static ompt_finalize_tool_t finalize_tool;

/* Threads numbered in the order they begin. Relaxed: only the numbers' uniqueness
 * matters, nothing is published with them. */
static atomic_uint thread_count;

/* Set when the runtime called ompt_start_tool(). Relaxed: read by the constructor of
 * the same load, on the same thread or after the runtime's own initialization. */
static atomic_int tool_called;

/* Slices this tool holds open on the thread. 4 bytes of static TLS, as the ring
 * pointer's 8 (the tool is dlopen()ed, where static TLS is scarce): no call to
 * __tls_get_addr() on each callback. */
static _Thread_local unsigned open_depth __attribute__((tls_model("initial-exec")));

static void slice_begin(const char *name, const struct rtr_arg *args, unsigned n)
{
	if (n == 0)
		rtr_begin(CAT, name); /* inline: no call into the library's general path */
	else
		rtr_begin_args(CAT, name, args, n);
	open_depth++;
}

/* slice_begin() at a site that holds the slice's name and arguments: one record. */
static void site_begin(const struct rtr__omp_site *site)
{
	rtr__begin_site_args(&site->sa);
	open_depth++;
}

static void slice_end(const char *name)
{
	if (open_depth == 0)
		return; /* begun before the tool was running */
	open_depth--;
	rtr_end(CAT, name);
}

static void end_all_open(void)
{
	while (open_depth > 0) {
		open_depth--;
		rtr_pop(CAT);
	}
}

/* A construct's code argument: its return address, as a number the writer writes
 * in hex with its source line (rtr__arg_key_code). */
#define CODE_ARG(codeptr_ra) RTR_ARG_U64(rtr__arg_key_code, (uintptr_t)(codeptr_ra))

/* slice_begin() with the code argument after args[0..n) (room for it at args[n]),
 * where the runtime gave one. */
static void slice_begin_code(const char *name, struct rtr_arg *args, unsigned n,
			     const void *codeptr_ra)
{
	if (codeptr_ra != NULL)
		args[n++] = CODE_ARG(codeptr_ra);
	slice_begin(name, args, n);
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	unsigned n = atomic_fetch_add_explicit(&thread_count, 1, memory_order_relaxed);
	thread_data->value = n;
	if (type != ompt_thread_worker)
		return;
	char name[32];
	snprintf(name, sizeof(name), "OpenMP thread %u", n);
	rtr_thread_name(name);
}

static void on_thread_end(ompt_data_t *thread_data)
{
	(void)thread_data;
	end_all_open();
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
			      const ompt_frame_t *encountering_task_frame,
			      ompt_data_t *parallel_data, unsigned int requested_parallelism,
			      int flags, const void *codeptr_ra)
{
	(void)encountering_task_data, (void)encountering_task_frame, (void)flags;
	parallel_data->value = 0;
	const struct rtr__omp_site *site =
		rtr__omp_site(RTR_OMP_SITE_PARALLEL, (uintptr_t)codeptr_ra, requested_parallelism);
	if (RTR__LIKELY(site != NULL)) {
		site_begin(site);
		return;
	}
	/* the sites' table is full: the arguments go with the event */
	const char *function = rtr__omp_function((uintptr_t)codeptr_ra);
	struct rtr_arg args[] = {RTR_ARG_U64("requested", requested_parallelism),
				 CODE_ARG(codeptr_ra), RTR_ARG_STR("function", function)};
	slice_begin(rtr__omp_parallel, args, function != NULL ? 3 : 2);
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
			    int flags, const void *codeptr_ra)
{
	(void)parallel_data, (void)encountering_task_data, (void)flags, (void)codeptr_ra;
	slice_end(rtr__omp_parallel);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
			     ompt_data_t *task_data, unsigned int actual_parallelism,
			     unsigned int index, int flags)
{
	(void)parallel_data;
	if (flags & ompt_task_initial)
		return; /* the program's initial task: its end comes only at the runtime's end */
	if (endpoint == ompt_scope_begin) {
		task_data->value = 0;
		/* thread 0 begins its implicit task inside its own "omp parallel" slice */
		if (index == 0 && open_depth > 0)
			rtr_scope_arg_i64(CAT, "team_size", actual_parallelism);
		const struct rtr__omp_site *site =
			rtr__omp_site(RTR_OMP_SITE_IMPLICIT, index, actual_parallelism);
		if (RTR__LIKELY(site != NULL)) {
			site_begin(site);
			return;
		}
		struct rtr_arg args[] = {RTR_ARG_U64("index", index),
					 RTR_ARG_U64("team_size", actual_parallelism)};
		slice_begin(rtr__omp_implicit_task, args, 2);
	} else {
		slice_end(rtr__omp_implicit_task);
	}
}

static const char *work_name(ompt_work_t type)
{
	switch (type) {
	case ompt_work_loop:
		return "omp loop";
	case ompt_work_sections:
		return "omp sections";
	case ompt_work_single_executor:
	case ompt_work_single_other:
		return "omp single";
	case ompt_work_workshare:
		return "omp workshare";
	case ompt_work_distribute:
		return "omp distribute";
	case ompt_work_taskloop:
		return "omp taskloop";
	default:
		return "omp work";
	}
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
		    ompt_data_t *task_data, uint64_t count, const void *codeptr_ra)
{
	(void)parallel_data, (void)task_data;
	const char *name = work_name(wstype);
	if (endpoint == ompt_scope_begin) {
		int single =
			wstype == ompt_work_single_executor || wstype == ompt_work_single_other;
		struct rtr_arg args[3] = {
			RTR_ARG_U64("iterations", count),
			RTR_ARG_BOOL("executor", wstype != ompt_work_single_other)};
		slice_begin_code(name, args, single ? 2 : 1, codeptr_ra);
	} else {
		slice_end(name);
	}
}

/* The region's name, and its wait's after it (the second string). */
static const char *const sync_names[][2] = {
	[ompt_sync_region_barrier] = {"omp barrier", "omp barrier wait"},
	[ompt_sync_region_barrier_implicit] = {"omp implicit barrier", "omp implicit barrier wait"},
	[ompt_sync_region_barrier_explicit] = {"omp barrier", "omp barrier wait"},
	[ompt_sync_region_barrier_implementation] = {"omp implicit barrier",
						     "omp implicit barrier wait"},
	[ompt_sync_region_taskwait] = {"omp taskwait", "omp taskwait wait"},
	[ompt_sync_region_taskgroup] = {"omp taskgroup", "omp taskgroup wait"},
	[ompt_sync_region_reduction] = {"omp reduction", "omp reduction wait"},
	[ompt_sync_region_barrier_implicit_workshare] = {"omp implicit barrier",
							 "omp implicit barrier wait"},
	[ompt_sync_region_barrier_implicit_parallel] = {"omp implicit barrier",
							"omp implicit barrier wait"},
	[ompt_sync_region_barrier_teams] = {"omp teams barrier", "omp teams barrier wait"},
};

static const char *sync_name(ompt_sync_region_t kind, int wait)
{
	if ((unsigned)kind >= sizeof(sync_names) / sizeof(sync_names[0]) || !sync_names[kind][0])
		return wait ? "omp sync wait" : "omp sync";
	return sync_names[kind][wait];
}

static void on_sync(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
		    ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra,
		    int wait)
{
	(void)parallel_data, (void)task_data;
	const char *name = sync_name(kind, wait);
	struct rtr_arg args[1];
	if (endpoint != ompt_scope_begin)
		slice_end(name);
	else if (wait) /* inside its region's slice, which has the code */
		slice_begin(name, NULL, 0);
	else
		slice_begin_code(name, args, 0, codeptr_ra);
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			   ompt_data_t *parallel_data, ompt_data_t *task_data,
			   const void *codeptr_ra)
{
	on_sync(kind, endpoint, parallel_data, task_data, codeptr_ra, 0);
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
				ompt_data_t *parallel_data, ompt_data_t *task_data,
				const void *codeptr_ra)
{
	on_sync(kind, endpoint, parallel_data, task_data, codeptr_ra, 1);
}

/* An explicit task's data: its flow id, with STARTED set once a thread began it. */
#define TASK_STARTED (UINT64_C(1) << 63)

static void on_task_create(ompt_data_t *encountering_task_data,
			   const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			   int flags, int has_dependences, const void *codeptr_ra)
{
	(void)encountering_task_data, (void)encountering_task_frame, (void)has_dependences;
	if (!(flags & ompt_task_explicit)) {
		new_task_data->value = 0;
		return;
	}
	uint64_t id = rtr_flow_id() & ~TASK_STARTED;
	new_task_data->value = id;
	struct rtr_arg args[] = {RTR_ARG_BOOL("undeferred", flags & ompt_task_undeferred),
				 CODE_ARG(codeptr_ra)};
	rtr_instant_args(CAT, "omp task create", args, codeptr_ra != NULL ? 2 : 1);
	rtr_flow_start(CAT, "omp task", id);
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			     ompt_data_t *next_task_data)
{
	/* A tied task that waits runs others inside its wait: they nest, and the task
	 * it left goes on in the same slice when it resumes. */
	if (prior_task_data && (prior_task_data->value & TASK_STARTED) &&
	    (prior_task_status == ompt_task_complete ||
	     prior_task_status == ompt_task_early_fulfill ||
	     prior_task_status == ompt_task_cancel)) {
		prior_task_data->value = 0;
		slice_end("omp task");
	}
	if (next_task_data && next_task_data->value != 0 &&
	    !(next_task_data->value & TASK_STARTED)) {
		uint64_t id = next_task_data->value;
		next_task_data->value = id | TASK_STARTED;
		slice_begin("omp task", NULL, 0);
		rtr_flow_end(CAT, "omp task", id);
	}
}

static const char *mutex_wait_name(ompt_mutex_t kind)
{
	switch (kind) {
	case ompt_mutex_lock:
		return "omp lock wait";
	case ompt_mutex_critical:
		return "omp critical wait";
	case ompt_mutex_ordered:
		return "omp ordered wait";
	default:
		return NULL; /* test and nested locks: acquired is not always reported */
	}
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
			     ompt_wait_id_t wait_id, const void *codeptr_ra)
{
	(void)hint, (void)impl, (void)wait_id;
	const char *name = mutex_wait_name(kind);
	struct rtr_arg args[1];
	if (name)
		slice_begin_code(name, args, 0, codeptr_ra);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
	(void)wait_id, (void)codeptr_ra;
	const char *name = mutex_wait_name(kind);
	if (name)
		slice_end(name);
}

/* Runs before the recorder's own atexit handler (registered before this one). */
static void shut_runtime_down(void)
{
	if (finalize_tool)
		finalize_tool();
}

static int mutex_asked(void)
{
	const char *v = getenv("RINGTRACE_OMP_MUTEX");
	if (v == NULL || *v == '\0' || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "1") != 0)
		fprintf(stderr, "ringtrace: RINGTRACE_OMP_MUTEX=\"%s\" is not 0 or 1; taken as 1\n",
			v);
	return 1;
}

static int ompt_initialize(ompt_function_lookup_t lookup, int initial_device_num,
			   ompt_data_t *tool_data)
{
	(void)initial_device_num, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (set == NULL)
		return 0;
	finalize_tool = (ompt_finalize_tool_t)lookup("ompt_finalize_tool");
#if defined(RTR_HAVE_SYMTAB)
	rtr__symtab_refresh(); /* the functions that regions' code addresses name */
#endif
#if defined(RTR_HAVE_LIBDW)
	/* the code arguments' source lines, unless a resolver is registered already */
	rtr__srcline_offer(rtr__instrument_srcline);
#endif
	rtr__start_module(NULL); /* -EBUSY: the program's own or an autostarted session */
	atexit(shut_runtime_down);

#define SET(event, fn) set(event, (ompt_callback_t)(fn));
	RTR_OMPT_CALLBACKS(SET)
	if (mutex_asked()) {
		SET(ompt_callback_mutex_acquire, on_mutex_acquire)
		SET(ompt_callback_mutex_acquired, on_mutex_acquired)
	}
#undef SET
	return 1; /* keep the tool */
}

/* The runtime's last call: the slices still open on this thread end here. */
static void ompt_finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
	end_all_open();
	finalize_tool = NULL;
}

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						 const char *runtime_version);
EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						 const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = {ompt_initialize, ompt_finalize, {0}};
	atomic_store_explicit(&tool_called, 1, memory_order_relaxed);
	return &result;
}

/* An OpenMP runtime with OMPT is LLVM's (or Intel's): it exports __kmpc_fork_call and
 * calls ompt_start_tool() when it initializes, maybe later than this. Any other
 * runtime (GCC's libgomp) never will. */
__attribute__((constructor)) static void check_runtime(void)
{
	if (atomic_load_explicit(&tool_called, memory_order_relaxed) ||
	    dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL)
		return;
	fprintf(stderr, "ringtrace: no OpenMP runtime with OMPT (LLVM's libomp) is loaded; "
			"libringtrace-omp records nothing of OpenMP\n");
}
