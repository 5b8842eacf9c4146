// The minimal module each fuzz line is checked in, shared by tools/lintfuzz (which
// asks ptxas) and tests/ptx/test_ptxas_sample.cpp (which replays ptxas's recorded verdicts).
#pragma once
#include <string>
#include <vector>

namespace tmakit::lintfuzz {

// Registers of every width and kind a mutated line may name; the `<8>` ranges make %r8 undeclared.
inline const char* const kRegisters =
    "  .reg .b16 %rs<8>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<8>;\n"
    "  .reg .f64 %fd<8>;\n"
    "  .reg .pred %p<8>;\n";

// The line number of the first fuzz line in wrap_module's text.
inline constexpr int kFirstLine = 13;

// One function holding `lines`, one per line, so ptxas's "line N" names the fuzz line.
inline std::string wrap_module(const std::string& version, const std::string& target,
                               const std::vector<std::string>& lines) {
  std::string m = ".version " + version + "\n.target " + target + "\n.address_size 64\n\n.visible .entry fuzz()\n{\n";
  m += kRegisters;
  for (const auto& l : lines) m += "  " + l + "\n";
  return m + "  ret;\n}\n";
}

}  // namespace tmakit::lintfuzz
