// im2col feed: the A-operand side of an implicit-GEMM 3×3 convolution (pad 1,
// stride 1, NHWC bf16, ResNet-50 layer shapes, batch 128), counted as bytes
// delivered to shared memory per second. tmakit: load_im2col of 128 output
// pixels × 64 channels per filter tap (16 KiB, 128B swizzle). Peer: the same
// 16 KiB tiles loaded with load_tile from an explicitly materialised im2col
// matrix (M × 9C). A check run stores every delivered tile back through a
// tiled map and compares it with the materialised matrix.
#include "relay.cuh"

namespace bench {

namespace {

constexpr int kPix = 128, kCh = 64;  // pixels per column, channels per pixel (128 bytes)

struct Conv {
  int n, h, w, c;
  __host__ __device__ size_t m() const { return size_t(n) * h * w; }
  __host__ __device__ int kblocks() const { return 9 * c / kCh; }
};

__global__ void materialise(const uint16_t* in, uint16_t* a, Conv cv) {
  const size_t cols = size_t(9) * cv.c, total = cv.m() * cols;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const size_t m = i / cols;
    const int col = int(i % cols), rs = col / cv.c, ch = col % cv.c;
    const int n = int(m / (size_t(cv.h) * cv.w)), ho = int(m / cv.w % cv.h), wo = int(m % cv.w);
    const int hi = ho - 1 + rs / 3, wi = wo - 1 + rs % 3;
    a[i] = (hi < 0 || hi >= cv.h || wi < 0 || wi >= cv.w) ? uint16_t(0)
                                                            : in[((size_t(n) * cv.h + hi) * cv.w + wi) * cv.c + ch];
  }
}

// Warp 0 lane 0 produces, warp 1 consumes (touches one word, or in check mode
// stores the tile to `check` through a tiled map). Item = (m tile, k block).
template <bool Im2col, int Stages>
__global__ void __launch_bounds__(64) feed(const __grid_constant__ dev::MapHandle src,
                                           const __grid_constant__ dev::MapHandle check, Conv cv, uint32_t items,
                                           int check_mode, uint32_t* sink) {
  constexpr uint32_t kSlot = kPix * kCh * 2;
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<Stages> pipe;
  uint8_t* slots = align_1k(smem_raw);
  if (threadIdx.x == 0) pipe.init(1);
  __syncthreads();
  dev::PipeState ps;
  const uint32_t kb_n = cv.kblocks(), cblocks = cv.c / kCh;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0)
      for (uint32_t it = blockIdx.x; it < items; it += gridDim.x) {
        const uint32_t mt = it / kb_n, kb = it % kb_n;
        uint64_t* full = pipe.producer_acquire(ps, src);
        if constexpr (Im2col) {
          const uint32_t m0 = mt * kPix, rs = kb / cblocks, cb = kb % cblocks;
          const int n = int(m0 / (cv.h * cv.w)), ho = int(m0 / cv.w % cv.h), wo = int(m0 % cv.w);
          const int32_t c[4] = {int32_t(cb * kCh), wo - 1, ho - 1, n};
          const uint16_t off[2] = {uint16_t(rs % 3), uint16_t(rs / 3)};  // W first (H11)
          dev::load_im2col(slots + ps.stage * kSlot, src, c, off, full);
        } else {
          const int32_t c[2] = {int32_t(kb * kCh), int32_t(mt * kPix)};
          dev::load_tile(slots + ps.stage * kSlot, src, c, full);
        }
        ps.advance<Stages>();
      }
    return;
  }
  uint32_t acc = 0;
  for (uint32_t it = blockIdx.x; it < items; it += gridDim.x) {
    pipe.consumer_wait(ps, src.box_bytes);
    const uint8_t* slot = slots + ps.stage * kSlot;
    if (check_mode) {
      if (threadIdx.x == 32) {
        const int32_t c[2] = {int32_t((it % kb_n) * kCh), int32_t((it / kb_n) * kPix)};
        dev::store_tile(check, c, slot);
        dev::commit_group();
        dev::wait_group_read<0>();
      }
    } else {
      acc += reinterpret_cast<const uint32_t*>(slot)[threadIdx.x & 31];
    }
    pipe.consumer_release_warp(ps);
    ps.advance<Stages>();
  }
  if (threadIdx.x == 32) dev::wait_group<0>();
  if (acc == 0x9E3779B9u) *sink = acc;  // keeps the reads; practically never true
}

struct FCfg {
  int stages, ctas;
};

