/* SPDX-License-Identifier: MIT */
/*
 * MPI_Init and MPI_Finalize: the recorder's start (before PMPI_Init, so that MPI_Init
 * is a slice too; path "ringtrace-%r.json" unless RINGTRACE_FILE says otherwise) and
 * stop (after PMPI_Finalize, if the Init wrapper started it), the rank's process name
 * (a label where the session names the process otherwise) and sort index, and what
 * the other files need once MPI runs: the world's rank and size, the thread level
 * (whether the tables take the lock), the predefined types' sizes, the infos'
 * attribute key, the clock measurements at both ends. The module as a whole and its
 * files: see mpi_internal.h.
 */
#include "mpi/mpi_internal.h"

#include "common/launcher.h"
#include "common/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module's state: every field's writer is named in mpi_internal.h. */
struct rtr__mpi_state rtr__mpi = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.multithreaded = 1,
	.world_info = {.id = 1, .refs = 1},
	.keyval = MPI_KEYVAL_INVALID,
	.sync_comm = MPI_COMM_NULL,
	.world_rank = -1,
	.env_rank = -1,
};

/* Fill rtr__mpi.type_sizes: the predefined C datatypes' sizes, asked once. */
static void type_sizes_init(void)
{
	/* clang-format off */
	const MPI_Datatype predefined[] = {
		MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE,
		MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
		MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG,
		MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
		MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
		MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
		MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT,
		MPI_OFFSET, MPI_COUNT, MPI_PACKED, MPI_FLOAT_INT,
		MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
		MPI_LONG_DOUBLE_INT
	};
	/* clang-format on */
	int size;

	for (size_t i = 0; i < sizeof(predefined) / sizeof(predefined[0]); i++) {
		MPI_Datatype dt = predefined[i];
		if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS)
			continue;
		unsigned slot =
			rtr__mpi_type_slot(dt); /* an alias listed twice finds its own slot */
		rtr__mpi.type_sizes[slot].dt = dt;
		rtr__mpi.type_sizes[slot].size = size;
		rtr__mpi.type_sizes[slot].used = 1;
	}
}

/* ------------------------------------------------------------------------- */
/* Init and Finalize                                                          */

/* RINGTRACE_MPI_POLLS: "all" records every test and probe call as a slice; unset or
 * "fold" folds those that complete nothing; anything else warns and folds. */
static int polls_all(void)
{
	const char *v = getenv("RINGTRACE_MPI_POLLS");

	if (v == NULL || *v == '\0' || strcmp(v, "fold") == 0)
		return 0;
	if (strcmp(v, "all") == 0)
		return 1;
	fprintf(stderr, "ringtrace: RINGTRACE_MPI_POLLS=\"%s\" is not fold or all; folding\n", v);
	return 0;
}

/* Before PMPI_Init: the recorder, unless the program runs one already. */
static void before_init(void)
{
	struct rtr_config cfg;

	rtr__mpi.polls_all = polls_all();

	rtr_config_init(&cfg);
	if (getenv("RINGTRACE_FILE") == NULL || *getenv("RINGTRACE_FILE") == '\0')
		cfg.path = "ringtrace-%r.json";
	rtr__mpi.env_rank = rtr__launcher_rank();
	if (rtr__mpi.env_rank >= 0 && (cfg.process_name == NULL || *cfg.process_name == '\0')) {
		snprintf(rtr__mpi.process_name, sizeof(rtr__mpi.process_name), "rank %ld",
			 rtr__mpi.env_rank);
		cfg.process_name = rtr__mpi.process_name;
	}
	/* -EBUSY: the program's own session, or one autostarted for the modules loaded
	 * with this one, which the exit ends */
	rtr__mpi.started_here = rtr__start_module(&cfg) == 0;
}

static void after_init(void)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &rtr__mpi.world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &rtr__mpi.world_size);
	rtr__mpi.world_info.size = rtr__mpi.world_size;
	int level = MPI_THREAD_MULTIPLE;
	PMPI_Query_thread(&level);
	rtr__mpi.multithreaded = level == MPI_THREAD_MULTIPLE;
	type_sizes_init();
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rtr__mpi_info_delete, &rtr__mpi.keyval,
				NULL);
	PMPI_Comm_dup(MPI_COMM_WORLD, &rtr__mpi.sync_comm);
	rtr_process_sort_index(rtr__mpi.world_rank);
	/* a process the session does not name "rank N" already gets the label */
	char label[32];
	snprintf(label, sizeof(label), "rank %d", rtr__mpi.world_rank);
	if (strcmp(rtr__process_name(), label) != 0)
		rtr_process_label(label);
	rtr__mpi.initialized = 1;
	rtr__mpi_clock_sync();
}

int MPI_Init(int *argc, char ***argv)
{
	before_init();
	rtr_begin(CAT, "MPI_Init");
	int rc = PMPI_Init(argc, argv);
	rtr_end(CAT, "MPI_Init");
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	before_init();
	rtr_begin(CAT, "MPI_Init_thread");
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	rtr_end(CAT, "MPI_Init_thread");
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Finalize(void)
{
	struct rtr__mpi_job job = {0};
	int profiled = 0;

	if (rtr__mpi.initialized) {
		rtr__mpi_clock_sync();
		rtr__mpi_manifest();
	}
	rtr_begin(CAT, "MPI_Finalize");
	if (rtr__mpi.initialized)
		profiled = rtr__mpi_job_agree(&job);
	/* With profiles, MPI_Finalize's slice ends where they count it to (profile.c). */
	if (profiled)
		rtr_end(CAT, "MPI_Finalize");
	if (rtr__mpi.initialized) {
		rtr__mpi_job_gather(&job, 1);
		PMPI_Comm_free(&rtr__mpi.sync_comm);
		rtr__mpi.initialized = 0;
	}
	int rc = PMPI_Finalize();
	if (!profiled)
		rtr_end(CAT, "MPI_Finalize");
	rtr__mpi.keyval = MPI_KEYVAL_INVALID;
	if (rtr__mpi.started_here) {
		rtr__mpi.started_here = 0;
		rtr_stop();
	}
	return rc;
}
