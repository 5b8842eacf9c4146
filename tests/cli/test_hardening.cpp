// Issue 25, a hostile user's second round (docs/security.md): each case here broke a promise
// of that page on the main of the time. Outputs replace only what tmakit made; numbers and
// JSON are read exactly; memory is bounded before it is spent; what reaches the terminal is
// escaped; errors carry a rule id and quote a bounded part of what they refuse.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../layout/run.hpp"

namespace tmakit::cli::test {
namespace {

namespace fs = std::filesystem;
using layout::test::kTmakit;
using layout::test::quote;
using layout::test::Ran;
using layout::test::read_file;
using nlohmann::json;

class Hardening : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tmakit_h25_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `tmakit ARGS` run in the test's folder; stdout and stderr together.
  Ran tmakit(const std::string& args, const std::string& env = "") {
    return layout::test::run("cd " + quote(dir_.string()) + " && " + env + " " + quote(kTmakit) + " " + args);
  }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // A scenario of one 64-byte allocation, written out as s.json.
  fs::path scenario(json extra = json::object()) {
    json j = {{"format", "tmakit-scenario/1"},
              {"global", {{"A", {{"bytes", 64}, {"init", {{"byte", 7}}}}}}},
              {"program", json::array()},
              {"outputs", {{{"name", "a"}, {"global", "A"}}}}};
    j.update(extra);
    return write("s.json", j.dump());
  }

  fs::path dir_;
};

const std::string kMap = "--type float32 --dims 64,64 --strides 256 --box 32,4";

TEST_F(Hardening, RunReplacesOnlyAFolderItMade) {
  // A folder of the user's holding only *.bin files is not an earlier run's: refused, untouched.
  fs::create_directories(dir_ / "mine");
  std::ofstream(dir_ / "mine" / "photo.bin") << "precious";
  scenario();
  Ran r = tmakit("run s.json -o mine");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[cli.output-exists]"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir_ / "mine" / "photo.bin"), "precious");
  // `-o .`: the working folder is never emptied.
  r = tmakit("run s.json -o .");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "s.json"));
  // A folder tmakit made is replaced, but not once something else was put in it.
  ASSERT_EQ(tmakit("run s.json -o out").status, 0);
  EXPECT_EQ(read_file(dir_ / "out" / "a.bin"), std::string(64, '\x07'));
  ASSERT_EQ(tmakit("run s.json -o out").status, 0);
  std::ofstream(dir_ / "out" / "notes.bin") << "mine";
  EXPECT_EQ(tmakit("run s.json -o out").status, 2);
  EXPECT_EQ(read_file(dir_ / "out" / "notes.bin"), "mine");
}

TEST_F(Hardening, SingleFileOutputsNeverReplaceALinkOrADevice) {
  write("victim", "precious");
  fs::create_symlink(dir_ / "victim", dir_ / "link.svg");
  ASSERT_EQ(::mkfifo((dir_ / "pipe.svg").c_str(), 0600), 0);
  for (const char* target : {"link.svg", "pipe.svg"}) {
    Ran r = tmakit("layout " + kMap + " -o " + target);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("[cli.output-exists]"), std::string::npos) << r.out;
  }
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.svg"));
  EXPECT_TRUE(fs::is_fifo(dir_ / "pipe.svg"));
  EXPECT_EQ(read_file(dir_ / "victim"), "precious");
  // instrument: the module and its site table, both judged before anything is written.
  fs::copy_file(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/nvcc/copy.sm_90a.ptx", dir_ / "k.ptx");
  fs::create_symlink(dir_ / "victim", dir_ / "out.ptx.sites.json");
  Ran r = tmakit("instrument k.ptx -o out.ptx");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out.ptx"));
  EXPECT_EQ(read_file(dir_ / "victim"), "precious");
  r = tmakit("instrument k.ptx -o ''");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[cli.output]"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / ".sites.json"));
  ASSERT_EQ(tmakit("instrument k.ptx -o good.ptx").status, 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "good.ptx.sites.json"));
}

