// Runs a Program on the reference model: allocate, initialise, encode the maps
// (validated as the driver would), step, finish, read outputs.
#include "tmakit/model/engine.hpp"
#include "tmakit/model/libcudacxx.hpp"
#include "tmakit/scenario/program.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {
namespace {

model::Value to_model(const Symbol& sv, const model::GlobalMemory& g, const Program& p) {
  using K = model::Value::Kind;
  switch (sv.kind) {
    case SymbolValue::Kind::integer: return {K::integer, sv.v};
    case SymbolValue::Kind::shared: return {K::shared, sv.v};
    case SymbolValue::Kind::cluster: return {K::cluster, sv.v, sv.rank};
    case SymbolValue::Kind::global:
      return {K::global, static_cast<int64_t>(g.allocation(p.globals[sv.alloc].name)->base) + sv.v};
  }
  return {};
}

// A libcu++ call: its preconditions, then each PTX instruction CCCL emits for it,
// stepped like any other (model/libcudacxx.cpp). The instructions' diagnostics name
// the call, so a deadlock in a cuda::barrier::wait says so.
void run_call(model::Engine& engine, const model::LibCall& call, const ProgramStep& st,
              const std::function<void(const std::string&)>& trace) {
  const std::string at = st.where + " " + std::string(model::call_name(call.kind));
  for (const std::string& text : model::lower_call(call, engine, st.cta, at)) {
    if (trace) trace(at + ": lowered to " + text);
    Diagnostics d;
    auto inst = ptx::parse_instruction(text, d, at);
    if (!inst)
      throw DiagnosticError({Severity::error, "model.internal", "the lowering of a libcu++ call does not parse: " + text, at});
    engine.step(ptx::decode(std::move(*inst)), st.cta, st.thread, at);
  }
}

}  // namespace

RunResult run(const Program& p, const RunOptions& opts) {
  model::EngineConfig cfg;
  cfg.ctas = p.ctas;
  cfg.shared_bytes = p.shared_bytes;
  cfg.target = p.target;
  cfg.ptx_version = p.ptx_version;
  cfg.seed = opts.seed;
  cfg.trace = opts.trace;
  model::Engine engine(cfg);

  for (const auto& g : p.globals) {
    uint64_t base = engine.global().allocate(g.name, g.bytes, g.align);
    g.init.fill({engine.global().find(base, g.bytes), g.bytes});
  }
  for (const auto& si : p.shared_init)
    si.init.fill(std::span(engine.shared(si.cta).bytes).subspan(si.offset, si.bytes));
  for (const auto& m : p.maps) {
    tensor_map::TensorMap map = m.map;
    if (m.alloc >= 0) map.global_address = engine.global().allocation(p.globals[m.alloc].name)->base + m.offset;
    // A map the driver would refuse is an error of the program (§1.3, H17).
    for (const auto& d : tensor_map::validate(map, cfg.target)) {
      if (d.severity == Severity::error)
        throw DiagnosticError({d.severity, d.rule, d.message, "tensor_maps." + m.name + (d.where.empty() ? "" : "." + d.where)});
    }
    engine.define_map(m.name, map);
  }
  for (const auto& [name, v] : p.symbols) engine.set_symbol(name, to_model(v, engine.global(), p));

  for (const auto& st : p.steps) {
    if (st.call) run_call(engine, *st.call, st, opts.trace);
    else engine.step(*st.ptx, st.cta, st.thread, st.where);
  }
  engine.finish();

  RunResult r;
  r.warnings = engine.warnings();
  for (const auto& o : p.outputs) {
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

RunResult run(const Scenario& s, const RunOptions& opts) {
  return run(resolve(s, {opts.target, opts.ptx_version}), opts);
}

}  // namespace tmakit::scenario
