// The driver bridge under its older names (tmakit::gpu::encode, ...): the
// functions live in the driver library, include/tmakit/driver/encode.hpp.
#pragma once
#include "tmakit/driver/encode.hpp"

namespace tmakit::gpu {
using driver::encode;
using driver::encode_or_throw;
using driver::result_name;
}  // namespace tmakit::gpu
