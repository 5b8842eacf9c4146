#include "tmakit/spec/reduction.hpp"

#include <array>
#include <cstdint>

namespace tmakit::spec {
namespace {
constexpr std::array<std::string_view, 8> kOps{"add", "min", "max", "inc", "dec", "and", "or", "xor"};
constexpr std::array<std::string_view, 11> kTypes{"u32", "s32", "u64", "s64", "b32", "b64",
                                                  "f16", "bf16", "f32", "f32.ftz", "f64"};
}  // namespace

std::string_view name(RedOp op) { return kOps[static_cast<size_t>(op)]; }
std::string_view name(RedType t) { return kTypes[static_cast<size_t>(t)]; }

std::optional<RedOp> parse_red_op(std::string_view s) {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i] == s) return static_cast<RedOp>(i);
  return std::nullopt;
}

std::optional<RedType> parse_red_type(std::string_view s) {
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (kTypes[i] == s) return static_cast<RedType>(i);
  return std::nullopt;
}

int red_type_bytes(RedType t) {
  switch (t) {
    case RedType::u64: case RedType::s64: case RedType::b64: case RedType::f64: return 8;
    case RedType::f16: case RedType::bf16: return 2;
    default: return 4;
  }
}

}  // namespace tmakit::spec
