#include "tmakit/spec/target.hpp"

#include <charconv>

namespace tmakit::spec {

std::string PtxVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<PtxVersion> parse_ptx_version(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= text.size()) return std::nullopt;
  PtxVersion v;
  auto a = std::from_chars(text.data(), text.data() + dot, v.major);
  auto b = std::from_chars(text.data() + dot + 1, text.data() + text.size(), v.minor);
  if (a.ec != std::errc{} || a.ptr != text.data() + dot) return std::nullopt;
  if (b.ec != std::errc{} || b.ptr != text.data() + text.size()) return std::nullopt;
  if (v.major < 1 || v.major > 99 || v.minor < 0 || v.minor > 9) return std::nullopt;
  return v;
}

std::string Target::str() const {
  std::string s = "sm_" + std::to_string(arch);
  if (suffix == Suffix::a) s += "a";
  if (suffix == Suffix::f) s += "f";
  return s;
}

int Target::family() const { return arch == 101 ? 11 : arch / 10; }

PtxVersion Target::min_ptx() const {
  // The PTX ISA's target table: the version that introduced each target and suffix.
  switch (arch) {
    case 90: return suffix == Suffix::none ? PtxVersion{7, 8} : PtxVersion{8, 0};
    case 100: case 101: return suffix == Suffix::f ? PtxVersion{8, 8} : PtxVersion{8, 6};
    case 103: return {8, 8};
    case 110: return {9, 0};
    case 120: return suffix == Suffix::f ? PtxVersion{8, 8} : PtxVersion{8, 7};
    case 121: return {8, 8};
  }
  return kNewestPtx;
}

std::optional<Target> parse_target(std::string_view text) {
  if (text.substr(0, 3) != "sm_") return std::nullopt;
  text.remove_prefix(3);
  Target t;
  t.suffix = Suffix::none;
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    t.suffix = text.back() == 'a' ? Suffix::a : Suffix::f;
    text.remove_suffix(1);
  }
  auto r = std::from_chars(text.data(), text.data() + text.size(), t.arch);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size()) return std::nullopt;
  for (const auto& k : known_targets())
    if (k == t) return t;
  return std::nullopt;
}

const std::vector<Target>& known_targets() {
  static const std::vector<Target> all = [] {
    std::vector<Target> v;
    for (int arch : {90, 100, 101, 103, 110, 120, 121})
      for (Suffix s : {Suffix::none, Suffix::a, Suffix::f}) {
        if (arch == 90 && s == Suffix::f) continue;  // there is no sm_90f
        v.push_back({arch, s});
      }
    return v;
  }();
  return all;
}

bool TargetAlt::holds(const Target& t, PtxVersion v) const {
  if (v < from) return false;
  switch (kind) {
    case at_least: return t.arch >= arch;
    case arch_specific: return t.suffix == Suffix::a && t.arch == arch;
    case family: {
      Target req{arch, Suffix::f};
      return t.suffix != Suffix::none && t.family() == req.family() && t.arch >= arch;
    }
  }
  return false;
}

std::string TargetAlt::str() const {
  std::string s;
  switch (kind) {
    case at_least: s = "sm_" + std::to_string(arch) + " or higher"; break;
    case arch_specific: s = "sm_" + std::to_string(arch) + "a"; break;
    case family: s = "sm_" + std::to_string(arch) + "f or higher in the same family"; break;
  }
  if (from != PtxVersion{}) s += " (from PTX " + from.str() + ")";
  return s;
}

bool TargetReq::holds(const Target& t, PtxVersion v) const {
  if (any.empty()) return true;
  for (const auto& a : any)
    if (a.holds(t, v)) return true;
  return false;
}

std::string TargetReq::str() const {
  std::string s;
  for (size_t i = 0; i < any.size(); ++i) {
    if (i) s += i + 1 == any.size() ? " or " : ", ";
    s += any[i].str();
  }
  return s;
}

TargetReq at_least(int arch) { return {{TargetAlt{TargetAlt::at_least, arch, {}}}}; }

TargetReq arch_specific(std::initializer_list<int> archs) {
  TargetReq r;
  for (int a : archs) r.any.push_back({TargetAlt::arch_specific, a, {}});
  return r;
}

TargetReq sm100a_family_rule() {
  return {{{TargetAlt::arch_specific, 100, {}},
           {TargetAlt::arch_specific, 101, {}},
           {TargetAlt::arch_specific, 110, {}},
           {TargetAlt::family, 100, {8, 8}},
           {TargetAlt::family, 110, {8, 8}}}};
}

}  // namespace tmakit::spec
