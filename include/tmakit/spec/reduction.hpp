// Reduction operations and the element types they name (§6). The table of
// which op goes with which type lives in the table of forms (forms.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tmakit::spec {

enum class RedOp : uint8_t { add, min, max, inc, dec, and_, or_, xor_ };
// Element types of reductions. For the tensor form the type comes from the map;
// f32_ftz is an f32 add on a FLOAT32_FTZ / TFLOAT32_FTZ map (H13).
enum class RedType : uint8_t { u32, s32, u64, s64, b32, b64, f16, bf16, f32, f32_ftz, f64 };

std::string_view name(RedOp);    // "add", "and", ...
std::string_view name(RedType);  // "u32", "f32", ... (f32_ftz prints "f32.ftz")
std::optional<RedOp> parse_red_op(std::string_view);      // without the dot
std::optional<RedType> parse_red_type(std::string_view);  // without the dot
int red_type_bytes(RedType);

}  // namespace tmakit::spec
