// Names for the driver's side of a map: the encode call of each kind and the CUresult values the
// encode calls return, so a refusal reads "cuTensorMapEncodeTiled refused the map:
// CUDA_ERROR_INVALID_VALUE" even where no driver is loaded to name its own codes (no CUDA needed).
#pragma once
#include <string>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {

// "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide".
const char* encode_call_name(Encode kind);
// The cuda.h name of a CUresult ("CUDA_ERROR_NOT_FOUND"), "CUresult N" for one it does not list.
std::string cu_result_name(int result);
// "cuTensorMapEncodeTiled refused the map: CUDA_ERROR_INVALID_VALUE (…what it means here…)";
// `driver_name` is the driver's own name for the code when it gave one, else null.
std::string encode_refusal(Encode kind, int result, const char* driver_name);

}  // namespace tmakit::tensor_map
