/* SPDX-License-Identifier: MIT */
/*
 * What each rank of hybrid_prog.c does, which tests/test_hybrid.c checks. The inner
 * teams' size differs from the outer team's, so that an implicit task's team size
 * tells which of the nested regions it belongs to.
 */
#ifndef RTR_TEST_HYBRID_SHAPE_H
#define RTR_TEST_HYBRID_SHAPE_H

#define STEPS	   2
#define OUTER	   2
#define INNER	   3
#define TEAM	   3
#define LOOP_N	   600
#define TASKS	   5
#define KK_TEAM	   2
#define COPY_BYTES 4096

#endif
