// Program → GPU step records. Every operand is resolved here from the decoded steps
// (ptx/step.hpp) and the resolved program (scenario/program.hpp), as the model's runner
// resolves them: symbols, `sym+imm`, shared offsets and ranks, global allocations (their
// device bases are added by the worker). Nothing is validated beyond what the translation
// needs: on the GPU engine the hardware is the judge, so an instruction the model calls
// undefined (H7, H9, H14, H15) still runs, and faults there.
#include "translator.hpp"

namespace tmakit::gpu::detail {

void unsupported(const std::string& what, const std::string& where) {
  throw DiagnosticError({Severity::error, "gpu.unsupported", what + " (docs/gpu-engine.md lists what the GPU engine runs)", where});
}
void bad_operand(const std::string& what, const std::string& where) {
  throw DiagnosticError({Severity::error, "gpu.operand", what, where});
}

Plan Translator::run() {
  const scenario::Program& s = p_.program;
  if (s.ctas < 1 || s.ctas > kMaxCtas) unsupported("a cluster of " + std::to_string(s.ctas) + " CTAs", "scenario.cluster");
  for (const auto& [name, v] : s.symbols) syms_[name] = v;
  for (const auto& m : s.maps) {
    map_index_[m.name] = static_cast<uint32_t>(p_.maps.size());
    p_.map_names.push_back(m.name);
    tensor_map::TensorMap t = m.map;
    if (m.alloc >= 0) t.global_address = m.offset;
    p_.maps.push_back(t);
    p_.map_alloc.push_back(m.alloc);
  }
  for (const auto& si : s.shared_init) touch(si.offset, si.bytes);
  for (const auto& o : s.outputs)
    if (o.shared) touch(o.offset, o.bytes);

  for (const auto& st : s.steps) {
    const std::string where = where_of(st.index);
    if (st.call) {  // a libcu++ call: its arrival token lives in a register
      if (!st.call->token.empty()) reg(st.call->token);
      continue;
    }
    for (const auto& diag : ptx::check(st.ptx->inst, s.target, s.ptx_version))
      if (diag.severity == Severity::error) throw DiagnosticError({diag.severity, diag.rule, diag.message, where});
    // Destinations (predicates, state tokens) and guards live in registers at run time.
    for (const ptx::Operand* o : ptx::destinations(*st.ptx))
      if (o->kind == ptx::Operand::Kind::value) reg(o->expr.symbol);
    if (st.ptx->guard()) reg(st.ptx->guard()->predicate);
  }
  int max_thread = 0;
  for (const auto& st : s.steps) {
    const std::string where = where_of(st.index);
    if (st.cta < 0 || st.cta >= s.ctas)
      bad_operand("step names CTA " + std::to_string(st.cta) + " of a cluster of " + std::to_string(s.ctas), where);
    if (st.thread < 0 || st.thread > 255) unsupported("thread " + std::to_string(st.thread) + " (the GPU engine runs threads 0..255)", where);
    max_thread = std::max(max_thread, st.thread);
    p_.steps.push_back(st.call ? translate_call(*st.call, st.cta, st.thread, where)
                               : translate(*st.ptx, st.cta, st.thread, where));
    p_.step_alloc.push_back(step_alloc_);
  }
  p_.threads = (max_thread / 32 + 1) * 32;
  if (need_ > s.shared_bytes) need_ = s.shared_bytes;  // the program's own range errors are the hardware's
  p_.shared_need = static_cast<uint32_t>((need_ + 15) / 16 * 16);
  return std::move(p_);
}

Plan translate(const scenario::Scenario& s) { return translate(scenario::resolve(s)); }
Plan translate(scenario::Program program) { return Translator(std::move(program)).run(); }

}  // namespace tmakit::gpu::detail
