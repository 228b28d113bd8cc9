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
 * Memory is one pending event and one reader per input, never per event; with more
 * inputs than the open-files soft limit allows, the limit is raised (up to the hard
 * one).
 *
 * Clocks. Each file's times are relative to its own origin, which its start marker
 * records as absolute CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds.
 *  - MPI ranks that measured their clock against a reference rank (the MPI module's
 *    "ringtrace: clock sync" events, merge_clock.h) are mapped onto the reference's
 *    clock, piecewise linearly between their measurements, so that drift is
 *    followed (--clock sync; what auto takes when any file has measurements). A
 *    file without them is placed by its origins against the measured file of the
 *    lowest rank: on CLOCK_MONOTONIC from one host, else CLOCK_REALTIME.
 *  - Without measurements, the merged file uses the earliest input's origin: every
 *    time is shifted by (its origin - the earliest). CLOCK_MONOTONIC is one clock for
 *    every process of a host and exact, so auto takes it when all inputs name the
 *    same host; across hosts only CLOCK_REALTIME is shared (as well as NTP agrees).
 * Times are mapped in integer nanoseconds and written again with at most three
 * decimals; the merged origin is the earliest mapped file origin. An input without
 * a start marker keeps its times as they are.
 *
 * Messages. A flow of the MPI module (category "mpi" in a file with a rank; its id
 * is kept across files, below) is a message: its "f" must not come before its "s". Each "s" is
 * remembered (per message in flight, never per message) until its "f" is taken; an input whose next
 * event is an "f" whose "s" has not been taken yet waits outside the merge until it is (or until
 * the merge is STALL_NS past it, or nothing else is left: its send is then not among the inputs). A
 * receive still before its send (plus --min-latency) after the clock map moves its thread forward
 * by the controlled logical clock (merge_clock.h), and the counts go to standard error and the end
 * marker: messages, receives before their send after the map (violations), messages and events
 * moved, the largest move.
 *
 * Segments. The files of one rotated trace (start markers with the same origin,
 * host, pid and rank, and different "segment" numbers) are one process: they share
 * their output pids and their clock sync measurements, so that a segment without a
 * measurement of its own is mapped like the others.
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
 * Flow and async ids. The viewers match them across the whole trace. Two kinds of
 * id are the same in every file and kept as they are, so that a flow from one rank
 * to another stays joined: the ids of flows in category "mpi" of a file with a rank
 * (the MPI module's message ids, a hash of communicator, ranks, tag and sequence
 * number that both ends compute), and the ids made by rtr_flow_id(), which hold the
 * pid of their process in their top 24 bits, when those bits name exactly one
 * input's pid. Every other id (hand-written files, ids of two inputs with the same
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
#include "merge_clock.h"
#include "merge_json.h"
#include "output.h"
#include "pftrace.h"
#include "progress.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Flow and async ids remembered per input before the oldest are forgotten: what a
 * file whose flows never end costs at most (about 100 bytes each: 25 MiB). */
#define MAX_IDS (1u << 18)

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

/* How far past a receive the merge goes looking for its send. */
#define STALL_NS ((int64_t)1000000000)

/* The least time from a send to its receive, by default (--min-latency). */
#define DEFAULT_MIN_LATENCY_NS 100

/* Inputs beyond which each reader takes small buffers. */
#define MANY_INPUTS 64

/* Open files besides the inputs: the output, its temporary, standard streams, zlib. */
#define SPARE_FILES 16

enum clock_choice { CLOCK_AUTO, CLOCK_MONO, CLOCK_REAL, CLOCK_SYNC, CLOCK_NONE };

