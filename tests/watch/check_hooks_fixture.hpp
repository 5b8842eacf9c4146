// The fixture of the `tmakit check` hook tests (test_check_hooks.cpp, test_check_ptx_filter.cpp):
// check_probe run under a prefix ("tmakit check ... --") against the stand-in libcuda, whose
// "launch" writes a recorded trace (one record per site of kModule) into the attached buffer.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check_test_files.hpp"
#include "tmakit/instrument/instrument.hpp"

namespace check_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Outcome {
  int status = -1;
  std::string out, err;
  double seconds = 0;
};

class CheckHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tmakit-check-hooks-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    inst_ = tmakit::instrument::instrument_module(read_file(kModule), kModule);
    ASSERT_EQ(inst_.status, 0);
    recorded_ = record(inst_);
  }
  // The trace the stand-in's launch writes: one record per site of `module`, in site order, CTA 0
  // thread 0 (recorded.bin); its bytes.
  std::string record(const tmakit::instrument::Result& module) {
    std::string bin;
    for (const auto& s : module.sites) {
      tmakit::instrument::Record r{};
      r.site = s.id;
      r.op = static_cast<uint16_t>(s.op);
      bin.append(reinterpret_cast<const char*>(&r), sizeof r);
    }
    std::ofstream(dir_ / "recorded.bin", std::ios::binary) << bin;
    return bin;
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // `prefix` (e.g. "tmakit check --save-trace S --") then the probe, with the stand-in driver.
  Outcome run(const std::string& prefix, const std::string& probe_args, const std::string& outcome = "complete") {
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
    std::string cmd = "env LD_LIBRARY_PATH=" STAND_IN_DIR " TMAKIT_WATCH_LIBRARY=" WATCH_LIBRARY
                      " TMAKIT_STAND_IN_TRACE=" + (dir_ / "recorded.bin").string() +
                      " TMAKIT_STAND_IN_LOADED=" + (dir_ / "loaded.txt").string() +
                      " TMAKIT_STAND_IN_LAUNCHED=" + (dir_ / "launched.txt").string() +
                      " TMAKIT_STAND_IN_OUTCOME=" + outcome + " " + prefix + " " CHECK_PROBE " " + probe_args +
                      " >" + out.string() + " 2>" + err.string();
    fs::remove(dir_ / "loaded.txt");
    const auto start = std::chrono::steady_clock::now();
    const int s = std::system(cmd.c_str());
    Outcome r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
  std::string checked(const std::string& options = "") {
    return std::string(TMAKIT_CLI) + " check --save-trace " + (dir_ / "saved").string() + " " + options + " --";
  }
  // The images the stand-in was handed, in order.
  std::vector<std::string> loaded() {
    std::vector<std::string> images;
    std::string all = read_file(dir_ / "loaded.txt");
    for (size_t start = 0, end; (end = all.find('\0', start)) != std::string::npos; start = end + 1)
      images.push_back(all.substr(start, end - start));
    return images;
  }
  json meta(int n = 0) { return json::parse(read_file(dir_ / "saved" / ("launch-" + std::to_string(n)) / "meta.json")); }

  fs::path dir_;
  tmakit::instrument::Result inst_;
  std::string recorded_;
};

}  // namespace check_test
