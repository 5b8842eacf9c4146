// Swizzle mapping (§3.1, §3.4) against the spec's chunk/line description and
// the worked examples §2.8 C and §3.5.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tmakit/model/swizzle.hpp"

namespace {

using tmakit::model::swizzle_address;
using tmakit::tensor_map::Swizzle;

const std::vector<Swizzle> kAll = {Swizzle::none, Swizzle::b32, Swizzle::b64, Swizzle::b128,
                                   Swizzle::b128_atom_32b, Swizzle::b128_atom_32b_flip_8b,
                                   Swizzle::b128_atom_64b};

// §3.1 in its second wording: line l = a / 128, chunk j = (a / 16) % 8,
// j' = j ^ (l mod m) with m = 2, 4, 8; bytes inside a chunk keep their order.
uint32_t line_chunk_form(uint32_t m, uint32_t a) {
  const uint32_t l = a / 128, j = (a / 16) % 8;
  return l * 128 + ((j ^ (l % m)) * 16) + a % 16;
}

TEST(Swizzle, MatchesLineChunkDescription) {
  for (uint32_t a = 0; a < 1u << 16; ++a) {
    ASSERT_EQ(swizzle_address(Swizzle::b32, a), line_chunk_form(2, a)) << a;
    ASSERT_EQ(swizzle_address(Swizzle::b64, a), line_chunk_form(4, a)) << a;
    ASSERT_EQ(swizzle_address(Swizzle::b128, a), line_chunk_form(8, a)) << a;
    ASSERT_EQ(swizzle_address(Swizzle::none, a), a);
  }
}

TEST(Swizzle, IsAnInvolution) {
  for (Swizzle s : kAll)
    for (uint32_t a = 0; a < 1u << 16; ++a) ASSERT_EQ(swizzle_address(s, swizzle_address(s, a)), a);
}

TEST(Swizzle, BijectionOnEachPeriod) {
  struct P { Swizzle s; uint32_t period; };
  // §3.1 table: 256 / 512 / 1024; §3.4: ATOM_32B variants use bits 7-8, ATOM_64B bit 7.
  for (P p : {P{Swizzle::b32, 256}, P{Swizzle::b64, 512}, P{Swizzle::b128, 1024},
              P{Swizzle::b128_atom_32b, 512}, P{Swizzle::b128_atom_32b_flip_8b, 512},
              P{Swizzle::b128_atom_64b, 256}}) {
    EXPECT_EQ(tmakit::model::swizzle_repeat_bytes(p.s), p.period);
    for (uint32_t base : {0u, p.period, 7 * p.period, 1u << 17}) {
      std::set<uint32_t> image;
      for (uint32_t i = 0; i < p.period; ++i) {
        const uint32_t b = swizzle_address(p.s, base + i);
        ASSERT_GE(b, base);
        ASSERT_LT(b, base + p.period);
        image.insert(b);
        // The pattern repeats with the period.
        ASSERT_EQ(swizzle_address(p.s, base + i + p.period), b + p.period);
      }
      EXPECT_EQ(image.size(), p.period);
    }
  }
}

TEST(Swizzle, GranulesMoveWholeAndStayInTheirLine) {
  for (Swizzle s : kAll) {
    const uint32_t g = tmakit::model::swizzle_granule_bytes(s);
    if (g == 0) continue;
    for (uint32_t a = 0; a < 4096; a += g) {
      const uint32_t b = swizzle_address(s, a);
      EXPECT_EQ(b / 128, a / 128) << "line changed";
      EXPECT_EQ(b % g, 0u);
      for (uint32_t i = 1; i < g; ++i) ASSERT_EQ(swizzle_address(s, a + i), b + i);
    }
  }
}

// §3.4 bit descriptions of the sm_100 atom variants.
TEST(Swizzle, AtomVariants) {
  // ATOM_32B: 32-byte granule g = (a >> 5) & 3 becomes g ^ ((a >> 7) & 3).
  for (uint32_t a = 0; a < 2048; ++a) {
    const uint32_t gr = (a >> 5) & 3, l = (a >> 7) & 3;
    const uint32_t want = (a & ~0x60u) | ((gr ^ l) << 5);
    ASSERT_EQ(swizzle_address(Swizzle::b128_atom_32b, a), want);
    // FLIP_8B: as above, and the 8-byte halves swap on odd lines.
    const uint32_t flip = want ^ (((a >> 7) & 1) ? 8u : 0u);
    ASSERT_EQ(swizzle_address(Swizzle::b128_atom_32b_flip_8b, a), flip);
    // ATOM_64B: bit 6 ^= bit 7.
    ASSERT_EQ(swizzle_address(Swizzle::b128_atom_64b, a), a ^ (((a >> 7) & 1) << 6));
  }
  // Concrete: byte 0 of line 1 under ATOM_32B goes to granule 1 (offset 32).
  EXPECT_EQ(swizzle_address(Swizzle::b128_atom_32b, 128), 128u + 32);
  EXPECT_EQ(swizzle_address(Swizzle::b128_atom_32b_flip_8b, 128), 128u + 32 + 8);
  EXPECT_EQ(swizzle_address(Swizzle::b128_atom_64b, 128), 128u + 64);
}

// §2.8 C: 64B swizzle, f16 box {32, 8} (64-byte rows), D % 512 == 0: byte b of
// chunk j of row r lands at D + 64 r + ((j ^ ((r >> 1) & 3)) << 4) + b.
TEST(Swizzle, WorkedExampleC) {
  for (uint32_t D : {0u, 512u, 4096u})
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t j = 0; j < 4; ++j)
        for (uint32_t b = 0; b < 16; ++b)
          ASSERT_EQ(swizzle_address(Swizzle::b64, D + 64 * r + 16 * j + b),
                    D + 64 * r + ((j ^ ((r >> 1) & 3)) << 4) + b);
}

// §3.5: 128B, bf16 box {64, 8}: element (x, y) at D + y·128 + ((j ^ y) << 4) + (2x & 15),
// j = x >> 3; with D ≡ 128 (mod 1024) chunk j goes to j ^ ((y + 1) & 7).
TEST(Swizzle, WorkedExample35) {
  for (uint32_t x = 0; x < 64; ++x)
    for (uint32_t y = 0; y < 8; ++y) {
      const uint32_t j = x >> 3;
      EXPECT_EQ(swizzle_address(Swizzle::b128, 2048 + y * 128 + 2 * x),
                2048 + y * 128 + ((j ^ y) << 4) + (2 * x & 15));
      EXPECT_EQ(swizzle_address(Swizzle::b128, 1024 + 128 + y * 128 + 2 * x),
                1024 + 128 + y * 128 + ((j ^ ((y + 1) & 7)) << 4) + (2 * x & 15));
    }
}

TEST(Swizzle, Spans) {
  EXPECT_EQ(tmakit::model::swizzle_span_bytes(Swizzle::none), 0u);
  EXPECT_EQ(tmakit::model::swizzle_span_bytes(Swizzle::b32), 32u);
  EXPECT_EQ(tmakit::model::swizzle_span_bytes(Swizzle::b64), 64u);
  EXPECT_EQ(tmakit::model::swizzle_span_bytes(Swizzle::b128), 128u);
  EXPECT_EQ(tmakit::model::swizzle_span_bytes(Swizzle::b128_atom_64b), 128u);
}

}  // namespace
