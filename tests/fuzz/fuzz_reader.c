/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the tools' trace sources (tools/source/: trace_open()), and `check --repair`
 * (repair_trace(), opened as the command opens it), on any bytes, plain or gzip (the
 * reader tells by the magic).
 *
 * The reader must never crash, leak or overflow (ASan, UBSan); every event it
 * returns has a compact JSON that is one strict JSON object (fuzz_check.h:
 * json_parse(), valid UTF-8 included; a key twice allowed, as the input had it), at most
 * TRACE_MAX_EVENT_BYTES; its event count is the number of events returned; once it returns 0 or -1
 * it keeps returning it. Repair of the same bytes, when it says it wrote a file (exit 0), wrote one
 * strict JSON array.
 *
 * The input goes in a memfd, read through /proc/self/fd (the reader opens a path);
 * the repaired file goes in a directory made once; repair's messages to /dev/null.
 */
#include "cli.h"
#include "output.h"
#include "repair.h"
#include "trace.h"

#include "fuzz_check.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_INPUT (1 << 16)

/* `check --repair` of in into out, as the command does it: CLI_OK when it wrote the
 * whole input, repaired. */
static int repair(const char *in, const char *out)
{
	struct trace *r = cli_open_trace("check", in, NULL);
	struct repair_result res;
	struct output *o = NULL;
	int status = CLI_ERROR;

	if (r == NULL)
		return CLI_ERROR;
	if (output_open(out, false, &o) == 0 && repair_trace(r, o, &res) == 0 && !res.stopped)
		status = CLI_OK;
	output_free(o);
	trace_close(r);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) != NULL) {
		*len = fread(p, 1, (size_t)n, f);
		p[*len] = '\0';
	}
	fclose(f);
	return p;
}

/* A strict JSON text of type want, parsed in an arena of its own. */
static void expect_json(const char *text, size_t len, enum jtype want, const char *what)
{
	size_t cap = 16 * len + 65536;
	struct jarena arena = {malloc(cap), 0, cap};
	const struct jnode *v;

	if (arena.base == NULL)
		abort();
	v = json_parse(&arena, text, len);
	if (v->type != want)
		FUZZ_FAIL("%s: a JSON %d, not %d", what, (int)v->type, (int)want);
	free(arena.base);
}

static void read_all(const char *path)
{
	struct trace_options ro = {0};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct trace *r;
	uint64_t n = 0;
	int rc;

	if (trace_open(path, &ro, &r) != 0)
		return;
	while ((rc = trace_next(r, &ev)) == 1) {
		if (ev->json_len > TRACE_MAX_EVENT_BYTES)
			FUZZ_FAIL("an event of %zu bytes", ev->json_len);
		expect_json(ev->json, ev->json_len, J_OBJ, "an event's json");
		n++;
	}
	st = trace_status(r);
	if (st->events != n)
		FUZZ_FAIL("%llu events returned, the status says %llu", (unsigned long long)n,
			  (unsigned long long)st->events);
	if (trace_next(r, &ev) != rc)
		FUZZ_FAIL("after %d, next() gave something else", rc);
	if ((rc < 0) != (st->error != TRACE_OK))
		FUZZ_FAIL("returned %d with error %d", rc, (int)st->error);
	trace_close(r);
}

/* The fast path (small buffers, so that events span slices) against yajl alone: the
 * same events, in the same places, ending the same way (an error of the same kind). */
static void read_both_ways(const char *path)
{
	struct trace_options fast_o = {.flags = TRACE_READ_SMALL};
	struct trace_options full_o = {.flags = TRACE_READ_NO_FAST};
	const struct trace_status *a, *b;
	const struct trace_event *ea, *eb;
	struct trace *fast, *full;
	int ra, rb;

	if (trace_open(path, &fast_o, &fast) != 0)
		return;
	if (trace_open(path, &full_o, &full) != 0)
		abort();
	for (;;) {
		ra = trace_next(fast, &ea);
		rb = trace_next(full, &eb);
		if (ra != rb)
			FUZZ_FAIL("fast path gave %d, yajl %d", ra, rb);
		if (ra != 1)
			break;
		if (ea->json_len != eb->json_len || memcmp(ea->json, eb->json, ea->json_len) != 0 ||
		    ea->line != eb->line || ea->col != eb->col || ea->offset != eb->offset ||
		    ea->nargs != eb->nargs || ea->ts_ns != eb->ts_ns || ea->phase != eb->phase)
			FUZZ_FAIL("event %llu differs: %.*s against %.*s",
				  (unsigned long long)eb->index, (int)ea->json_len, ea->json,
				  (int)eb->json_len, eb->json);
	}
	a = trace_status(fast);
	b = trace_status(full);
	/* Where a syntax error is reported may differ: yajl alone meets it at the
	 * border of a feed (a NUL read as a blank, a slice's end) and places some
	 * errors on the blank before the token; the fast path hands yajl the text from
	 * the token. The events before it are the same. */
	if (a->error != b->error || a->cut != b->cut || a->cut_in_event != b->cut_in_event ||
	    a->cut_bytes != b->cut_bytes || a->complete != b->complete)
		FUZZ_FAIL("the ends differ: error %d/%d at %llu:%llu/%llu:%llu, cut %d/%d",
			  (int)a->error, (int)b->error, (unsigned long long)a->line,
			  (unsigned long long)a->col, (unsigned long long)b->line,
			  (unsigned long long)b->col, a->cut, b->cut);
	trace_close(fast);
	trace_close(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/tmp/rtr-fuzz-reader-XXXXXX", out[64];
	static int ready;
	char in[64], *text;
	size_t len;
	int fd;

	if (size > MAX_INPUT)
		return -1;	    /* not added to the corpus */
	json_duplicate_keys_ok = 1; /* an input's duplicate keys are carried through */
	if (!ready) {
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(out, sizeof(out), "%s/repaired.json", dir);
		ready = 1;
	}
	fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(in, sizeof(in), "/proc/self/fd/%d", fd);
	read_all(in);
	read_both_ways(in);
	unlink(out);
	/* Repair says what it did on standard error: not for every input. */
	fflush(stderr);
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0)
		abort();
	close(null);
	int status = repair(in, out);
	fflush(stderr);
	if (dup2(saved, STDERR_FILENO) < 0)
		abort();
	close(saved);
	if (status == CLI_OK) {
		text = slurp(out, &len);
		if (text == NULL)
			FUZZ_FAIL("repair said it wrote %s, which is not there", out);
		expect_json(text, len, J_ARR, "the repaired file");
		free(text);
	}
	unlink(out);
	close(fd);
	return 0;
}
