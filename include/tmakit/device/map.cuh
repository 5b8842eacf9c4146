// A tensor map as a kernel sees it: the driver-encoded CUtensorMap plus the
// bytes one box delivers, computed on the host from TensorMap::bytes_per_box()
// (§2.3, H17), so no kernel ever types a transaction count by hand.
// Pass it by value as a `const __grid_constant__ MapHandle` kernel parameter:
// the tensor-map operand must live in .param, .const or .global (§1.1).
#pragma once
#include <cuda.h>

#include <cstdint>

namespace tmakit::device {

struct MapHandle {
  CUtensorMap map;       // 128 bytes, 64-byte aligned (alignas(64) in cuda.h)
  uint32_t box_bytes;    // mbarrier transaction bytes of one load (§2.3)
  uint32_t rank;         // 1..5: checked against the wrapper's coordinate count in debug builds

  __host__ __device__ const void* ptr() const { return &map; }
  // The transaction bytes of `loads` boxes (what arrive_expect_tx / barrier_arrive_tx arm).
  __host__ __device__ uint32_t bytes(uint32_t loads = 1) const { return box_bytes * loads; }
};

// The tensor-map operand of the copy wrappers: a MapHandle, or a CUtensorMap that
// already lives in .param, .const or .global memory (the GPU engine's map table).
__host__ __device__ inline const void* map_ptr(const MapHandle& m) { return &m.map; }
__host__ __device__ inline const void* map_ptr(const CUtensorMap& m) { return &m; }
template <class M>
concept TensorMapArg = requires(const M& m) { map_ptr(m); };

}  // namespace tmakit::device

// Host side (declared in both nvcc passes; only callable from host code). The
// encoder is the driver library's (tmakit::driver, which tmakit::device links).
#include "tmakit/driver/encode.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::device {

// Encodes the map with the driver and takes the byte count from the map itself.
// Throws std::runtime_error when the driver refuses the map.
inline MapHandle make_map_handle(const tensor_map::TensorMap& m) {
  MapHandle h{};
  h.map = driver::encode_or_throw(m);
  h.box_bytes = static_cast<uint32_t>(m.bytes_per_box());
  h.rank = static_cast<uint32_t>(m.rank);
  return h;
}

}  // namespace tmakit::device
