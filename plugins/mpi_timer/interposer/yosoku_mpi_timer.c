/*
 * yosoku_mpi_timer: an MPI profiling-interface (PMPI) interposer. Preloaded into an unmodified
 * MPI program, it records every MPI call of every rank (the call, where the program called it,
 * start and end on the monotonic clock, bytes, peer) and writes one log per rank at MPI_Finalize
 * (and what it has when the program calls MPI_Abort or exits without finalizing).
 *
 *   mpicc -O2 -shared -fPIC -o libyosoku_mpi_timer.so yosoku_mpi_timer.c -ldl
 *   YOSOKU_MPI_LOG_DIR=logs mpirun -np 4 -x LD_PRELOAD=$PWD/libyosoku_mpi_timer.so -x YOSOKU_MPI_LOG_DIR ./program
 *
 * Log format (`rank-<r>.tsv`, version 1): `#` lines carry metadata, then a tab-separated header
 * and one line per event:
 *
 *   # yosoku-mpi-timer 1
 *   # rank 0
 *   # size 4
 *   # host node1
 *   # pid 1234
 *   # command ./program 65 33 33 100
 *   # binding core                     (optional: $YOSOKU_MPI_BINDING, as the launcher set it)
 *   # parameters n=65;iterations=100   (optional: $YOSOKU_MPI_PARAMETERS, the run's input
 *                                       parameters, for scaling models over several runs)
 *   # cpu 1                            (optional: the CPU the rank was on when it wrote the log)
 *   # init_end_ns 123456789            (after MPI_Init returned; times are CLOCK_MONOTONIC ns)
 *   # site 0 program+0x1a2b            (call sites: module+offset of the return address)
 *   event  name  site  start_ns  end_ns  bytes  peer
 *   call   MPI_Sendrecv  0  ...   ...   8712   1
 *   mark   halo  -  t  t  0  -1        (yosoku_mpi_mark("halo") from yosoku_mpi_marks.h)
 *   iteration  -  -  t  t  0  -1       (yosoku_mpi_iteration())
 *   # finalize_start_ns 123999999
 *   # end complete                     (or `# end abort` / `# end exit`)
 *
 * Compute blocks are not recorded: they are the gaps between calls, derived by the importer.
 * Cost: two clock reads and one 48-byte record per call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum kind { EV_CALL = 0, EV_MARK = 1, EV_ITERATION = 2 };

typedef struct {
    uint64_t start_ns, end_ns;
    const void *site; /* return address of the call; for marks, the mark's name */
    int64_t bytes;
    int32_t peer;
    uint16_t name;    /* index into CALL_NAMES */
    uint16_t kind;
} record_t;

