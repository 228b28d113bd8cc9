/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`, one file: its partial (job_report.h), from one streaming read.
 *
 * Times go onto the reference clock (rank 0's) as `merge` puts them: the file's clock
 * sync measurements, found first by merge_clock's scan, map its time t to
 * t + origin + offset(t + origin), the offset linear between measurements. A file
 * without measurements keeps its monotonic origin (right for ranks of one host).
 *
 * A message's flow event ("s" or "f", category mpi) comes before the slice of the call
 * it is in (the slice is written at its end): it waits on its thread until the first
 * mpi slice that holds its time comes, and becomes an endpoint of that call.
 */
#include "cli.h"
#include "common/names.h"
#include "job_report.h"
#include "json.h"
#include "merge_clock.h"
#include "merge_json.h"
#include "nest.h"
#include "pftrace.h"
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#define GROW(p, cap, need, first) array_grow((p), &(cap), (need), sizeof(*(p)), (first))

/* Flows waiting for their call's slice, per file; the oldest dropped beyond this. */
#define FLOWS_WAITING_MAX 4096

struct waiting_flow {
	uint64_t id;
	int64_t ts;
	int64_t tid, pid;
	bool recv;
};

/* A B waiting for its E. */
struct open_b {
	int64_t ts, pid, tid;
	uint32_t name;
	bool mpi, has_coll;
	uint64_t comm, seq;
	int64_t root;
};

struct pass {
	struct rank_part *part;
	struct nest nest;
	bool has_mono;
	uint64_t mono;
	struct sync_set sync;
	struct waiting_flow *flows;
	size_t nflows, flows_cap;
	struct open_b *open;
	size_t nopen, open_cap;
	size_t msgs_cap, colls_cap;
	uint32_t last_call_node; /* of the newest endpoint's call, for MSG_SAME_CALL */
	int64_t last_call_start, last_call_tid;
	bool nomem;
};

static uint32_t *rec_node(void *ctx, uint32_t rec)
{
	struct pass *p = ctx;

	if (rec & REC_COLL)
		return &p->part->colls[rec & ~REC_COLL].path;
	return &p->part->msgs[rec].part; /* the node until finish() */
}

/* The file's time t on the reference clock. */
static int64_t ref_time(struct pass *p, int64_t t)
{
	int64_t at;

	if (!p->has_mono)
		return t;
	at = t + (int64_t)p->mono;
	return p->part->measured ? at + sync_offset(&p->sync, at) : at;
}

/* Add [a, b) to the fine bins, folding them in pairs until b fits. */
static void bin_add(struct rank_part *r, int64_t a, int64_t b)
{
	if (b <= a)
		return;
	if (a < r->bin_origin)
		a = r->bin_origin;
	while (b - r->bin_origin > r->bin_width * PART_BINS) {
		for (size_t i = 0; i < PART_BINS / 2; i++)
			r->bins[i] = r->bins[2 * i] + r->bins[2 * i + 1];
		memset(r->bins + PART_BINS / 2, 0, sizeof(r->bins) / 2);
		r->bin_width *= 2;
	}
	for (int64_t t = a; t < b;) {
		int64_t i = (t - r->bin_origin) / r->bin_width;
		int64_t edge = r->bin_origin + (i + 1) * r->bin_width;
		int64_t to = edge < b ? edge : b;

		r->bins[i] += (uint64_t)(to - t);
		t = to;
	}
}

static void see_time(struct rank_part *r, int64_t t)
{
	if (!r->has_time) {
		r->has_time = true;
		r->first = r->last = t;
		r->bin_origin = t;
		r->bin_width = 1000;
	}
	r->first = t < r->first ? t : r->first;
	r->last = t > r->last ? t : r->last;
}

static bool blocking_recv(const char *n)
{
	return strcmp(n, "MPI_Recv") == 0 || strncmp(n, "MPI_Wait", 8) == 0 ||
	       strncmp(n, "MPI_Test", 8) == 0 || strcmp(n, "MPI_Mrecv") == 0 ||
	       strncmp(n, "MPI_Sendrecv", 12) == 0;
}

static bool blocking_send(const char *n)
{
	return strcmp(n, "MPI_Send") == 0 || strcmp(n, "MPI_Ssend") == 0 ||
	       strncmp(n, "MPI_Sendrecv", 12) == 0;
}

int coll_kind(const char *n, bool *started)
{
	char blocking[64];
	size_t len = strlen(n);

	/* MPI_Iallreduce: MPI_Allreduce's kind */
	*started =
		strncmp(n, "MPI_I", 5) == 0 && n[5] >= 'a' && n[5] <= 'z' && len < sizeof(blocking);
	if (*started) {
		memcpy(blocking, "MPI_", 4);
		blocking[4] = (char)(n[5] - 'a' + 'A');
		memcpy(blocking + 5, n + 6, len - 5); /* with its NUL */
		n = blocking;
	}
	static const struct {
		const char *name;
		int kind;
	} calls[] = {
		{"MPI_Allreduce", COLL_N_TO_N},	     {"MPI_Allgather", COLL_N_TO_N},
		{"MPI_Allgatherv", COLL_N_TO_N},     {"MPI_Alltoall", COLL_N_TO_N},
		{"MPI_Alltoallv", COLL_N_TO_N},	     {"MPI_Alltoallw", COLL_N_TO_N},
		{"MPI_Reduce_scatter", COLL_N_TO_N}, {"MPI_Reduce_scatter_block", COLL_N_TO_N},
		{"MPI_Barrier", COLL_BARRIER},	     {"MPI_Bcast", COLL_ONE_TO_N},
		{"MPI_Scatter", COLL_ONE_TO_N},	     {"MPI_Scatterv", COLL_ONE_TO_N},
		{"MPI_Reduce", COLL_N_TO_ONE},	     {"MPI_Gather", COLL_N_TO_ONE},
		{"MPI_Gatherv", COLL_N_TO_ONE},
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(n, calls[i].name) == 0)
			return calls[i].kind;
	return COLL_NONE;
}

bool coll_counts(const struct coll_entry *c, int64_t rank)
{
	if (c->flags & COLL_DONE)
		return false;
	if (c->kind == COLL_ONE_TO_N)
		return rank == c->root;
	if (c->kind == COLL_N_TO_ONE)
		return rank != c->root;
	return true;
}

bool coll_waits(const struct coll_entry *c, int64_t rank)
{
	if (c->flags & COLL_START)
		return false;
	if (c->kind == COLL_ONE_TO_N)
		return rank != c->root;
	if (c->kind == COLL_N_TO_ONE)
		return rank == c->root;
	return true;
}

/* The endpoints of the flows that wait in the mpi slice [ts, end] of (pid, tid). */
static int take_flows(struct pass *p, int64_t pid, int64_t tid, const int64_t span[4],
		      uint32_t node, const char *name, struct nest_thread *th)
{
	struct rank_part *r = p->part;
	size_t out = 0;

	for (size_t i = 0; i < p->nflows; i++) {
		struct waiting_flow *f = &p->flows[i];
		struct msg_end *m;
		uint32_t flags;

		if (f->tid != tid || f->pid != pid || f->ts < span[0] || f->ts > span[1]) {
			p->flows[out++] = *f;
			continue;
		}
		m = GROW(r->msgs, p->msgs_cap, r->nmsgs + 1, 64);
		if (m == NULL)
			return -1;
		r->msgs = m;
		flags = f->recv ? MSG_RECV : 0;
		if (f->recv ? blocking_recv(name) : blocking_send(name))
			flags |= MSG_BLOCKING;
		if (r->nmsgs > 0 && p->last_call_node == node && p->last_call_start == span[2] &&
		    p->last_call_tid == tid)
			flags |= MSG_SAME_CALL;
		p->last_call_node = node;
		p->last_call_start = span[2];
		p->last_call_tid = tid;
		r->msgs[r->nmsgs] = (struct msg_end){f->id, span[2], span[3], flags, node};
		if (nest_record(&p->nest, th, (uint32_t)r->nmsgs))
			return -1;
		r->nmsgs++;
	}
	p->nflows = out;
	return 0;
}

/* A collective entry of the slice node of th. */
static int add_coll(struct pass *p, struct nest_thread *th, const struct coll_entry *e)
{
	struct rank_part *r = p->part;
	struct coll_entry *c = GROW(r->colls, p->colls_cap, r->ncolls + 1, 64);

	if (c == NULL)
		return -1;
	r->colls = c;
	r->colls[r->ncolls] = *e;
	if (nest_record(&p->nest, th, (uint32_t)r->ncolls | REC_COLL))
		return -1;
	r->ncolls++;
	return 0;
}

/* The nonblocking collectives a Wait or Test [a, b] completed, from its "collectives"
 * ("NAME@COMM:SEQ" or "NAME@COMM:SEQ:ROOT_WORLD", a space between): an entry each,
 * the ones after the first marked COLL_MORE. A word not of that form is skipped. */
static int add_done(struct pass *p, struct nest_thread *th, const struct trace_value *v,
		    const struct coll_entry *call)
{
	const char *s = v->text, *end = v->text + v->len;
	uint16_t more = 0;

	while (s < end) {
		const char *w = memchr(s, ' ', (size_t)(end - s));
		char word[128], *at, *num;
		unsigned long long comm, seq, root = 0;
		bool started, rooted;
		size_t len = (size_t)((w != NULL ? w : end) - s);

		if (len >= sizeof(word))
			len = 0; /* too long: not ours */
		memcpy(word, s, len);
		word[len] = '\0';
		s += len + 1;
		at = strchr(word, '@');
		if (at == NULL)
			continue;
		*at = '\0';
		int kind = coll_kind(word, &started);
		rooted = kind == COLL_ONE_TO_N || kind == COLL_N_TO_ONE;
		comm = strtoull(at + 1, &num, 10);
		if (!started || kind == COLL_NONE || *num != ':')
			continue;
		seq = strtoull(num + 1, &num, 10);
		if (*num == ':')
			root = strtoull(num + 1, &num, 10);
		else if (rooted)
			continue; /* its root unknown */
		if (*num != '\0' || seq > UINT32_MAX || root > INT32_MAX)
			continue;
		struct coll_entry e = *call;
		e.comm = comm, e.seq = (uint32_t)seq, e.root = rooted ? (int32_t)root : -1;
		e.kind = (uint16_t)kind, e.flags = (uint16_t)(COLL_DONE | more);
		if (add_coll(p, th, &e))
			return -1;
		more = COLL_MORE;
	}
	return 0;
}

/* A whole slice on the file's clock [ts, end] (an X, or a B and its E); done: the
 * nonblocking collectives it completed, or NULL. */
static int slice(struct pass *p, int64_t pid, int64_t tid, int64_t ts, int64_t end, uint32_t name,
		 bool mpi, bool has_coll, const int64_t coll[3], const struct trace_value *done)
{
	struct rank_part *r = p->part;
	struct nest_thread *th = nest_thread(&p->nest, pid, tid);
	int64_t a = ref_time(p, ts), b = ref_time(p, end);
	uint32_t node;

	if (th == NULL)
		return -1;
	if (b < a)
		b = a;
	see_time(r, a);
	see_time(r, b);
	r->slices++;
	if (nest_slice(&p->nest, th, a, b, name, &node))
		return -1;
	if (!mpi)
		return 0;
	bin_add(r, a, b);
	const char *text = p->nest.names_v[name].text;
	const int64_t span[4] = {ts, end, a, b};
	if (take_flows(p, pid, tid, span, node, text, th))
		return -1;
	bool started = false;
	int kind = has_coll ? coll_kind(text, &started) : COLL_NONE;
	struct coll_entry e = {(uint64_t)coll[0],
			       a,
			       b,
			       (uint32_t)coll[1],
			       node,
			       (int32_t)coll[2],
			       (uint16_t)kind,
			       started ? COLL_START : 0};
	/* a rooted one without its root's world rank (an older recorder's) is left out */
	if (kind == COLL_ONE_TO_N || kind == COLL_N_TO_ONE)
		kind = coll[2] >= 0 && coll[2] <= INT32_MAX ? kind : COLL_NONE;
	if (kind != COLL_NONE && add_coll(p, th, &e))
		return -1;
	return done != NULL && done->type == TRACE_STRING ? add_done(p, th, done, &e) : 0;
}

static bool arg_u64(const struct trace_event *ev, const char *key, uint64_t *v)
{
	const struct trace_value *a = trace_event_arg(ev, key);

	return a != NULL && value_u64(a, v) == 0;
}

/* A collective's comm and seq, and its root_world (-1 when absent). */
static bool coll_args(const struct trace_event *ev, uint64_t *comm, uint64_t *seq, int64_t *root)
{
	uint64_t r;

	*root = arg_u64(ev, "root_world", &r) && r <= INT32_MAX ? (int64_t)r : -1;
	return arg_u64(ev, "comm", comm) && arg_u64(ev, "seq", seq);
}

/* The start marker: the rank and origin, then the clock sync measurements. */
static void start_marker(struct pass *p, const struct trace_event *ev, struct trace *t)
{
	struct rank_part *r = p->part;
	const struct trace_value *v = trace_event_arg(ev, RTR__KEY_RANK);
	int64_t rank;
	char err[256];
	int rc;

	p->has_mono = arg_u64(ev, RTR__KEY_ORIGIN_MONO, &p->mono) && p->mono <= INT64_MAX / 2;
	if (v != NULL && v->type == TRACE_NUMBER && json_parse_i64(v->text, v->len, &rank) == 0 &&
	    rank >= 0) {
		r->has_rank = true;
		r->rank = rank;
	}
	if (!r->has_rank || !p->has_mono || strcmp(r->path, "-") == 0)
		return;
	(void)t;
	if (pf_sniff_path(r->path) == 1) {
		struct trace_options o = {.max_event_bytes = cli_max_event_bytes()};
		struct trace *s;

		rc = trace_open(r->path, &o, &s) != 0
			     ? -1
			     : sync_scan_trace(s, r->rank, &p->sync, err, sizeof(err));
		if (s != NULL)
			trace_close(s);
	} else {
		rc = sync_scan(r->path, r->rank, &p->sync, err, sizeof(err));
	}
	p->nomem |= rc == -2;
	if (rc != 0)
		p->sync.n = 0;
	sync_finish(&p->sync);
	r->measured = p->sync.n > 0;
}

static int flow_event(struct pass *p, const struct trace_event *ev, int64_t pid, int64_t tid)
{
	struct waiting_flow *f;
	uint64_t id;

	if (value_id_u64(&ev->id, &id) != 0)
		return 0;
	if (p->nflows >= FLOWS_WAITING_MAX) {
		memmove(p->flows, p->flows + 1, (p->nflows - 1) * sizeof(*p->flows));
		p->nflows--;
		p->part->unmatched_flows++;
	}
	f = GROW(p->flows, p->flows_cap, p->nflows + 1, 64);
	if (f == NULL)
		return -1;
	p->flows = f;
	p->flows[p->nflows++] = (struct waiting_flow){id, ev->ts_ns, tid, pid, ev->phase == 'f'};
	return 0;
}

static int begin_event(struct pass *p, const struct trace_event *ev, int64_t pid, int64_t tid,
		       uint32_t name, bool mpi)
{
	struct open_b *o = GROW(p->open, p->open_cap, p->nopen + 1, 16);

	if (o == NULL)
		return -1;
	p->open = o;
	o = &p->open[p->nopen++];
	*o = (struct open_b){ev->ts_ns, pid, tid, name, mpi, false, 0, 0, -1};
	o->has_coll = coll_args(ev, &o->comm, &o->seq, &o->root);
	return 0;
}

static int end_event(struct pass *p, const struct trace_event *ev, int64_t pid, int64_t tid)
{
	for (size_t i = p->nopen; i-- > 0;) {
		struct open_b o = p->open[i];

		if (o.tid != tid || o.pid != pid)
			continue;
		memmove(p->open + i, p->open + i + 1, (p->nopen - i - 1) * sizeof(*p->open));
		p->nopen--;
		const int64_t coll[3] = {(int64_t)o.comm, (int64_t)o.seq, o.root};

		return slice(p, pid, tid, o.ts, ev->ts_ns, o.name, o.mpi, o.has_coll, coll,
			     o.mpi ? trace_event_arg(ev, "collectives") : NULL);
	}
	return 0;
}

static int event(struct pass *p, const struct trace_event *ev, struct trace *t)
{
	int64_t pid, tid;
	bool mpi;
	uint32_t name;

	p->part->events++;
	if (ev->phase == 'M' || !ev->has_ts)
		return 0;
	if (is_marker(ev, RTR__MARK_START) && !p->has_mono && !p->part->has_rank)
		start_marker(p, ev, t);
	trace_event_thread(ev, &pid, &tid);
	mpi = trace_value_is(&ev->cat, "mpi");
	if (ev->phase == 's' || ev->phase == 'f')
		return mpi && trace_value_is(&ev->name, "message") ? flow_event(p, ev, pid, tid)
								   : 0;
	if (ev->phase == 'E')
		return end_event(p, ev, pid, tid);
	see_time(p->part, ref_time(p, ev->ts_ns));
	if (ev->phase != 'X' && ev->phase != 'B')
		return 0;
	name = nest_name(&p->nest, ev->name.type == TRACE_STRING ? ev->name.text : "",
			 ev->name.type == TRACE_STRING ? ev->name.len : 0, mpi);
	if (name == UINT32_MAX)
		return -1;
	if (ev->phase == 'B')
		return begin_event(p, ev, pid, tid, name, mpi);
	uint64_t comm = 0, seq = 0;
	int64_t root = -1;
	bool has_coll = mpi && coll_args(ev, &comm, &seq, &root);
	const int64_t coll[3] = {(int64_t)comm, (int64_t)seq, root};
	int64_t end = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
	return slice(p, pid, tid, ev->ts_ns, end, name, mpi, has_coll, coll,
		     mpi ? trace_event_arg(ev, "collectives") : NULL);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Does a node's path hold an mpi name above its own? */
static bool mpi_above(const struct nest *n, uint32_t node)
{
	for (uint32_t k = n->nodes[node].parent; k != 0; k = n->nodes[k].parent)
		if (n->names_v[n->nodes[k].name].mpi)
			return true;
	return false;
}

/* The paths of the file: every node that holds time or a record, as text, sorted;
 * the records' nodes become their path's index. */
static int finish(struct pass *p)
{
	struct rank_part *r = p->part;
	struct nest *n = &p->nest;
	size_t nn = n->nnodes;
	uint64_t *incl = calloc(nn, sizeof(*incl)), *calls = calloc(nn, sizeof(*calls));
	uint32_t *index = calloc(nn, sizeof(*index));
	bool *used = calloc(nn, sizeof(*used));
	int rc = -1;

	if (incl == NULL || calls == NULL || index == NULL || used == NULL)
		goto out;
	for (size_t t = 0; t < n->nthreads; t++)
		for (size_t i = 0; i < n->threads[t].ntimes; i++) {
			const struct time_item *it = &n->threads[t].times[i];

			incl[it->node] += it->ns;
			calls[it->node] += it->calls;
			used[it->node] = true;
		}
	for (size_t i = 0; i < r->nmsgs; i++)
		used[r->msgs[i].part] = true;
	for (size_t i = 0; i < r->ncolls; i++)
		used[r->colls[i].path] = true;
	for (size_t k = 1; k < nn; k++)
		r->npaths += used[k];
	r->paths = calloc(r->npaths + 1, sizeof(*r->paths));
	r->incl = calloc(r->npaths + 1, sizeof(*r->incl));
	r->calls = calloc(r->npaths + 1, sizeof(*r->calls));
	if (r->paths == NULL || r->incl == NULL || r->calls == NULL)
		goto out;
	/* each text ends with its node's number after a NUL, to find it after the sort */
	for (size_t k = 1, i = 0; k < nn; k++) {
		if (!used[k])
			continue;
		char *s = nest_path_text(n, (uint32_t)k);
		if (s == NULL)
			goto out;
		size_t len = strlen(s);
		char *t = realloc(s, len + 1 + sizeof(uint32_t));
		if (t == NULL) {
			free(s);
			goto out;
		}
		uint32_t node = (uint32_t)k;
		memcpy(t + len + 1, &node, sizeof(node));
		r->paths[i++] = t;
		if (n->names_v[n->nodes[k].name].mpi && !mpi_above(n, (uint32_t)k))
			r->mpi_ns += incl[k];
	}
	qsort(r->paths, r->npaths, sizeof(*r->paths), by_text);
	for (size_t i = 0; i < r->npaths; i++) {
		uint32_t node;

		memcpy(&node, r->paths[i] + strlen(r->paths[i]) + 1, sizeof(node));
		index[node] = (uint32_t)i;
		r->incl[i] = incl[node];
		r->calls[i] = calls[node];
	}
	for (size_t i = 0; i < r->nmsgs; i++) {
		r->msgs[i].path_flags |= index[r->msgs[i].part] << MSG_FLAGS_SHIFT;
		r->msgs[i].part = 0;
	}
	for (size_t i = 0; i < r->ncolls; i++)
		r->colls[i].path = index[r->colls[i].path];
	r->unmatched_flows += p->nflows;
	r->approx = n->approx;
	rc = 0;
out:
	free(incl);
	free(calls);
	free(index);
	free(used);
	return rc;
}

int pass_file(struct rank_part *part, const struct pass_options *o)
{
	struct profile_doc doc;
	struct trace_options to = {.max_event_bytes = o->max_event_bytes,
				   .on_top_level = profile_on_top_level,
				   .top_level_ctx = &doc};
	struct pass p = {.part = part};
	const struct trace_event *ev;
	struct trace *t;
	int rc, e;

	part->rank = (int64_t)part->index;
	profile_doc_init(&doc);
	e = trace_open(part->path, &to, &t);
	if (e != 0) {
		snprintf(part->error, sizeof(part->error), "%s: %s", part->path, strerror(-e));
		part->failed = true;
		return -1;
	}
	if (nest_init(&p.nest)) {
		trace_close(t);
		return -2;
	}
	p.nest.rec_node = rec_node;
	p.nest.ctx = &p;
	while ((rc = trace_next(t, &ev)) == 1 && !p.nomem)
		if (event(&p, ev, t))
			p.nomem = true;
	if (doc.is_profile && part->events == 0 && !p.nomem) {
		/* a profile: no events, its keys kept (a want of "traceEvents" is no error) */
		trace_close(t);
		nest_free(&p.nest);
		sync_free(&p.sync);
		free(p.flows);
		free(p.open);
		if (doc.too_large) {
			snprintf(part->error, sizeof(part->error), "%s: profile: too large",
				 part->path);
			part->failed = true;
			rc = -1;
		} else {
			rc = pass_profile(part, &doc.json);
		}
		profile_doc_destroy(&doc);
		return rc;
	}
	profile_doc_destroy(&doc);
	if (rc < 0)
		snprintf(part->error, sizeof(part->error), "%s", trace_status(t)->message);
	else if (part->events == 0 && !p.nomem) {
		/* not a rank (a job's manifest in its directory, any other JSON): left out */
		snprintf(part->error, sizeof(part->error),
			 "%s: no trace events and not a profile: left out", part->path);
		part->failed = true;
	}
	if (!p.nomem && finish(&p))
		p.nomem = true;
	trace_close(t);
	nest_free(&p.nest);
	sync_free(&p.sync);
	free(p.flows);
	free(p.open);
	return p.nomem ? -2 : 0;
}

void part_free(struct rank_part *r)
{
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	free(r->incl);
	free(r->calls);
	free(r->msgs);
	free(r->colls);
	free(r->jp);
	free(r->jr);
}
