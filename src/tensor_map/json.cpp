// The scenario format's `tensor_maps` object form (scenario-format.md) ⇄ TensorMap.
// Structural problems (types, lengths, names, keys) throw DiagnosticError with a
// "json.*" rule; value ranges are left to validate() so it can name the map rule.
#include "tmakit/tensor_map/json.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace tmakit::tensor_map {
namespace {

using nlohmann::json;

const char* type_name(const json& v) { return v.type_name(); }

class Reader {
 public:
  Reader(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  std::string at(std::string_view field) const {
    return where_.empty() ? std::string(field) : where_ + "." + std::string(field);
  }
  bool has(const char* key) const { return obj_.contains(key); }
  const json& get(const char* key) const { return obj_.at(key); }

  [[noreturn]] void bad(const std::string& rule, const std::string& field, const std::string& msg) const {
    fail(rule, msg, at(field));
  }

  // An unsigned integer in [0, max]; wrong JSON types and values past the field's storage are errors.
  uint64_t unsigned_value(const json& v, const std::string& field, uint64_t max) const {
    if (v.is_string()) {  // "0x..." hex, as the scenario's symbols allow
      const std::string& s = v.get_ref<const std::string&>();
      uint64_t x = 0;
      auto r = s.size() > 2 && (s[0] == '0') && (s[1] == 'x' || s[1] == 'X')
                   ? std::from_chars(s.data() + 2, s.data() + s.size(), x, 16)
                   : std::from_chars(s.data(), s.data() + s.size(), x, 10);
      if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size())
        bad("json.type", field, fmt::format("expected an unsigned integer, got the string \"{}\"", s));
      return check_max(x, field, max);
    }
    if (v.is_number_unsigned()) return check_max(v.get<uint64_t>(), field, max);
    // nlohmann stores integers built in C++ as signed even when they are positive.
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return check_max(uint64_t(v.get<int64_t>()), field, max);
    if (v.is_number_integer())
      bad("json.range", field, fmt::format("expected a non-negative integer, got {}", v.get<int64_t>()));
    bad("json.type", field, fmt::format("expected an unsigned integer, got {} {}", type_name(v), v.dump()));
  }

  int32_t signed_value(const json& v, const std::string& field) const {
    if (!v.is_number_integer())
      bad("json.type", field, fmt::format("expected an integer, got {} {}", type_name(v), v.dump()));
    if (v.is_number_unsigned()) {
      uint64_t x = v.get<uint64_t>();
      if (x > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
        bad("json.range", field, fmt::format("{} does not fit a 32-bit signed integer", x));
      return static_cast<int32_t>(x);
    }
    int64_t x = v.get<int64_t>();
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
      bad("json.range", field, fmt::format("{} does not fit a 32-bit signed integer", x));
    return static_cast<int32_t>(x);
  }

  const json& array(const char* key, size_t min, size_t max) const {
    const json& v = get(key);
    if (!v.is_array())
      bad("json.type", key, fmt::format("expected an array, got {} {}", type_name(v), v.dump()));
    if (v.size() < min || v.size() > max) {
      std::string want = min == max ? std::to_string(min) : fmt::format("{} to {}", min, max);
      bad("json.array-length", key, fmt::format("expected {} entries, got {}", want, v.size()));
    }
    return v;
  }

  template <class T>
  T name_value(const char* key, std::optional<T> (*parse)(std::string_view), const char* choices) const {
    const json& v = get(key);
    if (!v.is_string())
      bad("json.type", key, fmt::format("expected a string ({}), got {} {}", choices, type_name(v), v.dump()));
    const std::string& s = v.get_ref<const std::string&>();
    auto e = parse(s);
    if (!e) bad("json.enum", key, fmt::format("unknown value \"{}\"; expected one of: {}", s, choices));
    return *e;
  }

 private:
  uint64_t check_max(uint64_t x, const std::string& field, uint64_t max) const {
    if (x > max) bad("json.range", field, fmt::format("{} is larger than {}", x, max));
    return x;
  }

  const json& obj_;
  std::string where_;
};

constexpr const char* kTypes =
    "uint8 uint16 uint32 int32 uint64 int64 float16 float32 float64 bfloat16 float32_ftz tfloat32 tfloat32_ftz "
    "16u4_align8b 16u4_align16b 16u6_align16b";

const std::set<std::string_view> kCommonKeys{"encode",  "data_type", "global",       "offset",
                                             "global_address", "dims", "strides",      "element_strides",
                                             "interleave",     "swizzle", "l2_promotion", "oob_fill"};
const std::set<std::string_view> kTiledKeys{"box"};
const std::set<std::string_view> kIm2colKeys{"pixel_box_lower", "pixel_box_upper", "channels_per_pixel",
                                             "pixels_per_column"};
const std::set<std::string_view> kWideKeys{"pixel_box_lower_w", "pixel_box_upper_w", "channels_per_pixel",
                                           "pixels_per_column", "mode"};

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();

MapSource read(const json& j, const std::string& where) {
  if (!j.is_object())
    fail("json.type", fmt::format("a tensor map must be a JSON object, got {}", type_name(j)), where);
  Reader r(j, where);
  MapSource src;
  TensorMap& m = src.map;

  if (r.has("encode")) m.encode = r.name_value<Encode>("encode", parse_encode, "tiled im2col im2col_wide");
  const std::set<std::string_view>& own = m.encode == Encode::tiled    ? kTiledKeys
                                          : m.encode == Encode::im2col ? kIm2colKeys
                                                                       : kWideKeys;
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (kCommonKeys.count(k) || own.count(k)) continue;
    bool other = kTiledKeys.count(k) || kIm2colKeys.count(k) || kWideKeys.count(k);
    r.bad("json.unknown-key", k,
          other ? fmt::format("key \"{}\" does not apply to a {} map", k, name(m.encode))
                : fmt::format("unknown key \"{}\"", k));
  }
  auto require = [&](const char* key) {
    if (!r.has(key)) r.bad("json.missing-key", key, fmt::format("a {} map needs \"{}\"", name(m.encode), key));
  };

