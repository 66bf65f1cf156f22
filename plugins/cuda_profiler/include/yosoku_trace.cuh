// yosoku_trace.cuh: in-kernel timestamp tracing for CUDA (docs/methods.md, section 2;
// docs/cuda-trace.md is the user's guide). Header-only; include it in a .cu file.
//
// A kernel passes instrumentation points; every pass records (timestamp, SM, block, thread,
// point). The host copies the records out and writes the kernel-trace file of
// docs/kernel-trace.md, which `yosoku` reads with the `traces` plugin (collector `kernel_trace`).
//
//   template <yosoku_trace::Mode M, yosoku_trace::Scope S, yosoku_trace::Timer T>
//   __global__ void kernel(..., yosoku_trace::DeviceLog log, bool keep_alive) {
//     extern __shared__ unsigned long long trace_smem[];
//     yosoku_trace::Tracer<M, S, T> trace(log, trace_smem);
//     trace.point(0);
//     ... work ...
//     trace.point(1);
//     if (yosoku_trace::stores_result<M>(keep_alive)) out[i] = result;
//     trace.flush();  // block-wide: every thread of the block calls it, once, at the end
//   }
//
// Modes:
//   Off        the original kernel: every call compiles to nothing.
//   Global     the earlier method: every point writes its 24-byte record straight to global memory.
//   Shared     two stages: points go to shared memory; flush() writes the block's records to
//              global memory once, coalesced, at the end of the kernel.
//   Replace    Shared, and the kernel's own final store of its result is left out
//              (stores_result is false) so the log write takes its place in the memory traffic;
//              the result is kept alive by `keep_alive`, an always-false kernel argument the
//              compiler cannot see through (the dummy branch). A run with keep_alive = true
//              stores the result too: that is how a replaced kernel's result is checked.
//   ReplaceUnguarded  Replace without the dummy branch. Only for showing what the dummy branch
//              is for: the compiler deletes the computation whose result is never stored.
// Scopes:
//   Thread     every thread records its points.
//   Warp       lane 0 of each warp records, for the warp (a 32nd of the records; the warp's
//              threads pass a point together unless the code diverges there).
// Timers:
//   Clock64    %clock64, cycles of the SM's own counter (SMs' counters are not synchronised).
//   GlobalTimer %globaltimer, ns of one clock all SMs share.
//
// The SM id is read (%smid) when the block's records are written: a block runs on one SM from
// its start to its end. In the two-stage modes a thread's timestamps are kept in shared memory
// as their low 32 bits beside its first timestamp, so one thread's points and the end of the
// kernel must lie within 2^32 ticks of its first point (4.3 s of globaltimer, about 2 s of
// clock64 at 2 GHz); a longer span is reported by the host, never written wrong.
//
// Errors the device cannot return are kept in a status word the host reads (log_write): a
// buffer too small for the records (the records that do not fit are dropped, nothing past the
// buffer is written), a thread passing more points than declared (the extra points are
// dropped), a span too long for the two-stage offsets.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if !defined(__CUDACC__) && !defined(__CUDA__)
#error "yosoku_trace.cuh is CUDA: compile it with nvcc (or clang -x cuda)"
#endif

#ifndef YOSOKU_TRACE_NO_HOST_API
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

