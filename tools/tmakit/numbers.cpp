// Strict integers for command-line flags (numbers.hpp).
#include "numbers.hpp"

#include <fmt/format.h>

#include <charconv>

#include "tmakit/terminal_text.hpp"

namespace tmakit::cli {
namespace {

std::string range_text(Range r) { return fmt::format("{}..{}", r.lo, r.hi); }

[[noreturn]] void refuse(const std::string& flag, const std::string& text, Range r, const std::string& why) {
  throw DiagnosticError({Severity::error, "cli.number",
                         fmt::format("\"{}\" {}; this flag takes an integer in {}", terminal_clip(text, 40), why, range_text(r)), flag});
}

// The exact value typed: 128 bits hold every 64-bit value of either sign.
__int128 parse(const std::string& flag, const std::string& text, Range r) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) negative = s[0] == '-', s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (s.empty() || end != s.data() + s.size() || (ec != std::errc{} && ec != std::errc::result_out_of_range))
    refuse(flag, text, r, "is not an integer");
  const __int128 v = negative ? -__int128(magnitude) : __int128(magnitude);
  if (ec == std::errc::result_out_of_range || v < r.lo || v > __int128(r.hi)) refuse(flag, text, r, "is outside the range");
  return v;
}

}  // namespace

int64_t parse_signed(const std::string& flag, const std::string& text, Range r) {
  return static_cast<int64_t>(parse(flag, text, r));
}

uint64_t parse_unsigned(const std::string& flag, const std::string& text, Range r) {
  return static_cast<uint64_t>(parse(flag, text, r));
}

std::vector<std::string> split_list(const std::string& flag, const std::vector<std::string>& texts, Range r) {
  std::vector<std::string> out;
  for (const std::string& t : texts) {
    for (size_t start = 0;;) {
      const size_t comma = t.find(',', start);
      const std::string entry = t.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (entry.empty())
        refuse(flag, t, r, fmt::format("has an empty entry (number {} of the list)", out.size() + 1));
      out.push_back(entry);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace tmakit::cli
