// libcu++'s bulk-copy layer on the GPU (issue 15; seed page 004, spec §12):
//  (a) the example kernel of the cuda::device::memcpy_async_tx page, verbatim apart
//      from a harness (the `barrier` alias the page assumes, and a copy of smem_x to
//      global memory after its last line), launched with 32 threads (as
//      examples/memcpy_async_tx/scenario.json) and with 1024; smem_x is checked against
//      the source and against what the model computes for that scenario;
//  (b) a kernel mixing cuda::barrier<thread_scope_block> with tmakit's tensor loads
//      on one barrier through the device library's cuda::barrier overloads (no casts):
//      tile loads + memcpy_async_tx armed by arrive_expect_tx(bar, map, loads, bytes),
//      arrive counts > 1 (barrier_arrive_tx), expect_tx + a hinted tile load + a
//      bulk_load, and a parity wait; every byte is checked against the host's.
// Run from the repository root (it reads examples/memcpy_async_tx/scenario.json; or
// pass that file's path as the first argument). Exit 0 = pass.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "dense_map.cuh"
#include "gpu_check.cuh"
#include "tmakit/device/tma.cuh"
#include "tmakit/scenario/scenario.hpp"

namespace dev = tmakit::device;
using tmakit::tensor_map::DataType;

// ---- (a) the seed page's example ----------------------------------------------
// harness: the page's kernel names `barrier` unqualified (its Godbolt source has this alias).
using barrier = cuda::barrier<cuda::thread_scope_block>;
// harness: where the kernel's shared memory is copied after its last line.
__device__ int gmem_out[1024];

// ---- verbatim from tests/seeds/004_* (the page's "Example") ----
#include <cuda/barrier>
#include <cuda/std/utility> // cuda::std::move
#if defined(__CUDA_MINIMUM_ARCH__) && __CUDA_MINIMUM_ARCH__ < 900
static_assert(false, "Insufficient CUDA Compute Capability: cuda::device::memcpy_async_tx is not available.");
#endif // __CUDA_MINIMUM_ARCH__
__device__ alignas(16) int gmem_x[2048];
__global__ void example_kernel() {
__shared__ alignas(16) int smem_x[1024];
__shared__ cuda::barrier<cuda::thread_scope_block> bar;
if (threadIdx.x == 0) {
init(&bar, blockDim.x);
}
__syncthreads();
barrier::arrival_token token;
if (threadIdx.x == 0) {
cuda::device::memcpy_async_tx(smem_x, gmem_x, cuda::aligned_size_t<16>(sizeof(smem_x)), bar);
token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_x));
} else {
token = bar.arrive(1);
}
bar.wait(cuda::std::move(token));
// smem_x contains the contents of gmem_x[0], ..., gmem_x[1023]
smem_x[threadIdx.x] += 1;
// ---- end of the page's kernel; harness: ----
__syncthreads();
for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) gmem_out[i] = smem_x[i];
}

// ---- (b) cuda::barrier mixed with tensor loads ----------------------------------
// A 256 x 64 uint32 tensor, boxes of 32 x 8 (1 KiB); a 16 KiB byte buffer `g` for
// the non-tensor copies.
constexpr int W = 256, H = 64, BX = 32, BY = 8, BOX = BX * BY, GBYTES = 16384, THREADS = 128;
// Tiles: phase 0 (32, 8); phase 1 (64, 16) and (96, 24); phase 2 (0, 40) with a hint.
constexpr int kTileX[4] = {32, 64, 96, 0}, kTileY[4] = {8, 16, 24, 40};
// Copies: phase 0 g[4096, +1024) and g[8208, +48) into a[0, 1072); phase 1
// g[8192, +4096) into b (aligned_size_t<128>); phase 2 bulk_load g[12288, +256) into c.
constexpr int A0 = 4096, A0N = 1024, A1 = 8208, A1N = 48, B0 = 8192, BN = 4096, C0 = 12288, CN = 256;

struct MixedOut {
  uint32_t tiles[4][BOX];
  uint8_t a[A0N + A1N];
  uint8_t b[BN];
  uint8_t c[CN];
  uint32_t parity_waited;  // thread 1 got through wait_parity(bar, 1)
};

