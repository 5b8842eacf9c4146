// The pipeline helpers the benchmark suite tuned (include/tmakit/device/pipeline.cuh):
// Relay<Stages, Lag> (one-thread load -> store relay gated by wait_group.read)
// Pipeline::consumer_release_warp and Pipeline::consumer_release_writers
// (multicast slices in a cluster of 4), and cta_copy_bulk_load. Each case is checked
// against values computed here on the host. Not a ctest test (CI has no GPU): scripts/gpu-bench.sh
// runs it on the device machine before the suite. Exit 0 = pass.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "gpu_check.cuh"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
using tmakit::tensor_map::DataType;
using tmakit::tensor_map::TensorMap;

// A 256 × 96 uint32 tensor, boxes of 32 × 8 (1 KiB): 8 × 12 = 96 tiles.
constexpr int W = 256, H = 96, BX = 32, BY = 8, TX = W / BX, TILES = TX * (H / BY), K = 3;

// Tiles t = blockIdx.x, blockIdx.x + gridDim.x, ... copied (Reduce = false) or,
// for Reduce, item = tile × K + k adds part k of the 3-D input into `out`.
template <int S, int L, bool Reduce>
__global__ void relay_tiles(const __grid_constant__ dev::MapHandle in, const __grid_constant__ dev::MapHandle out,
                            int items) {
  __shared__ alignas(128) uint8_t slots[S][BX * BY * 4];
  __shared__ dev::Relay<S, L> relay;
  if (threadIdx.x != 0) return;
  relay.init();
  const int n = items > int(blockIdx.x) ? (items - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x) : 0;
  const int per = Reduce ? K : 1;
  auto xy = [&](uint32_t k, int32_t& x, int32_t& y) {
    const int t = (int(blockIdx.x) + int(k) * int(gridDim.x)) / per;
    x = (t % TX) * BX, y = (t / TX) * BY;
  };
  relay.run(
      uint32_t(n), in, 1,
      [&](uint32_t k, uint32_t s, uint64_t* bar) {
        int32_t x, y;
        xy(k, x, y);
        if constexpr (Reduce) {
          const int32_t c[3] = {x, y, (int(blockIdx.x) + int(k) * int(gridDim.x)) % K};
          dev::load_tile(slots[s], in, c, bar);
        } else {
          const int32_t c[2] = {x, y};
          dev::load_tile(slots[s], in, c, bar);
        }
      },
      [&](uint32_t k, uint32_t s) {
        int32_t x, y;
        xy(k, x, y);
        const int32_t c[2] = {x, y};
        if constexpr (Reduce) dev::reduce_tile(cuda::ptx::op_add, out, c, slots[s]);
        else dev::store_tile(out, c, slots[s]);
      });
}

// 1-D: `chunks` chunks of 512 bytes, bulk loads and bulk stores.
template <int S, int L>
__global__ void relay_bulk(const uint8_t* src, uint8_t* dst, int chunks) {
  __shared__ alignas(128) uint8_t slots[S][512];
  __shared__ dev::Relay<S, L> relay;
  if (threadIdx.x != 0) return;
  relay.init();
  relay.run(
      uint32_t(chunks), 512u, [&](uint32_t k, uint32_t s, uint64_t* bar) { dev::bulk_load(slots[s], src + k * 512, 512, bar); },
      [&](uint32_t k, uint32_t s) { dev::bulk_store(dst + k * 512, slots[s], 512); });
}

// cta_copy_bulk_load: CTA b copies item b (Bytes) of src to dst, with the launch's threads.
template <uint32_t Bytes>
__global__ void cta_copy(const uint8_t* src, uint8_t* dst) {
  __shared__ alignas(128) uint4 buf[Bytes / 16];
  __shared__ uint64_t bar;
  const size_t base = size_t(blockIdx.x) * Bytes;
  dev::cta_copy_bulk_load<Bytes>(dst + base, src + base, buf, &bar);
}

// Pipeline<3> with 4 consumer warps releasing once per warp: warp w sums column
// block w of each of `n` boxes (rows 0..7 of the box, 8 columns each).
__global__ void warp_release(const __grid_constant__ dev::MapHandle in, int n, uint32_t* sums) {
  __shared__ alignas(128) uint32_t slots[3][BX * BY];
  __shared__ dev::Pipeline<3> pipe;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) pipe.init(4);
  __syncthreads();
  dev::PipeState ps;
  if (warp == 4) {
    if (lane == 0)
      for (int k = 0; k < n; ++k) {
        uint64_t* full = pipe.producer_acquire(ps, in);
        const int32_t c[2] = {(k % TX) * BX, (k / TX) * BY};
        dev::load_tile(slots[ps.stage], in, c, full);
        ps.advance<3>();
      }
    return;
  }
  for (int k = 0; k < n; ++k) {
    pipe.consumer_wait(ps, in.box_bytes);
    uint32_t v = 0;
    for (int e = lane; e < 64; e += 32) v += slots[ps.stage][(e / 8) * BX + warp * 8 + e % 8];
    for (int o = 16; o; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    pipe.consumer_release_warp(ps);
    if (lane == 0) sums[k * 4 + warp] = v;
    ps.advance<3>();
  }
}

