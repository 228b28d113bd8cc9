/* SPDX-License-Identifier: MIT */
/* What the session's files share: the configuration, the launcher's environment. */
#ifndef RTR_SESSION_SESSION_H
#define RTR_SESSION_SESSION_H

#include "writer/writer.h"

#include <ringtrace.h>

#include <stdint.h>
#include <sys/types.h>

/* config.c */

/* Copy cfg into s (strings too), validated; expand the path pattern; resolve
 * RTR_COMPRESS_AUTO to NONE or GZIP and RTR_FORMAT_AUTO to JSON or PERFETTO by the
 * path's suffix. 0 or -EINVAL. */
int rtr__session_config(struct rtr__session *s, const struct rtr_config *cfg);
/* The environment variable of option i: the option table's, then those read outside
 * it (autostart, the instrument library); NULL past the last. */
const char *rtr__config_option_env(size_t i);
/* RINGTRACE_CLOCK_OFFSET_NS (clock/clock.h): 0 when unset, or bad (with a warning). */
int64_t rtr__config_clock_offset_ns(void);
/* The rank of this process from the launcher's environment, or -1; world size too. */
long rtr__env_rank(long *world_size);

#endif
