// The fast tiled walk (src/model/fast/, what the engine runs) against the plain reference walk
// (src/model/tile_reference.cpp), on random maps: every byte of shared memory after a load, of
// global memory after a store or a reduction, and the rule of every fault, must be the same.
// The reference itself is checked against the naive walk written in test_tile.cpp, like the fast
// walk, and the fast walk against the H100's recorded vectors (test_vectors.cpp).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/model/tile.hpp"

namespace {

using namespace tmakit::tensor_map;
using tmakit::DiagnosticError;
using tmakit::model::GlobalMemory;
using tmakit::spec::RedOp;

int rnd(std::mt19937& rng, int lo, int hi) { return lo + int(rng() % uint32_t(hi - lo + 1)); }

int bytes_of(DataType t) {
  switch (t) {
    case DataType::uint8: return 1;
    case DataType::uint16: case DataType::float16: case DataType::bfloat16: return 2;
    case DataType::uint64: case DataType::int64: case DataType::float64: return 8;
    default: return 4;
  }
}

struct Case {
  TensorMap map;
  std::vector<int32_t> coords;
  GlobalMemory g;
  std::vector<uint8_t> smem;
  uint32_t off = 0;
  std::string str() const {
    std::string s = "type " + std::string(name(map.data_type)) + " rank " + std::to_string(map.rank) + " swizzle " +
                    std::string(name(map.swizzle)) + " interleave " + std::string(name(map.interleave)) + " off " +
                    std::to_string(off);
    for (int i = 0; i < map.rank; ++i)
      s += " | dim " + std::to_string(map.dims[i]) + " box " + std::to_string(map.box[i]) + " es " +
           std::to_string(map.element_strides[i]) + " c " + std::to_string(coords[i]);
    return s;
  }
};

void fill(std::vector<uint8_t>& v, std::mt19937& rng) {
  for (auto& b : v) b = uint8_t(rng());
}

// A random tiled map and box: ranks 1-5, every plain type, interleaved maps (whole 16- or 32-byte
// slices), swizzles, padded strides, element strides, both fills, coordinates before, inside and
// past the tensor (never negative for stores); sometimes a tensor that runs past its allocation,
// so that in-bound elements fault.
Case random_case(std::mt19937& rng, bool store, bool reducible) {
  static const DataType kTypes[] = {DataType::uint8,    DataType::uint16,   DataType::uint32,   DataType::int32,
                                    DataType::uint64,   DataType::int64,    DataType::float16,  DataType::float32,
                                    DataType::float64,  DataType::bfloat16, DataType::tfloat32, DataType::tfloat32_ftz};
  static const Swizzle kSwizzles[] = {Swizzle::none,          Swizzle::b32, Swizzle::b64, Swizzle::b128,
                                      Swizzle::b128_atom_32b, Swizzle::b128_atom_32b_flip_8b,
                                      Swizzle::b128_atom_64b};
  Case cs;
  TensorMap& m = cs.map;
  do m.data_type = kTypes[rng() % std::size(kTypes)];
  while (reducible && bytes_of(m.data_type) < 4);
  const int eb = bytes_of(m.data_type);
  m.rank = rnd(rng, 1, 5);
  const bool interleave = m.rank >= 3 && rng() % 4 == 0;
  m.swizzle = kSwizzles[rng() % std::size(kSwizzles)];
  int slice = eb;
  if (interleave) {
    m.interleave = rng() % 2 ? Interleave::b16 : Interleave::b32;
    if (m.interleave == Interleave::b32) m.swizzle = Swizzle::b32;
    slice = m.interleave == Interleave::b16 ? 16 : 32;
    m.dims[0] = uint64_t(rnd(rng, 1, 12));  // slices
    m.box[0] = uint32_t(rnd(rng, 1, 8));
    m.element_strides[0] = uint32_t(rnd(rng, 1, 3));
  } else {
    const int span = m.swizzle == Swizzle::none ? 256 : m.swizzle == Swizzle::b32 ? 32 : m.swizzle == Swizzle::b64 ? 64 : 128;
    m.box[0] = uint32_t(16 * rnd(rng, 1, span / 16) / eb);
    m.dims[0] = uint64_t(rnd(rng, 1, int(3 * m.box[0])));
    m.element_strides[0] = uint32_t(rnd(rng, 1, 3));  // ignored without interleave
  }
  for (int i = 1; i < m.rank; ++i) {
    m.box[i] = uint32_t(rnd(rng, 1, 6));
    m.element_strides[i] = uint32_t(rnd(rng, 1, 8));
    m.dims[i] = uint64_t(rnd(rng, 1, 9));
  }
  uint64_t extent = (m.dims[0] * uint64_t(slice) + 15) / 16 * 16;
  for (int i = 1; i < m.rank; ++i) {
    m.strides[i - 1] = extent + 16 * uint64_t(rnd(rng, 0, 2));
    extent = m.strides[i - 1] * m.dims[i];
  }
  m.oob_fill = rng() % 2 ? OobFill::zero : OobFill::nan_request_zero_fma;
  const int q = interleave ? 1 : 16 / eb;  // c0 × elemBytes a multiple of 16
  cs.coords.resize(size_t(m.rank));
  cs.coords[0] = int32_t(q * rnd(rng, store ? 0 : -3, int(m.dims[0]) / q + 2));
  for (int i = 1; i < m.rank; ++i) cs.coords[size_t(i)] = rnd(rng, store ? 0 : -int(m.box[i]) - 2, int(m.dims[i]) + 1);
  // One case in ten: the allocation ends before the tensor does.
  const uint64_t bytes = rng() % 10 == 0 ? std::max<uint64_t>(16, extent / 2) : extent + 64;
  (void)cs.g.allocate("other", 4096);
  m.global_address = cs.g.allocate("t", bytes);
  for (const auto& a : cs.g.allocations()) fill(const_cast<std::vector<uint8_t>&>(a.bytes), rng);
  cs.off = 128 * uint32_t(rnd(rng, 0, 9));
  cs.smem.resize(size_t(cs.off) + 64 * 1024);
  fill(cs.smem, rng);
  return cs;
}

// The rule of the fault `f` raises, or "" when it runs clean.
template <class F>
std::string rule_of(F&& f) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule;
  }
  return "";
}

