// tensor_map/: parse, validate, derived sizes, coordinate checks.
#include <nanobind/stl/map.h>

#include <cstdint>
#include <map>

#include "bindings.hpp"
#include "convert.hpp"

namespace tmakit::python {
namespace {

namespace tm = tensor_map;

// The map as the C++ layer reads it, written back: defaults filled in, names canonical.
std::string canonical(const std::string& text, const std::string& where) {
  return tm::map_to_json(map_of(text, where)).dump();
}

std::vector<DiagnosticTuple> validate(const std::string& text, const std::string& target) {
  return to_tuples(tm::validate(map_of(text, "map"), target_of(target, "target")));
}

// The sizes `tmakit map` prints (map_command.cpp's report), by name.
std::map<std::string, uint64_t> facts(const std::string& text) {
  const tm::TensorMap m = map_of(text, "map");
  return {{"bytes_per_box", m.bytes_per_box()},     {"smem_footprint", m.smem_footprint()},
          {"smem_alignment", m.smem_alignment()},   {"swizzle_period", m.swizzle_period()},
          {"row_bytes", m.row_bytes()},             {"row_pitch", m.row_pitch()},
          {"rows", m.rows()},                       {"element_bits", uint64_t(tm::smem_bits_per_element(m.data_type))}};
}

tm::Direction direction_of(const std::string& name) {
  if (name == "load") return tm::Direction::load;
  if (name == "store") return tm::Direction::store;
  if (name == "reduce") return tm::Direction::reduce;
  if (name == "prefetch") return tm::Direction::prefetch;
  unusable("python.direction", "\"" + name + "\" is not one of load, store, reduce, prefetch", "direction");
}

std::vector<DiagnosticTuple> check_coordinates(const std::string& text, const std::vector<int32_t>& coords,
                                               const std::string& direction, const std::string& target) {
  return to_tuples(tm::check_coordinates(map_of(text, "map"), coords, direction_of(direction),
                                         target_of(target, "target")));
}

}  // namespace

void bind_maps(nb::module_& m) {
  m.def("map_canonical", &canonical, nb::arg("map_json"), nb::arg("where"));
  m.def("map_validate", &validate, nb::arg("map_json"), nb::arg("target"));
  m.def("map_facts", &facts, nb::arg("map_json"));
  m.def("map_check_coordinates", &check_coordinates, nb::arg("map_json"), nb::arg("coords"), nb::arg("direction"),
        nb::arg("target"));
}

}  // namespace tmakit::python
