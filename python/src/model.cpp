// scenario/ + model/: run a scenario on the reference model, its inputs given as
// bytes. The GIL is released while the model runs.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "bindings.hpp"
#include "convert.hpp"

namespace tmakit::python {
namespace {

using Outputs = std::vector<std::pair<std::string, nb::bytes>>;

// A scenario (JSON text) whose `init: {"file": F}` entries resolve against `folder`
// (confined to it, as `tmakit run` does); `inputs` replace the named global
// allocations' initial bytes (each must have the allocation's size).
// Returns the outputs by name and the model's warnings.
std::pair<Outputs, std::vector<DiagnosticTuple>> run(const std::string& scenario_json, const std::string& folder,
                                                     const std::vector<std::pair<std::string, nb::bytes>>& inputs,
                                                     std::optional<uint64_t> seed) {
  scenario::Scenario s = scenario::from_json(parse_json(scenario_json, "scenario"), folder);
  for (const auto& [name, data] : inputs) {
    auto g = std::find_if(s.globals.begin(), s.globals.end(), [&](const auto& a) { return a.name == name; });
    if (g == s.globals.end())
      unusable("python.input-unknown", "\"" + name + "\" is not a global allocation of the scenario",
               "inputs[\"" + name + "\"]");
    if (data.size() != g->bytes)
      unusable("python.input-size",
               "the array has " + std::to_string(data.size()) + " bytes; the allocation has " +
                   std::to_string(g->bytes),
               "inputs[\"" + name + "\"]");
    g->init.kind = scenario::Init::Kind::hex;  // exact bytes, as {"hex": ...} gives them
    const auto* p = reinterpret_cast<const uint8_t*>(data.c_str());
    g->init.bytes.assign(p, p + data.size());
  }
  scenario::RunOptions opts;
  opts.seed = seed;
  scenario::RunResult r;
  {
    nb::gil_scoped_release unlocked;
    r = scenario::run(s, opts);
  }
  Outputs out;
  for (const auto& [name, bytes] : r.outputs) out.emplace_back(name, nb::bytes(bytes.data(), bytes.size()));
  return {std::move(out), to_tuples(r.warnings)};
}

}  // namespace

void bind_model(nb::module_& m) {
  m.def("run", &run, nb::arg("scenario_json"), nb::arg("folder"), nb::arg("inputs"), nb::arg("seed").none());
}

}  // namespace tmakit::python
