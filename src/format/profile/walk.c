/* SPDX-License-Identifier: MIT */
/*
 * rtr_profile_walk(): the process's export (job.c, its threads merged) read back node
 * by node, each with its sketch's p50 and p99, for a caller in the program.
 */
#include "format/profile/profile.h"

#include <errno.h>
#include <ringtrace.h>
#include <stdlib.h>
#include <string.h>

/* len bytes at *at, or NULL past end. */
static const void *take(const char **at, const char *end, size_t len)
{
	const char *p = *at;

	if ((size_t)(end - p) < len)
		return NULL;
	*at = p + len;
	return p;
}

/* A NUL-terminated copy of len bytes in *buf (grown as needed); NULL without memory. */
static const char *terminated(char **buf, size_t *cap, const char *s, size_t len)
{
	if (len + 1 > *cap) {
		char *p = realloc(*buf, len + 1);
		if (p == NULL)
			return NULL;
		*buf = p, *cap = len + 1;
	}
	memcpy(*buf, s, len);
	(*buf)[len] = '\0';
	return *buf;
}

/* The quantiles of one node's sketch as the export holds it (its bytes may be unaligned:
 * copied). -ENOMEM without memory for the buckets. */
static int node_quantiles(const struct rtr__prof_export_node *e, const void *exact,
			  const void *bins, struct rtr_profile_node *out)
{
	struct rtr__sketch q = rtr__prof_export_sketch(e);

	memcpy(q.exact, exact, e->nexact * sizeof(uint64_t));
	if (e->nbins > 0) {
		q.bins = malloc(e->nbins * sizeof(uint64_t));
		if (q.bins == NULL)
			return -ENOMEM;
		memcpy(q.bins, bins, e->nbins * sizeof(uint64_t));
	}
	out->p50_ns = rtr__sketch_quantile(&q, 5000);
	out->p99_ns = rtr__sketch_quantile(&q, 9900);
	free(q.bins);
	return 0;
}

int rtr__prof_export_walk(const char *data, size_t len, rtr_profile_fn fn, void *user)
{
	const char *at = data, *end = data + len;
	const void *head = take(&at, end, sizeof(struct rtr__prof_export_head));
	struct rtr__prof_export_head h;
	char *names = NULL, *cats = NULL;
	size_t names_cap = 0, cats_cap = 0;
	int err = 0;

	if (head == NULL)
		return -EINVAL;
	memcpy(&h, head, sizeof(h));
	if (take(&at, end, h.host_len) == NULL)
		return -EINVAL;
	for (uint32_t k = 0; k < h.nnodes && err == 0; k++) {
		const void *node = take(&at, end, sizeof(struct rtr__prof_export_node));
		struct rtr__prof_export_node e;
		if (node == NULL)
			return -EINVAL;
		memcpy(&e, node, sizeof(e));
		const void *exact = take(&at, end, (size_t)e.nexact * 8);
		const void *bins = exact == NULL ? NULL : take(&at, end, (size_t)e.nbins * 8);
		const char *name = bins == NULL ? NULL : take(&at, end, e.name_len);
		const char *cat = name == NULL ? NULL : take(&at, end, e.cat_len);
		if (cat == NULL || e.nexact > RTR__SKETCH_EXACT) {
			err = -EINVAL;
			break;
		}
		struct rtr_profile_node nd = {
			.depth = e.depth,
			.name = terminated(&names, &names_cap, name, e.name_len),
			.cat = terminated(&cats, &cats_cap, cat, e.cat_len),
			.count = e.n,
			.total_ns = e.t,
			.self_ns = e.s,
			.min_ns = e.min,
			.max_ns = e.max};
		err = nd.name == NULL || nd.cat == NULL ? -ENOMEM
							: node_quantiles(&e, exact, bins, &nd);
		if (err == 0)
			err = fn(&nd, user);
	}
	free(names);
	free(cats);
	return err;
}
