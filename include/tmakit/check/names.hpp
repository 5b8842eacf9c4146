// Kernel names as people read them: CUTLASS and CuTe kernels are mangled C++ names
// of hundreds of characters. readable_kernel_name demangles one and, past `max` characters,
// shortens it as Nsight's "base name" view does: template arguments collapse to <…> from the
// innermost out, and the parameter list to (…). Names that are not mangled come back as given.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tmakit::check {

std::string readable_kernel_name(std::string_view name, size_t max = 100);

}  // namespace tmakit::check
