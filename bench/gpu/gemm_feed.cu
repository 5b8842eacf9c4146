// GEMM operand feed (issue 17): the mainloop of a warp-specialised GEMM with the
// math taken out, across the whole GPU, so the regime where multicast pays is
// measured, not assumed. CTA (m, n) of a grid of output tiles streams the row
// panel A[m] (128 rows × K, bf16, K contiguous) and the column panel B[n]
// (128 rows × K) in k-blocks of 64: 16 KiB of A and 16 KiB of B per stage.
// Clusters of CX × CY CTAs: the CY CTAs of a cluster column share A[m], the CX
// CTAs of a cluster row share B[n]. Without multicast every CTA loads both tiles
// itself (L2 -> SM traffic = grid × tiles); with multicast CTA (cx, cy) loads
// slice cy of the A tile for its cluster column and slice cx of the B tile for
// its cluster row (as CUTLASS's multicast mainloop does), so L2 -> SM traffic
// drops by CY on A and CX on B. One producer thread, one consumer warp doing a
// word of work per stage; a slot is handed back to each CTA that wrote into it
// by Pipeline::consumer_release_writers (one .release.cta arrival per writer).
#include <cooperative_groups.h>

#include <vector>

#include "relay.cuh"

namespace bench {

namespace {

namespace cg = cooperative_groups;
constexpr uint32_t kRows = 128, kKBlock = 64, kTileBytes = kRows * kKBlock * 2;  // 16 KiB
constexpr uint32_t kStageBytes = 2 * kTileBytes;
constexpr int kStages = 6;

template <int CX, int CY>
__device__ inline uint32_t rank_of(uint32_t cx, uint32_t cy) {
  return cx + cy * CX;
}

// check != nullptr: the consumer sums every 32-bit word it received (A and B
// tiles of every k-block) into check[m * tiles_n + n]; otherwise it reads one
// word per lane per stage (the "trivial work" of a feed benchmark).
template <int CX, int CY, bool Multicast>
__global__ void __cluster_dims__(CX, CY, 1) __launch_bounds__(64)
    gemm_feed(const __grid_constant__ dev::MapHandle a, const __grid_constant__ dev::MapHandle b,
              uint32_t kblocks, uint32_t kpass, unsigned long long* check, uint32_t* sink) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<kStages> pipe;
  uint8_t* slots = align_1k(smem_raw);
  cg::cluster_group cluster = cg::this_cluster();
  const dim3 ci = cluster.block_index();
  const uint32_t cx = ci.x, cy = ci.y, m = blockIdx.x, n = blockIdx.y;
  // Writers into this CTA's slots = the CTAs it receives from: its cluster column
  // (A slices) and its cluster row (B slices), itself once.
  constexpr uint32_t kWriters = Multicast ? CX + CY - 1 : 1;
  if (threadIdx.x == 0) pipe.init(kWriters);
  uint16_t column_mask = 0, row_mask = 0;  // CTAs sharing A[m]; CTAs sharing B[n]
  for (uint32_t j = 0; j < CY; ++j) column_mask |= uint16_t(1u << rank_of<CX, CY>(cx, j));
  for (uint32_t i = 0; i < CX; ++i) row_mask |= uint16_t(1u << rank_of<CX, CY>(i, cy));
  const uint16_t writers = column_mask | row_mask;
  cluster.sync();
  dev::PipeState ps;
  if (threadIdx.x == 0) {
    for (uint32_t k = 0; k < kblocks; ++k) {
      uint8_t* slot = slots + ps.stage * kStageBytes;
      dev::wait_parity(&pipe.empty[ps.stage], ps.phase ^ 1);
      uint64_t* full = &pipe.full[ps.stage];
      dev::arrive_expect_tx(full, kStageBytes);  // both whole tiles land here in every mode
      const int32_t kc = int32_t((k % kpass) * kKBlock);  // passes over K (kblocks / kpass of them)
      if (Multicast && CY > 1) {
        const int32_t c[2] = {kc, int32_t(m * kRows + cy * (kRows / CY))};
        dev::load_tile_multicast(slot + cy * a.box_bytes, a, c, full, column_mask);
      } else {
        const int32_t c[2] = {kc, int32_t(m * kRows)};
        dev::load_tile(slot, a, c, full);
      }
      if (Multicast && CX > 1) {
        const int32_t c[2] = {kc, int32_t(n * kRows + cx * (kRows / CX))};
        dev::load_tile_multicast(slot + kTileBytes + cx * b.box_bytes, b, c, full, row_mask);
      } else {
        const int32_t c[2] = {kc, int32_t(n * kRows)};
        dev::load_tile(slot + kTileBytes, b, c, full);
      }
      ps.advance<kStages>();
    }
  } else if (threadIdx.x >= 32) {
    const uint32_t lane = threadIdx.x & 31;
    unsigned long long sum = 0;
    uint32_t acc = 0;
    for (uint32_t k = 0; k < kblocks; ++k) {
      dev::wait_parity(&pipe.full[ps.stage], ps.phase);
      const uint32_t* w = reinterpret_cast<const uint32_t*>(slots + ps.stage * kStageBytes);
      if (check) {
        for (uint32_t i = lane; i < kStageBytes / 4; i += 32) sum += w[i];
      } else {
        acc += w[lane];
      }
      __syncwarp();
      if constexpr (Multicast) {
        pipe.consumer_release_writers(ps, writers);
      } else if (lane == 0) {
        dev::arrive(&pipe.empty[ps.stage]);
      }
      ps.advance<kStages>();
    }
    if (check) {
      for (int d = 16; d; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
      if (lane == 0) check[m * gridDim.y + n] = sum;
    }
    if (acc == 0x9E3779B9u) *sink = acc;
  }
  cluster.sync();  // no CTA leaves while a peer may still write into it or arrive on it
}

// Sum of the 32-bit words of rows [r * 128, r * 128 + 128) of a rows × k bf16 matrix.
std::vector<unsigned long long> panel_sums(const Buf& x, uint32_t panels, uint32_t k) {
  std::vector<uint32_t> h(x.bytes / 4);
  BENCH_CUDA(cudaMemcpy(h.data(), x.p, x.bytes, cudaMemcpyDeviceToHost));
  std::vector<unsigned long long> s(panels, 0);
  const size_t words = size_t(kRows) * k / 2;
  for (uint32_t p = 0; p < panels; ++p)
    for (size_t i = 0; i < words; ++i) s[p] += h[p * words + i];
  return s;
}

struct Feed {
  const Buf& a;
  const Buf& b;
  uint32_t tiles_m, tiles_n, k, passes;
  std::vector<unsigned long long> sa, sb;  // reference panel sums, read back from the inputs
  Buf& check;
  Buf& sink;
};

template <int CX, int CY, bool Multicast>
void feed_case(Suite& s, const Feed& f) {
  const Buf &a = f.a, &b = f.b, &check = f.check, &sink = f.sink;
  const uint32_t tiles_m = f.tiles_m, tiles_n = f.tiles_n, k = f.k, passes = f.passes;
  const uint32_t kpass = k / kKBlock, kblocks = kpass * passes;
  const std::string wl = fmt("gemm feed %ux%u tiles, K=%u x%u", tiles_m, tiles_n, k, passes);
  const std::string impl = Multicast ? "tmakit multicast slices" : "each CTA loads A and B";
  const std::string cfg = fmt("cluster %dx%d, S%d", CX, CY, kStages);
  const uint32_t a_rows = Multicast ? kRows / CY : kRows, b_rows = Multicast ? kRows / CX : kRows;
  const dev::MapHandle ha = dev::make_map_handle(map_2d(a.p, DataType::bfloat16, k, uint64_t(tiles_m) * kRows, kKBlock, a_rows));
  const dev::MapHandle hb = dev::make_map_handle(map_2d(b.p, DataType::bfloat16, k, uint64_t(tiles_n) * kRows, kKBlock, b_rows));
  auto* kern = gemm_feed<CX, CY, Multicast>;
  const size_t smem = size_t(kStages) * kStageBytes + 1024;
  BENCH_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const dim3 grid(tiles_m, tiles_n);
  auto mismatches = [&] {
    std::vector<unsigned long long> got(size_t(tiles_m) * tiles_n);
    BENCH_CUDA(cudaMemcpy(got.data(), check.p, got.size() * 8, cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    for (uint32_t i = 0; i < tiles_m; ++i)
      for (uint32_t j = 0; j < tiles_n; ++j) bad += got[size_t(i) * tiles_n + j] != passes * (f.sa[i] + f.sb[j]);
    return bad;
  };
  const double ctas = double(tiles_m) * tiles_n;
  Row r{wl, impl, cfg, ctas * kblocks * kStageBytes};
  const double l2_sm = Multicast ? ctas * kblocks * kTileBytes * (1.0 / CY + 1.0 / CX) : r.bytes;
  r.note = fmt("(L2->SM %.0f MB)", l2_sm / 1e6);
  s.check_and_time(
      r, [&] { poison(check.p, check.bytes); },
      [&] { kern<<<grid, 64, smem>>>(ha, hb, kblocks, kpass, check.as<unsigned long long>(), sink.as<uint32_t>()); },
      mismatches, [&] { kern<<<grid, 64, smem>>>(ha, hb, kblocks, kpass, nullptr, sink.as<uint32_t>()); });
}

}  // namespace

void run_gemm_feed(Suite& s) {
  if (!s.wants("gemm")) return;
  // 16 × 8 = 128 output tiles (one CTA per SM, 6 stages of 32 KiB), K = 8192:
  // A 32 MiB, B 16 MiB, both within L2 (50 MB), so L2 -> SM is what is measured;
  // 8 passes over K so that one launch lasts ~0.4 ms.
  const uint32_t tiles_m = 16, tiles_n = 8, k = 8192, passes = 8;
  Buf a(size_t(tiles_m) * kRows * k * 2), b(size_t(tiles_n) * kRows * k * 2);
  Buf check(size_t(tiles_m) * tiles_n * 8), sink(4);
  fill_bf16(a.as<uint16_t>(), a.bytes / 2, s.next_seed());
  fill_bf16(b.as<uint16_t>(), b.bytes / 2, s.next_seed());
  const Feed f{a, b, tiles_m, tiles_n, k, passes, panel_sums(a, tiles_m, k), panel_sums(b, tiles_n, k), check, sink};
  feed_case<2, 1, false>(s, f);
  feed_case<2, 1, true>(s, f);
  feed_case<1, 2, false>(s, f);
  feed_case<1, 2, true>(s, f);
  feed_case<2, 2, false>(s, f);
  feed_case<2, 2, true>(s, f);
}

}  // namespace bench