std::vector<uint8_t> global_bytes(const GlobalMemory& g) {
  std::vector<uint8_t> out;
  for (const auto& a : g.allocations()) out.insert(out.end(), a.bytes.begin(), a.bytes.end());
  return out;
}

TEST(TileFastWalk, LoadsEqualTheReference) {
  std::mt19937 rng(20261126);
  int clean = 0;
  for (int n = 0; n < 3000; ++n) {
    Case cs = random_case(rng, false, false);
    std::vector<uint8_t> fast = cs.smem, ref = cs.smem;
    const std::string f = rule_of([&] { tmakit::model::tile_load(cs.map, cs.coords, cs.g, fast, cs.off); });
    const std::string r = rule_of([&] { tmakit::model::reference::tile_load(cs.map, cs.coords, cs.g, ref, cs.off); });
    ASSERT_EQ(f, r) << cs.str();
    if (!f.empty()) continue;
    ASSERT_EQ(fast, ref) << cs.str();
    ++clean;
  }
  EXPECT_GT(clean, 2000);  // the draw reaches the walk, not only its faults
}

TEST(TileFastWalk, StoresAndReductionsEqualTheReference) {
  std::mt19937 rng(4242);
  int clean = 0;
  for (int n = 0; n < 3000; ++n) {
    const bool reduce = n % 2;
    Case cs = random_case(rng, true, reduce);
    GlobalMemory fast = cs.g, ref = cs.g;
    const RedOp op = RedOp(rng() % 3);  // add, min, max: defined for every reducible type
    const std::string f = rule_of([&] {
      if (reduce) tmakit::model::tile_reduce(cs.map, cs.coords, op, cs.smem, cs.off, fast);
      else tmakit::model::tile_store(cs.map, cs.coords, cs.smem, cs.off, fast);
    });
    const std::string r = rule_of([&] {
      if (reduce) tmakit::model::reference::tile_reduce(cs.map, cs.coords, op, cs.smem, cs.off, ref);
      else tmakit::model::reference::tile_store(cs.map, cs.coords, cs.smem, cs.off, ref);
    });
    ASSERT_EQ(f, r) << cs.str() << (reduce ? " reduce" : " store");
    if (!f.empty()) continue;
    ASSERT_EQ(global_bytes(fast), global_bytes(ref)) << cs.str() << (reduce ? " reduce" : " store");
    ++clean;
  }
  EXPECT_GT(clean, 2000);
}

}  // namespace
