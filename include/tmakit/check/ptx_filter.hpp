// `tmakit check --ptx-filter CMD` (docs/check.md, "Mutation testing"): every PTX module the
// preload library or tmakit-ptxas is about to instrument is first passed through CMD (the PTX
// on its standard input, the PTX to use instead on its standard output). Whatever goes wrong —
// CMD cannot be run, exits non-zero, takes longer than the timeout, writes too much or writes
// something that is not PTX — the module is used as it was: a filter never breaks the program.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::check {

// The environment `tmakit check` sets for the library and the wrapper (docs/check.md):
inline constexpr const char* kEnvPtxFilter = "TMAKIT_CHECK_PTX_FILTER";                 // CMD as typed
inline constexpr const char* kEnvPtxFilterTimeout = "TMAKIT_CHECK_PTX_FILTER_TIMEOUT";  // seconds, default 60
inline constexpr double kPtxFilterTimeoutDefault = 60;

struct PtxFilter {
  std::string command;            // as typed, for messages
  std::vector<std::string> argv;  // its words
  double timeout_s = kPtxFilterTimeoutDefault;
};

// CMD's words: split at spaces and tabs, nothing else (no quotes, no shell): a command that needs
// either goes into a script, and the script is named.
std::vector<std::string> split_filter_command(std::string_view command);

// The filter the environment names (TMAKIT_CHECK_PTX_FILTER, TMAKIT_CHECK_PTX_FILTER_TIMEOUT:
// a number of seconds in (0, 86400], else the default); nullopt when none is set.
std::optional<PtxFilter> ptx_filter_from_environment();

struct FilterOutcome {
  std::optional<std::string> ptx;  // the filter's text, when it can be used
  std::string why;                 // otherwise: what went wrong, for "... is used as it was: WHY"
};

// Runs the filter on `ptx` (a child process: child.hpp, in a process group of its own, killed
// with its group at the timeout). Its output is used when it exited 0 within the timeout and
// wrote at most `max_bytes` of text with no NUL byte that holds `.version` and `.target`; its
// standard error is kept (the first 4 KiB) and its last line quoted in `why`.
FilterOutcome run_ptx_filter(const PtxFilter& filter, std::string_view ptx, size_t max_bytes);

}  // namespace tmakit::check
