/* SPDX-License-Identifier: MIT */
/*
 * Opening a trace file (trace_file.c), for the session's first file and the writer's
 * segments and snapshots.
 */
#ifndef RTR_SINK_TRACE_FILE_H
#define RTR_SINK_TRACE_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Open a trace file at path as rtr_start() does: a regular file under a new name,
 * tmp_path (tmp_size bytes), to be renamed to path once its head is in; tmp_path ""
 * when written in place, then *truncate says whether to cut it to 0 first. *fd gets
 * the descriptor. A FIFO with no reader is waited for up to wait_ms. 0 or -errno. */
int rtr__trace_open(const char *path, pid_t pid, unsigned wait_ms, int *fd, char *tmp_path,
		    size_t tmp_size, int *truncate);

#endif
