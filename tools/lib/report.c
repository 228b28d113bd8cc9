/* SPDX-License-Identifier: MIT */
/*
 * The reports' shared pieces (see report.h).
 */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void report_clean(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		putc(ch < 0x20 || ch == 0x7f ? '?' : ch, f);
	}
}

const char *report_ns(char *out, size_t size, uint64_t ns)
{
	static const char *const units[] = {"ns", "us", "ms", "s"};
	double v = (double)ns;
	int u = 0;

	if (ns < 1000) {
		snprintf(out, size, "%" PRIu64 " ns", ns);
		return out;
	}
	while (u < 3 && v >= 999.95) {
		v /= 1000;
		u++;
	}
	snprintf(out, size,
		 v >= 99.995   ? "%.1f %s"
		 : v >= 9.9995 ? "%.2f %s"
			       : "%.3f %s",
		 v, units[u]);
	return out;
}

uint64_t report_mean(uint64_t total, uint64_t count)
{
	return count == 0 ? 0 : total / count + (total % count * 2 >= count ? 1 : 0);
}

int report_jstr(struct buf *b, const char *s, size_t len)
{
	return json_put_string(b, s, len) < 0 ? -1 : 0;
}

int report_jkey(struct buf *b, bool *first, const char *key)
{
	if (!*first && buf_putc(b, ','))
		return -1;
	*first = false;
	return report_jstr(b, key, strlen(key)) || buf_putc(b, ':');
}

int report_ju64(struct buf *b, bool *first, const char *key, uint64_t v)
{
	return report_jkey(b, first, key) || buf_put_u64(b, v);
}

int report_ji64(struct buf *b, bool *first, const char *key, int64_t v)
{
	return report_jkey(b, first, key) || buf_put_i64(b, v);
}

int report_jbool(struct buf *b, bool *first, const char *key, bool v)
{
	return report_jkey(b, first, key) || buf_puts(b, v ? "true" : "false");
}

int report_jf64(struct buf *b, bool *first, const char *key, double v)
{
	char num[40];

	/* the shortest text that reads back as v; "null" for NaN and infinities */
	return report_jkey(b, first, key) ||
	       buf_put(b, num, (size_t)(rtr__jsontext_f64(num, v) - num));
}
