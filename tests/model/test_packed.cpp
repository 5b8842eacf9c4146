// Packed sub-byte types (§1.2, §2.5): the shared-memory layout of 16U4_ALIGN8B,
// 16U4_ALIGN16B and 16U6_ALIGN16B loads (data then pad, pad untouched), the
// .b6p2x16 store packing, OOB groups, swizzle, and the direction rules. The
// expectations are written here from the §2.5 table, not from the model.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/packed.hpp"
#include "tmakit/model/tile.hpp"

namespace {

using namespace tmakit;
using namespace tmakit::tensor_map;
using model::GlobalMemory;
using Coords = std::vector<int32_t>;

uint32_t ref_swizzle128(uint32_t a) {  // §3.1, line/chunk form
  const uint32_t l = a / 128, j = (a / 16) % 8;
  return l * 128 + ((j ^ (l % 8)) * 16) + a % 16;
}

struct Tensor {
  GlobalMemory g;
  TensorMap m;
  uint64_t base = 0, pitch = 0;
  // `values` packed values per row (global row bytes = values × bits / 8), `rows` rows
  // `pitch` bytes apart; byte i of the allocation is (i * 5 + 1) & 0xff.
  Tensor(DataType t, uint64_t values, uint64_t rows, uint64_t row_pitch, uint32_t box0, uint32_t box1) {
    pitch = row_pitch;
    base = g.allocate("P", pitch * rows);
    uint8_t* p = g.find(base, pitch * rows);
    for (uint64_t i = 0; i < pitch * rows; ++i) p[i] = uint8_t(i * 5 + 1);
    m.data_type = t;
    m.rank = 2;
    m.global_address = base;
    m.dims = {values, rows};
    m.strides = {pitch};
    m.box = {box0, box1};
  }
  uint8_t at(uint64_t row, uint64_t byte) { return *g.find(base + row * pitch + byte, 1); }
};

TEST(Packed, U4Align8bIsAVerbatimCopyWithOobGroupsZero) {
  // 256 nibbles (128 bytes) per row; a 256-value box at x = 128 covers bytes 64..127 and 64 OOB bytes.
  Tensor t(DataType::u4_align8b, 256, 8, 256, 256, 4);
  std::vector<uint8_t> smem(1024, 0x55);
  model::tile_load(t.m, Coords{128, 2}, t.g, smem, 0);
  for (uint32_t r = 0; r < 4; ++r)
    for (uint32_t b = 0; b < 128; ++b)
      ASSERT_EQ(smem[r * 128 + b], b < 64 ? t.at(2 + r, 64 + b) : 0) << "row " << r << " byte " << b;
  EXPECT_EQ(smem[512], 0x55);
  EXPECT_EQ(t.m.bytes_per_box(), 4u * 128);  // the count is the shared bytes (§2.3, decision in the docs)
}

TEST(Packed, U4Align16bSpreadsEightDataBytesPerSixteenAndLeavesThePad) {
  // 16U4_ALIGN16B: box[0] = 128 values = 64 global bytes -> 128 shared bytes per row (§2.5).
  Tensor t(DataType::u4_align16b, 256, 4, 256, 128, 2);
  for (bool swz : {false, true}) {
    SCOPED_TRACE(swz ? "128b swizzle" : "no swizzle");
    t.m.swizzle = swz ? Swizzle::b128 : Swizzle::none;
    std::vector<uint8_t> smem(2048, 0x55);
    model::tile_load(t.m, Coords{128, 1}, t.g, smem, 1024 + 128);
    for (uint32_t r = 0; r < 2; ++r)
      for (uint32_t k = 0; k < 8; ++k)      // 16-value group k: global bytes 8k..8k+7 of the box row
        for (uint32_t i = 0; i < 16; ++i) {  // shared bytes 16k..16k+15: data, then pad
          uint32_t a = 1024 + 128 + r * 128 + 16 * k + i;
          if (swz) a = ref_swizzle128(a);
          const uint8_t want = i < 8 ? t.at(1 + r, 64 + 8 * k + i) : 0x55;
          ASSERT_EQ(smem[a], want) << "row " << r << " group " << k << " byte " << i;
        }
    EXPECT_EQ(t.m.bytes_per_box(), 2u * 128);
  }
}

TEST(Packed, U6Align16bLoadsTwelveDataBytesThenFourPad) {
  // 16U6_ALIGN16B: 128 values = 96 global bytes -> 8 groups of 12 data + 4 pad.
  Tensor t(DataType::u6_align16b, 256, 4, 192, 128, 3);
  std::vector<uint8_t> smem(1024, 0x55);
  model::tile_load(t.m, Coords{0, 2}, t.g, smem, 0);  // rows 2, 3 in bounds, row 4 OOB
  for (uint32_t r = 0; r < 3; ++r)
    for (uint32_t k = 0; k < 8; ++k)
      for (uint32_t i = 0; i < 16; ++i) {
        const uint8_t want = i >= 12 ? 0x55 : r < 2 ? t.at(2 + r, 12 * k + i) : 0;
        ASSERT_EQ(smem[r * 128 + 16 * k + i], want) << "row " << r << " group " << k << " byte " << i;
      }
}

TEST(Packed, B6p2x16StorePacksBitsZeroToFiveOfEachByte) {
  Tensor t(DataType::u6_align16b, 128, 2, 128, 128, 2);
  std::vector<uint8_t> smem(512);
  for (size_t i = 0; i < smem.size(); ++i) smem[i] = uint8_t(i * 37 + 11);  // bits 6-7 set on many bytes
  model::tile_store(t.m, Coords{0, 0}, smem, 0, t.g);
  for (uint32_t r = 0; r < 2; ++r)
    for (uint32_t k = 0; k < 8; ++k) {
      // value i of the group at bits 6i..6i+5 of a 96-bit little-endian number
      unsigned __int128 acc = 0;
      for (int i = 0; i < 16; ++i) acc |= (unsigned __int128)(smem[r * 128 + 16 * k + i] & 0x3f) << (6 * i);
      for (int b = 0; b < 12; ++b) ASSERT_EQ(t.at(r, 12 * k + b), uint8_t(acc >> (8 * b))) << r << " " << k << " " << b;
    }
  EXPECT_EQ(t.at(0, 96), uint8_t(96 * 5 + 1)) << "bytes past the 96-byte row are not written";
}

TEST(Packed, PackB6p2x16) {
  uint8_t in[16], out[12];
  for (int i = 0; i < 16; ++i) in[i] = uint8_t(0xC0 | i);  // bits 6-7 dropped
  model::pack_b6p2x16(in, out);
  // values 0, 1, 2, 3 -> bits 0..23 = 0b000011'000010'000001'000000
  EXPECT_EQ(out[0], 0x40);
  EXPECT_EQ(out[1], 0x20);
  EXPECT_EQ(out[2], 0x0C);
}

TEST(Packed, U4Align8bStoreRoundTripsUnderAtomSwizzles) {
  for (Swizzle s : {Swizzle::none, Swizzle::b128, Swizzle::b128_atom_32b, Swizzle::b128_atom_32b_flip_8b,
                    Swizzle::b128_atom_64b}) {
    SCOPED_TRACE(int(s));
    Tensor t(DataType::u4_align8b, 512, 16, 256, 256, 8);  // 128-byte rows: one swizzle span
    t.m.swizzle = s;
    std::vector<uint8_t> smem(4096, 0);
    model::tile_load(t.m, Coords{256, 4}, t.g, smem, 2048);
    // Clear the tensor, store the tile back, and the same bytes return.
    uint8_t* p = t.g.find(t.base, 256 * 16);
    std::vector<uint8_t> orig(p, p + 256 * 16);
    std::memset(p, 0, 256 * 16);
    model::tile_store(t.m, Coords{256, 4}, smem, 2048, t.g);
    for (uint32_t r = 4; r < 12; ++r)
      for (uint32_t b = 128; b < 256; ++b) ASSERT_EQ(p[r * 256 + b], orig[r * 256 + b]) << r << " " << b;
    EXPECT_EQ(p[0], 0);
  }
}

std::string fault(auto&& f) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule;
  }
  return "(no fault)";
}

