/*
 * Calls every MPI function the timer interposer wraps, once or more, on 2 ranks, so that a test
 * can check that each one appears in the logs with the bytes it moved (plugins/mpi_timer/tests/
 * families.rs). Not a benchmark: every call is small. Build: mpicc -O1 -o families families.c
 * Run:   mpirun -np 2 -x LD_PRELOAD=libyosoku_mpi_timer.so -x YOSOKU_MPI_LOG_DIR=logs ./families DIR
 * (DIR: where the MPI-IO part may write its scratch file).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000 /* doubles a point-to-point message carries: 8000 bytes */

static int rank, size, peer;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "families: rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void point_to_point(double *a, double *b) {
    MPI_Status st;
    MPI_Request rq[4];
    if (rank == 0) {
        MPI_Send(a, N, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
        MPI_Ssend(a, N, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
        int bsize = N * sizeof(double) + MPI_BSEND_OVERHEAD;
        void *buffer = malloc(bsize);
        MPI_Buffer_attach(buffer, bsize);
        MPI_Bsend(a, N, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
        MPI_Buffer_detach(&buffer, &bsize);
        free(buffer);
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1 has posted the receive Rsend needs */
        MPI_Rsend(a, N, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD);
    } else {
        MPI_Recv(b, N, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st);
        MPI_Recv(b, N, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &st);
        MPI_Recv(b, N, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &st);
        MPI_Irecv(b, N, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &rq[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&rq[0], &st);
    }
    check(rank == 0 || b[N - 1] == N - 1, "point-to-point data");
    MPI_Sendrecv(a, N, MPI_DOUBLE, peer, 5, b, N, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace(b, N, MPI_DOUBLE, peer, 6, peer, 6, MPI_COMM_WORLD, &st);
    /* Non-blocking sends of every mode, completed four ways. */
    int bsize = N * sizeof(double) + MPI_BSEND_OVERHEAD;
    void *buffer = malloc(bsize);
    MPI_Buffer_attach(buffer, bsize);
    if (rank == 0) {
        MPI_Isend(a, N, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Ibsend(a, N, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &rq[1]);
        MPI_Issend(a, N, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, &rq[2]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Irsend(a, N, MPI_DOUBLE, 1, 10, MPI_COMM_WORLD, &rq[3]);
    } else {
        for (int t = 0; t < 3; t++) MPI_Irecv(b, N, MPI_DOUBLE, 0, 7 + t, MPI_COMM_WORLD, &rq[t]);
        MPI_Irecv(b + N, N, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, &rq[3]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int index, flag = 0, outcount, indices[4];
    MPI_Waitany(4, rq, &index, &st);
    MPI_Waitsome(4, rq, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    MPI_Test(&rq[0], &flag, &st);
    MPI_Testany(4, rq, &index, &flag, &st);
    MPI_Testsome(4, rq, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE);
    MPI_Buffer_detach(&buffer, &bsize);
    free(buffer);
}

static void persistent(double *a, double *b) {
    MPI_Request rq[4];
    int bsize = N * sizeof(double) + MPI_BSEND_OVERHEAD;
    void *buffer = malloc(bsize);
    MPI_Buffer_attach(buffer, bsize);
    if (rank == 0) {
        MPI_Send_init(a, N, MPI_DOUBLE, 1, 11, MPI_COMM_WORLD, &rq[0]);
        MPI_Bsend_init(a, N, MPI_DOUBLE, 1, 12, MPI_COMM_WORLD, &rq[1]);
        MPI_Ssend_init(a, N, MPI_DOUBLE, 1, 13, MPI_COMM_WORLD, &rq[2]);
        MPI_Rsend_init(a, N, MPI_DOUBLE, 1, 14, MPI_COMM_WORLD, &rq[3]);
        MPI_Start(&rq[0]);
        MPI_Startall(2, &rq[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&rq[3]);
    } else {
        for (int t = 0; t < 4; t++) {
            MPI_Recv_init(b + (t % 2) * N, N, MPI_DOUBLE, 0, 11 + t, MPI_COMM_WORLD, &rq[t]);
        }
        MPI_Startall(4, rq);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    for (int t = 0; t < 4; t++) MPI_Request_free(&rq[t]);
    MPI_Buffer_detach(&buffer, &bsize);
    free(buffer);
}

static void probe(double *a, double *b) {
    MPI_Status st;
    MPI_Message msg;
    MPI_Request rq;
    int flag = 0;
    if (rank == 0) {
        for (int t = 0; t < 4; t++) MPI_Send(a, N, MPI_DOUBLE, 1, 20 + t, MPI_COMM_WORLD);
    } else {
        MPI_Probe(0, 20, MPI_COMM_WORLD, &st);
        MPI_Recv(b, N, MPI_DOUBLE, 0, 20, MPI_COMM_WORLD, &st);
        do MPI_Iprobe(0, 21, MPI_COMM_WORLD, &flag, &st); while (!flag);
        MPI_Recv(b, N, MPI_DOUBLE, 0, 21, MPI_COMM_WORLD, &st);
        MPI_Mprobe(0, 22, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv(b, N, MPI_DOUBLE, &msg, &st);
        flag = 0;
        do MPI_Improbe(0, 23, MPI_COMM_WORLD, &flag, &msg, &st); while (!flag);
        MPI_Imrecv(b, N, MPI_DOUBLE, &msg, &rq);
        MPI_Wait(&rq, &st);
    }
}

/* Collectives, blocking then non-blocking: every rank contributes `N` doubles where it can. */
static void collectives(double *a, double *b, int nonblocking) {
    int counts[2] = {N, N}, displs[2] = {0, N};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_DOUBLE};
    int wdispls[2] = {0, N * (int)sizeof(double)};
    MPI_Request rq[17];
    if (!nonblocking) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Bcast(a, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Gather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Gatherv(a, N, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Scatter(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allgather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Allgatherv(a, N, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoall(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoallw(a, counts, wdispls, types, b, counts, wdispls, types, MPI_COMM_WORLD);
        MPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        check(b[3] == 3.0 * size, "allreduce result");
        MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce_scatter_block(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Scan(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Exscan(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        /* In place: the counts of the side that is read (a null send type must not be read). */
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, N, MPI_DOUBLE, MPI_COMM_WORLD);
        return;
    }
    int k = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[k++]);
    MPI_Ibcast(a, N, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[k++]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    MPI_Igather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[k++]);
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    k = 0;
    /* Each operation into its own part of `b` (4N doubles each) so they may overlap. */
    double *o = b;
    MPI_Igatherv(a, N, MPI_DOUBLE, o, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iscatter(a, N, MPI_DOUBLE, o, N, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iscatterv(a, counts, displs, MPI_DOUBLE, o, N, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iallgather(a, N, MPI_DOUBLE, o, N, MPI_DOUBLE, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iallgatherv(a, N, MPI_DOUBLE, o, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Ialltoall(a, N, MPI_DOUBLE, o, N, MPI_DOUBLE, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Ialltoallv(a, counts, displs, MPI_DOUBLE, o, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD,
                   &rq[k++]);
    o += 4 * N;
    MPI_Ialltoallw(a, counts, wdispls, types, o, counts, wdispls, types, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Ireduce(a, o, N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iallreduce(a, o, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Ireduce_scatter(a, o, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Ireduce_scatter_block(a, o, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iscan(a, o, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    o += 4 * N;
    MPI_Iexscan(a, o, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
}

/* On a periodic ring: rank 1's two neighbours are rank 0 twice. */
static void neighbourhood(double *a, double *b) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int counts[2] = {N, N}, displs[2] = {0, N};
    MPI_Aint wdispls[2] = {0, N * sizeof(double)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_DOUBLE};
    MPI_Request rq[5];
    MPI_Neighbor_allgather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, ring);
    MPI_Neighbor_allgatherv(a, N, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, ring);
    MPI_Neighbor_alltoall(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, ring);
    MPI_Neighbor_alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, ring);
    MPI_Neighbor_alltoallw(a, counts, wdispls, types, b, counts, wdispls, types, ring);
    MPI_Ineighbor_allgather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, ring, &rq[0]);
    MPI_Ineighbor_allgatherv(a, N, MPI_DOUBLE, b + 2 * N, counts, displs, MPI_DOUBLE, ring, &rq[1]);
    MPI_Ineighbor_alltoall(a, N, MPI_DOUBLE, b + 4 * N, N, MPI_DOUBLE, ring, &rq[2]);
    MPI_Ineighbor_alltoallv(a, counts, displs, MPI_DOUBLE, b + 6 * N, counts, displs, MPI_DOUBLE,
                            ring, &rq[3]);
    MPI_Ineighbor_alltoallw(a, counts, wdispls, types, b + 8 * N, counts, wdispls, types, ring,
                            &rq[4]);
    MPI_Waitall(5, rq, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&ring);
}

static void one_sided(double *a) {
    double *base;
    MPI_Win win;
    MPI_Win_allocate(4 * N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    double one = 1.0, old = 0.0, result[N];
    MPI_Request rq;
    MPI_Win_fence(0, win);
    MPI_Put(a, N, MPI_DOUBLE, peer, 0, N, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Get(result, N, MPI_DOUBLE, peer, 0, N, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    check(result[7] == 7.0, "one-sided put and get");
    MPI_Accumulate(a, N, MPI_DOUBLE, peer, N, N, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
    MPI_Get_accumulate(a, N, MPI_DOUBLE, result, N, MPI_DOUBLE, peer, 0, N, MPI_DOUBLE, MPI_SUM,
                       win);
    MPI_Fetch_and_op(&one, &old, MPI_DOUBLE, peer, 0, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &old, result, MPI_DOUBLE, peer, 1, win);
    MPI_Win_flush(peer, win);
    MPI_Win_flush_local(peer, win);
    MPI_Win_unlock(peer, win);
    MPI_Win_lock_all(0, win);
    MPI_Rput(a, N, MPI_DOUBLE, peer, 2 * N, N, MPI_DOUBLE, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Rget(result, N, MPI_DOUBLE, peer, 2 * N, N, MPI_DOUBLE, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Raccumulate(a, N, MPI_DOUBLE, peer, 3 * N, N, MPI_DOUBLE, MPI_SUM, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Rget_accumulate(a, N, MPI_DOUBLE, result, N, MPI_DOUBLE, peer, 3 * N, N, MPI_DOUBLE,
                        MPI_SUM, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Win_flush_all(win);
    MPI_Win_flush_local_all(win);
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
    /* General active target: each rank exposes its window to the other and accesses it. */
    MPI_Group world, other;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &other);
    MPI_Win_post(other, 0, win);
    MPI_Win_start(other, 0, win);
    MPI_Put(a, N, MPI_DOUBLE, peer, 0, N, MPI_DOUBLE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Group_free(&other);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

static void io(const char *dir, double *a, double *b) {
    char path[4096];
    snprintf(path, sizeof path, "%s/families-io.bin", dir);
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq;
    MPI_Offset mine = (MPI_Offset)rank * N * sizeof(double);
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh) == MPI_SUCCESS,
          "MPI_File_open");
    MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
    MPI_File_write_at(fh, rank * N, a, N, MPI_DOUBLE, &st);
    MPI_File_read_at(fh, rank * N, b, N, MPI_DOUBLE, &st);
    MPI_File_write_at_all(fh, rank * N, a, N, MPI_DOUBLE, &st);
    MPI_File_read_at_all(fh, rank * N, b, N, MPI_DOUBLE, &st);
    check(b[9] == 9.0, "MPI-IO read back");
    MPI_File_set_view(fh, mine, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
    MPI_File_write(fh, a, N, MPI_DOUBLE, &st);
    MPI_File_write_all(fh, a, N, MPI_DOUBLE, &st);
    MPI_File_set_view(fh, mine, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
    MPI_File_read(fh, b, N, MPI_DOUBLE, &st);
    MPI_File_read_all(fh, b, N, MPI_DOUBLE, &st);
    MPI_File_iwrite(fh, a, N, MPI_DOUBLE, &rq);
    MPI_Wait(&rq, &st);
    MPI_File_iread(fh, b, N, MPI_DOUBLE, &rq);
    MPI_Wait(&rq, &st);
    MPI_File_iwrite_at(fh, 0, a, N, MPI_DOUBLE, &rq);
    MPI_Wait(&rq, &st);
    MPI_File_iread_at(fh, 0, b, N, MPI_DOUBLE, &rq);
    MPI_Wait(&rq, &st);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
    MPI_File_write_shared(fh, a, N, MPI_DOUBLE, &st);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_read_shared(fh, b, N, MPI_DOUBLE, &st);
    MPI_File_write_ordered(fh, a, N, MPI_DOUBLE, &st);
    MPI_File_read_ordered(fh, b, N, MPI_DOUBLE, &st);
    MPI_File_sync(fh);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 families SCRATCH_DIR\n");
        MPI_Finalize();
        return 2;
    }
    peer = 1 - rank;
    double *a = malloc(4 * N * sizeof(double)), *b = calloc(64 * N, sizeof(double));
    for (int i = 0; i < 4 * N; i++) a[i] = i % N;
    point_to_point(a, b);
    persistent(a, b);
    probe(a, b);
    collectives(a, b, 0);
    collectives(a, b, 1);
    neighbourhood(a, b);
    one_sided(a);
    io(argv[1], a, b);
    free(a);
    free(b);
    /* As some programs do (meep's argument parser): the arguments rewritten after MPI_Init. The
     * log's command line is the one the program was started with. */
    memset(argv[1], 'x', strlen(argv[1]));
    MPI_Finalize();
    return 0;
}
