/* SPDX-License-Identifier: MIT */
/*
 * The job profile (docs/profile.md, "The job profile"): each rank exports its profile
 * with its threads merged (rtr__prof_export()), the MPI module gathers the exports to
 * rank 0, which merges them (rtr__prof_job_write()): per call path the sums and the
 * sketches merged, and across the ranks its inclusive time's least, mean and most,
 * the rank of the most and the imbalance.
 *
 * An export is a flat record of the merged tree in preorder, native byte order (the
 * ranks of one job share it): a head, the nodes (depth, name, category, figures and
 * sketch), the counters. A rank whose export is empty (no profile, no memory) counts
 * as a rank that ran no call path.
 */
#include "format/profile/profile.h"

#include "common/jsontext.h"
#include "common/mem.h"

#include <errno.h>
#include <ringtrace.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

#define EXPORT_MAGIC   0x50525452u /* "RTRP" */
#define EXPORT_VERSION 1u

struct export_counter {
	uint32_t name_len, cat_len;
	uint64_t samples;
	double min, max, sum, last;
};

static int put(struct rtr__prof_buf *b, const void *data, size_t len)
{
	char *p = rtr__prof_reserve(b, len);

	if (p == NULL)
		return -1;
	memcpy(p, data, len);
	b->len += len;
	return 0;
}

static int put_nodes(struct rtr__prof_buf *b, const struct rtr__prof *m, uint32_t i)
{
	for (uint32_t c = m->nodes[i].child; c != RTR__PROF_NONE; c = m->nodes[c].sibling) {
		const struct rtr__prof_node *nd = &m->nodes[c];
		struct rtr__prof_export_node e = {
			.depth = nd->depth,
			.nbins = nd->q.nbins,
			.lo = nd->q.lo,
			.nexact = nd->q.count <= RTR__SKETCH_EXACT ? (uint32_t)nd->q.count : 0,
			.n = nd->n,
			.t = nd->t,
			.s = nd->s,
			.min = nd->min,
			.max = nd->max,
			.q_count = nd->q.count,
			.q_zeros = nd->q.zeros,
			.q_min = nd->q.min,
			.q_max = nd->q.max};
		const char *name = rtr__prof_str(m, nd->name, &e.name_len);
		const char *cat = rtr__prof_str(m, nd->cat, &e.cat_len);
		if (put(b, &e, sizeof(e)) != 0 ||
		    put(b, nd->q.exact, e.nexact * sizeof(uint64_t)) != 0 ||
		    (e.nbins > 0 && put(b, nd->q.bins, e.nbins * sizeof(uint64_t)) != 0) ||
		    put(b, name, e.name_len) != 0 || put(b, cat, e.cat_len) != 0 ||
		    put_nodes(b, m, c) != 0)
			return -1;
	}
	return 0;
}

/* The counters of every thread merged by category and name, as exported. */
static int put_counters(struct rtr__prof_buf *b, const struct rtr__prof *p, uint32_t *count)
{
	*count = 0;
	for (uint32_t i = 0; i < p->ncounters; i++) {
		const struct rtr__prof_counter *c = &p->counters[i];
		uint32_t first = i;
		for (uint32_t k = 0; k < i; k++)
			if (p->counters[k].name == c->name && p->counters[k].cat == c->cat) {
				first = k;
				break;
			}
		if (first != i)
			continue; /* merged into the first of its name */
		struct export_counter e = {.samples = 0, .min = c->min, .max = c->max};
		for (uint32_t k = i; k < p->ncounters; k++) {
			const struct rtr__prof_counter *o = &p->counters[k];
			if (o->name != c->name || o->cat != c->cat)
				continue;
			e.samples += o->samples, e.sum += o->sum, e.last = o->last;
			e.min = o->min < e.min ? o->min : e.min;
			e.max = o->max > e.max ? o->max : e.max;
		}
		const char *name = rtr__prof_str(p, c->name, &e.name_len);
		const char *cat = rtr__prof_str(p, c->cat, &e.cat_len);
		if (put(b, &e, sizeof(e)) != 0 || put(b, name, e.name_len) != 0 ||
		    put(b, cat, e.cat_len) != 0)
			return -1;
		++*count;
	}
	return 0;
}

