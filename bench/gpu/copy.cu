// Copy workloads: 1 GiB f32 as a 16384 × 16384 tensor through tile loads ->
// shared -> tile stores (tmakit Relay), and 1 GiB through 1-D bulk copies; peers
// cudaMemcpy D2D and a 16-byte vectorized copy kernel. Bytes = read + written.
#include "relay.cuh"

namespace bench {

// The tuned LDG/STG peer: U independent 16-byte loads per thread in flight
// before the U stores; Stream = .cs (evict-first) loads and stores.
template <int U, bool Stream>
__global__ void vec_copy(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = Stream ? __ldcs(in + i + u * stride) : in[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (Stream) __stcs(out + i + u * stride, v[u]);
      else out[i + u * stride] = v[u];
    }
  }
  for (; i < n; i += stride) out[i] = in[i];
}

// Copies with the bulk-copy engine on one side only, one 256-thread CTA per
// 4-8 KiB item (the vec16 peer's best grid): a bulk or tile load into shared
// memory and 16-byte st.global by every thread (1-D: dev::cta_copy_bulk_load), or
// 16-byte ld.global + st.shared by every thread and one bulk or tile store. TwoD:
// the item is a box of bx × Chunk / (4 bx) f32 of a row-major tensor `width` floats
// wide (map m); otherwise Chunk contiguous bytes.
// The 2-D item's box origin {x, y} (elements), as a tile copy's coordinates.
template <uint32_t Chunk>
__device__ inline void item_box(uint32_t item, uint32_t bx, uint32_t width, int32_t (&c)[2]) {
  const uint32_t tiles_x = width / bx, rows = Chunk / (4 * bx);
  c[0] = int32_t((item % tiles_x) * bx);
  c[1] = int32_t((item / tiles_x) * rows);
}

// Byte offset of 16-byte chunk c of an item in the global tensor.
template <uint32_t Chunk, bool TwoD>
__device__ inline size_t item_offset(uint32_t item, uint32_t c, uint32_t bx, uint32_t width) {
  if constexpr (!TwoD) return size_t(item) * Chunk + size_t(c) * 16;
  int32_t o[2];
  item_box<Chunk>(item, bx, width, o);
  const uint32_t per_row = bx / 4;  // 16-byte chunks a box row
  const size_t y = size_t(o[1]) + c / per_row, x = size_t(o[0]) + (c % per_row) * 4;
  return (y * width + x) * 4;
}

template <uint32_t Chunk, bool TwoD>
__global__ void __launch_bounds__(256)
    tma_load_stg(const __grid_constant__ dev::MapHandle m, const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                 uint32_t bx, uint32_t width) {
  __shared__ alignas(128) uint4 buf[Chunk / 16];
  __shared__ uint64_t bar;
  if constexpr (!TwoD) {  // the device library's form
    const size_t base = size_t(blockIdx.x) * Chunk;
    dev::cta_copy_bulk_load<Chunk>(out + base, in + base, buf, &bar);
    return;
  }
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    dev::arrive_expect_tx(&bar, Chunk);
    int32_t c[2];
    item_box<Chunk>(blockIdx.x, bx, width, c);
    dev::load_tile(buf, m, c, &bar);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  dev::wait_parity(&bar, 0);
#pragma unroll
  for (uint32_t c = threadIdx.x; c < Chunk / 16; c += 256)
    *reinterpret_cast<uint4*>(out + item_offset<Chunk, TwoD>(blockIdx.x, c, bx, width)) = buf[c];
}

template <uint32_t Chunk, bool TwoD>
__global__ void __launch_bounds__(256)
    ldg_tma_store(const __grid_constant__ dev::MapHandle m, const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                  uint32_t bx, uint32_t width) {
  __shared__ alignas(128) uint4 buf[Chunk / 16];
#pragma unroll
  for (uint32_t c = threadIdx.x; c < Chunk / 16; c += 256)
    buf[c] = *reinterpret_cast<const uint4*>(in + item_offset<Chunk, TwoD>(blockIdx.x, c, bx, width));
  dev::fence_proxy_async_shared();  // the generic writes are visible to the bulk-copy engine
  __syncthreads();
  if (threadIdx.x == 0) {
    if constexpr (TwoD) {
      int32_t c[2];
      item_box<Chunk>(blockIdx.x, bx, width, c);
      dev::store_tile(m, c, buf);
    } else {
      dev::bulk_store(out + size_t(blockIdx.x) * Chunk, buf, Chunk);
    }
    dev::commit_group();
    dev::wait_group_read<0>();  // the CTA's shared memory is read before it exits
  }
}

