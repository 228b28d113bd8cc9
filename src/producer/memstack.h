/* SPDX-License-Identifier: MIT */
/* Memory events and stack samples (src/producer/memstack.c): what the recorder calls. */
#ifndef RTR_MEMSTACK_H
#define RTR_MEMSTACK_H

#include <ringtrace.h>

/* Make backtrace(3) ready, once per process, so that rtr_stack_sample_here() never
 * does its first-call setup inside a traced call. rtr_start() calls it. */
void rtr__stack_warm(void);

#endif