  require("data_type");
  m.data_type = r.name_value<DataType>("data_type", parse_data_type, kTypes);

  // The address: "global" (+ "offset") in a scenario, or "global_address" standalone; neither = 0
  // (the encoder accepts a null address: a template map, §1.3).
  if (r.has("global_address") && (r.has("global") || r.has("offset")))
    r.bad("json.address", "global_address", "give either \"global\" (+ \"offset\") or \"global_address\", not both");
  if (r.has("offset") && !r.has("global"))
    r.bad("json.address", "offset", "\"offset\" needs \"global\", the allocation it counts from");
  if (r.has("global")) {
    const json& g = r.get("global");
    if (!g.is_string() || g.get_ref<const std::string&>().empty())
      r.bad("json.type", "global", fmt::format("expected an allocation name, got {}", g.dump()));
    src.global = g.get<std::string>();
  }
  if (r.has("offset")) src.offset = r.unsigned_value(r.get("offset"), "offset", kU64);
  m.global_address = r.has("global_address") ? r.unsigned_value(r.get("global_address"), "global_address", kU64)
                                             : src.offset;

  require("dims");
  const json& dims = r.array("dims", 1, kMaxRank);
  m.rank = static_cast<int>(dims.size());
  for (int i = 0; i < m.rank; ++i) m.dims[i] = r.unsigned_value(dims[i], fmt::format("dims[{}]", i), kU64);

  if (m.rank > 1 || r.has("strides")) {
    require("strides");
    size_t n = static_cast<size_t>(m.rank - 1);
    const json& s = r.array("strides", n, n);
    for (size_t i = 0; i < n; ++i) m.strides[i] = r.unsigned_value(s[i], fmt::format("strides[{}]", i), kU64);
  }
  if (r.has("element_strides")) {
    const json& e = r.array("element_strides", m.rank, m.rank);
    for (int i = 0; i < m.rank; ++i)
      m.element_strides[i] =
          static_cast<uint32_t>(r.unsigned_value(e[i], fmt::format("element_strides[{}]", i), kU32));
  }
  if (r.has("interleave")) m.interleave = r.name_value<Interleave>("interleave", parse_interleave, "none 16b 32b");
  if (r.has("swizzle"))
    m.swizzle = r.name_value<Swizzle>("swizzle", parse_swizzle,
                                      "none 32b 64b 128b 128b_atom_32b 128b_atom_32b_flip_8b 128b_atom_64b");
  if (r.has("l2_promotion"))
    m.l2_promotion = r.name_value<L2Promotion>("l2_promotion", parse_l2_promotion, "none 64b 128b 256b");
  if (r.has("oob_fill")) m.oob_fill = r.name_value<OobFill>("oob_fill", parse_oob_fill, "none nan_request_zero_fma");

