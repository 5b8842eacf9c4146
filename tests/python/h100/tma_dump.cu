// The H100 half of tests/vectors/python: for each case, encode a tiled tensor map
// with the driver (cuTensorMapEncodeTiled), load one box with
// cp.async.bulk.tensor into shared memory at a 1024-aligned base + smem_offset
// (the scenario format's shared window), and write the raw shared-memory bytes
// of the box's footprint, swizzle and all, as the hardware left them.
//
// Input (argv[1]): one case per line, whitespace-separated:
//   dtype rank dims[rank] strides[rank-1] box[rank] element_strides[rank] swizzle oob_fill
//   coords[rank] smem_offset footprint bytes_per_box tensor_file out_file
// dtype, swizzle and oob_fill are the driver's enum values. The region before the
// load is zeroed, so padding the engine does not write reads back as zero (as in the model).
// Build: nvcc -std=c++17 -arch=sm_90a -o tma_dump tma_dump.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK_RT(x)                                                                    \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return false;                                                                    \
    }                                                                                  \
  } while (0)

struct Coords {
  int c[5];
};

__device__ void load_box(uint32_t dst, const CUtensorMap* map, int rank, Coords k, uint32_t bar) {
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  switch (rank) {
    case 1:
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                   ::"r"(dst), "l"(m), "r"(k.c[0]), "r"(bar) : "memory");
      break;
    case 2:
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   ::"r"(dst), "l"(m), "r"(k.c[0]), "r"(k.c[1]), "r"(bar) : "memory");
      break;
    case 3:
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                   ::"r"(dst), "l"(m), "r"(k.c[0]), "r"(k.c[1]), "r"(k.c[2]), "r"(bar) : "memory");
      break;
    case 4:
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                   ::"r"(dst), "l"(m), "r"(k.c[0]), "r"(k.c[1]), "r"(k.c[2]), "r"(k.c[3]), "r"(bar) : "memory");
      break;
    default:
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                   ::"r"(dst), "l"(m), "r"(k.c[0]), "r"(k.c[1]), "r"(k.c[2]), "r"(k.c[3]), "r"(k.c[4]), "r"(bar) : "memory");
  }
}

__global__ void dump_box(const __grid_constant__ CUtensorMap map, int rank, Coords coords, uint32_t smem_offset,
                         uint32_t footprint, uint32_t bytes, unsigned char* out) {
  extern __shared__ unsigned char raw[];
  __shared__ alignas(8) uint64_t bar_storage;
  // The window's offset 0 at a 1024-aligned shared address (swizzle phase follows smem_offset).
  const uint32_t raw_addr = static_cast<uint32_t>(__cvta_generic_to_shared(raw));
  const uint32_t base_addr = (raw_addr + 1023u) & ~1023u;
  unsigned char* base = raw + (base_addr - raw_addr);
  for (uint32_t i = threadIdx.x; i < footprint; i += blockDim.x) base[smem_offset + i] = 0;
  __syncthreads();
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar_storage));
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the zeros before the engine's writes
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    load_box(base_addr + smem_offset, &map, rank, coords, bar);
    asm volatile(
        "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT_%=;\n}\n" ::"r"(bar)
        : "memory");
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < footprint; i += blockDim.x) out[i] = base[smem_offset + i];
}

static bool run_case(const std::string& line, int index) {
  std::istringstream in(line);
  int dtype, rank, swizzle, fill;
  in >> dtype >> rank;
  if (!in || rank < 1 || rank > 5) return false;
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t box[5] = {}, estr[5] = {};
  Coords coords{};
  for (int i = 0; i < rank; ++i) in >> dims[i];
  for (int i = 0; i + 1 < rank; ++i) in >> strides[i];
  for (int i = 0; i < rank; ++i) in >> box[i];
  for (int i = 0; i < rank; ++i) in >> estr[i];
  in >> swizzle >> fill;
  for (int i = 0; i < rank; ++i) in >> coords.c[i];
  uint32_t smem_offset, footprint, bytes;
  std::string tensor_file, out_file;
  in >> smem_offset >> footprint >> bytes >> tensor_file >> out_file;
  if (!in) {
    std::fprintf(stderr, "case %d: malformed line\n", index);
    return false;
  }
  std::ifstream tf(tensor_file, std::ios::binary);
  std::vector<unsigned char> host((std::istreambuf_iterator<char>(tf)), std::istreambuf_iterator<char>());
  void* dev = nullptr;
  unsigned char* dev_out = nullptr;
  CHECK_RT(cudaMalloc(&dev, host.size() + 1024));
  CHECK_RT(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice));
  CHECK_RT(cudaMalloc(&dev_out, footprint));
  CUtensorMap map;
  CUresult r = cuTensorMapEncodeTiled(&map, CUtensorMapDataType(dtype), cuuint32_t(rank), dev, dims, strides, box, estr,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CUtensorMapSwizzle(swizzle),
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CUtensorMapFloatOOBfill(fill));
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "case %d: cuTensorMapEncodeTiled returned %d\n", index, int(r));
    return false;
  }
  const size_t smem = 1024 + smem_offset + footprint;
  CHECK_RT(cudaFuncSetAttribute(dump_box, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  dump_box<<<1, 128, smem>>>(map, rank, coords, smem_offset, footprint, bytes, dev_out);
  CHECK_RT(cudaGetLastError());
  CHECK_RT(cudaDeviceSynchronize());
  std::vector<unsigned char> box_bytes(footprint);
  CHECK_RT(cudaMemcpy(box_bytes.data(), dev_out, footprint, cudaMemcpyDeviceToHost));
  std::ofstream(out_file, std::ios::binary).write(reinterpret_cast<const char*>(box_bytes.data()), footprint);
  cudaFree(dev);
  cudaFree(dev_out);
  return true;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tma_dump CASES.txt\n");
    return 2;
  }
  std::ifstream cases(argv[1]);
  std::string line;
  int index = 0, failed = 0;
  while (std::getline(cases, line)) {
    if (line.empty()) continue;
    if (!run_case(line, index)) ++failed;
    ++index;
  }
  std::printf("tma_dump: %d cases, %d failed\n", index, failed);
  return failed ? 1 : 0;
}
