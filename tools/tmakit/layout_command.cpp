// `tmakit layout`: draw where a tensor load puts its data in shared memory, as
// SVG, text or JSON (src/layout). The load is a map (file or flags, as `tmakit
// map` reads it) with --coords and --smem-offset, or one step of a scenario.
// Exit 0 drawn, 1 the copy is invalid (a map or coordinate rule), 2 unusable input.
// Nothing is written unless the whole picture is.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "map_input.hpp"
#include "numbers.hpp"
#include "output_files.hpp"
#include "tmakit/layout/render.hpp"
#include "tmakit/ptx/step.hpp"
#include "tmakit/scenario/program.hpp"

namespace tmakit::cli {
namespace {

namespace tm = tensor_map;
using model::Im2colInfo;

struct LayoutOptions {
  MapInput map;
  std::vector<int32_t> coords, offsets;
  std::optional<int64_t> w_halo, w_offset;
  uint32_t smem_offset = 0;
  std::string scenario, format = "svg", output, target = "sm_90a";
  std::optional<int> step;
  uint32_t max_lines = 64;
};

// The numeric flags as typed; numbers() converts them exactly (numbers.hpp).
struct LayoutNumbers {
  std::vector<std::string> coords, offsets;
  std::optional<std::string> w_halo, w_offset, smem_offset, step, max_lines;

