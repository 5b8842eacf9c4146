// Validates a tensor map whose 300-element box is over the 256 limit and prints
// every diagnostic; exits 1 when the validator found an error (expected here).
#include <cstdio>

#include "tmakit/tensor_map/tensor_map.hpp"

int main() {
  using namespace tmakit;
  tensor_map::TensorMap m;
  m.data_type = tensor_map::DataType::float32;
  m.rank = 2;
  m.global_address = 0x10000;
  m.dims = {1024, 1024};
  m.strides = {4096};
  m.box = {300, 32};  // box[0] > 256
  const auto target = spec::parse_target("sm_90a");
  if (!target) return 2;
  const Diagnostics d = tensor_map::validate(m, *target);
  for (const Diagnostic& x : d) std::printf("%s\n", format(x).c_str());
  return d.has_errors() ? 1 : 0;
}