static const char *const clock_names[] = {
	[CLOCK_AUTO] = "auto", [CLOCK_MONO] = "monotonic", [CLOCK_REAL] = "realtime",
	[CLOCK_SYNC] = "sync", [CLOCK_NONE] = "none",
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

/* The value of merge.sends, under a message's flow id: its send's times. */
struct send {
	int64_t linear_ns; /* after the clock map */
	int64_t ts_ns;	   /* as written (moved too, when its thread was) */
	bool timed;	   /* it had a time in range */
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
	struct trace *r;
	struct cli_warnings warnings;
	const struct trace_event *head; /* the next event, or NULL when done */
	int64_t key;			/* its place in the merge */
	int rc;				/* the reader's last return */

	/* From the start marker. */
	bool has_start, has_mono, has_real, has_rank, has_main, has_segment;
	uint64_t segment; /* of a rotated trace (its start marker's "segment") */
	uint64_t mono, real;
	int64_t rank;
	char *host;
	int64_t main_pid, main_tid;
	char *label; /* "rank 3 · node12" */
	int64_t order;
	bool anchored;
	int64_t shift_ns;      /* merged time - file time, unless measured */
	size_t process;	       /* the first input of the same process (rotated segments) */
	struct sync_set sync;  /* its process's clock sync measurements */
	bool measured;	       /* mapped by them */
	int64_t sync_base;     /* merged time = file time + sync_base + offset */
	int64_t mapped_origin; /* its time 0 on the reference clock, absolute */
	bool has_mapped_origin;

	/* The head event's place: its times in the merged timeline. */
	bool head_set_ts, head_set_dur, head_moved, head_timed;
	int64_t head_ts, head_dur, head_linear;
	bool released;	       /* its "f" no longer waits for its send */
	size_t pos, stall_pos; /* in the ready and the waiting heap */
	struct table clc;      /* (pid, tid) -> struct clc_thread: threads with moves */
	uint64_t moved_events;

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

/* Heaps of input indexes by key (ties: command-line order); each input knows its
 * place in each (input.pos, input.stall_pos). */
struct heap {
	size_t *a, n;
	bool waiting;
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
	struct heap ready;	    /* inputs whose head can be taken, by key */
	struct heap wait;	    /* inputs whose head waits for its send, by key */
	struct buf key;		    /* of the message tables */
	struct table sends;	    /* message id -> struct send, until its receive */
	struct table waiters;	    /* message id -> input index */
	enum clock_choice fallback; /* the origins used for files without measurements */
	bool correct;		    /* apply the controlled logical clock */
	int64_t min_latency_ns;
	int64_t reference_rank, max_rtt_ns, max_error_ns;
	size_t measured; /* inputs mapped by measurements */
	uint64_t messages, violations, corrected, moved_events, unmatched, forgotten;
	int64_t max_move_ns;
	bool nomem;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace merge [--clock auto|sync|monotonic|realtime] [--min-latency NS]\n"
		"                       [--no-correction] -o OUT FILE...\n"
		"\n"
		"Merges the traces of several processes or MPI ranks (.json or .json.gz;\n"
		"- is standard input) into one timeline, streaming:\n"
		"  - times on one clock: MPI ranks' mapped onto the reference rank's by their\n"
		"    clock sync measurements (linear between them, so drift is followed);\n"
		"    else aligned on the earliest file's origin (each file's start marker),\n"
		"    on CLOCK_MONOTONIC when all files come from one host, else on\n"
		"    CLOCK_REALTIME;\n"
		"  - flows joined across files (the MPI module's messages, rtr_flow_id()\n"
		"    flows), and an MPI receive still before its send after that moved\n"
		"    forward (controlled logical clock), with the counts on standard error\n"
		"    and in the end marker;\n"
		"  - pids made collision-free (a pid two files use is remapped in the later\n"
		"    one), processes named \"rank R \xc2\xb7 host \xc2\xb7 name\" and sorted by "
		"rank;\n"
		"  - other flow and async ids kept apart between files;\n"
		"  - one start marker and one end marker for the whole.\n"
		"A file cut short gives its whole events (its open slices ended).\n"
		"\n"
		"options:\n"
		"  -o, --output OUT       where to write (required); gzip when OUT ends in .gz;\n"
		"                         - for standard output\n"
		"  -c, --clock CLOCK      auto (the default: sync when a file has clock sync\n"
		"                         events), sync, monotonic or realtime\n"
		"      --min-latency NS   the least time from a send to its receive (default\n"
		"                         %d)\n"
		"      --no-correction    count the receives before their send, move nothing\n"
		"  -h, --help             this help\n"
		"\n"
		"exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		"output then holds the events before the error), failed output.\n",
		DEFAULT_MIN_LATENCY_NS);
}

/* Room for n inputs in the open-files limit: the soft limit raised up to the hard
 * one. 0, or -1 (reported). */
