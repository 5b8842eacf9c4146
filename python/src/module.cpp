// tmakit._core: the nanobind module. Python users import `tmakit`, never this.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "tmakit's C++ core (use the tmakit package, not this module)";
  tmakit::python::bind_errors(m);
  tmakit::python::bind_maps(m);
  tmakit::python::bind_layout(m);
  tmakit::python::bind_model(m);
  tmakit::python::bind_lint(m);
  tmakit::python::bind_tensor(m);
  tmakit::python::bind_explain(m);
}
