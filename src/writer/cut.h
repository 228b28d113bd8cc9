/* SPDX-License-Identifier: MIT */
/*
 * What a cut writes (cut.c).
 */
#ifndef RTR_WRITER_CUT_H
#define RTR_WRITER_CUT_H

#include "writer/writer_internal.h"

/* End (RTR__CUT_END, RTR__CUT_OPEN) or begin again (RTR__CUT_BEGIN) what is open,
 * within `budget` bytes of the chunk; beginning, it names the threads first. Returns
 * the lines; what could not be ended is counted in cut_lost. */
uint64_t rtr__cut_lines(struct rtr__writer *w, int what, size_t budget);
/* rtr__cut_lines(w, what, SIZE_MAX): the lines. */
uint64_t rtr__cut_end_open(struct rtr__writer *w, int what);
/* The B lines of the held slices (slices.h), still open, that the file does not show
 * (of ring `only`, or of every ring), within `budget` bytes of the chunk (SIZE_MAX:
 * no limit, else each line's most is checked first and a page's padding allowed).
 * Returns the held slices left out for want of room. */
uint64_t rtr__cut_show_held(struct rtr__writer *w, struct rtr__ring *only, size_t budget);
/* The most the lines that close the file now take (end marker, ends of what is open). */
uint64_t rtr__cut_closing_bytes(struct rtr__writer *w);

#endif
