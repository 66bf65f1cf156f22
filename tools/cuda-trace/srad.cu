// One step of SRAD (speckle reducing anisotropic diffusion, as in Rodinia's srad: the diffusion
// coefficient c from the gradient and Laplacian, then J += lambda/4 * div(c grad J)) on an
// 8192 x 8192 float image, fused into one kernel: a thread walks a strip of 32 rows of one
// column, computing c of its own pixel, its south and its east neighbour. 9 instrumentation
// points a thread (docs/methods.md, section 2: the paper's SRAD logs 9): on entry and after
// every 4 rows. q0^2, the speckle scale Rodinia takes from a region of interest each iteration,
// is an argument here.
//
// Built twice (run.sh): `srad`, and `srad_bounded` with -DSRAD_MIN_BLOCKS=6, every variant
// under __launch_bounds__(256, 6): at most 40 registers a thread, the original's count, so
// that the tracer's registers cannot lower the occupancy (the original's code is the same
// either way: the build reports show it).
#include "harness.cuh"

using namespace yosoku_trace;

constexpr int kSize = 8192;
constexpr int kRowsPerThread = 32;
constexpr int kThreads = 256;
constexpr float kLambda = 0.5f;
constexpr float kQ0Sqr = 0.01f;

// Rodinia's diffusion coefficient at a pixel of value jc from its four neighbours.
template <typename R>
__host__ __device__ inline R coefficient(R jc, R jn, R js, R jw, R je, R q0sqr) {
  const R dn = jn - jc, ds = js - jc, dw = jw - jc, de = je - jc;
  const R g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc);
  const R l = (dn + ds + dw + de) / jc;
  const R num = R(0.5) * g2 - R(1.0 / 16.0) * (l * l);
  R den = R(1) + R(0.25) * l;
  const R qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (R(1) + q0sqr));
  const R c = R(1) / (R(1) + den);
  return c < R(0) ? R(0) : (c > R(1) ? R(1) : c);
}

__host__ __device__ inline int clamp_index(int i) { return i < 0 ? 0 : (i > kSize - 1 ? kSize - 1 : i); }

__device__ inline float load(const float* __restrict__ image, int i, int j) {
  return __ldg(&image[(size_t)clamp_index(i) * kSize + clamp_index(j)]);
}

__device__ inline float coefficient_at(const float* __restrict__ image, int i, int j, float q0sqr) {
  return coefficient<float>(load(image, i, j), load(image, i - 1, j), load(image, i + 1, j), load(image, i, j - 1),
                            load(image, i, j + 1), q0sqr);
}

#ifdef SRAD_MIN_BLOCKS
#define SRAD_BOUNDS __launch_bounds__(kThreads, SRAD_MIN_BLOCKS)
constexpr const char* kProgramName = "srad_bounded";
#else
#define SRAD_BOUNDS
constexpr const char* kProgramName = "srad";
#endif

template <Mode M, Scope S, Timer T>
__global__ void SRAD_BOUNDS srad_kernel(const float* __restrict__ j_in, float* __restrict__ j_out, float q0sqr, DeviceLog log,
                            bool keep_alive) {
  extern __shared__ unsigned long long trace_smem[];
  Tracer<M, S, T> trace(log, trace_smem);
  trace.point(0);
  const int j = blockIdx.x * kThreads + threadIdx.x;
  const int i0 = blockIdx.y * kRowsPerThread;
  float c_here = coefficient_at(j_in, i0, j, q0sqr);
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int i = i0 + r;
    // The south and east neighbours' coefficients (clamped at the edges, as Rodinia does).
    const float c_south = coefficient_at(j_in, clamp_index(i + 1), j, q0sqr);
    const float c_east = coefficient_at(j_in, i, clamp_index(j + 1), q0sqr);
    const float jc = load(j_in, i, j);
    const float d = c_here * (load(j_in, i - 1, j) - jc) + c_south * (load(j_in, i + 1, j) - jc) +
                    c_here * (load(j_in, i, j - 1) - jc) + c_east * (load(j_in, i, j + 1) - jc);
    const float result = jc + 0.25f * kLambda * d;
    if (stores_result<M>(keep_alive)) j_out[(size_t)i * kSize + j] = result;
    c_here = c_south;
    if (r % 4 == 3) trace.point(1 + r / 4);
  }
  trace.flush();
}

struct Srad {
  static constexpr const char* kName = kProgramName;
  static constexpr uint32_t kPoints = 9;
  static constexpr size_t kPixels = (size_t)kSize * kSize;
  float *in = nullptr, *out = nullptr;
  std::vector<float> hin, hout;

  Srad() {
    CHECK(cudaMalloc(&in, sizeof(float) * kPixels));
    CHECK(cudaMalloc(&out, sizeof(float) * kPixels));
  }
  ~Srad() {
    cudaFree(in);
    cudaFree(out);
  }
  unsigned long long blocks() const { return (unsigned long long)(kSize / kThreads) * (kSize / kRowsPerThread); }
  uint32_t threads_per_block() const { return kThreads; }
  void fill(uint64_t seed) { harness::fill_uniform(in, kPixels, seed, 0.9f, 1.1f); }
  void poison() { CHECK(cudaMemset(out, 0xff, sizeof(float) * kPixels)); }

  template <Mode M, Scope S, Timer T>
  cudaError_t launch(const DeviceLog& log, bool keep_alive) {
    return harness::launch_traced<M, S>(srad_kernel<M, S, T>, dim3(kSize / kThreads, kSize / kRowsPerThread), dim3(kThreads),
                                        kPoints, in, out, kQ0Sqr, log, keep_alive);
  }

  // 16 sampled rows, every column, against a float64 step.
  double check(bool* poisoned) {
    hin.resize(kPixels);
    hout.resize(kPixels);
    CHECK(cudaMemcpy(hin.data(), in, sizeof(float) * kPixels, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hout.data(), out, sizeof(float) * kPixels, cudaMemcpyDeviceToHost));
    auto J = [this](int i, int jj) { return (double)hin[(size_t)clamp_index(i) * kSize + clamp_index(jj)]; };
    auto c_at = [&J](int i, int jj) {
      return coefficient<double>(J(i, jj), J(i - 1, jj), J(i + 1, jj), J(i, jj - 1), J(i, jj + 1), kQ0Sqr);
    };
    harness::ErrorSum err;
    *poisoned = true;
    for (int s = 0; s < 16; ++s) {
      const int i = (int)((s * 2654435761u + 99u) % kSize);
      for (int j = 0; j < kSize; ++j) {
        const double c_here = c_at(i, j), c_south = c_at(clamp_index(i + 1), j), c_east = c_at(i, clamp_index(j + 1));
        const double jc = J(i, j);
        const double d = c_here * (J(i - 1, j) - jc) + c_south * (J(i + 1, j) - jc) + c_here * (J(i, j - 1) - jc) +
                         c_east * (J(i, j + 1) - jc);
        const float o = hout[(size_t)i * kSize + j];
        *poisoned = *poisoned && harness::is_poison(o);
        err.add(o, jc + 0.25 * kLambda * d);
      }
    }
    return err.relative();
  }
};

int main(int argc, char** argv) { return harness::main_for<Srad>(argc, argv); }