namespace yosoku_trace {

enum class Mode { Off, Global, Shared, Replace, ReplaceUnguarded };
enum class Scope { Thread, Warp };
// The codes are the file format's `timer` field.
enum class Timer : uint8_t { Clock64 = 0, GlobalTimer = 1 };

// A record of the file format (layout 0), as the device writes it and the file holds it.
struct Record {
  uint32_t block;
  uint32_t thread;
  uint32_t sm;
  uint32_t point;
  uint64_t timestamp;
};
static_assert(sizeof(Record) == 24, "a record is 24 bytes (docs/kernel-trace.md)");

// A slot no point was recorded in: the host skips it.
constexpr uint32_t kUnusedPoint = 0xffffffffu;

// Bits of the status word.
constexpr uint32_t kStatusBufferTooSmall = 1u;
constexpr uint32_t kStatusTooManyPoints = 2u;
constexpr uint32_t kStatusSpanTooLong = 4u;

// What a kernel is given: where its records go (pass it by value).
struct DeviceLog {
  Record* records;
  unsigned long long capacity;  // records the buffer holds
  uint32_t* status;             // the status word (bits above)
  uint32_t points;              // points declared per thread (per warp with Scope::Warp)
};

constexpr uint32_t kWarpSize = 32;

__host__ __device__ constexpr uint32_t units_per_block(Scope scope, uint32_t threads_per_block) {
  return scope == Scope::Warp ? (threads_per_block + kWarpSize - 1) / kWarpSize : threads_per_block;
}

__host__ __device__ constexpr bool two_stage(Mode mode) {
  return mode == Mode::Shared || mode == Mode::Replace || mode == Mode::ReplaceUnguarded;
}

// Dynamic shared memory a block needs: per unit a 64-bit first timestamp and a count, per point
// the low 32 bits of its timestamp and a 16-bit point id (structure of arrays: a warp's stores hit distinct banks).
__host__ __device__ constexpr size_t shared_bytes(Mode mode, Scope scope, uint32_t threads_per_block,
                                                  uint32_t points) {
  return two_stage(mode) ? ((size_t)units_per_block(scope, threads_per_block) * (8 + 4 + 6 * (size_t)points) + 7) /
                               8 * 8
                         : 0;
}

// The records a launch of `blocks` blocks writes when every unit passes all its points.
__host__ __device__ constexpr unsigned long long records_needed(Scope scope, unsigned long long blocks,
                                                                uint32_t threads_per_block, uint32_t points) {
  return blocks * units_per_block(scope, threads_per_block) * points;
}

// The dummy branch of the replacement mode: whether the kernel stores its own result.
template <Mode M>
__device__ __forceinline__ bool stores_result(bool keep_alive) {
  if constexpr (M == Mode::Replace) {
    return keep_alive;
  } else if constexpr (M == Mode::ReplaceUnguarded) {
    return false;
  } else {
    return true;
  }
}

template <Timer T>
__device__ __forceinline__ uint64_t now() {
  uint64_t t;
  if constexpr (T == Timer::Clock64) {
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
  } else {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  }
  return t;
}

__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ uint32_t linear_block() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

__device__ __forceinline__ uint32_t linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ void raise_status(const DeviceLog& log, uint32_t bit) {
  // Read first: once a bit is set, later threads do not all queue on one atomic.
  if ((*(volatile uint32_t*)log.status & bit) == 0) atomicOr(log.status, bit);
}

template <Mode M, Scope S, Timer T>
class Tracer {
 public:
  // `smem`: the block's dynamic shared memory for the log, shared_bytes(M, S, threads, points)
  // bytes, 8-byte aligned (the `extern __shared__ unsigned long long x[]` of the kernel, offset
  // past whatever the kernel keeps there itself). Unused in the modes that keep none.
  //
  // The state a thread carries through the kernel is kept small (a count, its unit, a pointer):
  // registers the tracer takes can lower the kernel's occupancy. A point's timestamp goes to
  // shared memory as its low 32 bits; the unit's first timestamp is kept whole beside them.
  __device__ __forceinline__ Tracer(const DeviceLog& log, void* smem) : log_(log) {
    if constexpr (M != Mode::Off) {
      const uint32_t tid = linear_thread();
      const uint32_t threads = blockDim.x * blockDim.y * blockDim.z;
      units_ = units_per_block(S, threads);
      unit_ = S == Scope::Warp ? tid / kWarpSize : tid;
      recording_ = S == Scope::Thread || tid % kWarpSize == 0;
      smem_ = (unsigned char*)smem;
    }
  }

  __device__ __forceinline__ void point(uint32_t id) {
    if constexpr (M == Mode::Off) {
      (void)id;
    } else {
      if (!recording_) return;
      const uint64_t t = now<T>();
      if (count_ >= log_.points) {
        raise_status(log_, kStatusTooManyPoints);
        return;
      }
      if constexpr (M == Mode::Global) {
        const unsigned long long slot = ((unsigned long long)linear_block() * units_ + unit_) * log_.points + count_;
        if (slot < log_.capacity) {
          uint64_t* r = (uint64_t*)(log_.records + slot);
          r[0] = (uint64_t)linear_thread() << 32 | linear_block();
          r[1] = (uint64_t)id << 32 | sm_id();
          r[2] = t;
        } else {
          raise_status(log_, kStatusBufferTooSmall);
        }
      } else {
        if (count_ == 0) first_ts()[unit_] = t;
        const size_t k = (size_t)count_ * units_ + unit_;
        low_ts()[k] = (uint32_t)t;
        ids()[k] = (uint16_t)id;
      }
      ++count_;
    }
  }