static record_t *records;
static size_t record_count, record_capacity;
static uint64_t init_end_ns, finalize_start_ns;
static int my_rank = -1, world_size = -1, written;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every wrapped call, in the order of yosoku_mpi_calls.c (which has their wrappers). */
#define YOSOKU_MPI_CALLS(X) \
    X(Send) \
    X(Bsend) \
    X(Ssend) \
    X(Rsend) \
    X(Recv) \
    X(Sendrecv) \
    X(Sendrecv_replace) \
    X(Isend) \
    X(Ibsend) \
    X(Issend) \
    X(Irsend) \
    X(Irecv) \
    X(Send_init) \
    X(Bsend_init) \
    X(Ssend_init) \
    X(Rsend_init) \
    X(Recv_init) \
    X(Start) \
    X(Startall) \
    X(Probe) \
    X(Iprobe) \
    X(Mprobe) \
    X(Improbe) \
    X(Mrecv) \
    X(Imrecv) \
    X(Wait) \
    X(Waitall) \
    X(Waitany) \
    X(Waitsome) \
    X(Test) \
    X(Testall) \
    X(Testany) \
    X(Testsome) \
    X(Barrier) \
    X(Bcast) \
    X(Gather) \
    X(Gatherv) \
    X(Scatter) \
    X(Scatterv) \
    X(Allgather) \
    X(Allgatherv) \
    X(Alltoall) \
    X(Alltoallv) \
    X(Alltoallw) \
    X(Reduce) \
    X(Allreduce) \
    X(Reduce_scatter) \
    X(Reduce_scatter_block) \
    X(Scan) \
    X(Exscan) \
    X(Ibarrier) \
    X(Ibcast) \
    X(Igather) \
    X(Igatherv) \
    X(Iscatter) \
    X(Iscatterv) \
    X(Iallgather) \
    X(Iallgatherv) \
    X(Ialltoall) \
    X(Ialltoallv) \
    X(Ialltoallw) \
    X(Ireduce) \
    X(Iallreduce) \
    X(Ireduce_scatter) \
    X(Ireduce_scatter_block) \
    X(Iscan) \
    X(Iexscan) \
    X(Neighbor_allgather) \
    X(Neighbor_allgatherv) \
    X(Neighbor_alltoall) \
    X(Neighbor_alltoallv) \
    X(Neighbor_alltoallw) \
    X(Ineighbor_allgather) \
    X(Ineighbor_allgatherv) \
    X(Ineighbor_alltoall) \
    X(Ineighbor_alltoallv) \
    X(Ineighbor_alltoallw) \
    X(Put) \
    X(Get) \
    X(Accumulate) \
    X(Get_accumulate) \
    X(Fetch_and_op) \
    X(Compare_and_swap) \
    X(Rput) \
    X(Rget) \
    X(Raccumulate) \
    X(Rget_accumulate) \
    X(Win_fence) \
    X(Win_lock) \
    X(Win_unlock) \
    X(Win_lock_all) \
    X(Win_unlock_all) \
    X(Win_flush) \
    X(Win_flush_all) \
    X(Win_flush_local) \
    X(Win_flush_local_all) \
    X(Win_post) \
    X(Win_start) \
    X(Win_complete) \
    X(Win_wait) \
    X(Win_sync) \
    X(File_open) \
    X(File_close) \
    X(File_sync) \
    X(File_set_view) \
    X(File_read) \
    X(File_read_all) \
    X(File_read_at) \
    X(File_read_at_all) \
    X(File_write) \
    X(File_write_all) \
    X(File_write_at) \
    X(File_write_at_all) \
    X(File_iread) \
    X(File_iwrite) \
    X(File_iread_at) \
    X(File_iwrite_at) \
    X(File_read_shared) \
    X(File_write_shared) \
    X(File_read_ordered) \
    X(File_write_ordered)

enum call_name {
#define X(name) CALL_##name,
    YOSOKU_MPI_CALLS(X)
#undef X
    NAME_MARK,
    NAME_ITERATION,
};

static const char *const CALL_NAMES[] = {
#define X(name) "MPI_" #name,
    YOSOKU_MPI_CALLS(X)
#undef X
    "mark",
    "iteration",
};

static void push(uint16_t kind, uint16_t name, const void *site, uint64_t start, uint64_t end,
                 int64_t bytes, int32_t peer) {
    if (record_count == record_capacity) {
        size_t capacity = record_capacity ? 2 * record_capacity : 65536;
        record_t *grown = realloc(records, capacity * sizeof(record_t));
        if (!grown) return; /* out of memory: drop the event rather than the program */
        records = grown;
        record_capacity = capacity;
    }
    records[record_count++] = (record_t){start, end, site, bytes, peer, name, kind};
}

static int64_t type_bytes(int count, MPI_Datatype type) {
    int size = 0;
    /* A null type would raise an MPI error (fatal by default): it moves nothing. */
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
    return (int64_t)count * size;
}

