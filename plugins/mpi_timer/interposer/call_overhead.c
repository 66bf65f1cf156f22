/*
 * call_overhead: the interposer's cost per MPI call. Times N calls of a cheap MPI function
 * (MPI_Allreduce of one double on MPI_COMM_SELF, or MPI_Barrier on MPI_COMM_WORLD) and prints
 * nanoseconds per call; run it with and without the interposer preloaded and subtract.
 *
 *   mpicc -O2 -o call_overhead call_overhead.c
 *   mpirun -np 1 ./call_overhead 2000000
 *   mpirun -np 1 -x LD_PRELOAD=$PWD/libyosoku_mpi_timer.so ./call_overhead 2000000
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n <= 0) {
        fprintf(stderr, "usage: call_overhead CALLS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 1.0, y = 0.0;
    for (long i = 0; i < n / 10; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    double t1 = MPI_Wtime();
    if (rank == 0) printf("allreduce_self_ns_per_call %.1f\n", 1e9 * (t1 - t0) / (double)n);
    MPI_Finalize();
    return 0;
}
