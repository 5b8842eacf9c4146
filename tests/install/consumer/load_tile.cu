// docs/device-library.md, "A load, end to end": one box per CTA
// through tmakit::device (the kernel as the page writes it), the map encoded
// by make_map_handle: 32 x 32 floats (128-byte rows, the 128B swizzle's span).
#include <cuda_runtime.h>

#include <cstdio>

#include <tmakit/device/tma.cuh>

__global__ void k(const __grid_constant__ tmakit::device::MapHandle map, float* out) {
  __shared__ alignas(1024) float tile[64 * 32];  // 128B swizzle: phase 0 at 1024
  __shared__ uint64_t bar;
  namespace dev = tmakit::device;
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    dev::arrive_expect_tx(&bar, map);  // bytes from the map
    const int32_t c[2] = {0, 32 * int(blockIdx.x)};
    dev::load_tile(tile, map, c, &bar);
  }
  __syncthreads();
  dev::wait_parity(&bar, 0, map.box_bytes);
  const uint32_t n = map.box_bytes / sizeof(float);  // 32 x 32 floats
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x * n + i] = tile[i];
}

int main() {
  float* in = nullptr;
  float* out = nullptr;
  if (cudaMalloc(&in, 32 * 128 * sizeof(float)) != cudaSuccess) return 2;  // no GPU: nothing to run
  cudaMalloc(&out, 32 * 128 * sizeof(float));
  tmakit::tensor_map::TensorMap m;
  m.rank = 2;
  m.global_address = reinterpret_cast<uintptr_t>(in);
  m.dims = {32, 128};
  m.strides = {32 * sizeof(float)};
  m.box = {32, 32};
  m.swizzle = tmakit::tensor_map::Swizzle::b128;
  const auto h = tmakit::device::make_map_handle(m);
  k<<<4, 128>>>(h, out);
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
