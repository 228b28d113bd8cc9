/* SPDX-License-Identifier: MIT */
/*
 * The profile's JSON document (docs/profile.md): compact, names spelled out, numbers
 * as integers (ns) but for the counters' values. A node's children follow it in
 * "calls"; a node no slice ended on (and none is open on) is left out.
 */
#include "format/profile/profile.h"

#include "common/jsontext.h"
#include "common/mem.h"

#include <errno.h>
#include <ringtrace.h>
#include <string.h>

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

char *rtr__prof_reserve(struct rtr__prof_buf *b, size_t need)
{
	if (b->failed)
		return NULL;
	if (b->len + need > b->cap) {
		size_t cap = b->cap == 0 ? (size_t)256 << 10 : b->cap * 2;
		while (cap < b->len + need)
			cap *= 2;
		char *data = rtr__mem_map(cap);
		if (data == NULL) {
			b->failed = 1;
			return NULL;
		}
		if (b->data != NULL) {
			memcpy(data, b->data, b->len);
			rtr__mem_unmap(b->data, b->cap);
		}
		b->data = data;
		b->cap = cap;
	}
	return b->data + b->len;
}

void rtr__prof_buf_free(struct rtr__prof_buf *b)
{
	rtr__mem_unmap(b->data, b->cap);
	memset(b, 0, sizeof(*b));
}

static char *put_str(char *p, const struct rtr__prof *prof, uint32_t id)
{
	uint32_t len;
	const char *s = rtr__prof_str(prof, id, &len);

	*p++ = '"';
	p = rtr__jsontext_escape(p, s, len);
	*p++ = '"';
	return p;
}

static char *put_key_u64(char *p, const char *key, size_t key_len, uint64_t v)
{
	memcpy(p, key, key_len);
	return rtr__jsontext_u64(p + key_len, v);
}

#define KEY_U64(p, key, v) put_key_u64((p), (key), sizeof(key) - 1, (v))

/* The sketch: its values while few, else its buckets from the first to the last
 * that counts any. */
static char *put_sketch(char *p, const struct rtr__sketch *q)
{
	if (q->count <= RTR__SKETCH_EXACT) {
		p = PUT_LIT(p, "{\"v\":[");
		for (uint64_t i = 0; i < q->count; i++) {
			if (i > 0)
				*p++ = ',';
			p = rtr__jsontext_u64(p, q->exact[i]);
		}
		return PUT_LIT(p, "]}");
	}
	uint32_t first = 0, last = q->nbins;
	while (first < last && q->bins[first] == 0)
		first++;
	while (last > first && q->bins[last - 1] == 0)
		last--;
	p = KEY_U64(p, "{\"z\":", q->zeros);
	p = PUT_LIT(p, ",\"i\":");
	p = rtr__jsontext_i64(p, (int64_t)q->lo + first);
	p = PUT_LIT(p, ",\"b\":[");
	for (uint32_t k = first; k < last; k++) {
		if (k > first)
			*p++ = ',';
		p = rtr__jsontext_u64(p, q->bins[k]);
	}
	return PUT_LIT(p, "]}");
}

size_t rtr__prof_node_bound(const struct rtr__prof *p, const struct rtr__prof_node *nd)
{
	uint32_t nlen, clen;

	(void)rtr__prof_str(p, nd->name, &nlen);
	(void)rtr__prof_str(p, nd->cat, &clen);
	return 64 + RTR_JSONTEXT_ESCAPE_BOUND(nlen) + RTR_JSONTEXT_ESCAPE_BOUND(clen) + 7 * 24 +
	       (size_t)(nd->q.count <= RTR__SKETCH_EXACT ? RTR__SKETCH_EXACT : nd->q.nbins) * 21;
}

char *rtr__prof_node_keys(char *p, const struct rtr__prof *prof, const struct rtr__prof_node *nd)
{
	if (nd->cat != 0) {
		p = PUT_LIT(p, ",\"cat\":");
		p = put_str(p, prof, nd->cat);
	}
	p = KEY_U64(p, ",\"n\":", nd->n);
	p = KEY_U64(p, ",\"t\":", nd->t);
	p = KEY_U64(p, ",\"s\":", nd->s);
	p = KEY_U64(p, ",\"min\":", nd->n > 0 ? nd->min : 0);
	p = KEY_U64(p, ",\"max\":", nd->max);
	/* Left out where n, t, min and max say the values (docs/profile.md): n <= 3. */
	if (nd->n > 3 && nd->q.count > 0) {
		p = PUT_LIT(p, ",\"q\":");
		p = put_sketch(p, &nd->q);
	}
	return p;
}

