/* SPDX-License-Identifier: MIT */
/*
 * An OMPT tool that records nothing: it registers the callbacks libringtrace-omp
 * registers (src/omp/ompt_callbacks.h, RINGTRACE_OMP_MUTEX unset) and does only what the
 * runtime asks of a tool in them (a task's data set at its creation). Run in its place
 * (bench/omp_cost.sh), it leaves the runtime's own OMPT work in the figures and takes
 * the recording out: the difference is what libringtrace-omp itself costs.
 */
#include "omp/ompt_callbacks.h"

#include <omp-tools.h>

#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	(void)type;
	thread_data->value = 0;
}

static void on_thread_end(ompt_data_t *thread_data)
{
	(void)thread_data;
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
			      const ompt_frame_t *encountering_task_frame,
			      ompt_data_t *parallel_data, unsigned int requested_parallelism,
			      int flags, const void *codeptr_ra)
{
	(void)encountering_task_data, (void)encountering_task_frame;
	(void)requested_parallelism, (void)flags, (void)codeptr_ra;
	parallel_data->value = 0;
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
			    int flags, const void *codeptr_ra)
{
	(void)parallel_data, (void)encountering_task_data, (void)flags, (void)codeptr_ra;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
			     ompt_data_t *task_data, unsigned int actual_parallelism,
			     unsigned int index, int flags)
{
	(void)parallel_data, (void)actual_parallelism, (void)index, (void)flags;
	if (endpoint == ompt_scope_begin)
		task_data->value = 0;
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
		    ompt_data_t *task_data, uint64_t count, const void *codeptr_ra)
{
	(void)wstype, (void)endpoint, (void)parallel_data, (void)task_data, (void)count;
	(void)codeptr_ra;
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			   ompt_data_t *parallel_data, ompt_data_t *task_data,
			   const void *codeptr_ra)
{
	(void)kind, (void)endpoint, (void)parallel_data, (void)task_data, (void)codeptr_ra;
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
				ompt_data_t *parallel_data, ompt_data_t *task_data,
				const void *codeptr_ra)
{
	(void)kind, (void)endpoint, (void)parallel_data, (void)task_data, (void)codeptr_ra;
}

static void on_task_create(ompt_data_t *encountering_task_data,
			   const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			   int flags, int has_dependences, const void *codeptr_ra)
{
	(void)encountering_task_data, (void)encountering_task_frame, (void)flags;
	(void)has_dependences, (void)codeptr_ra;
	new_task_data->value = 0;
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			     ompt_data_t *next_task_data)
{
	(void)prior_task_data, (void)prior_task_status, (void)next_task_data;
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
	(void)initial_device_num, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (set == NULL)
		return 0;
#define SET(event, fn) set(event, (ompt_callback_t)(fn));
	RTR_OMPT_CALLBACKS(SET)
#undef SET
	return 1;
}

static void finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
}

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						 const char *runtime_version);
EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						 const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = {initialize, finalize, {0}};
	return &result;
}