int rtr__prof_export(struct rtr__writer *w, struct rtr__prof *p, struct rtr__prof_buf *out,
		     uint64_t end_ns)
{
	struct rtr__prof *m = rtr__mem_map(sizeof(*m));
	struct rtr_stats st;
	int err = -ENOMEM;

	if (m == NULL || rtr__prof_init(m, p->depth_limit, p->node_limit) != 0) {
		rtr__mem_unmap(m, sizeof(*m));
		return -ENOMEM;
	}
	rtr__writer_stats(&st);
	struct rtr__prof_export_head h = {.magic = EXPORT_MAGIC,
					  .version = EXPORT_VERSION,
					  .rank = w->s.rank,
					  .pid = w->s.pid,
					  .dropped = st.events_dropped,
					  .end_ns = rtr__writer_rel_ns(w, end_ns),
					  .deeper = p->deeper,
					  .unplaced = p->unplaced,
					  .depth_limit = p->depth_limit,
					  .node_limit = p->node_limit,
					  .host_len = (uint32_t)strnlen(w->s.host, 255),
					  .tsc = w->s.clock.kind == RTR_CLOCK_TSC};
	uint32_t root = rtr__prof_root(m);
	for (uint32_t i = 0; i < p->nthreads; i++)
		h.events += p->threads[i].events;
	out->len = 0;
	if (root == RTR__PROF_NONE || put(out, &h, sizeof(h)) != 0 ||
	    put(out, w->s.host, h.host_len) != 0)
		goto done;
	for (uint32_t i = 0; i < p->nthreads; i++) /* the threads' trees as they are now */
		rtr__prof_show(p, &p->threads[i], m, root, end_ns);
	h.deeper += m->deeper;
	h.unplaced += m->unplaced;
	h.nnodes = m->npaths;
	if (put_nodes(out, m, root) != 0 || put_counters(out, p, &h.ncounters) != 0)
		goto done;
	memcpy(out->data, &h, sizeof(h)); /* with the counts now known */
	err = 0;
done:
	rtr__prof_free(m);
	rtr__mem_unmap(m, sizeof(*m));
	return err;
}

/* ------------------------------------------------------------------------- */
/* Rank 0: the merge                                                          */

/* Per node of the job's tree, its inclusive time across the ranks. */
struct across {
	uint64_t min, max, sum;
	uint32_t with, max_rank;
};

struct job {
	struct rtr__prof tree;
	struct across *r; /* per node, tree.nodes_cap of them (grown with the tree) */
	uint32_t r_cap;
	int world;
	uint64_t events, dropped, deeper, unplaced, end_ns;
	int tsc;
	char host[256];
	struct rtr__prof_counter *counters; /* the job's, merged by category and name */
	uint32_t ncounters, counters_cap;
};

/* Read len bytes at *at of the export [.., end): NULL past its end. */
static const void *take(const char **at, const char *end, size_t len)
{
	const char *p = *at;

	if ((size_t)(end - p) < len)
		return NULL;
	*at = p + len;
	return p;
}

static int across_room(struct job *j)
{
	if (j->tree.nnodes <= j->r_cap)
		return 0;
	uint32_t cap = j->tree.nodes_cap;
	struct across *r = rtr__prof_grow(j->r, sizeof(*r), j->r_cap, cap);
	if (r == NULL)
		return -1;
	j->r = r;
	j->r_cap = cap;
	return 0;
}

/* One node of a rank's export into the job's node i. */
static int add_node(struct job *j, uint32_t i, const struct rtr__prof_export_node *e,
		    const uint64_t *exact, const uint64_t *bins, int rank)
{
	struct rtr__prof_node *nd = &j->tree.nodes[i];
	struct rtr__sketch q = rtr__prof_export_sketch(e);
	int err = 0;

	nd->n += e->n, nd->t += e->t, nd->s += e->s;
	nd->min = e->min < nd->min ? e->min : nd->min;
	nd->max = e->max > nd->max ? e->max : nd->max;
	memcpy(q.exact, exact, e->nexact * sizeof(uint64_t));
	if (e->nbins > 0) {
		q.bins = malloc(e->nbins * sizeof(uint64_t)); /* the sketch's own heap */
		if (q.bins == NULL)
			return -1;
		memcpy(q.bins, bins, e->nbins * sizeof(uint64_t));
	}
	err = rtr__sketch_merge(&nd->q, &q);
	rtr__sketch_free(&q);
	struct across *a = &j->r[i];
	if (a->with == 0 || e->t < a->min)
		a->min = e->t;
	if (a->with == 0 || e->t > a->max)
		a->max = e->t, a->max_rank = (uint32_t)rank;
	a->sum += e->t;
	a->with++;
	return err;
}