template <bool Im2col>
bool launch_feed(const FCfg& f, const dev::MapHandle& src, const dev::MapHandle& chk, Conv cv, uint32_t items,
                 int check_mode, uint32_t* sink, int sms, std::function<void()>& launch, std::string& why) {
  bool found = false;
#define BENCH_F(S)                                                                     \
  if (!found && f.stages == S) {                                                       \
    found = true;                                                                      \
    auto* k = feed<Im2col, S>;                                                         \
    const size_t smem = size_t(S) * kPix * kCh * 2 + 1024;                             \
    const int fit = ctas_per_sm(k, 64, smem);                                          \
    if (fit < f.ctas) {                                                                \
      why = fmt("%d CTAs/SM wanted, %d fit", f.ctas, fit);                             \
      return false;                                                                    \
    }                                                                                  \
    const int grid = f.ctas * sms;                                                     \
    launch = [=] { k<<<grid, 64, smem>>>(src, chk, cv, items, check_mode, sink); };    \
  }
  BENCH_F(4) BENCH_F(6) BENCH_F(8)
#undef BENCH_F
  return found;
}

}  // namespace

void run_im2col(Suite& s) {
  if (!s.wants("im2col")) return;
  Buf sink(4);
  std::vector<FCfg> sweep{{6, 2}};
  if (!s.quick) sweep = {{6, 2}, {4, 2}, {8, 1}, {4, 3}, {6, 1}};
  for (Conv cv : {Conv{128, 56, 56, 64}, Conv{128, 28, 28, 128}, Conv{128, 14, 14, 256}, Conv{128, 7, 7, 512}}) {
    const std::string wl = fmt("im2col feed %dx%dx%d n%d bf16", cv.h, cv.w, cv.c, cv.n);
    const size_t in_elems = cv.m() * cv.c, cols = size_t(9) * cv.c, a_bytes = cv.m() * cols * 2;
    Buf in(in_elems * 2), a(a_bytes), d(a_bytes);
    fill_bf16(in.as<uint16_t>(), in_elems, s.next_seed());
    materialise<<<132 * 8, 512>>>(in.as<uint16_t>(), a.as<uint16_t>(), cv);
    BENCH_CUDA(cudaGetLastError());
    TensorMap im;
    im.encode = tmakit::tensor_map::Encode::im2col;
    im.data_type = DataType::bfloat16;
    im.rank = 4;
    im.global_address = reinterpret_cast<uint64_t>(in.p);
    im.dims = {uint64_t(cv.c), uint64_t(cv.w), uint64_t(cv.h), uint64_t(cv.n)};
    im.strides = {uint64_t(cv.c) * 2, uint64_t(cv.w) * cv.c * 2, uint64_t(cv.h) * cv.w * cv.c * 2};
    im.pixel_box_lower = {-1, -1, 0};  // 3×3, pad 1: filter bases from -1 ...
    im.pixel_box_upper = {-1, -1, 0};  // ... to X - 2 (§4.1)
    im.channels_per_pixel = kCh;
    im.pixels_per_column = kPix;
    im.swizzle = Swizzle::b128;
    const dev::MapHandle him = dev::make_map_handle(im);
    const dev::MapHandle ha = dev::make_map_handle(map_2d(a.p, DataType::bfloat16, cols, cv.m(), kCh, kPix, Swizzle::b128));
    const dev::MapHandle hd = dev::make_map_handle(map_2d(d.p, DataType::bfloat16, cols, cv.m(), kCh, kPix, Swizzle::b128));
    const uint32_t items = uint32_t(cv.m() / kPix) * cv.kblocks();
    const double delivered = double(items) * kPix * kCh * 2;
    for (int pass = 0; pass < 2; ++pass) {
      const bool use_im2col = pass == 0;
      const std::string impl = use_im2col ? "tmakit tma im2col" : "peer tile loads of im2col matrix";
      for (const FCfg& f : sweep) {
        const std::string cfg = fmt("S%d %dcta/SM box 64chx128px swz128", f.stages, f.ctas);
        std::function<void()> check, launch;
        std::string why;
        auto get = [&](int mode, std::function<void()>& l) {
          return use_im2col ? launch_feed<true>(f, him, hd, cv, items, mode, sink.as<uint32_t>(), s.sms, l, why)
                            : launch_feed<false>(f, ha, hd, cv, items, mode, sink.as<uint32_t>(), s.sms, l, why);
        };
        if (!get(1, check) || !get(0, launch)) {
          std::printf("  skip %s %s: %s\n", wl.c_str(), cfg.c_str(), why.c_str());
          continue;
        }
        Row r{wl, impl, cfg, delivered};
        r.note = fmt("(DRAM input %.0f MB, im2col matrix %.0f MB)", in_elems * 2 / 1e6, a_bytes / 1e6);
        s.check_and_time(r, [&] { poison(d.p, a_bytes); }, check,
                         [&] { return count_diff_u32(d.p, a.p, a_bytes); }, launch);
      }
    }
  }
}

}  // namespace bench
