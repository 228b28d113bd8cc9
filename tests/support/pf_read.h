/* SPDX-License-Identifier: MIT */
/*
 * A reader of the Perfetto traces ringtrace writes (docs/perfetto.md), for the tests:
 * an oracle apart from the writer, written from Perfetto's rules, not from
 * src/format/perfetto/. It reads a whole (small) file, resolves every interned id on
 * its sequence, turns delta timestamps back into absolute ones, and checks what a
 * Perfetto reader relies on: packets framed whole, a sequence cleared before a packet
 * needs its state, every iid defined on its sequence before use, every track
 * declared before an event uses it. A packet of compressed_packets is inflated with
 * zlib (not the libdeflate that wrote it) and its packets read in its place, as trace
 * processor does. The first violation is an error with the packet index.
 */
#ifndef RTR_TESTS_PF_READ_H
#define RTR_TESTS_PF_READ_H

#include <stddef.h>
#include <stdint.h>

#define PF_MAX_ANN 24

struct pf_ann {
	char name[64];
	int kind; /* 'i' int, 'u' uint, 'd' double, 'b' bool, 's' string, 'a' array, 'p' pointer, 0
		     none */
	int64_t i;
	uint64_t u;
	double d;
	char s[128];
	unsigned count; /* an array's elements */
};

struct pf_event {
	uint32_t seq;
	uint64_t ts; /* absolute ns */
	int type;    /* 1 BEGIN, 2 END, 3 INSTANT, 4 COUNTER */
	char name[128];
	char cat[64];
	uint64_t track; /* resolved: the event's, or its sequence's default */
	int has_counter;
	int64_t counter;
	double dcounter;
	uint64_t flow, end_flow;
	unsigned nann;
	struct pf_ann ann[PF_MAX_ANN];
};

struct pf_track {
	uint64_t uuid, parent;
	char name[128];
	int pid, tid;
	int has_process, has_thread, is_counter;
	char categories[64]; /* a counter's (CounterDescriptor.categories, joined by ",") */
	char thread_name[64];
	char process_name[64];
};

struct pf_trace {
	struct pf_event *events;
	size_t nevents;
	struct pf_track *tracks; /* the latest descriptor of each uuid */
	size_t ntracks;
	size_t npackets;
	size_t cleared;	   /* packets with SEQ_INCREMENTAL_STATE_CLEARED */
	size_t compressed; /* packets of compressed_packets (their packets are read in place) */
	size_t max_batch;  /* the most bytes of packets one of them held */
	size_t bytes;	   /* the file's size; whole packets end at `whole` */
	size_t whole;
	char error[256]; /* "" when the file is valid */
};

/* Read path into t. 0, or -1 with t->error set (also for a file that cannot be read).
 * A file cut inside its last packet is valid up to `whole` when allow_cut. */
int pf_read(const char *path, struct pf_trace *t, int allow_cut);
void pf_free(struct pf_trace *t);
/* The descriptor of uuid, or NULL. */
const struct pf_track *pf_track(const struct pf_trace *t, uint64_t uuid);
/* The annotation named name of e, or NULL. */
const struct pf_ann *pf_ann(const struct pf_event *e, const char *name);

#endif
