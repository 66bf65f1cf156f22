// The driver shared by the three traced programs (tools/cuda-trace/README.md): checks every
// variant's result against a CPU reference, times the variants interleaved, writes traces, and
// launches each variant once for Nsight Compute.
//
// A program is a class P with
//   static constexpr const char* kName; static constexpr uint32_t kPoints;
//   unsigned long long blocks() const; uint32_t threads_per_block() const;
//   void fill(uint64_t seed);                      // fresh random inputs on the device
//   void poison();                                 // output bytes all 0xff
//   template <Mode, Scope, Timer> cudaError_t launch(const DeviceLog&, bool keep_alive);
//                                                  // (through launch_traced, below)
//   double check(bool* poisoned);                  // relative error on sampled outputs vs the
//                                                  // CPU reference; *poisoned: all still 0xff
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "yosoku_trace.cuh"

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t err_ = (call);                                                                   \
    if (err_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

namespace harness {

using yosoku_trace::DeviceLog;
using yosoku_trace::HostLog;
using yosoku_trace::Mode;
using yosoku_trace::Scope;
using yosoku_trace::Timer;

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Off: return "original";
    case Mode::Global: return "global";
    case Mode::Shared: return "shared";
    case Mode::Replace: return "replace";
    case Mode::ReplaceUnguarded: return "replace_unguarded";
  }
  return "?";
}
inline const char* scope_name(Scope s) { return s == Scope::Warp ? "warp" : "thread"; }
inline const char* timer_name(Timer t) { return t == Timer::Clock64 ? "clock64" : "globaltimer"; }

template <class P>
struct Variant {
  Mode mode;
  Scope scope;
  Timer timer;
  cudaError_t (P::*launch)(const DeviceLog&, bool);
  std::string label() const {
    if (mode == Mode::Off) return "original";
    return std::string(mode_name(mode)) + "/" + scope_name(scope) + "/" + timer_name(timer);
  }
};

template <class P, Mode M, Scope S, Timer T>
Variant<P> variant() {
  return Variant<P>{M, S, T, &P::template launch<M, S, T>};
}

template <class P, Mode M>
void add_mode(std::vector<Variant<P>>& v) {
  v.push_back(variant<P, M, Scope::Thread, Timer::GlobalTimer>());
  v.push_back(variant<P, M, Scope::Thread, Timer::Clock64>());
  v.push_back(variant<P, M, Scope::Warp, Timer::GlobalTimer>());
  v.push_back(variant<P, M, Scope::Warp, Timer::Clock64>());
}

// The original, then every mode in both scopes with both timers.
template <class P>
std::vector<Variant<P>> all_variants() {
  std::vector<Variant<P>> v;
  v.push_back(variant<P, Mode::Off, Scope::Thread, Timer::GlobalTimer>());
  add_mode<P, Mode::Global>(v);
  add_mode<P, Mode::Shared>(v);
  add_mode<P, Mode::Replace>(v);
  add_mode<P, Mode::ReplaceUnguarded>(v);
  return v;
}

// A fast, seeded fill of [lo, hi) (splitmix64 of the index): fresh inputs for every check.
__global__ void fill_uniform_kernel(float* x, size_t n, unsigned long long seed, float lo, float hi) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = lo + (hi - lo) * (float)((z >> 40) * (1.0 / 16777216.0));
  }
}

inline void fill_uniform(float* x, size_t n, unsigned long long seed, float lo, float hi) {
  fill_uniform_kernel<<<1024, 256>>>(x, n, seed, lo, hi);
  CHECK(cudaGetLastError());
}

// Relative error ||out - ref|| / ||ref|| over the pairs given; NaN never passes.
struct ErrorSum {
  double diff2 = 0, ref2 = 0;
  bool nan = false;
  void add(double out, double ref) {
    if (std::isnan(out)) nan = true;
    diff2 += (out - ref) * (out - ref);
    ref2 += ref * ref;
  }
  double relative() const { return nan ? INFINITY : std::sqrt(diff2 / std::max(ref2, 1e-300)); }
};