/* `module+0xoffset` of an address (stable across ranks and runs despite ASLR). */
static void site_name(const void *address, char *out, size_t len) {
    Dl_info info;
    if (dladdr(address, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (!*base) base = "main";
        snprintf(out, len, "%s+0x%lx", base,
                 (unsigned long)((uintptr_t)address - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(out, len, "0x%lx", (unsigned long)(uintptr_t)address);
    }
}

/* The command line, read when MPI_Init returns: a program may rewrite its own argv later
 * (meep's argument parser cuts the first letter of each `name=value`), and /proc/self/cmdline
 * shows the memory as it is when read. */
static char command_line[4096];
static size_t command_len;

static void read_command(void) {
    FILE *cmd = fopen("/proc/self/cmdline", "rb");
    if (!cmd) return;
    command_len = fread(command_line, 1, sizeof command_line - 1, cmd);
    fclose(cmd);
    command_line[command_len] = '\0';
}

static void write_command(FILE *f) {
    fputs("# command", f);
    for (size_t i = 0; i < command_len;) {
        fputc(' ', f);
        for (const char *p = command_line + i; *p; p++)
            fputc(*p == '\n' || *p == '\t' ? ' ' : *p, f);
        i += strlen(command_line + i) + 1;
    }
    fputc('\n', f);
}

/* Writes the log through a temporary name, renamed when complete. */
static void write_log(const char *end) {
    if (written || my_rank < 0) return;
    written = 1;
    const char *dir = getenv("YOSOKU_MPI_LOG_DIR");
    if (!dir || !*dir) dir = "yosoku-mpi-logs";
    mkdir(dir, 0777);
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/rank-%d.tsv", dir, my_rank);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "yosoku_mpi_timer: rank %d: cannot write %s: %s\n", my_rank, tmp,
                strerror(errno));
        return;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    fprintf(f, "# yosoku-mpi-timer 1\n# rank %d\n# size %d\n# host %s\n# pid %d\n", my_rank,
            world_size, host, (int)getpid());
    write_command(f);
    const char *binding = getenv("YOSOKU_MPI_BINDING");
    if (binding && *binding && !strpbrk(binding, "\n\r")) fprintf(f, "# binding %s\n", binding);
    const char *parameters = getenv("YOSOKU_MPI_PARAMETERS");
    if (parameters && *parameters && !strpbrk(parameters, "\n\r"))
        fprintf(f, "# parameters %s\n", parameters);
    int cpu = sched_getcpu();
    if (cpu >= 0) fprintf(f, "# cpu %d\n", cpu);
    fprintf(f, "# init_end_ns %llu\n", (unsigned long long)init_end_ns);
    /* Intern the call sites: a small open list is enough (programs have tens of sites). */
    const void **sites = NULL;
    size_t site_count = 0, site_capacity = 0;
    int *site_of = malloc((record_count ? record_count : 1) * sizeof(int));
    for (size_t r = 0; r < record_count; r++) {
        site_of[r] = -1;
        if (records[r].kind != EV_CALL) continue;
        size_t s = 0;
        while (s < site_count && sites[s] != records[r].site) s++;
        if (s == site_count) {
            if (site_count == site_capacity) {
                site_capacity = site_capacity ? 2 * site_capacity : 64;
                sites = realloc(sites, site_capacity * sizeof(void *));
            }
            sites[site_count++] = records[r].site;
            char name[512];
            site_name(records[r].site, name, sizeof name);
            fprintf(f, "# site %zu %s\n", s, name);
        }
        site_of[r] = (int)s;
    }
    fputs("event\tname\tsite\tstart_ns\tend_ns\tbytes\tpeer\n", f);
    for (size_t r = 0; r < record_count; r++) {
        const record_t *e = &records[r];
        if (e->kind == EV_CALL) {
            fprintf(f, "call\t%s\t%d\t%llu\t%llu\t%lld\t%d\n", CALL_NAMES[e->name], site_of[r],
                    (unsigned long long)e->start_ns, (unsigned long long)e->end_ns,
                    (long long)e->bytes, e->peer);
        } else if (e->kind == EV_MARK) {
            fprintf(f, "mark\t%s\t-\t%llu\t%llu\t0\t-1\n", (const char *)e->site,
                    (unsigned long long)e->start_ns, (unsigned long long)e->end_ns);
        } else {
            fprintf(f, "iteration\t-\t-\t%llu\t%llu\t0\t-1\n", (unsigned long long)e->start_ns,
                    (unsigned long long)e->end_ns);
        }
    }
    if (finalize_start_ns) fprintf(f, "# finalize_start_ns %llu\n", (unsigned long long)finalize_start_ns);
    fprintf(f, "# end %s\n", end);
    free(site_of);
    free(sites);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "yosoku_mpi_timer: rank %d: cannot write %s: %s\n", my_rank, path,
                strerror(errno));
        unlink(tmp);
    }
}

static void at_exit(void) { write_log("exit"); }

static void started(void) {
    if (my_rank >= 0) return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    atexit(at_exit);
    init_end_ns = now_ns();
    read_command();
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) started();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) started();
    return rc;
}

int MPI_Finalize(void) {
    finalize_start_ns = now_ns();
    write_log("complete");
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
    finalize_start_ns = now_ns();
    write_log("abort");
    return PMPI_Abort(comm, errorcode);
}

/* The markers of yosoku_mpi_marks.h: `name` must outlive the run (a string literal). */
void yosoku_mpi_mark(const char *name) {
    uint64_t t = now_ns();
    push(EV_MARK, NAME_MARK, name, t, t, 0, -1);
}

void yosoku_mpi_iteration(void) {
    uint64_t t = now_ns();
    push(EV_ITERATION, NAME_ITERATION, NULL, t, t, 0, -1);
}

