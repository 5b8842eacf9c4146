// `tmakit run -o DIR` writes all of a run's outputs or none (docs/security.md):
// through a fresh temporary folder beside DIR renamed into place, never following a
// symlink, never leaving part of a run behind on a full disk; DIR is new, empty or an
// earlier run's outputs (its .tmakit-outputs lists them), and is replaced as a whole.
// And `init` files stay in the scenario's folder unless --allow-files-anywhere is given.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tmakit/scenario/scenario.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTmakit = TMAKIT_BINARY_DIR "/tools/tmakit/tmakit";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

struct Ran {
  int rc = -1;
  std::string err;
};

class RunOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tmakit_run_out_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "scen");
    fs::create_directories(dir_ / "t");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `prefix` runs before tmakit in the same shell (ulimit, trap). Scratch files go to t/.
  Ran tmakit(const std::string& args, const std::string& prefix = "") {
    std::ofstream(dir_ / "t" / "cmd.sh") << prefix << q(kTmakit) << " " << args << " 2>" << q(dir_ / "t" / "stderr")
                                         << " >/dev/null\n";
    const int status = std::system(("sh " + q(dir_ / "t" / "cmd.sh")).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "t" / "stderr")};
  }

  // Outputs "big" (8 KiB of global A, from the hex init) and "small" (16 bytes).
  fs::path scenario(const std::vector<std::string>& names = {"small", "big"}, const json& init = {{"random", 7}}) {
    json outputs = json::array();
    for (const auto& n : names)
      outputs.push_back(n == "big" ? json{{"name", n}, {"global", "A"}}
                                   : json{{"name", n}, {"global", {{"name", "A"}, {"offset", 0}, {"bytes", 16}}}});
    json j = {{"format", "tmakit-scenario/1"},
              {"global", {{"A", {{"bytes", 8192}, {"init", init}}}}},
              {"program", json::array()},
              {"outputs", outputs}};
    std::ofstream(dir_ / "scen" / "s.json") << j.dump();
    return dir_ / "scen" / "s.json";
  }

  // Every name in `folder`, hidden temporary folders included.
  static std::set<std::string> names_in(const fs::path& folder) {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(folder)) s.insert(e.path().filename().string());
    return s;
  }

  fs::path dir_;
};