__global__ void mixed_kernel(const __grid_constant__ dev::MapHandle map, const uint8_t* g, MixedOut* out) {
  __shared__ alignas(128) uint32_t tiles[4][BOX];
  __shared__ alignas(128) uint8_t a[A0N + A1N];
  __shared__ alignas(128) uint8_t b[BN];
  __shared__ alignas(128) uint8_t c[CN];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  const unsigned t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();

  // phase 0: one tile + two memcpy_async_tx; thread 0 arms map bytes + 1072 with its arrival.
  {
    cuda::barrier<cuda::thread_scope_block>::arrival_token token;
    if (t == 0) {
      const int32_t xy[2] = {kTileX[0], kTileY[0]};
      dev::load_tile(tiles[0], map, xy, bar);
      cuda::device::memcpy_async_tx(a, g + A0, cuda::aligned_size_t<16>(A0N), bar);
      cuda::device::memcpy_async_tx(a + A0N, g + A1, cuda::aligned_size_t<16>(A1N), bar);
      token = dev::arrive_expect_tx(bar, map, 1, A0N + A1N);
    } else {
      token = bar.arrive();
    }
    bar.wait(cuda::std::move(token));
  }
  // phase 1: two tiles + one 4 KiB copy; thread 0 arrives for itself and thread 1
  // (barrier_arrive_tx with count 2: expect_tx then arrive(2)); thread 1 waits on parity 1.
  if (t == 1) {
    dev::wait_parity(bar, 1);
    out->parity_waited = 1;
  } else {
    cuda::barrier<cuda::thread_scope_block>::arrival_token token;
    if (t == 0) {
      const int32_t xy1[2] = {kTileX[1], kTileY[1]}, xy2[2] = {kTileX[2], kTileY[2]};
      dev::load_tile(tiles[1], map, xy1, bar);
      cuda::device::memcpy_async_tx(b, g + B0, cuda::aligned_size_t<128>(BN), bar);
      dev::load_tile(tiles[2], map, xy2, bar);
      token = dev::barrier_arrive_tx(bar, 2, map, 2, BN);
    } else {
      token = dev::arrive(bar);
    }
    bar.wait(cuda::std::move(token));
  }
  // phase 2: expect_tx(map) + expect_tx(256), a hinted tile load and a bulk_load, then
  // every thread arrives once.
  {
    if (t == 0) {
      dev::expect_tx(bar, map);
      dev::expect_tx(bar, uint32_t(CN));
      const int32_t xy[2] = {kTileX[3], kTileY[3]};
      dev::load_tile(tiles[3], map, xy, bar, dev::kEvictFirst);
      dev::bulk_load(c, g + C0, CN, bar);
    }
    auto token = bar.arrive();
    bar.wait(cuda::std::move(token));
  }
  for (int i = t; i < 4 * BOX; i += blockDim.x) out->tiles[i / BOX][i % BOX] = tiles[i / BOX][i % BOX];
  for (int i = t; i < A0N + A1N; i += blockDim.x) out->a[i] = a[i];
  for (int i = t; i < BN; i += blockDim.x) out->b[i] = b[i];
  for (int i = t; i < CN; i += blockDim.x) out->c[i] = c[i];
}

