// Negative compile test (ctest: device.sm100_gate.*): an sm_100 form used in
// code compiled for another target must stop the build with a message that
// names the form and both targets (tests/gpu/compile/CMakeLists.txt checks it).
#include "tmakit/device/tma.cuh"

__global__ void uses_gather4(const __grid_constant__ tmakit::device::MapHandle m) {
  __shared__ alignas(128) uint8_t s[1024];
  __shared__ uint64_t bar;
  (void)bar;
  const int32_t c[5] = {0, 0, 1, 2, 3};
#ifdef TMAKIT_TEST_FAMILY_FORM  // an sm_100a/f-only form compiled for plain sm_100
  tmakit::device::store_tile_scatter4(m, c, s);
#else
  tmakit::device::load_tile_gather4(s, m, c, &bar);
#endif
}
