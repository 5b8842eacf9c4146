// GEMM operand feed (issue 17): the mainloop of a warp-specialised GEMM with the
// math taken out, across the whole GPU, so the regime where multicast pays is
// measured, not assumed. CTA (m, n) of a grid of output tiles streams the row
// panel A[m] (128 rows × K, bf16, K contiguous) and the column panel B[n]
// (128 rows × K) in k-blocks of KB (64: 16 KiB of A and 16 KiB of B per stage,
// 6 stages; 32: 8 + 8 KiB, 12 stages: the same bytes in flight, twice the slots).
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
constexpr uint32_t kRows = 128;
template <uint32_t KB>
constexpr uint32_t kTileBytes = kRows * KB * 2;  // one bf16 tile of 128 rows × KB

template <int CX, int CY>
__device__ inline uint32_t rank_of(uint32_t cx, uint32_t cy) {
  return cx + cy * CX;
}

// Share: bit 0 = A slices multicast along the cluster column, bit 1 = B slices along
// the cluster row (3: both, CUTLASS's default; 1 or 2: one operand shared, the other
// loaded by each CTA itself; 0: no multicast). An operand is shared only where its
// cluster dimension holds more than one CTA.
template <int CX, int CY, int Share>
struct Sharing {
  static constexpr bool a = (Share & 1) && CY > 1, b = (Share & 2) && CX > 1;
};

