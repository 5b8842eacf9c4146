// check_seeded CASE [--clean] [--self-capture DIR [--capacity N]] [--timeout S] [--ptx FILE]
// check_seeded list | overhead [--ops SET] [--ptx FILE] | instrument-only DIR [--ptx FILE]
//
// Runs one seeded-bug kernel of seeded_kernels.cu (docs/check-seeded.md) the way a user's
// program would: the PTX goes to the driver with cuModuleLoadData (so `tmakit check` sees it),
// maps come from cuTensorMapEncodeTiled, launches from cuLaunchKernelEx. It prints what the GPU
// did ("observed: ..."). With --self-capture DIR it instruments the PTX itself (the instrument
// API), attaches a trace buffer (tmakit::check capture API) and writes the trace directory, with
// its own bounded wait, so recordings need no preload library.
// Exit: 0 the kernel completed, 3 it was still running after --timeout, 4 it faulted,
// 5 the launch was refused, 2 bad arguments or no usable GPU.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "run.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace check_seeded;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Usage("cannot read the PTX module " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// seeded_kernels.ptx beside this executable, unless --ptx says otherwise.
std::string default_ptx() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, n) : std::string("./check_seeded");
  return dir.substr(0, dir.rfind('/') + 1) + "seeded_kernels.ptx";
}

const Case* find_case(const std::string& name) {
  for (const Case& c : cases())
    if (c.name == name) return &c;
  return nullptr;
}

// Instruments the module as `tmakit check` would; exits 2 with lint's messages if it cannot.
tmakit::instrument::Result instrumented(const std::string& ptx, const std::string& file,
                                        tmakit::instrument::OpSet ops = tmakit::instrument::OpSet::all) {
  auto r = tmakit::instrument::instrument_module(ptx, file, ops);
  if (r.status != 0) {
    std::string why;
    for (const auto& d : r.diags) why += "\n  " + tmakit::format(d);
    throw Usage("the module " + file + " cannot be instrumented:" + why);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"check_seeded: the seeded-bug kernels of tmakit check (docs/check-seeded.md)"};
  std::string what, ptx_path = default_ptx(), capture_dir, out_dir;
  bool clean = false;
  double timeout = 10;
  int iterations = 20;
  size_t capacity = 8192;
  std::string ops = "all";
  app.add_option("case", what, "a case (`list` names them), `overhead`, or `instrument-only`")->required();
  app.add_option("dir", out_dir, "instrument-only: where the instrumented module and its sites go");
  app.add_flag("--clean", clean, "run the clean twin (the same kernel without the bug)");
  app.add_option("--self-capture", capture_dir, "instrument the PTX here and write the trace directory DIR");
  app.add_option("--timeout", timeout, "seconds to wait for the kernel (0: forever)")->check(CLI::NonNegativeNumber);
  app.add_option("--ptx", ptx_path, "the seeded kernels' PTX (default: beside this program)");
  app.add_option("--capacity", capacity, "--self-capture: trace records (default 8192)")->check(CLI::Range(16, 1 << 22));
  app.add_option("--ops", ops, "overhead: what the instrumented module records (all, copies, barriers)")
      ->check(CLI::IsMember({"all", "copies", "barriers"}));
  app.add_option("--iterations", iterations, "overhead: timed launches of each module")->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (what == "list") {
      for (const Case& c : cases()) std::printf("%-24s %s\n", c.name.c_str(), c.what);
      return 0;
    }
    const std::string ptx = read_text(ptx_path);
    const std::string file = ptx_path.substr(ptx_path.rfind('/') + 1);
    if (what == "instrument-only") {
      if (out_dir.empty()) throw Usage("instrument-only needs a folder: check_seeded instrument-only DIR");
      auto r = instrumented(ptx, file);
      write_file(out_dir + "/module.ptx", r.text);
      write_file(out_dir + "/sites.json", tmakit::instrument::sites_json(r.sites));
      std::printf("instrumented %s: %zu sites\n", file.c_str(), r.sites.size());
      return 0;
    }
    if (what == "overhead") {
      using tmakit::instrument::OpSet;
      auto r = instrumented(ptx, file, ops == "copies" ? OpSet::copies : ops == "barriers" ? OpSet::barriers : OpSet::all);
      return run_overhead(ptx, r.text, "--ops " + ops, iterations);
    }
    const Case* c = find_case(what);
    if (!c) throw Usage("no case `" + what + "` (check_seeded list names them)");
    if (capture_dir.empty()) return run_case(*c, clean, timeout, ptx, nullptr);
    auto r = instrumented(ptx, file);
    Capture cap{capture_dir, r.text, tmakit::instrument::sites_json(r.sites), capacity};
    return run_case(*c, clean, timeout, r.text, &cap);
  } catch (const Usage& e) {
    std::fprintf(stderr, "check_seeded: %s\n", e.what());
    return 2;
  }
}
