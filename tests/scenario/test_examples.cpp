// The bundled examples (examples/*/scenario.json) behave as their "comment" says,
// and the successful ones produce the bytes a naive, separately written
// reference predicts: the §3.5 worked example for quickstart, H6 for partial_store.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(TMAKIT_SOURCE_DIR) / "examples";

// Byte i of an allocation initialised with {"random": SEED} (scenario-format.md):
// the low byte of splitmix64(SEED + i/8) >> 8*(i%8). splitmix64 written out here.
uint64_t splitmix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint8_t random_byte(uint64_t seed, uint64_t i) { return uint8_t(splitmix(seed + i / 8) >> (8 * (i % 8))); }

std::vector<uint8_t> output(const scenario::RunResult& r, const std::string& name) {
  for (const auto& [n, bytes] : r.outputs)
    if (n == name) return bytes;
  ADD_FAILURE() << "no output " << name;
  return {};
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(Examples, SplitmixMatchesTheLibrary) {
  for (uint64_t x : {0ull, 1ull, 7ull, 0xffffffffffffffffull}) EXPECT_EQ(splitmix(x), scenario::splitmix64(x));
  // The public-domain generator's first output for seed 0 (state advanced once).
  EXPECT_EQ(splitmix(0), 0xE220A8397B1DCDAFull);
}

TEST(Examples, EachBehavesAsItsCommentSays) {
  std::set<std::string> seen;
  static const std::regex rule_re(R"(\b(model|mbarrier|bulk|tensor|multicast|coord|ptx|map)\.[a-z0-9-]+)");
  for (const auto& e : fs::directory_iterator(kExamples)) {
    const fs::path file = e.path() / "scenario.json";
    if (!fs::exists(file)) continue;
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    seen.insert(name);
    const std::string comment = read_json(file).value("comment", "");
    ASSERT_FALSE(comment.empty()) << "every example documents what it shows";
    const bool should_fail = comment.rfind("Expected to FAIL", 0) == 0;
    try {
      scenario::run(scenario::load_file(file));
      EXPECT_FALSE(should_fail) << "ran clean, but the comment says: " << comment;
    } catch (const scenario::InputError& err) {
      ADD_FAILURE() << "unusable input: " << err.what();
    } catch (const DiagnosticError& err) {
      ASSERT_TRUE(should_fail) << "failed: " << err.what();
      std::smatch m;
      ASSERT_TRUE(std::regex_search(comment, m, rule_re)) << "the comment should name the rule: " << comment;
      EXPECT_EQ(err.diagnostic().rule, m.str()) << err.what();
    }
  }
  for (const char* want : {"quickstart", "partial_store", "reduction", "deadlock", "byte_mismatch", "multicast_pair"})
    EXPECT_TRUE(seen.count(want)) << want;
}

TEST(Examples, FailuresNameWhatWentWrong) {
  auto failure = [](const char* name) -> Diagnostic {
    try {
      scenario::run(scenario::load_file(kExamples / name / "scenario.json"));
    } catch (const DiagnosticError& e) {
      return e.diagnostic();
    }
    ADD_FAILURE() << name << " ran clean";
    return {};
  };
  Diagnostic d = failure("deadlock");
  EXPECT_EQ(d.rule, "model.deadlock");
  EXPECT_EQ(d.where, "program[3] (cta 0)");
  EXPECT_NE(d.message.find("1 of 2 arrivals pending"), std::string::npos) << format(d);
  d = failure("byte_mismatch");
  EXPECT_EQ(d.rule, "model.deadlock");
  EXPECT_EQ(d.where, "program[3] (cta 0)");
  EXPECT_NE(d.message.find("armed 2048 bytes, delivered 1024"), std::string::npos) << format(d);
  EXPECT_NE(d.message.find("1024 armed bytes were never delivered"), std::string::npos) << format(d);
}

TEST(Examples, QuickstartIsTheWorkedExampleOf3_5) {
  // 128B swizzle, bf16, box {64, 8}, dstMem at offset 0 (1024-aligned): element (x, y)
  // lands at y*128 + ((j ^ y) << 4) + (2x & 15), j = x >> 3 (§3.5). It is tensor element
  // (64 + x, 8 + y) of the 256 x 64 tensor A (rows of 512 bytes), {"random": 7}.
  const nlohmann::json j = read_json(kExamples / "quickstart" / "scenario.json");
  ASSERT_EQ(j["global"]["A"]["init"]["random"], 7);
  ASSERT_EQ(j["symbols"]["x"], 64);
  ASSERT_EQ(j["symbols"]["y"], 8);
  std::vector<uint8_t> want(1024, 0);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 64; ++x) {
      const int jc = x >> 3;
      const int at = y * 128 + ((jc ^ y) << 4) + ((2 * x) & 15);
      const uint64_t src = uint64_t(8 + y) * 512 + uint64_t(64 + x) * 2;
      want[at] = random_byte(7, src);
      want[at + 1] = random_byte(7, src + 1);
    }
  auto r = scenario::run(scenario::load_file(kExamples / "quickstart" / "scenario.json"));
  EXPECT_EQ(output(r, "tile"), want);
  // Any completion order gives the same tile.
  for (uint64_t seed : {1, 2, 3}) {
    scenario::RunOptions o;
    o.seed = seed;
    EXPECT_EQ(output(scenario::run(scenario::load_file(kExamples / "quickstart" / "scenario.json"), o), "tile"), want);
  }
}

