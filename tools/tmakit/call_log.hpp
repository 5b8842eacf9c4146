// Reading the JSON Lines log of `tmakit watch` (docs/tensor-maps.md, "--from-log"):
// one JSON object a line; call records have "kind":"call", "index" (the call's
// number in its process), "pid", and "map" (the scenario format's tensor_maps object,
// or null with "map_error" saying why). Other keys and other kinds are ignored.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tmakit::cli {

struct LoggedCall {
  std::string where;  // "FILE:LINE"
  uint64_t index = 0;
  int64_t pid = 0;
  nlohmann::json map;     // null when the call's arguments could not be read
  std::string map_error;  // why, then
};

// Calls `each` for every call record of FILE, in order. Throws DiagnosticError
// naming FILE:LINE for a malformed line (rule log.line) or an unreadable file.
// Memory is bounded by the longest line (at most 1 MiB), not by the file.
void read_call_log(const std::string& file, const std::function<void(const LoggedCall&)>& each);

// The call record with `index` (and `pid`, when given). Throws DiagnosticError
// (rule log.select, where --index) when none or several processes match.
LoggedCall select_call(const std::string& file, uint64_t index, std::optional<int64_t> pid);

}  // namespace tmakit::cli
