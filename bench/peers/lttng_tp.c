/* SPDX-License-Identifier: MIT */
/* The probes of lttng_tp.h, linked statically into peer_lttng. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