TEST(Packed, DirectionRules) {
  Tensor t(DataType::u4_align16b, 128, 2, 128, 128, 1);
  std::vector<uint8_t> smem(1024);
  EXPECT_EQ(fault([&] { model::tile_store(t.m, Coords{0, 0}, smem, 0, t.g); }), "coord.packed-direction");
  Tensor u6(DataType::u6_align16b, 128, 2, 128, 128, 1);
  u6.m.swizzle = Swizzle::b128_atom_64b;  // §1.3: serves stores only
  EXPECT_EQ(fault([&] { model::tile_load(u6.m, Coords{0, 0}, u6.g, smem, 0); }), "coord.packed-direction");
  EXPECT_EQ(fault([&] { model::tile_store(u6.m, Coords{0, 0}, smem, 0, u6.g); }), "(no fault)");
  // A coordinate that splits a 16-value group is refused, never walked half-way.
  u6.m.swizzle = Swizzle::none;
  EXPECT_EQ(fault([&] { model::tile_load(u6.m, Coords{8, 0}, u6.g, smem, 0); }), "model.map-unsupported");
  // The box must fit in shared memory.
  EXPECT_EQ(fault([&] { model::tile_load(t.m, Coords{0, 0}, t.g, std::span(smem).first(100), 0); }),
            "model.shared-range");
}

}  // namespace
