/* SPDX-License-Identifier: MIT */
/*
 * The file around the lines (framing.c): the head and the end marker through the
 * format, the provisional close of every chunk handed to the sink.
 */
#ifndef RTR_WRITER_FRAMING_H
#define RTR_WRITER_FRAMING_H

#include "writer/writer_internal.h"

/* Hand the current chunk to the sink (closed provisionally, if the file is regular)
 * and take the next. */
void rtr__out_submit(struct rtr__writer *w);
/* The chunk is about to go (to the sink or the flight window): the format finishes
 * what it holds back in it (rtr__format.seal). */
void rtr__out_seal(struct rtr__writer *w);
/* After the last write failed for room: close the file where the device takes it. */
void rtr__out_close_after_error(struct rtr__writer *w);
/* The file's head through the format: the start marker and what every file names. */
void rtr__out_begin_file(struct rtr__writer *w);
/* The file's end through the format: the end marker (final: 0 the provisional close
 * at the end of every chunk, in the room out_reserve() keeps; 1 the last one). */
void rtr__out_end_file(struct rtr__writer *w, int final);

#endif
