// A two-stage TMA ring written the way users write one: the CUDA runtime (`<<<>>>`), a fatbin
// with PTX, `cuda::ptx` for the bulk-copy engine and the mbarriers, the tensor maps encoded
// through cudaGetDriverEntryPointByVersion. It is the program `tmakit check` is tried on for
// the classic pipeline bugs (docs/check.md, "Pipelines"): `ring MODE`, MODE one of
//   clean    the correct ring: the output is 2 × the input + the tile's index;
//   parity   the wait's parity is not flipped when the ring wraps (the H100 hangs or reads
//            stale tiles, depending on timing);
//   refill   thread 0 refills a stage before the block barrier that says every thread has
//            finished reading it (a write-after-read race: right results most of the time);
//   nofence  the threads' st.shared of the output tile reaches the TMA store with no
//            fence.proxy.async (a proxy race: right results most of the time).
// 4 CTAs × 128 threads each stream 16 tiles of 32 × 32 floats (4 KiB) through 2 stages.
// Exit status: 0 when the output is right, 1 when it is wrong, 2 on a CUDA error.
#include <cuda.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ptx = cuda::ptx;

constexpr int kCtas = 4, kThreads = 128, kTiles = 16, kStages = 2, kTile = 32;
__device__ constexpr uint32_t kTileBytes = kTile * kTile * sizeof(float);
enum Mode : int { clean = 0, parity = 1, refill = 2, nofence = 3 };

struct alignas(1024) Smem {
  float stage[kStages][kTile * kTile];
  float out[kTile * kTile];
  uint64_t full[kStages];
};

// Thread 0 starts the load of tile `k` of this CTA into its stage.
__device__ void issue(const CUtensorMap* in, Smem& s, int k) {
  const int st = k % kStages;
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &s.full[st], kTileBytes);
  const int32_t coords[2] = {0, static_cast<int32_t>((blockIdx.x * kTiles + k) * kTile)};
  ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s.stage[st], in, coords, &s.full[st]);  // at:load
}

__device__ void wait_full(Smem& s, int st, uint32_t phase_parity) {
  while (!ptx::mbarrier_try_wait_parity(&s.full[st], phase_parity)) {  // at:wait
  }
}

__global__ void __launch_bounds__(kThreads) ring(const __grid_constant__ CUtensorMap in,
                                                 const __grid_constant__ CUtensorMap out, int mode) {
  extern __shared__ uint8_t raw[];
  Smem& s = *reinterpret_cast<Smem*>(raw + ((1024 - (reinterpret_cast<uintptr_t>(raw) & 1023)) & 1023));
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int st = 0; st < kStages; ++st) ptx::mbarrier_init(&s.full[st], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (tid == 0) issue(&in, s, 0);
  if (tid == 0 && mode == refill) issue(&in, s, 1);  // refill keeps two tiles ahead from the start
  for (int k = 0; k < kTiles; ++k) {
    const int st = k % kStages;
    // The next tile goes into the other stage, last read in round k - 1: every thread passed
    // the block barrier after that read.
    if (tid == 0 && k + 1 < kTiles && mode != refill) issue(&in, s, k + 1);
    const uint32_t phase_parity = mode == parity ? 0u : (k / kStages) & 1u;  // parity: never flipped
    wait_full(s, st, phase_parity);
    for (int i = tid; i < kTile * kTile; i += kThreads) s.out[i] = 2.0f * s.stage[st][i] + k;  // at:read
    // refill: thread 0 loads tile k + 2 into the stage it has just read, while the other
    // threads may still be reading it (no block barrier between their reads and the copy).
    if (tid == 0 && k + 2 < kTiles && mode == refill) issue(&in, s, k + 2);
    if (mode != nofence) ptx::fence_proxy_async(ptx::space_shared);  // nofence: st.shared → TMA store unfenced
    __syncthreads();
    if (tid == 0) {
      const int32_t coords[2] = {0, static_cast<int32_t>((blockIdx.x * kTiles + k) * kTile)};
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &out, coords, s.out);  // at:store
      ptx::cp_async_bulk_commit_group();
      ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    }
    __syncthreads();
  }
  if (tid == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
}

// The host half (mode, tensors, the output check) is shared with ring_devlib.cu; it is included
// here, below the kernel, so that the marked lines above stay where the recorded traces put them.
#include "ring_host.hpp"

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A 2-D float tensor of `rows` rows of 32 floats, boxes of 32 × 32.
bool encode(EncodeTiled fn, CUtensorMap* m, float* base, uint64_t rows) {
  const cuuint64_t dims[2] = {kTile, rows}, strides[1] = {kTile * sizeof(float)};
  const cuuint32_t box[2] = {kTile, kTile}, elem[2] = {1, 1};
  return fn(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const int mode = ring_host::parse_mode("ring", argc, argv);
  if (mode < 0) return 2;
  ring_host::Tensors t;
  cudaError_t e;
  if ((e = ring_host::make_tensors(t, uint64_t{kCtas} * kTiles * kTile, kTile)) != cudaSuccess)
    return ring_host::fail("ring", "the tensors", e);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if ((e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q)) !=
          cudaSuccess || q != cudaDriverEntryPointSuccess)
    return ring_host::fail("ring", "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)", e);
  CUtensorMap min{}, mout{};
  if (!encode(reinterpret_cast<EncodeTiled>(fn), &min, t.in, t.rows) ||
      !encode(reinterpret_cast<EncodeTiled>(fn), &mout, t.out, t.rows)) {
    std::fprintf(stderr, "ring: cuTensorMapEncodeTiled refused a map\n");
    return 2;
  }
  const size_t smem = sizeof(Smem) + 1024;
  cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  ring<<<kCtas, kThreads, smem>>>(min, mout, mode);
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return ring_host::fail("ring", "the ring kernel", e);
  return ring_host::check_output("ring", mode, t, kTiles, kTile);
}

// The recorded traces tests/vectors/check/ring-* name this file's lines: a line marked `// at:TAG`
// is where a finding must land (scripts/check-real-device.sh unpack reads the markers); moving
// those lines means recording the traces again.
