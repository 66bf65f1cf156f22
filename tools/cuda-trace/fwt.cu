// Fast Walsh Transform of many 4,096-element segments (the natural-order Walsh-Hadamard
// transform of each), one block a segment, in shared memory: 12 radix-2 stages, 16 elements a
// thread; 8 instrumentation points a thread (docs/methods.md, section 2: the paper's FWT logs 8):
// on entry, after the load, after stages 2, 4, 6, 8 and 10, after stage 12.
#include "harness.cuh"

using namespace yosoku_trace;

constexpr int kLog2Segment = 12;
constexpr int kSegment = 1 << kLog2Segment;
constexpr int kThreads = 256;

template <Mode M, Scope S, Timer T>
__global__ void fwt_kernel(const float4* __restrict__ in, float4* __restrict__ out, DeviceLog log, bool keep_alive) {
  extern __shared__ unsigned long long trace_smem[];
  __shared__ float x[kSegment];
  Tracer<M, S, T> trace(log, trace_smem);
  trace.point(0);
  const size_t base = (size_t)blockIdx.x * (kSegment / 4);
  float4* x4 = reinterpret_cast<float4*>(x);
#pragma unroll
  for (int m = 0; m < kSegment / 4 / kThreads; ++m) x4[threadIdx.x + m * kThreads] = in[base + threadIdx.x + m * kThreads];
  __syncthreads();
  trace.point(1);
#pragma unroll
  for (int s = 0; s < kLog2Segment; ++s) {
    const int h = 1 << s;
#pragma unroll
    for (int m = 0; m < kSegment / 2 / kThreads; ++m) {
      const int b = threadIdx.x + m * kThreads;
      const int i = ((b >> s) << (s + 1)) | (b & (h - 1));
      const float u = x[i], v = x[i + h];
      x[i] = u + v;
      x[i + h] = u - v;
    }
    __syncthreads();
    if (s % 2 == 1) trace.point(2 + s / 2);
  }
  if (stores_result<M>(keep_alive)) {
#pragma unroll
    for (int m = 0; m < kSegment / 4 / kThreads; ++m) out[base + threadIdx.x + m * kThreads] = x4[threadIdx.x + m * kThreads];
  }
  trace.flush();
}

struct Fwt {
  static constexpr const char* kName = "fwt";
  static constexpr uint32_t kPoints = 8;
  static constexpr size_t kSegments = 16384;
  static constexpr size_t kElements = kSegments * kSegment;
  float *in = nullptr, *out = nullptr;
  std::vector<float> hin, hout;

  Fwt() {
    CHECK(cudaMalloc(&in, sizeof(float) * kElements));
    CHECK(cudaMalloc(&out, sizeof(float) * kElements));
  }
  ~Fwt() {
    cudaFree(in);
    cudaFree(out);
  }
  unsigned long long blocks() const { return kSegments; }
  uint32_t threads_per_block() const { return kThreads; }
  void fill(uint64_t seed) { harness::fill_uniform(in, kElements, seed, -1.0f, 1.0f); }
  void poison() { CHECK(cudaMemset(out, 0xff, sizeof(float) * kElements)); }

  template <Mode M, Scope S, Timer T>
  cudaError_t launch(const DeviceLog& log, bool keep_alive) {
    return harness::launch_traced<M, S>(fwt_kernel<M, S, T>, dim3(kSegments), dim3(kThreads), kPoints,
                                        reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), log,
                                        keep_alive);
  }

  // 64 sampled segments against a float64 transform.
  double check(bool* poisoned) {
    hin.resize(kElements);
    hout.resize(kElements);
    CHECK(cudaMemcpy(hin.data(), in, sizeof(float) * kElements, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hout.data(), out, sizeof(float) * kElements, cudaMemcpyDeviceToHost));
    harness::ErrorSum err;
    *poisoned = true;
    std::vector<double> ref(kSegment);
    for (int s = 0; s < 64; ++s) {
      const size_t seg = (s * 2654435761u + 7u) % kSegments;
      for (int i = 0; i < kSegment; ++i) ref[i] = hin[seg * kSegment + i];
      for (int h = 1; h < kSegment; h *= 2)
        for (int i = 0; i < kSegment; i += 2 * h)
          for (int j = i; j < i + h; ++j) {
            const double u = ref[j], v = ref[j + h];
            ref[j] = u + v;
            ref[j + h] = u - v;
          }
      for (int i = 0; i < kSegment; ++i) {
        const float o = hout[seg * kSegment + i];
        *poisoned = *poisoned && harness::is_poison(o);
        err.add(o, ref[i]);
      }
    }
    return err.relative();
  }
};

int main(int argc, char** argv) { return harness::main_for<Fwt>(argc, argv); }
