/* message_rate: an MPI message-rate program of our own, for yosoku's large-log benchmark
 * (issue 41, item 5; BENCHMARKS.md, "MPI logs of millions of calls").
 *
 * Two or more ranks in a ring. Every step: for each of four message sizes (8 B, 512 B, 4 KiB,
 * 64 KiB) a window of WINDOW non-blocking receives and sends with the next and previous rank and
 * one MPI_Waitall; a little arithmetic between the windows; an 8-byte MPI_Allreduce of the
 * step's checksum; every 64th step an MPI_Barrier. That is 4 x (2 x WINDOW + 1) + 1 calls a step
 * (+1 on barrier steps): the shape of the message-rate kernels of MPI benchmark suites, with
 * blocks of several call kinds and sizes.
 *
 *   mpicc -O2 -o message_rate tools/mpi-message-rate/message_rate.c
 *   mpirun -np 2 ./message_rate STEPS [WINDOW]      (WINDOW: default 16, at most 64)
 *
 * It prints the steps, the calls a rank made and the final checksum (the same for any run of
 * the same arguments and rank count).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WINDOW 64
#define SIZES 4

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) {
            fprintf(stderr, "usage: message_rate STEPS [WINDOW]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long steps = atol(argv[1]);
    int window = argc > 2 ? atoi(argv[2]) : 16;
    if (steps < 1 || window < 1 || window > MAX_WINDOW || size < 2) {
        if (rank == 0) {
            fprintf(stderr, "message_rate: STEPS >= 1, 1 <= WINDOW <= %d, 2 ranks or more\n",
                    MAX_WINDOW);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static const int bytes[SIZES] = {8, 512, 4096, 65536};
    char *send = malloc((size_t)MAX_WINDOW * 65536);
    char *recv = malloc((size_t)MAX_WINDOW * 65536);
    if (!send || !recv) {
        fprintf(stderr, "message_rate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(send, rank + 1, (size_t)MAX_WINDOW * 65536);
    memset(recv, 0, (size_t)MAX_WINDOW * 65536);
    MPI_Request requests[2 * MAX_WINDOW];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double checksum = 0.0;
    long calls = 0;
    for (long step = 0; step < steps; step++) {
        for (int s = 0; s < SIZES; s++) {
            int n = bytes[s];
            for (int w = 0; w < window; w++) {
                MPI_Irecv(recv + (size_t)w * n, n, MPI_BYTE, prev, s, MPI_COMM_WORLD,
                          &requests[2 * w]);
                MPI_Isend(send + (size_t)w * n, n, MPI_BYTE, next, s, MPI_COMM_WORLD,
                          &requests[2 * w + 1]);
            }
            MPI_Waitall(2 * window, requests, MPI_STATUSES_IGNORE);
            calls += 2 * window + 1;
            /* A little work between the windows: sum what arrived. */
            double local = 0.0;
            for (int i = 0; i < n * window; i += 64) {
                local += (unsigned char)recv[i];
            }
            checksum += local * 1e-6;
        }
        double total;
        MPI_Allreduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        checksum = total / size;
        calls++;
        if (step % 64 == 63) {
            MPI_Barrier(MPI_COMM_WORLD);
            calls++;
        }
    }
    if (rank == 0) {
        printf("message_rate: %ld steps, window %d, %d ranks, %ld calls per rank, checksum %.6f\n",
               steps, window, size, calls, checksum);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
