// The driver bridge (library tmakit_driver, CMake tmakit::driver, linked by
// tmakit::device): encode a tmakit TensorMap into a CUtensorMap with the
// driver's own encode calls (cuTensorMapEncodeTiled / Im2col / Im2colWide),
// reached through cudaGetDriverEntryPointByVersion so that nothing links
// libcuda at build time (the runtime is linked statically, nvcc's default).
// The TensorMap enums already use the driver's numbering (§1.2-§1.5), so the
// bridge is a field-by-field copy; the driver's verdict is returned untouched.
#pragma once
#include <cuda.h>

#include <string>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::driver {

// Encodes `map` into `*out` (which must be 64-byte aligned, §1.1). Returns the
// driver's CUresult: CUDA_SUCCESS, or e.g. CUDA_ERROR_INVALID_VALUE when the
// driver refuses the arguments. CUDA_ERROR_NOT_FOUND when the entry point is
// missing (driver too old for that encode kind).
CUresult encode(const tensor_map::TensorMap& map, CUtensorMap* out);

// The driver's name of a CUresult ("CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE");
// cuda.h's name where no driver is loaded to say it (tensor_map/encode_names.hpp).
std::string result_name(CUresult r);

// Throws std::runtime_error naming the map kind and the driver's error when the
// encode fails (for tools that cannot continue without the map).
CUtensorMap encode_or_throw(const tensor_map::TensorMap& map);

}  // namespace tmakit::driver
