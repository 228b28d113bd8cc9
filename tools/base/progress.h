/* SPDX-License-Identifier: MIT */
/*
 * A progress bar for the tools that read large traces, on the stream the command
 * names (standard error). It is drawn only when that stream is a terminal and the
 * work has taken more than a second, at most ten times a second, and erased when
 * the work is done; so scripts, pipes and quick runs never see it.
 *
 * Every function accepts NULL and then does nothing, so a module can report
 * progress without knowing whether anyone is watching.
 *
 * Thread safety: one bar per thread.
 */
#ifndef RTR_TOOLS_PROGRESS_H
#define RTR_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *tty;    /* where it is drawn */
	bool enabled; /* tty is a terminal */
	bool drawn;   /* something is on the line */
	const char *label;
	uint64_t total; /* bytes expected; 0 when unknown (a pipe) */
	uint64_t done;
	uint64_t base; /* bytes of the inputs finished before the current one */
	double start, last;
};

/* Start a bar labelled label (kept by pointer), drawn on tty when it is a terminal
 * (the commands pass stderr; NULL: never drawn). */
void progress_init(struct progress *p, const char *label, FILE *tty);

/* Add the size of one more input to the total (0: unknown). */
void progress_total(struct progress *p, uint64_t bytes);

/* The current input has read bytes so far; redraw if it is time. */
void progress_update(struct progress *p, uint64_t bytes);

/* The current input is finished; the next one counts from its end. */
void progress_next_input(struct progress *p);

/* Erase the bar, if it was drawn. */
void progress_finish(struct progress *p);

#endif /* RTR_TOOLS_PROGRESS_H */
