// Interleaved (16B / 32B) im2col loads (Q26, docs/hardware-notes.md "interleave decisions"
// item 9) against a naive per-row reference written here from the H100 probe's rule
// (tools/gpu/probe_interleave_im2col.cu): every shared row is one slice (16 or 32 bytes,
// whatever channelsPerPixel); the walked dimensions are tensor dimensions 0..rank-3 (C in
// slices, W, H), each inside [lower_k, dims[k] - 1 + upper_k], stepping by
// elementStrides[k], with offset k added; dimension rank-2 stays at its coordinate; the
// last walked dimension carries into n (by elementStrides[rank-1]); rows are dense and
// swizzled by the §3.1 XOR; OOB rows are zero or 0x7FF7; complete_tx = rows × slice.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/im2col.hpp"
#include "tmakit/model/memory.hpp"
#include "interleave_ref.hpp"

namespace {

using tmakit::DiagnosticError;
using tmakit::model::GlobalMemory;
using tmakit::model::Im2colInfo;
using namespace tmakit::tensor_map;

using namespace interleave_ref;
using Row = Unit;

// The rows, the naive way: a position vector over the walked dimensions, bumped like an
// odometer whose digit k runs over [lower_k, dims[k] - 1 + upper_k].
std::vector<Row> ref_rows(const TensorMap& m, const std::vector<int32_t>& c, const Im2colInfo& info) {
  const int walked = m.rank - 2;
  const uint32_t s = slice_of(m.interleave);
  std::vector<int64_t> pos(c.begin(), c.begin() + walked);
  int64_t n = c[m.rank - 1];
  const int64_t fixed = c[m.rank - 2];
  std::vector<Row> out;
  for (uint32_t r = 0; r < m.pixels_per_column; ++r) {
    std::vector<int64_t> g(m.rank);
    for (int k = 0; k < walked; ++k) g[k] = pos[k] + info.offsets[k];
    g[m.rank - 2] = fixed;
    g[m.rank - 1] = n;
    bool in = true;
    uint64_t addr = m.global_address;
    for (int i = 0; i < m.rank; ++i) {
      in = in && g[i] >= 0 && g[i] < int64_t(m.dims[i]);
      addr += uint64_t(g[i]) * (i == 0 ? s : m.strides[i - 1]);
    }
    out.push_back({in, addr});
    int k = 0;
    for (; k < walked; ++k) {
      pos[k] += m.element_strides[k];
      if (pos[k] <= int64_t(m.dims[k]) - 1 + m.pixel_box_upper[k]) break;
      pos[k] = m.pixel_box_lower[k];
    }
    if (k == walked) n += m.element_strides[m.rank - 1];
  }
  return out;
}

std::vector<uint8_t> ref_load(const TensorMap& m, const std::vector<int32_t>& c, const Im2colInfo& info,
                              const GlobalMemory& g, std::vector<uint8_t> smem, uint32_t dst) {
  return place(m, ref_rows(m, c, info), g, std::move(smem), dst);
}

std::mt19937_64 rng(2627);
int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

TensorMap random_map(DataType t, int rank, Interleave il) {
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = t;
  m.rank = rank;
  m.interleave = il;
  m.swizzle = static_cast<Swizzle>(irand(0, 3));
  m.channels_per_pixel = uint32_t(16 / element_bytes(t) * irand(1, 4));  // ignored by the walk
  m.pixels_per_column = uint32_t(irand(1, 64));
  for (int i = 0; i < rank; ++i) m.dims[i] = irand(1, 6), m.element_strides[i] = irand(1, 3);
  padded_strides(m, irand);
  for (int k = 0; k < rank - 2; ++k) {
    m.pixel_box_lower[k] = irand(-2, 0);
    m.pixel_box_upper[k] = irand(-1, 2);
    if (int64_t(m.dims[k]) - 1 + m.pixel_box_upper[k] < m.pixel_box_lower[k]) m.pixel_box_upper[k] = 0;
  }
  m.oob_fill = is_float(t) && irand(0, 1) ? OobFill::nan_request_zero_fma : OobFill::zero;
  return m;
}

TEST(InterleaveIm2col, RandomLoadsMatchThePerRowReference) {
  const DataType types[] = {DataType::uint8,   DataType::uint16,  DataType::uint32,  DataType::uint64,
                            DataType::float16, DataType::float32, DataType::bfloat16};
  for (int iter = 0; iter < 400; ++iter) {
    const Interleave il = iter % 2 ? Interleave::b32 : Interleave::b16;
    TensorMap m = random_map(types[iter % 7], 3 + iter % 3, il);
    GlobalMemory g;
    m.global_address = g.allocate("A", tensor_end(m) + 64);
    for (auto& b : g.allocation("A")->bytes) b = uint8_t(irand(0, 255));
    std::vector<int32_t> c(m.rank);
    for (int k = 0; k < m.rank - 2; ++k)  // a base inside the box (outside it faults)
      c[k] = irand(m.pixel_box_lower[k], int(m.dims[k]) - 1 + m.pixel_box_upper[k]);
    c[m.rank - 2] = irand(-1, int(m.dims[m.rank - 2]));  // the fixed dimension may lie outside
    c[m.rank - 1] = irand(-1, int(m.dims[m.rank - 1]));
    Im2colInfo info;
    for (int k = 0; k < m.rank - 2; ++k) info.offsets[k] = irand(0, 3);
    const uint32_t dst = 1024 + 128 * irand(0, 7);
    std::vector<uint8_t> smem(4096);
    for (auto& b : smem) b = uint8_t(irand(0, 255));
    const std::vector<uint8_t> before = smem;
    const auto want = ref_load(m, c, info, g, smem, dst);
    tmakit::model::im2col_load(m, c, info, g, smem, dst);
    ASSERT_EQ(smem, want) << "iteration " << iter;
    // complete_tx: one slice a row, whatever channelsPerPixel; rows dense.
    EXPECT_EQ(m.bytes_per_box(), uint64_t(m.pixels_per_column) * slice_of(il)) << iter;
    EXPECT_EQ(tmakit::model::im2col_bytes(m, info), m.bytes_per_box()) << iter;
    EXPECT_EQ(m.row_pitch(), slice_of(il)) << iter;
    const uint64_t span = m.swizzle == Swizzle::none ? 16 : 16u << int(m.swizzle);
    const uint64_t end = dst + (m.bytes_per_box() + span - 1) / span * span;
    for (size_t i = 0; i < smem.size(); ++i)
      if (i < dst || i >= end) {
        ASSERT_EQ(smem[i], before[i]) << iter << " byte " << i;
      }
  }
}

// The H100's own answer for the map of questions/q26_im2col_interleave16_c16 (probe case
// q26_replica): uint16 C = 16 (slices), c = 8, offsets {1, 0}: slices 9..15 of pixel
// (0, 0), then c = 16 is out of bounds (a zero row). 128 bytes, not 8 rows × 8 channels.
TEST(InterleaveIm2col, ProbeReplica) {
  GlobalMemory g;
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = DataType::uint16;
  m.rank = 4;
  m.dims = {16, 4, 4, 1};
  m.strides = {32, 128, 512};
  m.channels_per_pixel = 8;
  m.pixels_per_column = 8;
  m.interleave = Interleave::b16;
  m.global_address = g.allocate("A", 576);
  auto& bytes = g.allocation("A")->bytes;
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i);
  std::vector<uint8_t> smem(2048, 0x11);
  Im2colInfo info;
  info.offsets = {1, 0, 0};
  const std::vector<int32_t> c = {8, 0, 0, 0};
  tmakit::model::im2col_load(m, c, info, g, smem, 1024);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(smem[1024 + i], i < 112 ? uint8_t(144 + i) : 0) << i;
  for (uint32_t i = 1152; i < smem.size(); ++i) ASSERT_EQ(smem[i], 0x11) << i;
  EXPECT_EQ(m.bytes_per_box(), 128u);
}

