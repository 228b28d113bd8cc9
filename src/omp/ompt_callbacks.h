/* SPDX-License-Identifier: MIT */
/*
 * The OMPT callbacks libringtrace-omp registers (but the mutex ones, which
 * RINGTRACE_OMP_MUTEX asks for): X(event, function) for each, with the function's
 * name as the tool (ompt.c) has it. bench/omp_null_tool.c registers the same ones,
 * empty, through this list, so that the runtime does the same OMPT work for both.
 */
#ifndef RTR_OMP_OMPT_CALLBACKS_H
#define RTR_OMP_OMPT_CALLBACKS_H

#define RTR_OMPT_CALLBACKS(X)                                  \
	X(ompt_callback_thread_begin, on_thread_begin)         \
	X(ompt_callback_thread_end, on_thread_end)             \
	X(ompt_callback_parallel_begin, on_parallel_begin)     \
	X(ompt_callback_parallel_end, on_parallel_end)         \
	X(ompt_callback_implicit_task, on_implicit_task)       \
	X(ompt_callback_work, on_work)                         \
	X(ompt_callback_sync_region, on_sync_region)           \
	X(ompt_callback_sync_region_wait, on_sync_region_wait) \
	X(ompt_callback_reduction, on_sync_region)             \
	X(ompt_callback_task_create, on_task_create)           \
	X(ompt_callback_task_schedule, on_task_schedule)

#endif
