// Loads the instrumented PTX that tmakit_instrument_ptx embedded (tmakit_ptx_bulk_copy) with the
// driver API and launches its kernel. Run it as it is, or under `tmakit check -- ./check_example`.
#include <cuda.h>

#include <cstdio>

extern "C" const char tmakit_ptx_bulk_copy[];

static int check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "check_example: %s failed: %d\n", what, static_cast<int>(r));
  return r != CUDA_SUCCESS;
}

int main() {
  CUcontext ctx;
  CUmodule module;
  CUfunction kernel;
  if (check(cuInit(0), "cuInit") || check(cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain") ||
      check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
      check(cuModuleLoadData(&module, tmakit_ptx_bulk_copy), "cuModuleLoadData") ||
      check(cuModuleGetFunction(&kernel, module, "bulk_copy"), "cuModuleGetFunction") ||
      check(cuLaunchKernel(kernel, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), "cuLaunchKernel") ||
      check(cuCtxSynchronize(), "cuCtxSynchronize"))
    return 1;
  std::printf("check_example: bulk_copy ran\n");
  return 0;
}