// What faulted on the H100 (illegal instruction): a C, W or (rank 5) H base outside its
// box; the fixed dimension rank-2 never faults.
TEST(InterleaveIm2col, BasesOutsideTheBoxAreRefused) {
  GlobalMemory g;
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = DataType::uint32;
  m.rank = 4;
  m.dims = {8, 5, 4, 2};
  m.strides = {256, 2048, 16384};
  m.channels_per_pixel = 8;
  m.pixels_per_column = 4;
  m.interleave = Interleave::b16;
  m.global_address = g.allocate("A", 65536);
  std::vector<uint8_t> smem(4096);
  auto code = [&](std::vector<int32_t> c) -> std::string {
    try {
      tmakit::model::im2col_load(m, c, Im2colInfo{}, g, smem, 1024);
    } catch (const DiagnosticError& e) {
      return e.diagnostic().rule;
    }
    return "ok";
  };
  EXPECT_EQ(code({-4, 0, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(code({8, 0, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(code({0, 5, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(code({0, -1, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(code({0, 0, 100, 0}), "ok");  // dimension rank-2: out of bounds, zero rows
  EXPECT_EQ(code({7, 4, -3, 0}), "ok");
  m.pixel_box_upper[0] = 1;
  EXPECT_EQ(code({8, 0, 0, 0}), "ok");  // C - 1 + upper
}

// .im2col_no_offs stores and reductions (tests/vectors/im2col_store_interleave, 60 of 60
// on the H100): the load's walk with offsets 0; each in-bound row's slice is written whole
// (a slice is whole 16-byte chunks: nothing to extend, H6), OOB rows write nothing; a
// reduction applies per element of the map's type.
TEST(InterleaveIm2col, StoresAndReductionsWriteTheLoadWalksSlices) {
  for (int iter = 0; iter < 200; ++iter) {
    const Interleave il = iter % 2 ? Interleave::b32 : Interleave::b16;
    TensorMap m = random_map(DataType::uint32, 3 + iter % 3, il);
    for (int k = 0; k < m.rank - 2; ++k) {  // §4.3: the box inside the tensor
      m.pixel_box_lower[k] = 0;
      m.pixel_box_upper[k] = 0;
    }
    GlobalMemory g;
    m.global_address = g.allocate("A", tensor_end(m) + 64);
    auto& bytes = g.allocation("A")->bytes;
    for (auto& b : bytes) b = uint8_t(irand(0, 255));
    std::vector<int32_t> c(m.rank);
    for (int k = 0; k < m.rank - 2; ++k) c[k] = irand(0, int(m.dims[k]) - 1);
    c[m.rank - 2] = irand(0, int(m.dims[m.rank - 2]));
    c[m.rank - 1] = irand(0, int(m.dims[m.rank - 1]));
    std::vector<uint8_t> smem(1024 + m.smem_footprint() + 256);
    for (auto& b : smem) b = uint8_t(irand(0, 255));
    const bool reduce = iter % 3 == 0;
    std::vector<uint8_t> want = bytes;
    const uint32_t s = slice_of(il);
    const auto rows = ref_rows(m, c, Im2colInfo{});
    for (size_t j = 0; j < rows.size(); ++j) {
      if (!rows[j].in) continue;
      for (uint32_t b = 0; b < s; b += 4) {
        uint32_t src = 0, old = 0;
        for (uint32_t x = 0; x < 4; ++x) src |= uint32_t(smem[xor_swizzle(m.swizzle, 1024 + uint32_t(j) * s + b + x)]) << (8 * x);
        std::memcpy(&old, &want[rows[j].global - m.global_address + b], 4);
        const uint32_t r = reduce ? old + src : src;
        std::memcpy(&want[rows[j].global - m.global_address + b], &r, 4);
      }
    }
    if (reduce) tmakit::model::im2col_reduce(m, c, tmakit::spec::RedOp::add, smem, 1024, g);
    else tmakit::model::im2col_store(m, c, smem, 1024, g);
    ASSERT_EQ(g.allocation("A")->bytes, want) << "iteration " << iter;
  }
}

}  // namespace
