// Launches the CuTe DSL TMA copy kernel of tests/corpus/cutedsl/ (tests/corpus/gen/cutedsl_kernels.py:
// compiled by nvidia-cutlass-dsl, its PTX kept with CUTE_DSL_KEEP=ptx) through the driver API, the
// way the DSL's runtime would: the module from its PTX, two tiled tensor maps passed by value,
// grid 4×4 of 128 threads. The DSL itself cannot run on the lent GPU machine (docs/check.md,
// "CuTe DSL"), so this stands in for its launch, not for its kernel: under `tmakit check` the
// kernel's records come from the DSL's own PTX (tests/gpu/check/cutedsl_mutants.py).
//
//   tma_copy_launch MODULE.ptx
//
// Copies a 256×256 fp16 matrix (64×64 tiles: one TMA load completing on an mbarrier, one TMA
// store in a bulk group a CTA) and compares it with its source. Exit status: 0 the copy is
// exact, 1 it is not, 2 a driver call failed or the module has no kernel.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kRows = 256, kCols = 256, kTile = 64;

bool ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "tma_copy_launch: %s failed: %s\n", what, name ? name : "unknown error");
  return false;
}

// The module's first kernel: the name after `.entry`.
std::string entry_name(const std::string& ptx) {
  const size_t at = ptx.find(".entry ");
  if (at == std::string::npos) return {};
  const size_t begin = at + 7, end = ptx.find_first_of("( \t\n", begin);
  return ptx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// A row-major kRows×kCols fp16 matrix as a 2D tiled map, kTile×kTile boxes, no swizzle: the
// kernel's coordinates are {column, row} (innermost first), its shared tile row-major.
bool encode(CUtensorMap& map, CUdeviceptr base) {
  const cuuint64_t dims[2] = {kCols, kRows}, strides[1] = {kCols * sizeof(uint16_t)};
  const cuuint32_t box[2] = {kTile, kTile}, element_strides[2] = {1, 1};
  return ok(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, reinterpret_cast<void*>(base), dims,
                                   strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "cuTensorMapEncodeTiled");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tma_copy_launch MODULE.ptx\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "tma_copy_launch: cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string ptx = text.str();
  const std::string kernel = entry_name(ptx);
  if (kernel.empty()) {
    std::fprintf(stderr, "tma_copy_launch: %s has no .entry\n", argv[1]);
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction fn;
  if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") || !ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
      !ok(cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData") ||
      !ok(cuModuleGetFunction(&fn, module, kernel.c_str()), "cuModuleGetFunction"))
    return 2;
  const size_t bytes = size_t{kRows} * kCols * sizeof(uint16_t);
  std::vector<uint16_t> src(size_t{kRows} * kCols), dst(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(0x3c00 + i % 1021);  // finite fp16 values
  CUdeviceptr d_src, d_dst;
  if (!ok(cuMemAlloc(&d_src, bytes), "cuMemAlloc") || !ok(cuMemAlloc(&d_dst, bytes), "cuMemAlloc") ||
      !ok(cuMemcpyHtoD(d_src, src.data(), bytes), "cuMemcpyHtoD") || !ok(cuMemsetD8(d_dst, 0, bytes), "cuMemsetD8"))
    return 2;
  alignas(64) CUtensorMap load_map, store_map;
  if (!encode(load_map, d_src) || !encode(store_map, d_dst)) return 2;
  // The tile (8 KiB) and its mbarrier after it, in the 1024-aligned dynamic window.
  const unsigned shared = kTile * kTile * sizeof(uint16_t) + 64;
  void* params[] = {&load_map, &store_map};
  if (!ok(cuLaunchKernel(fn, kRows / kTile, kCols / kTile, 1, 128, 1, 1, shared, nullptr, params, nullptr),
          "cuLaunchKernel") ||
      !ok(cuCtxSynchronize(), "the kernel") || !ok(cuMemcpyDtoH(dst.data(), d_dst, bytes), "cuMemcpyDtoH"))
    return 2;
  size_t wrong = 0;
  for (size_t i = 0; i < src.size(); ++i) wrong += dst[i] != src[i];
  std::printf("tma_copy_launch: %s, %zu of %zu elements copied right\n", wrong ? "WRONG" : "OK", src.size() - wrong,
              src.size());
  cuMemFree(d_src);
  cuMemFree(d_dst);
  cuModuleUnload(module);
  cuDevicePrimaryCtxRelease(dev);
  return wrong ? 1 : 0;
}