static int room_for_files(size_t n)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)n + SPARE_FILES;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		cli_error("merge",
			  "%zu files need %llu open files, and the hard limit is %llu: raise it "
			  "(ulimit -Hn), or merge the ranks in groups and merge the groups",
			  n, (unsigned long long)need, (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		cli_error("merge", "cannot raise the open-files limit to %llu: %s",
			  (unsigned long long)need, strerror(errno));
		return -1;
	}
	return 0;
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
	v = trace_event_arg(ev, "segment");
	in->has_segment = v != NULL && value_u64(v, &in->segment) == 0;
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
	in->rc = trace_next(in->r, &in->head);
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
		struct trace_options ro = {.on_issue = cli_warn_issue,
					   .ctx = &in->warnings,
					   .flags = n > MANY_INPUTS ? TRACE_READ_SMALL : 0};

		in->index = i;
		in->path = paths[i];
		in->warnings.max = 10;
		table_init(&in->pids, sizeof(struct pid_map));
		table_init(&in->ids, sizeof(struct id_map));
		table_init(&in->clc, sizeof(struct clc_thread));
		threads_init(&in->threads, 0);
		in->r = cli_open_trace("merge", paths[i], &ro);
		if (in->r == NULL)
			return -1;
		in->name = trace_name(in->r);
		in->warnings.file = in->name;
		progress_total(m->bar, trace_status(in->r)->input_size);
	}
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];

		advance(in);
		if (in->head != NULL && is_marker(in->head, START_MARKER)) {
			/* Its thread counts (threads.h), though merge writes its own marker. */
			if ((threads_of(&in->threads, in->head) == NULL &&
			     !threads_refused(&in->threads)) ||
			    read_start_marker(in, in->head)) {
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

/* Is b another segment of a's rotated trace (the same origin, host, pid and rank in
 * its start marker, another segment number)? Not a copy of the same file, nor a
 * flight-mode snapshot (snapshots overlap): those stay processes of their own. */
static bool same_process(const struct input *a, const struct input *b)
{
	return a->has_segment && b->has_segment && a->segment != b->segment && a->has_mono &&
	       b->has_mono && a->mono == b->mono && a->has_main && b->has_main &&
	       a->main_pid == b->main_pid && a->has_rank == b->has_rank &&
	       (!a->has_rank || a->rank == b->rank) && (a->host == NULL) == (b->host == NULL) &&
	       (a->host == NULL || strcmp(a->host, b->host) == 0);
}

/* Each input's process: the first input of the same process. 0, or -1 out of memory. */
static int group_processes(struct merge *m)
{
	struct table first; /* (mono, pid) -> index + 1 of the first input with them */
	int err = 0;

	table_init(&first, sizeof(size_t));
	for (size_t i = 0; i < m->n && !err; i++) {
		struct input *in = &m->in[i];
		int64_t key[2] = {(int64_t)in->mono, in->main_pid};
		size_t *f;

		in->process = i;
		if (!in->has_segment || !in->has_mono || !in->has_main)
			continue;
		f = table_put(&first, key, sizeof(key), NULL);
		if (f == NULL)
			err = -1;
		else if (*f == 0)
			*f = i + 1;
		else if (same_process(&m->in[*f - 1], in))
			in->process = *f - 1;
	}
	table_destroy(&first);
	return err;
}

/* Read every ranked input's clock sync measurements (not standard input's: it
 * cannot be read twice). 0, or -1 out of memory (reported). */
static int scan_syncs(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		char err[256];
		int rc;

		if (!in->has_rank || !in->has_mono || in->mono > INT64_MAX)
			continue;
		if (strcmp(in->path, "-") == 0) {
			cli_note("merge",
				 "warning: standard input is read once: its clock sync events (if "
				 "any) are not used");
			continue;
		}
		if (pf_sniff_path(in->path) == 1) {
			/* a Perfetto trace: its measurements from its events, read once more */
			struct trace_options o = {.max_event_bytes = cli_max_event_bytes()};
			struct trace *t;
			int e = trace_open(in->path, &o, &t);

			if (e != 0) {
				snprintf(err, sizeof(err), "%s", strerror(-e));
				rc = -1;
			} else {
				rc = sync_scan_trace(t, in->rank, &in->sync, err, sizeof(err));
				trace_close(t);
			}
		} else {
			rc = sync_scan(in->path, in->rank, &in->sync, err, sizeof(err));
		}
		if (rc == -2) {
			cli_error("merge", "out of memory");
			return -1;
		}
		if (rc == -1) {
			cli_note("merge", "warning: %s: clock sync events not read: %s", in->name,
				 err);
			in->sync.n = 0;
		}
	}
	/* The segments of one process share their measurements. */
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->process != i && sync_pool(&m->in[in->process].sync, &in->sync)) {
			cli_error("merge", "out of memory");
			return -1;
		}
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->process == i) {
			sync_finish(&in->sync);
		} else {
			sync_free(&in->sync);
			if (sync_copy(&in->sync, &m->in[in->process].sync)) {
				cli_error("merge", "out of memory");
				return -1;
			}
			continue;
		}
		if (in->sync.unusable + in->sync.outliers > 0)
			cli_note("merge",
				 "warning: %s: %" PRIu64 " of %" PRIu64
				 " clock sync measurements not used (%" PRIu64
				 " malformed or out of order, %" PRIu64 " outliers)",
				 in->name, in->sync.unusable + in->sync.outliers, in->sync.found,
				 in->sync.unusable, in->sync.outliers);
	}
	return 0;
}

