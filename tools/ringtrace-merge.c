/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace merge`: one timeline from the trace files of several processes or MPI
 * ranks, streamed.
 *
 * Order. A k-way merge: one pull reader per input, and each step writes the input
 * whose next event is the earliest (its end for an X, since the recorder writes an X
 * when it ends, so that key follows each file's own order best). Each input's events
 * keep their file order, so every B/E sequence of a thread stays as it was (Catapult
 * does not sort them); the output is interleaved by time only as well as the inputs
 * are sorted, which is enough: the viewers sort, and a later `split` of the merged
 * file then cuts it into time windows across all ranks instead of rank after rank.
 * Memory is one pending event and one reader per input, never per event.
 *
 * Clocks. Each file's times are relative to its own origin, which its start marker
 * records as absolute CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds. The merged file
 * uses the earliest input's origin: every time is shifted by (its origin - the
 * earliest), in integer nanoseconds, and written again with at most three decimals;
 * never negative, since the common origin is the minimum. CLOCK_MONOTONIC is the same
 * clock for every process of one host and exact, so `--clock auto` takes it when all
 * inputs name the same host; across hosts only CLOCK_REALTIME is shared (as well as
 * their NTP agrees). An input without a start marker keeps its times as they are.
 *
 * Processes. pids are made collision-free. Each output pid is claimed by one (input,
 * pid) pair the first time it is seen; the inputs' own pids (their start markers')
 * are claimed first, in command-line order, so they stay as they are unless two
 * inputs share one (two containers, or the same track pseudo-pids). A pid some other
 * input claimed first is remapped to a free id in a plane of its own, pid + k * 2^24
 * (k = the input's position), for every event and M event of that input; tids stay,
 * since the viewers key threads by (pid, tid) and the pids now differ. Every process
 * is named "rank R · host · original name" (the file's name when it has no rank),
 * and gets a process_sort_index of rank * 1024 (+ its own index, for pseudo-processes)
 * so that ranks appear in order.
 *
 * Flow and async ids. The viewers match them across the whole trace. An id made by
 * rtr_flow_id() holds the pid of its process in its top 24 bits: when those bits name
 * exactly one input's pid, the id is kept, so that a flow from one rank to another
 * stays joined. Every other id (hand-written files, ids of two inputs with the same
 * pid) is private to its input: it is replaced by a fresh small id, the same for
 * every event of that input with that id while its flow or async span is open.
 * State is per open flow and async span (capped; see MAX_IDS).
 *
 * Markers. The inputs' start markers are read before anything is written and left
 * out; one merged start marker at 0 carries the common origin, the clock used and
 * each input's origin, rank, host, pid and shift. Each input's last end marker is left
 * out too; the merged end marker sums their counts and lists each input's final flag.
 * A cut input gives its whole events, its open B slices ended 1 ns after its
 * thread's latest time (as `check --repair` does), and a warning.
 */
#include "cli.h"
#include "json.h"
#include "merge_json.h"
#include "output.h"
#include "progress.h"
#include "reader.h"
#include "table.h"
#include "threads.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Flow and async ids remembered per input before the oldest are forgotten: what a
 * file whose flows never end costs at most. */
#define MAX_IDS (1u << 20)

/* The distance between the planes remapped pids go to: above every real pid (at
 * most 2^22 on Linux), so a remapped pid keeps the original in its low bits. */
#define PID_PLANE ((int64_t)1 << 24)

/* The tag rtr_flow_id() puts in an id: the low 24 bits of the pid, in bits 40..63. */
#define ID_TAG_SHIFT 40
#define PID_TAG_MASK 0xffffffu

/* Pseudo-process ids of tracks start here: they are not pids to show. */
#define PSEUDO_PID_BASE 0x40000000

/* Sort indexes: rank * SORT_STRIDE, plus the process's own place within the rank. */
#define SORT_STRIDE 1024

/* Events between two progress updates. */
#define PROGRESS_EVERY 65536

enum clock_choice { CLOCK_AUTO, CLOCK_MONO, CLOCK_REAL, CLOCK_NONE };

static const char *const clock_names[] = {
	[CLOCK_AUTO] = "auto",
	[CLOCK_MONO] = "monotonic",
	[CLOCK_REAL] = "realtime",
	[CLOCK_NONE] = "none",
};

/* The value of input.pids, under the original pid. */
struct pid_map {
	int64_t pid; /* in the output */
	bool remapped;
	bool main;	  /* the input's own process */
	bool seen_event;  /* an event other than M was written for it */
	bool named;	  /* a process_name was written for it */
	bool sorted;	  /* a process_sort_index was written for it */
	int64_t own_sort; /* the input's own process_sort_index, if has_own_sort */
	bool has_own_sort;
};

/* The value of merge.claims, under the output pid: who has it. */
struct claim {
	size_t input;
	int64_t pid;
};

/* The value of input.ids, under (kind, type, id text): a private id's replacement. */
struct id_map {
	uint64_t id;
	int64_t open; /* async: b minus e */
	bool saw_s, saw_f;
};

struct input {
	size_t index;
	const char *path;
	const char *name; /* for messages */
	struct trace_reader *r;
	struct cli_warnings warnings;
	const struct trace_event *head; /* the next event, or NULL when done */
	int64_t key;			/* its place in the merge */
	int rc;				/* the reader's last return */

	/* From the start marker. */
	bool has_start, has_mono, has_real, has_rank, has_main;
	uint64_t mono, real;
	int64_t rank;
	char *host;
	int64_t main_pid, main_tid;
	char *label; /* "rank 3 · node12" */
	int64_t order;
	bool anchored;
	int64_t shift_ns;

	struct table pids; /* original pid -> struct pid_map */
	struct pid_map *last_map;
	int64_t last_pid;
	struct table ids;	/* private flow and async ids */
	struct threads threads; /* open B slices and latest times, for a cut input */

	/* The last end marker seen, held until an event after it shows it was not the
	 * input's last (it is then written as an ordinary event). */
	bool held;
	struct buf held_json;
	bool held_has_ts, held_has_pid;
	int64_t held_ts, held_pid;
	bool end_seen, end_final;
	struct buf end_args; /* the input's last end marker's args */

	uint64_t events;
	uint64_t slices_closed;
};

struct merge {
	struct input *in;
	size_t n;
	enum clock_choice clock;
	uint64_t origin_mono, origin_real; /* of the earliest input */
	bool has_origin_mono, has_origin_real;
	const char *host; /* when every input names this one */
	struct output *out;
	struct progress *bar;
	struct buf line, text, args;
	struct table claims; /* output pid -> struct claim */
	struct table tags;   /* rtr_flow_id() tag -> inputs with that pid */
	uint64_t next_id;
	bool has_latest;
	int64_t latest;
	uint64_t written; /* event lines, markers and M events not counted */
	uint64_t closed;
	int64_t marker_pid, marker_tid;
	size_t *heap, nheap;
	bool nomem;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace merge [--clock auto|monotonic|realtime] -o OUT FILE...\n"
		   "\n"
		   "Merges the traces of several processes or MPI ranks (.json or .json.gz;\n"
		   "- is standard input) into one timeline, streaming:\n"
		   "  - times aligned on the earliest file's origin (each file's start marker),\n"
		   "    on CLOCK_MONOTONIC when all files come from one host, else on\n"
		   "    CLOCK_REALTIME;\n"
		   "  - pids made collision-free (a pid two files use is remapped in the later\n"
		   "    one), processes named \"rank R \xc2\xb7 host \xc2\xb7 name\" and sorted by "
		   "rank;\n"
		   "  - flow and async ids kept apart between files, except the ids\n"
		   "    rtr_flow_id() makes, which already name their process;\n"
		   "  - one start marker and one end marker for the whole.\n"
		   "A file cut short gives its whole events (its open slices ended).\n"
		   "\n"
		   "options:\n"
		   "  -o, --output OUT     where to write (required); gzip when OUT ends in .gz;\n"
		   "                       - for standard output\n"
		   "  -c, --clock CLOCK    auto (the default), monotonic or realtime\n"
		   "  -h, --help           this help\n"
		   "\n"
		   "exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		   "output then holds the events before the error), failed output.\n");
}

/* ------------------------------------------------------------------- inputs */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static char *copy_string(const struct trace_value *v)
{
	char *p = malloc(v->len + 1);

	if (p != NULL)
		memcpy(p, v->text, v->len + 1);
	return p;
}

/* Take what the merge needs from an input's start marker. 0, or -1 out of memory. */
static int read_start_marker(struct input *in, const struct trace_event *ev)
{
	const struct trace_value *v;
	uint64_t u;
	int64_t i;

	in->has_start = true;
	v = trace_event_arg(ev, "origin_monotonic_ns");
	in->has_mono = v != NULL && value_u64(v, &in->mono) == 0;
	v = trace_event_arg(ev, "origin_realtime_ns");
	in->has_real = v != NULL && value_u64(v, &in->real) == 0;
	v = trace_event_arg(ev, "rank");
	if (v != NULL && v->type == TRACE_NUMBER && json_parse_i64(v->text, v->len, &i) == 0 &&
	    i >= 0) {
		in->has_rank = true;
		in->rank = i;
	}
	v = trace_event_arg(ev, "host");
	if (v != NULL && v->type == TRACE_STRING && v->len > 0) {
		in->host = copy_string(v);
		if (in->host == NULL)
			return -1;
	}
	v = trace_event_arg(ev, "pid");
	if (ev->has_pid) {
		in->has_main = true;
		in->main_pid = ev->pid_num;
	} else if (v != NULL && value_u64(v, &u) == 0 && u <= UINT32_MAX) {
		in->has_main = true;
		in->main_pid = (int64_t)u;
	}
	in->main_tid = ev->has_tid ? ev->tid_num : in->main_pid;
	return 0;
}

/* Pull the next event of an input into head; NULL at its end. */
static void advance(struct input *in)
{
	in->rc = trace_reader_next(in->r, &in->head);
	if (in->rc != 1)
		in->head = NULL;
}

/* Open every input and read its start marker. 0, or -1 (reported). */
static int open_inputs(struct merge *m, char **paths, size_t n)
{
	m->in = calloc(n, sizeof(*m->in));
	if (m->in == NULL) {
		cli_error("merge", "out of memory");
		return -1;
	}
	m->n = n;
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];
		struct trace_reader_options ro = {.on_issue = cli_warn_issue, .ctx = &in->warnings};

		in->index = i;
		in->path = paths[i];
		in->warnings.max = 10;
		table_init(&in->pids, sizeof(struct pid_map));
		table_init(&in->ids, sizeof(struct id_map));
		threads_init(&in->threads, 0);
		in->r = cli_open_trace("merge", paths[i], &ro);
		if (in->r == NULL)
			return -1;
		in->name = trace_reader_name(in->r);
		in->warnings.file = in->name;
		progress_total(m->bar, trace_reader_status(in->r)->input_size);
	}
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];

		advance(in);
		if (in->head != NULL && is_marker(in->head, START_MARKER)) {
			if (read_start_marker(in, in->head)) {
				cli_error("merge", "out of memory");
				return -1;
			}
			advance(in);
		}
		if (!in->has_main && in->head != NULL && in->head->has_pid) {
			in->has_main = true;
			in->main_pid = in->head->pid_num;
			in->main_tid = in->head->has_tid ? in->head->tid_num : in->main_pid;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- clocks, labels */

static bool has_origin(const struct input *in, enum clock_choice c)
{
	return c == CLOCK_MONO ? in->has_mono : in->has_real;
}

static uint64_t origin_of(const struct input *in, enum clock_choice c)
{
	return c == CLOCK_MONO ? in->mono : in->real;
}

/* Choose the clock, the common origin (the earliest input's) and each input's shift. */
static void align(struct merge *m)
{
	enum clock_choice c = m->clock;
	bool same_host = true, all_mono = true;
	const char *host = NULL;
	size_t earliest = m->n;
	uint64_t min = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (in->host == NULL)
			same_host = false;
		else if (host == NULL)
			host = in->host;
		else if (strcmp(host, in->host) != 0)
			same_host = false;
		all_mono &= in->has_mono;
	}
	/* One host: its CLOCK_MONOTONIC is one clock for all its processes, and exact.
	 * Several hosts (or some unnamed): only CLOCK_REALTIME is common to them. */
	if (c == CLOCK_AUTO)
		c = same_host && all_mono ? CLOCK_MONO : CLOCK_REAL;
	else if (c == CLOCK_MONO && !same_host)
		cli_note("merge", "warning: --clock monotonic, but the files are not all from one "
				  "host: their monotonic clocks have unrelated origins");
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (has_origin(in, c) && (earliest == m->n || origin_of(in, c) < min)) {
			earliest = i;
			min = origin_of(in, c);
		}
	}
	m->clock = earliest < m->n ? c : CLOCK_NONE;
	m->host = same_host ? host : NULL;
	if (earliest < m->n) {
		const struct input *e = &m->in[earliest];

		m->has_origin_mono = e->has_mono && (c == CLOCK_MONO || same_host);
		m->origin_mono = e->mono;
		m->has_origin_real = e->has_real;
		m->origin_real = e->real;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		uint64_t shift;

		if (!has_origin(in, c)) {
			cli_note("merge",
				 "warning: %s has no %s: its times are taken as they are, not "
				 "aligned",
				 in->name,
				 !in->has_start	   ? "start marker"
				 : c == CLOCK_MONO ? "origin_monotonic_ns"
						   : "origin_realtime_ns");
			continue;
		}
		shift = origin_of(in, c) - min;
		if (shift > (uint64_t)INT64_MAX / 4) {
			cli_note("merge",
				 "warning: %s starts %" PRIu64 " s after the earliest file: its "
				 "times are taken as they are, not aligned",
				 in->name, shift / 1000000000u);
			continue;
		}
		in->anchored = true;
		in->shift_ns = (int64_t)shift;
	}
}

/* Each input's label ("rank 3 · node12") and place among the processes. 0 or -1. */
static int make_labels(struct merge *m)
{
	int64_t max_rank = -1;

	for (size_t i = 0; i < m->n; i++) {
		if (m->in[i].has_rank && m->in[i].rank > max_rank)
			max_rank = m->in[i].rank;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		struct buf b = {0};
		char num[32];
		int err;

		/* Files without a rank follow the ranks, in command-line order. */
		in->order = in->has_rank ? in->rank : max_rank + 1 + (int64_t)i;
		if (in->has_rank) {
			snprintf(num, sizeof(num), "rank %" PRId64, in->rank);
			err = buf_puts(&b, num);
		} else {
			err = buf_puts(&b, base_name(in->name));
		}
		if (!err && in->host != NULL)
			err = buf_puts(&b, " \xc2\xb7 ") || buf_puts(&b, in->host);
		err = err || buf_putc(&b, '\0');
		if (err) {
			buf_free(&b);
			return -1;
		}
		in->label = b.p;
	}
	return 0;
}

/* --------------------------------------------------------------------- pids */

static bool claimed(const struct merge *m, int64_t pid)
{
	return table_get(&m->claims, &pid, sizeof(pid)) != NULL;
}

/* A pid nobody has claimed, for the input's pid that someone has. */
static int64_t free_pid(const struct merge *m, const struct input *in, int64_t pid)
{
	uint64_t low = (uint64_t)pid & UINT32_MAX;
	uint64_t k = in->index > 0 ? in->index : 1;

	/* First the input's own plane, pid + k * 2^24 (mod 2^32: pids are 32-bit), so
	 * that the original still shows in the low bits; then the next planes. */
	for (unsigned tries = 0; tries < 256; tries++, k++) {
		int64_t cand = (int64_t)((low + k * (uint64_t)PID_PLANE) & UINT32_MAX);

		if (cand != 0 && !claimed(m, cand))
			return cand;
	}
	for (int64_t cand = INT32_MAX;; cand--) {
		if (!claimed(m, cand))
			return cand; /* ends: the claims are finite */
	}
}

/* The output pid of an input's pid, claimed the first time. NULL when out of memory. */
static struct pid_map *pid_of(struct merge *m, struct input *in, int64_t pid)
{
	struct pid_map *pm;
	struct claim *c;
	bool created;

	if (in->last_map != NULL && in->last_pid == pid)
		return in->last_map;
	pm = table_put(&in->pids, &pid, sizeof(pid), &created);
	if (pm == NULL) {
		m->nomem = true;
		return NULL;
	}
	if (created) {
		pm->main = in->has_main && pid == in->main_pid;
		pm->pid = claimed(m, pid) ? free_pid(m, in, pid) : pid;
		pm->remapped = pm->pid != pid;
		c = table_put(&m->claims, &pm->pid, sizeof(pm->pid), NULL);
		if (c == NULL) {
			m->nomem = true;
			return NULL;
		}
		c->input = in->index;
		c->pid = pid;
	}
	in->last_map = pm;
	in->last_pid = pid;
	return pm;
}

/* The inputs' own pids first, in command-line order: they stay unless two share one. */
static int claim_main_pids(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		uint64_t tag;
		size_t *count;

		if (!in->has_main)
			continue;
		if (pid_of(m, in, in->main_pid) == NULL)
			return -1;
		tag = (uint64_t)in->main_pid & PID_TAG_MASK;
		count = table_put(&m->tags, &tag, sizeof(tag), NULL);
		if (count == NULL)
			return -1;
		(*count)++;
	}
	return 0;
}

/* The name of a process: "rank 3 · node12 · solver". Appended, unquoted, to b. */
static int process_name(struct buf *b, const struct input *in, const struct pid_map *pm,
			int64_t pid, const struct trace_value *name)
{
	char num[48];
	int err = buf_puts(b, in->label);

	if (name != NULL && name->type == TRACE_STRING && name->len > 0) {
		err = err || buf_puts(b, " \xc2\xb7 ") || buf_put(b, name->text, name->len);
	} else if (!pm->main) {
		snprintf(num, sizeof(num), " \xc2\xb7 pid %" PRId64, pid);
		err = err || buf_puts(b, num);
		return err;
	}
	/* A remapped real pid: the original, to line the process up with top and perf. */
	if (pm->remapped && pid >= 0 && pid < PSEUDO_PID_BASE) {
		snprintf(num, sizeof(num), " (was pid %" PRId64 ")", pid);
		err = err || buf_puts(b, num);
	}
	return err;
}

/* Ranks in order; within one, the input's own process first, then the others by
 * their own sort index. */
static int64_t sort_index(const struct input *in, const struct pid_map *pm)
{
	int64_t sub = pm->main ? 0 : 1;

	if (pm->has_own_sort)
		sub = 1 + (pm->own_sort < 0		    ? 0
			   : pm->own_sort > SORT_STRIDE - 2 ? SORT_STRIDE - 2
							    : pm->own_sort);
	return in->order * SORT_STRIDE + sub;
}

/* ------------------------------------------------------------------- output */

static int write_line(struct merge *m, const char *json, size_t len)
{
	return output_write(m->out, json, len) || output_write(m->out, ",\n", 2);
}

static void note_time(struct merge *m, int64_t t)
{
	if (!m->has_latest || t > m->latest) {
		m->latest = t;
		m->has_latest = true;
	}
}

/* An M event of ours: {"ph":"M","name":WHAT,"pid":P,"tid":P,"args":{KEY:VALUE}}. */
static int put_meta(struct merge *m, const char *what, int64_t pid, const char *key,
		    const char *value, size_t value_len)
{
	struct buf *b = &m->line;

	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"M\",\"name\":\"") || buf_puts(b, what) ||
	    buf_puts(b, "\",\"pid\":") || buf_put_i64(b, pid) || buf_puts(b, ",\"tid\":") ||
	    buf_put_i64(b, pid) || buf_puts(b, ",\"args\":{") || buf_put_key(b, key) ||
	    buf_put(b, value, value_len) || buf_puts(b, "}}")) {
		m->nomem = true;
		return -1;
	}
	return write_line(m, b->p, b->len);
}

/* Before the first event of a process that the input did not name (or sort) first. */
static int name_process(struct merge *m, struct input *in, struct pid_map *pm, int64_t pid)
{
	struct buf *t = &m->text;

	if (!pm->named) {
		pm->named = true;
		m->args.len = 0;
		t->len = 0;
		if (process_name(t, in, pm, pid, NULL) ||
		    json_put_string(&m->args, t->p, t->len) < 0) {
			m->nomem = true;
			return -1;
		}
		if (put_meta(m, "process_name", pm->pid, "name", m->args.p, m->args.len))
			return -1;
	}
	if (!pm->sorted) {
		pm->sorted = true;
		m->args.len = 0;
		if (buf_put_i64(&m->args, sort_index(in, pm))) {
			m->nomem = true;
			return -1;
		}
		if (put_meta(m, "process_sort_index", pm->pid, "sort_index", m->args.p,
			     m->args.len))
			return -1;
	}
	return 0;
}

/* The args of an input's process_name or process_sort_index, made the merge's. */
static int meta_args(struct merge *m, struct input *in, struct pid_map *pm,
		     const struct trace_event *ev, struct event_edit *e)
{
	struct buf *t = &m->text;
	int err;

	t->len = 0;
	m->args.len = 0;
	if (trace_value_is(&ev->name, "process_name")) {
		struct buf quoted = {0};

		pm->named = true;
		err = process_name(t, in, pm, ev->pid_num, trace_event_arg(ev, "name")) ||
		      json_put_string(&quoted, t->p, t->len) < 0 ||
		      args_with(&m->args, ev, "name", quoted.p, quoted.len);
		buf_free(&quoted);
	} else if (trace_value_is(&ev->name, "process_sort_index")) {
		const struct trace_value *v = trace_event_arg(ev, "sort_index");
		int64_t own;

		if (v != NULL && v->type == TRACE_NUMBER &&
		    json_parse_i64(v->text, v->len, &own) == 0) {
			pm->has_own_sort = true;
			pm->own_sort = own;
		}
		pm->sorted = true;
		err = buf_put_i64(t, sort_index(in, pm)) ||
		      args_with(&m->args, ev, "sort_index", t->p, t->len);
	} else {
		return 0;
	}
	if (err) {
		m->nomem = true;
		return -1;
	}
	e->args = m->args.p;
	e->args_len = m->args.len;
	return 0;
}

/* ---------------------------------------------------------------------- ids */

/* Is the id one rtr_flow_id() made in exactly one of the inputs' processes? */
static bool global_id(const struct merge *m, const struct trace_value *id)
{
	uint64_t v, tag;
	const size_t *count;

	if (value_id_u64(id, &v) != 0)
		return false;
	tag = v >> ID_TAG_SHIFT;
	if (tag == 0)
		return false;
	count = table_get(&m->tags, &tag, sizeof(tag));
	return count != NULL && *count == 1;
}

/* A flow or async id of an input: kept when global, else its private replacement. */
static int map_id(struct merge *m, struct input *in, const struct trace_event *ev,
		  struct event_edit *e)
{
	bool flow = ev->phase == 's' || ev->phase == 't' || ev->phase == 'f';
	struct id_map *im;
	bool created;
	char type = (char)ev->id.type, kind = flow ? 'f' : 'a';
	char tmp[24];

	if (ev->id.type == TRACE_ABSENT || global_id(m, &ev->id))
		return 0;
	m->text.len = 0;
	if (buf_putc(&m->text, kind) || buf_putc(&m->text, type) ||
	    buf_put(&m->text, ev->id.text, ev->id.len))
		goto nomem;
	im = table_put(&in->ids, m->text.p, m->text.len, &created);
	if (im == NULL)
		goto nomem;
	if (created) {
		im->id = ++m->next_id;
		if (in->ids.count > MAX_IDS)
			table_remove(&in->ids, table_first(&in->ids)); /* the oldest */
	}
	/* Same kind of value as before: the viewers accept an integer or a hex string. */
	m->args.len = 0;
	if (ev->id.type == TRACE_NUMBER) {
		if (buf_put_u64(&m->args, im->id))
			goto nomem;
	} else {
		snprintf(tmp, sizeof(tmp), "\"0x%" PRIx64 "\"", im->id);
		if (buf_puts(&m->args, tmp))
			goto nomem;
	}
	e->id = m->args.p;
	e->id_len = m->args.len;
	/* Forget the id once its flow or span is over: a later one may reuse it. */
	if (flow) {
		im->saw_s |= ev->phase == 's';
		im->saw_f |= ev->phase == 'f';
		if (im->saw_s && im->saw_f)
			table_remove(&in->ids, im);
	} else if (ev->phase != 'n') {
		im->open += ev->phase == 'b' ? 1 : -1;
		if (im->open == 0)
			table_remove(&in->ids, im);
	}
	return 0;
nomem:
	m->nomem = true;
	return -1;
}

/* -------------------------------------------------------------------- events */

/* An input's event time in the merged timeline (an X: its end), or its last one. */
static int64_t key_of(const struct input *in, const struct trace_event *ev)
{
	int64_t t;

	if (!ev->has_ts)
		return in->key;
	t = ev->ts_ns;
	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	return t <= INT64_MAX - in->shift_ns ? t + in->shift_ns : INT64_MAX;
}

static int hold_end(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct trace_value *final = trace_event_arg(ev, "final");

	in->held = true;
	in->held_has_ts = ev->has_ts;
	in->held_ts = ev->ts_ns;
	in->held_has_pid = ev->has_pid;
	in->held_pid = ev->pid_num;
	in->end_final = final != NULL && final->type == TRACE_BOOL && final->text[0] == 't';
	in->held_json.len = in->end_args.len = 0;
	if (buf_put(&in->held_json, ev->json, ev->json_len) ||
	    (ev->args.type == TRACE_OBJECT &&
	     buf_put(&in->end_args, ev->args.text, ev->args.len))) {
		m->nomem = true;
		return -1;
	}
	return 0;
}

/* A held end marker with events after it: an ordinary event after all. */
static int write_held(struct merge *m, struct input *in)
{
	struct event_edit e = {.duplicates = true}; /* rare: no need to know */
	struct pid_map *pm;

	in->held = false;
	if (in->held_has_pid) {
		pm = pid_of(m, in, in->held_pid);
		if (pm == NULL)
			return -1;
		e.set_pid = pm->remapped;
		e.pid = pm->pid;
	}
	if (in->held_has_ts && in->held_ts <= INT64_MAX - in->shift_ns) {
		e.set_ts = true;
		e.ts_ns = in->held_ts + in->shift_ns;
		note_time(m, e.ts_ns);
	}
	m->line.len = 0;
	if (event_rewrite(&m->line, in->held_json.p, in->held_json.len, &e)) {
		m->nomem = true;
		return -1;
	}
	return write_line(m, m->line.p, m->line.len);
}

/* Open B slices and latest times per thread: what ends a cut input's slices. */
static int track_thread(struct merge *m, struct input *in, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&in->threads, ev);

	if (th == NULL) {
		m->nomem = true;
		return -1;
	}
	thread_note_time(th, ev);
	if (ev->phase == 'B') {
		if (thread_push(th, ev) != 0) {
			m->nomem = true;
			return -1;
		}
	} else if (ev->phase == 'E') {
		thread_pop(th);
	}
	return 0;
}

static int take(struct merge *m, struct input *in, const struct trace_event *ev)
{
	struct event_edit e = {.duplicates = ev->duplicates != 0};
	struct pid_map *pm = NULL;

	if (in->held && write_held(m, in))
		return -1;
	if (is_marker(ev, END_MARKER))
		return hold_end(m, in, ev);
	if (track_thread(m, in, ev))
		return -1;
	if (ev->has_pid) {
		pm = pid_of(m, in, ev->pid_num);
		if (pm == NULL)
			return -1;
		e.set_pid = pm->remapped;
		e.pid = pm->pid;
		if (ev->phase != 'M' && !pm->seen_event) {
			pm->seen_event = true;
			if (name_process(m, in, pm, ev->pid_num))
				return -1;
		}
	}
	/* Shifted exactly in integer ns; an inexact ts (more than three decimals) is
	 * written again with three, as Perfetto would round it. */
	if (ev->has_ts && (in->shift_ns != 0 || !ev->ts_exact) &&
	    ev->ts_ns <= INT64_MAX - in->shift_ns) {
		e.set_ts = true;
		e.ts_ns = ev->ts_ns + in->shift_ns;
	}
	switch (ev->phase) {
	case 'M':
		if (pm != NULL && meta_args(m, in, pm, ev, &e))
			return -1;
		break;
	case 's':
	case 't':
	case 'f':
	case 'b':
	case 'e':
	case 'n':
		if (map_id(m, in, ev, &e))
			return -1;
		break;
	default:
		break;
	}
	if (ev->has_ts)
		note_time(m, key_of(in, ev));
	if (ev->phase != 'M')
		m->written++;
	in->events++;
	m->line.len = 0;
	if (event_rewrite(&m->line, ev->json, ev->json_len, &e)) {
		m->nomem = true;
		return -1;
	}
	return write_line(m, m->line.p, m->line.len);
}

/* The slices a cut input left open: an E each, innermost first, 1 ns after the latest
 * time of its thread (after the end of its last X, as `check --repair` does). */
static int close_slices(struct merge *m, struct input *in)
{
	for (struct thread_state *th = threads_first(&in->threads); th != NULL;
	     th = threads_next(th)) {
		while (th->depth > 0) {
			const struct open_slice *s = thread_top(th);
			int64_t ts = (th->has_time ? th->latest_ns : s->ts_ns) + 1;
			struct pid_map *pm = pid_of(m, in, th->pid);

			if (pm == NULL)
				return -1;
			if (ts <= INT64_MAX - in->shift_ns)
				ts += in->shift_ns;
			m->line.len = 0;
			if (put_end_event(&m->line, 'E', s->cat, s->cat_len, s->name, s->name_len,
					  NULL, 0, ts, pm->pid, th->tid)) {
				m->nomem = true;
				return -1;
			}
			if (write_line(m, m->line.p, m->line.len))
				return -1;
			note_time(m, ts);
			in->slices_closed++;
			m->closed++;
			m->written++;
			thread_pop(th);
		}
	}
	return 0;
}

/* An input has no more events: how did it end? */
static int finish_input(struct merge *m, struct input *in)
{
	const struct trace_reader_status *st = trace_reader_status(in->r);

	cli_warnings_done(&in->warnings);
	in->end_seen = in->held;
	in->held = false;
	/* The input's window ends at its end marker: so does the merged one. */
	if (in->end_seen && in->held_has_ts && in->held_ts <= INT64_MAX - in->shift_ns)
		note_time(m, in->held_ts + in->shift_ns);
	if (in->rc < 0)
		cli_error("merge", "%s", st->message);
	if (st->cut || in->rc < 0) {
		if (close_slices(m, in))
			return -1;
		cli_note("merge",
			 "warning: %s %s: merged its %" PRIu64 " whole events%s, %" PRIu64
			 " open slice%s ended",
			 in->name, in->rc < 0 ? "stopped at an error" : "was cut short", st->events,
			 st->cut_in_event ? " (a partial last event dropped)" : "",
			 in->slices_closed, in->slices_closed == 1 ? "" : "s");
	} else if (st->events == 0) {
		cli_note("merge", "warning: %s has no events", in->name);
	}
	return 0;
}

/* --------------------------------------------------------------- the markers */

static int put_origin(struct buf *b, const char *key, uint64_t v)
{
	return buf_putc(b, ',') || buf_put_key(b, key) || buf_putc(b, '"') || buf_put_u64(b, v) ||
	       buf_putc(b, '"');
}

static int write_start(struct merge *m)
{
	struct buf *b = &m->line;
	int err;

	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" START_MARKER
			  "\",\"ts\":0,\"pid\":") ||
	      buf_put_i64(b, m->marker_pid) || buf_puts(b, ",\"tid\":") ||
	      buf_put_i64(b, m->marker_tid) || buf_puts(b, ",\"args\":{\"merged_from\":") ||
	      buf_put_u64(b, m->n) || buf_puts(b, ",\"clock\":\"") ||
	      buf_puts(b, clock_names[m->clock]) || buf_putc(b, '"');
	if (!err && m->has_origin_mono)
		err = put_origin(b, "origin_monotonic_ns", m->origin_mono);
	if (!err && m->has_origin_real)
		err = put_origin(b, "origin_realtime_ns", m->origin_real);
	if (!err && m->host != NULL)
		err = buf_puts(b, ",\"host\":") || json_put_string(b, m->host, strlen(m->host)) < 0;
	err = err || buf_puts(b, ",\"inputs\":[");
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		const struct pid_map *pm =
			in->has_main ? table_get(&in->pids, &in->main_pid, sizeof(in->main_pid))
				     : NULL;

		err = (i > 0 && buf_putc(b, ',')) || buf_puts(b, "{\"file\":") ||
		      json_put_string(b, in->name, strlen(in->name)) < 0;
		if (!err && in->has_rank)
			err = buf_puts(b, ",\"rank\":") || buf_put_i64(b, in->rank);
		if (!err && in->host != NULL)
			err = buf_puts(b, ",\"host\":") ||
			      json_put_string(b, in->host, strlen(in->host)) < 0;
		if (!err && pm != NULL)
			err = buf_puts(b, ",\"pid\":") || buf_put_i64(b, in->main_pid) ||
			      buf_puts(b, ",\"merged_pid\":") || buf_put_i64(b, pm->pid);
		if (!err && in->has_mono)
			err = put_origin(b, "origin_monotonic_ns", in->mono);
		if (!err && in->has_real)
			err = put_origin(b, "origin_realtime_ns", in->real);
		if (!err)
			err = in->anchored ? buf_puts(b, ",\"shift_ns\":") ||
						     buf_put_i64(b, in->shift_ns)
					   : buf_puts(b, ",\"aligned\":false");
		err = err || buf_putc(b, '}');
	}
	if (err || buf_puts(b, "]}}")) {
		m->nomem = true;
		return -1;
	}
	return write_line(m, b->p, b->len);
}

/* Keys of the inputs' end markers that the merged one writes itself. */
static bool own_end_key(const struct json_member *a)
{
	return json_member_is(a, "final") || json_member_is(a, "merged_from") ||
	       json_member_is(a, "merged_events") || json_member_is(a, "slices_closed") ||
	       json_member_is(a, "inputs");
}

/* The inputs' end-marker counts, summed key by key in order of appearance. */
static int put_sums(struct merge *m, struct buf *b)
{
	struct table sums;
	int err = 0;

	table_init(&sums, sizeof(int64_t));
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		struct json_member a;
		size_t pos = 0;

		if (!in->end_seen)
			continue;
		while (!err && json_next_member(in->end_args.p, in->end_args.len, &pos, &a)) {
			int64_t v, *sum;

			if (own_end_key(&a) || json_parse_i64(a.value, a.value_len, &v) != 0)
				continue;
			sum = table_put(&sums, a.key, a.key_len, NULL);
			if (sum == NULL)
				err = -1;
			else
				*sum += v;
		}
	}
	for (int64_t *sum = table_first(&sums); sum != NULL && !err; sum = table_next(sum)) {
		size_t len;
		const char *key = table_key(&sums, sum, &len);

		err = buf_puts(b, ",\"") || buf_put(b, key, len) || buf_puts(b, "\":") ||
		      buf_put_i64(b, *sum);
	}
	table_destroy(&sums);
	return err;
}

static int write_end(struct merge *m)
{
	struct buf *b = &m->line;
	int err;

	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" END_MARKER "\",\"ts\":") ||
	      buf_put_us(b, m->has_latest && m->latest > 0 ? m->latest : 0) ||
	      buf_puts(b, ",\"pid\":") || buf_put_i64(b, m->marker_pid) ||
	      buf_puts(b, ",\"tid\":") || buf_put_i64(b, m->marker_tid) ||
	      buf_puts(b, ",\"args\":{\"final\":true,\"merged_from\":") || buf_put_u64(b, m->n) ||
	      put_sums(m, b) || buf_puts(b, ",\"merged_events\":") || buf_put_u64(b, m->written) ||
	      buf_puts(b, ",\"slices_closed\":") || buf_put_u64(b, m->closed) ||
	      buf_puts(b, ",\"inputs\":[");
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		const struct trace_reader_status *st = trace_reader_status(in->r);

		err = (i > 0 && buf_putc(b, ',')) || buf_puts(b, "{\"file\":") ||
		      json_put_string(b, in->name, strlen(in->name)) < 0 ||
		      buf_puts(b, ",\"final\":") ||
		      buf_puts(b, in->end_seen && in->end_final ? "true" : "false") ||
		      buf_puts(b, ",\"cut\":") || buf_puts(b, st->cut ? "true" : "false") ||
		      buf_puts(b, ",\"events\":") || buf_put_u64(b, in->events) || buf_putc(b, '}');
	}
	if (err || buf_puts(b, "]}}")) {
		m->nomem = true;
		return -1;
	}
	return output_write(m->out, b->p, b->len) || output_puts(m->out, "\n]\n");
}

/* ---------------------------------------------------------------- the merge */

static bool before(const struct merge *m, size_t a, size_t b)
{
	const struct input *x = &m->in[a], *y = &m->in[b];

	return x->key < y->key || (x->key == y->key && a < b);
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i, t;

		if (l < m->nheap && before(m, m->heap[l], m->heap[min]))
			min = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[min]))
			min = r;
		if (min == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = t;
		i = min;
	}
}

static void update_progress(struct merge *m)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < m->n; i++)
		bytes += trace_reader_status(m->in[i].r)->input_bytes;
	progress_update(m->bar, bytes);
}

static int run(struct merge *m)
{
	uint64_t steps = 0;

	m->heap = malloc(m->n * sizeof(*m->heap));
	if (m->heap == NULL) {
		m->nomem = true;
		return -1;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		in->key = INT64_MIN;
		if (in->head == NULL) {
			if (finish_input(m, in))
				return -1;
			continue;
		}
		in->key = key_of(in, in->head);
		m->heap[m->nheap++] = i;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
	while (m->nheap > 0) {
		struct input *in = &m->in[m->heap[0]];

		if (take(m, in, in->head))
			return -1;
		advance(in);
		if (in->head != NULL) {
			in->key = key_of(in, in->head);
		} else {
			if (finish_input(m, in))
				return -1;
			m->heap[0] = m->heap[--m->nheap];
		}
		sift_down(m, 0);
		if (++steps % PROGRESS_EVERY == 0)
			update_progress(m);
	}
	return 0;
}

static void free_merge(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		trace_reader_close(in->r);
		free(in->host);
		free(in->label);
		table_destroy(&in->pids);
		table_destroy(&in->ids);
		threads_destroy(&in->threads);
		buf_free(&in->held_json);
		buf_free(&in->end_args);
	}
	free(m->in);
	free(m->heap);
	table_destroy(&m->claims);
	table_destroy(&m->tags);
	buf_free(&m->line);
	buf_free(&m->text);
	buf_free(&m->args);
	output_free(m->out);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"clock", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct progress bar;
	struct merge m = {.clock = CLOCK_AUTO, .bar = &bar};
	const char *output = NULL;
	bool input_error = false, stdin_seen = false;
	int ch, err, status = CLI_OK;

	while ((ch = getopt_long(argc, argv, "o:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			output = optarg;
			break;
		case 'c':
			if (strcmp(optarg, "auto") == 0)
				m.clock = CLOCK_AUTO;
			else if (strcmp(optarg, "monotonic") == 0)
				m.clock = CLOCK_MONO;
			else if (strcmp(optarg, "realtime") == 0)
				m.clock = CLOCK_REAL;
			else
				return cli_usage_error(
					"merge",
					"--clock wants auto, monotonic or realtime, not '%s'",
					optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("merge", "unknown option");
		}
	}
	if (optind == argc)
		return cli_usage_error("merge", "no FILE to merge");
	if (output == NULL)
		return cli_usage_error("merge", "no output: -o OUT");
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0)
			continue;
		if (stdin_seen)
			return cli_usage_error("merge", "standard input (-) given twice");
		stdin_seen = true;
	}
	progress_init(&bar, "merging");
	table_init(&m.claims, sizeof(struct claim));
	table_init(&m.tags, sizeof(size_t));
	if (open_inputs(&m, argv + optind, (size_t)(argc - optind))) {
		free_merge(&m);
		return CLI_ERROR;
	}
	align(&m);
	if (make_labels(&m) || claim_main_pids(&m)) {
		cli_error("merge", "out of memory");
		free_merge(&m);
		return CLI_ERROR;
	}
	for (size_t i = 0; i < m.n; i++) {
		const struct input *in = &m.in[i];

		if (in->has_main) {
			const struct pid_map *pm =
				table_get(&in->pids, &in->main_pid, sizeof(in->main_pid));

			m.marker_pid = pm->pid;
			m.marker_tid = in->main_tid;
			break;
		}
	}
	err = output_open(output, output_path_is_gzip(output), &m.out);
	if (err != 0) {
		cli_error("merge", "cannot write %s: %s", output, strerror(-err));
		free_merge(&m);
		return CLI_ERROR;
	}
	err = output_puts(m.out, "[\n") || write_start(&m) || run(&m) || write_end(&m);
	progress_finish(&bar);
	for (size_t i = 0; i < m.n; i++)
		input_error |= m.in[i].rc < 0;
	if (err || output_commit(m.out) != 0) {
		cli_error("merge", "%s", m.nomem ? "out of memory" : output_error(m.out));
		status = CLI_ERROR;
	} else if (input_error) {
		cli_error("merge", "%s holds the events before the error, completed",
			  output_name(m.out));
		status = CLI_ERROR;
	} else {
		cli_note("merge", "wrote %s: %" PRIu64 " events from %zu file%s (clock %s)",
			 output_name(m.out), m.written, m.n, m.n == 1 ? "" : "s",
			 clock_names[m.clock]);
	}
	free_merge(&m);
	return status;
}
