// `tmakit map`: build a tensor map from a JSON file or flags, name every rule it
// breaks, print its derived sizes and (with --layout) where each 16-byte chunk of
// the box lands in shared memory. Exit 0 valid, 1 invalid, 2 unusable input.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "tmakit/tensor_map/json.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::cli {
namespace {

using nlohmann::json;
namespace tm = tmakit::tensor_map;

struct MapOptions {
  std::string file, target = "sm_90a";
  std::optional<std::string> encode, type, swizzle, interleave, l2, fill, address, mode;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box, element_strides;
  std::vector<int32_t> lower, upper;
  std::optional<uint32_t> channels, pixels;
  std::optional<int32_t> lower_w, upper_w;
  bool layout = false;
  int layout_lines = 16;
  uint64_t base = 0;
};

// JSON key ← flag, so that a structural error found while reading names the flag.
const std::map<std::string, std::string> kFlagOf{
    {"encode", "--encode"},        {"data_type", "--type"},          {"dims", "--dims"},
    {"strides", "--strides"},      {"box", "--box"},                 {"element_strides", "--element-strides"},
    {"swizzle", "--swizzle"},      {"interleave", "--interleave"},   {"l2_promotion", "--l2"},
    {"oob_fill", "--fill"},        {"global_address", "--address"},  {"pixel_box_lower", "--lower"},
    {"pixel_box_upper", "--upper"}, {"channels_per_pixel", "--channels"}, {"pixels_per_column", "--pixels"},
    {"pixel_box_lower_w", "--lower-w"}, {"pixel_box_upper_w", "--upper-w"}, {"mode", "--mode"}};

// Flags override (or supply) the keys of the map object.
void apply_flags(const MapOptions& o, json& j) {
  auto set = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  auto set_list = [&](const char* key, const auto& v) {
    if (!v.empty()) j[key] = v;
  };
  set("encode", o.encode);
  set("data_type", o.type);
  set("swizzle", o.swizzle);
  set("interleave", o.interleave);
  set("l2_promotion", o.l2);
  set("oob_fill", o.fill);
  set("global_address", o.address);
  set("mode", o.mode);
  set("channels_per_pixel", o.channels);
  set("pixels_per_column", o.pixels);
  set("pixel_box_lower_w", o.lower_w);
  set("pixel_box_upper_w", o.upper_w);
  set_list("dims", o.dims);
  set_list("strides", o.strides);
  set_list("box", o.box);
  set_list("element_strides", o.element_strides);
  set_list("pixel_box_lower", o.lower);
  set_list("pixel_box_upper", o.upper);
}

std::string join(const auto& v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string describe(const tm::TensorMap& m) {
  int r = std::clamp(m.rank, 0, tm::kMaxRank);
  std::string s = fmt::format("{} map, {}, rank {}, dims {}, strides {} bytes", tm::name(m.encode),
                              tm::name(m.data_type), m.rank, join(m.dims, r), join(m.strides, std::max(r - 1, 0)));
  if (m.encode == tm::Encode::tiled) s += ", box " + join(m.box, r);
  if (m.encode == tm::Encode::im2col)
    s += fmt::format(", pixel box {}..{}", join(m.pixel_box_lower, std::clamp(r - 2, 0, 3)),
                     join(m.pixel_box_upper, std::clamp(r - 2, 0, 3)));
  if (m.encode == tm::Encode::im2col_wide)
    s += fmt::format(", pixel box W {}..{}, mode {}", m.pixel_box_lower_w, m.pixel_box_upper_w, tm::name(m.wide_mode));
  if (m.encode != tm::Encode::tiled)
    s += fmt::format(", {} channels × {} pixels", m.channels_per_pixel, m.elements(1));
  return s + fmt::format(", element strides {}, swizzle {}, interleave {}, l2 {}, fill {}, address {:#x}",
                         join(m.element_strides, r), tm::name(m.swizzle), tm::name(m.interleave),
                         tm::name(m.l2_promotion), tm::name(m.oob_fill), m.global_address);
}

// §3.1 (and §3.4's [I] bit mappings for the sm_100 ATOM modes). An involution, so
// applying it to a physical address gives the logical one. The model has its own.
uint64_t swizzle_address(tm::Swizzle s, uint64_t a) {
  uint64_t line = a >> 7;
  switch (s) {
    case tm::Swizzle::none: return a;
    case tm::Swizzle::b32: return a ^ ((line & 1) << 4);
    case tm::Swizzle::b64: return a ^ ((line & 3) << 4);
    case tm::Swizzle::b128: return a ^ ((line & 7) << 4);
    case tm::Swizzle::b128_atom_32b: return a ^ ((line & 3) << 5);
    case tm::Swizzle::b128_atom_32b_flip_8b: return a ^ ((line & 3) << 5) ^ ((line & 1) << 3);
    case tm::Swizzle::b128_atom_64b: return a ^ ((line & 1) << 6);
  }
  return a;
}

// Tensor coordinates (relative to the start coordinates) of box row r, dimension 1 up.
std::string row_coordinates(const tm::TensorMap& m, uint64_t r) {
  if (m.encode != tm::Encode::tiled) return fmt::format("p{}", r);
  std::string s;
  for (int i = 1; i < m.rank; ++i) {
    uint64_t n = std::max<uint32_t>(m.elements(i), 1);
    s += fmt::format(",{}", (r % n) * m.traversal_stride(i));
    r /= n;
  }
  return s.empty() ? s : s.substr(1);
}

// What lands in one 16-byte chunk at physical offset `off` from `base`.
std::string chunk_text(const tm::TensorMap& m, uint64_t base, uint64_t off) {
  const uint64_t pitch = m.row_pitch(), row_bytes = m.row_bytes(), rows = m.rows();
  const uint64_t bits = static_cast<uint64_t>(tm::smem_bits_per_element(m.data_type));
  std::string cell;
  int64_t cur_row = -1;
  uint64_t lo = 0, hi = 0;
  auto flush = [&] {
    if (cur_row < 0) return;
    std::string x = m.encode == tm::Encode::tiled ? "" : "c";
    uint64_t e0 = m.encode == tm::Encode::tiled ? m.traversal_stride(0) : 1;
    x += lo == hi ? std::to_string(lo * e0) : fmt::format("{}-{}", lo * e0, hi * e0);
    std::string rc = row_coordinates(m, static_cast<uint64_t>(cur_row));
    cell += (cell.empty() ? "" : "|") + ("(" + x + (rc.empty() ? "" : "," + rc) + ")");
  };
  for (uint64_t b = 0; b < 16; ++b) {
    uint64_t logical = swizzle_address(m.swizzle, base + off + b) - base;
    uint64_t row = logical / pitch, col = logical % pitch;
    if (row >= rows || col >= row_bytes) continue;
    uint64_t k_lo = col * 8 / bits, k_hi = (col * 8 + 7) / bits;
    if (static_cast<int64_t>(row) != cur_row) {
      flush();
      cur_row = static_cast<int64_t>(row), lo = k_lo, hi = k_hi;
    } else {
      lo = std::min(lo, k_lo), hi = std::max(hi, k_hi);
    }
  }
  flush();
  return cell.empty() ? "pad" : cell;
}

void print_layout(const tm::TensorMap& m, uint64_t base, int lines) {
  if (m.row_bytes() == 0 || m.smem_footprint() == 0) {
    fmt::print("layout: the box is empty\n");
    return;
  }
  lines = std::clamp(lines, 1, 4096);  // a picture, not a dump: keep it bounded
  uint64_t total = std::min<uint64_t>(m.smem_footprint(), uint64_t(lines) * 128);
  uint64_t n_lines = (total + 127) / 128;
  std::vector<std::vector<std::string>> cells(n_lines);
  size_t width = 3;
  for (uint64_t l = 0; l < n_lines; ++l)
    for (uint64_t j = 0; j < 8 && l * 128 + j * 16 < m.smem_footprint(); ++j) {
      cells[l].push_back(chunk_text(m, base, l * 128 + j * 16));
      width = std::max(width, cells[l].back().size());
    }
  fmt::print("layout: shared memory from offset {:#x}, swizzle {}, one line per 128 bytes, one cell per 16-byte chunk;\n"
             "        ({}) = tensor coordinates relative to the start coordinates\n",
             base, tm::name(m.swizzle),
             m.encode == tm::Encode::tiled ? "x-range,y,z..." : "channel-range,pixel");
  fmt::print("  offset  |");
  for (int j = 0; j < 8; ++j) fmt::print(" {:<{}}", fmt::format("chunk {}", j), width);
  fmt::print("\n");
  for (uint64_t l = 0; l < n_lines; ++l) {
    fmt::print("  {:#06x}  |", base + l * 128);
    for (const auto& c : cells[l]) fmt::print(" {:<{}}", c, width);
    fmt::print("\n");
  }
  if (tm::swizzle_span(m.swizzle) == 128 && m.swizzle != tm::Swizzle::b128)
    fmt::print("  (sm_100 ATOM swizzle: bit mapping of §3.4, inferred [I], not checked on hardware)\n");
  if (m.smem_footprint() > total)
    fmt::print("  ... {} more bytes (--layout-lines to show more)\n", m.smem_footprint() - total);
}

int run_map(const MapOptions& o) {
  auto target = spec::parse_target(o.target);
  if (!target) {
    fmt::print(stderr, "--target: error: unknown target \"{}\" (e.g. sm_90a, sm_100a)\n", o.target);
    return 2;
  }
  if (o.base % 128) {
    fmt::print(stderr, "--base: error: {} is not 128-byte aligned (H15)\n", o.base);
    return 2;
  }
  json j = json::object();
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      fmt::print(stderr, "{}: error: cannot read the file\n", o.file);
      return 2;
    }
    try {
      j = json::parse(text.str());
    } catch (const json::exception& e) {
      fmt::print(stderr, "{}: error: malformed JSON: {} [json.syntax]\n", o.file, e.what());
      return 2;
    }
    if (!j.is_object()) {
      fmt::print(stderr, "{}: error: the file must hold one tensor-map object, got {} [json.type]\n", o.file,
                 j.type_name());
      return 2;
    }
  }
  apply_flags(o, j);
  if (j.empty()) {
    fmt::print(stderr, "tmakit map: error: give a map file or flags (--type, --dims, --strides, --box, ...)\n");
    return 2;
  }
  tm::MapSource src;
  try {
    src = tm::map_from_json(j, "");
  } catch (const DiagnosticError& e) {
    Diagnostic d = e.diagnostic();
    std::string key = d.where.substr(0, d.where.find('['));
    if (o.file.empty() && kFlagOf.count(key)) d.where = kFlagOf.at(key) + d.where.substr(key.size());
    else if (!o.file.empty()) d.where = o.file + (d.where.empty() ? "" : ": " + d.where);
    fmt::print(stderr, "{}\n", format(d));
    return 2;
  }
  const tm::TensorMap& m = src.map;
  if (!src.global.empty())
    fmt::print("note: the map names allocation \"{}\"; its address is taken as offset {:#x}\n", src.global,
               src.offset);
  Diagnostics diags = tm::validate(m, *target);
  int errors = 0, warnings = 0;
  for (const auto& d : diags) errors += d.severity == Severity::error, warnings += d.severity == Severity::warning;
  fmt::print("{}\n", describe(m));
  fmt::print("{} for {}", errors ? "invalid" : "valid", target->str());
  if (errors || warnings) fmt::print(" ({} error{}, {} warning{})", errors, errors == 1 ? "" : "s", warnings,
                                     warnings == 1 ? "" : "s");
  fmt::print("\n");
  for (auto d : diags) {
    if (!o.file.empty()) d.where = o.file + (d.where.empty() ? "" : ": " + d.where);
    fmt::print("{}\n", format(d));
  }
  fmt::print("bytes per box: {} (the mbarrier transaction count of one load)\n", m.bytes_per_box());
  fmt::print("smem footprint: {} bytes = {} row{} × {}-byte pitch ({} data bytes per row)\n", m.smem_footprint(),
             m.rows(), m.rows() == 1 ? "" : "s", m.row_pitch(), m.row_bytes());
  fmt::print("smem alignment: {} bytes minimum (H15); swizzle phase 0 at multiples of {}\n", m.smem_alignment(),
             m.swizzle_period());
  if (o.layout) print_layout(m, o.base, o.layout_lines);
  return errors ? 1 : 0;
}

}  // namespace

