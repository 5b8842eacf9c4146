// DLPack: the raw facts of an object with __dlpack__ (torch, NumPy, JAX, CuPy ...),
// read through nanobind's ndarray import without copying. The package turns them
// into a map (element strides × element size = byte strides); doing that in
// Python keeps one conversion for live objects and for recorded facts.
#include <nanobind/ndarray.h>

#include <cstdint>

#include "bindings.hpp"
#include "convert.hpp"

namespace tmakit::python {
namespace {

// (shape, strides in elements, (type code, bits, lanes), (device type, device id), data address).
using Facts = std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::tuple<int, int, int>, std::tuple<int, int>,
                         uint64_t>;

Facts dlpack_facts(nb::ndarray<nb::ro> a) {
  std::vector<int64_t> shape, strides;
  for (size_t i = 0; i < a.ndim(); ++i) shape.push_back(a.shape(i)), strides.push_back(a.stride(i));
  const nb::dlpack::dtype t = a.dtype();
  return {shape, strides, {int(t.code), int(t.bits), int(t.lanes)}, {int(a.device_type()), int(a.device_id())},
          uint64_t(reinterpret_cast<uintptr_t>(a.data()))};
}

}  // namespace

void bind_tensor(nb::module_& m) {
  m.def("dlpack_facts", &dlpack_facts, nb::arg("tensor"));
}

}  // namespace tmakit::python
