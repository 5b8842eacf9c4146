// The driver's ABI for the calls `tmakit check` hooks (module loading, function lookup,
// launches) and the few it makes itself (events, stream queries), spelled out like
// driver_abi.hpp so the preload library builds without the CUDA toolkit. These match cuda.h
// of CUDA 12.0 and later (the names cuGetProcAddress answers at version 12000);
// tests/watch/test_check_hooks.cpp checks the launch structures against cuda.h where present.
#pragma once
#include <cstddef>
#include <cstdint>

#include "../../watch/driver_abi.hpp"

namespace tmakit::watch::abi {

inline constexpr CUresult kNotReady = 600;           // CUDA_ERROR_NOT_READY
inline constexpr int kJitInputPtx = 1;               // CU_JIT_INPUT_PTX
inline constexpr int kLaunchAttributeClusterDimension = 4;  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
inline constexpr unsigned kEventDisableTiming = 2;   // CU_EVENT_DISABLE_TIMING

struct LaunchAttribute {  // CUlaunchAttribute: id, padding to 8, a 64-byte value union
  int id;
  char pad[4];
  union {
    struct { unsigned x, y, z; } cluster_dim;
    char bytes[64];
  } value;
};
static_assert(sizeof(LaunchAttribute) == 72);

struct LaunchConfig {  // CUlaunchConfig
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem_bytes;
  void* stream;
  LaunchAttribute* attrs;
  unsigned num_attrs;
};

using ModuleLoadData = CUresult (*)(void** module, const void* image);
using ModuleLoadDataEx = CUresult (*)(void** module, const void* image, unsigned num_options, int* options,
                                      void** values);
using LibraryLoadData = CUresult (*)(void** library, const void* code, int* jit_options, void** jit_values,
                                     unsigned num_jit, int* lib_options, void** lib_values, unsigned num_lib);
using LinkAddData = CUresult (*)(void* state, int type, void* data, size_t size, const char* name,
                                 unsigned num_options, int* options, void** values);
using ModuleGetFunction = CUresult (*)(void** function, void* module, const char* name);
using LibraryGetKernel = CUresult (*)(void** kernel, void* library, const char* name);
using KernelGetFunction = CUresult (*)(void** function, void* kernel);
using LaunchKernel = CUresult (*)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned smem, void* stream, void** params, void** extra);
using LaunchKernelEx = CUresult (*)(const LaunchConfig* config, void* f, void** params, void** extra);
using ModuleLoadFatBinary = CUresult (*)(void** module, const void* fat_cubin);
using LaunchCooperativeKernel = CUresult (*)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                             unsigned by, unsigned bz, unsigned smem, void* stream, void** params);
using EventCreate = CUresult (*)(void** event, unsigned flags);
using EventRecord = CUresult (*)(void* event, void* stream);
using EventQuery = CUresult (*)(void* event);
using EventDestroy = CUresult (*)(void* event);

}  // namespace tmakit::watch::abi