/* a + b, or false when it does not fit. */
static bool add_i64(int64_t a, int64_t b, int64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* The reference clock's time of an input's file time t (measured inputs). */
static bool sync_time(struct input *in, int64_t t, int64_t *ref)
{
	int64_t at;

	return add_i64(t, (int64_t)in->mono, &at) && add_i64(at, sync_offset(&in->sync, at), ref);
}

/* The origins of the inputs, without measurements: their shift onto the earliest. */
static void align_by_origins(struct merge *m, enum clock_choice c)
{
	size_t earliest = m->n;
	uint64_t min = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (has_origin(in, c) && (earliest == m->n || origin_of(in, c) < min)) {
			earliest = i;
			min = origin_of(in, c);
		}
	}
	m->clock = earliest < m->n ? c : CLOCK_NONE;
	if (earliest < m->n) {
		const struct input *e = &m->in[earliest];

		m->has_origin_mono = e->has_mono && (c == CLOCK_MONO || m->host != NULL);
		m->origin_mono = e->mono;
		m->has_origin_real = e->has_real;
		m->origin_real = e->real;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		uint64_t shift;

		if (!has_origin(in, c))
			continue;
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

/* With measurements: the measured inputs on the reference clock, the others placed
 * by their origins against the measured input of the lowest rank. false when no
 * input can be mapped. */
static bool align_by_syncs(struct merge *m, enum clock_choice c)
{
	struct input *anchor = NULL;
	int64_t base = INT64_MAX;

	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->sync.n == 0)
			continue;
		if (anchor != NULL && in->sync.reference_rank != anchor->sync.reference_rank) {
			cli_note("merge",
				 "warning: %s measured its clock against rank %" PRId64
				 ", not %" PRId64 ": aligned by its origin instead",
				 in->name, in->sync.reference_rank, anchor->sync.reference_rank);
			in->sync.n = 0;
			continue;
		}
		/* Origins within half the range of int64 keep every difference of two in it. */
		if (in->mono > INT64_MAX / 2 || !sync_time(in, 0, &in->mapped_origin) ||
		    in->mapped_origin > INT64_MAX / 2 || in->mapped_origin < INT64_MIN / 2) {
			cli_note("merge",
				 "warning: %s: its clock sync measurements map it out of range: "
				 "aligned by its origin instead",
				 in->name);
			in->sync.n = 0;
			continue;
		}
		in->measured = in->has_mapped_origin = true;
		m->measured++;
		if (anchor == NULL || in->rank < anchor->rank)
			anchor = in;
	}
	if (anchor == NULL)
		return false;
	m->reference_rank = anchor->sync.reference_rank;
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		__int128 mapped;

		if (in->measured) {
			int64_t rtt, error;

			sync_bounds(&in->sync, &rtt, &error);
			m->max_rtt_ns = rtt > m->max_rtt_ns ? rtt : m->max_rtt_ns;
			m->max_error_ns = error > m->max_error_ns ? error : m->max_error_ns;
		} else if (has_origin(in, c) && has_origin(anchor, c)) {
			mapped = (__int128)origin_of(in, c) - origin_of(anchor, c) +
				 anchor->mapped_origin;
			if (mapped > INT64_MAX / 2 || mapped < INT64_MIN / 2) {
				cli_note("merge",
					 "warning: %s is too far from the other files: its times "
					 "are taken as they are, not aligned",
					 in->name);
				continue;
			}
			in->mapped_origin = (int64_t)mapped;
			in->has_mapped_origin = true;
		}
		if (in->has_mapped_origin && in->mapped_origin < base)
			base = in->mapped_origin;
	}
	m->clock = CLOCK_SYNC;
	m->has_origin_mono = base >= 0;
	m->origin_mono = (uint64_t)base;
	m->has_origin_real =
		anchor->has_real && (__int128)anchor->real - (anchor->mapped_origin - base) >= 0;
	m->origin_real = (uint64_t)((__int128)anchor->real - (anchor->mapped_origin - base));
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (!in->has_mapped_origin)
			continue;
		in->anchored = true;
		in->shift_ns = in->mapped_origin - base;
		if (in->measured)
			in->sync_base = (int64_t)in->mono - base;
	}
	return true;
}

/* Choose the clock, the common origin and each input's map onto it. */
static void align(struct merge *m)
{
	enum clock_choice c = m->clock;
	bool same_host = true, all_mono = true, any_sync = false;
	const char *host = NULL;

	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (in->host == NULL)
			same_host = false;
		else if (host == NULL)
			host = in->host;
		else if (strcmp(host, in->host) != 0)
			same_host = false;
		all_mono &= in->has_mono;
		any_sync |= in->sync.n > 0;
	}
	m->host = same_host ? host : NULL;
	/* One host: its CLOCK_MONOTONIC is one clock for all its processes, and exact.
	 * Several hosts (or some unnamed): only CLOCK_REALTIME is common to them. */
	m->fallback = same_host && all_mono ? CLOCK_MONO : CLOCK_REAL;
	if (c == CLOCK_SYNC && !any_sync)
		cli_note("merge", "warning: --clock sync, but no file has clock sync events: "
				  "aligned by the files' origins");
	if ((c == CLOCK_AUTO || c == CLOCK_SYNC) && any_sync && align_by_syncs(m, m->fallback))
		goto report;
	if (c == CLOCK_AUTO || c == CLOCK_SYNC)
		c = m->fallback;
	else if (c == CLOCK_MONO && !same_host)
		cli_note("merge", "warning: --clock monotonic, but the files are not all from one "
				  "host: their monotonic clocks have unrelated origins");
	m->fallback = c;
	align_by_origins(m, c);
report:
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (!in->anchored && !has_origin(in, m->fallback))
			cli_note("merge",
				 "warning: %s has no %s: its times are taken as they are, not "
				 "aligned",
				 in->name,
				 !in->has_start		     ? "start marker"
				 : m->fallback == CLOCK_MONO ? "origin_monotonic_ns"
							     : "origin_realtime_ns");
	}
	if (m->clock == CLOCK_SYNC)
		cli_note("merge",
			 "clocks: %zu of %zu files mapped onto rank %" PRId64
			 "'s clock by their clock sync measurements (offsets right within %.3f "
			 "us; largest RTT %.3f us)%s",
			 m->measured, m->n, m->reference_rank, (double)m->max_error_ns / 1e3,
			 (double)m->max_rtt_ns / 1e3,
			 m->measured == m->n	     ? ""
			 : m->fallback == CLOCK_MONO ? "; the others by their monotonic origins"
						     : "; the others by their realtime origins");
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
		const struct pid_map *first =
			in->process != in->index
				? table_get(&m->in[in->process].pids, &pid, sizeof(pid))
				: NULL;

		/* Another segment of a process: the pids its first segment was given. */
		c = table_get(&m->claims, &pid, sizeof(pid));
		if (first != NULL) {
			pm->pid = first->pid;
		} else if (c != NULL && c->pid == pid && m->in[c->input].process == in->process) {
			pm->pid = pid;
		} else {
			pm->pid = c != NULL ? free_pid(m, in, pid) : pid;
			c = table_put(&m->claims, &pm->pid, sizeof(pm->pid), NULL);
			if (c == NULL) {
				m->nomem = true;
				return NULL;
			}
			c->input = in->index;
			c->pid = pid;
		}
		pm->remapped = pm->pid != pid;
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
		if (in->process != i)
			continue; /* its process is counted once */
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

	/* The MPI module names a rank's process "rank R": the label says it already. */
	if (name != NULL && in->has_rank) {
		snprintf(num, sizeof(num), "rank %" PRId64, in->rank);
		if (trace_value_is(name, num))
			name = NULL;
	}
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