  // Two-stage modes: writes the block's records to global memory, each unit's together and in
  // order, consecutive threads writing consecutive records. A block-wide barrier: every thread
  // of the block must call it, once, after its last point. A no-op in the other modes.
  __device__ __forceinline__ void flush() {
    if constexpr (two_stage(M)) {
      if (recording_) {
        counts()[unit_] = count_ < log_.points ? count_ : log_.points;
        // The low 32 bits give a point's time only within 2^32 ticks of the unit's first.
        if (count_ > 0 && now<T>() - first_ts()[unit_] > 0xffffffffull) raise_status(log_, kStatusSpanTooLong);
      }
      __syncthreads();
      const uint32_t tid = linear_thread();
      const uint32_t threads = blockDim.x * blockDim.y * blockDim.z;
      const uint32_t block = linear_block();
      const uint32_t sm = sm_id();
      const uint32_t points = log_.points;
      const uint32_t total = units_ * points;
      const unsigned long long base = (unsigned long long)block * total;
      for (uint32_t j = tid; j < total; j += threads) {
        const uint32_t unit = j / points;
        const uint32_t k = j - unit * points;
        if (k >= counts()[unit]) continue;
        if (base + j >= log_.capacity) {
          raise_status(log_, kStatusBufferTooSmall);
          continue;
        }
        const uint32_t thread = S == Scope::Warp ? unit * kWarpSize : unit;
        const uint64_t first = first_ts()[unit];
        const size_t slot = (size_t)k * units_ + unit;
        uint64_t* r = (uint64_t*)(log_.records + base + j);
        r[0] = (uint64_t)thread << 32 | block;
        r[1] = (uint64_t)ids()[slot] << 32 | sm;
        r[2] = first + (uint32_t)(low_ts()[slot] - (uint32_t)first);
      }
    }
  }

 private:
  // The shared-memory log: per unit the first timestamp and the count, per point the low 32
  // bits of its timestamp and its id (point-major: a warp's units are consecutive).
  __device__ __forceinline__ uint64_t* first_ts() const { return (uint64_t*)smem_; }
  __device__ __forceinline__ uint32_t* counts() const { return (uint32_t*)(smem_ + 8 * (size_t)units_); }
  __device__ __forceinline__ uint32_t* low_ts() const { return (uint32_t*)(smem_ + 12 * (size_t)units_); }
  __device__ __forceinline__ uint16_t* ids() const {
    return (uint16_t*)(smem_ + (12 + 4 * (size_t)log_.points) * units_);
  }

  DeviceLog log_;
  unsigned char* smem_ = nullptr;
  uint32_t units_ = 0;
  uint32_t unit_ = 0;
  uint32_t count_ = 0;
  bool recording_ = false;
};

#ifndef YOSOKU_TRACE_NO_HOST_API

// The host's side of one log: the device buffer and what the file needs to say about it.
struct HostLog {
  DeviceLog device;                 // pass to the kernel
  Record* host_records = nullptr;   // filled by log_write
  unsigned long long capacity = 0;  // records
  Scope scope = Scope::Thread;
  Timer timer = Timer::GlobalTimer;
  uint32_t threads_per_block = 0;
};

inline void set_error(char* err, size_t err_len, const char* fmt, unsigned long long a = 0,
                      unsigned long long b = 0) {
  if (err != nullptr && err_len > 0) snprintf(err, err_len, fmt, a, b);
}

// Allocates a buffer of `capacity` records (0: records_needed for `blocks` blocks) and clears it.
inline cudaError_t log_create(HostLog* log, Scope scope, Timer timer, unsigned long long blocks,
                              uint32_t threads_per_block, uint32_t points, unsigned long long capacity = 0) {
  *log = HostLog{};
  log->scope = scope;
  log->timer = timer;
  log->threads_per_block = threads_per_block;
  log->capacity = capacity != 0 ? capacity : records_needed(scope, blocks, threads_per_block, points);
  log->device.capacity = log->capacity;
  log->device.points = points;
  cudaError_t e = cudaMalloc((void**)&log->device.records, log->capacity * sizeof(Record));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void**)&log->device.status, sizeof(uint32_t));
  if (e != cudaSuccess) return e;
  log->host_records = (Record*)malloc(log->capacity * sizeof(Record));
  if (log->host_records == nullptr) return cudaErrorMemoryAllocation;
  e = cudaMemset(log->device.records, 0xff, log->capacity * sizeof(Record));
  if (e != cudaSuccess) return e;
  return cudaMemset(log->device.status, 0, sizeof(uint32_t));
}

// Clears the records and the status before the launch whose trace is wanted.
inline cudaError_t log_reset(HostLog* log) {
  cudaError_t e = cudaMemset(log->device.records, 0xff, log->capacity * sizeof(Record));
  if (e != cudaSuccess) return e;
  return cudaMemset(log->device.status, 0, sizeof(uint32_t));
}