/* --- what a call moves --- */

static int comm_size(MPI_Comm comm) {
    int size = 0;
    return PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? size : 0;
}

/* Neighbours a neighbourhood collective sends to, from the communicator's topology. */
static int out_degree(MPI_Comm comm) {
    int topology = MPI_UNDEFINED, n = 0;
    if (PMPI_Topo_test(comm, &topology) != MPI_SUCCESS) return 0;
    if (topology == MPI_CART) {
        return PMPI_Cartdim_get(comm, &n) == MPI_SUCCESS ? 2 * n : 0;
    }
    if (topology == MPI_GRAPH) {
        int rank = 0;
        PMPI_Comm_rank(comm, &rank);
        return PMPI_Graph_neighbors_count(comm, rank, &n) == MPI_SUCCESS ? n : 0;
    }
    if (topology == MPI_DIST_GRAPH) {
        int in = 0, weighted = 0;
        return PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted) == MPI_SUCCESS ? n : 0;
    }
    return 0;
}

static int64_t counts_bytes(const int counts[], int n, MPI_Datatype type) {
    int64_t sum = 0;
    for (int i = 0; counts && i < n; i++) sum += counts[i] > 0 ? counts[i] : 0;
    return sum > INT32_MAX ? type_bytes(1, type) * sum : type_bytes((int)sum, type);
}

/* This rank's side of a collective: `buf`'s counts, or the other side's where `buf` is
 * MPI_IN_PLACE (its own count and type are then not to be read). */
static int64_t own_bytes(const void *buf, int count, MPI_Datatype type, int other_count,
                         MPI_Datatype other_type) {
    return buf == MPI_IN_PLACE ? type_bytes(other_count, other_type) : type_bytes(count, type);
}

static int64_t own_counts_bytes(const void *buf, const int counts[], MPI_Datatype type,
                                const int other_counts[], MPI_Datatype other_type, int n) {
    return buf == MPI_IN_PLACE ? counts_bytes(other_counts, n, other_type)
                               : counts_bytes(counts, n, type);
}

static int64_t own_typed_counts_bytes(const void *buf, const int counts[],
                                      const MPI_Datatype types[], const int other_counts[],
                                      const MPI_Datatype other_types[], int n) {
    if (buf == MPI_IN_PLACE) {
        counts = other_counts;
        types = other_types;
    }
    int64_t sum = 0;
    for (int i = 0; counts && types && i < n; i++) sum += type_bytes(counts[i], types[i]);
    return sum;
}

/* Fortran arguments: handles and integers by reference. */
static int64_t f_bytes(const void *count, const void *type) {
    return type_bytes(*(const MPI_Fint *)count, PMPI_Type_f2c(*(const MPI_Fint *)type));
}

static int32_t f_int(const void *value) { return *(const MPI_Fint *)value; }

/* --- timing a call --- */

/* Set while a wrapped call runs: MPI calls made inside it (ROMIO's MPI-IO calls collectives, a
 * Fortran binding may reach a C one) are part of it, not blocks of their own. */
static __thread int inside_call;

#define TIMED(name, bytes, peer, call)                                                   \
    do {                                                                                 \
        if (inside_call) return (call);                                                  \
        const void *site = __builtin_return_address(0);                                  \
        inside_call = 1;                                                                 \
        uint64_t t0 = now_ns();                                                          \
        int rc = (call);                                                                 \
        uint64_t t1 = now_ns();                                                          \
        push(EV_CALL, name, site, t0, t1, (bytes), (peer));                              \
        inside_call = 0;                                                                 \
        return rc;                                                                       \
    } while (0)

/* --- Fortran bindings --- */

/* Open MPI's Fortran bindings (mpif.h, `use mpi`: `mpi_send_`; `use mpi_f08`: through
 * `ompi_send_f`) call PMPI_Send directly, so the C wrappers never see a Fortran program's calls:
 * each is wrapped here too and forwarded to the library's `pmpi_xxx_`, found at its first call. */
static void *fortran_symbol(const char *name) {
    void *symbol = dlsym(RTLD_NEXT, name);
    if (!symbol) {
        fprintf(stderr, "yosoku_mpi_timer: the MPI library has no Fortran symbol %s\n", name);
        abort();
    }
    return symbol;
}

