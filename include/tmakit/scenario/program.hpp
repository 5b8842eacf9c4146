// A scenario resolved once for every engine: allocations indexed, maps bound to them,
// symbols typed, every PTX step parsed and decoded. The model's runner, the GPU engine's
// translator and `tmakit layout --scenario` take a Program; each error of the input is
// named here, once, with the field it comes from.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tmakit/ptx/step.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::scenario {

// A symbol's value with its allocation resolved to an index of Program::globals.
struct Symbol {
  SymbolValue::Kind kind = SymbolValue::Kind::integer;
  int64_t v = 0;   // integer, shared offset, or offset into the allocation
  int rank = 0;    // cluster: the CTA rank
  int alloc = -1;  // global: the allocation's index
};

// A tensor map and where its tensor lives: allocation `alloc` at `offset` (the engine adds
// the allocation's base), or, with alloc < 0, the raw map.global_address.
struct BoundMap {
  std::string name;
  tensor_map::TensorMap map;
  int alloc = -1;
  uint64_t offset = 0;
};

struct ProgramStep {
  std::optional<ptx::Step> ptx;         // a PTX step, decoded
  std::optional<model::LibCall> call;   // or a libcu++ call (lowered when it runs)
  int cta = 0, thread = 0;
  size_t index = 0;                     // its place in the scenario's program
  std::string source;                   // the PTX as the scenario writes it (empty for a call)
  std::string where;                    // "program[3] (cta 0)"
};

struct Program {
  spec::Target target{90, spec::Suffix::a};
  spec::PtxVersion ptx_version = spec::kNewestPtx;
  int ctas = 1;
  uint32_t shared_bytes = 232448;
  std::vector<GlobalAlloc> globals;
  std::vector<SharedInit> shared_init;
  std::vector<BoundMap> maps;
  std::vector<std::pair<std::string, Symbol>> symbols;
  std::vector<ProgramStep> steps;
  std::vector<Output> outputs;

  const BoundMap* find_map(std::string_view name) const;
  const Symbol* find_symbol(std::string_view name) const;
  int find_global(std::string_view name) const;  // -1 when none
};

struct ResolveOptions {
  std::optional<spec::Target> target;          // instead of the scenario's
  std::optional<spec::PtxVersion> ptx_version;
};

// Throws InputError for what the scenario names but does not define (an allocation, a
// symbol's form) and the parser's DiagnosticError for a step that does not parse, naming it.
Program resolve(const Scenario& s, const ResolveOptions& opts = {});

// Runs a resolved program on the reference model (runner.cpp). Throws DiagnosticError for a
// program error. opts.target and opts.ptx_version are resolve()'s to apply, not run's.
RunResult run(const Program& p, const RunOptions& opts = {});

// "program[I] (cta C)": how diagnostics name a step.
std::string step_where(size_t index, int cta);

}  // namespace tmakit::scenario
