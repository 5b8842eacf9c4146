// The ring of ring.cu written with tmakit's own device library (include/tmakit/device/,
// docs/device-library.md) instead of plain `cuda::ptx`: the maps are MapHandles encoded by
// make_map_handle, the barriers are armed with the map's box bytes (arrive_expect_tx(bar, map)),
// the copies are load_tile / store_tile, the wait is wait_parity. The same program otherwise:
// the CUDA runtime (`<<<>>>`), a fatbin with PTX, the same four modes and the same seeded bugs,
// so `tmakit check` must place each finding at this file's marked line through the library's
// inlining chain (docs/check-replay.md, "Places"): `ring_devlib MODE`, MODE one of
//   clean    the correct ring: the output is 2 × the input + the tile's index;
//   parity   the wait's parity is not flipped when the ring wraps (the H100 hangs or reads
//            stale tiles, depending on timing);
//   refill   thread 0 refills a stage before the block barrier that says every thread has
//            finished reading it (a write-after-read race: right results most of the time);
//   nofence  the threads' st.shared of the output tile reaches the TMA store with no
//            fence_proxy_async_shared() (a proxy race: right results most of the time).
// 4 CTAs × 128 threads each stream 16 tiles of 32 × 32 floats (4 KiB) through 2 stages.
// Exit status: 0 when the output is right, 1 when it is wrong, 2 on a CUDA error.
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>

#include "../../dense_map.cuh"
#include "ring_host.hpp"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;

constexpr int kCtas = 4, kThreads = 128, kTiles = 16, kStages = 2, kTile = 32;
enum Mode : int { clean = 0, parity = 1, refill = 2, nofence = 3 };

struct alignas(1024) Smem {
  float stage[kStages][kTile * kTile];
  float out[kTile * kTile];
  uint64_t full[kStages];
};

// Thread 0 starts the load of tile `k` of this CTA into its stage.
__device__ void issue(const dev::MapHandle& in, Smem& s, int k) {
  const int st = k % kStages;
  dev::arrive_expect_tx(&s.full[st], in);  // one box of the map: its bytes, not a typed count
  const int32_t coords[2] = {0, static_cast<int32_t>((blockIdx.x * kTiles + k) * kTile)};
  dev::load_tile(s.stage[st], in, coords, &s.full[st]);  // at:load
}

__device__ void wait_full(Smem& s, int st, uint32_t phase_parity, const dev::MapHandle& in) {
  dev::wait_parity(&s.full[st], phase_parity, in.box_bytes);  // at:wait
}

__global__ void __launch_bounds__(kThreads) ring_devlib(const __grid_constant__ dev::MapHandle in,
                                                        const __grid_constant__ dev::MapHandle out, int mode) {
  extern __shared__ uint8_t raw[];
  Smem& s = *reinterpret_cast<Smem*>(raw + ((1024 - (reinterpret_cast<uintptr_t>(raw) & 1023)) & 1023));
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int st = 0; st < kStages; ++st) dev::mbar_init(&s.full[st], 1);
    dev::fence_mbarrier_init();
  }
  __syncthreads();
  if (tid == 0) issue(in, s, 0);
  if (tid == 0 && mode == refill) issue(in, s, 1);  // refill keeps two tiles ahead from the start
  for (int k = 0; k < kTiles; ++k) {
    const int st = k % kStages;
    // The next tile goes into the other stage, last read in round k - 1: every thread passed
    // the block barrier after that read.
    if (tid == 0 && k + 1 < kTiles && mode != refill) issue(in, s, k + 1);
    const uint32_t phase_parity = mode == parity ? 0u : (k / kStages) & 1u;  // parity: never flipped
    wait_full(s, st, phase_parity, in);
    for (int i = tid; i < kTile * kTile; i += kThreads) s.out[i] = 2.0f * s.stage[st][i] + k;  // at:read
    // refill: thread 0 loads tile k + 2 into the stage it has just read, while the other
    // threads may still be reading it (no block barrier between their reads and the copy).
    if (tid == 0 && k + 2 < kTiles && mode == refill) issue(in, s, k + 2);
    if (mode != nofence) dev::fence_proxy_async_shared();  // nofence: st.shared → TMA store unfenced
    __syncthreads();
    if (tid == 0) {
      const int32_t coords[2] = {0, static_cast<int32_t>((blockIdx.x * kTiles + k) * kTile)};
      dev::store_tile(out, coords, s.out);  // at:store
      dev::commit_group();
      dev::wait_group_read<0>();
    }
    __syncthreads();
  }
  if (tid == 0) dev::wait_group<0>();
}

int main(int argc, char** argv) {
  const char* me = "ring_devlib";
  const int mode = ring_host::parse_mode(me, argc, argv);
  if (mode < 0) return 2;
  ring_host::Tensors t;
  cudaError_t e;
  if ((e = ring_host::make_tensors(t, uint64_t{kCtas} * kTiles * kTile, kTile)) != cudaSuccess)
    return ring_host::fail(me, "the tensors", e);
  dev::MapHandle min{}, mout{};
  try {  // the driver's encode through tmakit's bridge (tmakit::driver); it throws on a refusal
    using tmakit::tensor_map::DataType;
    min = dev::make_map_handle(dense_map_2d(DataType::float32, t.in, kTile, t.rows, kTile, kTile));
    mout = dev::make_map_handle(dense_map_2d(DataType::float32, t.out, kTile, t.rows, kTile, kTile));
  } catch (const std::exception& x) {
    std::fprintf(stderr, "%s: %s\n", me, x.what());
    return 2;
  }
  const size_t smem = sizeof(Smem) + 1024;
  cudaFuncSetAttribute(ring_devlib, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  ring_devlib<<<kCtas, kThreads, smem>>>(min, mout, mode);
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return ring_host::fail(me, "the ring kernel", e);
  return ring_host::check_output(me, mode, t, kTiles, kTile);
}

// Findings must land on the lines marked `// at:TAG` (load, wait, read, store), as in ring.cu:
// scripts/check-real-device.sh reads the markers of both files to judge the H100's runs and to
// write the expectations of their recorded traces.