namespace {

constexpr uint32_t kW = 16384, kH = 16384;
constexpr size_t kBytes = size_t(kW) * kH * 4;

struct RelayCfg {
  uint32_t bx, by;  // 2-D box (elements), or chunk bytes in bx for 1-D
  int stages, lag, ctas, hint, order;
  L2Promotion promo;
  int per_cta = 0;  // > 0: non-persistent grid, this many items per CTA
  uint32_t threads = 32;  // a CTA's threads (one works): 256 caps the grid at 8 CTAs per SM
};

std::string describe(const RelayCfg& c, bool one_d) {
  static const char* promo[] = {"none", "64B", "128B", "256B"};
  std::string s = one_d ? fmt("chunk %uK", c.bx / 1024) : fmt("box %ux%u", c.bx, c.by);
  const std::string grid = c.per_cta ? fmt("grid items/%d", c.per_cta) : fmt("%dcta/SM", c.ctas);
  return s + fmt(" S%d L%d %s hint%d %s L2p:%s%s", c.stages, c.lag, grid.c_str(), c.hint,
                 c.order || c.per_cta ? "chunked" : "strided", promo[int(c.promo)],
                 c.threads != 32 ? fmt(" T%u", c.threads).c_str() : "");
}

// The sweep: one lever at a time around a base, plus a few combinations.
// The tuned configurations (first in each sweep; --quick runs only these).
const RelayCfg kTuned2d{256, 16, 4, 1, 3, 0, 1, L2Promotion::none, 2};
const RelayCfg kTuned1d{16384, 0, 4, 1, 3, 0, 1, L2Promotion::none, 2};

std::vector<RelayCfg> sweep_2d(bool quick) {
  const RelayCfg base{256, 32, 6, 1, 1, 0, 0, L2Promotion::none};
  std::vector<RelayCfg> v{kTuned2d};
  if (quick) return v;
  v.push_back(base);
  for (auto [bx, by] : {std::pair{256u, 16u}, {128u, 64u}, {64u, 128u}, {256u, 64u}, {128u, 32u}}) {
    RelayCfg c = base;
    c.bx = bx, c.by = by;
    if (bx * by * 4 >= 65536) c.stages = 3, c.lag = 1;
    if (bx * by * 4 <= 16384) c.stages = 12, c.lag = 2;
    v.push_back(c);
  }
  for (auto [s, l] : {std::pair{4, 1}, {4, 2}, {6, 2}, {3, 0}, {3, 1}}) {
    RelayCfg c = base;
    c.stages = s, c.lag = l;
    v.push_back(c);
  }
  for (int ctas : {2, 3}) {
    RelayCfg c = base;
    c.ctas = ctas;
    c.stages = ctas == 2 ? 3 : 2, c.lag = ctas == 2 ? 1 : 0;
    v.push_back(c);
  }
  {
    RelayCfg c{256, 16, 6, 1, 2, 0, 0, L2Promotion::none};
    v.push_back(c);
    c.stages = 4;
    c.ctas = 3;
    v.push_back(c);
  }
  for (int h : {1, 2}) {
    RelayCfg c = base;
    c.hint = h;
    v.push_back(c);
  }
  {
    RelayCfg c = base;
    c.order = 1;
    v.push_back(c);
    c = base;
    c.promo = L2Promotion::b256;
    v.push_back(c);
  }
  // Non-persistent grids (the vec16 peer is fastest with one short-lived block
  // per 4 KiB): few items per CTA, several CTAs resident per SM.
  for (int per : {1, 3, 4, 8}) v.push_back(RelayCfg{256, 16, 4, 1, 3, 0, 1, L2Promotion::none, per});
  for (int per : {1, 2}) v.push_back(RelayCfg{256, 32, 2, 0, 3, 0, 1, L2Promotion::none, per});
  for (int per : {1, 2, 4}) v.push_back(RelayCfg{256, 8, 4, 1, 6, 0, 1, L2Promotion::none, per});
  // 4 KiB items, one a CTA (the vec16 peer's best is one 256-thread block per 4 KiB): the
  // 32-blocks-per-SM limit, not shared memory, then caps the relays resident on an SM.
  v.push_back(RelayCfg{256, 4, 4, 1, 6, 0, 1, L2Promotion::none, 1});
  // Fewer relays resident per SM (idle threads hold the slots): 4 and 8 KiB items.
  for (uint32_t t : {128u, 256u}) {
    v.push_back(RelayCfg{256, 4, 4, 1, 1, 0, 1, L2Promotion::none, 1, t});
    v.push_back(RelayCfg{256, 8, 4, 1, 1, 0, 1, L2Promotion::none, 1, t});
  }
  v.push_back(RelayCfg{256, 16, 2, 0, 3, 0, 1, L2Promotion::none, 2});
  v.push_back(RelayCfg{256, 16, 4, 1, 3, 2, 1, L2Promotion::none, 2});
  v.push_back(RelayCfg{256, 16, 4, 1, 3, 0, 1, L2Promotion::b256, 2});
  return v;
}

std::vector<RelayCfg> sweep_1d(bool quick) {
  const RelayCfg base{32768, 0, 6, 1, 1, 0, 0, L2Promotion::none};
  std::vector<RelayCfg> v{kTuned1d};
  if (quick) return v;
  v.push_back(base);
  for (uint32_t chunk : {16384u, 65536u}) {
    RelayCfg c = base;
    c.bx = chunk;
    if (chunk == 65536) c.stages = 3;
    else c.stages = 12, c.lag = 2;
    v.push_back(c);
  }
  for (auto [s, l] : {std::pair{4, 1}, {6, 2}, {8, 2}}) {
    RelayCfg c = base;
    c.stages = s, c.lag = l;
    v.push_back(c);
  }
  {
    RelayCfg c = base;
    c.ctas = 2, c.stages = 3;
    v.push_back(c);
    c = base;
    c.hint = 2;
    v.push_back(c);
    c = base;
    c.order = 1;
    v.push_back(c);
  }
  for (int per : {1, 3, 4, 8}) v.push_back(RelayCfg{16384, 0, 4, 1, 3, 0, 1, L2Promotion::none, per});
  for (int per : {1, 2, 4}) v.push_back(RelayCfg{8192, 0, 4, 1, 6, 0, 1, L2Promotion::none, per});
  v.push_back(RelayCfg{4096, 0, 4, 1, 6, 0, 1, L2Promotion::none, 1});
  for (uint32_t t : {128u, 256u}) {
    v.push_back(RelayCfg{4096, 0, 4, 1, 1, 0, 1, L2Promotion::none, 1, t});
    v.push_back(RelayCfg{8192, 0, 4, 1, 1, 0, 1, L2Promotion::none, 1, t});
  }
  v.push_back(RelayCfg{32768, 0, 2, 0, 3, 0, 1, L2Promotion::none, 1});
  v.push_back(RelayCfg{16384, 0, 4, 1, 3, 2, 1, L2Promotion::none, 2});
  return v;
}

}  // namespace

