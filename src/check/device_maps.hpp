// Internal to the check layer: tensor maps a kernel builds or edits itself with
// `tensormap.replace` (Triton's `tl.make_tensor_descriptor`, CUTLASS's device-side
// descriptor updates), field by field as the PTX ISA numbers them (docs/check-replay.md,
// "Maps built on the device").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::check::detail {

// The field a `tensormap.replace` instruction writes (".box_dim", ...), from its text; empty
// when the text names none.
std::string_view replaced_field(std::string_view instruction_text);

// A map all of whose 128 bytes are zero (Triton zero-fills its shared copy before the
// replaces): the fields no replace sets keep TensorMap's defaults (element strides 1,
// no interleave, no swizzle, zero fill). The hardware's meaning of a zero field is not
// documented; a kernel that relies on one is replayed with these defaults.
tensor_map::TensorMap blank_device_map();

// Applies one replace to `m`: `ord` for the per-dimension fields, `value` the new value as
// the PTX ISA encodes it (rank − 1; extents, box sizes and element strides as they are;
// strides in bytes; PTX's own numbering for .elemtype, .interleave_layout, .swizzle_mode,
// .swizzle_atomicity, .fill_mode). Returns a message when the value cannot be a field of a
// map the model knows (an enumeration past its table, an ordinal past the rank), else nullopt.
std::optional<std::string> apply_replace(tensor_map::TensorMap& m, std::string_view field, uint64_t ord, uint64_t value);

}  // namespace tmakit::check::detail
