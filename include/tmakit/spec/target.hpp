// Targets (sm_90, sm_90a, sm_100f, ...) and PTX ISA versions, and the
// requirement expressions the table of forms uses ("sm_90 or higher",
// "sm_100a", "sm_100f or higher in the same family from PTX 8.8").
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::spec {

struct PtxVersion {
  int major = 0, minor = 0;
  friend constexpr auto operator<=>(const PtxVersion&, const PtxVersion&) = default;
  std::string str() const;
};
std::optional<PtxVersion> parse_ptx_version(std::string_view text);
inline constexpr PtxVersion kNewestPtx{9, 0};

enum class Suffix { none, a, f };

struct Target {
  int arch = 90;  // 90, 100, 101, 103, 110, 120, 121
  Suffix suffix = Suffix::a;
  friend constexpr bool operator==(const Target&, const Target&) = default;
  std::string str() const;                // "sm_90a"
  int family() const;                     // 9, 10, 11, 12 (sm_101 belongs to family 11: renamed sm_110)
  PtxVersion min_ptx() const;             // the first PTX ISA version that knows this target
};
std::optional<Target> parse_target(std::string_view text);
// Every target the table is checked against (docs, tests).
const std::vector<Target>& known_targets();

// One way to satisfy a requirement.
struct TargetAlt {
  enum Kind { at_least, arch_specific, family } kind = at_least;
  int arch = 90;
  PtxVersion from{};  // this alternative only counts from this PTX version on
  bool holds(const Target& t, PtxVersion v) const;
  std::string str() const;  // "sm_90 or higher", "sm_100a", "sm_100f or higher in the same family (PTX 8.8+)"
};

// Satisfied when any alternative holds; empty = no requirement.
struct TargetReq {
  std::vector<TargetAlt> any;
  bool empty() const { return any.empty(); }
  bool holds(const Target& t, PtxVersion v) const;
  std::string str() const;  // alternatives joined with " or "
};

TargetReq at_least(int arch);
TargetReq arch_specific(std::initializer_list<int> archs);
// The seeds' usual list for sm_100-only qualifiers: sm_100a, sm_101a (sm_110a), and the
// sm_100f / sm_110f families from PTX 8.8.
TargetReq sm100a_family_rule();

}  // namespace tmakit::spec
