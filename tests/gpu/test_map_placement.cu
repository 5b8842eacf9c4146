// §14 Q27: where a tensor map lives, and what a load does after the map changed.
// (a) The same map as a __grid_constant__ kernel parameter, in global memory and
//     in __constant__ memory: loads of four boxes (in bounds, partly and wholly
//     out of bounds) must give the same bytes, equal to the host's expectation.
// (b) Stale maps: a map in global memory (one slot per CTA) loads from tensor A
//     (elements 0xA0000000 | i) or B (0xB0000000 | i); the map's global address
//     is then switched to the other tensor and the map used again. Recorded:
//     which tensor's bytes the second load delivered, per variant:
//       between kernels: cudaMemcpy of the new map, or a kernel's generic
//               stores, between two loading kernels; the second kernel with or
//               without fence.proxy.tensormap::generic.acquire.gpu;
//       stores: generic 8-byte stores of the other tensor's map inside the
//               kernel, by the loading thread;
//       replace: tensormap.replace.tile.global_address on the map in global memory;
//     each in-kernel method with no fence, no fence but a 20 us pause, the
//     release fence only, the acquire fence only, and release + acquire (the
//     documented pattern). Checks: (a) agrees; (b) every load that the PTX
//     memory model orders after the update (updates between kernels, release +
//     acquire) delivers the new tensor. The other variants are observations
//     (INFO counts: new / old / neither, and which tensor all loads delivered).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "dense_map.cuh"
#include "gpu_check.cuh"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
namespace ptx = cuda::ptx;

