// The host half the two rings share (ring.cu on cuda::ptx, ring_devlib.cu on tmakit's device
// library): the mode named on the command line, the input tensor and the check of the output.
// Each program encodes its maps and launches its kernel itself.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ring_host {

inline constexpr const char* kModes[] = {"clean", "parity", "refill", "nofence"};

// The mode's number (0..3, the kernels' Mode), or -1 after printing the usage.
inline int parse_mode(const char* program, int argc, char** argv) {
  for (int m = 0; m < 4; ++m)
    if (argc == 2 && std::strcmp(argv[1], kModes[m]) == 0) return m;
  std::fprintf(stderr, "usage: %s clean|parity|refill|nofence\n", program);
  return -1;
}

inline int fail(const char* program, const char* what, cudaError_t e) {
  std::fprintf(stderr, "%s: %s: %s\n", program, what, cudaGetErrorString(e));
  return 2;
}

// A `rows` × `tile` float tensor in, one as large out (zeroed): element i of the input is
// (i % 1000) / 2, so every tile differs from its neighbours.
struct Tensors {
  uint64_t rows = 0, n = 0;
  std::vector<float> host;
  float *in = nullptr, *out = nullptr;
};

inline cudaError_t make_tensors(Tensors& t, uint64_t rows, uint64_t tile) {
  t.rows = rows;
  t.n = rows * tile;
  t.host.resize(t.n);
  for (uint64_t i = 0; i < t.n; ++i) t.host[i] = static_cast<float>(i % 1000) * 0.5f;
  cudaError_t e;
  if ((e = cudaMalloc(&t.in, t.n * sizeof(float))) != cudaSuccess) return e;
  if ((e = cudaMalloc(&t.out, t.n * sizeof(float))) != cudaSuccess) return e;
  if ((e = cudaMemcpy(t.in, t.host.data(), t.n * sizeof(float), cudaMemcpyHostToDevice)) != cudaSuccess) return e;
  return cudaMemset(t.out, 0, t.n * sizeof(float));
}

// After the kernel: every output is 2 × its input + the round k that wrote it (the tile's index
// within its CTA's `tiles`). Prints the count of wrong outputs; the exit status: 0 right, 1 wrong.
inline int check_output(const char* program, int mode, const Tensors& t, uint64_t tiles, uint64_t tile) {
  std::vector<float> back(t.n);
  cudaMemcpy(back.data(), t.out, t.n * sizeof(float), cudaMemcpyDeviceToHost);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < t.n; ++i) {
    const uint64_t k = (i / (tile * tile)) % tiles;
    if (back[i] != 2.0f * t.host[i] + static_cast<float>(k)) ++wrong;
  }
  std::printf("%s %s: %llu of %llu outputs wrong\n", program, kModes[mode], static_cast<unsigned long long>(wrong),
              static_cast<unsigned long long>(t.n));
  return wrong ? 1 : 0;
}

}  // namespace ring_host
