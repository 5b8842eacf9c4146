// §14 Q25: does cp.async.bulk.wait_group(.read) wait for an mbarrier-completed
// tensor load issued before the commit? One thread issues a load, then (mode 1)
// commit_group + wait_group.read 0 or (mode 2) commit_group + wait_group 0, or
// (mode 0) nothing, and at once test_wait's the load's barrier; %globaltimer
// gives the time to that point and to the load's completion. The GPU engine's
// step handshakes take longer than a 192 KiB load, so it cannot tell
// (tests/vectors/questions/q25_*); this kernel has no steps between the
// instructions. Checks: every load completes with the right bytes; prints how
// often the barrier had already completed after each mode (docs/hardware-notes.md).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;

constexpr int kIters = 64;

struct Sample {
  uint32_t done;              // test_wait right after the mode's instructions
  unsigned long long t_mode;  // ns from the load's issue to after the mode's instructions
  unsigned long long t_load;  // ns from the issue to the completed wait
};

template <int Mode>
__global__ void probe(const __grid_constant__ dev::MapHandle m, Sample* out, uint32_t* check) {
  extern __shared__ __align__(1024) uint8_t dyn[];
  uint8_t* tile = dyn + ((1024u - (dev::smem_addr(dyn) & 1023u)) & 1023u);
  __shared__ uint64_t bar;
  if (threadIdx.x != 0) return;
  dev::mbar_init(&bar, 1);
  dev::fence_mbarrier_init();
  const int32_t c[3] = {0, 0, 0};
  for (int it = 0; it < kIters; ++it) {
    const uint32_t parity = it & 1;
    dev::arrive_expect_tx(&bar, m.box_bytes);
    const unsigned long long t0 = dev::global_timer_ns();
    dev::load_tile(tile, m, c, &bar);
    if (Mode == 1) dev::commit_group(), dev::wait_group_read<0>();
    if (Mode == 2) dev::commit_group(), dev::wait_group<0>();
    const bool done = dev::test_wait_parity(&bar, parity);
    const unsigned long long t1 = dev::global_timer_ns();
    while (!dev::try_wait_parity(&bar, parity)) {
    }
    const unsigned long long t2 = dev::global_timer_ns();
    out[it] = {done, t1 - t0, t2 - t0};
  }
  uint32_t sum = 0;
  for (uint32_t i = 0; i < m.box_bytes; i += 4096) sum += tile[i] + (tile[i + 4095] << 8);
  *check = sum;
}

int main() {
  constexpr uint32_t kW = 256, kH = 256, kD = 3, kBytes = kW * kH * kD;  // 192 KiB
  uint8_t* g;
  if (cudaMalloc(&g, kBytes) != cudaSuccess) return 2;
  std::vector<uint8_t> host(kBytes);
  for (uint32_t i = 0; i < kBytes; ++i) host[i] = uint8_t(i * 2654435761u >> 24);
  cudaMemcpy(g, host.data(), kBytes, cudaMemcpyHostToDevice);
  uint32_t want = 0;
  for (uint32_t i = 0; i < kBytes; i += 4096) want += host[i] + (host[i + 4095] << 8);
  tmakit::tensor_map::TensorMap m;
  m.data_type = tmakit::tensor_map::DataType::uint8;
  m.rank = 3;
  m.global_address = uint64_t(g);
  m.dims = {kW, kH, kD};
  m.strides = {kW, uint64_t(kW) * kH};
  m.box = {kW, kH, kD};
  dev::MapHandle h = dev::make_map_handle(m);
  Sample* d_out;
  uint32_t* d_check;
  cudaMalloc(&d_out, sizeof(Sample) * kIters);
  cudaMalloc(&d_check, sizeof(uint32_t));
  const char* names[] = {"no wait", "commit_group + wait_group.read 0", "commit_group + wait_group 0"};
  void (*kernels[])(dev::MapHandle, Sample*, uint32_t*) = {probe<0>, probe<1>, probe<2>};
  int failures = 0;
  for (int mode = 0; mode < 3; ++mode) {
    const int smem = int(kBytes) + 1024;
    cudaFuncSetAttribute(kernels[mode], cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaMemset(d_check, 0, sizeof(uint32_t));
    kernels[mode]<<<1, 32, smem>>>(h, d_out, d_check);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::printf("FAIL %s: %s\n", names[mode], cudaGetErrorName(e));
      return 1;
    }
    Sample s[kIters];
    uint32_t check = 0;
    cudaMemcpy(s, d_out, sizeof s, cudaMemcpyDeviceToHost);
    cudaMemcpy(&check, d_check, sizeof check, cudaMemcpyDeviceToHost);
    int done = 0;
    double tm = 0, tl = 0;
    for (int i = 1; i < kIters; ++i) done += s[i].done, tm += double(s[i].t_mode), tl += double(s[i].t_load);  // skip the cold first
    const int n = kIters - 1;
    std::printf("INFO Q25 %s: barrier already complete at test_wait %d/%d; mean %.0f ns to test_wait, %.0f ns to the load's completion\n",
                names[mode], done, n, tm / n, tl / n);
    if (check != want) {
      std::printf("FAIL %s: the loaded bytes differ\n", names[mode]);
      ++failures;
    }
  }
  std::printf(failures ? "FAILED\n" : "ALL PASSED (the INFO lines are the Q25 observation)\n");
  return failures ? 1 : 0;
}