namespace {

constexpr int kW = 64, kH = 64, kN = kW * kH;  // u32 tensors
constexpr int kBox = 16;                       // 16 x 16 box, 1 KiB
constexpr int kBoxN = kBox * kBox;
constexpr uint32_t kTagA = 0xA0000000u, kTagB = 0xB0000000u;
constexpr int kIters = 32;  // map switches per CTA in one in-kernel launch
constexpr unsigned long long kWaitNs = 500000000ull;

__constant__ CUtensorMap c_map;

// Loads one box with thread 0 and waits (bounded). Returns false on timeout.
template <class M>
__device__ bool load_box(uint32_t* tile, const M& m, int32_t x, int32_t y, uint64_t* bar, uint32_t& phase) {
  for (int i = 0; i < kBoxN; ++i) tile[i] = 0x5A5A5A5Au;  // stale smem must not pass for a tensor
  dev::fence_proxy_async_shared();
  const int32_t c[2] = {x, y};
  dev::arrive_expect_tx(bar, kBoxN * 4);
  dev::load_tile(tile, m, c, bar);
  const unsigned long long t0 = dev::global_timer_ns();
  while (!dev::try_wait_parity(bar, phase))
    if (dev::global_timer_ns() - t0 > kWaitNs) return false;
  phase ^= 1;
  return true;
}

// 0: tensor A's box at (0, 0); 1: B's; 2: neither (mixed or other bytes); 3: the load timed out.
__device__ uint32_t classify(const uint32_t* tile) {
  bool a = true, b = true;
  for (int r = 0; r < kBox; ++r)
    for (int c = 0; c < kBox; ++c) {
      const uint32_t v = tile[r * kBox + c], i = uint32_t(r * kW + c);
      a &= v == (kTagA | i);
      b &= v == (kTagB | i);
    }
  return a ? 0 : b ? 1 : 2;
}

// ---- (a) placements --------------------------------------------------------

template <int Placement>
__global__ void placement_load(const __grid_constant__ dev::MapHandle h, const CUtensorMap* gmap, int32_t x,
                               int32_t y, uint32_t* out) {
  __shared__ __align__(128) uint32_t tile[kBoxN];
  __shared__ uint64_t bar;
  if (threadIdx.x != 0) return;
  dev::mbar_init(&bar, 1);
  dev::fence_mbarrier_init();
  uint32_t phase = 0;
  bool ok;
  if constexpr (Placement == 0) ok = load_box(tile, h, x, y, &bar, phase);
  else if constexpr (Placement == 1) ok = load_box(tile, *gmap, x, y, &bar, phase);
  else ok = load_box(tile, c_map, x, y, &bar, phase);
  for (int i = 0; i < kBoxN; ++i) out[i] = ok ? tile[i] : 0xDEADDEADu;
}

// ---- (b) stale maps: host update between kernels -----------------------------

template <bool Acquire>
__global__ void probe(CUtensorMap* slots, uint32_t* cls) {
  __shared__ __align__(128) uint32_t tile[kBoxN];
  __shared__ uint64_t bar;
  if (threadIdx.x != 0) return;
  CUtensorMap* m = slots + blockIdx.x;
  dev::mbar_init(&bar, 1);
  dev::fence_mbarrier_init();
  if (Acquire) ptx::fence_proxy_tensormap_generic(ptx::sem_acquire, ptx::scope_gpu, m, ptx::n32_t<128>{});
  uint32_t phase = 0;
  cls[blockIdx.x] = load_box(tile, *m, 0, 0, &bar, phase) ? classify(tile) : 3;
}

// The update by a kernel between the two loading kernels: generic stores of
// templates[which] into every slot.
__global__ void rewrite_slots(CUtensorMap* slots, const CUtensorMap* templates, int which) {
  const auto* src = reinterpret_cast<const unsigned long long*>(templates + which);
  auto* dst = reinterpret_cast<unsigned long long*>(slots + blockIdx.x);
  if (threadIdx.x < 16) dst[threadIdx.x] = src[threadIdx.x];
}

// ---- (b) stale maps: updates inside one kernel -------------------------------

enum Method { stores, replace };
enum Fences { none, spin_pause, release_only, acquire_only, release_acquire };
const char* const kFenceName[] = {"no fence", "no fence, 20 us pause", "release only", "acquire only",
                                  "release + acquire"};

// counts[cta * kCounts + k]: k = 0..3 the second load's class relative to the
// switch (0 new tensor, 1 old tensor, 2 neither, 3 timeout), 4..7 the same for the
// first load of each iteration relative to the map's current contents, 8 and 9
// the loads (both) that delivered tensor A and B.
constexpr int kCounts = 10;
template <Method Me, Fences F>
__global__ void switch_in_kernel(CUtensorMap* slots, const CUtensorMap* templates, uint64_t addr_a, uint64_t addr_b,
                                 uint32_t* counts) {
  __shared__ __align__(128) uint32_t tile[kBoxN];
  __shared__ uint64_t bar;
  if (threadIdx.x != 0) return;
  CUtensorMap* m = slots + blockIdx.x;
  uint32_t* cnt = counts + blockIdx.x * kCounts;
  dev::mbar_init(&bar, 1);
  dev::fence_mbarrier_init();
  uint32_t phase = 0, cur = 0;  // the host wrote tensor A's map into every slot
  auto rel = [](uint32_t cls, uint32_t want) { return cls == 3 ? 3u : cls == 2 ? 2u : cls == want ? 0u : 1u; };
  for (int it = 0; it < kIters; ++it) {
    if (!load_box(tile, *m, 0, 0, &bar, phase)) return void(++cnt[7]);
    uint32_t cls = classify(tile);
    ++cnt[4 + rel(cls, cur)];
    if (cls < 2) ++cnt[8 + cls];
    const uint32_t nxt = cur ^ 1;
    if constexpr (Me == stores) {
      const volatile unsigned long long* src = reinterpret_cast<const unsigned long long*>(templates + nxt);
      volatile unsigned long long* dst = reinterpret_cast<unsigned long long*>(m);
      for (int w = 0; w < 16; ++w) dst[w] = src[w];
    } else {
      ptx::tensormap_replace_global_address(ptx::space_global, m, nxt ? addr_b : addr_a);
    }
    if constexpr (F == spin_pause) {
      const unsigned long long t0 = dev::global_timer_ns();
      while (dev::global_timer_ns() - t0 < 20000) {
      }
    }
    if constexpr (F == release_only || F == release_acquire)
      ptx::fence_proxy_tensormap_generic(ptx::sem_release, ptx::scope_gpu);
    if constexpr (F == acquire_only || F == release_acquire)
      ptx::fence_proxy_tensormap_generic(ptx::sem_acquire, ptx::scope_gpu, m, ptx::n32_t<128>{});
    if (!load_box(tile, *m, 0, 0, &bar, phase)) return void(++cnt[3]);
    cls = classify(tile);
    ++cnt[rel(cls, nxt)];
    if (cls < 2) ++cnt[8 + cls];
    cur = nxt;
  }
}

tmakit::tensor_map::TensorMap u32_map(void* base) {
  return dense_map_2d(tmakit::tensor_map::DataType::uint32, base, kW, kH, kBox, kBox);
}

}  // namespace

