// The tensor map as a value: exactly the arguments of the driver's encode
// calls (cuTensorMapEncodeTiled / Im2col / Im2colWide), the enums with the
// driver's numbering, and the facts every other layer derives from a map.
// Spec: tma-semantics.md §1.2-§1.5, §2.1, §3.2, §3.3.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tmakit/diag.hpp"
#include "tmakit/spec/target.hpp"

namespace tmakit::tensor_map {

// Values are the driver's CUtensorMapDataType numbering (§1.2).
enum class DataType : uint8_t {
  uint8 = 0, uint16, uint32, int32, uint64, int64, float16, float32, float64, bfloat16,
  float32_ftz, tfloat32, tfloat32_ftz, u4_align8b /*16U4_ALIGN8B*/, u4_align16b /*16U4_ALIGN16B*/,
  u6_align16b /*16U6_ALIGN16B*/
};
enum class Interleave : uint8_t { none = 0, b16, b32 };
enum class Swizzle : uint8_t { none = 0, b32, b64, b128, b128_atom_32b, b128_atom_32b_flip_8b, b128_atom_64b };
enum class L2Promotion : uint8_t { none = 0, b64, b128, b256 };
enum class OobFill : uint8_t { zero = 0 /*NONE*/, nan_request_zero_fma };
enum class Encode : uint8_t { tiled, im2col, im2col_wide };
enum class WideMode : uint8_t { w = 0, w128 };

// Scenario-format spellings ("float16", "128b", "nan_request_zero_fma", ...).
std::string_view name(DataType);
std::string_view name(Interleave);
std::string_view name(Swizzle);
std::string_view name(L2Promotion);
std::string_view name(OobFill);
std::string_view name(Encode);
std::string_view name(WideMode);
std::optional<DataType> parse_data_type(std::string_view);
std::optional<Interleave> parse_interleave(std::string_view);
std::optional<Swizzle> parse_swizzle(std::string_view);
std::optional<L2Promotion> parse_l2_promotion(std::string_view);
std::optional<OobFill> parse_oob_fill(std::string_view);
std::optional<Encode> parse_encode(std::string_view);
std::optional<WideMode> parse_wide_mode(std::string_view);

// Bytes per element in shared memory and in byte rules; the packed types count
// their 16-value groups: 16U4_ALIGN8B is 0 here (use bits_per_element).
int element_bytes(DataType);
int bits_per_element(DataType);
bool is_float(DataType);   // OOB-NaN allowed (§1.3 oobFill)
bool is_packed(DataType);  // 16U4_*, 16U6_* (sm_100+)
// Bits one value occupies in shared memory: 4 for 16U4_ALIGN8B, else 8 × element_bytes.
int smem_bits_per_element(DataType);
// Bytes of one swizzle span (32, 64, 128; 0 for none).
int swizzle_span(Swizzle);

inline constexpr int kMaxRank = 5;

struct TensorMap {
  Encode encode = Encode::tiled;
  DataType data_type = DataType::float32;
  int rank = 1;
  uint64_t global_address = 0;
  std::array<uint64_t, kMaxRank> dims{};          // globalDim[0..rank-1], elements
  std::array<uint64_t, kMaxRank - 1> strides{};   // globalStrides: bytes of dims 1..rank-1
  std::array<uint32_t, kMaxRank> box{};           // boxDim (tiled only)
  std::array<uint32_t, kMaxRank> element_strides{1, 1, 1, 1, 1};
  // im2col: entry i applies to tensor dimension i+1 (W, H, D) — §1.4, H11.
  std::array<int32_t, 3> pixel_box_lower{};
  std::array<int32_t, 3> pixel_box_upper{};
  // im2col_wide (§1.5)
  int32_t pixel_box_lower_w = 0, pixel_box_upper_w = 0;
  WideMode wide_mode = WideMode::w;
  uint32_t channels_per_pixel = 0, pixels_per_column = 0;  // im2col, im2col_wide
  Interleave interleave = Interleave::none;
  Swizzle swizzle = Swizzle::none;
  L2Promotion l2_promotion = L2Promotion::none;
  OobFill oob_fill = OobFill::zero;

  friend bool operator==(const TensorMap&, const TensorMap&) = default;

  // Byte stride of dimension i (stride of dimension 0 is one element).
  uint64_t stride_bytes(int i) const;
  // Elements moved per dimension: ceil(box[i] / element_strides[i]) for tiled maps (§2.1 item 1);
  // for im2col: {channels_per_pixel, pixels} as a 2-D box. Interleaved tiled maps (Q26): an
  // element of dimension 0 is a whole 16/32-byte slice, and dimension rank-2 moves 1.
  uint32_t elements(int i) const;
  // Element stride that applies to dimension i (dimension 0 is 1 unless interleaved, H16).
  uint32_t traversal_stride(int i) const;
  // Data bytes one load delivers: the mbarrier transaction count (§2.3, H17).
  uint64_t bytes_per_box() const;
  // Q26: the bytes of one step along dimension 0 of an interleaved tiled or im2col map
  // (a whole 16- or 32-byte slice, whatever the data type); 0 when not interleaved.
  uint32_t slice_bytes() const;
  // Bytes of one shared-memory row before swizzle padding (inner box × element bytes;
  // inner box × slice bytes when interleaved, rows then dense: pitch = row bytes).
  uint32_t row_bytes() const;
  // Row pitch in shared memory: max(row bytes, swizzle span) when swizzled (H2).
  uint32_t row_pitch() const;
  // Rows in shared memory (product of the outer box dims, or pixels for im2col).
  uint64_t rows() const;
  // Shared-memory bytes the box occupies: rows × pitch, to the end of its last swizzle span.
  uint64_t smem_footprint() const;
  // Minimum shared-memory alignment of the box operand (H15: 128 on sm_90), and the
  // alignment at which the swizzle pattern starts at phase 0 (256/512/1024).
  uint32_t smem_alignment() const;
  uint32_t swizzle_period() const;
};

// The validator's rules are rows: a stable id, its source, and whether
// the driver itself refuses the map (else the check is ours).
struct MapRule {
  std::string_view id;        // "map.box-dim-range"
  std::string_view section;   // its source: "cuda.h `cuTensorMapEncodeTiled`", a hardware-notes.md anchor
  bool driver_enforced;       // the encode call returns CUDA_ERROR_INVALID_VALUE
  Severity severity;          // error for driver rules and sm_90 faults; warning for advisories
  std::string_view summary;
};
std::span<const MapRule> map_rules();
const MapRule* find_map_rule(std::string_view id);

// Every violated rule, not only the first (where = the field, e.g. "box[0]").
Diagnostics validate(const TensorMap& map, const spec::Target& target);

// Instruction-time checks of a coordinate vector (§2.1 item 6, H9, H14):
// innermost coordinate × element size a multiple of 16 (tiled), packed types c[0] % 128,
// non-negative start for stores and reductions.
enum class Direction { load, store, reduce, prefetch };
Diagnostics check_coordinates(const TensorMap& map, std::span<const int32_t> coords, Direction dir,
                              const spec::Target& target);

}  // namespace tmakit::tensor_map
