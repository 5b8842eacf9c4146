// scenario::resolve (program.hpp): the one place a scenario's names are bound.
#include "tmakit/scenario/program.hpp"

#include <algorithm>

namespace tmakit::scenario {

std::string step_where(size_t index, int cta) {
  return "program[" + std::to_string(index) + "] (cta " + std::to_string(cta) + ")";
}

const BoundMap* Program::find_map(std::string_view name) const {
  auto it = std::find_if(maps.begin(), maps.end(), [&](const BoundMap& m) { return m.name == name; });
  return it == maps.end() ? nullptr : &*it;
}

const Symbol* Program::find_symbol(std::string_view name) const {
  auto it = std::find_if(symbols.begin(), symbols.end(), [&](const auto& kv) { return kv.first == name; });
  return it == symbols.end() ? nullptr : &it->second;
}

int Program::find_global(std::string_view name) const {
  for (size_t i = 0; i < globals.size(); ++i)
    if (globals[i].name == name) return static_cast<int>(i);
  return -1;
}

Program resolve(const Scenario& s, const ResolveOptions& opts) {
  Program p;
  p.target = opts.target.value_or(s.target);
  p.ptx_version = opts.ptx_version.value_or(s.ptx_version);
  p.ctas = s.ctas;
  p.shared_bytes = s.shared_bytes;
  p.globals = s.globals;
  p.shared_init = s.shared_init;
  p.outputs = s.outputs;

  for (const auto& [name, src] : s.maps) {
    BoundMap m{name, src.map, -1, 0};
    if (!src.global.empty()) {
      m.alloc = p.find_global(src.global);
      if (m.alloc < 0)
        throw InputError({Severity::error, "scenario.field", "no global allocation named \"" + src.global + "\"",
                          "scenario.tensor_maps." + name + ".global"});
      m.offset = src.offset;
    }
    p.maps.push_back(std::move(m));
  }
  for (const auto& [name, v] : s.symbols) {
    const SymbolValue sv = parse_symbol(v, "scenario.symbols." + name, s);
    p.symbols.push_back({name, Symbol{sv.kind, sv.v, sv.rank, sv.kind == SymbolValue::Kind::global ? p.find_global(sv.global) : -1}});
  }
  // Every step parsed and decoded before any runs, so a typo in step 9 costs no run.
  for (size_t i = 0; i < s.program.size(); ++i) {
    const Step& st = s.program[i];
    ProgramStep ps;
    ps.cta = st.cta;
    ps.thread = st.thread;
    ps.index = i;
    ps.where = step_where(i, st.cta);
    ps.source = st.ptx;
    if (st.call) {
      ps.call = st.call;
    } else {
      Diagnostics d;
      auto inst = ptx::parse_instruction(st.ptx, d, ps.where);
      if (!inst) throw DiagnosticError(d.front());
      ps.ptx = ptx::decode(std::move(*inst));
    }
    p.steps.push_back(std::move(ps));
  }
  return p;
}

}  // namespace tmakit::scenario
