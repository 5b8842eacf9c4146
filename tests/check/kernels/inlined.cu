// A kernel written with cuda::ptx through the user's own helpers, two levels deep, for the
// tests of inlining chains (tests/check/kernels/inlined.ptx is its PTX; see there).
#include <cuda.h>
#include <cuda/ptx>

#include <cstdint>

namespace ptx = cuda::ptx;

__device__ __forceinline__ void arm(uint64_t* bar, uint32_t bytes) {
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, bytes);
}

__device__ __forceinline__ void load_tile(void* dst, const void* map, int x, int y, uint64_t* bar) {
  const int32_t coords[2] = {x, y};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map, coords, bar);
}

__device__ __forceinline__ void stage(void* dst, const void* map, int x, uint64_t* bar, uint32_t bytes) {
  arm(bar, bytes);
  load_tile(dst, map, x, 0, bar);
}

__device__ __forceinline__ void wait_for(uint64_t* bar, uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

extern "C" __global__ void inlined_stage(const __grid_constant__ CUtensorMap map, float* out) {
  __shared__ alignas(1024) float tile[32 * 32];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    stage(tile, &map, blockIdx.x * 32, &bar, sizeof(tile));
  }
  __syncthreads();
  wait_for(&bar, 0);
  out[threadIdx.x] = tile[threadIdx.x];
}
