/* SPDX-License-Identifier: MIT */
/*
 * Counter values before the window, held on the feed's thread (seek.h, range_held_fn)
 * so that the reader parses only the last of each run: a window begins each counter
 * series with its latest value before it (carry.h), and the recorder writes a series'
 * values by the thousand in the margin the search reads before the window, where
 * parsing them was most of the time spent on what the window does not show.
 *
 * A C line is held under its text with its ts and the numbers inside its args taken
 * out: two lines with the same such text are the same series (pid, tid, cat, name and
 * every other key alike) with the same argument keys, so the later replaces all of
 * the earlier. A line that is not in the recorder's layout (a backslash, no args
 * object, too long a key) is not held and passes in its place. The feed asks for
 * what is held before any other line passes, so the lines that pass are those that
 * passed before, less the values a later value of their series replaced with nothing
 * passing in between; their order among themselves is their file order.
 *
 * Memory: per series held (at most HELD_MAX), its line and key; emptied at each ask.
 * Out of memory, nothing more is held and h->failed says the lines asked for were
 * lost: the window fails rather than begin a series with an older value.
 */
#include "window.h"

#include <stdlib.h>
#include <string.h>

/* Series held at once: past it, a line passes in its place (a linear search: few
 * series run side by side). */
#define HELD_MAX 256
/* The longest key held. */
#define HELD_KEY_MAX 512

struct held_line {
	char *line, *key;
	size_t len, key_len;
	uint64_t seq; /* when it was held last: they pass in this order */
};

static bool number_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
}

/*
 * The key of a C line into key (HELD_KEY_MAX bytes): its text without the ts number
 * (which ends at after_ts) and without the numbers of its args object, or of any
 * object nested in the event. Its length, or 0 when the line cannot be held.
 */
static size_t held_key(const char *line, size_t len, const char *after_ts, char *key)
{
	const char *ts = after_ts, *end = line + len;
	size_t n = 0;
	int depth = 0;
	bool in_string = false, nested = false;

	while (ts > line && number_char(ts[-1]))
		ts--;
	if (memchr(line, '\\', len) != NULL || (size_t)(ts - line) > HELD_KEY_MAX)
		return 0;
	memcpy(key, line, (size_t)(ts - line));
	n = (size_t)(ts - line);
	for (const char *p = after_ts; p < end; p++) {
		char c = *p;

		if (!in_string && depth >= 1 && c == ':' && p + 1 < end && number_char(p[1])) {
			while (p + 1 < end && number_char(p[1]))
				p++;
			c = ':';
		} else if (c == '"') {
			in_string = !in_string;
		} else if (!in_string && c == '{') {
			depth++;
			nested = true;
		} else if (!in_string && c == '}') {
			depth--;
		}
		if (n == HELD_KEY_MAX)
			return 0;
		key[n++] = c;
	}
	return nested && !in_string ? n : 0;
}

bool window_hold_counter(struct held_counters *h, const char *line, size_t len,
			 const char *after_ts)
{
	char key[HELD_KEY_MAX];
	size_t key_len = held_key(line, len, after_ts, key);
	struct held_line *l = NULL;

	if (key_len == 0 || h->failed)
		return false;
	for (size_t i = 0; i < h->n && l == NULL; i++)
		if (h->lines[i].key_len == key_len && memcmp(h->lines[i].key, key, key_len) == 0)
			l = &h->lines[i];
	if (l == NULL) {
		struct held_line *grown;

		if (h->n == HELD_MAX)
			return false;
		grown = array_grow(h->lines, &h->cap, h->n + 1, sizeof(*h->lines), 16);
		if (grown == NULL)
			return false;
		h->lines = grown;
		l = &h->lines[h->n];
		memset(l, 0, sizeof(*l));
		l->key = malloc(key_len);
		if (l->key == NULL)
			return false;
		memcpy(l->key, key, key_len);
		l->key_len = key_len;
		h->n++;
	}
	if (l->len < len || l->line == NULL) {
		char *copy = realloc(l->line, len);

		if (copy == NULL) { /* the older value is held: it must not pass alone */
			h->failed = true;
			return false;
		}
		l->line = copy;
	}
	memcpy(l->line, line, len);
	l->len = len;
	l->seq = h->seq++;
	return true;
}

static int by_seq(const void *a, const void *b)
{
	const struct held_line *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void window_held_lines(struct held_counters *h, const char **p, size_t *n)
{
	*p = NULL;
	*n = 0;
	if (h->n == 0)
		return;
	qsort(h->lines, h->n, sizeof(*h->lines), by_seq);
	h->out.len = 0;
	for (size_t i = 0; i < h->n; i++)
		if (buf_put(&h->out, h->lines[i].line, h->lines[i].len) != 0)
			h->failed = true;
	for (size_t i = 0; i < h->n; i++) {
		free(h->lines[i].line);
		free(h->lines[i].key);
	}
	h->n = 0;
	if (!h->failed) {
		*p = h->out.p;
		*n = h->out.len;
	}
}

void window_held_free(struct held_counters *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->lines[i].line);
		free(h->lines[i].key);
	}
	free(h->lines);
	buf_free(&h->out);
	memset(h, 0, sizeof(*h));
}
