// What the two Q26 probes (probe_interleave.cu: tiled, probe_interleave_im2col.cu:
// im2col) share: a self-describing global allocation, a marker-filled shared window
// that comes back whatever happened, bounded polling of the barrier, and a fault
// check that names the case and ends the process (the device command resumes after it).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tmakit/device/tma.cuh"

namespace probe_common {

namespace dev = tmakit::device;

constexpr uint32_t kAllocBytes = 4u << 20;    // the global allocation
constexpr uint32_t kTensorOffset = 2u << 20;  // the tensor in its middle: reads around it stay inside
constexpr uint32_t kWindow = 49152;           // shared bytes copied out after every launch
constexpr uint32_t kDst = 4096;               // the destination's offset in the window
constexpr uint32_t kMarker = 0x11111111u;     // the window's fill (never a byte of the allocation)
constexpr uint64_t kTimeoutNs = 2'000'000;    // how long the barrier is polled

// Byte k of word i holds 0x80 | k << 5 | (i >> 5k) & 31: every byte names its own
// offset, and none is the marker or a zero fill.
inline uint8_t* self_describing_allocation() {
  uint8_t* g = nullptr;
  cudaMalloc(&g, kAllocBytes);
  std::vector<uint32_t> h(kAllocBytes / 4);
  for (uint32_t i = 0; i < h.size(); ++i) {
    uint32_t v = 0;
    for (uint32_t b = 0; b < 4; ++b) v |= (0x80u | b << 5 | ((i >> (5 * b)) & 31)) << (8 * b);
    h[i] = v;
  }
  cudaMemcpy(g, h.data(), kAllocBytes, cudaMemcpyHostToDevice);
  return g;
}

inline std::string hex(const void* p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const uint8_t*>(p)[i]);
    s += b;
  }
  return s;
}

// The 1024-aligned window in dynamic shared memory, filled with the marker by the block.
__device__ inline uint8_t* marked_window(uint8_t* raw) {
  uint8_t* win = raw + ((1024 - (dev::smem_addr(raw) & 1023)) & 1023);
  uint32_t* w = reinterpret_cast<uint32_t*>(win);
  for (uint32_t i = threadIdx.x; i < kWindow / 4; i += blockDim.x) w[i] = kMarker;
  __syncthreads();
  return win;
}

// Polls phase 0 of `bar` for kTimeoutNs from t0: whether it completed, and when.
__device__ inline uint64_t poll(uint64_t* bar, uint64_t t0, uint64_t* done_ns) {
  uint64_t done = 0;
  while (!(done = dev::test_wait_parity(bar, 0)) && dev::global_timer_ns() - t0 < kTimeoutNs) {
  }
  *done_ns = dev::global_timer_ns() - t0;
  return done;
}

// 200 us more, so that a load that never completes can finish writing.
__device__ inline void settle() {
  const uint64_t t1 = dev::global_timer_ns();
  while (dev::global_timer_ns() - t1 < 200'000) {
  }
}

// What main() of a probe starts from: OUTDIR and FIRST_CASE from the command line
// (`--count` prints the number of cases instead), results.jsonl opened for appending,
// the self-describing allocation, the device copies of the window and of the kernel's
// Info, and the kernel allowed the window plus alignment slack of dynamic shared memory.
template <class Info>
struct Setup {
  std::string out;
  size_t first = 0;
  FILE* res = nullptr;
  uint8_t* g = nullptr;
  uint32_t* win = nullptr;
  Info* info = nullptr;
  size_t smem = kWindow + 1024;
};

// Returns the setup, or an exit code (0 after --count, 2 for a bad command line).
template <class Info, class Kernel>
int start(int argc, char** argv, const char* name, size_t cases, Kernel* kernel, Setup<Info>& s) {
  if (argc == 2 && std::string(argv[1]) == "--count") return std::printf("%zu\n", cases), 0;
  if (argc != 3) return std::fprintf(stderr, "usage: %s OUTDIR FIRST_CASE | --count\n", name), 2;
  s.out = argv[1];
  s.first = std::stoul(argv[2]);
  s.res = std::fopen((s.out + "/results.jsonl").c_str(), "a");
  s.g = self_describing_allocation();
  cudaMalloc(&s.win, kWindow);
  cudaMalloc(&s.info, sizeof(Info));
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s.smem));
  return -1;
}

__device__ inline void copy_window_out(const uint8_t* win, uint32_t* out) {
  __syncthreads();
  const uint32_t* w = reinterpret_cast<const uint32_t*>(win);
  for (uint32_t i = threadIdx.x; i < kWindow / 4; i += blockDim.x) out[i] = w[i];
}

}  // namespace probe_common

// After a launch: on a CUDA error, record it for case `idx` in `res`, say so, exit 3.
#define CHECK_OR_FAULT(what, idx)                                                                       \
  do {                                                                                                 \
    cudaError_t e_ = cudaDeviceSynchronize();                                                          \
    if (e_ == cudaSuccess) e_ = cudaGetLastError();                                                    \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(res, "{\"case\": %zu, \"fault\": \"%s\", \"at\": \"%s\"}\n", idx, cudaGetErrorName(e_), \
                   what);                                                                              \
      std::fflush(res);                                                                                \
      std::printf("FAULT case %zu (%s): %s\n", idx, what, cudaGetErrorName(e_));                       \
      std::exit(3);                                                                                    \
    }                                                                                                  \
  } while (0)
