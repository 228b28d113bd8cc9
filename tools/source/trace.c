/* SPDX-License-Identifier: MIT */
/*
 * Every trace input through one pull interface (see trace.h for the contract).
 *
 * Design. Bytes flow one way: input -> text -> yajl -> events -> queue -> caller.
 *
 *   input   read(2) in INPUT_BYTES blocks from the file or standard input (input.c);
 *   text    the same bytes, or their inflation when the first two bytes are the gzip
 *           magic (input.c: the recorder's concatenated members read as one text);
 *   yajl    the callback parser, fed SLICE_BYTES at a time;
 *   events  the callbacks build one event: its compact JSON (every token
 *           re-serialised as it arrives) and the values of the known keys and of
 *           the top-level args (copied, NUL-terminated);
 *   queue   a finished event is copied into one allocation and queued; the caller
 *           pulls from the queue, and the next slice is parsed only when it is
 *           empty. So memory holds one slice's events and one partial event.
 *
 * A pull interface over a push parser: several traces can be pulled side by side
 * (a merge), and a caller may stop whenever it likes.
 *
 * Formats. The first block of text (at least SNIFF_BYTES, read without seeking, so
 * a pipe does too) tells a .pftrace (pf_sniff_bytes()) from JSON. A .pftrace's text
 * is then made, block by block, of its packets' JSON events, one per line
 * (pf_source.c): the walk below reads it as it would a file, and trace_next() places
 * each event and issue by the packet it came from. Its end (a cut, malformed
 * protobuf) is said when the walk reaches the end of that text (pf_source_end()),
 * after every event before it.
 *
 * The fast path. Inside the event array, yajl is stopped (a callback's 0) and the
 * text goes to fast_feed(): it skips the blanks and commas between elements itself
 * and gives each event to event_parse(), which reads a plain event (no escapes,
 * valid UTF-8: what the recorder writes) in one pass and without re-serialising
 * it. Whatever it does not take (escapes, a syntax error, an element that is not an
 * object, a known key twice) goes back to yajl: a fresh parser is put in the
 * array's state by a muted synthetic prefix ("[{}," and the like) and parses from
 * that byte, with its exact messages and places; it stops again at the end of the
 * next event. So both parsers hand out the same events and issues, which
 * tests/tools/test_tools_reader_fast.c checks on every corpus file and at every
 * cut of generated ones.
 *
 * Long events. An event that does not end within the text at hand is found by a
 * byte scan (strings and nesting only, linear whatever its size) and copied until
 * it ends, then parsed whole, fast or by yajl (positions then come from the copy:
 * locate_in_long()). One over max_event_bytes is not copied but skipped, and
 * reported; so yajl never buffers more than the limit, and no token is lexed again
 * and again as it grows (yajl restarts a token that spans its buffers).
 *
 * Positions. Inside a callback yajl_get_bytes_consumed() is the offset just past
 * the current token within the buffer given to yajl_parse(); feed_abs is that
 * buffer's text offset. Lines are counted lazily: `counted` is how far into the
 * text block '\n' bytes have been counted, and each position asked for moves it
 * forward with memchr, so each byte is looked at once. Positions asked for out of
 * order (rare: issues) are counted again from the start of the block without
 * moving anything.
 *
 * The end. A cut is the input ending while yajl is inside the top-level value: the
 * events finished so far were queued, the partial one is dropped. A cut inside a
 * gzip member is the same thing seen one layer down: inflate gave what it could.
 *
 * Recoveries. NUL bytes are rewritten to blanks as each slice is fed (feed_slice()),
 * after the text before them has been parsed, so that their issue keeps its place.
 * ",]" makes yajl fail; a fresh parser is put in the state after the array by a
 * muted synthetic prefix, and parsing goes on (recover_trailing_comma()).
 *
 * String rules (TRACE_READ_CHECK_STRINGS). A byte scanner runs over each slice just
 * ahead of yajl, tracking strings and escapes across slice borders with its own line
 * count. At each finding it first feeds yajl everything before it, so that the
 * issue is queued after the events that precede it. A raw control byte is rewritten
 * to a blank before yajl sees it (a raw '\n' so rewritten is remembered, so that
 * the lazy line count still sees it).
 */
#include "trace_internal.h"

#include "pftrace.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first text bytes looked at to tell the format. */
#define SNIFF_BYTES 4096

/* ---------------------------------------------------------------- the text */

/* The first bytes: a .pftrace's text is its packets' JSON. 0, or -1 (r failed). */
static int sniff(struct trace *r)
{
	const unsigned char *head;
	size_t n;

	r->sniffed = true;
	if (input_peek(&r->in, SNIFF_BYTES, &head, &n) != 0) {
		tr_fail(r, r->in.error, false, 0, "%s", r->in.message);
		return -1;
	}
	if (!pf_sniff_bytes(head, n))
		return 0;
	r->st.format = TRACE_FORMAT_PFTRACE;
	if (pf_source_open(r) != 0) {
		tr_fail_nomem(r);
		return -1;
	}
	return 0;
}

