// Runs a Scenario on the reference model: allocate, initialise, encode the maps
// (validated as the driver would), parse every step, step, finish, read outputs.
#include "tmakit/model/engine.hpp"
#include "tmakit/model/libcudacxx.hpp"
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

std::string where_of(size_t i, const Step& st) {
  return "program[" + std::to_string(i) + "] (cta " + std::to_string(st.cta) + ")";
}

// A libcu++ call: its preconditions, then each PTX instruction CCCL emits for it,
// stepped like any other (model/libcudacxx.cpp). The instructions' diagnostics name
// the call, so a deadlock in a cuda::barrier::wait says so.
void run_call(model::Engine& engine, const model::LibCall& call, const Step& st, const std::string& where,
              const std::function<void(const std::string&)>& trace) {
  const std::string at = where + " " + std::string(model::call_name(call.kind));
  for (const std::string& text : model::lower_call(call, engine, st.cta, at)) {
    if (trace) trace(at + ": lowered to " + text);
    Diagnostics d;
    auto inst = ptx::parse_instruction(text, d, at);
    if (!inst)
      throw DiagnosticError({Severity::error, "model.internal", "the lowering of a libcu++ call does not parse: " + text, at});
    engine.step(*inst, st.cta, st.thread, at);
  }
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
  // A libcu++ call has no PTX of its own yet: it is checked and lowered when it runs.
  std::vector<std::optional<ptx::Instruction>> program;
  for (size_t i = 0; i < s.program.size(); ++i) {
    const Step& st = s.program[i];
    if (st.call) {
      program.emplace_back();
      continue;
    }
    Diagnostics d;
    auto inst = ptx::parse_instruction(st.ptx, d, where_of(i, st));
    if (!inst) throw DiagnosticError(d.front());
    program.push_back(std::move(*inst));
  }
  for (size_t i = 0; i < program.size(); ++i) {
    const Step& st = s.program[i];
    if (st.call) run_call(engine, *st.call, st, where_of(i, st), opts.trace);
    else engine.step(*program[i], st.cta, st.thread, where_of(i, st));
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
