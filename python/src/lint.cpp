// ptx/: lint a PTX module, the diagnostics in the shape of `tmakit lint --format json`.
#include <nanobind/stl/optional.h>

#include <optional>

#include "bindings.hpp"
#include "convert.hpp"
#include "tmakit/ptx/lint.hpp"

namespace tmakit::python {
namespace {

// (diagnostics, instructions checked, unusable); each diagnostic (severity, rule, message, where)
// with where = "file:line:col"; a note follows the diagnostic it belongs to.
std::tuple<std::vector<DiagnosticTuple>, size_t, bool> lint(const std::string& text, const std::string& file,
                                                           std::optional<std::string> arch,
                                                           std::optional<std::string> ptx_version) {
  ptx::LintOptions opt;
  if (arch) opt.arch = target_of(*arch, "arch");
  if (ptx_version && !(opt.version = spec::parse_ptx_version(*ptx_version)))
    unusable("python.ptx-version", "\"" + *ptx_version + "\" is not a PTX ISA version (e.g. 8.6)", "ptx_version");
  ptx::LintResult r;
  {
    nb::gil_scoped_release unlocked;
    r = ptx::lint_module(text, file, opt);
  }
  return {to_tuples(r.diags), r.instructions, r.unusable};
}

}  // namespace

void bind_lint(nb::module_& m) {
  m.def("lint", &lint, nb::arg("text"), nb::arg("file"), nb::arg("arch").none(), nb::arg("ptx_version").none());
}

}  // namespace tmakit::python
