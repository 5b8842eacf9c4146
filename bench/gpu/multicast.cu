// Multicast: groups of CS CTAs (one cluster each, 128 or 256 CTAs in all) that
// all need the same 16 KiB tiles (a GEMM operand shared along a cluster).
// tmakit: load_tile_multicast, either each CTA loading 1/CS of every tile for all,
// or rank 0 broadcasting whole tiles; peer: every CTA loads every tile itself
// (the copies come from L2). Rate = bytes delivered
// to shared memory per second; L2 -> SM bytes are CS times fewer with multicast.
#include <cooperative_groups.h>

#include "relay.cuh"

namespace bench {

namespace {

namespace cg = cooperative_groups;
constexpr uint32_t kTileRows = 128, kRowBytes = 128, kTile = kTileRows * kRowBytes;  // bf16 64 × 128


// Mode 0: every CTA loads every tile itself (the peer). Mode 1: CTA r loads
// rows r/CS of each tile and multicasts them to all CS CTAs. Mode 2: the
// cluster's rank 0 loads the whole tile and multicasts it (one tile broadcast).
// cw: wait on the barriers that remote CTAs complete with cluster-scope acquire.
// rel: how consumers hand a slot back to the CTAs that write it. 0: lane 0 sends
// every remote arrival with .release.cluster (a cluster-scope fence each);
// 1: lane q sends the arrival for rank q with .release.cta (CUTLASS's
// ClusterBarrier::arrive(cta_id)); 2: as 1, and the full-barrier waits acquire at
// CTA scope too (the data is delivered by the async proxy to this CTA's barrier).
template <int CS, int Mode, int Stages>
__global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(64)
    mcast_feed(const __grid_constant__ dev::MapHandle m, uint32_t tiles_per_group, uint8_t* check, uint32_t* sink,
               int cw, int rel) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<Stages> pipe;
  uint8_t* slots = align_1k(smem_raw);
  cg::cluster_group cluster = cg::this_cluster();
  const uint32_t rank = cluster.block_rank(), group = blockIdx.x / CS;
  const bool remote = Mode != 0 && cw;
  // A slot is free for the CTA that writes it only when every CTA it writes to
  // has released it: mode 1, all CS consumers (remote arrivals); mode 2, the
  // leader collects CS arrivals and the others only their own.
  if (threadIdx.x == 0) pipe.init(Mode == 1 || (Mode == 2 && rank == 0) ? CS : 1);
  cluster.sync();
  dev::PipeState ps;
  if (threadIdx.x == 0) {
    for (uint32_t k = 0; k < tiles_per_group; ++k) {
      const uint32_t tile = group * tiles_per_group + k;
      uint8_t* slot = slots + ps.stage * kTile;
      dev::wait_parity(&pipe.empty[ps.stage], ps.phase ^ 1, 0, remote);
      uint64_t* full = &pipe.full[ps.stage];
      dev::arrive_expect_tx(full, kTile);  // the whole tile lands here in every mode
      if constexpr (Mode == 1) {
        const int32_t c[2] = {0, int32_t(tile * kTileRows + rank * (kTileRows / CS))};
        dev::load_tile_multicast(slot + rank * m.box_bytes, m, c, full, uint16_t((1u << CS) - 1));
      } else if constexpr (Mode == 2) {
        const int32_t c[2] = {0, int32_t(tile * kTileRows)};
        if (rank == 0) dev::load_tile_multicast(slot, m, c, full, uint16_t((1u << CS) - 1));
      } else {
        const int32_t c[2] = {0, int32_t(tile * kTileRows)};
        dev::load_tile(slot, m, c, full);
      }
      ps.advance<Stages>();
    }
  } else if (threadIdx.x >= 32) {
    uint32_t acc = 0;
    const int lane = threadIdx.x & 31;
    for (uint32_t k = 0; k < tiles_per_group; ++k) {
      dev::wait_parity(&pipe.full[ps.stage], ps.phase, kTile, Mode != 0 && rel < 2);
      const uint8_t* slot = slots + ps.stage * kTile;
      if (check) {
        uint4* dst = reinterpret_cast<uint4*>(check + (size_t(blockIdx.x) * tiles_per_group + k) * kTile);
        for (uint32_t i = lane; i < kTile / 16; i += 32) dst[i] = reinterpret_cast<const uint4*>(slot)[i];
      } else {
        acc += reinterpret_cast<const uint32_t*>(slot)[lane];
      }
      __syncwarp();
      uint64_t* e = &pipe.empty[ps.stage];
      if (Mode == 1 && rel > 0) {
        if (lane < CS) dev::arrive_cluster<dev::Scope::cta>(cluster.map_shared_rank(e, lane));
      } else if (Mode == 2 && rel > 0) {
        if (lane == 0) dev::arrive_cluster<dev::Scope::cta>(cluster.map_shared_rank(e, 0));
        if (lane == 1 && rank != 0) dev::arrive(e);
      } else if (lane == 0) {
        if constexpr (Mode == 1) {
          for (int q = 0; q < CS; ++q) dev::arrive_cluster(cluster.map_shared_rank(e, q));
        } else if constexpr (Mode == 2) {
          dev::arrive_cluster(cluster.map_shared_rank(e, 0));
          if (rank != 0) dev::arrive(e);
        } else {
          dev::arrive(e);
        }
      }
      ps.advance<Stages>();
    }
    if (acc == 0x9E3779B9u) *sink = acc;
  }
  cluster.sync();  // no CTA leaves while a peer may still write into it or arrive on it
}

__global__ void expect_k(const uint8_t* check, const uint8_t* x, uint32_t tiles_per_group, int cs, int grid,
                         unsigned long long* bad) {
  // check[b][k] must equal tile (b / cs) * tiles_per_group + k of x.
  const size_t per_cta = size_t(tiles_per_group) * kTile / 4;
  const size_t total = per_cta * grid;
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const size_t b = i / per_cta, off = i % per_cta;
    c += reinterpret_cast<const uint32_t*>(check)[i] !=
         reinterpret_cast<const uint32_t*>(x)[(b / cs) * per_cta + off];
  }
  if (c) atomicAdd(bad, c);
}

}  // namespace

