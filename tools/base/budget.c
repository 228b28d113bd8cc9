/* SPDX-License-Identifier: MIT */
/* The state budget of a tool: see budget.h. */
#include "budget.h"

bool budget_take(struct state_budget *b, uint64_t bytes)
{
	if (b->items >= STATE_MAX_ITEMS || bytes > STATE_MAX_BYTES - b->bytes) {
		b->refused++;
		return false;
	}
	b->items++;
	b->bytes += bytes;
	return true;
}

void budget_give(struct state_budget *b, uint64_t bytes)
{
	b->items -= b->items > 0;
	b->bytes -= bytes < b->bytes ? bytes : b->bytes;
}