/* The children of node parent that any slice ended on, as a "calls" list. */
static void put_calls(const struct rtr__prof *prof, struct rtr__prof_buf *out, uint32_t parent)
{
	int first = 1;

	for (uint32_t i = prof->nodes[parent].child; i != RTR__PROF_NONE;
	     i = prof->nodes[i].sibling) {
		const struct rtr__prof_node *nd = &prof->nodes[i];
		if (nd->n == 0)
			continue;
		char *p = rtr__prof_reserve(out, rtr__prof_node_bound(prof, nd) + 16);
		if (p == NULL)
			return;
		if (first)
			p = PUT_LIT(p, ",\"calls\":[");
		else
			*p++ = ',';
		first = 0;
		p = PUT_LIT(p, "{\"name\":");
		p = put_str(p, prof, nd->name);
		p = rtr__prof_node_keys(p, prof, nd);
		out->len = (size_t)(p - out->data);
		put_calls(prof, out, i);
		if ((p = rtr__prof_reserve(out, 1)) != NULL)
			*p = '}', out->len++;
	}
	if (!first && (out->data != NULL) && rtr__prof_reserve(out, 1) != NULL)
		out->data[out->len++] = ']';
}

/* Thread t's tree as it is now (nest.c), shown in a pool of its own. */
static int put_thread(const struct rtr__prof *prof, const struct rtr__prof_thread *t,
		      struct rtr__prof_buf *out, uint64_t end_ns, uint64_t *deeper,
		      uint64_t *unplaced)
{
	struct rtr__prof *m = rtr__mem_map(sizeof(*m));

	if (m == NULL || rtr__prof_init(m, prof->depth_limit, prof->node_limit) != 0) {
		rtr__mem_unmap(m, sizeof(*m));
		return -1;
	}
	uint32_t root = rtr__prof_root(m);
	if (root != RTR__PROF_NONE) {
		rtr__prof_show(prof, t, m, root, end_ns);
		put_calls(m, out, root);
	}
	*deeper += m->deeper;
	*unplaced += m->unplaced;
	rtr__prof_free(m);
	rtr__mem_unmap(m, sizeof(*m));
	return root == RTR__PROF_NONE ? -1 : 0;
}

static char *put_head(struct rtr__writer *w, char *p, const char *reason, int final,
		      uint64_t end_ns)
{
	const struct rtr__session *s = &w->s;

	p = PUT_LIT(p, "{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
		       "\"library\":\"ringtrace " RTR_VERSION_STRING "\",\"host\":\"");
	p = rtr__jsontext_escape(p, s->host, strnlen(s->host, 255));
	p = KEY_U64(p, "\",\"pid\":", (uint64_t)s->pid);
	p = PUT_LIT(p, ",\"rank\":");
	p = s->rank >= 0 ? rtr__jsontext_i64(p, s->rank) : PUT_LIT(p, "null");
	p = PUT_LIT(p, ",\"world\":");
	p = s->world_size > 0 ? rtr__jsontext_i64(p, s->world_size) : PUT_LIT(p, "null");
	p = s->clock.kind == RTR_CLOCK_TSC ? PUT_LIT(p, ",\"clock\":\"tsc\"")
					   : PUT_LIT(p, ",\"clock\":\"monotonic\"");
	p = PUT_LIT(p, ",\"start_ns\":0");
	p = KEY_U64(p, ",\"end_ns\":", rtr__writer_rel_ns(w, end_ns));
	p = final ? PUT_LIT(p, ",\"final\":true,\"reason\":\"")
		  : PUT_LIT(p, ",\"final\":false,\"reason\":\"");
	p = rtr__jsontext_escape(p, reason, strlen(reason));
	*p++ = '"';
	return p;
}

char *rtr__prof_counter_figures(char *p, const struct rtr__prof_counter *c)
{
	p = KEY_U64(p, ",\"samples\":", c->samples);
	p = PUT_LIT(p, ",\"min\":");
	p = rtr__jsontext_f64(p, c->min);
	p = PUT_LIT(p, ",\"max\":");
	p = rtr__jsontext_f64(p, c->max);
	p = PUT_LIT(p, ",\"mean\":");
	p = rtr__jsontext_f64(p, c->samples > 0 ? c->sum / (double)c->samples : 0);
	p = PUT_LIT(p, ",\"last\":");
	p = rtr__jsontext_f64(p, c->last);
	*p++ = '}';
	return p;
}

