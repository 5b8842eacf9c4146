// `tmakit check --replay DIR [--json] [--strict]`: exit 0 without errors, 1 errors (warnings too
// with --strict), 2 unusable input (with a message that names the file and field, and nothing on
// stdout).
#include <sys/wait.h>

#include "trace_builder.hpp"

namespace {

using namespace check_test;

struct CliRun {
  int status;
  std::string out, err;
};

CliRun tmakit_check(const std::string& args) {
  // A folder per test: ctest runs the tests of this file side by side.
  const fs::path dir = fs::path(TMAKIT_BINARY_DIR) / "test_check_cli_runs" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  const std::string cmd = std::string(TMAKIT_BINARY_DIR) + "/tools/tmakit/tmakit check " + args + " >" +
                          (dir / "out").string() + " 2>" + (dir / "err").string();
  const int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read(dir / "out"), read(dir / "err")};
}

TEST(CheckCli, ExitStatusesAndOutput) {
  const fs::path root = fs::path(TMAKIT_BINARY_DIR) / "test_check_cli";
  fs::remove_all(root);
  Map m;
  Trace clean;
  clean.encoded(m);
  clean.rec(10, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  clean.write(root / "clean");
  CliRun r = tmakit_check("--replay " + (root / "clean").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("tmakit check: completed; 1 records (0 holes), 1 replayed on the model"), std::string::npos) << r.out;

  Trace bad;
  bad.meta()["cluster"] = {2, 1, 1};
  bad.rec(10, 1, 0, {{"addr", {kBar}}, {"count", {1}}});
  bad.rec(42, 0, 0, {{"addr", {(int64_t{1} << 24) | kBar}}});
  bad.write(root / "bad");
  r = tmakit_check("--replay " + (root / "bad").string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("/src/pipeline.cu:42:3: error: "), std::string::npos) << r.out;
  r = tmakit_check("--replay " + (root / "bad").string() + " --json");
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["findings"][0]["rule"], "check.init-fence-missing");

  // A run's directory: its launches, in launch order (launch-10 after launch-2).
  clean.write(root / "run" / "launch-2");
  bad.write(root / "run" / "launch-10");
  r = tmakit_check("--replay " + (root / "run").string());
  EXPECT_EQ(r.status, 1) << r.err;
  const size_t first = r.out.find("== " + (root / "run" / "launch-2").string());
  const size_t second = r.out.find("== " + (root / "run" / "launch-10").string());
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_LT(first, second) << r.out;
  r = tmakit_check("--replay " + (root / "run").string() + " --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["launches"].size(), 2u);

  // --ctas: FIRST or FIRST-LAST, LAST not below FIRST; refused before the command runs.
  for (const char* bad_ctas : {"5-2", "x", "1-", "2147483649"}) {
    r = tmakit_check(std::string("--ctas ") + bad_ctas + " -- /bin/true");
    EXPECT_EQ(r.status, 2) << bad_ctas << ": " << r.err;
    EXPECT_NE(r.err.find("--ctas FIRST or FIRST-LAST"), std::string::npos) << r.err;
  }

  fs::create_directories(root / "empty");
  r = tmakit_check("--replay " + (root / "empty").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("meta.json: missing from"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[check.trace-dir]"), std::string::npos) << r.err;
}

// A run that only warns exits 0 (a warning must never fail a correct program); --strict makes
// warnings count. The warning: a 128B-swizzled box landed 128- but not 1024-aligned and read by
// an ordinary ld.shared (check.swizzle-phase).
TEST(CheckCli, WarningsFailTheRunOnlyWithStrict) {
  const fs::path root = fs::path(TMAKIT_BINARY_DIR) / "test_check_cli_strict";
  fs::remove_all(root);
  Map m;
  Trace t;
  t.encoded(m);
  t.rec(10, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(11, 0, 0, {});
  t.rec(20, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});
  t.map_bytes(21, 0, 0, m.descriptor());
  t.rec(21, 0, 0, {{"dstMem", {kBuf + 128}}, {"tensorMap", {0x7f1100000000}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}});
  t.rec(22, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  for (int thread : {0, 3}) t.rec(70, 0, thread, {{"id", {0}}});  // __syncthreads(): thread 3 reads after the wait
  t.rec(23, 0, 3, {{"addr", {kBuf + 128}}, {"size", {16}}});
  t.write(root / "warns");
  CliRun r = tmakit_check("--replay " + (root / "warns").string());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(": warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[check.swizzle-phase]"), std::string::npos) << r.out;
  r = tmakit_check("--strict --replay " + (root / "warns").string());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
}

// Inputs within the old limits that broke the replay (issue 25): a 40 MiB site table (its
// parsed value took gigabytes, and a bad_alloc in the parser aborted the process) is refused
// by its size; a target tmakit does not know is refused by name.
TEST(CheckCli, TraceFilesAreBoundedAndTheirTargetKnown) {
  const fs::path root = fs::path(TMAKIT_BINARY_DIR) / "test_check_cli_bounds";
  fs::remove_all(root);
  Trace t;
  t.rec(10, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.meta()["target"] = "sm_9999";
  t.write(root / "target");
  CliRun r = tmakit_check("--replay " + (root / "target").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("meta.json.target: \"sm_9999\" is not a target"), std::string::npos) << r.err;
  t.meta()["target"] = "sm_90a";
  t.write(root / "big");
  {  // the same table, padded with white space past 32 MiB
    std::ofstream(root / "big" / "sites.json", std::ios::app) << std::string((32u << 20) + 1, ' ');
  }
  r = tmakit_check("--replay " + (root / "big").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("sites.json: holds "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("above the limit of 33554432 bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[check.trace-dir]"), std::string::npos) << r.err;
  fs::remove_all(root);
}

}  // namespace
