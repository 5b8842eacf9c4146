// Transpose of a 16384 × 16384 matrix (f32 and bf16): TMA tile loads with 128B
// swizzle -> 16-byte register transposes -> swizzled shared -> TMA tile stores,
// warp-specialised (one producer warp, Pipeline<Stages>). Peers: cuBLAS
// (cublasSgeam; cublasLtMatrixTransform for bf16, loaded with dlopen so that a
// machine without cuBLAS still runs the rest) and the classic 32×32 kernel.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <algorithm>

#include "relay.cuh"

namespace bench {

namespace {

constexpr uint32_t kN = 16384;

// 4 (f32) or 8 (bf16) 16-byte rows of a micro-block -> the transposed rows.
template <int ES>
__device__ inline void transpose_regs(const uint4 (&v)[16 / ES], uint4 (&w)[16 / ES]) {
  const uint32_t(&a)[16 / ES][4] = reinterpret_cast<const uint32_t(&)[16 / ES][4]>(v);
  uint32_t(&b)[16 / ES][4] = reinterpret_cast<uint32_t(&)[16 / ES][4]>(w);
  if constexpr (ES == 4) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
#pragma unroll
      for (int q = 0; q < 4; ++q) b[e][q] = a[q][e];
  } else {
    // w[e] half q = v[q] half e; word m of w[e] takes halves from v[2m], v[2m+1].
#pragma unroll
    for (int e = 0; e < 8; ++e)
#pragma unroll
      for (int m = 0; m < 4; ++m)
        b[e][m] = __byte_perm(a[2 * m][e / 2], a[2 * m + 1][e / 2], (e & 1) ? 0x7632 : 0x5410);
  }
}

// Named barrier among the consumer warps (CCCL has no bar.sync wrapper).
__device__ inline void consumers_sync(int threads) { asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory"); }

// ES = element bytes; a load box is LX columns (128 bytes, the 128B swizzle's
// limit) × LX·R rows, and a tile is W such boxes side by side (W·128 contiguous
// bytes of every input row; the R·W output boxes give R·128 contiguous bytes of
// every output row). 64 consumer threads per LX × LX sub-tile, each one
// micro-block of V × V elements (V = 16 / ES), one producer warp.
template <int ES, int R, int Stages, int W = 1>
__global__ void __launch_bounds__(64 * R * W + 32) tma_transpose(const __grid_constant__ dev::MapHandle in,
                                                           const __grid_constant__ dev::MapHandle out,
                                                           uint32_t tiles_x, uint32_t tiles, int hint, int order,
                                                           uint32_t gy) {
  constexpr int LX = 128 / ES, V = 16 / ES, NC = 64 * R * W, BOX = 128 * LX * R, TILE = BOX * W;
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Pipeline<Stages> pipe;
  uint8_t* in_s = align_1k(smem_raw);
  uint8_t* out_s = in_s + Stages * TILE;  // two output buffers
  const int tid = threadIdx.x;
  if (tid == 0) pipe.init(NC / 32);
  __syncthreads();
  dev::PipeState ps;
  uint32_t first, n, step;
  cta_items(tiles, order, first, n, step);
  // Raster: consecutive items walk gy tile rows down before moving right, so the
  // tiles in flight across the grid share input rows and output rows.
  auto tile_xy = [&](uint32_t k, int32_t& x0, int32_t& y0) {
    const uint32_t u = first + k * step, g = u / (tiles_x * gy), w = u % (tiles_x * gy);
    x0 = int32_t((w / gy) * LX * W);
    y0 = int32_t((g * gy + w % gy) * LX * R);
  };
  if (tid >= NC) {
    if (tid == NC)
      for (uint32_t k = 0; k < n; ++k) {
        uint64_t* full = pipe.producer_acquire(ps, in, W);
        int32_t x0, y0;
        tile_xy(k, x0, y0);
#pragma unroll
        for (int b = 0; b < W; ++b) {
          const int32_t c[2] = {x0 + b * LX, y0};
          uint8_t* dst = in_s + ps.stage * TILE + b * BOX;
          if (hint) dev::load_tile_hint(dst, in, c, full, dev::kEvictFirst);
          else dev::load_tile(dst, in, c, full);
        }
        ps.advance<Stages>();
      }
    return;
  }
  // Micro-block (i = x chunk, j = y block) = (t8, t8 ^ d) within quarter-warp d:
  // the 8 threads of a quarter-warp hit 8 distinct 16-byte chunks of the
  // 128-byte swizzle row both when reading and when writing (no bank conflicts).
  const int sub = tid / 64, q = tid % 64, d = q / 8, t8 = q % 8, i = t8, j = t8 ^ d;
  uint32_t buf = 0;
  for (uint32_t k = 0; k < n; ++k) {
    pipe.consumer_wait(ps, in.box_bytes * W);
    // sub-tile sub = box sub / R, rows (sub % R)·LX of it: consecutive in shared memory
    const uint8_t* tile = in_s + ps.stage * TILE + sub * (LX * 128);
    uint4 v[V], w[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const int r = V * j + e;
      v[e] = *reinterpret_cast<const uint4*>(tile + r * 128 + ((i ^ (r & 7)) << 4));
    }
    pipe.consumer_release_warp(ps);
    transpose_regs<ES>(v, w);
    uint8_t* o = out_s + buf * TILE + sub * (LX * 128);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const int x = V * i + e;
      *reinterpret_cast<uint4*>(o + x * 128 + ((j ^ (x & 7)) << 4)) = w[e];
    }
    dev::fence_proxy_async_shared();
    if (tid == 0) dev::wait_group_read<0>();  // the previous tile's stores have read the other buffer
    consumers_sync(NC);
    if (tid == 0) {
      int32_t x0, y0;
      tile_xy(k, x0, y0);
#pragma unroll
      for (int b = 0; b < W; ++b)
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int32_t c[2] = {y0 + r * LX, x0 + b * LX};
          const uint8_t* src = out_s + buf * TILE + (b * R + r) * (LX * 128);
          if (hint >= 2) dev::store_tile_hint(out, c, src, dev::kEvictFirst);
          else dev::store_tile(out, c, src);
        }
      dev::commit_group();
    }
    buf ^= 1;
    ps.advance<Stages>();
  }
  if (tid == 0) dev::wait_group<0>();
}

