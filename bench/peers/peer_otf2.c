/* SPDX-License-Identifier: MIT */
/*
 * The peers workload on OTF2 (Debian's libotf2-trace-dev): one location (event
 * writer) per thread, OTF2_EvtWriter_Enter/Leave on one region with CLOCK_MONOTONIC
 * timestamps in ns; with --arg 1 the Enter carries an OTF2 attribute list holding one
 * INT64. POSIX substrate, no compression, 1 MiB event chunks, flush callback
 * OTF2_FLUSH (a full chunk is written by the recording thread itself: OTF2 has no
 * writer thread). The output is complete when OTF2_Archive_Close() returns, after the
 * event files, the (empty) local definitions and the global definitions are written.
 */
#define _GNU_SOURCE
#include <otf2/OTF2_Pthread_Locks.h>
#include <otf2/otf2.h>

#include "harness.h"

enum { STR_EMPTY, STR_SPAN, STR_NODE, STR_PROCESS, STR_THREAD, STR_I };
enum { REGION_SPAN = 0 };
enum { ATTR_I = 0 };

static OTF2_Archive *archive;
static int nthreads;
static unsigned long long t_first, t_last;
static uint64_t events[PEER_MAX_THREADS];

struct otf2_thread {
	int tid;
	OTF2_EvtWriter *w;
	OTF2_AttributeList *attrs;
};
static struct otf2_thread threads_st[PEER_MAX_THREADS];

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller,
				bool final)
{
	(void)user, (void)type, (void)loc, (void)caller, (void) final;
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
	(void)user, (void)type, (void)loc;
	return peer_now_ns();
}

static OTF2_FlushCallbacks flush_callbacks = {
	.otf2_pre_flush = pre_flush,
	.otf2_post_flush = post_flush,
};

static int check(OTF2_ErrorCode e, const char *what)
{
	if (e != OTF2_SUCCESS) {
		fprintf(stderr, "peer_otf2: %s: %s\n", what, OTF2_Error_GetName(e));
		return -1;
	}
	return 0;
}

static int tool_open(const struct peer_opts *o)
{
	nthreads = o->threads;
	archive = OTF2_Archive_Open(o->out, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
				    4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (archive == NULL) {
		fprintf(stderr, "peer_otf2: OTF2_Archive_Open failed\n");
		return -1;
	}
	if (check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL), "flush cb") ||
	    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective cb") ||
	    check(OTF2_Pthread_Archive_SetLockingCallbacks(archive, NULL), "locking cb") ||
	    check(OTF2_Archive_OpenEvtFiles(archive), "open evt files"))
		return -1;
	t_first = peer_now_ns();
	return 0;
}

static void *tool_thread_open(int tid)
{
	struct otf2_thread *t = &threads_st[tid];

	t->tid = tid;
	t->w = OTF2_Archive_GetEvtWriter(archive, (OTF2_LocationRef)tid);
	t->attrs = OTF2_AttributeList_New();
	if (t->w == NULL || t->attrs == NULL) {
		fprintf(stderr, "peer_otf2: no event writer\n");
		exit(1);
	}
	return t;
}

static void tool_record(void *arg, long n, int with_arg)
{
	struct otf2_thread *t = arg;
	OTF2_EvtWriter *w = t->w;

	if (with_arg) {
		for (long i = 0; i < n; i++) {
			OTF2_AttributeList_AddInt64(t->attrs, ATTR_I, i);
			OTF2_EvtWriter_Enter(w, t->attrs, peer_now_ns(), REGION_SPAN);
			OTF2_EvtWriter_Leave(w, NULL, peer_now_ns(), REGION_SPAN);
		}
	} else {
		for (long i = 0; i < n; i++) {
			OTF2_EvtWriter_Enter(w, NULL, peer_now_ns(), REGION_SPAN);
			OTF2_EvtWriter_Leave(w, NULL, peer_now_ns(), REGION_SPAN);
		}
	}
}

static void tool_thread_close(void *arg)
{
	struct otf2_thread *t = arg;

	OTF2_EvtWriter_GetNumberOfEvents(t->w, &events[t->tid]);
	OTF2_AttributeList_Delete(t->attrs);
	check(OTF2_Archive_CloseEvtWriter(archive, t->w), "close evt writer");
}

static int tool_close(void)
{
	t_last = peer_now_ns();
	if (check(OTF2_Archive_CloseEvtFiles(archive), "close evt files") ||
	    check(OTF2_Archive_OpenDefFiles(archive), "open def files"))
		return -1;
	for (int i = 0; i < nthreads; i++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, (OTF2_LocationRef)i);
		if (dw == NULL || check(OTF2_Archive_CloseDefWriter(archive, dw), "def writer"))
			return -1;
	}
	if (check(OTF2_Archive_CloseDefFiles(archive), "close def files"))
		return -1;

	OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
	if (g == NULL)
		return -1;
	OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, t_first, t_last - t_first + 1,
						  OTF2_UNDEFINED_TIMESTAMP);
	OTF2_GlobalDefWriter_WriteString(g, STR_EMPTY, "");
	OTF2_GlobalDefWriter_WriteString(g, STR_SPAN, "span");
	OTF2_GlobalDefWriter_WriteString(g, STR_NODE, "node");
	OTF2_GlobalDefWriter_WriteString(g, STR_PROCESS, "process");
	OTF2_GlobalDefWriter_WriteString(g, STR_THREAD, "thread");
	OTF2_GlobalDefWriter_WriteString(g, STR_I, "i");
	OTF2_GlobalDefWriter_WriteRegion(g, REGION_SPAN, STR_SPAN, STR_SPAN, STR_EMPTY,
					 OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
					 OTF2_REGION_FLAG_NONE, STR_EMPTY, 0, 0);
	OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_I, STR_I, STR_EMPTY, OTF2_TYPE_INT64);
	OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, STR_NODE, STR_NODE,
						 OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, STR_PROCESS, OTF2_LOCATION_GROUP_TYPE_PROCESS,
						0, OTF2_UNDEFINED_LOCATION_GROUP);
	for (int i = 0; i < nthreads; i++)
		OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)i, STR_THREAD,
						   OTF2_LOCATION_TYPE_CPU_THREAD, events[i], 0);
	return check(OTF2_Archive_Close(archive), "close archive");
}

int main(int argc, char **argv)
{
	return peer_main("otf2", argc, argv);
}
