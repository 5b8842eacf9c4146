// libFuzzer target: the command-line front ends of `tmakit map` and `tmakit layout`
// (flags, numbers, map files, --from-log), run in-process through the same
// registrations as the tmakit binary (tools/tmakit/commands.hpp). Input: one
// argument a line, the first "map" or "layout". Any arguments end in an exit
// status with a message; never a crash, a hang or an unbounded allocation.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "../../tools/tmakit/commands.hpp"

namespace {

// -o/--output would write files wherever the input says: such inputs are skipped.
bool writes_files(const std::string& arg) {
  if (arg.rfind("--o", 0) == 0) return true;
  return arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && arg.find('o') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Every input prints a report or a message: send them to /dev/null. Sanitizer
  // reports are written to file descriptor 2 directly, so crashes are still seen.
  stdout = std::fopen("/dev/null", "w");
  stderr = std::fopen("/dev/null", "w");
  std::cout.rdbuf(nullptr);
  std::cerr.rdbuf(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') args.emplace_back();
    else args.back().push_back(static_cast<char>(data[i]));
  }
  if (args[0] != "map" && args[0] != "layout") return 0;
  for (const std::string& a : args)
    if (writes_files(a)) return 0;
  CLI::App app{"tmakit"};
  app.require_subcommand(1);
  int status = 0;
  tmakit::cli::add_map_command(app, status);
  tmakit::cli::add_layout_command(app, status);
  std::vector<const char*> argv{"tmakit"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {  // a usage error: exit 2 in the binary
  }
  return 0;
}
