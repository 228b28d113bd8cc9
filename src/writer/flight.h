/* SPDX-License-Identifier: MIT */
/*
 * Flight mode: the window and its snapshots (flight.c).
 */
#ifndef RTR_WRITER_FLIGHT_H
#define RTR_WRITER_FLIGHT_H

#include "writer/writer_internal.h"

/* Make the window (rtr__files_start()). 0 or -ENOMEM. */
int rtr__flight_start(struct rtr__writer *w);
void rtr__flight_fini(struct rtr__writer *w, int how);
/* The full chunk goes to the window, a fresh one begins. */
void rtr__flight_keep(struct rtr__writer *w);
/* Write the window as a trace at path (NULL: the pattern's next number). 0 or -errno. */
int rtr__flight_snapshot(struct rtr__writer *w, const char *path);

#endif
