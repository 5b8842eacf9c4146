// tmakit-gen-device ROOT: writes the generated device headers and the GPU engine's reduction
// lists below ROOT (the repository root to regenerate the checked-in copies; any directory to
// compare, as ctest device.generated does). Exits 1 on a table the generator cannot read.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>

#include "device_forms.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tmakit-gen-device ROOT\n");
    return 2;
  }
  try {
    for (const auto& f : tmakit::gen_device::generated_files()) {
      const std::filesystem::path p = std::filesystem::path(argv[1]) / f.path;
      std::filesystem::create_directories(p.parent_path());
      std::ofstream(p, std::ios::binary) << f.text;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tmakit-gen-device: %s\n", e.what());
    return 1;
  }
  return 0;
}