  void into(LayoutOptions& o) const {
    o.coords = parse_integers<int32_t>("--coords", coords);
    o.offsets = parse_integers<int32_t>("--offsets", offsets);
    o.w_halo = parse_integer<int64_t>("--w-halo", w_halo);
    o.w_offset = parse_integer<int64_t>("--w-offset", w_offset);
    o.smem_offset = parse_integer<uint32_t>("--smem-offset", smem_offset).value_or(0);
    o.step = parse_integer<int>("--step", step, {0, INT32_MAX});
    // A picture, not a dump: keep it bounded.
    o.max_lines = parse_integer<uint32_t>("--max-lines", max_lines, {1, 4096}).value_or(64);
  }
};

// Exit statuses, as every tmakit command uses them.
constexpr int kInvalid = 1, kUnusable = 2;

// The load to draw: a map, its coordinates, where it lands, and im2colInfo.
struct Load {
  tm::TensorMap map;
  std::vector<int32_t> coords;
  uint32_t smem_offset = 0;
  std::vector<int> ctas{0};
  Im2colInfo info;
  spec::Target target;
  std::string where;  // prefix of messages about the map: "" or "tensor_maps.NAME"
};

struct Failure {
  int status;
};

[[noreturn]] void stop(int status, const Diagnostic& d) {
  fmt::print(stderr, "{}\n", format(d));
  throw Failure{status};
}
[[noreturn]] void stop(int status, const std::string& where, const std::string& rule, const std::string& message) {
  stop(status, Diagnostic{Severity::error, rule, message, where});
}

// im2colInfo follows the map: .im2col for im2col maps, ::w or ::w::128 by the wide mode (§1.5).
Im2colInfo info_for(const tm::TensorMap& m) {
  Im2colInfo info;
  if (m.encode == tm::Encode::im2col_wide)
    info.mode = m.wide_mode == tm::WideMode::w128 ? model::Im2colMode::w128 : model::Im2colMode::w;
  return info;
}

Load from_flags(const LayoutOptions& o) {
  auto target = spec::parse_target(o.target);
  if (!target) stop(kUnusable, "--target", "cli.target", fmt::format("unknown target \"{}\" (e.g. sm_90a)", o.target));
  std::optional<tm::MapSource> src = read_map_input(o.map, "tmakit layout");
  if (!src) throw Failure{kUnusable};
  Load l{src->map, o.coords, o.smem_offset, {0}, info_for(src->map), *target, o.map.file};
  if (l.coords.empty()) l.coords.assign(size_t(std::clamp(l.map.rank, 1, tm::kMaxRank)), 0);
  if (l.info.mode == model::Im2colMode::im2col) {
    if (o.offsets.size() > 3)
      stop(kUnusable, "--offsets", "cli.offsets", fmt::format("{} offsets given; im2col has at most 3 (W, H, D)",
                                                              o.offsets.size()));
    std::copy(o.offsets.begin(), o.offsets.end(), l.info.offsets.begin());
  }
  l.info.w_halo = o.w_halo.value_or(0);
  l.info.w_offset = o.w_offset.value_or(0);
  return l;
}

// A scenario operand's value: an immediate, or a symbol of `symbols` plus an offset.
scenario::Symbol value_of(const ptx::Expr& e, const scenario::Program& p, const std::string& where) {
  scenario::Symbol v;
  if (!e.is_immediate()) {
    const scenario::Symbol* sym = p.find_symbol(e.symbol);
    if (!sym)
      stop(kUnusable, where, "layout.unknown-symbol",
           fmt::format("`{}` is not in the scenario's symbols (a value stored by an earlier step cannot be drawn)",
                       e.symbol));
    v = *sym;
  }
  v.v += e.offset;
  return v;
}

int64_t integer_of(const ptx::Expr& e, const scenario::Program& p, const std::string& where, const std::string& what) {
  scenario::Symbol v = value_of(e, p, where);
  if (v.kind != scenario::SymbolValue::Kind::integer)
    stop(kUnusable, where, "layout.operand", fmt::format("{} must be an integer, got `{}`", what, e.str()));
  return v.v;
}

Load from_scenario(const LayoutOptions& o) {
  const scenario::Program p = scenario::resolve(scenario::load_file(o.scenario, {.offer_files_anywhere = false}));
  const int n = *o.step;
  if (n < 0 || size_t(n) >= p.steps.size())
    stop(kUnusable, "--step", "cli.step", fmt::format("step {} is outside the program's steps 0..{}", n,
                                                      int(p.steps.size()) - 1));
  const scenario::ProgramStep& st = p.steps[size_t(n)];
  const std::string where = fmt::format("{}: {}", o.scenario, st.where);
  const auto* t = st.ptx ? std::get_if<ptx::TensorCopy>(&st.ptx->body) : nullptr;
  if (!t || t->kind != ptx::TensorCopy::Kind::load)
    stop(kUnusable, where, "layout.not-a-load",
         fmt::format("{} is not a tensor load (cp.async.bulk.tensor...shared::cluster.global...): nothing lands "
                     "in shared memory to draw", st.ptx ? st.ptx->mnemonic : std::string(model::call_name(st.call->kind))));
  Load l;
  l.target = p.target;
  if (auto walk = model::im2col_mode_of(t->mode)) l.info.mode = *walk;
  else if (t->mode != ptx::LoadMode::tile)
    stop(kUnusable, where, "layout.unsupported", fmt::format("load mode {} is not drawn yet", ptx::name(t->mode)));
  const ptx::Operand& tref = t->tensor;
  const scenario::BoundMap* map = p.find_map(tref.map);
  if (!map) stop(kUnusable, where, "tensor.unknown-map", fmt::format("`{}` is not a tensor map of the scenario", tref.map));
  l.map = map->map;
  l.where = "tensor_maps." + tref.map;
  for (size_t i = 0; i < tref.elems.size(); ++i) {
    const int64_t c = integer_of(tref.elems[i], p, where, fmt::format("tensorCoords[{}]", i));
    if (c < INT32_MIN || c > INT32_MAX)
      stop(kUnusable, where, "tensor.coord-range", fmt::format("tensorCoords[{}] = {} is not an .s32 value", i, c));
    l.coords.push_back(int32_t(c));
  }
  if (t->im2colInfo) {  // as the engine reads it (model/tensor.cpp)
    std::vector<int64_t> v;
    for (const ptx::Expr& e : t->im2colInfo->elems) v.push_back(integer_of(e, p, where, "im2colInfo element"));
    if (l.info.mode == model::Im2colMode::im2col) std::copy_n(v.begin(), std::min<size_t>(v.size(), 3), l.info.offsets.begin());
    else if (v.size() == 2) l.info.w_halo = v[0], l.info.w_offset = v[1];
  }
  // Where it lands: dstMem's CTA, or every CTA of a multicast ctaMask (§10.1: bit r is CTA rank r).
  const scenario::Symbol dst = value_of(t->dstMem->expr, p, where);
  if (dst.kind == scenario::SymbolValue::Kind::global || dst.v < 0 || dst.v >= int64_t(p.shared_bytes))
    stop(kUnusable, where, "layout.operand", fmt::format("dstMem `{}` is not a shared address of the {} bytes of "
                                                         "shared memory", t->dstMem->expr.str(), p.shared_bytes));
  l.smem_offset = uint32_t(dst.v);
  l.ctas = {dst.kind == scenario::SymbolValue::Kind::cluster ? dst.rank : st.cta};
  if (t->ctaMask) {
    const int64_t mask = integer_of(t->ctaMask->expr, p, where, "ctaMask");
    l.ctas.clear();
    for (int r = 0; r < p.ctas && r < 16; ++r)
      if (mask >> r & 1) l.ctas.push_back(r);
    if (l.ctas.empty())
      stop(kUnusable, where, "multicast.mask-empty",
           fmt::format("ctaMask {:#x} selects no CTA of a cluster of {}", mask, p.ctas));
  }
  return l;
}

layout::Placement place(const Load& l, uint32_t max_lines) {
  auto prefix = [&](Diagnostic d) {
    if (!l.where.empty()) d.where = l.where + (d.where.empty() ? "" : "." + d.where);
    return d;
  };
  Diagnostics diags = tm::validate(l.map, l.target);
  for (const auto& d : diags)
    if (d.severity == Severity::error) fmt::print(stderr, "{}\n", format(prefix(d)));
  if (diags.has_errors()) throw Failure{kInvalid};
  for (const auto& d : tm::check_coordinates(l.map, l.coords, tm::Direction::load, l.target))
    if (d.severity == Severity::error) stop(kInvalid, Diagnostic{d.severity, d.rule, d.message, "--coords"});
  try {
    layout::Placement p = l.map.encode == tm::Encode::tiled
                              ? layout::place_tile(l.map, l.coords, l.smem_offset, max_lines)
                              : layout::place_im2col(l.map, l.coords, l.info, l.smem_offset, max_lines);
    p.ctas = l.ctas;
    return p;
  } catch (const DiagnosticError& e) {
    stop(kInvalid, e.diagnostic());
  }
}

// All of it or nothing: the picture goes to a fresh temporary file renamed over FILE.
void write_output(const std::string& text, const std::string& file) {
  if (file.empty() || file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  if (auto err = write_output_file(file, text, "-o")) stop(kUnusable, Diagnostic{err->severity, err->rule, err->message, file});
}

int run_layout(const LayoutOptions& o, bool map_given) {
  if (o.format != "svg" && o.format != "text" && o.format != "json")
    stop(kUnusable, "--format", "cli.format", fmt::format("\"{}\" is not one of svg, text, json", o.format));
  if (!o.scenario.empty() && map_given)
    stop(kUnusable, "--scenario", "cli.options",
         "a scenario step names its own map, coordinates and offset: give either --scenario with --step, or a map");
  const Load l = o.scenario.empty() ? from_flags(o) : from_scenario(o);
  const layout::Placement p = place(l, o.max_lines);
  std::string text = o.format == "svg"    ? layout::render_svg(p)
                     : o.format == "text" ? layout::render_text(p)
                                          : layout::render_json(p).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_output(text, o.output);
  return 0;
}

}  // namespace

void add_layout_command(CLI::App& app, int& status) {
  auto o = std::make_shared<LayoutOptions>();
  auto n = std::make_shared<LayoutNumbers>();
  CLI::App* cmd = app.add_subcommand(
      "layout", "Draw where a tensor load puts each 16-byte chunk in shared memory (SVG, text or JSON)");
  add_map_input(cmd, o->map);
  cmd->add_option("--coords", n->coords, "tensor coordinates of the load, dimension 0 first (default 0 each)");
  cmd->add_option("--smem-offset", n->smem_offset, "shared-memory offset of the box (128-byte aligned; default 0)");
  cmd->add_option("--offsets", n->offsets, "im2col offsets W,H,D of the instruction's im2colInfo");
  cmd->add_option("--w-halo", n->w_halo, "im2col::w wHalo");
  cmd->add_option("--w-offset", n->w_offset, "im2col::w wOffset");
  cmd->add_option("--target", o->target, "target the map is checked for")->capture_default_str();
  auto* scen = cmd->add_option("--scenario", o->scenario, "scenario file whose step --step to draw");
  auto* step = cmd->add_option("--step", n->step, "index of a tensor load in the scenario's program");
  scen->needs(step);
  step->needs(scen);
  cmd->add_option("--format", o->format, "svg, text or json")->capture_default_str();
  cmd->add_option("-o,--output", o->output, "write to FILE (default: standard output)");
  cmd->add_option("--max-lines", n->max_lines, "128-byte lines drawn at most (1..4096, default 64)");
  cmd->callback([o, n, cmd, &status] {
    const std::set<std::string> not_map{"--scenario", "--step", "--format", "--output", "--max-lines", "--help"};
    bool map_given = false;
    for (const CLI::Option* opt : cmd->get_options())
      map_given = map_given || (opt->count() && !not_map.count(opt->get_name()));
    try {
      n->into(*o);
      status = run_layout(*o, map_given);
    } catch (const Failure& f) {
      status = f.status;
    } catch (const DiagnosticError& e) {  // a bad number, the scenario loader: unusable input
      fmt::print(stderr, "{}\n", format(e.diagnostic()));
      status = kUnusable;
    } catch (const std::exception& e) {  // never a crash: anything unexpected is unusable input
      fmt::print(stderr, "tmakit layout: error: {}\n", e.what());
      status = kUnusable;
    }
  });
}

}  // namespace tmakit::cli
