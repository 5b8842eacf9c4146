// What the SM clock and the global timer give a trace that orders records by time rather than by
// tickets: (1) how far apart the clocks of a cluster's SMs read right after a cluster barrier
// (each CTA leaves the barrier at about the same instant), and whether that offset holds from one
// barrier to the next; (2) the global timer's step; (3) what a read of each costs a warp.
// Prints one line a fact; docs/check.md ("How the module is changed", Order) quotes it. Built and run by
// scripts/check-real-device.sh (REAL_PARTS=clock).
#include <cooperative_groups.h>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

constexpr int kBarriers = 8;

__device__ uint64_t global_timer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ uint32_t sm_id() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

__global__ void __launch_bounds__(128) cluster_clocks(uint64_t* clocks, uint64_t* timers, uint32_t* sms) {
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = 0; i < kBarriers; ++i) {
    cluster.sync();
    const uint64_t c = clock64();
    const uint64_t g = global_timer();
    if (threadIdx.x == 0) {
      clocks[blockIdx.x * kBarriers + i] = c;
      timers[blockIdx.x * kBarriers + i] = g;
    }
    // Let the CTAs drift apart between barriers, by different amounts.
    for (int k = 0; k < 200 * ((blockIdx.x + i) % 5); ++k) __nanosleep(10);
  }
  if (threadIdx.x == 0) sms[blockIdx.x] = sm_id();
}

__global__ void timer_steps(uint64_t* t, int n) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) t[i] = global_timer();
}

__global__ void read_costs(uint64_t* out, int n) {
  uint64_t sum = 0;
  const uint64_t a = clock64();
  for (int i = 0; i < n; ++i) sum += clock64();
  const uint64_t b = clock64();
  for (int i = 0; i < n; ++i) sum += global_timer();
  const uint64_t c = clock64();
  uint32_t s32 = 0;
  for (int i = 0; i < n; ++i) s32 += static_cast<uint32_t>(clock());
  const uint64_t d = clock64();
  if (threadIdx.x == 0) out[0] = b - a, out[1] = c - b, out[2] = d - c, out[3] = sum + s32;
}

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::printf("error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

template <int kCluster>
int clusters(int ctas) {
  uint64_t *clocks, *timers;
  uint32_t* sms;
  CHECK(cudaMalloc(&clocks, ctas * kBarriers * 8));
  CHECK(cudaMalloc(&timers, ctas * kBarriers * 8));
  CHECK(cudaMalloc(&sms, ctas * 4));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(ctas), cfg.blockDim = dim3(128);
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = kCluster, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cfg.attrs = &attr, cfg.numAttrs = 1;
  if (kCluster > 8) CHECK(cudaFuncSetAttribute(cluster_clocks, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaLaunchKernelEx(&cfg, cluster_clocks, clocks, timers, sms));
  CHECK(cudaDeviceSynchronize());
  std::vector<uint64_t> c(ctas * kBarriers), g(ctas * kBarriers);
  std::vector<uint32_t> s(ctas);
  CHECK(cudaMemcpy(c.data(), clocks, c.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(g.data(), timers, g.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(s.data(), sms, s.size() * 4, cudaMemcpyDeviceToHost));
  // For each cluster and barrier: the spread of the CTAs' clocks (max - min) and of their timers;
  // the offset of each CTA against the cluster's first at barrier 0, and how much it moves later.
  int64_t worst_spread = 0, worst_timer_spread = 0, worst_drift = 0, worst_offset = 0;
  for (int cl = 0; cl < ctas / kCluster; ++cl) {
    for (int i = 0; i < kBarriers; ++i) {
      int64_t lo = INT64_MAX, hi = INT64_MIN, glo = INT64_MAX, ghi = INT64_MIN;
      for (int k = 0; k < kCluster; ++k) {
        const int64_t v = static_cast<int64_t>(c[(cl * kCluster + k) * kBarriers + i]);
        const int64_t w = static_cast<int64_t>(g[(cl * kCluster + k) * kBarriers + i]);
        lo = std::min(lo, v), hi = std::max(hi, v), glo = std::min(glo, w), ghi = std::max(ghi, w);
      }
      worst_spread = std::max(worst_spread, hi - lo);
      worst_timer_spread = std::max(worst_timer_spread, ghi - glo);
    }
    for (int k = 1; k < kCluster; ++k) {
      auto at = [&](int cta, int i) { return static_cast<int64_t>(c[(cl * kCluster + cta) * kBarriers + i]); };
      const int64_t off0 = at(k, 0) - at(0, 0);
      worst_offset = std::max(worst_offset, std::abs(off0));
      for (int i = 1; i < kBarriers; ++i) worst_drift = std::max(worst_drift, std::abs(at(k, i) - at(0, i) - off0));
    }
  }
  std::printf("cluster %d, %d CTAs (cluster 0 on SMs %u, %u): clock64 spread after a cluster barrier, worst %lld cycles; "
              "offset between a cluster's SMs at its first barrier, worst %lld cycles; that offset moves by at most "
              "%lld cycles over %d barriers; globaltimer spread, worst %lld ns\n",
              kCluster, ctas, s[0], s[1], static_cast<long long>(worst_spread), static_cast<long long>(worst_offset),
              static_cast<long long>(worst_drift), kBarriers, static_cast<long long>(worst_timer_spread));
  cudaFree(clocks), cudaFree(timers), cudaFree(sms);
  return 0;
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  if (clusters<2>(128) || clusters<4>(128) || clusters<8>(128)) return 1;
  const int n = 4096;
  uint64_t* t;
  CHECK(cudaMalloc(&t, n * 8));
  timer_steps<<<1, 32>>>(t, n);
  CHECK(cudaDeviceSynchronize());
  std::vector<uint64_t> h(n);
  CHECK(cudaMemcpy(h.data(), t, n * 8, cudaMemcpyDeviceToHost));
  uint64_t steps = 0, min_step = UINT64_MAX;
  for (int i = 1; i < n; ++i)
    if (h[i] != h[i - 1]) ++steps, min_step = std::min(min_step, h[i] - h[i - 1]);
  std::printf("globaltimer: %llu changes in %d back-to-back reads over %llu ns; smallest step %llu ns\n",
              static_cast<unsigned long long>(steps), n, static_cast<unsigned long long>(h[n - 1] - h[0]),
              static_cast<unsigned long long>(min_step));
  read_costs<<<1, 32>>>(t, n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(h.data(), t, 4 * 8, cudaMemcpyDeviceToHost));
  std::printf("cycles a read in a loop of %d (one warp): clock64 %.1f, globaltimer %.1f, clock %.1f\n", n,
              double(h[0]) / n, double(h[1]) / n, double(h[2]) / n);
  return 0;
}
