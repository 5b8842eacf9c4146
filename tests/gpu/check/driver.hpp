// The driver functions check_seeded calls, reached as CUTLASS and PyTorch reach them
// (cudaGetDriverEntryPointByVersion, CUDA 12.0 ABIs): the program links no libcuda, so it
// starts (`list`, `instrument-only`) on a machine without a GPU, and `tmakit check` sees its
// module loads through the entry-point hook.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "run.hpp"

namespace check_seeded {

#define CHECK_SEEDED_DRIVER(X)                                                                       \
  X(cuGetErrorName) X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent)          \
  X(cuStreamCreate) X(cuStreamQuery) X(cuMemAlloc) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD32)   \
  X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLaunchKernelEx) X(cuEventCreate) X(cuEventRecord) \
  X(cuEventSynchronize) X(cuEventElapsedTime)

struct Driver {
#define CHECK_SEEDED_MEMBER(name) decltype(&::name) name = nullptr;
  CHECK_SEEDED_DRIVER(CHECK_SEEDED_MEMBER)
#undef CHECK_SEEDED_MEMBER
};

// Every entry point, or Usage naming the first one the runtime could not find.
inline const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    auto find = [](const char* symbol, void** fn) {
      cudaDriverEntryPointQueryResult q{};
      if (cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess || !*fn)
        throw Usage(std::string("no CUDA driver entry point ") + symbol + " (is there a GPU and its driver?)");
    };
#define CHECK_SEEDED_FIND(name) find(#name, reinterpret_cast<void**>(&out.name));
    CHECK_SEEDED_DRIVER(CHECK_SEEDED_FIND)
#undef CHECK_SEEDED_FIND
    return out;
  }();
  return d;
}

}  // namespace check_seeded
