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
#include "map_input.hpp"
#include "tmakit/model/swizzle.hpp"
#include "tmakit/tensor_map/json.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::cli {
namespace {

using nlohmann::json;
namespace tm = tmakit::tensor_map;

struct MapOptions {
  MapInput map;
  std::string target = "sm_90a";
  bool layout = false;
  int layout_lines = 16;
  uint64_t base = 0;
};

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
    // The model's swizzle (§3) is an involution: applied to a physical offset it gives the logical one.
    uint64_t logical = model::swizzle_address(m.swizzle, static_cast<uint32_t>(base + off + b)) - base;
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
  std::optional<tm::MapSource> read = read_map_input(o.map, "tmakit map");
  if (!read) return 2;
  const tm::MapSource& src = *read;
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
    if (!o.map.file.empty()) d.where = o.map.file + (d.where.empty() ? "" : ": " + d.where);
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
  add_map_input(cmd, o->map);
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