/* Is the event's id the same in every input, and kept? The MPI module's message ids,
 * and the global ids of rtr_flow_id(). */
static bool kept_id(const struct merge *m, const struct input *in, const struct trace_event *ev)
{
	bool flow = ev->phase == 's' || ev->phase == 't' || ev->phase == 'f';

	if (ev->id.type == TRACE_ABSENT)
		return false;
	return (flow && in->has_rank && trace_value_is(&ev->cat, "mpi")) || global_id(m, &ev->id);
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

	if (ev->id.type == TRACE_ABSENT || kept_id(m, in, ev))
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

/* An input's time t in the merged timeline, before any move; false out of range. */
static bool linear_time(struct input *in, int64_t t, int64_t *out)
{
	int64_t at, sum;

	if (!in->measured)
		return add_i64(t, in->shift_ns, out);
	return add_i64(t, (int64_t)in->mono, &at) && add_i64(t, in->sync_base, &sum) &&
	       add_i64(sum, sync_offset(&in->sync, at), out);
}

/* The moves of a thread of the input; created (zeroed: none yet) when asked. NULL:
 * none, or out of memory (then m->nomem). */
static struct clc_thread *moves_of(struct merge *m, struct input *in, int64_t pid, int64_t tid,
				   bool create)
{
	int64_t key[2] = {pid, tid};
	struct clc_thread *c;

	if (!create)
		return in->clc.count > 0 ? table_get(&in->clc, key, sizeof(key)) : NULL;
	c = table_put(&in->clc, key, sizeof(key), NULL);
	m->nomem |= c == NULL;
	return c;
}

/* A time of a thread of the input in the merged timeline, moves included. */
static bool merged_time(struct merge *m, struct input *in, int64_t pid, int64_t tid, int64_t t,
			int64_t *linear, int64_t *out)
{
	const struct clc_thread *c = moves_of(m, in, pid, tid, false);

	if (!linear_time(in, t, linear))
		return false;
	return add_i64(*linear, c != NULL ? clc_move(c, *linear) : 0, out);
}

/* The head's times in the merged timeline, and its place in the merge (its time; an
 * X's end, since the recorder writes an X when it ends, which follows each file's own
 * order best; an event without a time stays where the input's last one was). */
static void place_head(struct merge *m, struct input *in)
{
	const struct trace_event *ev = in->head;
	int64_t pid, tid, end, lin_end, out_end;

	in->head_set_ts = in->head_set_dur = in->head_moved = in->released = false;
	in->head_timed = false;
	if (!ev->has_ts)
		return;
	trace_event_thread(ev, &pid, &tid);
	if (!merged_time(m, in, pid, tid, ev->ts_ns, &in->head_linear, &in->head_ts)) {
		in->key = INT64_MAX; /* written as it is, last */
		return;
	}
	in->head_timed = true;
	/* Written again when moved, or inexact (more than three decimals), as Perfetto
	 * would round it. */
	in->head_set_ts = in->head_ts != ev->ts_ns || !ev->ts_exact;
	in->head_moved = in->head_ts != in->head_linear;
	in->key = in->head_ts;
	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 &&
	    add_i64(ev->ts_ns, ev->dur_ns, &end) &&
	    merged_time(m, in, pid, tid, end, &lin_end, &out_end) &&
	    !__builtin_sub_overflow(out_end, in->head_ts, &in->head_dur)) {
		in->head_set_dur = in->head_dur != ev->dur_ns;
		in->head_moved |= out_end != lin_end;
		in->key = out_end;
	}
}

/* ------------------------------------------------------------------ messages */

/* The key of a message's tables: the id's type and text. NULL when out of memory. */
static const struct buf *message_key(struct merge *m, const struct trace_event *ev)
{
	m->key.len = 0;
	if (buf_putc(&m->key, (char)ev->id.type) || buf_put(&m->key, ev->id.text, ev->id.len)) {
		m->nomem = true;
		return NULL;
	}
	return &m->key;
}

/* Is the event a message's send or receive? */
static bool is_message(const struct input *in, const struct trace_event *ev)
{
	/* The MPI module's: a message always goes from one rank's file to another's (or
	 * to itself, send first). Not the other kept ids: a flow between two threads of
	 * one process may have its f written before its s (the writer drains one
	 * thread's ring after the other), and waiting for it would hold the file back. */
	return (ev->phase == 's' || ev->phase == 'f') && ev->id.type != TRACE_ABSENT &&
	       in->has_rank && trace_value_is(&ev->cat, "mpi");
}

static size_t *place_in(struct merge *m, const struct heap *h, size_t i)
{
	return h->waiting ? &m->in[i].stall_pos : &m->in[i].pos;
}

static bool before(const struct merge *m, size_t a, size_t b)
{
	const struct input *x = &m->in[a], *y = &m->in[b];

	return x->key < y->key || (x->key == y->key && a < b);
}