static void put_counters(const struct rtr__prof *prof, struct rtr__prof_buf *out)
{
	char *p = rtr__prof_reserve(out, 16);

	if (p == NULL)
		return;
	p = PUT_LIT(p, ",\"counters\":[");
	out->len = (size_t)(p - out->data);
	for (uint32_t i = 0; i < prof->ncounters; i++) {
		const struct rtr__prof_counter *c = &prof->counters[i];
		uint32_t nlen, clen;
		(void)rtr__prof_str(prof, c->name, &nlen);
		(void)rtr__prof_str(prof, c->cat, &clen);
		p = rtr__prof_reserve(out, 256 + 6 * (size_t)(nlen + clen));
		if (p == NULL)
			return;
		if (i > 0)
			*p++ = ',';
		p = PUT_LIT(p, "{\"tid\":");
		p = rtr__jsontext_i64(p, c->tid);
		if (c->cat != 0) {
			p = PUT_LIT(p, ",\"cat\":");
			p = put_str(p, prof, c->cat);
		}
		p = PUT_LIT(p, ",\"name\":");
		p = put_str(p, prof, c->name);
		p = rtr__prof_counter_figures(p, c);
		out->len = (size_t)(p - out->data);
	}
	if ((p = rtr__prof_reserve(out, 2)) != NULL)
		out->data[out->len++] = ']';
}

int rtr__prof_document(struct rtr__writer *w, struct rtr__prof *prof, struct rtr__prof_buf *out,
		       const char *reason, int final, uint64_t end_ns)
{
	uint64_t events = 0, dropped = 0;
	char *p;

	for (uint32_t i = 0; i < prof->nthreads; i++)
		events += prof->threads[i].events;
	struct rtr_stats st;
	rtr__writer_stats(&st);
	dropped = st.events_dropped;
	out->len = 0;
	if ((p = rtr__prof_reserve(out, 2048)) == NULL)
		return -ENOMEM;
	p = put_head(w, p, reason, final, end_ns);
	p = KEY_U64(p, ",\"events\":", events);
	p = KEY_U64(p, ",\"dropped\":", dropped);
	p = KEY_U64(p, ",\"depth_limit\":", prof->depth_limit);
	size_t deeper_at = (size_t)(p - out->data); /* known once the threads are shown */
	p += 96;				    /* room left for them */
	p = PUT_LIT(p, ",\"threads\":[");
	out->len = (size_t)(p - out->data);
	uint64_t deeper = prof->deeper, unplaced = prof->unplaced;
	for (uint32_t i = 0; i < prof->nthreads; i++) {
		const struct rtr__prof_thread *t = &prof->threads[i];
		if ((p = rtr__prof_reserve(out, 512)) == NULL)
			break;
		if (i > 0)
			*p++ = ',';
		p = PUT_LIT(p, "{\"tid\":");
		p = rtr__jsontext_i64(p, t->tid);
		if (t->name[0] != '\0') {
			p = PUT_LIT(p, ",\"name\":\"");
			p = rtr__jsontext_escape(p, t->name, strnlen(t->name, sizeof(t->name)));
			*p++ = '"';
		}
		p = KEY_U64(p, ",\"events\":", t->events);
		p = KEY_U64(p, ",\"dropped\":", t->dropped);
		out->len = (size_t)(p - out->data);
		if (put_thread(prof, t, out, end_ns, &deeper, &unplaced) != 0)
			return -ENOMEM;
		if ((p = rtr__prof_reserve(out, 1)) != NULL)
			out->data[out->len++] = '}';
	}
	if (out->data != NULL) { /* the counts in the room left, the rest moved up to them */
		char *at = out->data + deeper_at;
		char *q = KEY_U64(at, ",\"deeper\":", deeper);
		q = KEY_U64(q, ",\"node_limit\":", prof->node_limit);
		q = KEY_U64(q, ",\"unplaced\":", unplaced);
		size_t gap = (size_t)(at + 96 - q);
		memmove(q, at + 96, out->len - (deeper_at + 96));
		out->len -= gap;
	}
	if ((p = rtr__prof_reserve(out, 2)) != NULL)
		out->data[out->len++] = ']';
	put_counters(prof, out);
	if ((p = rtr__prof_reserve(out, 2)) != NULL) {
		out->data[out->len++] = '}';
		out->data[out->len++] = '\n';
	}
	return out->failed ? -ENOMEM : 0;
}
