/* A particle code whose cost per step drifts (issue 56, item 5): yosoku's test program for the
 * stationarity test and the two-length prediction (pipelines/mpi-drift.toml).
 *
 * Each rank moves its own particles in a periodic box of 1-D cells under a pair force with a
 * cutoff (a cell list: each particle against those of its own and the next cell) and a weak
 * pull toward the middle of the box, damped. The particles gather: the pairs within the cutoff,
 * and so the time of a step, grow step after step, as they do in a real MD run that condenses or
 * a mesh code that refines. Every step ends with an MPI_Allreduce of the energy and an
 * MPI_Sendrecv of the particle count with the neighbouring ranks (the communication blocks).
 *
 *   mpirun -np 2 drift_md STEPS [PARTICLES]
 *
 * Prints the steps, the final energy and the pairs of the last step. Written for this project
 * (MIT, as the rest of the repository). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BOX 1000.0
#define CUTOFF 1.0
#define CELLS 1000
#define DT 0.05
#define PULL 0.002
#define DAMPING 0.995

static double frand(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: drift_md STEPS [PARTICLES]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long steps = atol(argv[1]);
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    double *x = malloc(n * sizeof *x), *v = malloc(n * sizeof *v), *f = malloc(n * sizeof *f);
    int *next = malloc(n * sizeof *next), *head = malloc(CELLS * sizeof *head);
    unsigned long long seed = 12345ULL + (unsigned long long)rank;
    for (int i = 0; i < n; i++) {
        x[i] = frand(&seed) * BOX;
        v[i] = frand(&seed) - 0.5;
    }
    double energy = 0.0;
    long pairs = 0;
    for (long step = 0; step < steps; step++) {
        /* The cell list. */
        for (int c = 0; c < CELLS; c++) head[c] = -1;
        for (int i = 0; i < n; i++) {
            int c = (int)(x[i] / (BOX / CELLS));
            if (c < 0) c = 0;
            if (c >= CELLS) c = CELLS - 1;
            next[i] = head[c];
            head[c] = i;
        }
        /* Pair forces within the cutoff: each cell against itself and the next. */
        for (int i = 0; i < n; i++) f[i] = -PULL * (x[i] - BOX / 2);
        energy = 0.0;
        pairs = 0;
        for (int c = 0; c < CELLS; c++) {
            for (int i = head[c]; i >= 0; i = next[i]) {
                for (int d = 0; d < 2; d++) {
                    int c2 = (c + d) % CELLS;
                    for (int j = head[c2]; j >= 0; j = next[j]) {
                        if (d == 0 && j <= i) continue;
                        double r = x[j] - x[i];
                        if (fabs(r) >= CUTOFF) continue;
                        /* A soft repulsion: (1 - r/rc)^2. */
                        double s = 1.0 - fabs(r) / CUTOFF;
                        double fr = 0.01 * s * (r > 0 ? 1.0 : -1.0);
                        f[i] -= fr;
                        f[j] += fr;
                        energy += 0.005 * s * s;
                        pairs++;
                    }
                }
            }
        }
        for (int i = 0; i < n; i++) {
            v[i] = (v[i] + f[i] * DT) * DAMPING;
            x[i] += v[i] * DT;
            if (x[i] < 0) x[i] += BOX;
            if (x[i] >= BOX) x[i] -= BOX;
        }
        double total;
        MPI_Allreduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int mine = n, theirs = 0;
        MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 0, &theirs, 1, MPI_INT,
                     (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        energy = total;
    }
    if (rank == 0) printf("steps %ld energy %.6e pairs %ld\n", steps, energy, pairs);
    free(x); free(v); free(f); free(next); free(head);
    MPI_Finalize();
    return 0;
}