#define FP1 void *a0
#define FP2 FP1, void *a1
#define FP3 FP2, void *a2
#define FP4 FP3, void *a3
#define FP5 FP4, void *a4
#define FP6 FP5, void *a5
#define FP7 FP6, void *a6
#define FP8 FP7, void *a7
#define FP9 FP8, void *a8
#define FP10 FP9, void *a9
#define FP11 FP10, void *a10
#define FP12 FP11, void *a11
#define FP13 FP12, void *a12
#define FP14 FP13, void *a13
#define FA1 a0
#define FA2 FA1, a1
#define FA3 FA2, a2
#define FA4 FA3, a3
#define FA5 FA4, a4
#define FA6 FA5, a5
#define FA7 FA6, a6
#define FA8 FA7, a7
#define FA9 FA8, a8
#define FA10 FA9, a9
#define FA11 FA10, a10
#define FA12 FA11, a11
#define FA13 FA12, a12
#define FA14 FA13, a13

/* `mpi_<name>_` and `ompi_<name>_f`, taking `params` and forwarding `args` to `pmpi_<name>_`. */
#define FORTRAN_WRAPPER(lname, call, bytes, peer, params, args)                            \
    static void (*real_##lname)(params);                                                  \
    static void fortran_##lname(const void *site, params) {                               \
        if (!real_##lname) {                                                               \
            *(void **)&real_##lname = fortran_symbol("pmpi_" #lname "_");                  \
        }                                                                                  \
        if (inside_call) {                                                                 \
            real_##lname(args);                                                            \
            return;                                                                        \
        }                                                                                  \
        inside_call = 1;                                                                   \
        uint64_t t0 = now_ns();                                                            \
        real_##lname(args);                                                                \
        uint64_t t1 = now_ns();                                                            \
        push(EV_CALL, call, site, t0, t1, (bytes), (peer));                                \
        inside_call = 0;                                                                   \
    }                                                                                      \
    void mpi_##lname##_(params) { fortran_##lname(__builtin_return_address(0), args); }   \
    void ompi_##lname##_f(params) { fortran_##lname(__builtin_return_address(0), args); }

#define COMMA ,
/* `n` arguments, the error code last. */
#define FORTRAN(lname, call, n, bytes, peer) \
    FORTRAN_WRAPPER(lname, call, bytes, peer, FP##n, FA##n)
/* ... and the hidden length of one character argument after them. */
#define FORTRAN_STRING(lname, call, n, bytes, peer) \
    FORTRAN_WRAPPER(lname, call, bytes, peer, FP##n COMMA size_t len0, FA##n COMMA len0)

static void (*real_fortran_init)(MPI_Fint *);
static void (*real_fortran_init_thread)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
static void (*real_fortran_finalize)(MPI_Fint *);
static void (*real_fortran_abort)(MPI_Fint *, MPI_Fint *, MPI_Fint *);

static void fortran_init(MPI_Fint *ierr) {
    if (!real_fortran_init) *(void **)&real_fortran_init = fortran_symbol("pmpi_init_");
    real_fortran_init(ierr);
    if (*ierr == MPI_SUCCESS) started();
}

static void fortran_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    if (!real_fortran_init_thread) {
        *(void **)&real_fortran_init_thread = fortran_symbol("pmpi_init_thread_");
    }
    real_fortran_init_thread(required, provided, ierr);
    if (*ierr == MPI_SUCCESS) started();
}

static void fortran_finalize(MPI_Fint *ierr) {
    if (!real_fortran_finalize) *(void **)&real_fortran_finalize = fortran_symbol("pmpi_finalize_");
    finalize_start_ns = now_ns();
    write_log("complete");
    real_fortran_finalize(ierr);
}

static void fortran_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) {
    if (!real_fortran_abort) *(void **)&real_fortran_abort = fortran_symbol("pmpi_abort_");
    finalize_start_ns = now_ns();
    write_log("abort");
    real_fortran_abort(comm, errorcode, ierr);
}

void mpi_init_(MPI_Fint *ierr) { fortran_init(ierr); }
void ompi_init_f(MPI_Fint *ierr) { fortran_init(ierr); }
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    fortran_init_thread(required, provided, ierr);
}
void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    fortran_init_thread(required, provided, ierr);
}
void mpi_finalize_(MPI_Fint *ierr) { fortran_finalize(ierr); }
void ompi_finalize_f(MPI_Fint *ierr) { fortran_finalize(ierr); }
void mpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) {
    fortran_abort(comm, errorcode, ierr);
}
void ompi_abort_f(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) {
    fortran_abort(comm, errorcode, ierr);
}

#include "yosoku_mpi_calls.c"