static void heap_set(struct merge *m, struct heap *h, size_t at, size_t input)
{
	h->a[at] = input;
	*place_in(m, h, input) = at;
}

static void heap_fix(struct merge *m, struct heap *h, size_t i)
{
	size_t x = h->a[i];

	while (i > 0 && before(m, x, h->a[(i - 1) / 2])) {
		heap_set(m, h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = l;

		if (l >= h->n)
			break;
		if (r < h->n && before(m, h->a[r], h->a[l]))
			min = r;
		if (!before(m, h->a[min], x))
			break;
		heap_set(m, h, i, h->a[min]);
		i = min;
	}
	heap_set(m, h, i, x);
}

static void heap_push(struct merge *m, struct heap *h, size_t input)
{
	heap_set(m, h, h->n++, input);
	heap_fix(m, h, h->n - 1);
}

static size_t heap_remove(struct merge *m, struct heap *h, size_t at)
{
	size_t input = h->a[at];

	if (at != --h->n) {
		heap_set(m, h, at, h->a[h->n]);
		heap_fix(m, h, at);
	}
	return input;
}

/* Into the merge: or to wait, when its head is a receive whose send is still to come. */
static void enqueue(struct merge *m, struct input *in)
{
	const struct buf *key;
	size_t *waiter;
	bool created;

	if (in->released || !is_message(in, in->head) || in->head->phase != 'f' ||
	    (key = message_key(m, in->head)) == NULL ||
	    table_get(&m->sends, key->p, key->len) != NULL) {
		heap_push(m, &m->ready, in->index);
		return;
	}
	waiter = table_put(&m->waiters, key->p, key->len, &created);
	if (waiter == NULL || !created) {
		/* Out of memory, or a second receive of one id: no wait. */
		m->nomem |= waiter == NULL;
		heap_push(m, &m->ready, in->index);
		return;
	}
	*waiter = in->index;
	heap_push(m, &m->wait, in->index);
}

/* A waiting input back into the merge, its send taken or not to be found. */
static void release(struct merge *m, struct input *in, bool found)
{
	const struct buf *key = message_key(m, in->head);
	size_t *waiter = key != NULL ? table_get(&m->waiters, key->p, key->len) : NULL;

	if (waiter != NULL)
		table_remove(&m->waiters, waiter);
	heap_remove(m, &m->wait, in->stall_pos);
	in->released = !found;
	heap_push(m, &m->ready, in->index);
}

/* A send is taken: remembered until its receive, which may be waiting for it. */
static int take_send(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct buf *key = message_key(m, ev);
	struct send *s;
	size_t *waiter;

	if (key == NULL || (s = table_put(&m->sends, key->p, key->len, NULL)) == NULL) {
		m->nomem = true;
		return -1;
	}
	s->linear_ns = in->head_linear;
	s->ts_ns = in->head_ts;
	s->timed = in->head_timed;
	waiter = table_get(&m->waiters, key->p, key->len);
	if (waiter != NULL)
		release(m, &m->in[*waiter], true);
	if (m->sends.count > MAX_IDS) {
		table_remove(&m->sends, table_first(&m->sends)); /* the oldest */
		m->forgotten++;
	}
	return 0;
}

/* A receive is taken: after its send (if the send is in the merge), and after it by
 * the minimum latency, its thread moved forward if it must be. */
static int take_receive(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct buf *key = message_key(m, ev);
	struct send *s = key != NULL ? table_get(&m->sends, key->p, key->len) : NULL;
	struct clc_thread *c;
	int64_t pid, tid, want, jump;

	if (key == NULL)
		return -1;
	if (s == NULL) {
		m->unmatched++;
		return 0;
	}
	m->messages++;
	if (!in->head_timed || !s->timed) {
		table_remove(&m->sends, s); /* a time out of range: nothing to compare */
		return 0;
	}
	m->violations += in->head_linear < s->linear_ns;
	if (m->correct && (__int128)in->head_ts - s->ts_ns < m->min_latency_ns &&
	    add_i64(s->ts_ns, m->min_latency_ns, &want) &&
	    !__builtin_sub_overflow(want, in->head_linear, &jump)) {
		trace_event_thread(ev, &pid, &tid);
		c = moves_of(m, in, pid, tid, true);
		if (c == NULL)
			return -1;
		clc_jump(c, in->head_linear, jump);
		if (jump > m->max_move_ns)
			m->max_move_ns = jump;
		in->head_ts = in->key = want;
		in->head_set_ts = in->head_moved = true;
		m->corrected++;
	}
	table_remove(&m->sends, s);
	return 0;
}

/* ---------------------------------------------------------------- the take */

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
	if (in->held_has_ts && linear_time(in, in->held_ts, &e.ts_ns)) {
		e.set_ts = true;
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

	if (th == NULL && threads_refused(&in->threads))
		return 0; /* past the state bound: its slices are not ended at a cut */
	if (th == NULL) {
		m->nomem = true;
		return -1;
	}
	thread_note_time(th, ev);
	if (ev->phase == 'B') {
		if (thread_push(th, ev) == -ENOMEM) {
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
	if (is_marker(ev, END_MARKER)) {
		/* Its thread counts (threads.h); its time does not end the cut slices. */
		if (threads_of(&in->threads, ev) == NULL && !threads_refused(&in->threads)) {
			m->nomem = true;
			return -1;
		}
		return hold_end(m, in, ev);
	}
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
	if (is_message(in, ev) &&
	    (ev->phase == 'f' ? take_receive(m, in, ev) : take_send(m, in, ev)))
		return -1;
	e.set_ts = in->head_set_ts;
	e.ts_ns = in->head_ts;
	e.set_dur = in->head_set_dur;
	e.dur_ns = in->head_dur;
	if (in->head_moved) {
		in->moved_events++;
		m->moved_events++;
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
		note_time(m, in->key);
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
		th->untracked = 0; /* past the state bound: not known, left open */
		while (th->depth > 0) {
			const struct open_slice *s = thread_top(th);
			int64_t t = th->has_time ? th->latest_ns : s->ts_ns, linear, ts = t;
			struct pid_map *pm = pid_of(m, in, th->pid);

			if (pm == NULL)
				return -1;
			if (t < INT64_MAX &&
			    !merged_time(m, in, th->pid, th->tid, t + 1, &linear, &ts))
				ts = t;
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
	const struct trace_status *st = trace_status(in->r);
	int64_t t;

	cli_warnings_done(&in->warnings);
	in->end_seen = in->held;
	in->held = false;
	/* The input's window ends at its end marker: so does the merged one. */
	if (in->end_seen && in->held_has_ts && linear_time(in, in->held_ts, &t))
		note_time(m, t);
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
	int64_t rtt = 0, error = 0;
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
	if (!err && m->clock == CLOCK_SYNC)
		err = buf_puts(b, ",\"reference_rank\":") || buf_put_i64(b, m->reference_rank) ||
		      buf_puts(b, ",\"max_error_ns\":") || buf_put_i64(b, m->max_error_ns) ||
		      buf_puts(b, ",\"max_rtt_ns\":") || buf_put_i64(b, m->max_rtt_ns);
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
		if (!err && in->anchored)
			err = buf_puts(b, ",\"aligned_by\":\"") ||
			      buf_puts(b, in->measured		      ? "clock sync"
					  : m->fallback == CLOCK_MONO ? "origin_monotonic_ns"
								      : "origin_realtime_ns") ||
			      buf_putc(b, '"');
		if (in->measured)
			sync_bounds(&in->sync, &rtt, &error);
		if (!err && in->measured)
			err = buf_puts(b, ",\"clock_syncs\":") || buf_put_u64(b, in->sync.n) ||
			      buf_puts(b, ",\"offset_ns\":") ||
			      buf_put_i64(b, in->sync.m[0].offset_ns) ||
			      buf_puts(b, ",\"drift_ppb\":") ||
			      buf_put_i64(b, sync_drift_ppb(&in->sync)) ||
			      buf_puts(b, ",\"max_error_ns\":") || buf_put_i64(b, error) ||
			      buf_puts(b, ",\"max_rtt_ns\":") || buf_put_i64(b, rtt);
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
	       json_member_is(a, "messages") || json_member_is(a, "inputs");
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

/* The messages' counts: ,"messages":{...}. */
static int put_messages(struct merge *m, struct buf *b)
{
	return buf_puts(b, ",\"messages\":{\"joined\":") || buf_put_u64(b, m->messages) ||
	       buf_puts(b, ",\"violations\":") || buf_put_u64(b, m->violations) ||
	       buf_puts(b, ",\"corrected\":") || buf_put_u64(b, m->corrected) ||
	       buf_puts(b, ",\"moved_events\":") || buf_put_u64(b, m->moved_events) ||
	       buf_puts(b, ",\"max_move_ns\":") || buf_put_i64(b, m->max_move_ns) ||
	       buf_puts(b, ",\"min_latency_ns\":") || buf_put_i64(b, m->min_latency_ns) ||
	       buf_puts(b, ",\"receives_without_send\":") || buf_put_u64(b, m->unmatched) ||
	       buf_puts(b, ",\"sends_without_receive\":") ||
	       buf_put_u64(b, m->sends.count + m->forgotten) || buf_putc(b, '}');
}

/* What the messages say about the alignment, on standard error. */
static void report_messages(const struct merge *m)
{
	if (m->messages + m->unmatched + m->sends.count + m->forgotten == 0)
		return;
	cli_note("merge",
		 "messages: %" PRIu64 " joined across files; %" PRIu64
		 " received before they were sent after the clock alignment; %" PRIu64
		 " moved forward to %" PRId64 " ns after their send (controlled logical clock%s): "
		 "%" PRIu64 " events moved, at most %.3f us",
		 m->messages, m->violations, m->corrected, m->min_latency_ns,
		 m->correct ? "" : ", off", m->moved_events, (double)m->max_move_ns / 1e3);
	if (m->unmatched + m->sends.count + m->forgotten > 0)
		cli_note("merge",
			 "messages: %" PRIu64 " receives without their send and %" PRIu64
			 " sends without their receive in these files",
			 m->unmatched, (uint64_t)m->sends.count + m->forgotten);
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
	      put_messages(m, b) || buf_puts(b, ",\"inputs\":[");
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		const struct trace_status *st = trace_status(in->r);

		err = (i > 0 && buf_putc(b, ',')) || buf_puts(b, "{\"file\":") ||
		      json_put_string(b, in->name, strlen(in->name)) < 0 ||
		      buf_puts(b, ",\"final\":") ||
		      buf_puts(b, in->end_seen && in->end_final ? "true" : "false") ||
		      buf_puts(b, ",\"cut\":") || buf_puts(b, st->cut ? "true" : "false") ||
		      buf_puts(b, ",\"events\":") || buf_put_u64(b, in->events) ||
		      (in->moved_events > 0 &&
		       (buf_puts(b, ",\"moved_events\":") || buf_put_u64(b, in->moved_events))) ||
		      buf_putc(b, '}');
	}
	if (err || buf_puts(b, "]}}")) {
		m->nomem = true;
		return -1;
	}
	return output_write(m->out, b->p, b->len) || output_puts(m->out, "\n]\n");
}

/* ---------------------------------------------------------------- the merge */

static void update_progress(struct merge *m)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < m->n; i++)
		bytes += trace_status(m->in[i].r)->input_bytes;
	progress_update(m->bar, bytes);
}

/* Is the oldest waiting receive too far behind the merge to hope for its send? */
static bool give_up_waiting(const struct merge *m)
{
	if (m->wait.n == 0)
		return false;
	if (m->ready.n == 0)
		return true;
	return (__int128)m->in[m->ready.a[0]].key - m->in[m->wait.a[0]].key > STALL_NS;
}

static int run(struct merge *m)
{
	uint64_t steps = 0;

	m->ready.a = malloc(m->n * sizeof(*m->ready.a));
	m->wait.a = malloc(m->n * sizeof(*m->wait.a));
	m->wait.waiting = true;
	if (m->ready.a == NULL || m->wait.a == NULL) {
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
		place_head(m, in);
		enqueue(m, in);
	}
	for (;;) {
		struct input *in;

		while (give_up_waiting(m))
			release(m, &m->in[m->wait.a[0]], false);
		if (m->ready.n == 0)
			break;
		in = &m->in[heap_remove(m, &m->ready, 0)];
		if (take(m, in, in->head))
			return -1;
		advance(in);
		if (in->head != NULL) {
			place_head(m, in);
			enqueue(m, in);
		} else if (finish_input(m, in)) {
			return -1;
		}
		if (m->nomem)
			return -1;
		if (++steps % PROGRESS_EVERY == 0)
			update_progress(m);
	}
	return 0;
}

static void free_merge(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		trace_close(in->r);
		free(in->host);
		free(in->label);
		table_destroy(&in->pids);
		table_destroy(&in->ids);
		threads_destroy(&in->threads);
		table_destroy(&in->clc);
		sync_free(&in->sync);
		buf_free(&in->held_json);
		buf_free(&in->end_args);
	}
	free(m->in);
	free(m->ready.a);
	free(m->wait.a);
	table_destroy(&m->sends);
	table_destroy(&m->waiters);
	buf_free(&m->key);
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
		{"min-latency", required_argument, NULL, 'L'},
		{"no-correction", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct progress bar;
	struct merge m = {.clock = CLOCK_AUTO,
			  .bar = &bar,
			  .correct = true,
			  .min_latency_ns = DEFAULT_MIN_LATENCY_NS};
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
			else if (strcmp(optarg, "sync") == 0)
				m.clock = CLOCK_SYNC;
			else
				return cli_usage_error(
					"merge",
					"--clock wants auto, sync, monotonic or realtime, not '%s'",
					optarg);
			break;
		case 'L':
			if (json_parse_i64(optarg, strlen(optarg), &m.min_latency_ns) != 0 ||
			    m.min_latency_ns < 0 || m.min_latency_ns > STALL_NS)
				return cli_usage_error("merge",
						       "--min-latency wants nanoseconds (0 .. "
						       "1000000000), not '%s'",
						       optarg);
			break;
		case 'N':
			m.correct = false;
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
	if (room_for_files((size_t)(argc - optind)))
		return CLI_ERROR;
	progress_init(&bar, "merging");
	table_init(&m.claims, sizeof(struct claim));
	table_init(&m.tags, sizeof(size_t));
	table_init(&m.sends, sizeof(struct send));
	table_init(&m.waiters, sizeof(size_t));
	if (open_inputs(&m, argv + optind, (size_t)(argc - optind)) || group_processes(&m) ||
	    scan_syncs(&m)) {
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
		cli_error("merge", "cannot write %s: %s", output, output_strerror(err));
		free_merge(&m);
		return CLI_ERROR;
	}
	err = output_puts(m.out, "[\n") || write_start(&m) || run(&m) || write_end(&m);
	progress_finish(&bar);
	report_messages(&m);
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
		uint64_t read = 0;
		size_t threads = 0;

		for (size_t i = 0; i < m.n; i++) {
			read += trace_status(m.in[i].r)->events;
			threads += threads_count(&m.in[i].threads);
		}
		/* What it read is what check and stats count in the inputs (threads.h); what
		 * it wrote leaves out their markers and M events (the merged file has its
		 * own). Threads of different files are different threads. */
		cli_note("merge",
			 "wrote %s: %" PRIu64 " events on %zu thread%s (" TRACE_COUNTS_WHAT
			 ") read from %zu file%s, of which %" PRIu64
			 " are not markers or M events (clock %s)",
			 output_name(m.out), read, threads, threads == 1 ? "" : "s", m.n,
			 m.n == 1 ? "" : "s", m.written, clock_names[m.clock]);
	}
	free_merge(&m);
	return status;
}
