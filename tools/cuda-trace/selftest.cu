// Tests of yosoku_trace.cuh on the GPU: the file it writes holds what the kernel passed, and bad
// input is reported, never overrun or half-written (tools/cuda-trace/README.md).
//   selftest DIR
#include <sys/stat.h>

#include "harness.cuh"

using namespace yosoku_trace;

constexpr uint32_t kPoints = 4;

// Passes `passes` points (kPoints declared), a little work between them.
template <Mode M, Scope S, Timer T>
__global__ void points_kernel(float* out, int passes, DeviceLog log, bool keep_alive) {
  extern __shared__ unsigned long long trace_smem[];
  Tracer<M, S, T> trace(log, trace_smem);
  float x = threadIdx.x;
  for (int p = 0; p < passes; ++p) {
    trace.point(10 + p);
    for (int k = 0; k < 100; ++k) x = x * 0.999f + 1.0f;
  }
  if (stores_result<M>(keep_alive)) out[blockIdx.x * blockDim.x + threadIdx.x] = x;
  trace.flush();
}

static int failures = 0;
static void expect(bool ok, const std::string& what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  failures += !ok;
}

static bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

static std::vector<unsigned char> read_all(const std::string& path) {
  std::vector<unsigned char> bytes;
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return bytes;
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  fclose(f);
  return bytes;
}

static uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

template <Mode M, Scope S, Timer T>
void run(const std::string& dir, const char* label) {
  const int blocks = 264, threads = 96;  // 96: the last warp of a block full, three warps
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  const size_t smem = shared_bytes(M, S, threads, kPoints);
  CHECK(allow_shared_bytes(points_kernel<M, S, T>, smem));
  const unsigned long long needed = records_needed(S, blocks, threads, kPoints);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // 1. The file holds every point of every unit, in order, with the right block/thread/SM.
  {
    HostLog log;
    CHECK(log_create(&log, S, T, blocks, threads, kPoints));
    points_kernel<M, S, T><<<blocks, threads, smem>>>(out, kPoints, log.device, false);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const std::string path = dir + "/selftest_" + label + ".yktrace";
    char err[512] = "";
    unsigned long long written = 0;
    const int rc = log_write(&log, path.c_str(), 0, err, sizeof err, &written);
    expect(rc == 0 && written == needed, std::string(label) + ": a good launch writes all " + std::to_string(needed) +
                                             " records (" + std::to_string(written) + ") " + err);
    const auto bytes = read_all(path);
    bool ok = bytes.size() >= 40 && memcmp(bytes.data(), "YKTRACE\0", 8) == 0 && le(&bytes[8], 2) == 1 &&
              bytes[14] == (unsigned char)T && le(&bytes[16], 4) == (uint64_t)prop.multiProcessorCount &&
              le(&bytes[24], 8) == needed && le(&bytes[32], 4) == (uint64_t)threads;
    const size_t header = ok ? le(&bytes[10], 2) : 0;
    ok = ok && bytes.size() == header + needed * 24;
    for (unsigned long long r = 0; ok && r < needed; ++r) {
      const unsigned char* p = &bytes[header + r * 24];
      const uint64_t unit = r / kPoints, k = r % kPoints;
      const uint64_t units = units_per_block(S, threads);
      const uint64_t block = unit / units, thread = (unit % units) * (S == Scope::Warp ? 32 : 1);
      ok = le(p, 4) == block && le(p + 4, 4) == thread && le(p + 8, 4) < (uint64_t)prop.multiProcessorCount &&
           le(p + 12, 4) == 10 + k && (k == 0 || le(p + 16, 8) >= le(p - 24 + 16, 8));
    }
    expect(ok, std::string(label) + ": header and records as docs/kernel-trace.md says, timestamps of a thread in order");
    log_destroy(&log);
  }

  // 2. More points than declared: reported, nothing written.
  {
    HostLog log;
    CHECK(log_create(&log, S, T, blocks, threads, kPoints));
    points_kernel<M, S, T><<<blocks, threads, smem>>>(out, kPoints + 1, log.device, false);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const std::string path = dir + "/selftest_too_many_points.yktrace";
    char err[512] = "";
    const int rc = log_write(&log, path.c_str(), 0, err, sizeof err);
    expect(rc != 0 && strstr(err, "more instrumentation points than the 4 declared") != nullptr && !exists(path),
           std::string(label) + ": too many points -> '" + err + "', no file");
    log_destroy(&log);
  }

  // 3. A buffer too small: reported, and not one byte past it written.
  {
    HostLog log;
    const unsigned long long capacity = needed / 2 + 3;
    const size_t guard_records = 4096;
    CHECK(log_create(&log, S, T, blocks, threads, kPoints, capacity + guard_records));
    log.capacity = capacity;
    log.device.capacity = capacity;
    std::vector<Record> before(guard_records), after(guard_records);
    CHECK(cudaMemcpy(before.data(), log.device.records + capacity, guard_records * sizeof(Record),
                     cudaMemcpyDeviceToHost));
    points_kernel<M, S, T><<<blocks, threads, smem>>>(out, kPoints, log.device, false);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(after.data(), log.device.records + capacity, guard_records * sizeof(Record),
                     cudaMemcpyDeviceToHost));
    const std::string path = dir + "/selftest_too_small.yktrace";
    char err[512] = "";
    const int rc = log_write(&log, path.c_str(), 0, err, sizeof err);
    const bool untouched = memcmp(before.data(), after.data(), guard_records * sizeof(Record)) == 0;
    expect(rc != 0 && strstr(err, "too small") != nullptr && untouched && !exists(path),
           std::string(label) + ": buffer too small -> '" + err + "', guard past it untouched: " +
               (untouched ? "yes" : "NO") + ", no file");
    log_destroy(&log);
  }
  CHECK(cudaFree(out));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  run<Mode::Global, Scope::Thread, Timer::GlobalTimer>(dir, "global_thread_globaltimer");
  run<Mode::Shared, Scope::Thread, Timer::Clock64>(dir, "shared_thread_clock64");
  run<Mode::Shared, Scope::Warp, Timer::GlobalTimer>(dir, "shared_warp_globaltimer");
  run<Mode::Replace, Scope::Thread, Timer::GlobalTimer>(dir, "replace_thread_globaltimer");

  // 4. A file that cannot be written: reported, no file and no temporary left.
  {
    HostLog log;
    CHECK(log_create(&log, Scope::Thread, Timer::GlobalTimer, 1, 32, kPoints));
    const std::string path = dir + "/no-such-dir/t.yktrace";
    char err[512] = "";
    const int rc = log_write(&log, path.c_str(), 0, err, sizeof err);
    expect(rc != 0 && strstr(err, "no-such-dir/t.yktrace") != nullptr && !exists(path + ".tmp"),
           std::string("an unwritable path -> '") + err + "'");
    log_destroy(&log);
  }
  printf("selftest: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
