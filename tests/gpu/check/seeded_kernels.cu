// The seeded-bug kernels of `tmakit check` (issue 18; docs/check-seeded.md). Each kernel takes
// the seed as an argument: check_seeded launches it once with the bug (`check_seeded CASE`)
// and once without (`--clean`), so the clean twin is the same code. A line whose diagnosis a
// case expects ends in `// seed:CASE[:what]`; scripts/check-device.sh reads those markers to
// write each recording's expect.json (the rule comes from tests/gpu/check/cases.json).
//
// Built with `nvcc -ptx -lineinfo -gencode=arch=compute_90a,code=sm_90a` and loaded with
// cuModuleLoadData at run time, so `tmakit check` sees the PTX go to the driver. Tensors are
// float32, 2-D, 256 × 256 (rows of 1 KiB); a tile is 32 × 32 (4 KiB) unless the map says more.
#include <cuda.h>

#include "seeded_ptx.cuh"

namespace {

// Dynamic shared memory rounded up to 1 KiB (the launch asks for 1 KiB more), so offsets from
// it are the absolute alignments the seeds need.
__device__ uint8_t* aligned_smem() {
  extern __shared__ uint8_t dyn[];
  uint32_t a = SMEM(dyn);
  return dyn + ((1024 - (a & 1023)) & 1023);
}

// Every thread copies `n` floats of `src` (shared) to `out`.
__device__ void copy_out(const float* src, float* out, uint32_t n) {
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = src[i];
}
// Fills the tile with -1 (what a stale read shows), then thread 0 starts a 4 KiB load into it
// on a fresh barrier. Every thread calls it.
__device__ void start_stale_load(const CUtensorMap* map, float* buf, uint32_t bar) {
  for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = -1.0f;
  FENCE_PROXY_ASYNC();
  if (threadIdx.x == 0) MBAR_INIT(bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    ARRIVE_EXPECT(bar, 4096);
    TMA_LOAD_2D(SMEM(buf), map, 0, 0, bar);
  }
}
}  // namespace

// expect_tx short by 16 (delta -16, 4 KiB box), short by 128 on an 8 KiB box, long by 16.
extern "C" __global__ void seed_expect_tx(const __grid_constant__ CUtensorMap map, int delta, uint32_t box_bytes, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);
    ARRIVE_EXPECT(SMEM(&bar), box_bytes + delta);  // seed:expect_short16:arm seed:expect_short128_8k:arm seed:expect_long16:arm
    TMA_LOAD_2D(SMEM(buf), &map, 0, 0, SMEM(&bar));
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:expect_short16:wait seed:expect_short128_8k:wait seed:expect_long16:wait
  copy_out(buf, out, box_bytes / 4);
}

// Initialised for `count` arrivals; one thread arrives.
extern "C" __global__ void seed_arrive_count(const __grid_constant__ CUtensorMap map, uint32_t count, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), count);  // seed:arrive_count:init
    ARRIVE_EXPECT(SMEM(&bar), 4096);
    TMA_LOAD_2D(SMEM(buf), &map, 0, 0, SMEM(&bar));
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:arrive_count:wait
  copy_out(buf, out, 1024);
}

// Waits on `parity`: 1 names the phase before the first, which counts as complete at once.
extern "C" __global__ void seed_wrong_parity(const __grid_constant__ CUtensorMap map, uint32_t parity, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  start_stale_load(&map, buf, SMEM(&bar));
  WAIT(SMEM(&bar), parity);  // seed:wrong_parity:wait
  for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = buf[i];  // seed:wrong_parity:read
  WAIT(SMEM(&bar), 0);  // the real wait, so the kernel ends with nothing in flight
}

// Loads the box at (x, 0): x × 4 bytes must be a multiple of 16.
extern "C" __global__ void seed_coord_granule(const __grid_constant__ CUtensorMap map, int x, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);
    ARRIVE_EXPECT(SMEM(&bar), 4096);
    TMA_LOAD_2D(SMEM(buf), &map, x, 0, SMEM(&bar));  // seed:coord_granule:load
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:coord_granule:wait
  copy_out(buf, out, 1024);
}

