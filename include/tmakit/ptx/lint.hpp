// `tmakit lint`: checks every instruction of the table's families in a whole PTX
// module against the table for the module's target and PTX version, and warns
// about straight-line code that assembles but is known to go wrong.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "tmakit/diag.hpp"
#include "tmakit/spec/target.hpp"

namespace tmakit::ptx {

struct LintOptions {
  std::optional<spec::Target> arch;         // replaces the module's .target
  std::optional<spec::PtxVersion> version;  // replaces the module's .version
};

struct LintResult {
  // Errors and warnings, each followed by its notes; `where` is "file:line:col".
  Diagnostics diags;
  bool unusable = false;   // no target or PTX version to check against (exit status 2)
  size_t instructions = 0; // instructions of the table's families that were checked
  size_t errors() const;
  size_t warnings() const;
};

// True for a mnemonic the linter checks: one that starts with an opcode of the table
// (ordinary `st` excepted: its rows serve the model, and lint reads stores only for hazards).
bool linted_mnemonic(std::string_view mnemonic);

LintResult lint_module(std::string_view text, const std::string& file, const LintOptions& options = {});

}  // namespace tmakit::ptx
