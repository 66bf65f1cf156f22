/*
 * Optional markers for yosoku's MPI timer (yosoku_mpi_timer.c). Include this header and call
 *
 *   yosoku_mark("halo");      names the compute block that ends at the next MPI call
 *   yosoku_iteration();        marks the start of a main-loop iteration
 *
 * The calls look the interposer up at run time: without it preloaded they do nothing, so the
 * program builds and runs the same with or without yosoku. `name` must outlive the run (use a
 * string literal). From Rust: declare `fn yosoku_mpi_mark(name: *const c_char)` and
 * `fn yosoku_mpi_iteration()` as weak-free lookups through `libc::dlsym(RTLD_DEFAULT, ...)`.
 * Link with -ldl on older glibc.
 */
#ifndef YOSOKU_MPI_MARKS_H
#define YOSOKU_MPI_MARKS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>

static inline void yosoku_mark(const char *name) {
    static void (*mark)(const char *) = NULL;
    static int looked_up = 0;
    if (!looked_up) {
        *(void **)(&mark) = dlsym(RTLD_DEFAULT, "yosoku_mpi_mark");
        looked_up = 1;
    }
    if (mark) mark(name);
}

static inline void yosoku_iteration(void) {
    static void (*iteration)(void) = NULL;
    static int looked_up = 0;
    if (!looked_up) {
        *(void **)(&iteration) = dlsym(RTLD_DEFAULT, "yosoku_mpi_iteration");
        looked_up = 1;
    }
    if (iteration) iteration();
}

#endif