template <int CS, int Mode, int S>
static void mcast_case(Suite& s, int kGrid, int cw, int rel, const Buf& x, uint32_t tiles, Buf& check, Buf& sink,
                       unsigned long long* bad) {
  constexpr bool Multicast = Mode == 1;
  const std::string wl = fmt("multicast 16K tiles, %d CTAs share", CS);
  const std::string impl = Mode == 1   ? "tmakit multicast, 1/CS each"
                           : Mode == 2 ? "tmakit multicast from rank 0"
                                       : "peer each CTA loads";
  const uint32_t groups = kGrid / CS, tpg = tiles / groups;
  const uint32_t rows = Multicast ? kTileRows / CS : kTileRows;
  const dev::MapHandle h =
      dev::make_map_handle(map_2d(x.p, DataType::bfloat16, kRowBytes / 2, uint64_t(tiles) * kTileRows, kRowBytes / 2, rows));
  auto* k = mcast_feed<CS, Mode, S>;
  const size_t smem = size_t(S) * kTile + 1024;
  BENCH_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const std::string cfg =
      fmt("S%d, %d clusters of %d, %u tiles each%s%s", S, groups, CS, tpg, Mode && cw ? ", cluster-scope waits" : "",
          Mode == 0 ? "" : rel == 0 ? ", releases .cluster" : rel == 1 ? ", releases .cta" : ", releases and full waits .cta");
  if (ctas_per_sm(k, 64, smem) * s.sms < kGrid) {
    std::printf("  skip %s %s: %d CTAs do not fit at once\n", wl.c_str(), cfg.c_str(), kGrid);
    return;
  }
  auto mismatches = [&] {
    BENCH_CUDA(cudaMemset(bad, 0, sizeof *bad));
    expect_k<<<132 * 8, 512>>>(check.as<uint8_t>(), x.as<uint8_t>(), tpg, CS, kGrid, bad);
    unsigned long long nbad = 0;
    BENCH_CUDA(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
    return uint64_t(nbad);
  };
  Row r{wl, impl, cfg, double(kGrid) * tpg * kTile};
  r.note = fmt("(L2->SM %.0f MB, DRAM %.0f MB)", r.bytes / (Mode ? CS : 1) / 1e6, double(tiles) * kTile / 1e6);
  s.check_and_time(
      r, [&] { poison(check.p, size_t(kGrid) * tpg * kTile); },
      [&] { k<<<kGrid, 64, smem>>>(h, tpg, check.as<uint8_t>(), sink.as<uint32_t>(), cw, rel); }, mismatches,
      [&] { k<<<kGrid, 64, smem>>>(h, tpg, nullptr, sink.as<uint32_t>(), cw, rel); });
}

void run_multicast(Suite& s) {
  if (!s.wants("multicast")) return;
  const uint32_t tiles = 4096;  // 64 MiB of bf16
  Buf x(size_t(tiles) * kTile), check(size_t(tiles) * kTile * 4), sink(4);
  unsigned long long* bad;
  BENCH_CUDA(cudaMalloc(&bad, sizeof *bad));
  fill_bf16(x.as<uint16_t>(), size_t(tiles) * kTile / 2, s.next_seed());
  // 128 CTAs (one per SM) with 6 stages; then cluster-scope waits on the barriers
  // that remote CTAs complete, 256 CTAs, and the leader-broadcast form.
  for (int grid : {128, 256}) {
    mcast_case<2, 0, 6>(s, grid, 0, 0, x, tiles, check, sink, bad);
    mcast_case<4, 0, 6>(s, grid, 0, 0, x, tiles, check, sink, bad);
    for (int cw : {0, 1})
      for (int rel : {0, 1, 2}) {
        if (s.quick && !(cw == 0 && rel == 2)) continue;  // --quick: the tuned form (.cta releases and waits)
        if (cw == 1 && rel == 2) continue;  // cluster-scope waits contradict .cta full waits' point
        mcast_case<2, 1, 6>(s, grid, cw, rel, x, tiles, check, sink, bad);
        mcast_case<4, 1, 6>(s, grid, cw, rel, x, tiles, check, sink, bad);
        mcast_case<2, 2, 6>(s, grid, cw, rel, x, tiles, check, sink, bad);
        mcast_case<4, 2, 6>(s, grid, cw, rel, x, tiles, check, sink, bad);
      }
  }
  cudaFree(bad);
}

}  // namespace bench
