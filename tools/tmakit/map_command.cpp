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
#include "tmakit/terminal_text.hpp"
#include "call_log.hpp"
#include "map_input.hpp"
#include "numbers.hpp"
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
  std::optional<std::string> layout_lines_text, base_text;  // as typed (numbers.hpp)
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

void print_layout(std::string& out, const tm::TensorMap& m, uint64_t base, int lines) {
  if (m.row_bytes() == 0 || m.smem_footprint() == 0) {
    out += fmt::format("layout: the box is empty\n");
    return;
  }
  uint64_t total = std::min<uint64_t>(m.smem_footprint(), uint64_t(lines) * 128);
  uint64_t n_lines = (total + 127) / 128;
  std::vector<std::vector<std::string>> cells(n_lines);
  size_t width = 3;
  for (uint64_t l = 0; l < n_lines; ++l)
    for (uint64_t j = 0; j < 8 && l * 128 + j * 16 < m.smem_footprint(); ++j) {
      cells[l].push_back(chunk_text(m, base, l * 128 + j * 16));
      width = std::max(width, cells[l].back().size());
    }
  out += fmt::format("layout: shared memory from offset {:#x}, swizzle {}, one line per 128 bytes, one cell per 16-byte chunk;\n"
             "        ({}) = tensor coordinates relative to the start coordinates\n",
             base, tm::name(m.swizzle),
             m.encode == tm::Encode::tiled ? "x-range,y,z..." : "channel-range,pixel");
  out += fmt::format("  offset  |");
  for (int j = 0; j < 8; ++j) out += fmt::format(" {:<{}}", fmt::format("chunk {}", j), width);
  out += fmt::format("\n");
  for (uint64_t l = 0; l < n_lines; ++l) {
    out += fmt::format("  {:#06x}  |", base + l * 128);
    for (const auto& c : cells[l]) out += fmt::format(" {:<{}}", c, width);
    out += fmt::format("\n");
  }
  if (tm::swizzle_span(m.swizzle) == 128 && m.swizzle != tm::Swizzle::b128)
    out += fmt::format("  (sm_100 atom swizzle: a bit mapping read from the PTX ISA's tables, not checked on hardware)\n");
  if (m.smem_footprint() > total)
    out += fmt::format("  ... {} more bytes (--layout-lines to show more)\n", m.smem_footprint() - total);
}

// A saturated size (detail::mul_sat) is past 64 bits: say so instead of printing 2^64 − 1.
std::string size_text(uint64_t v) { return v == UINT64_MAX ? "more than 2^64 − 1" : std::to_string(v); }

