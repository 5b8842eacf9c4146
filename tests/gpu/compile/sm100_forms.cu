// Compile test (ctest: device.sm100_forms.*): instantiates every sm_100-only
// wrapper of include/tmakit/device/sm100.cuh, so that nvcc and ptxas accept
// each form for sm_100a and for sm_100f. Compiled only (no sm_100 GPU here):
// this is all the testing these wrappers get (docs/device-library.md).
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;

__global__ void sm100_forms(const __grid_constant__ dev::MapHandle tile, const __grid_constant__ dev::MapHandle im,
                            uint8_t* g) {
  __shared__ alignas(128) uint8_t s[4096];
  __shared__ uint64_t bar;
  const int32_t g4[5] = {0, 1, 2, 3, 4};  // {x0, y0, y1, y2, y3}
  const int32_t c2[2] = {0, 0};
  const int32_t c3[3] = {0, 0, 0}, c4[4] = {0, 0, 0, 0}, c5[5] = {0, 0, 0, 0, 0};
  dev::load_tile_gather4(s, tile, g4, &bar);
  dev::load_tile_gather4_cluster(s, tile, g4, &bar);
  dev::load_tile_gather4_multicast(s, tile, g4, &bar, 0x3);
  dev::load_tile_gather4_cta_group<1>(s, tile, g4, &bar);
  dev::load_tile_gather4_cta_group<2>(s, tile, g4, &bar);
  dev::prefetch_tile_gather4(tile, g4);
  dev::store_tile_scatter4(tile, g4, s);
  dev::load_tile_cta_group<1>(s, tile, c2, &bar);
  dev::load_tile_cta_group<2>(s, tile, c5, &bar);
  dev::bulk_store_masked(g, s, 256, 0x00ff);
  dev::load_im2col_w(s, im, c3, 1, 0, &bar);
  dev::load_im2col_w(s, im, c4, 1, 0, &bar);
  dev::load_im2col_w(s, im, c5, 1, 0, &bar);
  dev::load_im2col_w128(s, im, c4, 2, 1, &bar);
  dev::prefetch_im2col_w(im, c3, 1, 0);
  dev::prefetch_im2col_w128(im, c5, 2, 1);
}