int tr_read_text(struct trace *r, unsigned char **p, size_t *len)
{
	struct input *in = &r->in;
	int rc;

	if (!r->sniffed && sniff(r) != 0)
		return -1;
	rc = r->pf != NULL ? pf_source_text(r, p, len) : input_next(in, p, len);
	r->st.input_bytes = in->bytes;
	r->st.gzip = in->gzip;
	r->st.gzip_members = in->gzip_members;
	r->st.gzip_cut = in->gzip_cut;
	if (rc != 0) {
		tr_fail(r, in->error, false, 0, "%s", in->message); /* unless failed already */
		return -1;
	}
	if (in->trailing && !r->trailing_told && r->pf == NULL) {
		r->trailing_told = true;
		if (!tr_queue_issue(r, TRACE_ISSUE_GZIP_TRAILING, 0, 0,
				    "%llu bytes after the last gzip member (%s), ignored",
				    (unsigned long long)in->trailing_bytes,
				    in->trailing_nonzero ? "not a gzip member" : "all zero"))
			return -1;
	}
	return 0;
}

/* An event or issue of a .pftrace: placed by its packet (its line and col stay those
 * of convert's JSON of it, the tools' identity of an event). */
static void place_in_packet(struct trace *r, uint64_t line, bool *in_packet, uint64_t *packet,
			    uint64_t *offset)
{
	if (line == 0)
		return;
	*in_packet = pf_source_place(r, line, packet, offset);
	pf_source_forget(r, line);
}

/* ------------------------------------------------------------------ public */

int trace_open(const char *path, const struct trace_options *options, struct trace **out)
{
	struct trace *r = calloc(1, sizeof(*r));
	struct stat sb;
	bool small;
	int err, fd;

	*out = NULL;
	if (r == NULL)
		return -ENOMEM;
	if (options != NULL)
		r->opt = *options;
	r->path = strdup(path);
	small = r->opt.flags & TRACE_READ_SMALL;
	r->slice_bytes = small ? SMALL_SLICE_BYTES : SLICE_BYTES;
	err = input_init(&r->in, -1, small ? SMALL_INPUT_BYTES : INPUT_BYTES,
			 small ? SMALL_TEXT_BYTES : TEXT_BYTES, r->opt.progress);
	r->fast_ok = !(r->opt.flags & TRACE_READ_NO_FAST);
	r->max_event = r->opt.max_event_bytes > 0 ? r->opt.max_event_bytes : TRACE_MAX_EVENT_BYTES;
	r->arena_cap = 4 * r->slice_bytes;
	r->arena = malloc(r->arena_cap);
	r->h = tr_parser_new(r);
	r->b.field_key = -1;
	if (r->path == NULL || err != 0 || r->arena == NULL || r->h == NULL) {
		trace_close(r);
		return -ENOMEM;
	}
	if (strcmp(path, "-") == 0) {
		r->name = "<stdin>";
		fd = STDIN_FILENO;
	} else {
		r->name = r->path;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			trace_close(r);
			return -err;
		}
	}
	r->in.fd = fd;
	if (fstat(fd, &sb) == 0) {
		if (S_ISDIR(sb.st_mode)) {
			trace_close(r);
			return -EISDIR;
		}
		if (S_ISREG(sb.st_mode))
			r->st.input_size = (uint64_t)sb.st_size;
	}
	progress_total(r->opt.progress, r->st.input_size);
	*out = r;
	return 0;
}

int trace_next(struct trace *r, const struct trace_event **ev)
{
	free(r->handed);
	r->handed = NULL;
	for (;;) {
		while (r->q_head < r->q_len) {
			struct item *it = &r->q[r->q_head++];

			if (it->kind == ITEM_ISSUE) {
				struct trace_issue *is = &it->u.issue;

				if (r->pf != NULL)
					place_in_packet(r, is->line, &is->in_packet, &is->packet,
							&is->offset);
				r->st.issues++;
				if (r->opt.on_issue != NULL)
					r->opt.on_issue(r->opt.ctx, &it->u.issue);
				free(it->mem);
				continue;
			}
			r->handed = it->mem;
			if (r->pf != NULL)
				place_in_packet(r, it->u.ev.line, &it->u.ev.in_packet,
						&it->u.ev.packet, &it->u.ev.offset);
			it->u.ev.index = r->st.events++;
			*ev = &it->u.ev;
			return 1;
		}
		r->q_head = r->q_len = 0;
		r->arena_used = 0; /* the last event handed out was released above */
		if (r->done)
			return r->failed ? -1 : 0;
		tr_step(r);
	}
}

const struct trace_status *trace_status(const struct trace *r)
{
	return &r->st;
}

const char *trace_name(const struct trace *r)
{
	return r->name;
}

void trace_close(struct trace *r)
{
	if (r == NULL)
		return;
	pf_source_free(r->pf);
	for (size_t i = r->q_head; i < r->q_len; i++)
		free(r->q[i].mem);
	free(r->q);
	free(r->handed);
	if (r->h != NULL)
		yajl_free(r->h);
	if (r->in.fd > STDIN_FILENO)
		close(r->in.fd);
	input_free(&r->in);
	tr_building_free(&r->b);
	event_parse_free(&r->ep);
	buf_free(&r->lng.text);
	free(r->arena);
	buf_free(&r->cap.key);
	buf_free(&r->cap.json);
	free(r->cap.lv);
	free(r->patched_nl);
	free(r->path);
	free(r);
}
