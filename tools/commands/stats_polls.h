/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats`: the folded polls (stats_polls.c), from the tally's (tally_polls.h).
 */
#ifndef RTR_TOOLS_STATS_POLLS_H
#define RTR_TOOLS_STATS_POLLS_H

#include "tally_sum.h"

/* The "polls folded" table on stdout; nothing when the trace has no folded slice. */
void stats_print_polls(const struct tally_sum *c, const struct tally_options *opt);
/* Its JSON member, "polls":{...}, into b. 0, or -1 out of memory. */
int stats_json_polls(const struct tally_sum *c, const struct tally_options *opt, struct buf *b);

#endif
