// The CUDA runtime's way to the driver, as CUTLASS and PyTorch take it:
// cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion for the encoder, then
// one accepted map and one the driver refuses (box[0] = 512 > 256). Runs on a GPU
// machine under `tmakit watch` (scripts/watch-device.sh); the log must show both
// calls with "via": "cudaGetDriverEntryPoint".
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      fn == nullptr) {
    std::printf("cudaGetDriverEntryPointByVersion failed\n");
    return 1;
  }
  auto encode = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(fn);
  void* fn_old = nullptr;
#pragma nv_diag_suppress 1444  // cudaGetDriverEntryPoint is deprecated, and still what older code calls
  if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn_old, cudaEnableDefault, &q) != cudaSuccess) return 1;
  auto encode_old = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(fn_old);
  float* data = nullptr;
  cudaMalloc(&data, 1024 * 1024 * sizeof(float));
  alignas(64) CUtensorMap map{};
  cuuint64_t dims[2] = {1024, 1024}, strides[1] = {1024 * sizeof(float)};
  cuuint32_t box[2] = {64, 32}, estr[2] = {1, 1};
  CUresult ok = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, data, dims, strides, box, estr,
                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  cuuint32_t big_box[2] = {512, 32};
  CUresult refused = encode_old(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, data, dims, strides, big_box, estr,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  std::printf("runtime path: accepted map -> %d, box 512 -> %d\n", static_cast<int>(ok), static_cast<int>(refused));
  cudaFree(data);
  return ok == CUDA_SUCCESS && refused == CUDA_ERROR_INVALID_VALUE ? 0 : 1;
}