namespace {

int word(const std::vector<uint8_t>& bytes, int i) {
  int v;
  std::memcpy(&v, bytes.data() + 4 * i, 4);
  return v;
}

// (a): returns 0, or 1 after a CUDA failure (reported).
int run_example(const char* scenario_path) {
  tmakit::scenario::Scenario s;
  std::vector<uint8_t> model_smem;
  try {
    s = tmakit::scenario::load_file(scenario_path);
    const auto r = tmakit::scenario::run(s);
    if (r.outputs.size() == 1) model_smem = r.outputs[0].second;
  } catch (const std::exception& e) {
    std::printf("FAIL example: the model on %s: %s (run from the repository root)\n", scenario_path, e.what());
    ++failures;
    return 0;
  }
  check(s.globals.size() == 1 && s.globals[0].name == "gmem_x" && s.globals[0].bytes == 8192,
        "example: the scenario's gmem_x is int[2048]");
  check(model_smem.size() == 4096, "example: the model outputs smem_x (4096 bytes)");
  if (s.globals.size() != 1 || model_smem.size() != 4096) return 0;
  std::vector<uint8_t> src(8192);
  s.globals[0].init.fill(std::span<uint8_t>(src));
  check(std::memcmp(model_smem.data(), src.data(), 4096) == 0, "example: model smem_x = gmem_x[0..1023]");

  for (int threads : {32, 1024}) {
    CUDA_OK(cudaMemcpyToSymbol(gmem_x, src.data(), src.size()));
    std::vector<int> poison(1024, 0x7eadbeef);
    CUDA_OK(cudaMemcpyToSymbol(gmem_out, poison.data(), 4096));
    example_kernel<<<1, threads>>>();
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<int> got(1024);
    CUDA_OK(cudaMemcpyFromSymbol(got.data(), gmem_out, 4096));
    // smem_x[i] = gmem_x[i], + 1 for i < blockDim.x (the kernel's last line).
    int bad_src = 0, bad_model = 0, first = -1;
    for (int i = 0; i < 1024; ++i) {
      const int inc = i < threads ? 1 : 0;
      const int from_src = word(src, i) + inc;
      const int from_model = word(model_smem, i) + inc;
      if (got[i] != from_src) bad_src++, first = first < 0 ? i : first;
      if (got[i] != from_model) bad_model++, first = first < 0 ? i : first;
    }
    char what[160];
    std::snprintf(what, sizeof what, "example, %d threads: smem_x = gmem_x[0..1023] (+1 where a thread ran) (%d wrong)",
                  threads, bad_src);
    check(bad_src == 0, what);
    std::snprintf(what, sizeof what, "example, %d threads: smem_x = the model's smem_x for the scenario (%d wrong)",
                  threads, bad_model);
    check(bad_model == 0, what);
    if (first >= 0)
      std::printf("  first wrong int %d: got 0x%08x, source 0x%08x\n", first, unsigned(got[first]),
                  unsigned(word(src, first)));
    // The seed's scenario is the 32-thread launch; the 1024-thread one fills every element.
  }
  return 0;
}

int run_mixed() {
  std::vector<uint32_t> host(W * H);
  for (int i = 0; i < W * H; ++i) host[i] = 0x9e3779b9u * uint32_t(i + 1) ^ uint32_t(i);
  std::vector<uint8_t> gbytes(GBYTES);
  for (int i = 0; i < GBYTES; ++i) gbytes[i] = uint8_t((i * 131 + 7) ^ (i >> 8));
  uint32_t* dtensor = nullptr;
  uint8_t* dg = nullptr;
  MixedOut* dout = nullptr;
  CUDA_OK(cudaMalloc(&dtensor, host.size() * 4));
  CUDA_OK(cudaMalloc(&dg, GBYTES));
  CUDA_OK(cudaMalloc(&dout, sizeof(MixedOut)));
  CUDA_OK(cudaMemcpy(dtensor, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dg, gbytes.data(), GBYTES, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dout, 0xA5, sizeof(MixedOut)));
  dev::MapHandle map;
  try {
    map = dev::make_map_handle(dense_map_2d(DataType::uint32, dtensor, W, H, BX, BY));
  } catch (const std::exception& e) {
    std::printf("FAIL mixed: encoding the map: %s\n", e.what());
    return 1;
  }
  check(map.bytes() == BOX * 4 && map.bytes(2) == 2 * BOX * 4, "mixed: MapHandle::bytes() = box bytes x loads");
  mixed_kernel<<<1, THREADS>>>(map, dg, dout);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  MixedOut got;
  CUDA_OK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));

  for (int k = 0; k < 4; ++k) {
    int bad = 0;
    for (int r = 0; r < BY; ++r)
      for (int x = 0; x < BX; ++x)
        bad += got.tiles[k][r * BX + x] != host[(kTileY[k] + r) * W + kTileX[k] + x];
    char what[160];
    std::snprintf(what, sizeof what, "mixed: tile %d at (%d, %d) on the cuda::barrier, every element (%d wrong)", k,
                  kTileX[k], kTileY[k], bad);
    check(bad == 0, what);
  }
  check(std::memcmp(got.a, gbytes.data() + A0, A0N) == 0 && std::memcmp(got.a + A0N, gbytes.data() + A1, A1N) == 0,
        "mixed: phase 0 memcpy_async_tx 1024 B + 48 B with a tile, armed by arrive_expect_tx(bar, map, 1, 1072)");
  check(std::memcmp(got.b, gbytes.data() + B0, BN) == 0,
        "mixed: phase 1 memcpy_async_tx 4096 B with two tiles, barrier_arrive_tx(bar, 2, map, 2, 4096)");
  check(got.parity_waited == 1, "mixed: wait_parity(cuda::barrier, 1) returned after phase 1");
  check(std::memcmp(got.c, gbytes.data() + C0, CN) == 0,
        "mixed: phase 2 bulk_load 256 B + a hinted tile load after expect_tx(bar, map) and expect_tx(bar, 256)");
  cudaFree(dtensor);
  cudaFree(dg);
  cudaFree(dout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* scenario_path = argc > 1 ? argv[1] : "examples/memcpy_async_tx/scenario.json";
  if (run_example(scenario_path)) return 1;
  if (run_mixed()) return 1;
  if (failures) {
    std::printf("%d FAILED\n", failures);
    return 1;
  }
  std::printf("ALL PASSED\n");
  return 0;
}
