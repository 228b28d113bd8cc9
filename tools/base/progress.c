/* SPDX-License-Identifier: MIT */
/*
 * Progress bar of the tools (see progress.h). One clock read per update; the
 * readers update once per 64 KiB block, so the bar costs nothing measurable.
 */
#include "progress.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 30

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_init(struct progress *p, const char *label, FILE *tty)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->tty = tty;
	p->enabled = tty != NULL && isatty(fileno(tty)) == 1;
	p->label = label;
	p->start = p->last = now_s();
}

void progress_total(struct progress *p, uint64_t bytes)
{
	if (p == NULL)
		return;
	p->total += bytes;
}

static void draw(struct progress *p, double t)
{
	double mib = (double)p->done / (1024.0 * 1024.0);
	double rate = mib / (t - p->start);

	if (p->total > 0) {
		double frac = (double)p->done / (double)p->total;
		char bar[BAR_WIDTH + 1];
		int full;

		if (frac > 1)
			frac = 1;
		full = (int)(frac * BAR_WIDTH);
		memset(bar, '#', (size_t)full);
		memset(bar + full, '.', (size_t)(BAR_WIDTH - full));
		bar[BAR_WIDTH] = '\0';
		fprintf(p->tty, "\r%s [%s] %3d%% %.0f MiB, %.0f MiB/s ", p->label, bar,
			(int)(frac * 100), mib, rate);
	} else {
		fprintf(p->tty, "\r%s %.0f MiB, %.0f MiB/s ", p->label, mib, rate);
	}
	fflush(p->tty);
	p->drawn = true;
}

void progress_update(struct progress *p, uint64_t bytes)
{
	double t;

	if (p == NULL || !p->enabled)
		return;
	p->done = p->base + bytes;
	t = now_s();
	if (t - p->start < 1.0 || t - p->last < 0.1)
		return;
	p->last = t;
	draw(p, t);
}

void progress_next_input(struct progress *p)
{
	if (p == NULL)
		return;
	p->base = p->done;
}

void progress_finish(struct progress *p)
{
	if (p == NULL || !p->drawn)
		return;
	fprintf(p->tty, "\r%*s\r", 80, "");
	fflush(p->tty);
	p->drawn = false;
}
