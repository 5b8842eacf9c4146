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

namespace {

constexpr uint32_t kW = 16384, kH = 16384;
constexpr size_t kBytes = size_t(kW) * kH * 4;

struct RelayCfg {
  uint32_t bx, by;  // 2-D box (elements), or chunk bytes in bx for 1-D
  int stages, lag, ctas, hint, order;
  L2Promotion promo;
  int per_cta = 0;  // > 0: non-persistent grid, this many items per CTA
};

std::string describe(const RelayCfg& c, bool one_d) {
  static const char* promo[] = {"none", "64B", "128B", "256B"};
  std::string s = one_d ? fmt("chunk %uK", c.bx / 1024) : fmt("box %ux%u", c.bx, c.by);
  const std::string grid = c.per_cta ? fmt("grid items/%d", c.per_cta) : fmt("%dcta/SM", c.ctas);
  return s + fmt(" S%d L%d %s hint%d %s L2p:%s", c.stages, c.lag, grid.c_str(), c.hint,
                 c.order || c.per_cta ? "chunked" : "strided", promo[int(c.promo)]);
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
      a.bx = c.bx, a.by = c.by, a.hint = c.hint, a.order = c.order;
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
      a.chunk = c.bx, a.items = uint32_t(kBytes / c.bx), a.slot_bytes = c.bx, a.hint = c.hint, a.order = c.order;
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
  }
}

}  // namespace bench
