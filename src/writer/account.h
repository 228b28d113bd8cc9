/* SPDX-License-Identifier: MIT */
/*
 * The session's accounting and the counters of rtr_stats_get() (account.c).
 */
#ifndef RTR_WRITER_ACCOUNT_H
#define RTR_WRITER_ACCOUNT_H

#include "writer/writer_internal.h"

/* r's reader state for this session, attached on first use: rings made before the
 * session start from their counters at that moment. */
struct rtr__reader *rtr__reader_attach(struct rtr__writer *w, struct rtr__ring *r);
/* Add ring r's share of the session to t. */
void rtr__account_ring(struct rtr__writer *w, struct rtr__ring *r, struct rtr__totals *t);
/* Publish the session's counters (final: after the stop's wait). */
void rtr__writer_account(struct rtr__writer *w, int final);

#endif