// The destination `offset` bytes past a 1 KiB boundary: 64 for the fault seed, 128 (below the
// 1 KiB a 128B swizzle starts its pattern on) for the silent one, 0 for the clean twins.
extern "C" __global__ void seed_dst_offset(const __grid_constant__ CUtensorMap map, uint32_t offset, float* out) {
  __shared__ uint64_t bar;
  uint8_t* base = aligned_smem();
  float* buf = reinterpret_cast<float*>(base + offset);
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);
    ARRIVE_EXPECT(SMEM(&bar), 4096);
    TMA_LOAD_2D(SMEM(buf), &map, 0, 0, SMEM(&bar));  // seed:dst_align64:load seed:swizzle_phase:load
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:dst_align64:wait seed:swizzle_phase:wait
  copy_out(buf, out, 1024);
}

// Cluster of 2 (the launch says so): rank 0 multicasts one box to the CTAs of `mask` (3: both; 7 names rank 2 too).
extern "C" __global__ void seed_multicast_mask(const __grid_constant__ CUtensorMap map, uint16_t mask, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  const uint32_t rank = CLUSTER_RANK();
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);
    FENCE_MBAR_INIT();
  }
  CLUSTER_SYNC();
  if (threadIdx.x == 0) {
    ARRIVE_EXPECT(SMEM(&bar), 4096);
    if (rank == 0) TMA_LOAD_2D_MULTICAST(SMEM(buf), &map, 0, 0, SMEM(&bar), mask);  // seed:multicast_mask:load
  }
  WAIT(SMEM(&bar), 0);  // seed:multicast_mask:wait
  copy_out(buf, out + rank * 1024, 1024);
  CLUSTER_SYNC();
}

// st.shared by every thread, then a TMA store of the tile; `fence` = 0 leaves out fence.proxy.async.
extern "C" __global__ void seed_store_fence(const __grid_constant__ CUtensorMap map, int fence) {
  float* buf = reinterpret_cast<float*>(aligned_smem());
  for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = float(i) + 0.5f;
  if (fence) FENCE_PROXY_ASYNC();
  __syncthreads();
  if (threadIdx.x == 0) {
    TMA_STORE_2D(&map, 0, 0, SMEM(buf));  // seed:store_no_fence:store
    COMMIT_GROUP();
    WAIT_GROUP_0();  // seed:store_no_fence:wait
  }
}

// A TMA store of the tile, then the tile overwritten: `early` = 1 before wait_group.read.
extern "C" __global__ void seed_overwrite(const __grid_constant__ CUtensorMap map, int early) {
  float* buf = reinterpret_cast<float*>(aligned_smem());
  for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = float(i) + 0.5f;
  FENCE_PROXY_ASYNC();
  __syncthreads();
  if (threadIdx.x == 0) {
    TMA_STORE_2D(&map, 0, 0, SMEM(buf));
    COMMIT_GROUP();
    if (early)
#pragma unroll 1
      for (uint32_t i = 0; i < 1024; ++i) buf[i] = -2.0f;  // seed:overwrite_before_read:overwrite
    WAIT_GROUP_READ_0();  // seed:overwrite_before_read:wait
    if (!early)
#pragma unroll 1
      for (uint32_t i = 0; i < 1024; ++i) buf[i] = -2.0f;
    WAIT_GROUP_0();
  }
}

