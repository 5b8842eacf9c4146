// Shared parts of the GPU benchmark suite (bench/gpu, docs/benchmarks.md "GPU (H100)"):
// error checks, device buffers, random fills, poison, exact checks, event timing,
// the cudaMemcpy baseline and the result table. Every workload file adds rows
// through Suite::add(); main.cu prints the sweep and the summary.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tmakit/device/tma.cuh"

namespace bench {

namespace dev = tmakit::device;
using tmakit::tensor_map::DataType;
using tmakit::tensor_map::L2Promotion;
using tmakit::tensor_map::Swizzle;
using tmakit::tensor_map::TensorMap;

#define BENCH_CUDA(x)                                                                                  \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #x); \
      std::exit(2);                                                                                    \
    }                                                                                                  \
  } while (0)

// A device allocation freed at scope end (plain cudaMalloc: no managed memory).
struct Buf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Buf(size_t n) : bytes(n) { BENCH_CUDA(cudaMalloc(&p, n)); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

// Random inputs, never zeros: f32 values k/256 with k in [-512, 511] \ {0} (10
// significant bits, so sums of up to 2^13 of them are exact in any order);
// bf16 values likewise (8-bit mantissa holds k/256 for |k| < 256 exactly).
void fill_f32(float* p, size_t n, uint64_t seed);
void fill_bf16(uint16_t* p, size_t n, uint64_t seed);
void fill_u32(uint32_t* p, size_t n, uint64_t seed);
// 0xFF bytes: NaN for f32 and bf16, so an unwritten element never matches.
void poison(void* p, size_t bytes);
// Words (4 bytes) where a != b.
uint64_t count_diff_u32(const void* a, const void* b, size_t bytes);
// Elements where out[x][y] != in[y][x] (in: h rows of w elements, elem 4 or 2 bytes).
uint64_t count_transpose_diff(const void* in, const void* out, uint32_t w, uint32_t h, int elem);

// Median milliseconds of `reps` launches, after `warm` untimed ones.
double median_ms(const std::function<void()>& launch, int reps = 20, int warm = 3);

struct Row {
  std::string workload;  // "copy 2-D 1 GiB f32"
  std::string impl;      // "tmakit tma-2d", "peer cudaMemcpy", ...
  std::string config;    // lever settings
  double bytes = 0;      // bytes the workload must move (read + write)
  double ms = 0;
  double memcpy_gbs = 0;  // cudaMemcpy rate over the same bytes, same run
  bool checked = false;
  std::string note;
  double gbs() const { return bytes / ms / 1e6; }
  double ratio() const { return memcpy_gbs > 0 ? gbs() / memcpy_gbs : 0; }
};

struct Suite {
  cudaDeviceProp prop{};
  int sms = 0;
  int reps = 20;
  bool quick = false;          // fewer sweep points
  std::string only;            // run only workloads whose name starts with this
  bool profile = false;        // one launch of each best config, for ncu
  std::vector<Row> rows;
  std::map<size_t, double> memcpy_cache;
  uint64_t seed = 20261122;

  // cudaMemcpy device-to-device of bytes/2, rate counted as bytes read + written.
  double memcpy_gbs(double bytes);
  // Adds a timed row; prints it at once (the sweep log).
  Row& add(Row r);
  bool wants(const std::string& name) const { return only.empty() || name.rfind(only, 0) == 0; }
  uint64_t next_seed() { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; }
  // Returns false (and records a FAIL row) when mismatches != 0.
  bool expect_zero(uint64_t mismatches, const std::string& workload, const std::string& impl,
                   const std::string& config);
  // The check-then-time step of every workload: `prepare` draws fresh inputs and
  // poisons the output, `run` is launched once and synchronised, `mismatches`
  // counts wrong elements; only a clean check is timed (median of `reps`
  // launches of `launch`) and added as row `r`. False when the check failed.
  bool check_and_time(Row r, const std::function<void()>& prepare, const std::function<void()>& run,
                      const std::function<uint64_t()>& mismatches, const std::function<void()>& launch);
};

// A 2-D tiled map over a row-major matrix: `w` elements per row, `h` rows.
TensorMap map_2d(const void* base, DataType t, uint64_t w, uint64_t h, uint32_t bw, uint32_t bh,
                 Swizzle sw = Swizzle::none, L2Promotion promo = L2Promotion::none);

// Workloads (one file each).
void run_copy(Suite&);
void run_transpose(Suite&);
void run_reduce(Suite&);
void run_im2col(Suite&);
void run_multicast(Suite&);
void run_gemm_feed(Suite&);

// Occupancy check: returns CTAs per SM the kernel actually gets with `smem` dynamic bytes.
template <class K>
int ctas_per_sm(K kernel, int threads, size_t smem) {
  if (smem > 48 * 1024) BENCH_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int n = 0;
  BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
  return n;
}

std::string fmt(const char* f, ...);

}  // namespace bench
