// §14 Q18 (the rest): are bulk-engine `.add` reductions atomic per element
// against ordinary atomics of other CTAs on the same global elements?
// Half the CTAs (even blockIdx) reduce a 64 x 64 box (4,096 elements, 16 KiB)
// into the array kIters times, with cp.reduce.async.bulk.tensor .add (a map) or
// cp.reduce.async.bulk .add (no map); the other half add to every element
// kIters times with atomicAdd whose result is used (ATOM) or red.global.add
// (RED). Every contribution is a small integer (1..32) from a hash of (role,
// CTA, iteration, element), so u32 and f32 sums are exact (all partial sums stay
// below 2^24) and the host knows the exact expected sum of every element.
// Check: every element == initial + all reductions + all atomics, in every
// launch of every variant. The CTAs' %globaltimer windows show that the two
// halves ran at the same time. A control with plain load + store instead of
// atomics shows that the count catches lost updates (INFO only: racing
// non-atomic stores are expected to lose some).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "dense_map.cuh"
#include "gpu_check.cuh"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
namespace ptx = cuda::ptx;

namespace {

constexpr int kW = 64, kH = 64, kN = kW * kH;
constexpr int kIters = 64;
constexpr int kThreads = 256;
constexpr int kLaunches = 3;

enum Engine { tensor_add, bulk_add };
enum Atomic { atom, red, plain_control };

__host__ __device__ inline uint32_t contribution(uint32_t role, uint32_t cta, uint32_t it, uint32_t i) {
  uint32_t h = cta * 0x9E3779B1u ^ it * 0x85EBCA77u ^ i * 0xC2B2AE3Du ^ role * 0x27D4EB2Fu;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return (h & 31u) + 1u;
}

__device__ inline void red_add(uint32_t* p, uint32_t v) { asm volatile("red.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
__device__ inline void red_add(float* p, float v) { asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory"); }

template <class T, Engine E, Atomic A>
__global__ void race(const __grid_constant__ dev::MapHandle m, T* g, unsigned long long* window, T* sink) {
  extern __shared__ __align__(128) uint8_t dyn[];
  T* buf = reinterpret_cast<T*>(dyn);
  const uint32_t cta = blockIdx.x;
  const unsigned long long t0 = dev::global_timer_ns();
  if (cta % 2 == 0) {
    for (int it = 0; it < kIters; ++it) {
      for (int i = threadIdx.x; i < kN; i += blockDim.x) buf[i] = T(contribution(0, cta, it, i));
      dev::fence_proxy_async_shared();  // the generic writes -> visible to the bulk engine
      __syncthreads();
      if (threadIdx.x == 0) {
        if constexpr (E == tensor_add) {
          const int32_t c[2] = {0, 0};
          dev::reduce_tile(ptx::op_add, m, c, buf);
        } else {
          dev::bulk_reduce(ptx::op_add, g, buf, uint32_t(kN * sizeof(T)));
        }
        dev::commit_group();
        dev::wait_group_read<0>();  // buf is read: the next iteration may overwrite it
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) dev::wait_group<0>();
  } else {
    T acc = 0;
    for (int it = 0; it < kIters; ++it)
      for (int k = threadIdx.x; k < kN; k += blockDim.x) {
        const int i = (k + int(cta) * 37) % kN;  // CTAs start at different elements
        const T v = T(contribution(1, cta, it, i));
        if constexpr (A == atom) acc += atomicAdd(&g[i], v);  // result used: ATOM, not RED
        else if constexpr (A == red) red_add(&g[i], v);
        else {
          volatile T* p = g + i;
          *p = *p + v;
        }
      }
    if (A == atom) sink[cta * blockDim.x + threadIdx.x] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    window[2 * cta] = t0;
    window[2 * cta + 1] = dev::global_timer_ns();
  }
}

struct Result {
  long long mismatched = 0;
  long long overlap_ns = 0;  // min over launches of the time both halves ran together
  double ms = 0;
};

template <class T, Engine E, Atomic A>
int run_variant(const char* name, T* d_g, int ctas, Result& r) {
  using tmakit::tensor_map::DataType;
  const dev::MapHandle h = dev::make_map_handle(
      dense_map_2d(std::is_same_v<T, float> ? DataType::float32 : DataType::uint32, d_g, kW, kH, kW, kH));
  unsigned long long* d_win;
  T* d_sink;
  CUDA_OK(cudaMalloc(&d_win, sizeof(unsigned long long) * 2 * ctas));
  CUDA_OK(cudaMalloc(&d_sink, sizeof(T) * ctas * kThreads));
  const int smem = kN * sizeof(T);
  CUDA_OK(cudaFuncSetAttribute(race<T, E, A>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  // The exact expected sum of every element.
  std::vector<T> init(kN), want(kN), got(kN);
  for (int i = 0; i < kN; ++i) init[i] = T(i % 997);
  for (int i = 0; i < kN; ++i) {
    uint64_t s = uint64_t(i % 997);
    for (int cta = 0; cta < ctas; ++cta)
      for (int it = 0; it < kIters; ++it) s += contribution(cta % 2, cta, it, i);
    want[i] = T(uint32_t(s));
  }
  r.overlap_ns = -1;
  for (int l = 0; l < kLaunches; ++l) {
    CUDA_OK(cudaMemcpy(d_g, init.data(), sizeof(T) * kN, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    race<T, E, A><<<ctas, kThreads, smem>>>(h, d_g, d_win, d_sink);
    cudaEventRecord(e1);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    r.ms += ms;
    CUDA_OK(cudaMemcpy(got.data(), d_g, sizeof(T) * kN, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kN; ++i) r.mismatched += got[i] != want[i];
    std::vector<unsigned long long> w(2 * ctas);
    CUDA_OK(cudaMemcpy(w.data(), d_win, sizeof(unsigned long long) * 2 * ctas, cudaMemcpyDeviceToHost));
    unsigned long long r0 = ~0ull, r1 = 0, a0 = ~0ull, a1 = 0;
    for (int c = 0; c < ctas; ++c) {
      auto& lo = c % 2 == 0 ? r0 : a0;
      auto& hi = c % 2 == 0 ? r1 : a1;
      lo = std::min(lo, w[2 * c]);
      hi = std::max(hi, w[2 * c + 1]);
    }
    const long long ov = (long long)std::min(r1, a1) - (long long)std::max(r0, a0);
    r.overlap_ns = r.overlap_ns < 0 ? ov : std::min(r.overlap_ns, ov);
  }
  cudaFree(d_win);
  cudaFree(d_sink);
  const long long per_elem = (long long)ctas / 2 * kIters;
  std::printf("INFO %s: %d launches x %d elements; per element %lld engine .add + %lld %s contributions; "
              "mismatched elements %lld; the two halves overlapped >= %lld us per launch; %.2f ms per launch\n",
              name, kLaunches, kN, per_elem, per_elem, A == atom ? "ATOM" : A == red ? "RED" : "plain ld/st",
              r.mismatched, r.overlap_ns / 1000, r.ms / kLaunches);
  return 0;
}

}  // namespace

int main() {
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = 2 * sms;  // two 16 KiB CTAs per SM: every CTA is resident at once
  void* d_g;
  CUDA_OK(cudaMalloc(&d_g, kN * 4));
  std::printf("INFO %d CTAs (%d SMs): even CTAs reduce, odd CTAs use atomics, %d iterations each\n", ctas, sms, kIters);
  struct V {
    const char* name;
    int (*fn)(const char*, void*, int, Result&);
    bool checked;
  };
#define VARIANT(T, E, A, checked) \
  V{#T " " #E " vs " #A, [](const char* n, void* g, int c, Result& r) { return run_variant<T, E, A>(n, (T*)g, c, r); }, checked}
  const V variants[] = {
      VARIANT(uint32_t, tensor_add, atom, true), VARIANT(uint32_t, tensor_add, red, true),
      VARIANT(uint32_t, bulk_add, atom, true),   VARIANT(uint32_t, bulk_add, red, true),
      VARIANT(float, tensor_add, atom, true),    VARIANT(float, tensor_add, red, true),
      VARIANT(float, bulk_add, atom, true),      VARIANT(float, bulk_add, red, true),
      VARIANT(uint32_t, tensor_add, plain_control, false), VARIANT(uint32_t, bulk_add, plain_control, false),
  };
#undef VARIANT
  for (const V& v : variants) {
    Result r;
    if (v.fn(v.name, d_g, ctas, r)) return 1;
    if (v.checked) {
      char what[160];
      std::snprintf(what, sizeof what, "%s: every element == initial + every contribution", v.name);
      check(r.mismatched == 0, what);
      std::snprintf(what, sizeof what, "%s: the reducing and the atomic CTAs ran at the same time", v.name);
      check(r.overlap_ns > 0, what);
    } else {
      std::printf("INFO control %s: %lld elements lost updates (the count detects non-atomic updates)\n", v.name,
                  r.mismatched);
    }
  }
  std::printf(failures ? "FAILED\n" : "ALL PASSED\n");
  return failures ? 1 : 0;
}
