// PASS/FAIL reporting for the GPU test programs (plain executables, exit 0 = pass).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>

static int failures = 0;
static void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  failures += !ok;
}
// Inside main(): a failing CUDA call is reported and ends the program with 1.
#define CUDA_OK(x)                                                              \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));                 \
      return 1;                                                                 \
    }                                                                           \
  } while (0)
