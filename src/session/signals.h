/* SPDX-License-Identifier: MIT */
/*
 * Signals the recorder handles for the program (cfg.signals, cfg.snapshot_signal).
 *
 * A fatal signal (RINGTRACE_SIGNALS) finishes the trace, then takes its course: the
 * handler asks the writer to drain the rings and write the end marker (naming the
 * signal), waits for it at most cfg.stop_timeout_ms, puts back the disposition the
 * program had, and raises the signal again, so the process ends as it would have
 * (status 143 for SIGTERM, a core for SIGSEGV). A handler the program had installed
 * is chained: the trace is flushed instead of finished (the program may go on), then
 * that handler runs.
 *
 * The snapshot signal (RINGTRACE_SNAPSHOT_SIGNAL) only wakes the writer, which takes
 * a snapshot (flight mode) or ends the segment (stream mode with rotation).
 */
#ifndef RTR_SESSION_SIGNALS_H
#define RTR_SESSION_SIGNALS_H

#include "session/signal_names.h"

#include <stddef.h>
#include <stdint.h>

/* Install the session's handlers (rtr_start(), under its lock, once the writer runs):
 * the fatal signals and the snapshot signal (0: none); a fatal signal's handler waits
 * at most timeout_ms (0: no limit) for the writer to finish the file. A fatal signal
 * the program ignores (SIG_IGN), or whose default action does not end the process, is
 * left alone and said so on stderr, once. 0 or -errno (nothing installed). */
int rtr__signals_install(struct rtr__sigset fatal, int snapshot_sig, unsigned timeout_ms);
/* Put back what the program had, where ours is still installed (a handler the program
 * set meanwhile stays); from then on a handler still running passes the signal on.
 * rtr_stop(), under its lock, before the writer stops; and a child after fork(), which
 * has no session (until then its handlers see another pid and pass the signal on). */
void rtr__signals_uninstall(void);

#endif
