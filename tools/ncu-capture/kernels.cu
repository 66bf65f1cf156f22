// Small CUDA kernels whose profiles yosoku's ncu importers are tested on (tools/ncu-capture/README.md).
// Written for yosoku: vector copies of several widths (docs/methods.md, section 1: the motivation) and a matrix
// multiply with and without shared ("local") memory.
//
// usage: kernels <kernel> <size> [<size> ...]
//   kernel: copy_float | copy_float2 | copy_float4 | matmul_naive | matmul_tiled | all
//   size:   elements for the copies, matrix order for the multiplies
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t err_ = (call);                                                      \
    if (err_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

template <typename T>
__global__ void copy(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void matmul_naive(const float* a, const float* b, float* c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
  }
}

#define TILE 16
__global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE];
  __shared__ float tb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] = (row < n && ak < n) ? a[row * n + ak] : 0.0f;
    tb[threadIdx.y][threadIdx.x] = (bk < n && col < n) ? b[bk * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = sum;
}

template <typename T>
static void run_copy(size_t elements) {
  size_t n = elements / (sizeof(T) / sizeof(float));
  T *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(T)));
  CHECK(cudaMalloc(&out, n * sizeof(T)));
  CHECK(cudaMemset(in, 1, n * sizeof(T)));
  unsigned blocks = (unsigned)((n + 255) / 256);
  copy<T><<<blocks, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
}

static void run_matmul(int n, bool tiled) {
  size_t bytes = (size_t)n * n * sizeof(float);
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  CHECK(cudaMemset(b, 0, bytes));
  dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  if (tiled)
    matmul_tiled<<<grid, block>>>(a, b, c, n);
  else
    matmul_naive<<<grid, block>>>(a, b, c, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
}

static void run(const char* kernel, long size) {
  if (!strcmp(kernel, "copy_float")) run_copy<float>(size);
  else if (!strcmp(kernel, "copy_float2")) run_copy<float2>(size);
  else if (!strcmp(kernel, "copy_float4")) run_copy<float4>(size);
  else if (!strcmp(kernel, "matmul_naive")) run_matmul((int)size, false);
  else if (!strcmp(kernel, "matmul_tiled")) run_matmul((int)size, true);
  else {
    fprintf(stderr, "unknown kernel %s\n", kernel);
    exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <kernel> <size>...\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) run(argv[1], atol(argv[i]));
  return 0;
}
