// The pieces of tmakit._core, one file per layer it reaches (docs/python.md).
// The bindings hold no logic of their own: JSON text in (the scenario format's
// spelling of maps and scenarios), the C++ layers' answers out. A DiagnosticError
// becomes tmakit._core.ProgramError, a scenario::InputError or any other failure
// tmakit._core.InputError, both with args (severity, rule, message, where); the
// Python package turns them into its MapError, ModelError and InputError.
#pragma once
#include <nanobind/nanobind.h>

namespace tmakit::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_maps(nb::module_& m);
void bind_layout(nb::module_& m);
void bind_model(nb::module_& m);
void bind_lint(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_explain(nb::module_& m);  // explain.cpp

}  // namespace tmakit::python
