// The one launch of the GPU engine: its arguments and the host entry point
// implemented in engine_kernel.cu. Plain C++ plus the runtime's error type.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine_steps.hpp"

namespace tmakit::gpu::detail {

// A region of one CTA's shared window copied from / to a staging buffer in global memory.
struct SharedRegion {
  uint32_t cta;
  uint32_t offset;
  uint32_t bytes;
  uint64_t staging;  // byte offset into the staging buffer
};

struct KernelArgs {
  const Step* steps;
  uint32_t nsteps;
  uint32_t ctas;
  const CUtensorMap* maps;  // device array (global memory: a valid tensor-map space, §1.1)
  uint32_t nmaps;
  uint32_t* pos;            // per CTA: index of its next step, | kBlocked while in a blocking wait
  KernelStatus* status;
  unsigned long long* regs;
  uint32_t shared_need;     // bytes of the window the scenario uses (zeroed, then initialised)
  uint32_t dyn_bytes;       // dynamic shared memory requested per CTA
  const uint8_t* init_data;
  const SharedRegion* inits;
  uint32_t ninits;
  uint8_t* out_data;
  const SharedRegion* outs;
  uint32_t nouts;
  unsigned long long wait_bound_ns;
};

inline constexpr uint32_t kBlocked = 0x80000000u;

cudaError_t launch_engine(const KernelArgs& args, int threads);

}  // namespace tmakit::gpu::detail
