// The call log of `tmakit watch` (call_log.hpp).
#include "call_log.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "tmakit/diag.hpp"
#include "tmakit/tensor_map/json_input.hpp"

namespace tmakit::cli {
namespace {

using nlohmann::json;

constexpr size_t kMaxLine = size_t{1} << 20;

[[noreturn]] void bad_line(const std::string& where, const std::string& message) {
  throw DiagnosticError({Severity::error, "log.line", message, where});
}

int64_t integer(const json& rec, const char* key, const std::string& where, bool non_negative) {
  if (!rec.contains(key)) bad_line(where, fmt::format("a call record needs \"{}\"", key));
  const json& v = rec[key];
  const bool ok = v.is_number_integer() && (!non_negative || v.is_number_unsigned() || v.get<int64_t>() >= 0) &&
                  !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
  if (!ok)
    bad_line(where, fmt::format("\"{}\" must be {}integer, got {}", key, non_negative ? "a non-negative " : "an ",
                                v.dump()));
  return v.get<int64_t>();
}

}  // namespace

void read_call_log(const std::string& file, const std::function<void(const LoggedCall&)>& each) {
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) throw DiagnosticError({Severity::error, "log.file", "cannot read the file", file});
  if (!S_ISREG(st.st_mode))  // a device or pipe could be read forever
    throw DiagnosticError({Severity::error, "log.file", "not a regular file; only regular files are read", file});
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DiagnosticError({Severity::error, "log.file", "cannot read the file", file});
  std::string line;
  for (uint64_t n = 1;; ++n) {
    line.clear();
    char c;
    while (in.get(c) && c != '\n') {
      if (line.size() == kMaxLine)
        bad_line(fmt::format("{}:{}", file, n), fmt::format("the line is longer than {} bytes", kMaxLine));
      line.push_back(c);
    }
    if (!in && line.empty()) break;
    const std::string where = fmt::format("{}:{}", file, n);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // a blank line
    json rec;
    try {
      rec = parse_json_input(line);
    } catch (const JsonInputError& e) {
      bad_line(where, std::string("not a JSON object (malformed JSON: ") + e.what() + ")");
    }
    if (!rec.is_object()) bad_line(where, fmt::format("expected a JSON object, got {}", rec.type_name()));
    if (!rec.contains("kind") || !rec["kind"].is_string()) bad_line(where, "a record needs a string \"kind\"");
    if (rec["kind"] != "call") continue;  // summaries and other kinds
    LoggedCall call;
    call.where = where;
    call.index = static_cast<uint64_t>(integer(rec, "index", where, true));
    call.pid = integer(rec, "pid", where, false);
    if (!rec.contains("map") || !(rec["map"].is_object() || rec["map"].is_null()))
      bad_line(where, "a call record needs \"map\": an object, or null with \"map_error\"");
    call.map = std::move(rec["map"]);
    if (call.map.is_null())
      call.map_error = rec.contains("map_error") && rec["map_error"].is_string()
                           ? rec["map_error"].get<std::string>()
                           : "the log gives no reason";
    each(call);
    if (!in) break;
  }
}

LoggedCall select_call(const std::string& file, uint64_t index, std::optional<int64_t> pid) {
  std::optional<LoggedCall> found;
  std::set<int64_t> pids;
  std::vector<std::string> places;
  uint64_t calls = 0;
  read_call_log(file, [&](const LoggedCall& c) {
    ++calls;
    if (c.index != index || (pid && c.pid != *pid)) return;
    pids.insert(c.pid);
    places.push_back(c.where);
    if (!found) found = c;
  });
  const std::string of_pid = pid ? fmt::format(" of pid {}", *pid) : "";
  if (!found)
    throw DiagnosticError({Severity::error, "log.select",
                           fmt::format("{} holds no call with index {}{} ({} call record{} in all)", file, index,
                                       of_pid, calls, calls == 1 ? "" : "s"),
                           "--index"});
  if (pids.size() > 1)
    throw DiagnosticError({Severity::error, "log.select",
                           fmt::format("{} holds calls with index {} from {} processes (pids {}); choose one with "
                                       "--pid",
                                       file, index, pids.size(), fmt::join(pids, ", ")),
                           "--index"});
  if (places.size() > 1)
    throw DiagnosticError({Severity::error, "log.select",
                           fmt::format("{} holds {} calls with index {}{} ({}): the log holds several runs; keep one",
                                       file, places.size(), index, of_pid, fmt::join(places, ", ")),
                           "--index"});
  return *found;
}

}  // namespace tmakit::cli
