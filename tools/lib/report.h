/* SPDX-License-Identifier: MIT */
/*
 * What the reports of `ringtrace stats` and `ringtrace diff` share: durations for
 * people, text made safe for a terminal, and the pieces of a JSON object written
 * key by key into a buf (json.h).
 *
 * The JSON writers take `first`, true before the object's first key: each key after
 * the first is preceded by a comma. They return 0, or -1 when out of memory.
 *
 * Thread safety: none needed; no state.
 */
#ifndef RTR_TOOLS_REPORT_H
#define RTR_TOOLS_REPORT_H

#include "json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ns for people: "812 ns", "1.234 us", "12.35 ms", "123.5 s", four digits at most.
 * Writes into out (32 bytes are enough) and returns it. */
const char *report_ns(char *out, size_t size, uint64_t ns);

/* s on f (the report's stream), a '?' for each byte that would move a terminal's
 * cursor. */
void report_clean(FILE *f, const char *s, size_t len);

/* total / count rounded to the nearest (halves up); 0 when count is 0. */
uint64_t report_mean(uint64_t total, uint64_t count);

/* A JSON string. */
int report_jstr(struct buf *b, const char *s, size_t len);

/* A key and its colon. */
int report_jkey(struct buf *b, bool *first, const char *key);

/* A key and an integer, a bool, or a double (the shortest text that reads back as v;
 * null for NaN and infinities). */
int report_ju64(struct buf *b, bool *first, const char *key, uint64_t v);
int report_ji64(struct buf *b, bool *first, const char *key, int64_t v);
int report_jbool(struct buf *b, bool *first, const char *key, bool v);
int report_jf64(struct buf *b, bool *first, const char *key, double v);

#endif /* RTR_TOOLS_REPORT_H */
