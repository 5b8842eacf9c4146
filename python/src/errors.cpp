// C++ exceptions → Python exceptions that keep the diagnostic's fields, so the
// package can raise MapError / ModelError / InputError with rule, step and message.
#include <Python.h>

#include <exception>
#include <new>

#include "bindings.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::python {
namespace {

PyObject* input_error = nullptr;    // unusable input: malformed JSON, wrong fields
PyObject* program_error = nullptr;  // a diagnosed error of the map or program

void raise(PyObject* type, const Diagnostic& d) {
  PyObject* args = Py_BuildValue("(ssss)", to_string(d.severity), d.rule.c_str(), d.message.c_str(), d.where.c_str());
  if (!args) return;  // Py_BuildValue set the error (e.g. a message that is not UTF-8)
  PyErr_SetObject(type, args);
  Py_DECREF(args);
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const scenario::InputError& e) {  // before DiagnosticError, its base
    raise(input_error, e.diagnostic());
  } catch (const DiagnosticError& e) {
    raise(program_error, e.diagnostic());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const nb::python_error&) {
    throw;  // already a Python exception: nanobind restores it
  } catch (const nb::builtin_exception&) {
    throw;  // nanobind's own (TypeError, ValueError, ...)
  } catch (const std::exception& e) {  // never a crash: anything else is unusable input
    raise(input_error, Diagnostic{Severity::error, "python.internal", e.what(), ""});
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  input_error = PyErr_NewException("tmakit._core.InputError", PyExc_ValueError, nullptr);
  program_error = PyErr_NewException("tmakit._core.ProgramError", PyExc_RuntimeError, nullptr);
  m.attr("InputError") = nb::handle(input_error);
  m.attr("ProgramError") = nb::handle(program_error);
  nb::register_exception_translator(translate);
}

}  // namespace tmakit::python
