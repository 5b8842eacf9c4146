// Integers typed on the command line, read exactly. CLI11 converts "-3" and
// "18446744073709551616" for an unsigned 64-bit option to 2^64 − 3 and 2^64 − 1
// without a word, so numeric flags are taken as text and converted here: a value
// outside the flag's range is an error naming the flag, the text and the range.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"

namespace tmakit::cli {

// An integer range, inclusive; the default is the whole of T.
struct Range {
  int64_t lo;
  uint64_t hi;
  template <class T>
  static constexpr Range of() {
    return {static_cast<int64_t>(std::numeric_limits<T>::min()), static_cast<uint64_t>(std::numeric_limits<T>::max())};
  }
};

// Reads `text` (decimal, or 0x hex) as an integer in `range`. Throws DiagnosticError
// (rule cli.number, where = flag) otherwise: unusable input, exit 2.
int64_t parse_signed(const std::string& flag, const std::string& text, Range range);
uint64_t parse_unsigned(const std::string& flag, const std::string& text, Range range);

template <class T>
T parse_integer(const std::string& flag, const std::string& text, Range range = Range::of<T>()) {
  if constexpr (std::is_signed_v<T>) return static_cast<T>(parse_signed(flag, text, range));
  else return static_cast<T>(parse_unsigned(flag, text, range));
}

template <class T>
std::optional<T> parse_integer(const std::string& flag, const std::optional<std::string>& text,
                               Range range = Range::of<T>()) {
  if (!text) return std::nullopt;
  return parse_integer<T>(flag, *text, range);
}

// The entries of comma-separated lists ("512,512"; a flag given twice adds its entries):
// an empty entry (",64", "1,,2", "4,") is an error, not skipped.
std::vector<std::string> split_list(const std::string& flag, const std::vector<std::string>& texts, Range range);

// A comma-separated list (split_list): every entry in `range`.
template <class T>
std::vector<T> parse_integers(const std::string& flag, const std::vector<std::string>& texts,
                              Range range = Range::of<T>()) {
  std::vector<T> out;
  for (const std::string& t : split_list(flag, texts, range)) out.push_back(parse_integer<T>(flag, t, range));
  return out;
}

}  // namespace tmakit::cli