// Cluster of 2 (the launch says so): rank 1 initialises its barrier; rank 0 arrives on it remotely. The cluster
// barrier is the relaxed one, so only fence.mbarrier_init makes the init visible (`fence` = 1).
extern "C" __global__ void seed_init_fence(int fence, float* out) {
  __shared__ uint64_t bar;
  const uint32_t rank = CLUSTER_RANK();
  if (rank == 1 && threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);  // seed:init_no_fence:init
    if (fence) FENCE_MBAR_INIT();
  }
  CLUSTER_SYNC_RELAXED();
  if (rank == 0 && threadIdx.x == 0) ARRIVE_REMOTE(MAPA(SMEM(&bar), 1));  // seed:init_no_fence:arrive
  if (rank == 1) {
    WAIT(SMEM(&bar), 0);  // seed:init_no_fence:wait
    if (threadIdx.x == 0) out[0] = 1.0f;  // the wait returned
  }
  CLUSTER_SYNC();
}

// The map lives in global memory; thread 0 points it at `other` with tensormap.replace, then
// loads through it. `fence` = 0 leaves out the tensormap-proxy release/acquire pair.
extern "C" __global__ void seed_tensormap_fence(CUtensorMap* gmap, const float* other, int fence, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) {
    TENSORMAP_REPLACE_ADDRESS(gmap, reinterpret_cast<uint64_t>(other));  // seed:tensormap_no_fence:replace
    if (fence) {
      FENCE_TENSORMAP_RELEASE();
      FENCE_TENSORMAP_ACQUIRE(gmap);
    }
    MBAR_INIT(SMEM(&bar), 1);
    ARRIVE_EXPECT(SMEM(&bar), 4096);
    TMA_LOAD_2D(SMEM(buf), gmap, 0, 0, SMEM(&bar));  // seed:tensormap_no_fence:load
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:tensormap_no_fence:wait
  copy_out(buf, out, 1024);
}

// The destination read before the wait (`early` = 1) or after it.
extern "C" __global__ void seed_read_before_wait(const __grid_constant__ CUtensorMap map, int early, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  start_stale_load(&map, buf, SMEM(&bar));
  if (early)
    for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = buf[i];  // seed:read_before_wait:read
  WAIT(SMEM(&bar), 0);  // seed:read_before_wait:wait
  if (!early)
    for (uint32_t i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = buf[i];
}

// A non-tensor bulk copy of `bytes` from `src` (size and source alignment seeds; 256 and
// 16-aligned for the twins). Also libcu++'s memcpy_async_tx preconditions.
extern "C" __global__ void seed_bulk(const uint8_t* src, uint32_t bytes, float* out) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) {
    MBAR_INIT(SMEM(&bar), 1);
    ARRIVE_EXPECT(SMEM(&bar), bytes);
    BULK_LOAD(SMEM(buf), src, bytes, SMEM(&bar));  // seed:bulk_size:copy seed:bulk_src_align:copy
  }
  __syncthreads();
  WAIT(SMEM(&bar), 0);  // seed:bulk_size:wait seed:bulk_src_align:wait
  copy_out(buf, out, bytes / 4);
}

// Clean: tile copy in → out, one 32 × 32 tile per iteration (the overhead measurement).
extern "C" __global__ void copy_tiles(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                                      int tiles_x, int tiles_y) {
  __shared__ uint64_t bar;
  float* buf = reinterpret_cast<float*>(aligned_smem());
  if (threadIdx.x == 0) MBAR_INIT(SMEM(&bar), 1);
  __syncthreads();
  uint32_t phase = 0;
  for (int t = blockIdx.x; t < tiles_x * tiles_y; t += gridDim.x, phase ^= 1) {
    const int x = (t % tiles_x) * 32, y = (t / tiles_x) * 32;
    if (threadIdx.x == 0) {
      ARRIVE_EXPECT(SMEM(&bar), 4096);
      TMA_LOAD_2D(SMEM(buf), &in, x, y, SMEM(&bar));
    }
    WAIT(SMEM(&bar), phase);
    if (threadIdx.x == 0) {
      TMA_STORE_2D(&out, x, y, SMEM(buf));
      COMMIT_GROUP();
      WAIT_GROUP_READ_0();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) WAIT_GROUP_0();
}