int main() {
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = sms;
  uint32_t *d_a, *d_b, *d_out, *d_cls;
  CUDA_OK(cudaMalloc(&d_a, kN * 4));
  CUDA_OK(cudaMalloc(&d_b, kN * 4));
  CUDA_OK(cudaMalloc(&d_out, kBoxN * 4));
  CUDA_OK(cudaMalloc(&d_cls, ctas * kCounts * 4));
  std::vector<uint32_t> ha(kN), hb(kN);
  for (int i = 0; i < kN; ++i) ha[i] = kTagA | uint32_t(i), hb[i] = kTagB | uint32_t(i);
  CUDA_OK(cudaMemcpy(d_a, ha.data(), kN * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_b, hb.data(), kN * 4, cudaMemcpyHostToDevice));
  const dev::MapHandle map_a = dev::make_map_handle(u32_map(d_a));
  const dev::MapHandle map_b = dev::make_map_handle(u32_map(d_b));
  {
    // The two encodings should differ in the global address only (8 bytes).
    int differ = 0;
    for (size_t i = 0; i < sizeof(CUtensorMap); ++i)
      differ += reinterpret_cast<const uint8_t*>(&map_a.map)[i] != reinterpret_cast<const uint8_t*>(&map_b.map)[i];
    std::printf("INFO the maps of A and B differ in %d of 128 bytes\n", differ);
  }

  // ---- (a) ----
  CUtensorMap* d_gmap;
  CUDA_OK(cudaMalloc(&d_gmap, sizeof(CUtensorMap)));
  CUDA_OK(cudaMemcpy(d_gmap, &map_a.map, sizeof(CUtensorMap), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpyToSymbol(c_map, &map_a.map, sizeof(CUtensorMap)));
  const int32_t coords[4][2] = {{0, 0}, {24, 8}, {56, 60}, {-8, -4}};
  void (*kernels[3])(dev::MapHandle, const CUtensorMap*, int32_t, int32_t, uint32_t*) = {
      placement_load<0>, placement_load<1>, placement_load<2>};
  const char* const placement_name[3] = {"__grid_constant__ parameter", "global memory", "__constant__ memory"};
  for (auto& xy : coords) {
    std::vector<uint32_t> want(kBoxN);
    for (int r = 0; r < kBox; ++r)
      for (int c = 0; c < kBox; ++c) {
        const int gx = xy[0] + c, gy = xy[1] + r;
        want[r * kBox + c] = (gx >= 0 && gx < kW && gy >= 0 && gy < kH) ? ha[gy * kW + gx] : 0;  // zero fill
      }
    for (int p = 0; p < 3; ++p) {
      kernels[p]<<<1, 32>>>(map_a, d_gmap, xy[0], xy[1], d_out);
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<uint32_t> got(kBoxN);
      CUDA_OK(cudaMemcpy(got.data(), d_out, kBoxN * 4, cudaMemcpyDeviceToHost));
      char what[160];
      std::snprintf(what, sizeof what, "(a) map as %s, box at (%d, %d): the expected bytes", placement_name[p], xy[0],
                    xy[1]);
      check(got == want, what);
    }
  }

  // ---- (b) host update between kernels ----
  CUtensorMap* d_slots;
  CUtensorMap* d_templates;
  CUDA_OK(cudaMalloc(&d_slots, sizeof(CUtensorMap) * ctas));
  CUDA_OK(cudaMalloc(&d_templates, sizeof(CUtensorMap) * 2));
  CUDA_OK(cudaMemcpy(d_templates, &map_a.map, sizeof(CUtensorMap), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_templates + 1, &map_b.map, sizeof(CUtensorMap), cudaMemcpyHostToDevice));
  auto fill_slots = [&](const CUtensorMap& m) {
    std::vector<CUtensorMap> v(ctas, m);
    return cudaMemcpy(d_slots, v.data(), sizeof(CUtensorMap) * ctas, cudaMemcpyHostToDevice);
  };
  constexpr int kReps = 16;
  const char* const updater_name[2] = {"host cudaMemcpy", "a kernel's generic stores"};
  for (int updater = 0; updater < 2; ++updater)
  for (int acquire = 0; acquire < 2; ++acquire) {
    long long cnt[2][4] = {};  // [first/second load][new/old/neither/timeout]
    for (int rep = 0; rep < kReps; ++rep) {
      const dev::MapHandle& first = rep % 2 ? map_b : map_a;
      const dev::MapHandle& second = rep % 2 ? map_a : map_b;
      const uint32_t first_cls = rep % 2, second_cls = first_cls ^ 1;
      for (int k = 0; k < 2; ++k) {
        if (updater == 0 || k == 0) CUDA_OK(fill_slots(k == 0 ? first.map : second.map));
        else rewrite_slots<<<ctas, 32>>>(d_slots, d_templates, int(second_cls));
        if (acquire) probe<true><<<ctas, 32>>>(d_slots, d_cls);
        else probe<false><<<ctas, 32>>>(d_slots, d_cls);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<uint32_t> cls(ctas);
        CUDA_OK(cudaMemcpy(cls.data(), d_cls, ctas * 4, cudaMemcpyDeviceToHost));
        const uint32_t want = k == 0 ? first_cls : second_cls;
        for (uint32_t c : cls) ++cnt[k][c >= 2 ? c : c == want ? 0 : 1];
      }
    }
    std::printf("INFO (b) %s between kernels, %s: second kernel's loads new %lld / old %lld / "
                "neither %lld / timeout %lld (first kernel: right %lld of %d)\n",
                updater_name[updater], acquire ? "acquire fence" : "no fence", cnt[1][0], cnt[1][1], cnt[1][2],
                cnt[1][3], cnt[0][0], kReps * ctas);
    char what[160];
    std::snprintf(what, sizeof what, "(b) %s between kernels (%s): every load sees the new map",
                  updater_name[updater], acquire ? "acquire fence" : "no fence");
    check(cnt[1][0] == kReps * ctas && cnt[0][0] == kReps * ctas, what);
  }

  // ---- (b) updates inside one kernel ----
  using K = void (*)(CUtensorMap*, const CUtensorMap*, uint64_t, uint64_t, uint32_t*);
  const K in_kernel[2][5] = {
      {switch_in_kernel<stores, none>, switch_in_kernel<stores, spin_pause>, switch_in_kernel<stores, release_only>,
       switch_in_kernel<stores, acquire_only>, switch_in_kernel<stores, release_acquire>},
      {switch_in_kernel<replace, none>, switch_in_kernel<replace, spin_pause>, switch_in_kernel<replace, release_only>,
       switch_in_kernel<replace, acquire_only>, switch_in_kernel<replace, release_acquire>}};
  const char* const method_name[2] = {"generic stores", "tensormap.replace"};
  for (int me = 0; me < 2; ++me)
    for (int f = 0; f < 5; ++f) {
      CUDA_OK(fill_slots(map_a.map));
      CUDA_OK(cudaMemset(d_cls, 0, ctas * kCounts * 4));
      in_kernel[me][f]<<<ctas, 32>>>(d_slots, d_templates, uint64_t(d_a), uint64_t(d_b), d_cls);
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<uint32_t> c(ctas * kCounts);
      CUDA_OK(cudaMemcpy(c.data(), d_cls, ctas * kCounts * 4, cudaMemcpyDeviceToHost));
      long long s[kCounts] = {};
      for (int b = 0; b < ctas; ++b)
        for (int k = 0; k < kCounts; ++k) s[k] += c[b * kCounts + k];
      std::printf("INFO (b) %s, %s: after the switch new %lld / old %lld / neither %lld / timeout %lld; "
                  "before it (map's current tensor) %lld / other %lld / neither %lld / timeout %lld; "
                  "all loads: tensor A %lld, B %lld\n",
                  method_name[me], kFenceName[f], s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9]);
      if (f == release_acquire) {
        char what[160];
        std::snprintf(what, sizeof what, "(b) %s with release + acquire: every load after the switch sees the new map",
                      method_name[me]);
        check(s[0] == (long long)ctas * kIters && s[4] == (long long)ctas * kIters, what);
      }
    }
  std::printf(failures ? "FAILED\n" : "ALL PASSED (the INFO lines are the Q27 observations)\n");
  return failures ? 1 : 0;
}
