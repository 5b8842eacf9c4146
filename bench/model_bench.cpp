// Throughput of the model's tiled-mode walk (src/model/tile.cpp) on one core:
// 2-D bf16 boxes of 64 x 64 with 128B swizzle walked over a 64 MiB tensor, for
// loads, stores and add-reductions, next to plain memcpy of the same byte count
// per iteration (the baseline; docs/benchmarks.md has the figures).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "tmakit/model/im2col.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/model/tile.hpp"

namespace {

using namespace tmakit;

constexpr uint32_t kBox = 64;                       // 64 x 64 bf16: 128-byte rows, 8 KiB per box
constexpr uint64_t kDim0 = 4096, kDim1 = 8192;      // 4096 x 8192 bf16 = 64 MiB
constexpr uint64_t kRowBytes = kDim0 * 2;
constexpr uint64_t kBoxBytes = kBox * kBox * 2;

struct Fixture {
  model::GlobalMemory g;
  tensor_map::TensorMap map;
  std::vector<uint8_t> smem = std::vector<uint8_t>(kBoxBytes);
  uint8_t* tensor = nullptr;

  Fixture() {
    map.data_type = tensor_map::DataType::bfloat16;
    map.rank = 2;
    map.dims = {kDim0, kDim1};
    map.strides = {kRowBytes};
    map.box = {kBox, kBox};
    map.swizzle = tensor_map::Swizzle::b128;
    map.global_address = g.allocate("tensor", kRowBytes * kDim1, 1024);
    auto& bytes = g.allocation("tensor")->bytes;
    for (size_t i = 0; i < bytes.size(); i += 2) bytes[i] = uint8_t(i), bytes[i + 1] = 0x3F;  // finite bf16
    tensor = bytes.data();
    for (size_t i = 0; i < smem.size(); i += 2) smem[i] = uint8_t(i), smem[i + 1] = 0x3C;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// Box coordinates walking the tensor box by box, row of boxes by row of boxes.
struct Walk {
  int32_t x = 0, y = 0;
  void next() {
    x += kBox;
    if (uint64_t(x) >= kDim0) {
      x = 0;
      y += kBox;
      if (uint64_t(y) >= kDim1) y = 0;
    }
  }
};

void BM_TileLoad(benchmark::State& state) {
  Fixture& f = fixture();
  Walk w;
  for (auto _ : state) {
    const int32_t c[2] = {w.x, w.y};
    model::tile_load(f.map, c, f.g, f.smem, 0);
    benchmark::DoNotOptimize(f.smem.data());
    w.next();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

// The same boxes walked down the tensor (y first, then x): no box continues
// the previous one along dimension 0, so the walk's stream prefetch stays off
// and each box prefetches its own rows (src/model/tile.cpp StreamPredictor).
void BM_TileLoadDown(benchmark::State& state) {
  Fixture& f = fixture();
  int32_t x = 0, y = 0;
  for (auto _ : state) {
    const int32_t c[2] = {x, y};
    model::tile_load(f.map, c, f.g, f.smem, 0);
    benchmark::DoNotOptimize(f.smem.data());
    y += kBox;
    if (uint64_t(y) >= kDim1) y = 0, x = (x + int32_t(kBox)) % int32_t(kDim0);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

void BM_TileStore(benchmark::State& state) {
  Fixture& f = fixture();
  Walk w;
  for (auto _ : state) {
    const int32_t c[2] = {w.x, w.y};
    model::tile_store(f.map, c, f.smem, 0, f.g);
    benchmark::ClobberMemory();
    w.next();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

void BM_TileReduceAdd(benchmark::State& state) {
  Fixture& f = fixture();
  Walk w;
  for (auto _ : state) {
    const int32_t c[2] = {w.x, w.y};
    model::tile_reduce(f.map, c, spec::RedOp::add, f.smem, 0, f.g);
    benchmark::ClobberMemory();
    w.next();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

// Baseline: one contiguous memcpy of a box's byte count per iteration, walking
// the whole tensor, global -> buffer.
void BM_MemcpyLoad(benchmark::State& state) {
  Fixture& f = fixture();
  uint64_t off = 0;
  for (auto _ : state) {
    std::memcpy(f.smem.data(), f.tensor + off, kBoxBytes);
    benchmark::DoNotOptimize(f.smem.data());
    off = (off + kBoxBytes) % (kRowBytes * kDim1);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

// The same, buffer -> global.
void BM_MemcpyStore(benchmark::State& state) {
  Fixture& f = fixture();
  uint64_t off = 0;
  for (auto _ : state) {
    std::memcpy(f.tensor + off, f.smem.data(), kBoxBytes);
    benchmark::ClobberMemory();
    off = (off + kBoxBytes) % (kRowBytes * kDim1);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

// memcpy of exactly the box's rows (64 pieces of 128 bytes at the box's
// addresses, no swizzle): the cost of the access pattern alone.
void BM_MemcpyBoxRows(benchmark::State& state) {
  Fixture& f = fixture();
  Walk w;
  for (auto _ : state) {
    const uint8_t* src = f.tensor + uint64_t(w.y) * kRowBytes + uint64_t(w.x) * 2;
    for (uint32_t r = 0; r < kBox; ++r) std::memcpy(f.smem.data() + r * 128, src + r * kRowBytes, 128);
    benchmark::DoNotOptimize(f.smem.data());
    w.next();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBoxBytes));
}

// im2col (§4): the A-operand feed of an implicit-GEMM 3x3 convolution, padding 1, over a
// 64 x 64 NHWC bf16 image with 64 channels (512 KiB): one load per (128-pixel M tile, tap),
// 64 channels x 128 pixels = 16 KiB, 128B swizzle; the walk crosses rows and the padding.
void BM_Im2colLoad(benchmark::State& state) {
  constexpr uint64_t kC = 64, kHW = 64;
  static model::GlobalMemory g;
  static tensor_map::TensorMap map = [] {
    tensor_map::TensorMap m;
    m.encode = tensor_map::Encode::im2col;
    m.data_type = tensor_map::DataType::bfloat16;
    m.rank = 4;
    m.dims = {kC, kHW, kHW, 1};
    m.strides = {kC * 2, kC * 2 * kHW, kC * 2 * kHW * kHW};
    m.pixel_box_lower = {-1, -1};
    m.pixel_box_upper = {-1, -1};
    m.channels_per_pixel = kC;
    m.pixels_per_column = 128;
    m.swizzle = tensor_map::Swizzle::b128;
    m.global_address = g.allocate("image", kC * 2 * kHW * kHW, 1024);
    auto& bytes = g.allocation("image")->bytes;
    for (size_t i = 0; i < bytes.size(); i += 2) bytes[i] = uint8_t(i), bytes[i + 1] = 0x3F;
    return m;
  }();
  std::vector<uint8_t> smem(128 * 128);
  int32_t tile = 0, tap = 0;
  for (auto _ : state) {
    const int32_t p0 = tile * 128;  // first output pixel of the M tile: row p0 / 64, column p0 % 64
    const int32_t c[4] = {0, p0 % int32_t(kHW) - 1, p0 / int32_t(kHW) - 1, 0};
    model::Im2colInfo info;
    info.offsets = {tap % 3, tap / 3, 0};
    model::im2col_load(map, c, info, g, smem, 0);
    benchmark::DoNotOptimize(smem.data());
    if (++tap == 9) tap = 0, tile = (tile + 1) % int32_t(kHW * kHW / 128);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(smem.size()));
}

BENCHMARK(BM_MemcpyLoad);
BENCHMARK(BM_MemcpyBoxRows);
BENCHMARK(BM_TileLoad);
BENCHMARK(BM_TileLoadDown);
BENCHMARK(BM_MemcpyStore);
BENCHMARK(BM_TileStore);
BENCHMARK(BM_TileReduceAdd);
BENCHMARK(BM_Im2colLoad);

}  // namespace

BENCHMARK_MAIN();
