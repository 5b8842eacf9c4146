// A kernel built for `tmakit check` with tmakit_instrument_ptx (README.md): thread 0 of each
// CTA copies 256 bytes of a global array into shared memory with one cp.async.bulk, completing
// on an mbarrier armed for exactly those bytes, and waits for them.
#include <cstdint>
#include <cuda/ptx>

__device__ alignas(16) unsigned char example_source[256];

extern "C" __global__ void bulk_copy() {
  __shared__ alignas(128) unsigned char buffer[256];
  __shared__ alignas(8) std::uint64_t barrier;
  if (threadIdx.x != 0) return;
  namespace ptx = cuda::ptx;
  ptx::mbarrier_init(&barrier, 1u);
  ptx::fence_proxy_async(ptx::space_shared);
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &barrier, 256u);
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, buffer, example_source, 256u, &barrier);
  while (!ptx::mbarrier_try_wait_parity(&barrier, 0)) {
  }
}