static int add_counters(struct job *j, const char **at, const char *end, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		const struct export_counter *e = take(at, end, sizeof(*e));
		const char *name = e == NULL ? NULL : take(at, end, e->name_len);
		const char *cat = name == NULL ? NULL : take(at, end, e->cat_len);
		if (cat == NULL)
			return -1;
		uint32_t nid = rtr__prof_intern(&j->tree, name, e->name_len);
		uint32_t cid = e->cat_len == 0 ? 0 : rtr__prof_intern(&j->tree, cat, e->cat_len);
		uint32_t i = 0;
		while (i < j->ncounters &&
		       !(j->counters[i].name == nid && j->counters[i].cat == cid))
			i++;
		if (i == j->ncounters) {
			if (j->ncounters == j->counters_cap) {
				uint32_t cap = j->counters_cap == 0 ? 64 : j->counters_cap * 2;
				struct rtr__prof_counter *c = rtr__prof_grow(
					j->counters, sizeof(*c), j->counters_cap, cap);
				if (c == NULL)
					return -1;
				j->counters = c;
				j->counters_cap = cap;
			}
			j->counters[j->ncounters++] = (struct rtr__prof_counter){
				.name = nid, .cat = cid, .min = e->min, .max = e->max};
		}
		struct rtr__prof_counter *c = &j->counters[i];
		c->samples += e->samples, c->sum += e->sum, c->last = e->last;
		c->min = e->min < c->min ? e->min : c->min;
		c->max = e->max > c->max ? e->max : c->max;
	}
	return 0;
}

/* Rank `rank`'s export into the job; -1 when it is malformed or memory ran out. */
static int add_rank(struct job *j, int rank, const char *data, size_t len,
		    struct rtr__prof_buf *ranks)
{
	const char *at = data, *end = data + len;
	const struct rtr__prof_export_head *h = take(&at, end, sizeof(*h));
	const char *host = h == NULL ? NULL : take(&at, end, h->host_len);
	uint32_t path[1025];

