/* SPDX-License-Identifier: MIT */
/*
 * A .pftrace as the JSON `convert` writes (pf_to_json()): the converter's events
 * (pf_json.h) written as the recorder writes them, one per line in a bare array.
 */
#include "json.h"
#include "pf_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- pf_to_json() */

/* convert's output: the events written as the recorder writes them. */
struct writer {
	int (*write)(void *ctx, const void *p, size_t n);
	void *ctx;
	uint64_t lines;
	bool failed;
};

static int write_line(void *ctx, const char *line, size_t len, uint64_t packet, uint64_t offset)
{
	struct writer *w = ctx;

	(void)packet;
	(void)offset;
	if (w->write(w->ctx, w->lines == 0 ? "[\n" : ",\n", 2) != 0 ||
	    w->write(w->ctx, line, len) != 0)
		return w->failed = true, -1;
	w->lines++;
	return 0;
}

static int origin_packet(void *ctx, const struct pf_packet *pk)
{
	pf_json_origin_packet(ctx, pk);
	return 0;
}

static int convert_packet(void *ctx, const struct pf_packet *pk)
{
	return pf_json_packet(ctx, pk) != 0;
}

int pf_to_json(const char *path, int (*write)(void *ctx, const void *p, size_t n), void *ctx,
	       const struct pf_options *opt, struct pf_status *st, uint64_t *events)
{
	struct pf_options o = opt != NULL ? *opt : (struct pf_options){0};
	struct writer w = {.write = write, .ctx = ctx};
	struct pf_json_origin origin = {0};
	struct pf_json *c;
	struct stat sb;
	int rc, err;

	*events = 0;
	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		/* the first pass: the origin (errors come again in the second) */
		struct pf_options so = {.on_packet = origin_packet,
					.ctx = &origin,
					.max_packet_bytes = o.max_packet_bytes};

		pf_read_path(path, &so, st);
	}
	if (pf_json_create(write_line, &w, &c) != 0) {
		memset(st, 0, sizeof(*st));
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		return -1;
	}
	if (origin.has)
		pf_json_set_origin(c, origin.ns);
	o.on_packet = convert_packet;
	o.ctx = c;
	rc = pf_read_path(path, &o, st);
	/* What the read left held back, then the closing bracket. */
	err = pf_json_finish(c);
	if (!w.failed && (w.lines == 0 ? write(ctx, "[\n", 2) != 0 || write(ctx, "]\n", 2) != 0
				       : write(ctx, "\n]\n", 3) != 0))
		w.failed = true;
	*events = pf_json_events(c);
	if (err == -ENOMEM) {
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		rc = -1;
	} else if (w.failed) {
		st->error = PF_ERR_STOPPED;
		snprintf(st->message, sizeof(st->message), "the output failed");
		rc = -1;
	}
	pf_json_free(c);
	return rc;
}