TEST_F(Hardening, LogsAreNeverFollowedIntoATruncation) {
  write("victim", "precious");
  fs::create_symlink(dir_ / "victim", dir_ / "log.jsonl");
  for (const char* command : {"watch", "check"}) {
    Ran r = tmakit(std::string(command) + " --log log.jsonl -- touch ran");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("symbolic link"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[cli.output]"), std::string::npos) << r.out;
  }
  EXPECT_EQ(read_file(dir_ / "victim"), "precious");
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(Hardening, AWatchThatCannotWatchRunsNothing) {
  write("not-a-library.so", std::string(100, 'x'));
  for (const std::string& lib : std::vector<std::string>{"/nonexistent/libtmakit_watch.so",
                                                        (dir_ / "not-a-library.so").string(), "/bin/sh"}) {
    for (const char* command : {"watch", "check"}) {
      SCOPED_TRACE(lib + " " + command);
      Ran r = tmakit(std::string(command) + " -- touch ran", "TMAKIT_WATCH_LIBRARY=" + quote(lib));
      EXPECT_EQ(r.status, 2) << r.out;
      EXPECT_NE(r.out.find("[watch.library]"), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(dir_ / "ran"));
    }
  }
}

TEST_F(Hardening, OutputsCountTowardTheMemoryBudget) {
  // 10 outputs of a 512 MiB allocation would hold 5.5 GiB: refused before anything is allocated.
  json outputs = json::array();
  for (int i = 0; i < 10; ++i) outputs.push_back({{"name", "o" + std::to_string(i)}, {"global", "A"}});
  scenario({{"global", {{"A", {{"bytes", 512 << 20}}}}}, {"outputs", outputs}});
  Ran r = tmakit("run s.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[scenario.memory]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scenario.outputs[7]"), std::string::npos) << r.out;  // 512 MiB × (1 + 8) > 4 GiB
}

TEST_F(Hardening, AProgramsLengthIsBounded) {
  // Each step's work is bounded by its operands; the number of steps bounds the run.
  json program = json::array();
  for (int i = 0; i < 65537; ++i) program.push_back("fence.proxy.async.shared::cta;");
  scenario({{"program", program}});
  Ran r = tmakit("run s.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("65537 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[scenario.steps]"), std::string::npos) << r.out;
  program.erase(program.begin());
  scenario({{"program", program}});
  EXPECT_EQ(tmakit("run s.json").status, 0);
}

TEST_F(Hardening, JsonIsReadExactlyAndItsNestingIsBounded) {
  // A key twice: an error, not the last value silently.
  write("s.json", R"({"format": "tmakit-scenario/1", "program": [], "program": []})");
  Ran r = tmakit("run s.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("\"program\" appears twice"), std::string::npos) << r.out;
  write("m.json", R"({"data_type": "float32", "data_type": "uint8", "dims": [64], "box": [32]})");
  r = tmakit("map m.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("appears twice"), std::string::npos) << r.out;
  // 4 million nested brackets (8 MB): refused at the 65th level, before the value is built.
  write("s.json", std::string(4'000'000, '[') + std::string(4'000'000, ']'));
  // AddressSanitizer reserves terabytes of address space: no ulimit -v under it (g++ says so with
  // __SANITIZE_ADDRESS__, clang with __has_feature).
  const char* limit = "ulimit -v 1000000;";  // 1 GB of address space is plenty for a refusal
#if defined(__SANITIZE_ADDRESS__)
  limit = "";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  limit = "";
#endif
#endif
  r = tmakit("run s.json", limit);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("deeper than 64 levels"), std::string::npos) << r.out;
  EXPECT_LT(r.out.size(), 1000u) << r.out;
}

TEST_F(Hardening, NumbersAreReadExactly) {
  scenario();
  for (const std::string args : {"run s.json --seed -1", "run s.json --seed 18446744073709551616",
                                 "check --launches -1 -- true", "check --capacity 12 -- true",
                                 "map --type float32 --dims ,64 --strides 256 --box 32,4",
                                 "map --type float32 --dims 64,,64 --strides 256,256 --box 32,4,1",
                                 "map --type float32 --dims 64,64, --strides 256 --box 32,4"}) {
    SCOPED_TRACE(args);
    Ran r = tmakit(args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("[cli.number]"), std::string::npos) << r.out;
  }
  EXPECT_EQ(tmakit("run s.json --seed 18446744073709551615").status, 0);
  // A long token is quoted in part, never echoed whole (an argument holds at most 128 KiB).
  Ran r = tmakit("map --type float32 --dims " + std::string(100'000, '9') + ",64 --strides 256 --box 32,4");
  EXPECT_EQ(r.status, 2);
  EXPECT_LT(r.out.size(), 400u);
  EXPECT_NE(r.out.find("(100000 bytes)"), std::string::npos) << r.out;
}

TEST_F(Hardening, LongTokensAreQuotedInPart) {
  const std::string token(10'000'000, 'x');
  write("k.ptx", ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [a], [b" + token +
                     "], 16, [c];\nret;\n}\n");
  write("s.json", json{{"format", "tmakit-scenario/1"}, {"program", {"cp.async.bulk" + token}}}.dump());
  for (const char* args : {"lint k.ptx", "run s.json"}) {
    SCOPED_TRACE(args);
    Ran r = tmakit(args);
    EXPECT_NE(r.status, 0);
    EXPECT_LT(r.out.size(), 2000u) << r.out.substr(0, 2000);
    EXPECT_NE(r.out.find("(10000"), std::string::npos) << r.out.substr(0, 2000);  // the length is said
  }
}

TEST_F(Hardening, WhatReachesTheTerminalIsEscaped) {
  // A global's name with a newline, an escape sequence and a byte that is not UTF-8 (the JSON
  // carries them as \u escapes): one line of error, no raw control byte.
  write("s.json", R"({"format": "tmakit-scenario/1", "global": {"A\n/etc/passwd:1: error: forged\u001b[2J": )"
                  R"({"bytes": 64, "alien": 1}}, "program": []})");
  Ran r = tmakit("run s.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A\\x0a/etc/passwd:1: error: forged\\x1b[2J: error: "), std::string::npos) << r.out;
  // An unknown data type named by the user.
  r = tmakit("map --type 'f\x1b[31m' --dims 64 --box 32");
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  // JSON output with a path that is not UTF-8: still JSON.
  fs::copy_file(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/nvcc/copy.sm_90a.ptx", dir_ / "name\xff.ptx");
  r = layout::test::run("cd " + quote(dir_.string()) + " && " + quote(kTmakit) +
                        " lint --format json 'name\xff.ptx' 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(json::parse(r.out, nullptr, false).is_discarded()) << r.out;
}

TEST_F(Hardening, EveryErrorNamesItsRule) {
  fs::create_directories(dir_ / "folder");
  write("plain", "x");
  const std::pair<std::string, std::string> cases[] = {
      {"map " + kMap + " --base 100", "[cli.base]"},
      {"map " + kMap + " --target sm_12", "[cli.target]"},
      {"lint --arch sm_12 folder", "[cli.target]"},
      {"lint folder", "[cli.file-not-regular]"},
      {"watch --target sm_12 -- true", "[cli.target]"},
      {"check --save-trace plain/traces -- touch ran", "[cli.output]"},
      {"check --no-replay -- touch ran", "[cli.options]"},  // its traces would be deleted at the end
      {"lint missing.ptx", "[cli.file]"},
  };
  for (const auto& [args, rule] : cases) {
    SCOPED_TRACE(args);
    Ran r = tmakit(args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find(rule), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(Hardening, LayoutSuggestsOnlyFlagsItHas) {
  write("outside.bin", std::string(64, 'o'));
  fs::create_directories(dir_ / "scen");
  json j = {{"format", "tmakit-scenario/1"},
            {"global", {{"A", {{"bytes", 64}, {"init", {{"file", "../outside.bin"}}}}}}},
            {"program", {"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [shared:0], [m, {0, 0}], [shared:1024];"}}};
  std::ofstream(dir_ / "scen" / "s.json") << j.dump();
  Ran r = tmakit("layout --scenario scen/s.json --step 0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[scenario.file-outside]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--allow-files-anywhere"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tmakit::cli::test
