/* SPDX-License-Identifier: MIT */
/* The instrument library's source lines (libdw), for rtr__srcline_set(). */
#ifndef RTR_INSTRUMENT_SRCLINE_H
#define RTR_INSTRUMENT_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

/* "file:line" of the code at addr into out (at most cap bytes); its length, or 0.
 * Writer thread only (serialized inside). */
size_t rtr__instrument_srcline(uint64_t addr, char *out, size_t cap);

#endif
