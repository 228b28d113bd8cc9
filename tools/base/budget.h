/* SPDX-License-Identifier: MIT */
/*
 * The state budget of a tool (budget.c): what it keeps for one file is bounded
 * whatever the input, shared by the tables of the trace sources (a .pftrace's
 * sequences and tracks) and of the library (threads, flows).
 */
#ifndef RTR_TOOLS_BUDGET_H
#define RTR_TOOLS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The state a tool keeps for one file, bounded whatever the input (a million
 * threads, a million unterminated B events, a million open flows): at most
 * STATE_MAX_ITEMS items and about STATE_MAX_BYTES bytes of them, so that a tool's
 * memory stays far below 64 MiB. What is refused past the bound is counted, and the
 * tool reports a state-limit.
 */
#define STATE_MAX_ITEMS ((uint64_t)1 << 20)
#define STATE_MAX_BYTES ((uint64_t)24 << 20)

struct state_budget {
	uint64_t items, bytes;
	uint64_t refused; /* items not kept */
};

/* Room for one more item of about bytes? Counts it when there is, or the refusal. */
bool budget_take(struct state_budget *b, uint64_t bytes);

void budget_give(struct state_budget *b, uint64_t bytes);

#endif