// check != nullptr: the consumer sums every 32-bit word it received (A and B
// tiles of every k-block) into check[m * tiles_n + n]; otherwise it reads one
// word per lane per stage (the "trivial work" of a feed benchmark).
template <int CX, int CY, int Share, uint32_t KB, int Stages>
__global__ void __cluster_dims__(CX, CY, 1) __launch_bounds__(64)
    gemm_feed(const __grid_constant__ dev::MapHandle a, const __grid_constant__ dev::MapHandle b,
              uint32_t kblocks, uint32_t kpass, unsigned long long* check, uint32_t* sink) {
  constexpr uint32_t kTile = kTileBytes<KB>, kStageBytes = 2 * kTile;
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<Stages> pipe;
  uint8_t* slots = align_1k(smem_raw);
  cg::cluster_group cluster = cg::this_cluster();
  const dim3 ci = cluster.block_index();
  const uint32_t cx = ci.x, cy = ci.y, m = blockIdx.x, n = blockIdx.y;
  // Writers into this CTA's slots = the CTAs it receives from: its cluster column
  // (A slices) and its cluster row (B slices), itself once.
  constexpr bool kShareA = Sharing<CX, CY, Share>::a, kShareB = Sharing<CX, CY, Share>::b;
  constexpr uint32_t kWriters = 1 + (kShareA ? CY - 1 : 0) + (kShareB ? CX - 1 : 0);
  if (threadIdx.x == 0) pipe.init(kWriters);
  uint16_t column_mask = 0, row_mask = 0;  // CTAs sharing A[m]; CTAs sharing B[n]
  for (uint32_t j = 0; j < CY; ++j) column_mask |= uint16_t(1u << rank_of<CX, CY>(cx, j));
  for (uint32_t i = 0; i < CX; ++i) row_mask |= uint16_t(1u << rank_of<CX, CY>(i, cy));
  const uint16_t writers = uint16_t(1u << rank_of<CX, CY>(cx, cy)) | (kShareA ? column_mask : 0) |
                           (kShareB ? row_mask : 0);
  cluster.sync();
  dev::PipeState ps;
  if (threadIdx.x == 0) {
    for (uint32_t k = 0; k < kblocks; ++k) {
      uint8_t* slot = slots + ps.stage * kStageBytes;
      uint64_t* full = pipe.producer_acquire(ps, kStageBytes);  // both whole tiles land here in every mode
      const int32_t kc = int32_t((k % kpass) * KB);  // passes over K (kblocks / kpass of them)
      if (kShareA) {
        const int32_t c[2] = {kc, int32_t(m * kRows + cy * (kRows / CY))};
        dev::load_tile_multicast(slot + cy * a.box_bytes, a, c, full, column_mask);
      } else {
        const int32_t c[2] = {kc, int32_t(m * kRows)};
        dev::load_tile(slot, a, c, full);
      }
      if (kShareB) {
        const int32_t c[2] = {kc, int32_t(n * kRows + cx * (kRows / CX))};
        dev::load_tile_multicast(slot + kTile + cx * b.box_bytes, b, c, full, row_mask);
      } else {
        const int32_t c[2] = {kc, int32_t(n * kRows)};
        dev::load_tile(slot + kTile, b, c, full);
      }
      ps.advance<Stages>();
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
      if constexpr (kShareA || kShareB) {
        pipe.consumer_release_writers(ps, writers);
      } else if (lane == 0) {
        dev::arrive(&pipe.empty[ps.stage]);
      }
      ps.advance<Stages>();
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

template <int CX, int CY, int Share, uint32_t KB = 64, int Stages = 6>
void feed_case(Suite& s, const Feed& f) {
  constexpr uint32_t kStageBytes = 2 * kTileBytes<KB>;
  const Buf &a = f.a, &b = f.b, &check = f.check, &sink = f.sink;
  const uint32_t tiles_m = f.tiles_m, tiles_n = f.tiles_n, k = f.k, passes = f.passes;
  const uint32_t kpass = k / KB, kblocks = kpass * passes;
  const std::string wl = fmt("gemm feed %ux%u tiles, K=%u x%u", tiles_m, tiles_n, k, passes);
  constexpr bool kShareA = Sharing<CX, CY, Share>::a, kShareB = Sharing<CX, CY, Share>::b;
  const std::string impl = !kShareA && !kShareB ? "each CTA loads A and B"
                           : kShareA && kShareB ? "tmakit multicast slices"
                           : kShareA            ? "tmakit multicast A slices, B loaded"
                                                : "tmakit multicast B slices, A loaded";
  const std::string cfg = fmt("cluster %dx%d, k-block %u, S%d", CX, CY, KB, Stages);
  const uint32_t a_rows = kShareA ? kRows / CY : kRows, b_rows = kShareB ? kRows / CX : kRows;
  const dev::MapHandle ha =
      dev::make_map_handle(map_2d(a.p, DataType::bfloat16, k, uint64_t(tiles_m) * kRows, KB, a_rows));
  const dev::MapHandle hb =
      dev::make_map_handle(map_2d(b.p, DataType::bfloat16, k, uint64_t(tiles_n) * kRows, KB, b_rows));
  auto* kern = gemm_feed<CX, CY, Share, KB, Stages>;
  const size_t smem = size_t(Stages) * kStageBytes + 1024;
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
  const double l2_sm =
      ctas * kblocks * kTileBytes<KB> * ((kShareA ? 1.0 / CY : 1.0) + (kShareB ? 1.0 / CX : 1.0));
  r.note = fmt("(L2->SM %.0f MB)", l2_sm / 1e6);
  s.check_and_time(
      r, [&] { poison(check.p, check.bytes); },
      [&] { kern<<<grid, 64, smem>>>(ha, hb, kblocks, kpass, check.as<unsigned long long>(), sink.as<uint32_t>()); },
      mismatches, [&] { kern<<<grid, 64, smem>>>(ha, hb, kblocks, kpass, nullptr, sink.as<uint32_t>()); });
}

}  // namespace

void run_gemm_feed(Suite& s) {
  if (!s.wants("gemm")) return;
  // 16 × 8 = 128 output tiles (one CTA per SM, 192 KiB of stages), two working sets:
  //  - K = 8192: A 32 MiB and B 16 MiB, both within L2 (50 MB), so L2 -> SM is what is
  //    measured; 8 passes over K so that one launch lasts ~0.4 ms;
  //  - K = 65536, one pass: A 256 MiB and B 128 MiB, 8 times L2: the panels stream from
  //    DRAM, and the CTAs that share a panel read it at about the same time.
  // Each cluster shape with 64-wide k-blocks in 6 stages and 32-wide in 12 (--quick: the 64s
  // and the 2 × 2 32s).
  const uint32_t tiles_m = 16, tiles_n = 8;
  for (const auto& [k, passes] : {std::pair<uint32_t, uint32_t>{8192, 8}, {65536, 1}}) {
    Buf a(size_t(tiles_m) * kRows * k * 2), b(size_t(tiles_n) * kRows * k * 2);
    Buf check(size_t(tiles_m) * tiles_n * 8), sink(4);
    fill_bf16(a.as<uint16_t>(), a.bytes / 2, s.next_seed());
    fill_bf16(b.as<uint16_t>(), b.bytes / 2, s.next_seed());
    const Feed f{a, b, tiles_m, tiles_n, k, passes, panel_sums(a, tiles_m, k), panel_sums(b, tiles_n, k), check, sink};
    feed_case<2, 1, 0>(s, f);
    feed_case<2, 1, 3>(s, f);
    feed_case<1, 2, 0>(s, f);
    feed_case<1, 2, 3>(s, f);
    feed_case<2, 2, 0>(s, f);
    feed_case<2, 2, 3>(s, f);
    feed_case<2, 2, 1>(s, f);  // 2 × 2 sharing one operand: two writers a slot instead of three
    feed_case<2, 2, 2>(s, f);
    feed_case<2, 2, 0, 32, 12>(s, f);
    feed_case<2, 2, 3, 32, 12>(s, f);
    if (s.quick) continue;
    feed_case<2, 1, 0, 32, 12>(s, f);
    feed_case<2, 1, 3, 32, 12>(s, f);
    feed_case<1, 2, 0, 32, 12>(s, f);
    feed_case<1, 2, 3, 32, 12>(s, f);
  }
}

}  // namespace bench
