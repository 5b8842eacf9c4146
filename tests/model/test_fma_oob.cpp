// fma.rn{.oob}{.relu}{.sat} on f16 / bf16 (§14 Q6): every result the H100 gave in
// tests/vectors/fma_oob.jsonl (tests/gpu/test_fma_oob.cu: the OOB pattern in a, b
// and c, other NaNs, ±inf, zeros, and random ordinary values that round,
// cancel, underflow and overflow) replayed lane by lane through the model's
// fma_rn_half, plus hand-worked values.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tmakit/model/numerics.hpp"

namespace {

using namespace tmakit::model;

struct Line {
  std::string type, variant;
  uint32_t a, b, c, d;
};

std::vector<Line> recorded() {
  std::vector<Line> out;
  const std::string path = std::string(TMAKIT_SOURCE_DIR) + "/tests/vectors/fma_oob.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::string s;
  auto hex = [](const nlohmann::json& j) { return uint32_t(std::stoul(j.get<std::string>(), nullptr, 16)); };
  while (std::getline(in, s)) {
    const auto j = nlohmann::json::parse(s);
    out.push_back({j["type"], j["variant"], hex(j["a"]), hex(j["b"]), hex(j["c"]), hex(j["d"])});
  }
  return out;
}

TEST(FmaOob, EveryRecordedResult) {
  const auto lines = recorded();
  ASSERT_GT(lines.size(), 6000u);
  std::map<std::string, int> seen;  // "type variant" -> lines
  int mismatches = 0;
  for (const Line& l : lines) {
    const bool bf16 = l.type == "bf16" || l.type == "bf16x2";
    const bool packed = l.type == "f16x2" || l.type == "bf16x2";
    ASSERT_TRUE(l.type == "f16" || l.type == "bf16" || packed) << l.type;
    ASSERT_TRUE(l.variant == "plain" || l.variant == "oob" || l.variant == "oob.relu" || l.variant == "sat.oob")
        << l.variant;
    const bool oob = l.variant != "plain", relu = l.variant == "oob.relu", sat = l.variant == "sat.oob";
    ++seen[l.type + " " + l.variant];
    uint32_t want = 0;
    for (int lane = 0; lane < (packed ? 2 : 1); ++lane) {
      const int sh = 16 * lane;
      want |= uint32_t(fma_rn_half(uint16_t(l.a >> sh), uint16_t(l.b >> sh), uint16_t(l.c >> sh), bf16, oob, relu,
                                   sat))
              << sh;
    }
    if (want != l.d && ++mismatches <= 20)
      ADD_FAILURE() << l.type << " " << l.variant << std::hex << " a 0x" << l.a << " b 0x" << l.b << " c 0x" << l.c
                    << ": H100 0x" << l.d << ", model 0x" << want;
  }
  EXPECT_EQ(mismatches, 0);
  // Every form the probe ran: .sat.oob exists for f16 and f16x2 only.
  for (const char* t : {"f16", "bf16", "f16x2", "bf16x2"})
    for (const char* v : {"plain", "oob", "oob.relu"}) EXPECT_GT(seen[std::string(t) + " " + v], 100) << t << " " << v;
  EXPECT_GT(seen["f16 sat.oob"], 100);
  EXPECT_GT(seen["f16x2 sat.oob"], 100);
}

TEST(FmaOob, HandWorkedValues) {
  constexpr uint16_t kOne = 0x3C00, kTwo = 0x4000, kOob = 0x7FF7;
  // f16: 1 * 1 + 1 = 2; (1 + 2^-10)^2 + 0 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9.
  EXPECT_EQ(fma_rn_half(kOne, kOne, kOne, false, true), kTwo);
  EXPECT_EQ(fma_rn_half(0x3C01, 0x3C01, 0x0000, false, true), 0x3C02);
  // A tie: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> even (1); 1 + 3 * 2^-11 -> 1 + 2^-9.
  EXPECT_EQ(fma_rn_half(kOne, kOne, 0x1000 /* 2^-11 */, false, false), kOne);
  EXPECT_EQ(fma_rn_half(0x3C01, kOne, 0x1000, false, false), 0x3C02);
  // The OOB pattern (either sign) in a or b: +0 whatever c is; in c: an ordinary NaN.
  EXPECT_EQ(fma_rn_half(kOob, kOne, kOne, false, true), 0x0000);
  EXPECT_EQ(fma_rn_half(kOne, 0xFFF7, 0x7C00, false, true), 0x0000);
  EXPECT_EQ(fma_rn_half(kOne, kOob, 0x7FFF, true, true), 0x0000);
  EXPECT_EQ(fma_rn_half(kOne, kOne, kOob, false, true), kHalfNaN);
  EXPECT_EQ(fma_rn_half(kOob, kOne, kOne, false, false), kHalfNaN);  // plain fma.rn: just a NaN
  // Other NaNs, inf * 0, inf - inf: the canonical NaN (.oob or not).
  EXPECT_EQ(fma_rn_half(0x7FF6, kOne, kOne, false, true), kHalfNaN);
  EXPECT_EQ(fma_rn_half(0x7C00, 0x0000, kOne, false, true), kHalfNaN);
  EXPECT_EQ(fma_rn_half(0x7F80, kOne, 0xFF80, true, true), kHalfNaN);
  // Signed zeros: -0 * 1 + -0 = -0; exact cancellation is +0; relu turns -0 into +0.
  EXPECT_EQ(fma_rn_half(0x8000, kOne, 0x8000, false, true), 0x8000);
  EXPECT_EQ(fma_rn_half(kOne, kOne, 0xBC00, false, true), 0x0000);
  EXPECT_EQ(fma_rn_half(0x8000, kOne, 0x8000, false, true, true), 0x0000);
  // relu and sat.
  EXPECT_EQ(fma_rn_half(0xC000, kOne, kOne, false, true, true), 0x0000);             // -1 -> +0
  EXPECT_EQ(fma_rn_half(0x7FFF, kOne, kOne, false, true, true), kHalfNaN);           // NaN stays
  EXPECT_EQ(fma_rn_half(kTwo, kOne, kOne, false, true, false, true), kOne);          // 3 -> 1
  EXPECT_EQ(fma_rn_half(0x7FFF, kOne, kOne, false, true, false, true), 0x0000);      // NaN -> +0
  EXPECT_EQ(fma_rn_half(0x3800, kOne, 0x0000, false, true, false, true), 0x3800);    // 0.5 kept
  // bf16: 1.5 * 1.5 + 0 = 2.25 (exact); largest finite * 2 overflows to inf; 2^-133 * 0.5 -> 0 (tie to even).
  EXPECT_EQ(fma_rn_half(0x3FC0, 0x3FC0, 0x0000, true, true), 0x4010);
  EXPECT_EQ(fma_rn_half(0x7F7F, 0x4000, 0x0000, true, true), 0x7F80);
  EXPECT_EQ(fma_rn_half(0x0001, 0x3F00, 0x0000, true, true), 0x0000);
}

}  // namespace