	if (host == NULL || h->magic != EXPORT_MAGIC || h->version != EXPORT_VERSION)
		return -1;
	j->events += h->events, j->dropped += h->dropped;
	j->deeper += h->deeper, j->unplaced += h->unplaced;
	j->end_ns = h->end_ns > j->end_ns ? h->end_ns : j->end_ns;
	if (j->host[0] == '\0') { /* the first rank's: rank 0's */
		memcpy(j->host, host, h->host_len < 255 ? h->host_len : 255);
		j->tsc = h->tsc != 0;
	}
	j->tree.depth_limit = h->depth_limit, j->tree.node_limit = h->node_limit;
	uint32_t deepest = 0; /* preorder: a node is at most one below the one before */
	path[0] = 0;	      /* the job's root */
	for (uint32_t k = 0; k < h->nnodes; k++) {
		const struct rtr__prof_export_node *e = take(&at, end, sizeof(*e));
		const uint64_t *exact = e == NULL ? NULL : take(&at, end, (size_t)e->nexact * 8);
		const uint64_t *bins = exact == NULL ? NULL : take(&at, end, (size_t)e->nbins * 8);
		const char *name = bins == NULL ? NULL : take(&at, end, e->name_len);
		const char *cat = name == NULL ? NULL : take(&at, end, e->cat_len);
		if (cat == NULL || e->depth == 0 || e->depth > deepest + 1 || e->depth > 1024 ||
		    e->nexact > RTR__SKETCH_EXACT)
			return -1;
		uint32_t nid = rtr__prof_intern(&j->tree, name, e->name_len);
		uint32_t cid = e->cat_len == 0 ? 0 : rtr__prof_intern(&j->tree, cat, e->cat_len);
		uint32_t i = nid == 0 ? RTR__PROF_NONE
				      : rtr__prof_child(&j->tree, path[e->depth - 1], nid, cid);
		if (i == RTR__PROF_NONE || across_room(j) != 0 ||
		    add_node(j, i, e, exact, bins, rank) != 0)
			return -1;
		path[e->depth] = i;
		deepest = e->depth;
	}
	char *p = rtr__prof_reserve(ranks, 256 + 6 * (size_t)h->host_len);
	if (p == NULL || add_counters(j, &at, end, h->ncounters) != 0)
		return -1;
	p = ranks->len > 0 ? (*p = ',', p + 1) : p;
	p = PUT_LIT(p, "{\"rank\":");
	p = rtr__jsontext_i64(p, rank);
	p = PUT_LIT(p, ",\"host\":\"");
	p = rtr__jsontext_escape(p, host, h->host_len);
	p = PUT_LIT(p, "\",\"pid\":");
	p = rtr__jsontext_i64(p, h->pid);
	p = PUT_LIT(p, ",\"events\":");
	p = rtr__jsontext_u64(p, h->events);
	p = PUT_LIT(p, ",\"dropped\":");
	p = rtr__jsontext_u64(p, h->dropped);
	p = PUT_LIT(p, ",\"start_ns\":0,\"end_ns\":");
	p = rtr__jsontext_u64(p, h->end_ns);
	*p++ = '}';
	ranks->len = (size_t)(p - ranks->data);
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Rank 0: the job profile's text                                             */

static char *put_across(char *p, const struct across *a, int world)
{
	double mean = (double)a->sum / (double)world;
	uint64_t min = (int)a->with < world ? 0 : a->min; /* a rank without it: 0 */

	p = PUT_LIT(p, ",\"r\":{\"min\":");
	p = rtr__jsontext_u64(p, min);
	p = PUT_LIT(p, ",\"mean\":");
	p = rtr__jsontext_f64(p, mean);
	p = PUT_LIT(p, ",\"max\":");
	p = rtr__jsontext_u64(p, a->max);
	p = PUT_LIT(p, ",\"max_rank\":");
	p = rtr__jsontext_u64(p, a->max_rank);
	p = PUT_LIT(p, ",\"with\":");
	p = rtr__jsontext_u64(p, a->with);
	p = PUT_LIT(p, ",\"imbalance\":");
	p = rtr__jsontext_f64(p, mean > 0 ? (double)a->max / mean : 1.0);
	*p++ = '}';
	return p;
}

static void put_job_calls(const struct job *j, struct rtr__prof_buf *out, uint32_t parent)
{
	const struct rtr__prof *t = &j->tree;
	int first = 1;

	for (uint32_t i = t->nodes[parent].child; i != RTR__PROF_NONE; i = t->nodes[i].sibling) {
		const struct rtr__prof_node *nd = &t->nodes[i];
		uint32_t nlen;
		const char *name = rtr__prof_str(t, nd->name, &nlen);
		char *p = rtr__prof_reserve(out, rtr__prof_node_bound(t, nd) + 256);
		if (p == NULL)
			return;
		p = first ? PUT_LIT(p, ",\"calls\":[") : (*p = ',', p + 1);
		first = 0;
		p = PUT_LIT(p, "{\"name\":\"");
		p = rtr__jsontext_escape(p, name, nlen);
		*p++ = '"';
		p = rtr__prof_node_keys(p, t, nd);
		p = put_across(p, &j->r[i], j->world);
		out->len = (size_t)(p - out->data);
		put_job_calls(j, out, i);
		if ((p = rtr__prof_reserve(out, 1)) != NULL)
			*p = '}', out->len++;
	}
	if (!first && rtr__prof_reserve(out, 1) != NULL)
		out->data[out->len++] = ']';
}

static void put_job_counters(const struct job *j, struct rtr__prof_buf *out)
{
	char *p = rtr__prof_reserve(out, 16);

	if (p == NULL)
		return;
	p = PUT_LIT(p, ",\"counters\":[");
	out->len = (size_t)(p - out->data);
	for (uint32_t i = 0; i < j->ncounters; i++) {
		const struct rtr__prof_counter *c = &j->counters[i];
		uint32_t nlen, clen;
		const char *name = rtr__prof_str(&j->tree, c->name, &nlen);
		const char *cat = rtr__prof_str(&j->tree, c->cat, &clen);
		if ((p = rtr__prof_reserve(out, 256 + 6 * (size_t)(nlen + clen))) == NULL)
			return;
		p = i > 0 ? (*p = ',', p + 1) : p;
		p = PUT_LIT(p, "{\"cat\":\"");
		p = rtr__jsontext_escape(p, cat, clen);
		p = PUT_LIT(p, "\",\"name\":\"");
		p = rtr__jsontext_escape(p, name, nlen);
		*p++ = '"';
		p = rtr__prof_counter_figures(p, c);
		out->len = (size_t)(p - out->data);
	}
	if (rtr__prof_reserve(out, 1) != NULL)
		out->data[out->len++] = ']';
}

static char *put_job_head(char *p, const struct job *j, uint64_t reduce_ns)
{
	p = PUT_LIT(p, "{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"job\","
		       "\"library\":\"ringtrace " RTR_VERSION_STRING "\",\"host\":\"");
	p = rtr__jsontext_escape(p, j->host, strlen(j->host));
	p = PUT_LIT(p, "\",\"pid\":null,\"rank\":null,\"world\":");
	p = rtr__jsontext_i64(p, j->world);
	p = j->tsc ? PUT_LIT(p, ",\"clock\":\"tsc\"") : PUT_LIT(p, ",\"clock\":\"monotonic\"");
	p = PUT_LIT(p, ",\"start_ns\":0,\"end_ns\":");
	p = rtr__jsontext_u64(p, j->end_ns);
	p = PUT_LIT(p, ",\"final\":true,\"reason\":\"finalize\",\"events\":");
	p = rtr__jsontext_u64(p, j->events);
	p = PUT_LIT(p, ",\"dropped\":");
	p = rtr__jsontext_u64(p, j->dropped);
	p = PUT_LIT(p, ",\"depth_limit\":");
	p = rtr__jsontext_u64(p, j->tree.depth_limit);
	p = PUT_LIT(p, ",\"deeper\":");
	p = rtr__jsontext_u64(p, j->deeper);
	p = PUT_LIT(p, ",\"node_limit\":");
	p = rtr__jsontext_u64(p, j->tree.node_limit);
	p = PUT_LIT(p, ",\"unplaced\":");
	p = rtr__jsontext_u64(p, j->unplaced);
	p = PUT_LIT(p, ",\"reduce_ns\":");
	p = rtr__jsontext_u64(p, reduce_ns);
	return PUT_LIT(p, ",\"ranks\":[");
}

static void job_free(struct job *j)
{
	rtr__prof_free(&j->tree);
	rtr__mem_unmap(j->r, j->r_cap * sizeof(*j->r));
	rtr__mem_unmap(j->counters, j->counters_cap * sizeof(*j->counters));
}

static uint64_t mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rtr__prof_job_write(const char *path, pid_t pid, int world, const char *const *data,
			const size_t *len, uint64_t began_ns)
{
	struct job *j = rtr__mem_map(sizeof(*j));
	struct rtr__prof_buf ranks = {0}, out = {0};
	int err = -ENOMEM;

	if (j == NULL)
		return -ENOMEM;
	j->world = world > 0 ? world : 1;
	if (rtr__prof_init(&j->tree, 64, UINT32_MAX) != 0) {
		rtr__mem_unmap(j, sizeof(*j));
		return -ENOMEM;
	}
	if (rtr__prof_root(&j->tree) != 0 || across_room(j) != 0)
		goto done;
	for (int r = 0; r < world; r++) {
		if (len[r] == 0) { /* no profile from this rank: it ran no call path */
			char *p = rtr__prof_reserve(&ranks, 64);
			if (p == NULL)
				goto done;
			p = ranks.len > 0 ? (*p = ',', p + 1) : p;
			p = PUT_LIT(p, "{\"rank\":");
			p = rtr__jsontext_i64(p, r);
			p = PUT_LIT(p, ",\"events\":0,\"dropped\":0}");
			ranks.len = (size_t)(p - ranks.data);
		} else if (add_rank(j, r, data[r], len[r], &ranks) != 0) {
			err = -EINVAL;
			goto done;
		}
	}
	char *p = rtr__prof_reserve(&out, 1024 + ranks.len);
	if (p == NULL)
		goto done;
	p = put_job_head(p, j, mono_raw_ns() - began_ns); /* the gather and the merge */
	memcpy(p, ranks.data, ranks.len);
	p += ranks.len;
	*p++ = ']';
	out.len = (size_t)(p - out.data);
	put_job_calls(j, &out, 0);
	put_job_counters(j, &out);
	if ((p = rtr__prof_reserve(&out, 2)) != NULL)
		memcpy(p, "}\n", 2), out.len += 2;
	err = out.failed ? -ENOMEM : rtr__prof_write_file(path, pid, out.data, out.len);
done:
	rtr__prof_buf_free(&ranks);
	rtr__prof_buf_free(&out);
	job_free(j);
	rtr__mem_unmap(j, sizeof(*j));
	return err;
}