  auto u32_key = [&](const char* key) {
    return static_cast<uint32_t>(r.unsigned_value(r.get(key), key, kU32));
  };
  switch (m.encode) {
    case Encode::tiled: {
      require("box");
      const json& b = r.array("box", m.rank, m.rank);
      for (int i = 0; i < m.rank; ++i)
        m.box[i] = static_cast<uint32_t>(r.unsigned_value(b[i], fmt::format("box[{}]", i), kU32));
      break;
    }
    case Encode::im2col: {
      // One corner entry per spatial dimension (W, H, D: rank - 2 of them, H11); absent = all zero.
      size_t n = static_cast<size_t>(std::clamp(m.rank - 2, 0, 3));
      for (auto [key, arr] : {std::pair{"pixel_box_lower", &m.pixel_box_lower},
                              std::pair{"pixel_box_upper", &m.pixel_box_upper}}) {
        if (!r.has(key)) continue;
        const json& a = r.array(key, n, n);
        for (size_t i = 0; i < n; ++i) (*arr)[i] = r.signed_value(a[i], fmt::format("{}[{}]", key, i));
      }
      require("channels_per_pixel");
      require("pixels_per_column");
      m.channels_per_pixel = u32_key("channels_per_pixel");
      m.pixels_per_column = u32_key("pixels_per_column");
      break;
    }
    case Encode::im2col_wide: {
      if (r.has("mode")) m.wide_mode = r.name_value<WideMode>("mode", parse_wide_mode, "w w128");
      if (r.has("pixel_box_lower_w"))
        m.pixel_box_lower_w = r.signed_value(r.get("pixel_box_lower_w"), "pixel_box_lower_w");
      if (r.has("pixel_box_upper_w"))
        m.pixel_box_upper_w = r.signed_value(r.get("pixel_box_upper_w"), "pixel_box_upper_w");
      require("channels_per_pixel");
      m.channels_per_pixel = u32_key("channels_per_pixel");
      // §1.5: ignored in mode w128, so only mode w needs it.
      if (m.wide_mode == WideMode::w) require("pixels_per_column");
      if (r.has("pixels_per_column")) m.pixels_per_column = u32_key("pixels_per_column");
      break;
    }
  }
  return src;
}

}  // namespace

MapSource map_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    return read(j, where);
  } catch (const DiagnosticError&) {
    throw;
  } catch (const std::exception& e) {  // nlohmann's own exceptions: never let them escape unnamed
    fail("json.malformed", fmt::format("cannot read the tensor map: {}", e.what()), where);
  }
}

nlohmann::json map_to_json(const TensorMap& m) {
  json j;
  int r = std::clamp(m.rank, 0, kMaxRank);
  j["encode"] = name(m.encode);
  j["data_type"] = name(m.data_type);
  j["global_address"] = m.global_address;
  j["dims"] = std::vector<uint64_t>(m.dims.begin(), m.dims.begin() + r);
  j["strides"] = std::vector<uint64_t>(m.strides.begin(), m.strides.begin() + std::max(r - 1, 0));
  if (m.encode == Encode::tiled) j["box"] = std::vector<uint32_t>(m.box.begin(), m.box.begin() + r);
  j["element_strides"] = std::vector<uint32_t>(m.element_strides.begin(), m.element_strides.begin() + r);
  j["interleave"] = name(m.interleave);
  j["swizzle"] = name(m.swizzle);
  j["l2_promotion"] = name(m.l2_promotion);
  j["oob_fill"] = name(m.oob_fill);
  if (m.encode == Encode::im2col) {
    int n = std::clamp(r - 2, 0, 3);
    j["pixel_box_lower"] = std::vector<int32_t>(m.pixel_box_lower.begin(), m.pixel_box_lower.begin() + n);
    j["pixel_box_upper"] = std::vector<int32_t>(m.pixel_box_upper.begin(), m.pixel_box_upper.begin() + n);
  }
  if (m.encode == Encode::im2col_wide) {
    j["pixel_box_lower_w"] = m.pixel_box_lower_w;
    j["pixel_box_upper_w"] = m.pixel_box_upper_w;
    j["mode"] = name(m.wide_mode);
  }
  if (m.encode != Encode::tiled) {
    j["channels_per_pixel"] = m.channels_per_pixel;
    j["pixels_per_column"] = m.pixels_per_column;
  }
  return j;
}

}  // namespace tmakit::tensor_map