// The classic kernel: 32 × 33 shared tile, 32 × 8 threads.
template <class T>
__global__ void classic_transpose(const T* __restrict__ in, T* __restrict__ out, uint32_t w, uint32_t h) {
  __shared__ T tile[32][33];
  uint32_t x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int k = 0; k < 32; k += 8) tile[threadIdx.y + k][threadIdx.x] = in[size_t(y + k) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int k = 0; k < 32; k += 8) out[size_t(y + k) * h + x] = tile[threadIdx.x][threadIdx.y + k];
}

// cuBLAS through dlopen: null when the library is missing.
struct Cublas {
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  decltype(&cublasSgeam) sgeam = nullptr;
  decltype(&cublasLtMatrixTransform) transform = nullptr;
  decltype(&cublasLtMatrixTransformDescCreate) tdesc = nullptr;
  decltype(&cublasLtMatrixTransformDescSetAttribute) tattr = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout = nullptr;
  std::string why;
  Cublas() {
    void* b = dlopen("libcublas.so.13", RTLD_NOW);
    void* l = dlopen("libcublasLt.so.13", RTLD_NOW);
    if (!b || !l) {
      why = fmt("dlopen libcublas.so.13 / libcublasLt.so.13 failed: %s", dlerror());
      return;
    }
    auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(dlsym(b, "cublasCreate_v2"));
    auto lt_create = reinterpret_cast<decltype(&cublasLtCreate)>(dlsym(l, "cublasLtCreate"));
    sgeam = reinterpret_cast<decltype(sgeam)>(dlsym(b, "cublasSgeam"));
    transform = reinterpret_cast<decltype(transform)>(dlsym(l, "cublasLtMatrixTransform"));
    tdesc = reinterpret_cast<decltype(tdesc)>(dlsym(l, "cublasLtMatrixTransformDescCreate"));
    tattr = reinterpret_cast<decltype(tattr)>(dlsym(l, "cublasLtMatrixTransformDescSetAttribute"));
    layout = reinterpret_cast<decltype(layout)>(dlsym(l, "cublasLtMatrixLayoutCreate"));
    if (!create || !lt_create || !sgeam || !transform || !tdesc || !tattr || !layout || create(&h) != 0 ||
        lt_create(&lt) != 0) {
      why = "cuBLAS symbols or handles missing";
      sgeam = nullptr;
      transform = nullptr;
    }
  }
};

struct TCfg {
  int r, stages, ctas, hint;
  int per_cta = 0;  // > 0: non-persistent grid of tiles / per_cta CTAs
  int gy = 1;       // raster: tile rows walked before moving right (0: a whole column)
  int w = 1;        // load boxes side by side in a tile (W·128 contiguous bytes of each input row)
  int cap = 0;      // > 0: at most this many CTAs per SM (shared memory padded to hold fewer)
};