inline void log_destroy(HostLog* log) {
  cudaFree(log->device.records);
  cudaFree(log->device.status);
  free(log->host_records);
  *log = HostLog{};
}

// Raises a kernel's dynamic shared-memory limit when the log needs more than the default 48 KB.
template <typename Kernel>
inline cudaError_t allow_shared_bytes(Kernel kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

inline void put_le(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

// After the launch (synchronised): reads the status word, copies the records out and writes
// the kernel-trace file at `path` (through `path.tmp`, renamed when complete, so an interrupted
// run leaves no partial file). Returns 0, or -1 with the reason in `err` (a status bit raised
// by the device, a CUDA error, an I/O error); then no file is written. `records_written` gets
// the records in the file (slots no point was recorded in are left out).
inline int log_write(HostLog* log, const char* path, int device, char* err, size_t err_len,
                     unsigned long long* records_written = nullptr) {
  uint32_t status = 0;
  cudaError_t e = cudaMemcpy(&status, log->device.status, sizeof status, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    set_error(err, err_len, "yosoku_trace: reading the status word failed (CUDA error %llu)", (unsigned long long)e);
    return -1;
  }
  if (status & kStatusBufferTooSmall) {
    set_error(err, err_len,
              "yosoku_trace: the buffer of %llu records is too small for the launch's records (%llu points a "
              "unit declared); records past it were dropped, not written",
              log->capacity, log->device.points);
    return -1;
  }
  if (status & kStatusTooManyPoints) {
    set_error(err, err_len,
              "yosoku_trace: a thread passed more instrumentation points than the %llu declared; the extra "
              "points were dropped",
              log->device.points);
    return -1;
  }
  if (status & kStatusSpanTooLong) {
    set_error(err, err_len,
              "yosoku_trace: a thread's first point and the end of the kernel lie more than 2^32 timer ticks "
              "apart, more than the two-stage log's 32-bit timestamps tell apart; use Mode::Global for such kernels");
    return -1;
  }
  e = cudaMemcpy(log->host_records, log->device.records, log->capacity * sizeof(Record), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    set_error(err, err_len, "yosoku_trace: copying the records out failed (CUDA error %llu)", (unsigned long long)e);
    return -1;
  }
  unsigned long long kept = 0;
  for (unsigned long long i = 0; i < log->capacity; ++i) {
    if (log->host_records[i].point != kUnusedPoint) log->host_records[kept++] = log->host_records[i];
  }
  cudaDeviceProp prop;
  int clock_khz = 0;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess) {
    set_error(err, err_len, "yosoku_trace: cannot read the properties of device %llu", (unsigned long long)device);
    return -1;
  }
  const size_t name_len = strnlen(prop.name, sizeof prop.name);
  const size_t header_bytes = (40 + name_len + 7) / 8 * 8;
  unsigned char header[40 + sizeof prop.name + 8];
  memset(header, 0, sizeof header);
  memcpy(header, "YKTRACE", 8);  // with its terminating zero: the 8 magic bytes
  put_le(header + 8, 1, 2);      // version
  put_le(header + 10, header_bytes, 2);
  put_le(header + 12, sizeof(Record), 2);
  header[14] = (unsigned char)log->timer;
  header[15] = 0;  // layout
  put_le(header + 16, (uint64_t)prop.multiProcessorCount, 4);
  put_le(header + 20, (uint64_t)clock_khz, 4);
  put_le(header + 24, kept, 8);
  put_le(header + 32, log->threads_per_block, 4);
  put_le(header + 36, name_len, 2);
  put_le(header + 38, 0, 2);  // flags: a measurement
  memcpy(header + 40, prop.name, name_len);

  const size_t path_len = strlen(path);
  char* tmp = (char*)malloc(path_len + 5);
  if (tmp == nullptr) {
    set_error(err, err_len, "yosoku_trace: out of memory");
    return -1;
  }
  memcpy(tmp, path, path_len);
  memcpy(tmp + path_len, ".tmp", 5);
  FILE* f = fopen(tmp, "wb");
  bool ok = f != nullptr && fwrite(header, 1, header_bytes, f) == header_bytes &&
            fwrite(log->host_records, sizeof(Record), kept, f) == kept;
  ok = f != nullptr && fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    free(tmp);
    if (err != nullptr && err_len > 0) snprintf(err, err_len, "yosoku_trace: writing %s failed", path);
    return -1;
  }
  free(tmp);
  if (records_written != nullptr) *records_written = kept;
  return 0;
}

#endif  // YOSOKU_TRACE_NO_HOST_API

}  // namespace yosoku_trace
