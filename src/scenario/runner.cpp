// Runs a Scenario on the reference model: allocate, initialise, encode the maps
// (validated as the driver would), parse every step, step, finish, read outputs.
#include <charconv>

#include "tmakit/model/engine.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {
namespace {

[[noreturn]] void bad(const std::string& where, const std::string& message) {
  throw InputError({Severity::error, "scenario.symbol", message, where});
}

std::optional<int64_t> parse_int(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

model::Value symbol_value(const nlohmann::json& v, const std::string& where, const model::GlobalMemory& g, int ctas) {
  using K = model::Value::Kind;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) bad(where, "integer too large");
    return {K::integer, v.get<int64_t>()};
  }
  if (!v.is_string()) bad(where, "must be an integer or a string, got " + v.dump());
  std::string s = v.get<std::string>();
  if (auto n = parse_int(s)) return {K::integer, *n};
  auto offset = [&](std::string_view t) {
    auto n = parse_int(t);
    if (!n || *n < 0) bad(where, "bad offset \"" + std::string(t) + "\" in \"" + s + "\"");
    return *n;
  };
  if (s.rfind("shared:", 0) == 0) return {K::shared, offset(std::string_view(s).substr(7))};
  if (s.rfind("shared@", 0) == 0) {
    auto colon = s.find(':');
    if (colon == std::string::npos) bad(where, "expected shared@RANK:OFFSET, got \"" + s + "\"");
    int64_t rank = offset(std::string_view(s).substr(7, colon - 7));
    if (rank >= ctas) bad(where, "CTA rank " + std::to_string(rank) + " is not in a cluster of " + std::to_string(ctas));
    return {K::cluster, offset(std::string_view(s).substr(colon + 1)), static_cast<int>(rank)};
  }
  if (s.rfind("global:", 0) == 0) {
    std::string rest = s.substr(7);
    auto plus = rest.find('+');
    std::string name = rest.substr(0, plus);
    int64_t off = plus == std::string::npos ? 0 : offset(std::string_view(rest).substr(plus + 1));
    const model::Allocation* a = g.allocation(name);
    if (!a) bad(where, "no global allocation named \"" + name + "\"");
    return {K::global, static_cast<int64_t>(a->base) + off};
  }
  bad(where, "expected an integer, \"shared:OFF\", \"shared@R:OFF\" or \"global:NAME+OFF\", got \"" + s + "\"");
}

}  // namespace

RunResult run(const Scenario& s, const RunOptions& opts) {
  model::EngineConfig cfg;
  cfg.ctas = s.ctas;
  cfg.shared_bytes = s.shared_bytes;
  cfg.target = opts.target.value_or(s.target);
  cfg.ptx_version = opts.ptx_version.value_or(s.ptx_version);
  cfg.seed = opts.seed;
  cfg.trace = opts.trace;
  model::Engine engine(cfg);

  for (const auto& g : s.globals) {
    uint64_t base = engine.global().allocate(g.name, g.bytes, g.align);
    g.init.fill({engine.global().find(base, g.bytes), g.bytes});
  }
  for (const auto& si : s.shared_init)
    si.init.fill(std::span(engine.shared(si.cta).bytes).subspan(si.offset, si.bytes));
  for (const auto& [name, src] : s.maps) {
    tensor_map::TensorMap map = src.map;
    if (!src.global.empty()) {
      const model::Allocation* a = engine.global().allocation(src.global);
      if (!a) throw InputError({Severity::error, "scenario.field", "no global allocation named \"" + src.global + "\"",
                                "scenario.tensor_maps." + name + ".global"});
      map.global_address = a->base + src.offset;
    }
    // A map the driver would refuse is an error of the program (§1.3, H17).
    for (const auto& d : tensor_map::validate(map, cfg.target)) {
      if (d.severity == Severity::error)
        throw DiagnosticError({d.severity, d.rule, d.message, "tensor_maps." + name + (d.where.empty() ? "" : "." + d.where)});
    }
    engine.define_map(name, map);
  }
  for (const auto& [name, v] : s.symbols)
    engine.set_symbol(name, symbol_value(v, "scenario.symbols." + name, engine.global(), s.ctas));

  // Parse every step before running any, so a typo in step 9 costs no run.
  std::vector<ptx::Instruction> program;
  for (size_t i = 0; i < s.program.size(); ++i) {
    const Step& st = s.program[i];
    std::string where = "program[" + std::to_string(i) + "] (cta " + std::to_string(st.cta) + ")";
    Diagnostics d;
    auto inst = ptx::parse_instruction(st.ptx, d, where);
    if (!inst) throw DiagnosticError(d.front());
    program.push_back(std::move(*inst));
  }
  for (size_t i = 0; i < program.size(); ++i) {
    const Step& st = s.program[i];
    engine.step(program[i], st.cta, st.thread,
                "program[" + std::to_string(i) + "] (cta " + std::to_string(st.cta) + ")");
  }
  engine.finish();

  RunResult r;
  r.warnings = engine.warnings();
  for (const auto& o : s.outputs) {
    std::vector<uint8_t> bytes;
    if (o.shared) {
      const auto& sm = engine.shared(o.cta).bytes;
      bytes.assign(sm.begin() + o.offset, sm.begin() + o.offset + o.bytes);
    } else {
      const model::Allocation* a = engine.global().allocation(o.global);
      bytes.assign(a->bytes.begin() + o.offset, a->bytes.begin() + o.offset + o.bytes);
    }
    r.outputs.emplace_back(o.name, std::move(bytes));
  }
  return r;
}

}  // namespace tmakit::scenario
