// `tmakit run` as a user meets it: exit 0 and DIR/NAME.bin on success; exit 1,
// "FILE: program[N] (cta C): error: ... [rule]" and no files on a program error;
// exit 2 for unusable input, never a crash (scenario-format.md, Errors).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tmakit/scenario/scenario.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kTmakit = TMAKIT_BINARY_DIR "/tools/tmakit/tmakit";

struct Result {
  int rc = -1;
  bool signalled = false;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tmakit_run_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  fs::path write(const std::string& name, const json& j) { return write(name, j.dump(2)); }

  Result tmakit(const std::string& args) {
    const std::string cmd = "'" + kTmakit + "' " + args + " >'" + (dir_ / "stdout").string() + "' 2>'" +
                            (dir_ / "stderr").string() + "'";
    int status = std::system(cmd.c_str());
    Result r;
    r.signalled = WIFSIGNALED(status);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ / "stdout");
    r.err = slurp(dir_ / "stderr");
    return r;
  }
  static std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

  fs::path dir_;
};

// A 64-byte bulk load whose answer is known: A holds bytes 0..63.
json copy_scenario() {
  std::string hex;
  for (int i = 0; i < 64; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", i);
    hex += b;
  }
  return {{"format", "tmakit-scenario/1"},
          {"target", "sm_90a"},
          {"ptx_version", "8.7"},
          {"shared_bytes", 4096},
          {"global", {{"A", {{"bytes", 64}, {"init", {{"hex", hex}}}}}}},
          {"symbols", {{"dst", "shared:0"}, {"src", "global:A"}, {"mbar", "shared:1024"}}},
          {"program",
           {"mbarrier.init.shared::cta.b64 [mbar], 1;", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 64;",
            "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [dst], [src], 64, [mbar];",
            "mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;"}},
          {"outputs",
           {{{"name", "tile"}, {"shared", {{"offset", 0}, {"bytes", 64}}}}, {{"name", "A"}, {"global", "A"}}}}};
}

std::string iota_bytes(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(char(i));
  return s;
}

TEST_F(RunCli, GoodScenarioWritesEveryOutput) {
  auto file = write("copy.json", copy_scenario());
  auto out = dir_ / "out";
  Result r = tmakit("run " + q(file) + " -o " + q(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(slurp(out / "tile.bin"), iota_bytes(64));
  EXPECT_EQ(slurp(out / "A.bin"), iota_bytes(64));
  // Without -o nothing is written, and it still succeeds.
  Result plain = tmakit("run " + q(file));
  EXPECT_EQ(plain.rc, 0) << plain.err;
}

TEST_F(RunCli, ProgramErrorExitsOneWithThePlaceAndWritesNothing) {
  json s = copy_scenario();
  s["program"][2] = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [dst], [src], 40, [mbar];";
  auto file = write("bad.json", s);
  auto out = dir_ / "out";
  Result r = tmakit("run " + q(file) + " -o " + q(out));
  EXPECT_EQ(r.rc, 1);
  EXPECT_FALSE(r.signalled);
  const std::regex want("^" + std::regex_replace(file.string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                        R"(: program\[2\] \(cta 0\): error: .*size 40 is not a multiple of 16.* \[bulk\.size-align\]\n$)");
  EXPECT_TRUE(std::regex_match(r.err, want)) << r.err;
  EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out)) << "outputs were written after an error";
}

TEST_F(RunCli, DeadlockExampleExitsOneAndWritesNothing) {
  auto out = dir_ / "out";
  Result r = tmakit("run " + q(fs::path(TMAKIT_SOURCE_DIR) / "examples/deadlock/scenario.json") + " -o " + q(out));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(": program[3] (cta 0): error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[model.deadlock]"), std::string::npos) << r.err;
  EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out));
}

