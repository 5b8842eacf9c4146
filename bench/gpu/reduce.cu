// Split-K reduce-add: out += P_0 + ... + P_{K-1}, f32 8192 × 8192, K = 4.
// Bytes that must move: K partials read + out read + out written = (K + 2) × 256 MiB.
// tmakit, two forms, both ending in cp.reduce.async.bulk.tensor .add into out
// (the add happens in L2, so out's tile is read from DRAM once and written once):
//  - relay: Relay over (tile, part) items, each part's tile reduced into out
//    (K L2 reductions per element);
//  - smem-sum: one 3-D load brings all K parts of a tile, consumer warps add
//    them in registers, one reduce_tile per tile (1 L2 reduction per element).
// and a third that moves the bytes as the read-add-write peer does:
//  - tile read-add-write: the 3-D load of the K parts and a tile load of out land
//    on the same barrier, consumer warps add all K + 1, one store_tile per tile
//    (no L2 reduction at all).
// Each either over a persistent grid or a non-persistent one (tiles / N CTAs of
// N consecutive tiles: the grid shape that took the copies from 0.95 to 0.99x).
// Peers: a read-add-write kernel and a float4 atomicAdd kernel.
#include "relay.cuh"

namespace bench {

namespace {

constexpr uint32_t kW = 8192, kH = 8192, kK = 4;
constexpr size_t kElems = size_t(kW) * kH;

__global__ void reference_k(const float* init, const float* parts, float* ref, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float s = init[i];
    for (uint32_t k = 0; k < kK; ++k) s += parts[k * n + i];
    ref[i] = s;
  }
}

// Read-add-write: one float4 of out per thread per step, all K partials loaded first.
__global__ void raw_reduce(const float4* __restrict__ parts, float4* __restrict__ out, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 p[kK];
#pragma unroll
    for (uint32_t k = 0; k < kK; ++k) p[k] = __ldcs(parts + k * n4 + i);
    float4 o = out[i];
#pragma unroll
    for (uint32_t k = 0; k < kK; ++k) o.x += p[k].x, o.y += p[k].y, o.z += p[k].z, o.w += p[k].w;
    out[i] = o;
  }
}

// atomicAdd of float4 (sm_90: vector atomics on global memory), K per element.
__global__ void atomic_reduce(const float4* __restrict__ parts, float4* out, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
#pragma unroll
    for (uint32_t k = 0; k < kK; ++k) atomicAdd(out + i, __ldcs(parts + k * n4 + i));
  }
}

struct RCfg {
  uint32_t bx, by;
  int stages, lag, ctas, hint, order;
};

__device__ inline void consumers_sync(int threads) { asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory"); }

// smem-sum form: warp-specialised (warp 8 produces), Pipeline<Stages> of 3-D
// boxes {BX, BY, K}; 256 consumer threads sum the K parts into one of two
// output buffers, one thread issues reduce_tile(add) (the same store protocol
// as the transpose: the previous tile's reduction has read the other buffer
// before the barrier).
template <int Stages, uint32_t BX, uint32_t BY, bool LoadOut = false>
__global__ void __launch_bounds__(288) tma_splitk(const __grid_constant__ dev::MapHandle in,
                                                  const __grid_constant__ dev::MapHandle out, uint32_t tiles_x,
                                                  uint32_t tiles, int order) {
  constexpr uint32_t kOut = BX * BY * 4, kIn = kOut * kK, kF4 = BX * BY / 4;
  constexpr uint32_t kStage = LoadOut ? kIn + kOut : kIn;  // K parts, then out's tile
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<Stages> pipe;
  uint8_t* in_s = align_1k(smem_raw);
  uint8_t* out_s = in_s + Stages * kStage;
  const int tid = threadIdx.x;
  if (tid == 0) pipe.init(8);
  __syncthreads();
  uint32_t first, n, step;
  cta_items(tiles, order, first, n, step);
  dev::PipeState ps;
  if (tid >= 256) {
    if (tid == 256)
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t t = first + k * step;
        uint64_t* full = pipe.producer_acquire(ps, kStage);
        const int32_t c[3] = {int32_t((t % tiles_x) * BX), int32_t((t / tiles_x) * BY), 0};
        dev::load_tile(in_s + ps.stage * kStage, in, c, full);
        if constexpr (LoadOut) {
          const int32_t c2[2] = {c[0], c[1]};
          dev::load_tile(in_s + ps.stage * kStage + kIn, out, c2, full);
        }
        ps.advance<Stages>();
      }
    return;
  }
  uint32_t buf = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t t = first + k * step;
    pipe.consumer_wait(ps, kStage);
    const float4* src = reinterpret_cast<const float4*>(in_s + ps.stage * kStage);
    float4* dst = reinterpret_cast<float4*>(out_s + buf * kOut);
#pragma unroll
    for (uint32_t i = tid; i < kF4; i += 256) {
      float4 acc = src[i];
#pragma unroll
      for (uint32_t p = 1; p < (LoadOut ? kK + 1 : kK); ++p) {  // part K of a LoadOut stage is out
        const float4 v = src[p * kF4 + i];
        acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
      }
      dst[i] = acc;
    }
    pipe.consumer_release_warp(ps);
    dev::fence_proxy_async_shared();
    if (tid == 0) dev::wait_group_read<0>();
    consumers_sync(256);
    if (tid == 0) {
      const int32_t c[2] = {int32_t((t % tiles_x) * BX), int32_t((t / tiles_x) * BY)};
      if constexpr (LoadOut) dev::store_tile(out, c, out_s + buf * kOut);
      else dev::reduce_tile(cuda::ptx::op_add, out, c, out_s + buf * kOut);
      dev::commit_group();
    }
    buf ^= 1;
    ps.advance<Stages>();
  }
  if (tid == 0) dev::wait_group<0>();
}

}  // namespace

