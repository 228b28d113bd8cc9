/* SPDX-License-Identifier: MIT */
/*
 * Reading part of a large plain trace without reading all of it: where a time is in a
 * file of one event per line (what the recorder and the tools write), found by binary
 * search on file offsets, and a trace reader over a byte range of the file.
 *
 * A line's time is its write time as the recorder sees it: its "ts", or "ts" + "dur"
 * for an X (the recorder writes an X when it ends). The file is in that order per
 * thread and, across threads, to within the writer's drain lag (a flush interval,
 * 100 ms by default). A line's time is read from its text alone (the first "ts": and
 * "dur": keys of the line, which the recorder writes before "args"), not through the
 * JSON reader: a probe costs one small pread.
 *
 * Thread safety: none; a range feed runs one thread of its own, which touches only
 * the feed's own fields until range_feed_close() joins it.
 */
#ifndef RTR_TOOLS_SEEK_H
#define RTR_TOOLS_SEEK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The longest line a probe reads before it gives up (the file is then read in order). */
#define SEEK_MAX_LINE (4u << 20)

struct seek_probe {
	uint64_t line; /* offset of the line's '{' */
	int64_t time;  /* its ts, or ts + dur for an X, in ns */
};

/*
 * The first line beginning at or after off that starts with '{' and has a "ts": its
 * offset and time. Lines without one (M events) are passed over, up to 64 lines.
 * *bytes grows by the bytes read. Returns 1 when found, 0 when none before the end of
 * the file, -1 on a read error or a line longer than SEEK_MAX_LINE (no line structure).
 */
int seek_probe(int fd, uint64_t size, uint64_t off, struct seek_probe *p, uint64_t *bytes);

/*
 * Binary search for a line start whose time is before target: the last such line found
 * by halving [0, size) down to 64 KiB, 0 when none is (the window is near the start).
 * With lines in time order to within a lag L, every line before the result has a time
 * before target + L. *probes counts the probes, *bytes the bytes read. 0, or -1 as
 * seek_probe().
 */
int seek_before(int fd, uint64_t size, int64_t target, uint64_t *off, unsigned *probes,
		uint64_t *bytes);

/*
 * What a line says at a glance, without the JSON reader: its phase and its times, when
 * it is laid out as the recorder writes its lines, `{"ph":"P",` first, then the other
 * keys up to `,"ts":` with no backslash, '{' or '[' before it (so that no string can
 * hide a key, and the ts found is the event's own), and for an X `,"dur":` right
 * after the ts. The numbers are read as the reader reads them (json_parse_us()).
 */
struct seek_glance {
	char phase;
	bool has_ts; /* its ts was found: ts */
	int64_t ts;
	const char *after_ts, *end; /* the line past its ts, for seek_glance_dur() */
};

/*
 * Glance at line[0 .. len) (blanks before its '{' allowed). 1 when it is laid out as
 * above (an M, or any other phase with its ts found), 0 when it is not: only the
 * reader can say what it holds. With ts_wanted false only the phase is read (1 when
 * the line begins as above).
 */
int seek_glance(const char *line, size_t len, bool ts_wanted, struct seek_glance *g);

/*
 * Does the line, laid out as seek_glance() wants it, begin after t (ns)? true when
 * the whole microseconds of its ts alone are past t: a look at its digits, cheaper
 * than reading the number; false when they are not, or the line is not laid out so
 * (seek_glance() then says).
 */
bool seek_glance_begins_after(const char *line, size_t len, int64_t t);

/* The dur of an X glanced at with its ts, when `,"dur":` follows the ts: 0 and *dur in
 * ns; -1 when it does not (only the reader can say whether it has one). */
int seek_glance_dur(const struct seek_glance *g, int64_t *dur);

/*
 * A range feed: the bytes [from, to) of the file fd, behind "[\n" unless from is 0, fed
 * by a thread into a pipe that trace_open() reads as the path feed->path
 * ("/dev/fd/N"). Lines of the range are events of a bare array; a range that ends
 * inside a line reads as a trace cut short. Close the reader before the feed.
 *
 * A feed with a keep function passes only the lines it keeps: it is called, on the
 * feed's thread, with each whole line ('\n' included) but the last of the range and
 * any longer than the feed's block (those always pass), and the reader never sees the
 * lines it turns down. It must not turn down a line that does not end in a comma (the
 * array's last event), so that what passes stays a bare array.
 */
typedef bool (*range_keep_fn)(void *ctx, const char *line, size_t len);

/*
 * A keep function may also hold lines back instead of passing them at once (a line
 * that a later one makes useless, such as a counter's value that a later value of
 * the same series replaces): it turns them down and copies them. The feed asks for
 * what is held, with held(ctx, &p, &n) (whole comma-ended lines, p[0 .. n), valid until
 * the next call), just before each line it passes other than the held ones (the
 * keep function's, the unglanced, the range's last), so a held line passes before
 * every line that came after it in the file and that passes, and nothing stays held
 * at the range's end.
 */
typedef void (*range_held_fn)(void *ctx, const char **p, size_t *n);

struct range_feed {
	char path[32];
	uint64_t bytes; /* read from the file so far: valid after range_feed_close() */
	/* private */
	int fd, rfd, wfd;
	uint64_t from, to;
	range_keep_fn keep;
	range_held_fn held;
	void *keep_ctx;
	bool started;
	pthread_t thread;
};

/* Start feeding. 0, or -errno. */
int range_feed_open(struct range_feed *f, int fd, uint64_t from, uint64_t to);

/* The same, passing only the lines keep(ctx, ...) keeps (see above). */
int range_feed_open_kept(struct range_feed *f, int fd, uint64_t from, uint64_t to,
			 range_keep_fn keep, void *ctx);

/* The same, with lines held back (see range_held_fn). */
int range_feed_open_held(struct range_feed *f, int fd, uint64_t from, uint64_t to,
			 range_keep_fn keep, range_held_fn held, void *ctx);

/* Stop (the reader of the pipe must be closed first), join the thread. */
void range_feed_close(struct range_feed *f);

#endif /* RTR_TOOLS_SEEK_H */
