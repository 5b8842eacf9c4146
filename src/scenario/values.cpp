// Values a scenario writes: init fills (splitmix64), symbols ("shared:OFF", "shared@R:OFF",
// "global:NAME+OFF" or an integer) and output names (scenario.hpp).
#include <algorithm>
#include <charconv>

#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {

using nlohmann::json;

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Init::fill(std::span<uint8_t> out) const {
  switch (kind) {
    case Kind::zero: std::fill(out.begin(), out.end(), 0); break;
    case Kind::byte: std::fill(out.begin(), out.end(), byte); break;
    case Kind::file: case Kind::hex:
      std::fill(out.begin(), out.end(), 0);
      std::copy_n(bytes.begin(), std::min(bytes.size(), out.size()), out.begin());
      break;
    case Kind::random:
      for (size_t i = 0; i < out.size(); i += 8) {
        uint64_t r = splitmix64(seed + i / 8);
        for (size_t b = 0; b < 8 && i + b < out.size(); ++b) out[i + b] = static_cast<uint8_t>(r >> (8 * b));
      }
      break;
  }
}

namespace {
std::optional<int64_t> parse_int(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}
}  // namespace

SymbolValue parse_symbol(const json& v, const std::string& where, const Scenario& s) {
  using K = SymbolValue::Kind;
  auto bad_symbol = [&](const std::string& m) -> SymbolValue {
    throw InputError({Severity::error, "scenario.symbol", m, where});
  };
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return bad_symbol("integer too large");
    return {K::integer, v.get<int64_t>()};
  }
  if (!v.is_string()) return bad_symbol("must be an integer or a string, got " + v.dump());
  const std::string str = v.get<std::string>();
  if (auto n = parse_int(str)) return {K::integer, *n};
  auto offset = [&](std::string_view t) {
    auto n = parse_int(t);
    if (!n || *n < 0) bad_symbol("bad offset \"" + std::string(t) + "\" in \"" + str + "\"");
    return *n;
  };
  if (str.rfind("shared:", 0) == 0) return {K::shared, offset(std::string_view(str).substr(7))};
  if (str.rfind("shared@", 0) == 0) {
    auto colon = str.find(':');
    if (colon == std::string::npos) return bad_symbol("expected shared@RANK:OFFSET, got \"" + str + "\"");
    int64_t rank = offset(std::string_view(str).substr(7, colon - 7));
    if (rank >= s.ctas) return bad_symbol("CTA rank " + std::to_string(rank) + " is not in a cluster of " + std::to_string(s.ctas));
    return {K::cluster, offset(std::string_view(str).substr(colon + 1)), static_cast<int>(rank)};
  }
  if (str.rfind("global:", 0) == 0) {
    std::string rest = str.substr(7);
    auto plus = rest.find('+');
    std::string name = rest.substr(0, plus);
    for (const auto& g : s.globals)
      if (g.name == name) return {K::global, plus == std::string::npos ? 0 : offset(std::string_view(rest).substr(plus + 1)), 0, name};
    return bad_symbol("no global allocation named \"" + name + "\"");
  }
  return bad_symbol("expected an integer, \"shared:OFF\", \"shared@R:OFF\" or \"global:NAME+OFF\", got \"" + str + "\"");
}

bool portable_name(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

}  // namespace tmakit::scenario