// consumer_release_writers: a cluster of 4 CTAs shares every box; CTA r loads rows
// [2r, 2r + 2) of it for all four (multicast), so each CTA's slot has 4 writers and
// each writer's empty barrier hears 2 consumer warps × 4 CTAs.
__global__ void __cluster_dims__(4, 1, 1) multicast_release(const __grid_constant__ dev::MapHandle slice, int n,
                                                             uint32_t* sums) {
  __shared__ alignas(128) uint32_t slots[3][BX * BY];
  __shared__ dev::Pipeline<3> pipe;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const uint32_t rank = cluster.block_rank();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) pipe.init(2 * 4);
  cluster.sync();
  dev::PipeState ps;
  if (warp == 2) {
    if (lane == 0)
      for (int k = 0; k < n; ++k) {
        uint64_t* full = pipe.producer_acquire(ps, slice, 4);  // 4 slices land in every CTA
        const int32_t c[2] = {(k % TX) * BX, (k / TX) * BY + int32_t(rank) * 2};
        dev::load_tile_multicast(&slots[ps.stage][rank * 2 * BX], slice, c, full, uint16_t(0xF));
        ps.advance<3>();
      }
  } else {
    for (int k = 0; k < n; ++k) {
      pipe.consumer_wait(ps, 4 * slice.box_bytes);
      uint32_t v = 0;
      for (int e = lane; e < 128; e += 32) v += slots[ps.stage][(e / 16) * BX + warp * 16 + e % 16];
      for (int o = 16; o; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
      pipe.consumer_release_writers(ps, 0xF);
      if (lane == 0) sums[(blockIdx.x * n + k) * 2 + warp] = v;
      ps.advance<3>();
    }
  }
  cluster.sync();  // no CTA leaves while a peer may still write into it or arrive on it
}

static TensorMap map2(void* p, int rank) {
  TensorMap m;
  m.data_type = DataType::uint32;
  m.rank = rank;
  m.global_address = reinterpret_cast<uint64_t>(p);
  m.dims = {W, H, K};
  m.strides = {W * 4, uint64_t(W) * H * 4};
  m.box = {BX, BY, 1};
  return m;
}

static uint32_t value(uint32_t i) { return i * 2654435761u + 12345u; }  // never a constant pattern

template <int S, int L>
static int copy_case(uint32_t* in, uint32_t* out, const std::vector<uint32_t>& host, int grid, const char* name) {
  CUDA_OK(cudaMemset(out, 0xFF, W * H * 4));
  relay_tiles<S, L, false><<<grid, 32>>>(dev::make_map_handle(map2(in, 2)), dev::make_map_handle(map2(out, 2)), TILES);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> got(W * H);
  CUDA_OK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
  check(std::memcmp(got.data(), host.data(), got.size() * 4) == 0, name);
  return 0;
}

