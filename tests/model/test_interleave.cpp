// Interleaved (16B / 32B) tiled loads, stores and reductions (Q26, docs/hardware-notes.md
// "interleave decisions") against a naive per-slice reference written here from the
// H100 probe's rule: an element of dimension 0 is a whole slice (16 or 32 bytes) at
// g0 × slice, bounded by dims[0]; dimension rank-2 is walked once; slices land densely
// in shared memory in walk order, swizzled by the §3.1 XOR of the absolute address;
// OOB slices are zero or the 0x7FF7 NaN pattern; complete_tx counts every slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/model/tile.hpp"
#include "tmakit/spec/target.hpp"
#include "interleave_ref.hpp"

namespace {

using tmakit::DiagnosticError;
using tmakit::model::GlobalMemory;
using namespace tmakit::tensor_map;

using namespace interleave_ref;
using Slice = Unit;

// Every slice of the box in shared-memory order, the naive way: an odometer over
// k[0..rank-1] with k[rank-2] pinned to 0.
std::vector<Slice> ref_slices(const TensorMap& m, const std::vector<int32_t>& c) {
  const uint32_t s = slice_of(m.interleave);
  std::vector<uint32_t> n(m.rank);
  for (int i = 0; i < m.rank; ++i) n[i] = i == m.rank - 2 ? 1 : (m.box[i] + m.element_strides[i] - 1) / m.element_strides[i];
  std::vector<uint32_t> k(m.rank, 0);
  std::vector<Slice> out;
  for (;;) {
    bool in = true;
    uint64_t addr = m.global_address;
    for (int i = 0; i < m.rank; ++i) {
      const int64_t g = c[i] + int64_t(k[i]) * m.element_strides[i];
      in = in && g >= 0 && g < int64_t(m.dims[i]);
      addr += uint64_t(g) * (i == 0 ? s : m.strides[i - 1]);
    }
    out.push_back({in, addr});
    int i = 0;
    while (i < m.rank && ++k[i] == n[i]) k[i++] = 0;
    if (i == m.rank) return out;
  }
}

std::vector<uint8_t> ref_load(const TensorMap& m, const std::vector<int32_t>& c, const GlobalMemory& g,
                              std::vector<uint8_t> smem, uint32_t dst) {
  return place(m, ref_slices(m, c), g, std::move(smem), dst);
}

std::mt19937_64 rng(2026);
int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// A random interleaved map whose box fits 12 KiB of shared memory.
TensorMap random_map(DataType t, int rank, Interleave il) {
  TensorMap m;
  do {
  m = TensorMap{};
  m.data_type = t;
  m.rank = rank;
  m.interleave = il;
  m.swizzle = static_cast<Swizzle>(irand(0, 3));
  const int eb = element_bytes(t);
  m.box[0] = (16 / eb) * irand(1, 4);
  m.element_strides[0] = irand(1, 3);
  m.dims[0] = irand(1, 10);
  for (int i = 1; i < rank; ++i) m.dims[i] = irand(1, 5), m.box[i] = irand(1, 3), m.element_strides[i] = irand(1, 2);
  padded_strides(m, irand);
  m.oob_fill = is_float(t) && irand(0, 1) ? OobFill::nan_request_zero_fma : OobFill::zero;
  } while (m.smem_footprint() > 12288);
  return m;
}

TEST(Interleave, RandomLoadsMatchThePerSliceReference) {
  const DataType types[] = {DataType::uint8, DataType::uint16, DataType::uint32, DataType::uint64,
                            DataType::float16, DataType::float32, DataType::bfloat16};
  for (int iter = 0; iter < 400; ++iter) {
    const Interleave il = iter % 2 ? Interleave::b32 : Interleave::b16;
    const TensorMap base = random_map(types[iter % 7], 3 + iter % 3, il);
    GlobalMemory g;
    TensorMap m = base;
    m.global_address = g.allocate("A", tensor_end(m) + 64);
    auto* a = g.allocation("A");
    for (auto& b : a->bytes) b = uint8_t(irand(0, 255));
    std::vector<int32_t> c(m.rank);
    for (int i = 0; i < m.rank; ++i) c[i] = irand(-2, int(m.dims[i]) + 1);
    const uint32_t dst = 1024 + 128 * irand(0, 7);
    std::vector<uint8_t> smem(16384 + 2048);
    for (auto& b : smem) b = uint8_t(irand(0, 255));
    const std::vector<uint8_t> before = smem;
    const auto want = ref_load(m, c, g, smem, dst);
    tmakit::model::tile_load(m, c, g, smem, dst);
    ASSERT_EQ(smem, want) << "iteration " << iter;
    // complete_tx and the footprint: every slice of the walk, densely, to the end of
    // the last swizzle span (the XOR moves chunks anywhere inside it).
    EXPECT_EQ(m.bytes_per_box(), ref_slices(m, c).size() * slice_of(il)) << iter;
    const uint64_t span = m.swizzle == Swizzle::none ? 16 : m.swizzle == Swizzle::b32 ? 32
                          : m.swizzle == Swizzle::b64 ? 64 : 128;
    EXPECT_EQ(m.smem_footprint(), (m.bytes_per_box() + span - 1) / span * span) << iter;
    // Nothing lands before the box or past that footprint.
    for (size_t i = 0; i < smem.size(); ++i)
      if (i < dst || i >= dst + m.smem_footprint()) {
        ASSERT_EQ(smem[i], before[i]) << iter << " byte " << i;
      }
  }
}

TEST(Interleave, StoresAndReductionsWriteTheSameSlices) {
  for (int iter = 0; iter < 200; ++iter) {
    const Interleave il = iter % 2 ? Interleave::b32 : Interleave::b16;
    TensorMap m = random_map(DataType::uint32, 3 + iter % 3, il);
    GlobalMemory g;
    m.global_address = g.allocate("A", tensor_end(m) + 64);
    auto& bytes = g.allocation("A")->bytes;
    for (auto& b : bytes) b = uint8_t(irand(0, 255));
    std::vector<int32_t> c(m.rank);
    for (int i = 0; i < m.rank; ++i) c[i] = irand(0, int(m.dims[i]));  // stores start at c >= 0 (H14)
    std::vector<uint8_t> smem(16384 + 1024);
    for (auto& b : smem) b = uint8_t(irand(0, 255));
    const uint32_t src = 1024;
    const bool reduce = iter % 4 == 3;
    std::vector<uint8_t> want = bytes;
    const auto slices = ref_slices(m, c);
    const uint64_t base = m.global_address;
    for (size_t j = 0; j < slices.size(); ++j) {
      if (!slices[j].in) continue;
      for (uint32_t b = 0; b < slice_of(il); b += 4) {
        uint32_t v, old;
        for (int q = 0; q < 4; ++q) reinterpret_cast<uint8_t*>(&v)[q] = smem[xor_swizzle(m.swizzle, src + uint32_t(j) * slice_of(il) + b + q)];
        std::memcpy(&old, &want[slices[j].global - base + b], 4);
        const uint32_t r = reduce ? old + v : v;
        std::memcpy(&want[slices[j].global - base + b], &r, 4);
      }
    }
    if (reduce) tmakit::model::tile_reduce(m, c, tmakit::spec::RedOp::add, smem, src, g);
    else tmakit::model::tile_store(m, c, smem, src, g);
    ASSERT_EQ(g.allocation("A")->bytes, want) << "iteration " << iter << (reduce ? " (reduce)" : " (store)");
  }
}

TensorMap rank3(DataType t, Interleave il, std::array<uint64_t, 3> dims, std::array<uint64_t, 2> strides,
                std::array<uint32_t, 3> box) {
  TensorMap m;
  m.data_type = t;
  m.rank = 3;
  m.interleave = il;
  for (int i = 0; i < 3; ++i) m.dims[i] = dims[i], m.box[i] = box[i];
  m.strides[0] = strides[0], m.strides[1] = strides[1];
  return m;
}

// The probe's first surprise: the old reading (dimension 0 in elements, every dimension
// walked) delivered half the bytes of q26_interleave16; the slice reading counts them all.
TEST(Interleave, ByteCountCountsSlicesAndWalksRankMinus2Once) {
  TensorMap m = rank3(DataType::uint16, Interleave::b16, {8, 6, 3}, {16, 96}, {8, 4, 2});
  EXPECT_EQ(m.bytes_per_box(), 8u * 16 * 1 * 2);  // 8 slices × 16 B, dimension 1 once, 2 along dimension 2
  EXPECT_EQ(m.elements(1), 1u);
  EXPECT_EQ(m.row_bytes(), 128u);
  m.swizzle = Swizzle::b128;
  m.box = {4, 4, 2};  // 4 slices: 64-byte rows stay 64 bytes apart under 128B swizzle
  EXPECT_EQ(m.row_pitch(), 64u);
  m.rank = 5;
  m.dims = {4, 3, 4, 5, 3};
  m.strides = {64, 256, 2048, 16384};
  m.box = {4, 2, 3, 2, 3};
  m.element_strides = {1, 1, 1, 2, 1};
  EXPECT_EQ(m.bytes_per_box(), 4u * 16 * 2 * 3 * 1 * 3);  // dimension 3 once
  const auto d = validate(m, *tmakit::spec::parse_target("sm_90a"));
  EXPECT_TRUE(std::any_of(d.begin(), d.end(), [](const auto& x) { return x.rule == "map.interleave-walk-once"; }));
}

// c[0] counts slices, so the 16-byte rule on c[0] × elemBytes (H9) does not apply:
// the H100 loaded c[0] = 1 of a uint32 map (4 bytes) and c[0] = 2 of a uint16 map.
TEST(Interleave, InnerCoordinateCountsSlices) {
  TensorMap m = rank3(DataType::uint32, Interleave::b16, {4, 6, 5}, {64, 1024}, {4, 4, 2});
  m.global_address = 0x10000;
  const auto sm90 = *tmakit::spec::parse_target("sm_90a");
  const std::vector<int32_t> c = {1, 1, 1};
  EXPECT_TRUE(check_coordinates(m, c, Direction::load, sm90).empty());
  m.interleave = Interleave::none;
  EXPECT_FALSE(check_coordinates(m, c, Direction::load, sm90).empty());
}

TEST(Interleave, SlicesPastTheAllocationAreAGlobalFault) {
  TensorMap m = rank3(DataType::uint8, Interleave::b32, {32, 5, 3}, {32, 160}, {32, 4, 2});
  m.swizzle = Swizzle::b32;
  GlobalMemory g;
  m.global_address = g.allocate("A", 32 + 4 * 32 + 2 * 160 + 64);  // sized for dims[0] × 1 byte
  std::vector<uint8_t> smem(8192);
  try {
    tmakit::model::tile_load(m, std::vector<int32_t>{0, 2, 1}, g, smem, 1024);
    FAIL() << "no fault";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().rule, "model.global-fault");
  }
}

}  // namespace
