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

static const char *CALL_NAMES[] = {
#define NAME_SEND 0
    "MPI_Send",
#define NAME_RECV 1
    "MPI_Recv",
#define NAME_ISEND 2
    "MPI_Isend",
#define NAME_IRECV 3
    "MPI_Irecv",
#define NAME_WAIT 4
    "MPI_Wait",
#define NAME_WAITALL 5
    "MPI_Waitall",
#define NAME_SENDRECV 6
    "MPI_Sendrecv",
#define NAME_BCAST 7
    "MPI_Bcast",
#define NAME_REDUCE 8
    "MPI_Reduce",
#define NAME_ALLREDUCE 9
    "MPI_Allreduce",
#define NAME_BARRIER 10
    "MPI_Barrier",
#define NAME_GATHER 11
    "MPI_Gather",
#define NAME_SCATTER 12
    "MPI_Scatter",
#define NAME_ALLGATHER 13
    "MPI_Allgather",
#define NAME_ALLTOALL 14
    "MPI_Alltoall",
#define NAME_WAITANY 15
    "MPI_Waitany",
#define NAME_SSEND 16
    "MPI_Ssend",
#define NAME_MARK 17
    "mark",
#define NAME_ITERATION 18
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
    if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
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

static void write_command(FILE *f) {
    FILE *cmd = fopen("/proc/self/cmdline", "rb");
    fputs("# command", f);
    if (cmd) {
        char buf[4096];
        size_t n = fread(buf, 1, sizeof buf - 1, cmd);
        fclose(cmd);
        buf[n] = '\0';
        for (size_t i = 0; i < n;) {
            fputc(' ', f);
            for (const char *p = buf + i; *p; p++) fputc(*p == '\n' || *p == '\t' ? ' ' : *p, f);
            i += strlen(buf + i) + 1;
        }
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
    PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    atexit(at_exit);
    init_end_ns = now_ns();
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

#define TIMED(name, bytes, peer, call)                                                   \
    do {                                                                                 \
        const void *site = __builtin_return_address(0);                                  \
        uint64_t t0 = now_ns();                                                          \
        int rc = (call);                                                                 \
        uint64_t t1 = now_ns();                                                          \
        push(EV_CALL, name, site, t0, t1, bytes, peer);                                  \
        return rc;                                                                       \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    TIMED(NAME_SEND, type_bytes(count, type), dest, PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    TIMED(NAME_SSEND, type_bytes(count, type), dest, PMPI_Ssend(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    TIMED(NAME_RECV, type_bytes(count, type), source,
          PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    TIMED(NAME_ISEND, type_bytes(count, type), dest,
          PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    TIMED(NAME_IRECV, type_bytes(count, type), source,
          PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    TIMED(NAME_WAIT, 0, -1, PMPI_Wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    TIMED(NAME_WAITALL, 0, -1, PMPI_Waitall(count, requests, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    TIMED(NAME_WAITANY, 0, -1, PMPI_Waitany(count, requests, index, status));
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
    TIMED(NAME_SENDRECV, type_bytes(sendcount, sendtype) + type_bytes(recvcount, recvtype),
          dest >= 0 ? dest : source,
          PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, status));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    TIMED(NAME_BCAST, type_bytes(count, type), root, PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
    TIMED(NAME_REDUCE, type_bytes(count, type), root,
          PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    TIMED(NAME_ALLREDUCE, type_bytes(count, type), -1,
          PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
}

int MPI_Barrier(MPI_Comm comm) { TIMED(NAME_BARRIER, 0, -1, PMPI_Barrier(comm)); }

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    TIMED(NAME_GATHER, type_bytes(sendcount, sendtype), root,
          PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    TIMED(NAME_SCATTER, type_bytes(recvcount, recvtype), root,
          PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(NAME_ALLGATHER, type_bytes(sendcount, sendtype), -1,
          PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(NAME_ALLTOALL, type_bytes(sendcount, sendtype), -1,
          PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
