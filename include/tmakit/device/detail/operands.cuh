// Helpers of the device library's functions (the generated ones included): shared-memory
// addresses, and the operand padding of the inline PTX (a tensor form's coordinates are
// always the five operands %0..%4, an .im2col form's offsets %5..%7; only the first N are
// named in the instruction text).
#pragma once
#include <cstdint>

namespace tmakit::device {

// The .shared::cta (or .shared::cluster window) address of a generic pointer to shared memory.
__device__ inline uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

namespace detail {

template <class T>
inline constexpr bool dependent_false = false;

struct Coords5 {
  int32_t v[5];
};
template <int N>
__device__ inline Coords5 pad5(const int32_t (&c)[N]) {
  static_assert(N >= 1 && N <= 5, "tensor rank 1..5");
  Coords5 r{};
  for (int i = 0; i < N; ++i) r.v[i] = c[i];
  return r;
}

struct Offsets3 {
  uint16_t v[3];
};
template <int N>
__device__ inline Offsets3 pad3(const uint16_t (&o)[N - 2]) {
  Offsets3 r{};
  for (int i = 0; i < N - 2; ++i) r.v[i] = o[i];
  return r;
}

}  // namespace detail
}  // namespace tmakit::device