void run_reduce(Suite& s) {
  if (!s.wants("reduce")) return;
  const std::string wl = "split-K reduce-add K=4 8192^2 f32";
  const size_t bytes = kElems * 4;
  Buf parts(bytes * kK), init(bytes), out(bytes), ref(bytes);
  const double moved = double(kK + 2) * bytes;
  // out is read as well as written (out += ...): it starts as a random `init`, not poison.
  auto timed = [&](const std::function<void()>& launch, const std::string& impl, const std::string& cfg) {
    auto prepare = [&] {
      fill_f32(parts.as<float>(), kElems * kK, s.next_seed());
      fill_f32(init.as<float>(), kElems, s.next_seed());
      reference_k<<<132 * 8, 512>>>(init.as<float>(), parts.as<float>(), ref.as<float>(), kElems);
      BENCH_CUDA(cudaMemcpy(out.p, init.p, bytes, cudaMemcpyDeviceToDevice));
    };
    s.check_and_time(Row{wl, impl, cfg, moved}, prepare, launch,
                     [&] { return count_diff_u32(out.p, ref.p, bytes); }, launch);
  };
  std::vector<RCfg> sweep{{256, 32, 6, 1, 1, 0, 0}};
  if (!s.quick)
    for (RCfg c : std::vector<RCfg>{{256, 32, 6, 1, 1, 0, 1},
                                    {256, 32, 6, 2, 1, 0, 0},
                                    {256, 32, 4, 1, 1, 0, 0},
                                    {256, 16, 12, 2, 1, 0, 0},
                                    {256, 16, 6, 1, 2, 0, 0},
                                    {256, 32, 3, 1, 2, 0, 0},
                                    {128, 64, 6, 1, 1, 0, 0},
                                    {256, 32, 6, 1, 1, 1, 0},
                                    {256, 64, 3, 1, 1, 0, 0}})
      sweep.push_back(c);
  for (const RCfg& c : sweep) {
    TensorMap mp = map_2d(parts.p, DataType::float32, kW, kH, c.bx, c.by);
    mp.rank = 3;
    mp.dims[2] = kK;
    mp.strides[1] = bytes;
    mp.box[2] = 1;
    const dev::MapHandle hp = dev::make_map_handle(mp);
    const dev::MapHandle ho = dev::make_map_handle(map_2d(out.p, DataType::float32, kW, kH, c.bx, c.by));
    RelayArgs a;
    a.tiles_x = kW / c.bx, a.tiles_y = kH / c.by, a.parts = kK, a.items = a.tiles_x * a.tiles_y * kK;
    a.bx = c.bx, a.by = c.by, a.hint = c.hint, a.order = c.order;
    a.slot_bytes = (hp.box_bytes + 1023) & ~1023u;
    std::function<void()> launch;
    std::string why;
    const std::string cfg = fmt("box %ux%u S%d L%d %dcta/SM hint%d %s", c.bx, c.by, c.stages, c.lag, c.ctas, c.hint,
                                c.order ? "chunked" : "strided");
    if (!launch_relay<RelayOp::reduce3d>(c.stages, c.lag, c.ctas, 0, hp, ho, a, s.sms, launch, why)) {
      std::printf("  skip %s %s: %s\n", wl.c_str(), cfg.c_str(), why.c_str());
      continue;
    }
    timed(launch, "tmakit tma load + reduce.add", cfg);
  }
  // smem-sum (and tile read-add-write) forms: box {BX, BY, K}, stages, grid and order swept.
  // per_cta > 0: a non-persistent grid of tiles / per_cta CTAs, each per_cta consecutive
  // tiles (ctas is then the least number of CTAs per SM that must fit).
  auto splitk = [&](auto kernel, bool load_out, uint32_t bx, uint32_t by, int stages, int ctas, int order,
                    int per_cta) {
    TensorMap mp = map_2d(parts.p, DataType::float32, kW, kH, bx, by);
    mp.rank = 3;
    mp.dims[2] = kK;
    mp.strides[1] = bytes;
    mp.box[2] = kK;
    const dev::MapHandle hp = dev::make_map_handle(mp);
    const dev::MapHandle ho = dev::make_map_handle(map_2d(out.p, DataType::float32, kW, kH, bx, by));
    // stages of K parts (+ out's tile) and 2 sums
    const size_t smem = size_t(stages * (kK + (load_out ? 1 : 0)) + 2) * bx * by * 4 + 1024;
    const uint32_t tiles_x = kW / bx, tiles = tiles_x * (kH / by);
    const int grid = per_cta ? int(tiles / per_cta) : ctas * s.sms;
    const std::string shape =
        per_cta ? fmt("grid tiles/%d", per_cta) : fmt("%dcta/SM %s", ctas, order ? "chunked" : "strided");
    const std::string cfg = fmt("box %ux%ux%u S%d %s", bx, by, kK, stages, shape.c_str());
    const int fit = smem <= 227 * 1024 ? ctas_per_sm(kernel, 288, smem) : 0;
    if (fit < ctas) {
      std::printf("  skip %s %s: %d CTAs/SM fit\n", wl.c_str(), cfg.c_str(), fit);
      return;
    }
    if (per_cta) order = 1;
    timed([=] { kernel<<<grid, 288, smem>>>(hp, ho, tiles_x, tiles, order); },
          load_out ? "tmakit tma tile read-add-write" : "tmakit tma smem-sum + reduce.add", cfg);
  };
  // --quick: the best of each form (one tile per CTA, non-persistent).
  splitk(tma_splitk<1, 64, 32>, false, 64, 32, 1, 3, 0, 1);
  splitk(tma_splitk<1, 64, 32, true>, true, 64, 32, 1, 3, 0, 1);
  if (!s.quick) {
    splitk(tma_splitk<4, 64, 32>, false, 64, 32, 4, 1, 0, 0);
    splitk(tma_splitk<4, 64, 32>, false, 64, 32, 4, 1, 1, 0);
    splitk(tma_splitk<3, 64, 32>, false, 64, 32, 3, 2, 0, 0);
    splitk(tma_splitk<6, 64, 16>, false, 64, 16, 6, 1, 0, 0);
    splitk(tma_splitk<3, 64, 16>, false, 64, 16, 3, 3, 0, 0);
    splitk(tma_splitk<4, 128, 16>, false, 128, 16, 4, 1, 0, 0);
    splitk(tma_splitk<2, 64, 32>, false, 64, 32, 2, 2, 0, 0);
    // Non-persistent grids (smem: S1 48 KiB, S2 80 KiB for 64 × 32; S2 40 KiB for 64 × 16).
    splitk(tma_splitk<2, 64, 32>, false, 64, 32, 2, 2, 0, 2);
    splitk(tma_splitk<2, 64, 16>, false, 64, 16, 2, 4, 0, 2);
    splitk(tma_splitk<2, 64, 16>, false, 64, 16, 2, 4, 0, 4);
    splitk(tma_splitk<2, 64, 32, true>, true, 64, 32, 2, 2, 0, 2);
    splitk(tma_splitk<4, 64, 32, true>, true, 64, 32, 4, 1, 0, 0);
    splitk(tma_splitk<2, 64, 16, true>, true, 64, 16, 2, 4, 0, 2);
    splitk(tma_splitk<2, 64, 16, true>, true, 64, 16, 2, 4, 0, 4);
    splitk(tma_splitk<3, 64, 16, true>, true, 64, 16, 3, 3, 0, 0);
  }
  const size_t n4 = kElems / 4;
  for (int mult : {4, 16}) {
    const int grid = s.sms * mult;
    timed([&] { raw_reduce<<<grid, 256>>>(parts.as<const float4>(), out.as<float4>(), n4); }, "peer read-add-write",
          fmt("float4, grid %d x 256", grid));
  }
  timed([&] { raw_reduce<<<int(n4 / 256), 256>>>(parts.as<const float4>(), out.as<float4>(), n4); },
        "peer read-add-write", fmt("float4, grid %d x 256", int(n4 / 256)));
  for (int mult : {8, 32}) {
    const int grid = s.sms * mult;
    timed([&] { atomic_reduce<<<grid, 256>>>(parts.as<const float4>(), out.as<float4>(), n4); }, "peer atomicAdd",
          fmt("float4 atomics, grid %d x 256", grid));
  }
}

}  // namespace bench
