/* SPDX-License-Identifier: Apache-2.0 */
/* Where the ranks are. MPI groups the ranks that share memory (MPI_COMM_TYPE_SHARED): those are a
 * host's ranks. With several hosts holding the same number (> 1) of ranks each, the schedules run
 * hierarchically (inside a host, then between hosts over one rank per host and local index), as
 * the library's hierarchical model describes; otherwise flat. */
#include "measure.h"

#include <stdlib.h>

/* The order in which the hierarchical all-gather leaves the gradients: an all-gather among the
 * ranks of one local index (one per host, by host), then among the ranks of a host (by local
 * index). The same two collectives on the world ranks give the map. */
static int gather_order(layout *L)
{
    int *stage = malloc((size_t)L->hosts * sizeof(int));
    L->world_of = malloc((size_t)L->nranks * sizeof(int));
    int ok = stage && L->world_of, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok) {
        MPI_Allgather(&L->rank, 1, MPI_INT, stage, 1, MPI_INT, L->cross);
        MPI_Allgather(stage, L->hosts, MPI_INT, L->world_of, L->hosts, MPI_INT, L->node);
    }
    free(stage);
    return all_ok ? 0 : 1;
}

int layout_open(layout *L)
{
    int rc = 0, lo = 0, hi = 0, first = 0;
    *L = (layout){.node = MPI_COMM_NULL, .cross = MPI_COMM_NULL};
    MPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &L->nranks);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, L->rank, MPI_INFO_NULL, &L->node);
    MPI_Comm_rank(L->node, &L->local);
    MPI_Comm_size(L->node, &L->per_host);
    /* hosts are numbered by their first rank; a host's number is its local-0 rank's order */
    first = L->local == 0;
    MPI_Allreduce(&first, &L->hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(&first, &L->host, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    L->host -= 1;
    MPI_Bcast(&L->host, 1, MPI_INT, 0, L->node);
    MPI_Allreduce(&L->per_host, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&L->per_host, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi)
        L->per_host = 0;
    L->hierarchical = L->hosts > 1 && L->per_host > 1;
    MPI_Comm_split(MPI_COMM_WORLD, L->local, L->host, &L->cross);
    if (L->hierarchical)
        rc = gather_order(L);
    if (rc)
        measure_say("out of memory for the hierarchical all-gather's order");
    return rc;
}

void layout_close(layout *L)
{
    if (L->cross != MPI_COMM_NULL)
        MPI_Comm_free(&L->cross);
    if (L->node != MPI_COMM_NULL)
        MPI_Comm_free(&L->node);
    free(L->world_of);
    L->world_of = NULL;
}
