// What the tmakit check tests share: the corpus modules they load and a file reader.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace check_test {

// An nvcc module whose kernel inits a barrier, arms it, loads a tile and waits.
inline const std::string kModule = std::string(TMAKIT_SOURCE_DIR) + "/tests/corpus/nvcc/test_debug_wait.sm_90a.ptx";
inline const std::string kKernel = "_Z10over_armedN6tmakit6device9MapHandleE";
// A module lint refuses (a tensor copy with no completion mechanism): never instrumented.
inline const std::string kRefused =
    std::string(TMAKIT_SOURCE_DIR) + "/tests/corpus/broken/triton_missing_completion.sm_90a.ptx";

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace check_test
