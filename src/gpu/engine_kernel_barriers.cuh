// The kernel's mbarrier steps (arrives, waits at cta/cluster scope), plain stores and the
// libcu++ <cuda/barrier> calls of scenario `call` steps.
// Part of the GPU engine's kernel (engine_kernel.cu, docs/gpu-engine.md): included there only,
// into the one translation unit of the kernel.
#pragma once
#include "engine_kernel_common.cuh"

namespace tmakit::gpu::detail {
namespace {

// ---- mbarriers (§8) ----

// A local arrive (returns the state token) at scope S.
template <Scope S>
__device__ uint64_t arrive_local(const Step& s, uint64_t* bar) {
  if (s.flags & kDrop) {
    if (s.flags & kExpectTx) return dev::arrive_drop_expect_tx<S>(bar, s.size);
    if (s.flags & kHasCount) return dev::arrive_drop<S>(bar, s.size);
    return dev::arrive_drop<S>(bar);
  }
  if (s.flags & kExpectTx) return dev::arrive_expect_tx<S>(bar, s.size);
  if (s.flags & kHasCount) return dev::arrive<S>(bar, s.size);
  return dev::arrive<S>(bar);
}
// An arrive on another CTA's barrier (`_`: no state).
__device__ void arrive_remote(const Step& s, uint64_t* bar) {
  if (s.flags & kDrop) {
    if (s.flags & kExpectTx) dev::arrive_drop_expect_tx_cluster(bar, s.size);
    else if (s.flags & kHasCount) dev::arrive_drop_cluster(bar, s.size);
    else dev::arrive_drop_cluster(bar);
  } else {
    if (s.flags & kExpectTx) dev::arrive_expect_tx_cluster(bar, s.size);
    else if (s.flags & kHasCount) dev::arrive_cluster(bar, s.size);
    else dev::arrive_cluster(bar);
  }
}
__device__ unsigned long long mbar_arrive(const Step& s, uint64_t* bar) {
  if (s.flags & kRemote) {
    arrive_remote(s, bar);
    return 0;
  }
  return s.flags & kClusterScope ? arrive_local<Scope::cluster>(s, bar) : arrive_local<Scope::cta>(s, bar);
}

// One test of the phase (test_wait never blocks; try_wait may suspend for a
// system-dependent time and is retried by the caller).
template <Scope S>
__device__ bool mbar_test_at(const Step& s, uint64_t* bar, unsigned long long v, bool try_wait) {
  if (s.flags & kParity) {
    const uint32_t parity = static_cast<uint32_t>(v & 1);
    return try_wait ? dev::try_wait_parity<S>(bar, parity) : dev::test_wait_parity<S>(bar, parity);
  }
  return try_wait ? dev::try_wait<S>(bar, v) : dev::test_wait<S>(bar, v);
}
__device__ bool mbar_test(const Step& s, uint64_t* bar, unsigned long long v, bool try_wait) {
  return s.flags & kClusterScope ? mbar_test_at<Scope::cluster>(s, bar, v, try_wait)
                                 : mbar_test_at<Scope::cta>(s, bar, v, try_wait);
}

// st.shared / st.global of s.size bytes (volatile: exactly one store of that width).
__device__ void plain_store(const Step& s, void* p) {
  const unsigned long long v = s.value;
  switch (s.size) {
    case 1: *static_cast<volatile uint8_t*>(p) = static_cast<uint8_t>(v); break;
    case 2: *static_cast<volatile uint16_t*>(p) = static_cast<uint16_t>(v); break;
    case 4: *static_cast<volatile uint32_t*>(p) = static_cast<uint32_t>(v); break;
    default: *static_cast<volatile uint64_t*>(p) = v; break;
  }
}

// ---- libcu++ <cuda/barrier> calls (scenario `call` steps, spec §12) ----

using Barrier = cuda::barrier<cuda::thread_scope_block>;
__device__ __forceinline__ Barrier& barrier_at(uint8_t* win, uint32_t off) { return *reinterpret_cast<Barrier*>(win + off); }

template <size_t A>
__device__ __forceinline__ void memcpy_tx(uint8_t* dst, const uint8_t* src, uint32_t size, Barrier& bar) {
  cuda::device::memcpy_async_tx(dst, src, cuda::aligned_size_t<A>(size), bar);
}
// The alignment is a template argument of aligned_size_t: the host allows 16 .. 4096.
__device__ void lib_memcpy_async_tx(const Step& s, uint8_t* win) {
  uint8_t* dst = win + s.smem;
  const auto* src = reinterpret_cast<const uint8_t*>(s.gaddr);
  Barrier& bar = barrier_at(win, s.mbar);
  switch (s.value) {
    case 16: memcpy_tx<16>(dst, src, s.size, bar); break;
    case 32: memcpy_tx<32>(dst, src, s.size, bar); break;
    case 64: memcpy_tx<64>(dst, src, s.size, bar); break;
    case 128: memcpy_tx<128>(dst, src, s.size, bar); break;
    case 256: memcpy_tx<256>(dst, src, s.size, bar); break;
    case 512: memcpy_tx<512>(dst, src, s.size, bar); break;
    case 1024: memcpy_tx<1024>(dst, src, s.size, bar); break;
    case 2048: memcpy_tx<2048>(dst, src, s.size, bar); break;
    default: memcpy_tx<4096>(dst, src, s.size, bar); break;
  }
}
// One poll of bar.wait(token): wait() loops on __try_wait(token), which try_wait_for
// reaches with a zero duration (one mbarrier.try_wait.shared.b64).
__device__ __forceinline__ bool lib_try_wait(Barrier& bar, unsigned long long token) {
  return bar.try_wait_for(Barrier::arrival_token(token), cuda::std::chrono::nanoseconds(0));
}

}  // namespace
}  // namespace tmakit::gpu::detail
