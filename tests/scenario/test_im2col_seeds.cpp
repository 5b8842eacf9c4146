// Every im2col-mode example of the PTX seed pages (tests/seeds, their "Examples"
// blocks) runs as a scenario with suitable symbols, maps and barriers: loads complete
// their barrier with the byte count of §4.2 / §4.4 and land the pixel the walk names
// in row 0; prefetches are checked and have no effect; the reduce example's `.im2col`
// spelling is refused and its documented spelling `.im2col_no_offs` runs (§4.3).
// Also: the bytes of examples/im2col_conv against a direct convolution.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Instructions of the seed pages' Examples blocks that name an im2col mode, one per `;`
// (the reduce page's last example has none: it ends at its code block).
std::vector<std::string> im2col_seed_examples() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(TMAKIT_SOURCE_DIR) / "tests" / "seeds")) {
    if (e.path().extension() != ".txt") continue;  // the pages, not tests/seeds/README.md
    std::ifstream in(e.path());
    std::string line, text;
    bool examples = false, code = false;
    auto flush = [&] {
      if (text.find("im2col") != std::string::npos) out.push_back(text);
      text.clear();
    };
    while (std::getline(in, line)) {
      examples = examples || line.rfind("Examples", 0) == 0;
      if (!examples) continue;
      if (line.rfind("```", 0) == 0) {
        code = !code;
        flush();
        continue;
      }
      const auto first = line.find_first_not_of(" \t");
      if (!code || first == std::string::npos || line.compare(first, 4, ".reg") == 0) continue;
      text += (text.empty() ? "" : " ") + line.substr(first);
      if (line.find(';') != std::string::npos) flush();
    }
  }
  return out;
}

// Byte i of {"random": seed} (scenario-format.md).
uint8_t random_byte(uint64_t seed, uint64_t i) { return uint8_t(scenario::splitmix64(seed + i / 8) >> (8 * (i % 8))); }

struct SeedScenario {
  json scenario;
  uint64_t bytes = 0;            // a load's complete_tx
  std::vector<uint8_t> row0;     // what shared row 0 must hold
};

constexpr uint64_t kSeed = 9;

