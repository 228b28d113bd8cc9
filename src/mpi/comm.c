/* SPDX-License-Identifier: MIT */
/*
 * Communicators: the info each one carries as an attribute (its id, its size, its
 * ranks in the world, the receives on it waiting for their number), and the ids, equal
 * on all ranks of a communicator without communication (see mpi_internal.h): the
 * world is 1; a communicator made by the Comm_dup, Comm_split and Comm_create wrappers
 * gets hash(parent id, how many the parent had made before, color); any other, a
 * hash of its members' world ranks, when first seen.
 */
#include "mpi/comm.h"

#include <stdint.h>
#include <stdlib.h>

void rtr__mpi_info_unref(struct comm_info *c)
{
	int last;

	rtr__mpi_lock();
	last = --c->refs == 0;
	rtr__mpi_unlock();
	if (last && c != &rtr__mpi.world_info) {
		free(c->world);
		free(c);
	}
}

int rtr__mpi_info_delete(MPI_Comm comm, int key, void *value, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	rtr__mpi_info_unref(value);
	return MPI_SUCCESS;
}

/* A new info for comm with the given id, attached to it; NULL when MPI fails. */
static struct comm_info *info_attach(MPI_Comm comm, uint64_t id)
{
	struct comm_info *c = calloc(1, sizeof(*c));
	MPI_Group group, world_group;

	if (c == NULL)
		return NULL;
	c->id = id;
	c->refs = 1;
	PMPI_Comm_test_inter(comm, &c->inter);
	PMPI_Comm_size(comm, &c->size);
	c->world = malloc((size_t)c->size * 2 * sizeof(int));
	if (c->world == NULL || PMPI_Comm_group(comm, &group) != MPI_SUCCESS) {
		free(c->world);
		free(c);
		return NULL;
	}
	int *ranks = c->world + c->size;
	for (int i = 0; i < c->size; i++)
		ranks[i] = i;
	PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	PMPI_Group_translate_ranks(group, c->size, ranks, world_group, c->world);
	PMPI_Group_free(&group);
	PMPI_Group_free(&world_group);
	if (rtr__mpi.keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_set_attr(comm, rtr__mpi.keyval, c);
	return c;
}

/* rtr__mpi_info_of() of any communicator but the world. */
struct comm_info *rtr__mpi_info_lookup(MPI_Comm comm)
{
	struct comm_info *c = NULL;
	int flag = 0;

	if (comm == MPI_COMM_NULL || rtr__mpi.keyval == MPI_KEYVAL_INVALID)
		return NULL;
	if (PMPI_Comm_get_attr(comm, rtr__mpi.keyval, &c, &flag) != MPI_SUCCESS || !flag) {
		c = info_attach(comm, 0);
		if (c == NULL)
			return NULL;
		uint64_t h = UINT64_C(0x6d656d62657273); /* "members" */
		for (int i = 0; i < c->size; i++)
			h = rtr__mpi_combine(h, (uint64_t)(uint32_t)c->world[i]);
		c->id = h;
	}
	return c;
}

/* The id of a communicator made from parent (Comm_dup, _split, _create), equal on
 * its ranks: see mpi_internal.h. */
static uint64_t derived_id(MPI_Comm parent, int color)
{
	struct comm_info *p = rtr__mpi_info_of(parent);
	uint64_t n;

	if (p == NULL)
		return 0;
	rtr__mpi_lock();
	n = p->made++;
	rtr__mpi_unlock();
	return rtr__mpi_combine(rtr__mpi_combine(p->id, n), (uint64_t)(uint32_t)color);
}

/* After a wrapper made newcomm from parent (collectives.c): its id (see
 * mpi_internal.h). The id is drawn on every rank of parent, also those that get
 * MPI_COMM_NULL, so that the parent's count stays equal on all of them. */
void rtr__mpi_comm_made(MPI_Comm parent, int color, MPI_Comm newcomm)
{
	uint64_t id = derived_id(parent, color);

	if (newcomm != MPI_COMM_NULL && rtr__mpi.keyval != MPI_KEYVAL_INVALID)
		info_attach(newcomm, id);
}
