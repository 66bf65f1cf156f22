/*
 * himeno_mpi: a Himeno-style Poisson solver with MPI, written for yosoku from the algorithm
 * (not from the Himeno benchmark's sources): Jacobi iterations of a 19-point stencil over a 3-D
 * grid, the grid split along i across the ranks, one halo plane exchanged with each neighbour and
 * the residual summed with MPI_Allreduce every iteration.
 *
 *   mpirun -np R himeno_mpi NX NY NZ ITERATIONS
 *
 * Prints the grid, the ranks, the final residual (gosa), the wall time of the iteration loop (the
 * slowest rank's) and MFLOPS counted as Himeno does: 34 floating-point operations per interior
 * point per iteration.
 *
 * Build: mpicc -O3 -o himeno_mpi himeno_mpi.c
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Flops per interior point per iteration, as Himeno counts them. */
#define FLOPS_PER_POINT 34.0

typedef struct {
    int nx, ny, nz;   /* the whole grid */
    int i0, ni;       /* this rank's first global plane and its number of planes */
    /* Local arrays hold ni + 2 planes along i: halo, ni owned planes, halo. */
    double *p, *wrk1, *wrk2, *bnd;
    double *a[4], *b[3], *c[3];
} grid_t;

static size_t idx(const grid_t *g, int li, int j, int k) {
    return ((size_t)li * g->ny + j) * g->nz + k;
}

