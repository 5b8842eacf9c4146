// TMAKIT_DEBUG_WAIT (compiled in by src/gpu/CMakeLists.txt, bound 200 ms): a barrier
// armed with 16 bytes more than its one load delivers never completes (§2.3, H-Q5);
// the bounded wait must print the barrier and trap instead of hanging. Exit 0 when
// the launch fails with the trap; scripts/gpu.sh also checks the printed line.
#include <cuda_runtime.h>

#include <cstdio>

#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;

__global__ void over_armed(const __grid_constant__ dev::MapHandle m) {
  __shared__ alignas(128) uint8_t tile[4096];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    dev::arrive_expect_tx(&bar, m.box_bytes + 16);
    const int32_t c[2] = {0, 0};
    dev::load_tile(tile, m, c, &bar);
    dev::wait_parity(&bar, 0, m.box_bytes + 16);
  }
}

int main() {
  void* g;
  if (cudaMalloc(&g, 1 << 16) != cudaSuccess) return 2;
  tmakit::tensor_map::TensorMap m;
  m.data_type = tmakit::tensor_map::DataType::float32;
  m.rank = 2;
  m.global_address = uint64_t(g);
  m.dims = {64, 64};
  m.strides = {256};
  m.box = {32, 8};
  dev::MapHandle h = dev::make_map_handle(m);
  over_armed<<<1, 32>>>(h);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) {
    std::printf("FAIL debug wait: the over-armed barrier did not trap\n");
    return 1;
  }
  std::printf("PASS debug wait trapped: %s\n", cudaGetErrorName(e));
  return 0;
}