void run_copy(Suite& s) {
  Buf in(kBytes), out(kBytes);
  const std::string w2 = "copy 2-D 16384^2 f32", w1 = "copy 1-D 1 GiB";
  const double bytes = 2.0 * kBytes;
  // Peers of both copy workloads are timed once and listed under both.
  auto timed = [&](const std::function<void()>& launch, const std::string& wl, const std::string& impl,
                   const std::string& cfg) {
    auto prepare = [&] {
      fill_f32(in.as<float>(), kBytes / 4, s.next_seed());
      poison(out.p, kBytes);
    };
    if (!s.check_and_time(Row{wl, impl, cfg, bytes}, prepare, launch,
                          [&] { return count_diff_u32(in.p, out.p, kBytes); }, launch))
      return;
    if (impl.rfind("peer", 0) == 0) {
      Row r = s.rows.back();
      r.workload = w1;
      s.add(r);
    }
  };

  if (s.wants("copy")) {
    timed([&] { cudaMemcpyAsync(out.p, in.p, kBytes, cudaMemcpyDeviceToDevice); }, w2, "peer cudaMemcpy", "D2D");
  }
  if (s.wants("copy") || s.wants("peer")) {
    const size_t n = kBytes / 16;
    auto vec = [&](auto kernel, int u, bool st, int grid, int threads) {
      const std::string cfg = fmt("U%d %s grid %d x %d", u, st ? "ldcs/stcs" : "plain", grid, threads);
      const uint4* src = in.as<const uint4>();
      uint4* dst = out.as<uint4>();
      auto launch = [=] { kernel<<<grid, threads>>>(src, dst, n); };
      timed(launch, w2, "peer vec16 kernel", cfg);
    };
    const int full4 = int(n / (4 * 256));
    vec(vec_copy<1, false>, 1, false, int(n / 256), 256);  // the best in every run so far
    vec(vec_copy<4, false>, 4, false, s.sms * 4, 256);
    if (!s.quick) {
      for (int mult : {8, 16, 32}) vec(vec_copy<4, false>, 4, false, s.sms * mult, 256);
      vec(vec_copy<4, false>, 4, false, full4, 256);
      vec(vec_copy<4, true>, 4, true, s.sms * 16, 256);
      vec(vec_copy<8, false>, 8, false, s.sms * 8, 256);
      vec(vec_copy<8, true>, 8, true, s.sms * 8, 256);
      vec(vec_copy<2, false>, 2, false, s.sms * 16, 512);
    }
  }
  if (s.wants("copy")) {
    for (const RelayCfg& c : sweep_2d(s.quick)) {
      TensorMap mi = map_2d(in.p, DataType::float32, kW, kH, c.bx, c.by, Swizzle::none, c.promo);
      TensorMap mo = map_2d(out.p, DataType::float32, kW, kH, c.bx, c.by);
      const dev::MapHandle hi = dev::make_map_handle(mi), ho = dev::make_map_handle(mo);
      RelayArgs a;
      a.tiles_x = kW / c.bx, a.tiles_y = kH / c.by, a.items = a.tiles_x * a.tiles_y;
      a.bx = c.bx, a.by = c.by, a.hint = c.hint, a.order = c.order, a.threads = c.threads;
      a.slot_bytes = (hi.box_bytes + 1023) & ~1023u;
      std::function<void()> launch;
      std::string why;
      const std::string cfg = describe(c, false);
      if (!launch_relay<RelayOp::copy2d>(c.stages, c.lag, c.ctas, c.per_cta, hi, ho, a, s.sms, launch, why)) {
        std::printf("  skip %s %s: %s\n", w2.c_str(), cfg.c_str(), why.c_str());
        continue;
      }
      timed(launch, w2, "tmakit tma 2-D relay", cfg + " [" + why + "]");
    }
    for (const RelayCfg& c : sweep_1d(s.quick)) {
      RelayArgs a;
      a.chunk = c.bx, a.items = uint32_t(kBytes / c.bx), a.slot_bytes = c.bx;
      a.hint = c.hint, a.order = c.order, a.threads = c.threads;
      a.src = in.as<const uint8_t>(), a.dst = out.as<uint8_t>();
      std::function<void()> launch;
      std::string why;
      const std::string cfg = describe(c, true);
      if (!launch_relay<RelayOp::copy1d>(c.stages, c.lag, c.ctas, c.per_cta, dev::MapHandle{}, dev::MapHandle{}, a, s.sms, launch,
                                         why)) {
        std::printf("  skip %s %s: %s\n", w1.c_str(), cfg.c_str(), why.c_str());
        continue;
      }
      timed(launch, w1, "tmakit bulk 1-D relay", cfg + " [" + why + "]");
    }
    // The bulk-copy engine on one side: 4 and 8 KiB items, one 256-thread CTA each.
    const uint8_t* src = in.as<const uint8_t>();
    uint8_t* dst = out.as<uint8_t>();
    auto half = [&](auto kernel, uint32_t chunk, bool two_d, bool load_side) {
      const uint32_t bx = 256;  // 2-D: boxes of 256 f32 (1 KiB rows) × chunk / 1 KiB rows
      const dev::MapHandle h = dev::make_map_handle(
          map_2d(load_side ? in.p : out.p, DataType::float32, kW, kH, bx, two_d ? chunk / (4 * bx) : 1));
      const int grid = int(kBytes / chunk);
      const std::string impl = two_d ? (load_side ? "tmakit tile load + st.global" : "tmakit ld.global + tile store")
                                     : (load_side ? "tmakit bulk load + st.global" : "tmakit ld.global + bulk store");
      const std::string cfg = two_d ? fmt("box 256x%u, one a CTA, 256 threads, grid %d", chunk / 1024, grid)
                                    : fmt("chunk %uK, one a CTA, 256 threads, grid %d", chunk / 1024, grid);
      timed([=] { kernel<<<grid, 256>>>(h, src, dst, bx, kW); }, two_d ? w2 : w1, impl, cfg);
    };
    half(tma_load_stg<4096, true>, 4096, true, true);
    half(ldg_tma_store<4096, true>, 4096, true, false);
    half(tma_load_stg<4096, false>, 4096, false, true);
    half(ldg_tma_store<4096, false>, 4096, false, false);
    if (!s.quick) {
      half(tma_load_stg<8192, true>, 8192, true, true);
      half(ldg_tma_store<8192, true>, 8192, true, false);
      half(tma_load_stg<8192, false>, 8192, false, true);
      half(ldg_tma_store<8192, false>, 8192, false, false);
    }
  }
}

}  // namespace bench