// A scenario around one seed instruction: an im2col (or im2col_wide) map of the
// instruction's rank over a random NDHWC tensor (C = 32 float16 channels, each spatial
// size 4, N = 2), corners 0, channels_per_pixel 32, pixels_per_column 8; coordinates 0;
// im2col offsets 1; wHalo 2, wOffset 1.
SeedScenario build(const std::string& ptx) {
  std::smatch m;
  std::regex_search(ptx, m, std::regex(R"(\.([345])d\b)"));
  const int rank = std::stoi(m[1]);
  std::regex_search(ptx, m, std::regex(R"(\[(tensorMap\d)\s*,)"));
  const std::string map = m[1];
  const bool w128 = ptx.find(".im2col::w::128") != std::string::npos;
  const bool wide = w128 || ptx.find(".im2col::w") != std::string::npos;
  const bool load = ptx.find("mbarrier") != std::string::npos;  // only loads name a barrier
  const bool reduce = ptx.find("cp.reduce") != std::string::npos;

  std::vector<uint64_t> dims = {32};
  for (int k = 0; k < rank - 2; ++k) dims.push_back(4);
  dims.push_back(2);
  std::vector<uint64_t> strides;
  uint64_t s = 64;
  for (int k = 1; k < rank; ++k) strides.push_back(s), s *= dims[k];
  json tm = {{"encode", wide ? "im2col_wide" : "im2col"}, {"data_type", "float16"},
             {"global", "T"}, {"dims", dims}, {"strides", strides}, {"channels_per_pixel", 32},
             {"pixels_per_column", 8}, {"swizzle", "64b"}};
  if (reduce) tm["data_type"] = "uint32", tm["channels_per_pixel"] = 16, tm["dims"][0] = 16;  // .xor: a .b32 map
  if (wide) tm["pixel_box_lower_w"] = 0, tm["pixel_box_upper_w"] = 0, tm["mode"] = w128 ? "w128" : "w";
  else tm["pixel_box_lower"] = std::vector<int>(rank - 2, 0), tm["pixel_box_upper"] = std::vector<int>(rank - 2, 0);

  json symbols = {{"p", 1}, {"policy", 0}, {"i2cOffW", 1}, {"i2cOffH", 1}, {"i2cOffD", 1}, {"im2colwHalo", 2},
                  {"im2colOff", 1}};
  for (const char* c : {"tc0", "tc1", "tc2", "tc3", "tc4", "t0", "t1", "t2", "t3"}) symbols[c] = 0;
  for (int i = 0; i < 8; ++i) {
    symbols["sMem" + std::to_string(i)] = "shared:" + std::to_string(i * 8192);
    symbols["mbar" + std::to_string(i)] = "shared:" + std::to_string(65536 + 8 * i);
  }
  SeedScenario out;
  json program = json::array();
  uint64_t dst = 0;  // the shared offset of the instruction's sMem operand
  if (std::regex_search(ptx, m, std::regex(R"(sMem(\d))"))) dst = std::stoull(m[1]) * 8192;
  if (load) {
    std::regex_search(ptx, m, std::regex(R"(\[(mbar\d)\])"));
    const std::string mbar = m[1];
    const uint64_t rows = 8 + (wide ? 2 : 0);  // pixels_per_column, + wHalo rows (§4.4)
    out.bytes = rows * 32 * 2;
    program = {"mbarrier.init.shared::cta.b64 [" + mbar + "], 1;",
               "mbarrier.arrive.expect_tx.shared::cta.b64 _, [" + mbar + "], " + std::to_string(out.bytes) + ";", ptx,
               "mbarrier.try_wait.parity.shared::cta.b64 done, [" + mbar + "], 0;"};
    // Row 0: channels 0..31 of the pixel at coordinates 0 + offsets (1 per spatial dim for
    // .im2col; W + wOffset = 1 for ::w), n = 0: byte offset 64 × Σ pixel[k] × Π dims below.
    uint64_t at = 0, scale = 64;
    for (int k = 0; k < rank - 2; ++k) {
      const bool moved = !wide || k == 0;
      at += (moved ? 1 : 0) * scale;
      scale *= 4;
    }
    for (uint64_t b = 0; b < 64; ++b) out.row0.push_back(random_byte(kSeed, at + b));
  } else if (reduce) {
    program = {ptx, "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"};
  } else {
    program = {ptx};
  }
  out.scenario = {{"format", "tmakit-scenario/1"},
                  {"target", wide ? "sm_100a" : "sm_90a"},
                  {"ptx_version", "8.7"},
                  {"shared_bytes", 81920},
                  {"global", {{"T", {{"bytes", s}, {"init", {{"random", kSeed}}}}}}},
                  {"tensor_maps", {{map, tm}}},
                  {"symbols", symbols},
                  {"program", program},
                  {"outputs", {{{"name", "row0"}, {"shared", {{"cta", 0}, {"offset", dst}, {"bytes", 64}}}}}}};
  return out;
}

scenario::RunResult run(const json& j) { return scenario::run(scenario::from_json(json::parse(j.dump()), ".")); }

TEST(Im2colSeeds, EveryExampleRunsAsAScenario) {
  const auto examples = im2col_seed_examples();
  int loads = 0, prefetches = 0, reduces = 0;
  for (std::string ptx : examples) {
    SCOPED_TRACE(ptx);
    if (ptx.find("cp.reduce") != std::string::npos) {
      // The reduce page spells the store-side mode `.im2col` and ends without `;` (§4.3):
      // refused as written, then run with the documented spelling.
      SeedScenario bad = build(ptx);
      bad.scenario["program"][0] = ptx + ";";
      try {
        run(bad.scenario);
        ADD_FAILURE() << "the `.im2col` spelling of a reduction ran";
      } catch (const DiagnosticError& e) {
        EXPECT_EQ(e.diagnostic().rule.rfind("ptx.", 0), 0u) << e.what();
      }
      ptx = std::regex_replace(ptx, std::regex(R"(\.im2col\b)"), ".im2col_no_offs") + ";";
      ++reduces;
    }
    SeedScenario s = build(ptx);
    const auto result = run(s.scenario);
    if (ptx.find("mbarrier") != std::string::npos) {
      ++loads;
      ASSERT_EQ(result.outputs.size(), 1u);
      // 64B swizzle (§3.1): chunk j of line 0 stays at j.
      EXPECT_EQ(result.outputs[0].second, s.row0);
    } else if (ptx.find("prefetch") != std::string::npos) {
      ++prefetches;
      EXPECT_EQ(result.outputs[0].second, std::vector<uint8_t>(64, 0));  // no effect (§2.7)
    }
  }
  EXPECT_EQ(loads, 4);       // 5d shared::cta, 5d and 3d shared::cluster, 3d ::w
  EXPECT_EQ(prefetches, 3);  // 5d, 3d, 4d ::w::128
  EXPECT_EQ(reduces, 1);
}

