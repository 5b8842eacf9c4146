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

// An inlined function's name for a note (docs/check-replay.md, "Places"): as readable_kernel_name,
// with two namespaces no one writes taken out first: nvcc's namespace of a file's internal
// functions (`_INTERNAL_b290a375_10_inlined_cu_ba98402e::`) and libcu++'s versioned inline one
// (`cuda::ptx::__4::mbarrier_init` reads `cuda::ptx::mbarrier_init`).
std::string readable_function_name(std::string_view name, size_t max = 80);

}  // namespace tmakit::check