TEST_F(RunCli, UnusableInputExitsTwo) {
  struct Case {
    std::string name, text, rule;
  };
  json missing = copy_scenario();
  missing.erase("program");
  json unknown = copy_scenario();
  unknown["outputs"][0]["shared"]["size"] = 64;
  json wrong_type = copy_scenario();
  wrong_type["shared_bytes"] = "lots";
  json bad_symbol = copy_scenario();
  bad_symbol["symbols"]["src"] = "global:Nope";
  std::vector<Case> cases = {
      {"truncated.json", "{\"format\": \"tmakit-scenario/1\", \"program\": [", "[scenario.json]"},
      {"empty.json", "", "[scenario.json]"},
      {"binary.json", std::string("\x00\xff\x13\x37", 4), "[scenario.json]"},
      {"array.json", "[1, 2, 3]", "[scenario.field]"},
      {"missing.json", missing.dump(), "[scenario.field]"},
      {"unknown.json", unknown.dump(), "[scenario.field]"},
      {"wrong_type.json", wrong_type.dump(), "[scenario.field]"},
      {"bad_symbol.json", bad_symbol.dump(), "[scenario.symbol]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto out = dir_ / ("out_" + c.name);
    Result r = tmakit("run " + q(write(c.name, c.text)) + " -o " + q(out));
    EXPECT_FALSE(r.signalled);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(c.rule), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(": error: "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out) && !fs::is_empty(out));
  }
  Result r = tmakit("run " + q(dir_ / "no_such_file.json"));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("[scenario.file]"), std::string::npos) << r.err;
  r = tmakit("run " + q(write("ok.json", copy_scenario())) + " --target sm_42");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("sm_42"), std::string::npos) << r.err;
  r = tmakit("run " + q(dir_ / "ok.json") + " --ptx-version eight");
  EXPECT_EQ(r.rc, 2) << r.err;
}

TEST_F(RunCli, TracePrintsIssueAndCompletionEvents) {
  auto file = write("copy.json", copy_scenario());
  Result r = tmakit("run " + q(file) + " --trace");
  ASSERT_EQ(r.rc, 0) << r.err;
  const size_t issued = r.out.find("program[2] (cta 0) cp.async.bulk");
  ASSERT_NE(issued, std::string::npos) << r.out;
  const size_t issue_line = r.out.find("issued as operation #1");
  const size_t done_line = r.out.find("completed (operation #1)");
  EXPECT_NE(issue_line, std::string::npos) << r.out;
  EXPECT_NE(done_line, std::string::npos) << r.out;
  EXPECT_LT(issue_line, done_line);
  EXPECT_NE(r.out.find("phase 0 completed"), std::string::npos) << r.out;
  // Without --trace there are no trace lines.
  Result quiet = tmakit("run " + q(file));
  EXPECT_EQ(quiet.out.find("issued as operation"), std::string::npos) << quiet.out;
}

TEST_F(RunCli, SeedGivesTheSameBytesForACorrectProgram) {
  auto file = write("copy.json", copy_scenario());
  for (int seed : {1, 7, 20}) {
    auto out = dir_ / ("out" + std::to_string(seed));
    Result r = tmakit("run " + q(file) + " --seed " + std::to_string(seed) + " -o " + q(out));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(out / "tile.bin"), iota_bytes(64));
  }
}

TEST_F(RunCli, TargetAndPtxVersionOverrides) {
  // .cp_mask is sm_100+ (§7): refused for the scenario's sm_90a, accepted with --target sm_100a.
  json s = copy_scenario();
  s["global"]["B"] = {{"bytes", 64}};
  s["program"].push_back("cp.async.bulk.global.shared::cta.bulk_group.cp_mask [gdst], [dst], 64, 0x0f0f;");
  s["program"].push_back("cp.async.bulk.commit_group;");
  s["program"].push_back("cp.async.bulk.wait_group 0;");
  s["symbols"]["gdst"] = "global:B";
  s["outputs"].push_back({{"name", "B"}, {"global", "B"}});
  auto file = write("mask.json", s);
  Result r = tmakit("run " + q(file));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("program[4] (cta 0): error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[ptx.target]"), std::string::npos) << r.err;
  auto out = dir_ / "out";
  r = tmakit("run " + q(file) + " --target sm_100a -o " + q(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string want(64, '\0');
  for (int i = 0; i < 64; ++i)
    if ((0x0f0f >> (i % 16)) & 1) want[i] = char(i);  // byte i of each 16-byte chunk where mask bit i is set
  EXPECT_EQ(slurp(out / "B.bin"), want);

  // The .shared::cta destination of cp.async.bulk needs PTX ISA 8.6.
  auto copy = write("copy.json", copy_scenario());
  r = tmakit("run " + q(copy) + " --ptx-version 8.5");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("program[2] (cta 0): error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[ptx.ptx-version]"), std::string::npos) << r.err;
  r = tmakit("run " + q(copy) + " --ptx-version 8.6");
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