inline bool is_poison(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  return bits == 0xffffffffu;
}

// What every program's `launch` does: the dynamic shared memory the log of variant (M, S) needs
// for `points` points (raising the kernel's limit on its first launch where that is above the
// default 48 KB), then the launch itself.
template <Mode M, Scope S, typename... Params, typename... Args>
cudaError_t launch_traced(void (*kernel)(Params...), dim3 grid, dim3 block, uint32_t points, Args... args) {
  const size_t smem = yosoku_trace::shared_bytes(M, S, block.x * block.y * block.z, points);
  static std::vector<const void*> prepared;  // kernels of this signature whose limit is set
  const void* key = reinterpret_cast<const void*>(kernel);
  if (std::find(prepared.begin(), prepared.end(), key) == prepared.end()) {
    const cudaError_t e = yosoku_trace::allow_shared_bytes(kernel, smem);
    if (e != cudaSuccess) return e;
    prepared.push_back(key);
  }
  kernel<<<grid, block, smem>>>(args...);
  return cudaGetLastError();
}

template <class P>
HostLog& log_for(HostLog* logs, const Variant<P>& v) {
  return logs[v.scope == Scope::Warp ? 1 : 0];
}

template <class P>
void launch_checked(P& p, const Variant<P>& v, HostLog* logs, bool keep_alive) {
  CHECK((p.*v.launch)(log_for(logs, v).device, keep_alive));
}

// Every variant computes the original's result (the replaced ones with keep_alive set), and a
// replaced kernel run with keep_alive unset leaves the output untouched. Returns failures.
template <class P>
int check_all(P& p, const std::vector<Variant<P>>& variants, HostLog* logs, FILE* csv) {
  int failures = 0;
  unsigned long long seed = 12345;
  for (const auto& v : variants) {
    if (v.mode == Mode::ReplaceUnguarded) continue;  // stores nothing by design
    p.fill(++seed);
    p.poison();
    launch_checked(p, v, logs, true);
    CHECK(cudaDeviceSynchronize());
    bool poisoned = false;
    const double err = p.check(&poisoned);
    const bool ok = err < 1e-4;
    failures += !ok;
    fprintf(csv, "%s,%s,keep_alive,%.3e,%s\n", P::kName, v.label().c_str(), err, ok ? "ok" : "FAILED");
    printf("check %-10s %-32s rel. error %.3e %s\n", P::kName, v.label().c_str(), err, ok ? "ok" : "FAILED");
    if (v.mode == Mode::Replace) {
      p.poison();
      launch_checked(p, v, logs, false);
      CHECK(cudaDeviceSynchronize());
      p.check(&poisoned);
      failures += !poisoned;
      fprintf(csv, "%s,%s,replaced,,%s\n", P::kName, v.label().c_str(), poisoned ? "ok" : "FAILED");
      printf("check %-10s %-32s result store replaced: %s\n", P::kName, v.label().c_str(),
             poisoned ? "ok (output untouched)" : "FAILED (output written)");
    }
  }
  return failures;
}

// Times every variant `reps` times with events, interleaved (round robin, the order rotated
// each repetition) so that clock drift falls on all variants alike.
template <class P>
void time_all(P& p, const std::vector<Variant<P>>& variants, HostLog* logs, int reps, FILE* csv) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  p.fill(777);
  for (int w = 0; w < 3; ++w)
    for (const auto& v : variants) launch_checked(p, v, logs, false);
  CHECK(cudaDeviceSynchronize());
  const size_t n = variants.size();
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t k = 0; k < n; ++k) {
      const auto& v = variants[(k + rep) % n];
      CHECK(cudaEventRecord(start));
      launch_checked(p, v, logs, false);
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      fprintf(csv, "%s,%s,%s,%s,%s,%d,%.6f\n", P::kName, v.label().c_str(), mode_name(v.mode), scope_name(v.scope),
              timer_name(v.timer), rep, ms * 1e3);
    }
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
}

