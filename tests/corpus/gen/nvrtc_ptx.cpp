// Compiles one CUDA source with NVRTC and writes its PTX: the corpus's NVRTC modules
// (scripts/corpus.sh). Usage: nvrtc_ptx SOURCE OUT.ptx ARCH [NVRTC options...]
// ARCH is e.g. sm_90a (passed as --gpu-architecture). Exit 1 with NVRTC's log on failure.
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: nvrtc_ptx SOURCE OUT.ptx ARCH [options...]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "nvrtc_ptx: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream src;
  src << in.rdbuf();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src.str().c_str(), argv[1], 0, nullptr, nullptr) != NVRTC_SUCCESS) return 1;
  std::vector<std::string> opts = {std::string("--gpu-architecture=") + argv[3], "-std=c++20"};
  for (int i = 4; i < argc; ++i) opts.emplace_back(argv[i]);
  std::vector<const char*> raw;
  for (auto& o : opts) raw.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(raw.size()), raw.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  if (r != NVRTC_SUCCESS) {
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::cerr << argv[1] << ": " << nvrtcGetErrorString(r) << "\n" << log;
    return 1;
  }
  size_t ptx_size = 0;
  nvrtcGetPTXSize(prog, &ptx_size);
  std::string ptx(ptx_size, '\0');
  nvrtcGetPTX(prog, ptx.data());
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  std::ofstream(argv[2]) << ptx;
  nvrtcDestroyProgram(&prog);
  return 0;
}