TEST(Examples, PartialStoreWritesWholeChunksOfInBoundRows) {
  // uint8 tensor 40 x 20, rows of 48 bytes, all 0xAA; a 32 x 8 box from shared
  // ({"random": 3}) stored at (16, 16). In-bound: rows 16..19, columns 16..39. H6: the
  // 16-byte chunk holding column 39 ([32, 48) of the row) is written whole, so
  // columns 16..47 of rows 16..19 take the shared bytes that map there.
  const nlohmann::json j = read_json(kExamples / "partial_store" / "scenario.json");
  ASSERT_EQ(j["shared_init"][0]["init"]["random"], 3);
  std::vector<uint8_t> want(1024, 0xAA);
  for (int y = 16; y < 20; ++y)
    for (int x = 16; x < 48; ++x) want[y * 48 + x] = random_byte(3, uint64_t(y - 16) * 32 + (x - 16));
  auto r = scenario::run(scenario::load_file(kExamples / "partial_store" / "scenario.json"));
  auto got = output(r, "B");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " (row " << i / 48 << ", column " << i % 48 << ")";
}

TEST(Examples, ReductionAddsTheBoxIntoTheTensor) {
  // uint32 tensor 64 x 16 (rows of 256 bytes, {"random": 11}); box 32 x 4 at (32, 4)
  // from shared ({"random": 5}, first word overwritten with 1), added modulo 2^32.
  auto word = [](uint64_t seed, uint64_t byte_at) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= uint32_t(random_byte(seed, byte_at + b)) << (8 * b);
    return v;
  };
  std::vector<uint32_t> want(1024);
  for (uint64_t i = 0; i < 1024; ++i) want[i] = word(11, 4 * i);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 32; ++x) {
      const uint32_t s = (x == 0 && y == 0) ? 1u : word(5, uint64_t(y * 32 + x) * 4);
      want[(4 + y) * 64 + 32 + x] += s;
    }
  auto r = scenario::run(scenario::load_file(kExamples / "reduction" / "scenario.json"));
  auto got = output(r, "C");
  ASSERT_EQ(got.size(), 4096u);
  for (size_t i = 0; i < 1024; ++i) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= uint32_t(got[4 * i + b]) << (8 * b);
    ASSERT_EQ(v, want[i]) << "element " << i % 64 << ", " << i / 64;
  }
}

TEST(Examples, MulticastPairLandsTheSameBoxInBothCtas) {
  // f32 tensor 32 x 64 (rows of 128 bytes, {"random": 21}); box 32 x 8 at (0, 16) is bytes
  // [2048, 3072) of A; both CTAs hold them at shared offset 1024 (§10.1, H12).
  const nlohmann::json j = read_json(kExamples / "multicast_pair" / "scenario.json");
  ASSERT_EQ(j["global"]["A"]["init"]["random"], 21);
  ASSERT_EQ(j["symbols"]["y"], 16);
  std::vector<uint8_t> want;
  for (uint64_t i = 2048; i < 3072; ++i) want.push_back(random_byte(21, i));
  for (uint64_t seed : {0, 5}) {
    scenario::RunOptions o;
    if (seed) o.seed = seed;
    auto r = scenario::run(scenario::load_file(kExamples / "multicast_pair" / "scenario.json"), o);
    EXPECT_EQ(output(r, "cta0"), want);
    EXPECT_EQ(output(r, "cta1"), want);
  }
}

}  // namespace
