// Runs a Scenario on the reference model: allocate, initialise, encode the maps
// (validated as the driver would), parse every step, step, finish, read outputs.
#include "tmakit/model/engine.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {
namespace {

model::Value to_model(const SymbolValue& sv, const model::GlobalMemory& g) {
  using K = model::Value::Kind;
  switch (sv.kind) {
    case SymbolValue::Kind::integer: return {K::integer, sv.v};
    case SymbolValue::Kind::shared: return {K::shared, sv.v};
    case SymbolValue::Kind::cluster: return {K::cluster, sv.v, sv.rank};
    case SymbolValue::Kind::global: return {K::global, static_cast<int64_t>(g.allocation(sv.global)->base) + sv.v};
  }
  return {};
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
    engine.set_symbol(name, to_model(parse_symbol(v, "scenario.symbols." + name, s), engine.global()));

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
