// Just enough of the CUDA runtime's declarations for clang to compile yosoku_trace.cuh and the
// programs of tools/cuda-trace to PTX on a machine with no CUDA toolkit (`clang -x cuda
// --cuda-device-only -nocudainc -nocudalib -I tools/cuda-trace/clang-check`): the device code
// is compiled for real; the host code is only type-checked against these declarations, written
// from the CUDA runtime API's documentation. Never used by nvcc builds (cargo xtask
// cuda-trace-check; tools/cuda-trace/README.md).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include "__clang_cuda_builtin_vars.h"

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};

enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
typedef cudaError_t cudaError;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum cudaDeviceAttr { cudaDevAttrClockRate = 13 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
struct cudaDeviceProp {
  char name[256];
  int multiProcessorCount;
};
typedef struct CUevent_st* cudaEvent_t;
typedef struct CUstream_st* cudaStream_t;

extern "C" {
__host__ cudaError_t cudaMalloc(void** ptr, size_t size);
__host__ cudaError_t cudaFree(void* ptr);
__host__ cudaError_t cudaMemset(void* ptr, int value, size_t count);
__host__ cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
__host__ cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
__host__ cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
__host__ cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
__host__ cudaError_t cudaGetLastError(void);
__host__ const char* cudaGetErrorString(cudaError_t error);
__host__ cudaError_t cudaDeviceSynchronize(void);
__host__ cudaError_t cudaEventCreate(cudaEvent_t* event);
__host__ cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
__host__ cudaError_t cudaEventSynchronize(cudaEvent_t event);
__host__ cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
__host__ cudaError_t cudaEventDestroy(cudaEvent_t event);
// The launch syntax `k<<<grid, block, shared>>>(...)`: clang calls this (older CUDA) or the next.
__host__ cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0);
__host__ unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, void* stream = 0);
}
template <class T>
__host__ cudaError_t cudaMalloc(T** ptr, size_t size) {
  return cudaMalloc((void**)ptr, size);
}
template <class T>
__host__ cudaError_t cudaFuncSetAttribute(T* func, cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute((const void*)func, attr, value);
}

__device__ inline unsigned atomicOr(unsigned* address, unsigned value) {
  return __nvvm_atom_or_gen_i((int*)address, (int)value);
}
__device__ inline float __ldg(const float* p) { return __nvvm_ldg_f(p); }
