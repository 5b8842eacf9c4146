// The folder rule of `init: {"file": F}` (docs/security.md) under a racer: another thread
// swaps a path component between a real folder and a symlink out of the scenario's folder
// as fast as it can, while the scenario is loaded again and again. A check followed by an
// open by name lets the outside file through; an open beneath the folder's descriptor never
// does. The component walk (the fallback without openat2) is checked on its own as well.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../../src/scenario/open_beneath.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ScenarioFileRace : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tmakit_scen_race_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "scen" / "sub");
    fs::create_directories(root_ / "secret");
    std::ofstream(root_ / "scen" / "sub" / "a.bin", std::ios::binary) << std::string(64, 'A');
    std::ofstream(root_ / "secret" / "a.bin", std::ios::binary) << std::string(64, 'S');
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ScenarioFileRace, ASwappedComponentNeverLeadsOut) {
  // scen/sub (a real folder) and scen/swap (a symlink to ../secret) trade places in one
  // atomic exchange, over and over.
  fs::create_directory_symlink("../secret", root_ / "scen" / "swap");
  const json j = {{"format", "tmakit-scenario/1"},
                  {"global", {{"A", {{"bytes", 64}, {"init", {{"file", "sub/a.bin"}}}}}}},
                  {"program", json::array()}};
  std::atomic<bool> stop = false;
  const std::string sub = (root_ / "scen" / "sub").string(), swap = (root_ / "scen" / "swap").string();
  std::thread racer([&] {
    while (!stop)
      if (::renameat2(AT_FDCWD, sub.c_str(), AT_FDCWD, swap.c_str(), RENAME_EXCHANGE) != 0) break;
  });
  int read = 0, refused = 0, leaked = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < until && leaked == 0) {
    try {
      const Scenario s = from_json(j, root_ / "scen");
      if (s.globals.at(0).init.bytes == std::vector<uint8_t>(64, 'S')) ++leaked;
      else ++read;
    } catch (const InputError&) {
      ++refused;  // the symlink's turn: refused, as it should be
    }
  }
  stop = true;
  racer.join();
  EXPECT_EQ(leaked, 0) << "the file outside the scenario's folder was read (" << read << " read, " << refused
                       << " refused before)";
  EXPECT_GT(read + refused, 100);
}

// The walk used where openat2 is missing: no symlink at all, `..` only back to where it came from.
TEST_F(ScenarioFileRace, TheComponentWalkFollowsNoSymlink) {
  fs::create_directory_symlink("sub", root_ / "scen" / "inner");
  fs::create_directory_symlink("../secret", root_ / "scen" / "out");
  const int dir = ::open((root_ / "scen").c_str(), O_PATH | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  for (const char* name : {"sub/a.bin", "./sub//a.bin", "sub/../sub/a.bin"}) {
    const int fd = open_beneath(dir, name, O_RDONLY, Walk::components);
    EXPECT_GE(fd, 0) << name;
    char c = 0;
    EXPECT_EQ(::read(fd, &c, 1), 1);
    EXPECT_EQ(c, 'A');
    ::close(fd);
  }
  EXPECT_EQ(open_beneath(dir, "../secret/a.bin", O_RDONLY, Walk::components), -EXDEV);
  EXPECT_EQ(open_beneath(dir, "sub/../../secret/a.bin", O_RDONLY, Walk::components), -EXDEV);
  EXPECT_EQ(open_beneath(dir, (root_ / "secret" / "a.bin").string(), O_RDONLY, Walk::components), -EXDEV);
  EXPECT_EQ(open_beneath(dir, "out/a.bin", O_RDONLY, Walk::components), -ELOOP);
  EXPECT_EQ(open_beneath(dir, "inner/a.bin", O_RDONLY, Walk::components), -ELOOP);
  EXPECT_EQ(open_beneath(dir, "missing", O_RDONLY, Walk::components), -ENOENT);
  // The kernel's walk follows the symlink that stays inside and refuses the one that leaves.
  const int fd = open_beneath(dir, "inner/a.bin", O_RDONLY);
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  EXPECT_EQ(open_beneath(dir, "out/a.bin", O_RDONLY), -EXDEV);
  ::close(dir);
}

}  // namespace
}  // namespace tmakit::scenario
