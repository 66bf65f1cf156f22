// Matrix multiply C = A B (n x n, float), 16 x 16 shared-memory tiles, one output a thread;
// 32 instrumentation points a thread, one every n/16/32 tiles of the k loop (docs/methods.md,
// section 2: the paper's matrix multiply logs 32 timestamps a thread). The k loop runs as 32
// rounds of n/16/32 tiles, a point at the start of each: a point placed by a run-time test
// (`t % tiles_per_point == 0`, the first GPU run) cost more than the records themselves.
#include "harness.cuh"

using namespace yosoku_trace;

constexpr int kTile = 16;
constexpr int kPoints = 32;

template <Mode M, Scope S, Timer T>
__global__ void matmul_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n,
                              DeviceLog log, bool keep_alive) {
  extern __shared__ unsigned long long trace_smem[];
  __shared__ float ta[kTile][kTile];
  __shared__ float tb[kTile][kTile];
  Tracer<M, S, T> trace(log, trace_smem);
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0.0f;
  const int tiles_per_point = n / kTile / kPoints;
  for (int p = 0; p < kPoints; ++p) {
    trace.point(p);
    for (int t = p * tiles_per_point; t < (p + 1) * tiles_per_point; ++t) {
      ta[threadIdx.y][threadIdx.x] = a[row * n + t * kTile + threadIdx.x];
      tb[threadIdx.y][threadIdx.x] = b[(t * kTile + threadIdx.y) * n + col];
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kTile; ++k) sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
      __syncthreads();
    }
  }
  if (stores_result<M>(keep_alive)) c[row * n + col] = sum;
  trace.flush();
}

struct Matmul {
  static constexpr const char* kName = "matmul";
  static constexpr uint32_t kPoints = ::kPoints;
  static constexpr int kN = 2048;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<float> ha, hb, hc;

  Matmul() {
    static_assert(kN % (kTile * kPoints) == 0, "the k loop's tiles divide into the points");
    CHECK(cudaMalloc(&a, sizeof(float) * kN * kN));
    CHECK(cudaMalloc(&b, sizeof(float) * kN * kN));
    CHECK(cudaMalloc(&c, sizeof(float) * kN * kN));
  }
  ~Matmul() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  unsigned long long blocks() const { return (unsigned long long)(kN / kTile) * (kN / kTile); }
  uint32_t threads_per_block() const { return kTile * kTile; }
  void fill(uint64_t seed) {
    harness::fill_uniform(a, (size_t)kN * kN, seed, -1.0f, 1.0f);
    harness::fill_uniform(b, (size_t)kN * kN, seed ^ 0xabcdef, -1.0f, 1.0f);
  }
  void poison() { CHECK(cudaMemset(c, 0xff, sizeof(float) * kN * kN)); }

  template <Mode M, Scope S, Timer T>
  cudaError_t launch(const DeviceLog& log, bool keep_alive) {
    return harness::launch_traced<M, S>(matmul_kernel<M, S, T>, dim3(kN / kTile, kN / kTile), dim3(kTile, kTile), kPoints,
                                        a, b, c, kN, log, keep_alive);
  }

  // 16 sampled rows, every column, against a float64 reference.
  double check(bool* poisoned) {
    ha.resize((size_t)kN * kN);
    hb.resize((size_t)kN * kN);
    hc.resize((size_t)kN * kN);
    CHECK(cudaMemcpy(ha.data(), a, sizeof(float) * kN * kN, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hb.data(), b, sizeof(float) * kN * kN, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hc.data(), c, sizeof(float) * kN * kN, cudaMemcpyDeviceToHost));
    harness::ErrorSum err;
    *poisoned = true;
    std::vector<double> ref(kN);
    for (int s = 0; s < 16; ++s) {
      const int row = (int)((s * 2654435761u + 12345u) % kN);
      std::fill(ref.begin(), ref.end(), 0.0);
      for (int k = 0; k < kN; ++k) {
        const double aik = ha[(size_t)row * kN + k];
        const float* brow = &hb[(size_t)k * kN];
        for (int j = 0; j < kN; ++j) ref[j] += aik * brow[j];
      }
      for (int j = 0; j < kN; ++j) {
        const float out = hc[(size_t)row * kN + j];
        *poisoned = *poisoned && harness::is_poison(out);
        err.add(out, ref[j]);
      }
    }
    return err.relative();
  }
};

int main(int argc, char** argv) { return harness::main_for<Matmul>(argc, argv); }
