// libFuzzer target: any text given to the PTX parser is either an instruction
// that prints and re-parses to itself, or diagnostics; never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tmakit/ptx/instruction.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tmakit::Diagnostics d;
  auto inst = tmakit::ptx::parse_instruction(text, d, "fuzz");
  if (!inst) {
    if (!d.has_errors()) std::abort();
    return 0;
  }
  std::string printed = tmakit::ptx::print(*inst);
  tmakit::Diagnostics d2;
  auto again = tmakit::ptx::parse_instruction(printed, d2, "fuzz");
  if (!again || tmakit::ptx::print(*again) != printed) std::abort();
  for (const auto& t : tmakit::spec::known_targets()) (void)tmakit::ptx::check(*inst, t, {8, 6});
  return 0;
}