template <int ES>
bool launch_tma_transpose(const TCfg& c, const dev::MapHandle& in, const dev::MapHandle& out, int sms,
                          std::function<void()>& launch, std::string& why) {
  constexpr int LX = 128 / ES;
  bool found = false;
#define BENCH_T(R, S, W)                                                                            \
  if (!found && c.r == R && c.stages == S && c.w == W) {                                            \
    found = true;                                                                                   \
    auto* k = tma_transpose<ES, R, S, W>;                                                           \
    const int outs = c.per_cta == 1 ? 1 : 2; /* one tile: one output buffer */                      \
    size_t smem = size_t(S + outs) * 128 * LX * R * W + 1024;                                       \
    if (c.cap > 0) smem = std::max(smem, size_t(228 * 1024 / c.cap - 2048));                       \
    const int fit = smem <= 227 * 1024 ? ctas_per_sm(k, 64 * R * W + 32, smem) : 0;                 \
    if (fit < c.ctas) {                                                                             \
      why = fmt("%d CTAs/SM wanted, %d fit (%zu B smem)", c.ctas, fit, smem);                       \
      return false;                                                                                 \
    }                                                                                               \
    const uint32_t tiles_x = kN / (LX * W), tiles = tiles_x * (kN / (LX * R));                      \
    const int grid = c.per_cta ? int(tiles / c.per_cta) : c.ctas * sms, hint = c.hint;              \
    const int order = c.per_cta ? 1 : 0;                                                            \
    const uint32_t gy = c.gy ? uint32_t(c.gy) : kN / (LX * R); /* 0: column-major tile order */     \
    launch = [=] { k<<<grid, 64 * R * W + 32, smem>>>(in, out, tiles_x, tiles, hint, order, gy); }; \
  }
  BENCH_T(1, 1, 1) BENCH_T(1, 2, 1) BENCH_T(1, 4, 1) BENCH_T(2, 1, 1) BENCH_T(2, 2, 1) BENCH_T(2, 3, 1) BENCH_T(2, 4, 1)
  BENCH_T(4, 1, 1) BENCH_T(4, 2, 1) BENCH_T(4, 3, 1) BENCH_T(4, 4, 1)
  BENCH_T(2, 2, 2) BENCH_T(2, 1, 2) BENCH_T(1, 2, 2) BENCH_T(1, 2, 4) BENCH_T(2, 1, 4) BENCH_T(4, 1, 2)
  BENCH_T(1, 1, 4) BENCH_T(1, 1, 8)
#undef BENCH_T
  if (!found) why = "not compiled";
  return found;
}

std::vector<TCfg> transpose_sweep(bool quick) {
  // tuned (--quick runs these three): 2 tiles per CTA, non-persistent; wide tiles, 2 boxes
  // side by side, 2 tiles per CTA (best bf16); 4 boxes, one tile per CTA (best f32).
  std::vector<TCfg> v{{2, 2, 3, 0, 2, 1}, {2, 2, 1, 0, 2, 1, 2}, {2, 1, 1, 0, 1, 1, 4}};
  if (quick) return v;
  for (TCfg c : std::vector<TCfg>{{2, 4, 2, 0}, {1, 4, 4, 0}, {2, 3, 2, 0}, {2, 4, 1, 0}, {4, 2, 2, 0}, {4, 4, 1, 0},
                                  {2, 4, 2, 2}})
    v.push_back(c);
  // Raster groups and non-persistent grids (the classic kernel's one-tile blocks beat
  // the persistent grid in the first run).
  for (int gy : {8, 0}) v.push_back(TCfg{2, 4, 2, 0, 0, gy});
  v.push_back(TCfg{2, 2, 3, 0, 1, 1});
  v.push_back(TCfg{4, 2, 2, 0, 2, 1});
  v.push_back(TCfg{1, 2, 6, 0, 2, 1});
  v.push_back(TCfg{2, 2, 3, 0, 2, 8});
  // One tile per CTA (one stage, one output buffer): box height, raster, hints.
  for (int r : {1, 2, 4}) v.push_back(TCfg{r, 1, 3, 0, 1, 1});
  for (int gy : {2, 4, 0}) v.push_back(TCfg{2, 1, 3, 0, 1, gy});
  for (int h : {1, 2}) v.push_back(TCfg{2, 1, 3, h, 1, 1});
  v.push_back(TCfg{4, 1, 2, 0, 1, 4});
  // Wide tiles: W load boxes side by side, so each CTA reads W·128 contiguous bytes of an
  // input row as it writes R·128 of an output row (ctas = least that must fit per SM).
  v.push_back(TCfg{2, 1, 1, 0, 1, 1, 2});
  v.push_back(TCfg{1, 2, 1, 0, 2, 1, 2});
  v.push_back(TCfg{1, 2, 1, 0, 2, 1, 4});
  v.push_back(TCfg{4, 1, 1, 0, 1, 1, 2});
  v.push_back(TCfg{1, 1, 1, 0, 1, 1, 4});
  v.push_back(TCfg{1, 1, 1, 0, 1, 1, 8});
  // Less in flight per SM (what made the copies faster): the wide tiles capped at 1-3 CTAs/SM.
  for (int cap : {1, 2}) v.push_back(TCfg{2, 1, 1, 0, 1, 1, 4, cap});
  for (int cap : {2, 3}) v.push_back(TCfg{2, 1, 1, 0, 1, 1, 2, cap});
  for (int cap : {1, 2}) v.push_back(TCfg{2, 2, 1, 0, 2, 1, 2, cap});
  return v;
}