// Writes the trace of one launch of each variant named, and checks it holds every point of
// every unit.
template <class P>
int trace(P& p, const std::vector<Variant<P>>& variants, HostLog* logs, const std::string& dir,
          const std::vector<std::string>& wanted) {
  int failures = 0;
  p.fill(4242);
  for (const auto& v : variants) {
    if (std::find(wanted.begin(), wanted.end(), v.label()) == wanted.end()) continue;
    HostLog& log = log_for(logs, v);
    CHECK(yosoku_trace::log_reset(&log));
    log.timer = v.timer;
    launch_checked(p, v, logs, false);
    CHECK(cudaDeviceSynchronize());
    std::string label = v.label();
    std::replace(label.begin(), label.end(), '/', '_');
    const std::string path = dir + "/" + P::kName + "_" + label + ".yktrace";
    char err[512];
    unsigned long long written = 0;
    if (yosoku_trace::log_write(&log, path.c_str(), 0, err, sizeof err, &written) != 0) {
      fprintf(stderr, "%s: %s\n", path.c_str(), err);
      ++failures;
      continue;
    }
    const unsigned long long expected =
        yosoku_trace::records_needed(v.scope, p.blocks(), p.threads_per_block(), P::kPoints);
    const bool ok = written == expected;
    failures += !ok;
    printf("trace %s: %llu records (expected %llu) %s\n", path.c_str(), written, expected, ok ? "ok" : "FAILED");
  }
  return failures;
}

// usage: PROGRAM check|time|trace|profile [args]
//   all DIR REPS   checks, times (REPS repetitions) and traces into DIR
//   profile        one launch of each variant (for ncu) and the variants' order on stdout
template <class P>
int main_for(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s all DIR REPS | profile\n", argv[0]);
    return 2;
  }
  const std::string cmd = argv[1];
  P p;
  auto variants = all_variants<P>();
  HostLog logs[2];
  CHECK(yosoku_trace::log_create(&logs[0], Scope::Thread, Timer::GlobalTimer, p.blocks(), p.threads_per_block(),
                                 P::kPoints));
  CHECK(yosoku_trace::log_create(&logs[1], Scope::Warp, Timer::GlobalTimer, p.blocks(), p.threads_per_block(),
                                 P::kPoints));
  int failures = 0;
  if (cmd == "profile") {
    p.fill(99);
    for (const auto& v : variants) {
      if (v.mode != Mode::Off && v.timer != Timer::GlobalTimer) continue;
      launch_checked(p, v, logs, false);
      CHECK(cudaDeviceSynchronize());
      printf("%s\n", v.label().c_str());
    }
  } else if (cmd == "all" && argc == 4) {
    const std::string dir = argv[2];
    const int reps = atoi(argv[3]);
    FILE* checks = fopen((dir + "/" + P::kName + "_checks.csv").c_str(), "w");
    FILE* times = fopen((dir + "/" + P::kName + "_times.csv").c_str(), "w");
    if (checks == nullptr || times == nullptr) {
      fprintf(stderr, "cannot write into %s\n", dir.c_str());
      return 1;
    }
    fprintf(checks, "program,variant,run,relative_error,outcome\n");
    fprintf(times, "program,variant,mode,scope,timer,rep,kernel_us\n");
    failures += check_all(p, variants, logs, checks);
    time_all(p, variants, logs, reps, times);
    failures += trace(p, variants, logs, dir,
                      {"shared/thread/globaltimer", "shared/thread/clock64", "shared/warp/globaltimer",
                       "shared/warp/clock64", "global/warp/globaltimer"});
    fclose(checks);
    fclose(times);
  } else {
    fprintf(stderr, "usage: %s all DIR REPS | profile\n", argv[0]);
    return 2;
  }
  yosoku_trace::log_destroy(&logs[0]);
  yosoku_trace::log_destroy(&logs[1]);
  printf("%s: %d failure(s)\n", P::kName, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace harness
