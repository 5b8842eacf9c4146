// Small conversions shared by the bindings: JSON text in, diagnostics out.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/scenario/scenario.hpp"
#include "tmakit/spec/target.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace tmakit::python {

// (severity, rule, message, where): the Python package makes Finding objects of these.
using DiagnosticTuple = std::tuple<std::string, std::string, std::string, std::string>;

inline std::vector<DiagnosticTuple> to_tuples(const Diagnostics& diags) {
  std::vector<DiagnosticTuple> out;
  for (const auto& d : diags) out.emplace_back(to_string(d.severity), d.rule, d.message, d.where);
  return out;
}

[[noreturn]] inline void unusable(const std::string& rule, const std::string& message, const std::string& where) {
  throw scenario::InputError({Severity::error, rule, message, where});
}

// JSON text the package wrote (json.dumps); a parse error names `where`.
inline nlohmann::json parse_json(const std::string& text, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) unusable("python.json", "not valid JSON", where);
  return j;
}

inline spec::Target target_of(const std::string& name, const std::string& where) {
  auto t = spec::parse_target(name);
  if (!t) unusable("python.target", "unknown target \"" + name + "\" (e.g. sm_90a, sm_100a)", where);
  return *t;
}

// A map in the scenario format's spelling; its address is "global_address".
// A malformed map is unusable input (InputError), not an invalid one (the validator's findings).
inline tensor_map::TensorMap map_of(const std::string& text, const std::string& where) {
  try {
    return tensor_map::map_from_json(parse_json(text, where), where).map;
  } catch (const scenario::InputError&) {
    throw;
  } catch (const DiagnosticError& e) {
    throw scenario::InputError(e.diagnostic());
  }
}

}  // namespace tmakit::python