void add_map_command(CLI::App& app, int& status) {
  auto o = std::make_shared<MapOptions>();
  CLI::App* cmd = app.add_subcommand(
      "map", "Check a tensor map against the driver's and the hardware's rules; show its sizes and smem layout");
  cmd->add_option("file", o->file, "JSON file holding one map object (the scenario's tensor_maps form)");
  cmd->add_option("--encode", o->encode, "tiled (default), im2col or im2col_wide");
  cmd->add_option("--type", o->type, "data type: uint8 ... float32 ... 16u6_align16b");
  cmd->add_option("--dims", o->dims, "global dims in elements, dimension 0 first: 512,512")->delimiter(',');
  cmd->add_option("--strides", o->strides, "byte strides of dimensions 1..rank-1: 2048")->delimiter(',');
  cmd->add_option("--box", o->box, "box dims in elements: 32,16")->delimiter(',');
  cmd->add_option("--element-strides", o->element_strides, "traversal strides (default 1 each)")->delimiter(',');
  cmd->add_option("--swizzle", o->swizzle, "none 32b 64b 128b 128b_atom_32b 128b_atom_32b_flip_8b 128b_atom_64b");
  cmd->add_option("--interleave", o->interleave, "none 16b 32b");
  cmd->add_option("--l2", o->l2, "L2 promotion: none 64b 128b 256b");
  cmd->add_option("--fill", o->fill, "OOB fill: none nan_request_zero_fma");
  cmd->add_option("--address", o->address, "global address (decimal or 0x hex)");
  cmd->add_option("--lower", o->lower, "im2col pixel_box_lower, W first")->delimiter(',');
  cmd->add_option("--upper", o->upper, "im2col pixel_box_upper, W first")->delimiter(',');
  cmd->add_option("--channels", o->channels, "im2col channels_per_pixel");
  cmd->add_option("--pixels", o->pixels, "im2col pixels_per_column");
  cmd->add_option("--lower-w", o->lower_w, "im2col_wide pixel_box_lower_w");
  cmd->add_option("--upper-w", o->upper_w, "im2col_wide pixel_box_upper_w");
  cmd->add_option("--mode", o->mode, "im2col_wide mode: w or w128");
  cmd->add_option("--target", o->target, "target the map is checked for")->capture_default_str();
  cmd->add_flag("--layout", o->layout, "draw which tensor coordinates land in each 16-byte smem chunk");
  cmd->add_option("--layout-lines", o->layout_lines, "128-byte lines the layout shows")->capture_default_str();
  cmd->add_option("--base", o->base, "shared-memory offset of the box for --layout (128-aligned)")
      ->capture_default_str();
  cmd->callback([o, &status] {
    try {
      status = run_map(*o);
    } catch (const std::exception& e) {  // never a crash: anything unexpected is unusable input
      fmt::print(stderr, "tmakit map: error: {}\n", e.what());
      status = 2;
    }
  });
}

}  // namespace tmakit::cli