TEST_F(RunOutputs, ANewFolderGetsEveryOutputAndNothingElse) {
  const fs::path out = dir_ / "a" / "out";
  Ran r = tmakit("run " + q(scenario()) + " -o " + q(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(names_in(out), (std::set<std::string>{"small.bin", "big.bin", ".tmakit-outputs"}));
  EXPECT_EQ(slurp(out / ".tmakit-outputs"), "small.bin\nbig.bin\n");  // what tmakit wrote, so may replace
  EXPECT_EQ(slurp(out / "big.bin").size(), 8192u);
  EXPECT_EQ(slurp(out / "small.bin"), slurp(out / "big.bin").substr(0, 16));
  EXPECT_EQ(names_in(dir_ / "a"), std::set<std::string>{"out"});  // no temporary folder left
}

TEST_F(RunOutputs, AnEarlierRunsFolderIsReplacedAsAWhole) {
  const fs::path out = dir_ / "out";
  ASSERT_EQ(tmakit("run " + q(scenario({"small", "big"})) + " -o " + q(out)).rc, 0);
  // The second run writes only "small": the stale big.bin of the first run goes.
  Ran r = tmakit("run " + q(scenario({"small"}, {{"byte", 5}})) + " -o " + q(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(names_in(out), (std::set<std::string>{"small.bin", ".tmakit-outputs"}));
  EXPECT_EQ(slurp(out / "small.bin"), std::string(16, '\x05'));
  EXPECT_EQ(names_in(dir_), (std::set<std::string>{"out", "scen", "t"}));
  // An empty folder is fine too.
  fs::create_directories(dir_ / "empty");
  EXPECT_EQ(tmakit("run " + q(scenario()) + " -o " + q(dir_ / "empty/")).rc, 0);
  EXPECT_EQ(names_in(dir_ / "empty"), (std::set<std::string>{"small.bin", "big.bin", ".tmakit-outputs"}));
}

TEST_F(RunOutputs, AFolderHoldingOtherFilesIsRefusedUntouched) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "notes.txt") << "mine";
  Ran r = tmakit("run " + q(scenario()) + " -o " + q(out));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("-o: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[cli.output-exists]"), std::string::npos) << r.err;
  EXPECT_EQ(names_in(out), std::set<std::string>{"notes.txt"});
  EXPECT_EQ(slurp(out / "notes.txt"), "mine");
  // A file where the folder should be.
  std::ofstream(dir_ / "plain") << "x";
  EXPECT_EQ(tmakit("run " + q(scenario()) + " -o " + q(dir_ / "plain")).rc, 2);
  EXPECT_EQ(slurp(dir_ / "plain"), "x");
}

TEST_F(RunOutputs, PlantedSymlinksAreNeverFollowed) {
  const fs::path out = dir_ / "out", victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  fs::create_directories(out);
  fs::create_symlink(victim, out / "big.bin");
  Ran r = tmakit("run " + q(scenario()) + " -o " + q(out));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("[cli.output-exists]"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(victim), "precious");
  // -o naming a symlink to a folder: refused, the folder untouched.
  fs::create_directories(dir_ / "real");
  fs::create_symlink(dir_ / "real", dir_ / "linked");
  EXPECT_EQ(tmakit("run " + q(scenario()) + " -o " + q(dir_ / "linked")).rc, 2);
  EXPECT_TRUE(fs::is_empty(dir_ / "real"));
}

TEST_F(RunOutputs, AFullDiskLeavesNoPartOfTheRun) {
  // A file-size limit of 4 KiB fails the 8 KiB output after the 16-byte one is written
  // (EFBIG, as ENOSPC would on a full disk; SIGXFSZ ignored so write() reports it).
  const fs::path out = dir_ / "out";
  Ran r = tmakit("run " + q(scenario()) + " -o " + q(out), "trap '' XFSZ; ulimit -f 4; ");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(names_in(dir_), (std::set<std::string>{"scen", "t"}));  // the temporary folder is gone
  // Over an earlier run's outputs: they stay as they were.
  ASSERT_EQ(tmakit("run " + q(scenario({"small", "big"}, {{"byte", 1}})) + " -o " + q(out)).rc, 0);
  r = tmakit("run " + q(scenario({"small", "big"}, {{"byte", 2}})) + " -o " + q(out), "trap '' XFSZ; ulimit -f 4; ");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(slurp(out / "small.bin"), std::string(16, '\x01'));
  EXPECT_EQ(slurp(out / "big.bin"), std::string(8192, '\x01'));
}

TEST_F(RunOutputs, OutputNamesOutsideThePortableSetAreRefused) {
  json j = json::parse(slurp(scenario()));
  j["outputs"][0]["name"] = "two\nlines";
  std::ofstream(dir_ / "scen" / "s.json") << j.dump();
  Ran r = tmakit("run " + q(dir_ / "scen" / "s.json") + " -o " + q(dir_ / "out"));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("scenario.outputs[0].name: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[scenario.output-name]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(RunOutputs, InitFilesStayInTheScenariosFolderUnlessAllowed) {
  std::ofstream(dir_ / "data.bin", std::ios::binary) << std::string(8192, 'd');
  const fs::path s = scenario({"small"}, {{"file", "../data.bin"}});
  Ran r = tmakit("run " + q(s) + " -o " + q(dir_ / "out"));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("scenario.global.A.init.file: error: \"../data.bin\" resolves to "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[scenario.file-outside]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  r = tmakit("run " + q(s) + " --allow-files-anywhere -o " + q(dir_ / "out"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "out" / "small.bin"), std::string(16, 'd'));
  // /dev/zero, even with the flag: refused at once, not read forever.
  r = tmakit("run " + q(scenario({"small"}, {{"file", "/dev/zero"}})) + " --allow-files-anywhere");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("[scenario.file-not-regular]"), std::string::npos) << r.err;
}

}  // namespace