template <int ES>
void transpose_workload(Suite& s, Cublas& cb) {
  const size_t bytes = size_t(kN) * kN * ES;
  const std::string wl = ES == 4 ? "transpose 16384^2 f32" : "transpose 16384^2 bf16";
  const DataType dt = ES == 4 ? DataType::float32 : DataType::bfloat16;
  Buf in(bytes), out(bytes);
  auto timed = [&](const std::function<void()>& launch, const std::string& impl, const std::string& cfg) {
    auto prepare = [&] {
      if (ES == 4) fill_f32(in.as<float>(), bytes / 4, s.next_seed());
      else fill_bf16(in.as<uint16_t>(), bytes / 2, s.next_seed());
      poison(out.p, bytes);
    };
    s.check_and_time(Row{wl, impl, cfg, 2.0 * bytes}, prepare, launch,
                     [&] { return count_transpose_diff(in.p, out.p, kN, kN, ES); }, launch);
  };
  constexpr int LX = 128 / ES;
  for (const TCfg& c : transpose_sweep(s.quick)) {
    const dev::MapHandle hi = dev::make_map_handle(map_2d(in.p, dt, kN, kN, LX, LX * c.r, Swizzle::b128));
    const dev::MapHandle ho = dev::make_map_handle(map_2d(out.p, dt, kN, kN, LX, LX, Swizzle::b128));
    std::function<void()> launch;
    std::string why;
    const std::string grid = c.per_cta ? fmt("grid tiles/%d", c.per_cta) : fmt("%dcta/SM", c.ctas);
    const std::string cfg =
        fmt("box %dx%d%s S%d %s hint%d raster%d ws+swz128%s", LX, LX * c.r,
            c.w > 1 ? fmt(" x%d wide", c.w).c_str() : "", c.stages, grid.c_str(), c.hint, c.gy,
            c.cap ? fmt(" cap %d/SM", c.cap).c_str() : "");
    if (!launch_tma_transpose<ES>(c, hi, ho, s.sms, launch, why)) {
      std::printf("  skip %s %s: %s\n", wl.c_str(), cfg.c_str(), why.c_str());
      continue;
    }
    timed(launch, "tmakit tma transpose", cfg);
  }
  using T = std::conditional_t<ES == 4, uint32_t, uint16_t>;
  timed([&] { classic_transpose<T><<<dim3(kN / 32, kN / 32), dim3(32, 8)>>>(in.as<T>(), out.as<T>(), kN, kN); },
        "peer classic 32x32 smem", "32x33 tile, 32x8 threads");
  if (!cb.sgeam) {
    std::printf("  %s: cuBLAS peer not run: %s\n", wl.c_str(), cb.why.c_str());
    return;
  }
  if constexpr (ES == 4) {
    // Row-major h × w input = column-major w × h (lda = w); C = A^T is column-major h × w.
    const float one = 1, zero = 0;
    timed(
        [&] {
          cb.sgeam(cb.h, CUBLAS_OP_T, CUBLAS_OP_N, kN, kN, &one, in.as<float>(), kN, &zero, out.as<float>(), kN,
                   out.as<float>(), kN);
        },
        "peer cublasSgeam", "op(A)=A^T, beta 0");
  } else {
    cublasLtMatrixTransformDesc_t d;
    cublasLtMatrixLayout_t la, lc;
    const cublasOperation_t op = CUBLAS_OP_T;
    if (cb.tdesc(&d, CUDA_R_32F) || cb.tattr(d, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &op, sizeof op) ||
        cb.layout(&la, CUDA_R_16BF, kN, kN, kN) || cb.layout(&lc, CUDA_R_16BF, kN, kN, kN)) {
      std::printf("  %s: cublasLt transform descriptors refused\n", wl.c_str());
      return;
    }
    const float one = 1, zero = 0;
    const int st = cb.transform(cb.lt, d, &one, in.p, la, &zero, nullptr, nullptr, out.p, lc, 0);
    if (st != 0) {
      std::printf("  %s: cublasLtMatrixTransform bf16 returned status %d: no cuBLAS bf16 peer\n", wl.c_str(), st);
      return;
    }
    timed([&] { cb.transform(cb.lt, d, &one, in.p, la, &zero, nullptr, nullptr, out.p, lc, 0); },
          "peer cublasLtMatrixTransform", "bf16, transA, beta 0");
  }
}

}  // namespace

void run_transpose(Suite& s) {
  if (!s.wants("transpose")) return;
  Cublas cb;
  transpose_workload<4>(s, cb);
  transpose_workload<2>(s, cb);
}

}  // namespace bench
