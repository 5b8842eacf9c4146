// tmakit.explain(rule): the text of `tmakit explain RULE` (src/explain), or None for an unknown id.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "tmakit/explain/explain.hpp"

namespace tmakit::python {

void bind_explain(nb::module_& m) {
  m.def(
      "explain",
      [](const std::string& rule) -> std::optional<std::string> {
        auto e = explain::explain(rule);
        if (!e) return std::nullopt;
        return explain::format(*e);
      },
      nb::arg("rule"));
  m.def("explain_rules", [] { return explain::documented_rules(); });
}

}  // namespace tmakit::python
