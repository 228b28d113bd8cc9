/* SPDX-License-Identifier: MIT */
/*
 * The files of a session (files.c).
 */
#ifndef RTR_WRITER_FILES_H
#define RTR_WRITER_FILES_H

#include "writer/writer_internal.h"

/* Set up rotation or the flight window for the session (rtr__writer_start(), after
 * the sink is open and the head written). 0 or -errno. */
int rtr__files_start(struct rtr__writer *w);
/* Free what they hold (how: RTR__FINI_*). */
void rtr__files_fini(struct rtr__writer *w, int how);
/* Stream mode with rotation: end this segment, begin the next. */
void rtr__files_rotate(struct rtr__writer *w);
/* Close the finished segments still held for their page cache (the stop). */
void rtr__files_close_old(struct rtr__writer *w);

#endif