// The im2col_conv example: tap t = 3r + s is an 8 KiB buffer of 64 rows (128 bytes, 128B
// swizzle); row m holds the 64 bf16 channels of input pixel (h, w) = (m / 8 - 1 + r,
// m % 8 - 1 + s) of the 8 x 8 image X ({"random": 5}, 128-byte pixels), zero where that
// lies in the padding: a "same" 3x3 convolution's A operand.
TEST(Im2colSeeds, ConvExampleHoldsTheConvolutionsOperand) {
  const fs::path file = fs::path(TMAKIT_SOURCE_DIR) / "examples" / "im2col_conv" / "scenario.json";
  const auto result = scenario::run(scenario::load_file(file));
  ASSERT_EQ(result.outputs.size(), 1u);
  const std::vector<uint8_t>& got = result.outputs[0].second;
  ASSERT_EQ(got.size(), 9u * 8192);
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s)
      for (int m = 0; m < 64; ++m) {
        const int h = m / 8 - 1 + r, w = m % 8 - 1 + s;
        const bool pad = h < 0 || h >= 8 || w < 0 || w >= 8;
        for (uint32_t b = 0; b < 128; ++b) {
          const uint32_t a = uint32_t((3 * r + s) * 8192 + m * 128) + b;
          const uint32_t swz = a ^ (((a >> 7) & 7) << 4);  // §3.1, 128B
          const uint8_t want = pad ? 0 : random_byte(5, uint64_t(h * 8 + w) * 128 + b);
          ASSERT_EQ(got[swz], want) << "tap (" << r << ", " << s << ") row " << m << " byte " << b;
        }
      }
}

// The im2col rules as a scenario raises them (docs/diagnostics.md), each next to a
// neighbour just inside the rule that runs clean.
std::string rule_of_run(const json& j) {
  try {
    run(j);
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule + " @ " + e.diagnostic().where;
  }
  return "ok";
}

TEST(Im2colDiagnostics, ScenarioRules) {
  const std::string load4 =
      "cp.async.bulk.tensor.4d.shared::cta.global.im2col.mbarrier::complete_tx::bytes [sMem0], "
      "[tensorMap1, {tc0, W, tc2, tc3}], [mbar0], {OFF, 0};";
  json j = build(load4).scenario;  // rank 4: corners 0, W = 4, offsets [0, 255] (§4.1)
  auto with = [&](int w, int off) {
    json k = j;
    k["symbols"]["W"] = w, k["symbols"]["OFF"] = off;
    return rule_of_run(k);
  };
  EXPECT_EQ(with(3, 255), "ok");
  EXPECT_EQ(with(3, 256), "tensor.im2col-offset-range @ program[2] (cta 0)");
  EXPECT_EQ(with(4, 0), "tensor.im2col-base-outside-box @ program[2] (cta 0)");
  EXPECT_EQ(with(-1, 0), "tensor.im2col-base-outside-box @ program[2] (cta 0)");
  // §4.3: a store needs the bounding box inside the tensor (corners 0 are; -1 is not).
  const std::string store =
      "cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group [tensorMap1, {tc0, tc1, tc2, tc3}], [sMem0];";
  json st = build(store).scenario;
  EXPECT_EQ(rule_of_run(st), "ok");
  st["tensor_maps"]["tensorMap1"]["pixel_box_lower"] = {-1, 0};
  EXPECT_EQ(rule_of_run(st), "coord.im2col-store-box @ program[0] (cta 0)");
  // .im2col::w::128 on a map of mode w (§2.1 item 8).
  json wide = build("cp.async.bulk.prefetch.tensor.4d.L2.global.im2col::w::128 [tensorMap4, {t0, t1, t2, t3}], "
                    "{im2colwHalo, im2colOff};").scenario;
  EXPECT_EQ(rule_of_run(wide), "ok");
  wide["tensor_maps"]["tensorMap4"]["mode"] = "w";
  EXPECT_EQ(rule_of_run(wide), "tensor.map-kind @ program[0] (cta 0)");
}

}  // namespace
