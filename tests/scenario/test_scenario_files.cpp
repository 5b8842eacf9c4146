// What a scenario may make tmakit read (docs/security.md): `init: {"file": F}` is
// read only inside the scenario's folder (no absolute path, no `..` out of it, no
// symlink out of it), only from a regular file whose size is checked before a byte
// is read; --allow-files-anywhere (LoadOptions::files_anywhere) lifts the folder
// rule only. Output names are portable, and the global allocations are bounded.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh folder tree: ROOT/scen (the scenario's folder) and ROOT/outside.bin beside it.
class ScenarioFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tmakit_scen_files_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "scen" / "sub");
    write(root_ / "outside.bin", std::string(64, 'X'));
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

  // A scenario whose global A (64 bytes) is initialised from `file`, written to scen/s.json.
  fs::path scenario_reading(const std::string& file, uint64_t bytes = 64) {
    json j = {{"format", "tmakit-scenario/1"},
              {"global", {{"A", {{"bytes", bytes}, {"init", {{"file", file}}}}}}},
              {"program", json::array()},
              {"outputs", {{{"name", "A"}, {"global", "A"}}}}};
    const fs::path p = root_ / "scen" / "s.json";
    write(p, j.dump());
    return p;
  }

  // The rule of the InputError loading throws, or "" when it loads.
  static std::string rule_of(const fs::path& scenario, LoadOptions o = {}) {
    try {
      load_file(scenario, o);
    } catch (const InputError& e) {
      return e.diagnostic().rule + " | " + e.diagnostic().where + " | " + e.diagnostic().message;
    }
    return "";
  }

  fs::path root_;
};

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

TEST_F(ScenarioFiles, RelativeFilesInsideTheFolderAreRead) {
  std::string data;
  for (int i = 0; i < 64; ++i) data.push_back(char(i * 3));
  write(root_ / "scen" / "sub" / "a.bin", data);
  for (const std::string name : {"sub/a.bin", "sub/../sub/a.bin", "./sub/a.bin"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_file(scenario_reading(name));
    ASSERT_EQ(s.globals.size(), 1u);
    EXPECT_EQ(s.globals[0].init.bytes, bytes_of(data));
    // A scenario from memory reads beside the folder it is given.
    json j = json::parse(std::ifstream(root_ / "scen" / "s.json"));
    EXPECT_EQ(from_json(j, root_ / "scen").globals[0].init.bytes, bytes_of(data));
  }
}

TEST_F(ScenarioFiles, PathsOutOfTheFolderAreRefusedByName) {
  fs::create_symlink(root_ / "outside.bin", root_ / "scen" / "link.bin");
  fs::create_symlink(root_, root_ / "scen" / "up");
  for (const std::string& name : {(root_ / "outside.bin").string(), std::string("../outside.bin"),
                                  std::string("sub/../../outside.bin"), std::string("link.bin"),
                                  std::string("up/outside.bin")}) {
    SCOPED_TRACE(name);
    const std::string r = rule_of(scenario_reading(name));
    EXPECT_EQ(r.rfind("scenario.file-outside | scenario.global.A.init.file | ", 0), 0u) << r;
    EXPECT_NE(r.find("--allow-files-anywhere"), std::string::npos) << r;
    // The flag restores the old reach: the same file is read.
    const Scenario s = load_file(root_ / "scen" / "s.json", {.files_anywhere = true});
    EXPECT_EQ(s.globals[0].init.bytes, bytes_of(std::string(64, 'X')));
  }
}

TEST_F(ScenarioFiles, OnlyRegularFilesAreRead) {
  // /dev/zero would be read forever: it is refused before a byte is read, even anywhere.
  EXPECT_EQ(rule_of(scenario_reading("/dev/zero"), {.files_anywhere = true}).rfind("scenario.file-not-regular", 0), 0u);
  EXPECT_EQ(rule_of(scenario_reading("sub"), {}).rfind("scenario.file-not-regular", 0), 0u);  // a folder
  ASSERT_EQ(::mkfifo((root_ / "scen" / "pipe").c_str(), 0600), 0);  // a pipe would block the read
  EXPECT_EQ(rule_of(scenario_reading("pipe")).rfind("scenario.file-not-regular", 0), 0u);
  EXPECT_EQ(rule_of(scenario_reading("missing.bin")).rfind("scenario.file |", 0), 0u);
  // The scenario file itself, too.
  EXPECT_EQ(rule_of("/dev/zero").rfind("scenario.file-not-regular", 0), 0u);
}

TEST_F(ScenarioFiles, SizeIsCheckedBeforeReading) {
  write(root_ / "scen" / "big.bin", std::string(65, 'b'));
  const std::string r = rule_of(scenario_reading("big.bin"));
  EXPECT_EQ(r.rfind("scenario.file-size | scenario.global.A.init.file | ", 0), 0u) << r;
  EXPECT_NE(r.find("holds 65 bytes, the region 64"), std::string::npos) << r;
  // shared_init without "bytes": at most what shared memory holds from the offset.
  json j = {{"format", "tmakit-scenario/1"},
            {"shared_bytes", 64},
            {"shared_init", {{{"offset", 16}, {"init", {{"file", "big.bin"}}}}}},
            {"program", json::array()}};
  try {
    from_json(j, root_ / "scen");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostic().rule, "scenario.file-size");
    EXPECT_NE(e.diagnostic().message.find("65 bytes, more than the 48"), std::string::npos) << e.diagnostic().message;
  }
  j["shared_init"][0]["offset"] = 0;
  write(root_ / "scen" / "big.bin", std::string(40, 'b'));
  EXPECT_EQ(from_json(j, root_ / "scen").shared_init[0].bytes, 40u);
}

TEST_F(ScenarioFiles, OutputNamesArePortable) {
  auto with_output = [](const std::string& name) {
    return json{{"format", "tmakit-scenario/1"},
                {"global", {{"A", {{"bytes", 16}}}}},
                {"program", json::array()},
                {"outputs", {{{"name", name}, {"global", "A"}}}}};
  };
  for (const std::string& bad : {std::string("a\nb"), std::string("tab\there"), std::string("a b"),
                                 std::string("é"), std::string(".hidden"), std::string("a/b"), std::string("")}) {
    SCOPED_TRACE(bad);
    try {
      from_json(with_output(bad), ".");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostic().rule, "scenario.output-name");
      EXPECT_EQ(e.diagnostic().where, "scenario.outputs[0].name");
    }
  }
  EXPECT_EQ(from_json(with_output("Tile_0.v-2"), ".").outputs[0].name, "Tile_0.v-2");
}

TEST_F(ScenarioFiles, GlobalAllocationsAreBoundedInAll) {
  json j = {{"format", "tmakit-scenario/1"},
            {"global", {{"A", {{"bytes", uint64_t{3} << 30}}}, {"B", {{"bytes", uint64_t{2} << 30}}}}},
            {"program", json::array()}};
  try {
    from_json(j, ".");
    ADD_FAILURE() << "accepted 5 GiB";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostic().where, "scenario.global.B.bytes");
    EXPECT_NE(e.diagnostic().message.find("5368709120"), std::string::npos) << e.diagnostic().message;
  }
  j["global"]["B"]["bytes"] = uint64_t{1} << 30;  // 4 GiB in all: the most
  EXPECT_EQ(from_json(j, ".").globals.size(), 2u);
}

}  // namespace
}  // namespace tmakit::scenario