// The report on one map: what it is, every rule it breaks, its sizes, its layout.
// Returns the number of errors. `where` prefixes the diagnostics' places.
int report(std::string& out, const MapOptions& o, const spec::Target& target, const tm::MapSource& src,
           const std::string& where) {
  const tm::TensorMap& m = src.map;
  if (!src.global.empty())
    out += fmt::format("note: the map names allocation \"{}\"; its address is taken as offset {:#x}\n", src.global,
                       src.offset);
  Diagnostics diags = tm::validate(m, target);
  int errors = 0, warnings = 0;
  for (const auto& d : diags) errors += d.severity == Severity::error, warnings += d.severity == Severity::warning;
  out += fmt::format("{}\n", describe(m));
  out += fmt::format("{} for {}", errors ? "invalid" : "valid", target.str());
  if (errors || warnings)
    out += fmt::format(" ({} error{}, {} warning{})", errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  out += "\n";
  for (auto d : diags) {
    if (!where.empty()) d.where = where + (d.where.empty() ? "" : ": " + d.where);
    out += fmt::format("{}\n", format(d));
  }
  out += fmt::format("bytes per box: {} (the mbarrier transaction count of one load)\n", size_text(m.bytes_per_box()));
  out += fmt::format("smem footprint: {} bytes = {} row{} × {}-byte pitch ({} data bytes per row)\n",
                     size_text(m.smem_footprint()), size_text(m.rows()), m.rows() == 1 ? "" : "s", m.row_pitch(),
                     m.row_bytes());
  out += fmt::format("smem alignment: {} bytes minimum; swizzle phase 0 at multiples of {}\n",
                     m.smem_alignment(), m.swizzle_period());
  if (o.layout) print_layout(out, m, o.base, o.layout_lines);
  return errors;
}

// `tmakit map --from-log FILE` without --index: every call's map, one block each.
// The whole report is printed only once the log has been read: a malformed line
// (exit 2) prints nothing else.
int check_log(const MapOptions& o, const spec::Target& target) {
  if (!o.map.file.empty() || o.map.has_flags()) {
    fmt::print(stderr, "--from-log: error: without --index every call is checked as recorded; give --index N to "
               "change one call's map with flags [cli.options]\n");
    return 2;
  }
  const std::optional<int64_t> pid = log_pid(o.map);
  std::string out;
  int calls = 0, invalid = 0;
  read_call_log(o.map.log, [&](const LoggedCall& c) {
    if (pid && c.pid != *pid) return;
    ++calls;
    out += fmt::format("{}call {} (pid {}, {}):\n", calls > 1 ? "\n" : "", c.index, c.pid, c.where);
    if (c.map.is_null()) {
      out += format(Diagnostic{Severity::error, "log.map-unreadable",
                               "the call's arguments could not be read: " + c.map_error, c.where}) + "\n";
      ++invalid;
      return;
    }
    try {
      invalid += report(out, o, target, tm::map_from_json(c.map, "map"), c.where) > 0;
    } catch (const DiagnosticError& e) {  // not a map: the log is unusable
      Diagnostic d = e.diagnostic();
      throw DiagnosticError({d.severity, d.rule, d.message, c.where + ": " + d.where});
    }
  });
  out += fmt::format("\n{} call{} checked{}: {} valid, {} invalid\n", calls, calls == 1 ? "" : "s",
                     pid ? fmt::format(" (pid {})", *pid) : "", calls - invalid, invalid);
  fmt::print("{}", out);
  return invalid ? 1 : 0;
}

int run_map(const MapOptions& o) {
  auto target = spec::parse_target(o.target);
  if (!target) {
    fmt::print(stderr, "--target: error: unknown target \"{}\" (e.g. sm_90a, sm_100a) [cli.target]\n",
               terminal_safe(o.target));
    return 2;
  }
  if (o.base % 128) {
    fmt::print(stderr, "--base: error: {} is not 128-byte aligned [cli.base]\n", o.base);
    return 2;
  }
  if (!o.map.log.empty() && !o.map.index) return check_log(o, *target);
  std::optional<tm::MapSource> read = read_map_input(o.map, "tmakit map");
  if (!read) return 2;
  std::string out;
  const std::string where = o.map.log.empty() ? o.map.file : fmt::format("{} (call {})", o.map.log, *o.map.index);
  const int errors = report(out, o, *target, *read, where);
  fmt::print("{}", out);
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
  cmd->add_option("--layout-lines", o->layout_lines_text, "128-byte lines the layout shows (1..4096, default 16)");
  cmd->add_option("--base", o->base_text, "shared-memory offset of the box for --layout (128-aligned, default 0)");
  cmd->callback([o, &status] {
    try {
      o->layout_lines = parse_integer<int>("--layout-lines", o->layout_lines_text, {1, 4096}).value_or(16);
      o->base = parse_integer<uint64_t>("--base", o->base_text).value_or(0);
      status = run_map(*o);
    } catch (const DiagnosticError& e) {  // a bad number, an unreadable or malformed log
      fmt::print(stderr, "{}\n", format(e.diagnostic()));
      status = 2;
    } catch (const std::exception& e) {  // never a crash: anything unexpected is unusable input
      fmt::print(stderr, "tmakit map: error: {}\n", e.what());
      status = 2;
    }
  });
}

}  // namespace tmakit::cli
