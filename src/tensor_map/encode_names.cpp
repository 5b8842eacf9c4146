// Encode-call and CUresult names (include/tmakit/tensor_map/encode_names.hpp). The numbers are
// cuda.h's (a stable ABI); only those a tensor-map encode or its entry-point lookup returns.
#include "tmakit/tensor_map/encode_names.hpp"

namespace tmakit::tensor_map {

const char* encode_call_name(Encode kind) {
  switch (kind) {
    case Encode::tiled: return "cuTensorMapEncodeTiled";
    case Encode::im2col: return "cuTensorMapEncodeIm2col";
    case Encode::im2col_wide: return "cuTensorMapEncodeIm2colWide";
  }
  return "cuTensorMapEncode";
}

std::string cu_result_name(int result) {
  switch (result) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 999: return "CUDA_ERROR_UNKNOWN";
  }
  return "CUresult " + std::to_string(result);
}

std::string encode_refusal(Encode kind, int result, const char* driver_name) {
  std::string text = std::string(encode_call_name(kind)) + " refused the map: " +
                     (driver_name && *driver_name ? std::string(driver_name) : cu_result_name(result));
  if (result == 1) text += " (the arguments break a driver rule: `tmakit map` names it)";
  if (result == 500) text += " (no CUDA driver was found, or it is too old for this encode call)";
  if (result == 34 || result == 35 || result == 100) text += " (no usable GPU driver on this machine)";
  return text;
}

}  // namespace tmakit::tensor_map