static double *alloc_planes(const grid_t *g, double value) {
    size_t n = (size_t)(g->ni + 2) * g->ny * g->nz;
    double *v = malloc(n * sizeof(double));
    if (!v) {
        fprintf(stderr, "himeno_mpi: out of memory (%zu doubles)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t x = 0; x < n; x++) v[x] = value;
    return v;
}

static void init(grid_t *g) {
    for (int m = 0; m < 4; m++) g->a[m] = alloc_planes(g, m == 3 ? 1.0 / 6.0 : 1.0);
    for (int m = 0; m < 3; m++) g->b[m] = alloc_planes(g, 0.0);
    for (int m = 0; m < 3; m++) g->c[m] = alloc_planes(g, 1.0);
    g->bnd = alloc_planes(g, 1.0);
    g->wrk1 = alloc_planes(g, 0.0);
    g->wrk2 = alloc_planes(g, 0.0);
    g->p = alloc_planes(g, 0.0);
    /* p rises quadratically along i from 0 to 1 across the whole grid. */
    double last = (double)(g->nx - 1) * (g->nx - 1);
    for (int li = 0; li < g->ni + 2; li++) {
        int i = g->i0 + li - 1;
        if (i < 0 || i >= g->nx) continue;
        for (int j = 0; j < g->ny; j++)
            for (int k = 0; k < g->nz; k++) g->p[idx(g, li, j, k)] = (double)i * i / last;
    }
}

/* Exchanges the first and last owned planes with the neighbours' halos. */
static void exchange_halos(grid_t *g, int rank, int ranks) {
    int plane = g->ny * g->nz;
    int up = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
    int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&g->p[idx(g, g->ni, 0, 0)], plane, MPI_DOUBLE, up, 0,
                 &g->p[idx(g, 0, 0, 0)], plane, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&g->p[idx(g, 1, 0, 0)], plane, MPI_DOUBLE, down, 1,
                 &g->p[idx(g, g->ni + 1, 0, 0)], plane, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* One Jacobi sweep over the owned interior points; returns this rank's sum of squared residuals. */
static double jacobi(grid_t *g, double omega) {
    const int ny = g->ny, nz = g->nz;
    double gosa = 0.0;
    for (int li = 1; li <= g->ni; li++) {
        int i = g->i0 + li - 1;
        if (i == 0 || i == g->nx - 1) continue; /* the grid's boundary planes stay fixed */
        for (int j = 1; j < ny - 1; j++) {
            for (int k = 1; k < nz - 1; k++) {
                size_t o = idx(g, li, j, k);
                const double *p = g->p;
#define P(di, dj, dk) p[o + ((ptrdiff_t)(di) * ny + (dj)) * nz + (dk)]
                double s0 = g->a[0][o] * P(1, 0, 0) + g->a[1][o] * P(0, 1, 0) +
                            g->a[2][o] * P(0, 0, 1) +
                            g->b[0][o] * (P(1, 1, 0) - P(1, -1, 0) - P(-1, 1, 0) + P(-1, -1, 0)) +
                            g->b[1][o] * (P(0, 1, 1) - P(0, -1, 1) - P(0, 1, -1) + P(0, -1, -1)) +
                            g->b[2][o] * (P(1, 0, 1) - P(-1, 0, 1) - P(1, 0, -1) + P(-1, 0, -1)) +
                            g->c[0][o] * P(-1, 0, 0) + g->c[1][o] * P(0, -1, 0) +
                            g->c[2][o] * P(0, 0, -1) + g->wrk1[o];
#undef P
                double ss = (s0 * g->a[3][o] - p[o]) * g->bnd[o];
                gosa += ss * ss;
                g->wrk2[o] = p[o] + omega * ss;
            }
        }
    }
    for (int li = 1; li <= g->ni; li++) {
        int i = g->i0 + li - 1;
        if (i == 0 || i == g->nx - 1) continue;
        for (int j = 1; j < ny - 1; j++)
            memcpy(&g->p[idx(g, li, j, 1)], &g->wrk2[idx(g, li, j, 1)],
                   (size_t)(nz - 2) * sizeof(double));
    }
    return gosa;
}

static int parse_positive(const char *text, const char *what) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!end || *end != '\0' || v <= 0 || v > 1 << 20) {
        fprintf(stderr, "himeno_mpi: %s: expected a positive integer, found `%s`\n", what, text);
        return -1;
    }
    return (int)v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    /* comm-only: the same halo exchanges and allreduces without the Jacobi sweep, the
     * communication-only run of the earlier "separate runs" method (docs/methods.md, section 3). */
    int comm_only = argc == 6 && strcmp(argv[5], "comm-only") == 0;
    if (argc != 5 && !comm_only) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np R %s NX NY NZ ITERATIONS [comm-only]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    grid_t g = {0};
    g.nx = parse_positive(argv[1], "NX");
    g.ny = parse_positive(argv[2], "NY");
    g.nz = parse_positive(argv[3], "NZ");
    int iterations = parse_positive(argv[4], "ITERATIONS");
    if (g.nx < 0 || g.ny < 0 || g.nz < 0 || iterations < 0) {
        MPI_Finalize();
        return 2;
    }
    if (g.nx < 3 || g.ny < 3 || g.nz < 3 || g.nx < ranks) {
        if (rank == 0)
            fprintf(stderr, "himeno_mpi: the grid needs at least 3 points a side and NX >= ranks (%d)\n",
                    ranks);
        MPI_Finalize();
        return 2;
    }
    /* Planes split as evenly as possible; the first nx % ranks ranks take one more. */
    int base = g.nx / ranks, extra = g.nx % ranks;
    g.ni = base + (rank < extra);
    g.i0 = rank * base + (rank < extra ? rank : extra);
    init(&g);

    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    double gosa = 0.0;
    for (int n = 0; n < iterations; n++) {
        exchange_halos(&g, rank, ranks);
        double local = comm_only ? 0.0 : jacobi(&g, 0.8);
        MPI_Allreduce(&local, &gosa, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double mine = MPI_Wtime() - start, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double points = (double)(g.nx - 2) * (g.ny - 2) * (g.nz - 2);
        double mflops = slowest > 0 ? FLOPS_PER_POINT * points * iterations / slowest / 1e6 : 0.0;
        printf("grid %d x %d x %d, %d ranks, %d iterations\n", g.nx, g.ny, g.nz, ranks, iterations);
        printf("gosa %.9e\n", gosa);
        printf("loop_secs %.6f\n", slowest);
        printf("MFLOPS %.2f\n", mflops);
    }
    MPI_Finalize();
    return 0;
}