int main() {
  std::vector<uint32_t> host(W * H * K);
  for (size_t i = 0; i < host.size(); ++i) host[i] = value(uint32_t(i));
  uint32_t *in, *out, *sums;
  CUDA_OK(cudaMalloc(&in, host.size() * 4));
  CUDA_OK(cudaMalloc(&out, W * H * 4));
  CUDA_OK(cudaMalloc(&sums, TILES * 4 * 4));
  CUDA_OK(cudaMemcpy(in, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  const std::vector<uint32_t> first(host.begin(), host.begin() + W * H);

  // 96 tiles over 5 CTAs: 19 or 20 items each, not a multiple of any stage count.
  if (copy_case<2, 0>(in, out, first, 5, "Relay<2,0>: 96 tiles over 5 CTAs, store_tile")) return 1;
  if (copy_case<3, 1>(in, out, first, 5, "Relay<3,1>")) return 1;
  if (copy_case<4, 3>(in, out, first, 7, "Relay<4,3>: lag = stages - 1")) return 1;
  if (copy_case<6, 1>(in, out, first, 5, "Relay<6,1>")) return 1;
  // More CTAs than items: some CTAs get fewer items than stages, some none.
  if (copy_case<6, 2>(in, out, first, 128, "Relay<6,2>: 128 CTAs for 96 tiles (n < stages, n = 0)")) return 1;

  // Split-K: out = init + sum of K parts, through reduce_tile(add) (uint32 add wraps: exact).
  {
    std::vector<uint32_t> init(W * H), want(W * H);
    for (int i = 0; i < W * H; ++i) {
      init[i] = value(uint32_t(i) ^ 0x5A5A5A5Au);
      want[i] = init[i];
      for (int k = 0; k < K; ++k) want[i] += host[size_t(k) * W * H + i];
    }
    CUDA_OK(cudaMemcpy(out, init.data(), init.size() * 4, cudaMemcpyHostToDevice));
    relay_tiles<4, 1, true><<<6, 32>>>(dev::make_map_handle(map2(in, 3)), dev::make_map_handle(map2(out, 2)), TILES * K);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(W * H);
    CUDA_OK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
    check(got == want, "Relay<4,1> (the defaults): tile loads + reduce_tile(add) of K = 3 parts");
  }
  // 1-D bulk relay: 67 chunks of 512 bytes (not a multiple of 4).
  {
    const int chunks = 67;
    CUDA_OK(cudaMemset(out, 0xFF, W * H * 4));
    relay_bulk<4, 2><<<1, 32>>>(reinterpret_cast<const uint8_t*>(in), reinterpret_cast<uint8_t*>(out), chunks);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(W * H);
    CUDA_OK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < W * H; ++i) ok &= got[i] == (i < chunks * 128 ? host[i] : 0xFFFFFFFFu);
    check(ok, "Relay<4,2>: 67 bulk chunks, bytes past the last chunk untouched");
  }
  // cta_copy_bulk_load: 23 items of 1 KiB with 256 threads (each thread stores 16 bytes
  // or none), then 5 items of 4 KiB with 96 threads (some threads store 3 chunks, some 2).
  {
    auto run = [&](auto kernel, int items, int threads, uint32_t bytes, const char* name) -> int {
      CUDA_OK(cudaMemset(out, 0xFF, W * H * 4));
      kernel<<<items, threads>>>(reinterpret_cast<const uint8_t*>(in), reinterpret_cast<uint8_t*>(out));
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<uint32_t> got(W * H);
      CUDA_OK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
      const size_t words = size_t(items) * bytes / 4;
      bool ok = true;
      for (size_t i = 0; i < got.size(); ++i) ok &= got[i] == (i < words ? host[i] : 0xFFFFFFFFu);
      check(ok, name);
      return 0;
    };
    if (run(cta_copy<1024>, 23, 256, 1024,
            "cta_copy_bulk_load<1024>: 23 CTAs of 256 threads, bytes past the last item untouched"))
      return 1;
    if (run(cta_copy<4096>, 5, 96, 4096, "cta_copy_bulk_load<4096>: 5 CTAs of 96 threads")) return 1;
  }
  // consumer_release_warp: 40 boxes through 3 slots, 4 consumer warps.
  {
    const int n = 40;
    warp_release<<<1, 160>>>(dev::make_map_handle(map2(in, 2)), n, sums);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(n * 4);
    CUDA_OK(cudaMemcpy(got.data(), sums, got.size() * 4, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int k = 0; k < n; ++k)
      for (int w = 0; w < 4; ++w) {
        uint32_t s = 0;
        for (int y = 0; y < BY; ++y)
          for (int x = 0; x < 8; ++x) s += host[size_t((k / TX) * BY + y) * W + (k % TX) * BX + w * 8 + x];
        ok &= got[k * 4 + w] == s;
      }
    check(ok, "Pipeline<3>::consumer_release_warp: 40 boxes, 4 warps, one arrival each");
  }
  // consumer_release_writers: 30 boxes through 3 slots, 2 clusters of 4 CTAs.
  {
    const int n = 30, ctas = 8;
    TensorMap m = map2(in, 2);
    m.box = {BX, 2, 1};
    uint32_t* msums;
    CUDA_OK(cudaMalloc(&msums, size_t(ctas) * n * 2 * 4));
    multicast_release<<<ctas, 96>>>(dev::make_map_handle(m), n, msums);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(size_t(ctas) * n * 2);
    CUDA_OK(cudaMemcpy(got.data(), msums, got.size() * 4, cudaMemcpyDeviceToHost));
    cudaFree(msums);
    bool ok = true;
    for (int b = 0; b < ctas; ++b)
      for (int k = 0; k < n; ++k)
        for (int w = 0; w < 2; ++w) {
          uint32_t s = 0;
          for (int y = 0; y < BY; ++y)
            for (int x = 0; x < 16; ++x) s += host[size_t((k / TX) * BY + y) * W + (k % TX) * BX + w * 16 + x];
          ok &= got[(size_t(b) * n + k) * 2 + w] == s;
        }
    check(ok, "Pipeline<3>::consumer_release_writers: 30 boxes, each CTA of 4 multicasts a quarter, 2 warps each");
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASSED", failures);
  return failures ? 1 : 0;
}
