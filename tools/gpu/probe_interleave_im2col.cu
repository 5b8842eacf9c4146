// Q26 probe, im2col half: what an interleaved (16B / 32B) im2col load does on the H100
// when C spans more than one slice. Same self-describing design as probe_interleave.cu
// (standalone, not part of the CMake build):
//  - global: a 4 MiB allocation whose byte k of word i holds 0x80 | k << 5 | (i >> 5k) & 31
//    (every byte names its own offset; never the marker, never a zero fill), the map's
//    tensor at 2 MiB so that reads before or after it stay inside the allocation;
//  - shared: a 48 KiB window pre-filled with 0x11, the destination at window offset 4096
//    (+ dst_extra); the whole window comes back whatever happened;
//  - the mbarrier is polled with test_wait up to a %globaltimer bound (nothing hangs);
//  - each map runs armed with 2^20 - 1 bytes (never completes: shows every delivered
//    byte), then with the bytes that launch delivered and with 16 more (complete_tx =
//    delivered bytes iff the first completes and the second does not); a fault ends the
//    process with exit 3 after naming the case, and the device command resumes after it.
// tools/gpu/probe_interleave_im2col_check.py decodes the dumps and checks the rule of
// docs/hardware-notes.md "interleave decisions" (im2col). Output:
// tests/vectors/logs/q26-im2col-probe/ (results-1/bins-1: cases 0-69, results-2/bins-2: 70-98).
// Usage: probe_interleave_im2col OUTDIR FIRST_CASE | --count
// Build: nvcc -std=c++20 -gencode=arch=compute_90a,code=sm_90a -Iinclude
//        tools/gpu/probe_interleave_im2col.cu src/driver/encode.cpp build-gpu/libtmakit_tensor_map.a -lfmt
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "probe_common.cuh"
#include "tmakit/device/tma.cuh"
#include "tmakit/gpu/encode.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace dev = tmakit::device;
namespace tmap_ns = tmakit::tensor_map;

using namespace probe_common;

struct Info {
  uint64_t done, done_ns;
};

template <int N>
__device__ void issue(void* dst, const CUtensorMap& m, const int32_t* c, const uint16_t* o, uint64_t* bar) {
  int32_t k[N];
  uint16_t off[N - 2];
  for (int i = 0; i < N; ++i) k[i] = c[i];
  for (int i = 0; i < N - 2; ++i) off[i] = o[i];
  dev::load_im2col(dst, m, k, off, bar);
}

__global__ void probe(const __grid_constant__ CUtensorMap map, int rank, int4 c03, int c4, uint4 offs, uint32_t arm,
                      uint32_t dst, uint32_t* window_out, Info* info) {
  extern __shared__ __align__(1024) uint8_t raw[];
  __shared__ uint64_t bar;
  uint8_t* win = marked_window(raw);
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    dev::fence_proxy_async_shared();
    dev::arrive_expect_tx(&bar, arm);
    const int32_t c[5] = {c03.x, c03.y, c03.z, c03.w, c4};
    const uint16_t o[3] = {uint16_t(offs.x), uint16_t(offs.y), uint16_t(offs.z)};
    const uint64_t t0 = dev::global_timer_ns();
    if (rank == 3) issue<3>(win + dst, map, c, o, &bar);
    else if (rank == 4) issue<4>(win + dst, map, c, o, &bar);
    else issue<5>(win + dst, map, c, o, &bar);
    uint64_t done_ns = 0;
    info->done = poll(&bar, t0, &done_ns);
    info->done_ns = done_ns;
    settle();
  }
  copy_window_out(win, window_out);
}

struct Case {
  const char* name;
  tmap_ns::DataType type;
  int il;  // 0 none, 1 16B, 2 32B
  int swz;
  int rank;
  std::array<uint64_t, 5> dims;
  std::array<uint64_t, 4> strides;  // bytes, dimensions 1..rank-1
  uint32_t cpp, ppc;
  std::array<int32_t, 3> lower, upper;  // entry 0 = W
  std::array<uint32_t, 5> es;
  std::array<int32_t, 5> c;
  std::array<uint16_t, 3> offs;
  uint32_t dst_extra = 0;
  tmap_ns::OobFill fill = tmap_ns::OobFill::zero;
};

using D = tmap_ns::DataType;
#define BASE_DIMS {8, 5, 4, 2}
#define BASE_STR {256, 2048, 16384}
#define Z3 {0, 0, 0}
#define ES1 {1, 1, 1, 1, 1}
// Base: uint32, interleave 16B (4 elements a slice), rank 4 {C 8, W 5, H 4, N 2}, padded
// strides so each dimension's part of an address is recognisable.
const std::vector<Case> kCases = {
    {"ctl_none_base", D::uint32, 0, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"base", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"cpp4", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"cpp2", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 2, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"cpp12", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 12, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"cpp16", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"cpp1", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 1, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"C4_cpp4", D::uint32, 1, 0, 4, {4, 5, 4, 2}, BASE_STR, 4, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"C12_cpp12", D::uint32, 1, 0, 4, {12, 5, 4, 2}, BASE_STR, 12, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"C6_cpp8", D::uint32, 1, 0, 4, {6, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"C10_cpp8", D::uint32, 1, 0, 4, {10, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"C2_cpp8", D::uint32, 1, 0, 4, {2, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"c4_cpp4", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {4, 0, 0, 0}, Z3},
    {"c4_cpp8", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {4, 0, 0, 0}, Z3},
    {"c2_cpp4", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {2, 0, 0, 0}, Z3},
    {"c1_cpp4", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {1, 0, 0, 0}, Z3},
    {"cm4_cpp8", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {-4, 0, 0, 0}, Z3},
    {"c8_cpp4", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {8, 0, 0, 0}, Z3},
    {"offs10", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, {1, 0, 0}},
    {"offs01", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, {0, 1, 0}},
    {"offs23", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, {2, 3, 0}},
    {"corners_m1", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, {-1, -1, 0}, {0, 0, 0}, ES1, {0, -1, -1, 0}, Z3},
    {"corners_m1_up1", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 12, {-1, -1, 0}, {1, 1, 0}, ES1, {0, 0, -1, 0},
     {1, 0, 0}},
    {"wwrap_ppc16", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 16, Z3, Z3, ES1, {0, 2, 1, 0}, Z3},
    {"npast_ppc32", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 4, 32, Z3, Z3, ES1, {0, 0, 1, 1}, Z3},
    {"nstart2", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 0, 2}, Z3},
    {"nneg", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 1, 3, -1}, Z3},
    {"ppc1", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 1, Z3, Z3, ES1, {0, 2, 1, 1}, Z3},
    {"ppc2", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 2, Z3, Z3, ES1, {0, 2, 1, 1}, Z3},
    {"ppc32", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 32, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"es_w2", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, {1, 2, 1, 1, 1}, {0, 0, 0, 0}, Z3},
    {"es0_2", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, {2, 1, 1, 1, 1}, {0, 0, 0, 0}, Z3},
    {"es_n2", D::uint32, 1, 0, 4, {8, 3, 2, 4}, BASE_STR, 8, 16, Z3, Z3, {1, 1, 1, 2, 1}, {0, 0, 0, 0}, Z3},
    {"r3", D::uint32, 1, 0, 3, {8, 7, 3}, {256, 4096}, 8, 8, Z3, Z3, ES1, {0, 1, 0}, Z3},
    {"r3_c4_offs2", D::uint32, 1, 0, 3, {8, 7, 3}, {256, 4096}, 8, 8, Z3, Z3, ES1, {4, 0, 1}, {2, 0, 0}},
    {"r5", D::uint32, 1, 0, 5, {8, 3, 3, 2, 2}, {256, 1024, 4096, 16384}, 8, 12, Z3, Z3, ES1, {0, 0, 0, 0, 0}, Z3},
    {"r5_offs111", D::uint32, 1, 0, 5, {8, 3, 3, 2, 2}, {256, 1024, 4096, 16384}, 8, 12, Z3, Z3, ES1,
     {0, 0, 0, 0, 0}, {1, 1, 1}},
    {"packed", D::uint32, 1, 0, 4, BASE_DIMS, {32, 160, 640}, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"packed_c4_cpp4", D::uint32, 1, 0, 4, BASE_DIMS, {32, 160, 640}, 4, 8, Z3, Z3, ES1, {4, 1, 0, 0}, Z3},
    {"q26_replica", D::uint16, 1, 0, 4, {16, 4, 4, 1}, {32, 128, 512}, 8, 8, Z3, Z3, ES1, {8, 0, 0, 0}, {1, 0, 0}},
    {"q26_replica_c0", D::uint16, 1, 0, 4, {16, 4, 4, 1}, {32, 128, 512}, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, {1, 0, 0}},
    {"q26_replica_c0_o0", D::uint16, 1, 0, 4, {16, 4, 4, 1}, {32, 128, 512}, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"ctl_none_q26", D::uint16, 0, 0, 4, {16, 4, 4, 1}, {32, 128, 512}, 8, 8, Z3, Z3, ES1, {8, 0, 0, 0}, {1, 0, 0}},
    {"u16_C16_cpp16", D::uint16, 1, 0, 4, {16, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"u16_C16_cpp8_c8", D::uint16, 1, 0, 4, {16, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {8, 0, 0, 0}, Z3},
    {"u16_C24_cpp8_c8", D::uint16, 1, 0, 4, {24, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {8, 0, 0, 0}, {1, 0, 0}},
    {"u8_C32_cpp32", D::uint8, 1, 0, 4, {32, 5, 4, 2}, BASE_STR, 32, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"u8_C32_cpp16_c16", D::uint8, 1, 0, 4, {32, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {16, 0, 0, 0}, Z3},
    {"u8_C48_cpp48", D::uint8, 1, 0, 4, {48, 5, 4, 2}, BASE_STR, 48, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"u8_C20_cpp32", D::uint8, 1, 0, 4, {20, 5, 4, 2}, BASE_STR, 32, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u32_C16_cpp16", D::uint32, 2, 0, 4, {16, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u32_C16_cpp8", D::uint32, 2, 0, 4, {16, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u32_C16_cpp4", D::uint32, 2, 0, 4, {16, 5, 4, 2}, BASE_STR, 4, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u32_C16_cpp8_c8", D::uint32, 2, 0, 4, {16, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {8, 0, 0, 0}, {1, 1, 0}},
    {"i32_u32_C24_cpp24", D::uint32, 2, 0, 4, {24, 5, 4, 2}, BASE_STR, 24, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u8_C64_cpp32", D::uint8, 2, 0, 4, {64, 5, 4, 2}, BASE_STR, 32, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"i32_u16_C32_cpp16", D::uint16, 2, 0, 4, {32, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {16, 0, 0, 0}, Z3},
    {"i32_u32_C12_cpp16", D::uint32, 2, 0, 4, {12, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s32_base", D::uint32, 1, 1, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s64_C16_cpp16", D::uint32, 1, 2, 4, {16, 5, 4, 2}, {512, 4096, 32768}, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s128_C32_cpp32", D::uint32, 1, 3, 4, {32, 5, 4, 2}, {512, 4096, 32768}, 32, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s128_C8_cpp8", D::uint32, 1, 3, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s64_i32_C16_cpp16", D::uint32, 2, 2, 4, {16, 5, 4, 2}, {512, 4096, 32768}, 16, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"s128_i32_C32_cpp32", D::uint32, 2, 3, 4, {32, 5, 4, 2}, {512, 4096, 32768}, 32, 8, Z3, Z3, ES1, {0, 0, 0, 0},
     Z3},
    {"s32_i32_C8_cpp8", D::uint32, 2, 1, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"nan_f32", D::float32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {-4, 2, 0, 0}, {2, 0, 0}, 0,
     tmap_ns::OobFill::nan_request_zero_fma},
    {"nan_f16", D::float16, 1, 0, 4, {16, 5, 4, 2}, BASE_STR, 16, 8, Z3, Z3, ES1, {-8, 3, 3, 1}, Z3, 0,
     tmap_ns::OobFill::nan_request_zero_fma},
    {"big_C64_cpp64", D::uint32, 1, 0, 4, {64, 5, 4, 2}, {512, 4096, 32768}, 64, 4, Z3, Z3, ES1, {0, 0, 0, 0}, Z3},
    {"phase128_s128", D::uint32, 1, 3, 4, BASE_DIMS, BASE_STR, 8, 8, Z3, Z3, ES1, {0, 1, 0, 0}, Z3, 128},
    {"ctl_none_c4", D::uint32, 0, 0, 4, BASE_DIMS, BASE_STR, 4, 8, Z3, Z3, ES1, {4, 0, 0, 0}, Z3},
    // Second run (cases 70-): the rule the first run suggested (rows of one slice; C, W, H
    // walked as the spatial dimensions, dimension rank-2 fixed, N carried into) under NaN
    // fill, corners, wraps into N, traversal strides, ranks 3 and 5, and which bases fault.
    {"nan_f32", D::float32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 12, Z3, Z3, ES1, {4, 3, 0, 0}, {0, 1, 0}, 0,
     tmap_ns::OobFill::nan_request_zero_fma},
    {"nan_f16", D::float16, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 12, Z3, Z3, ES1, {4, 3, 0, 0}, {0, 1, 0}, 0,
     tmap_ns::OobFill::nan_request_zero_fma},
    {"nan_bf16_h_oob", D::bfloat16, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 4, 0}, Z3, 0,
     tmap_ns::OobFill::nan_request_zero_fma},
    {"corners_shift", D::uint32, 1, 0, 4, {4, 3, 4, 3}, BASE_STR, 8, 24, {-2, -1, 0}, {1, 0, 0}, ES1, {-2, -1, 1, 0}, Z3},
    {"corners_shift_offs", D::uint32, 1, 0, 4, {4, 3, 4, 3}, BASE_STR, 8, 24, {-2, -1, 0}, {1, 0, 0}, ES1,
     {-2, -1, 1, 0}, {2, 1, 0}},
    {"r4_wrap_n", D::uint32, 1, 0, 4, {4, 3, 4, 3}, BASE_STR, 8, 24, Z3, Z3, ES1, {1, 0, 2, 0}, Z3},
    {"r4_wrap_n_es", D::uint32, 1, 0, 4, {4, 5, 4, 5}, BASE_STR, 8, 24, Z3, Z3, {1, 2, 1, 2, 1}, {0, 0, 1, 0}, Z3},
    {"r4_h_oob", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 4, 0}, Z3},
    {"r4_h_far", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 100, 0}, Z3},
    {"r4_h_neg", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 1, -3, 0}, Z3},
    {"r5_wrap", D::uint32, 1, 0, 5, {2, 2, 2, 3, 2}, {256, 1024, 4096, 16384}, 8, 20, Z3, Z3, ES1, {0, 0, 0, 1, 0},
     Z3},
    {"r5_corners", D::uint32, 1, 0, 5, {2, 2, 2, 3, 2}, {256, 1024, 4096, 16384}, 8, 24, {-1, 0, -1}, {0, 1, 0}, ES1,
     {-1, 0, -1, 2, 0}, {1, 0, 1}},
    {"r3_es_n2", D::uint32, 1, 0, 3, {4, 3, 5}, {256, 4096}, 8, 12, Z3, Z3, {1, 1, 2, 1, 1}, {2, 1, 0}, Z3},
    {"r3_corner", D::uint32, 1, 0, 3, {4, 3, 3}, {256, 4096}, 8, 16, {-1, 0, 0}, {2, 0, 0}, ES1, {-1, 2, 0}, Z3},
    {"es0_3", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 10, Z3, Z3, {3, 1, 1, 1, 1}, {1, 0, 0, 0}, Z3},
    {"u8_il32_cpp16", D::uint8, 2, 0, 4, BASE_DIMS, BASE_STR, 16, 6, Z3, Z3, ES1, {2, 1, 0, 0}, Z3},
    {"u64_il16", D::uint64, 1, 0, 4, BASE_DIMS, BASE_STR, 2, 8, Z3, Z3, ES1, {3, 0, 1, 1}, Z3},
    {"s128_ppc16_phase384", D::uint32, 1, 3, 4, BASE_DIMS, BASE_STR, 8, 16, Z3, Z3, ES1, {0, 1, 0, 0}, Z3, 384},
    {"ppc64", D::uint32, 1, 0, 4, {4, 3, 2, 3}, BASE_STR, 8, 64, Z3, Z3, ES1, {0, 0, 1, 0}, Z3},
    {"tf32", D::tfloat32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 1, 0, 0}, Z3},
    {"offs_c200", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 0, 0}, {200, 0, 0}},
    {"offs_w7", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 0, 0, 0}, {0, 7, 0}},
    {"C_past_stride", D::uint32, 1, 0, 4, {32, 5, 4, 2}, BASE_STR, 8, 8, Z3, Z3, ES1, {14, 0, 0, 0}, Z3},
    {"c_at_upper", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, {1, 0, 0}, ES1, {8, 0, 0, 0}, Z3},
    {"w_at_upper", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, {0, 2, 0}, ES1, {0, 6, 0, 0}, Z3},
    {"fault_c_below_lower", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, {-1, 0, 0}, Z3, ES1, {-2, 0, 0, 0}, Z3},
    {"fault_w_past", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, 5, 0, 0}, Z3},
    {"fault_w_below", D::uint32, 1, 0, 4, BASE_DIMS, BASE_STR, 8, 4, Z3, Z3, ES1, {0, -1, 0, 0}, Z3},
    {"fault_r5_h_past", D::uint32, 1, 0, 5, {2, 2, 2, 3, 2}, {256, 1024, 4096, 16384}, 8, 4, Z3, Z3, ES1,
     {0, 0, 2, 0, 0}, Z3},
};

tmap_ns::TensorMap map_of(const Case& k, uint64_t addr) {
  tmap_ns::TensorMap m{};
  m.encode = tmap_ns::Encode::im2col;
  m.data_type = k.type;
  m.rank = k.rank;
  m.global_address = addr;
  for (int i = 0; i < k.rank; ++i) {
    m.dims[i] = k.dims[i];
    m.element_strides[i] = k.es[i];
    if (i + 1 < k.rank) m.strides[i] = k.strides[i];
  }
  for (int i = 0; i < 3; ++i) m.pixel_box_lower[i] = k.lower[i], m.pixel_box_upper[i] = k.upper[i];
  m.channels_per_pixel = k.cpp;
  m.pixels_per_column = k.ppc;
  m.interleave = tmap_ns::Interleave(k.il);
  m.swizzle = tmap_ns::Swizzle(k.swz);
  m.oob_fill = k.fill;
  return m;
}

int main(int argc, char** argv) {
  Setup<Info> s;
  if (const int rc = start(argc, argv, "probe_interleave_im2col", kCases.size(), probe, s); rc >= 0) return rc;
  auto& [out, first, res, g, win, info, smem] = s;
  for (size_t ci = first; ci < kCases.size(); ++ci) {
    const Case& k = kCases[ci];
    const uint64_t addr = reinterpret_cast<uint64_t>(g) + kTensorOffset;
    alignas(64) CUtensorMap m{};
    const tmap_ns::TensorMap tmap = map_of(k, addr);
    const CUresult r = tmakit::gpu::encode(tmap, &m);
    std::fprintf(res, "{\"case\": %zu, \"name\": \"%s\", \"encode\": \"%s\", \"model_bytes\": %llu}\n", ci, k.name,
                 tmakit::gpu::result_name(r).c_str(), (unsigned long long)tmap.bytes_per_box());
    std::fflush(res);
    if (r != CUDA_SUCCESS) continue;
    const int4 c03{k.c[0], k.c[1], k.c[2], k.c[3]};
    const uint4 offs{k.offs[0], k.offs[1], k.offs[2], 0};
    uint32_t measured = 0;
    for (int launch = 0; launch < 3; ++launch) {
      const uint32_t arm = launch == 0 ? (1u << 20) - 1 : launch == 1 ? measured : measured + 16;
      if (launch > 0 && measured == 0) break;
      cudaMemset(win, 0, kWindow);
      probe<<<1, 128, smem>>>(m, k.rank, c03, k.c[4], offs, arm, kDst + k.dst_extra, win, info);
      CHECK_OR_FAULT(launch == 0 ? "launch armed 2^20-1" : "launch", ci);
      Info h{};
      cudaMemcpy(&h, info, sizeof h, cudaMemcpyDeviceToHost);
      std::vector<uint8_t> hw(kWindow);
      cudaMemcpy(hw.data(), win, kWindow, cudaMemcpyDeviceToHost);
      size_t changed = 0;
      for (uint32_t i = 0; i < kWindow; ++i) changed += hw[i] != 0x11;
      if (launch == 0) {
        measured = uint32_t(changed);
        char path[512];
        std::snprintf(path, sizeof path, "%s/case_%03zu.bin", out.c_str(), ci);
        FILE* f = std::fopen(path, "wb");
        std::fwrite(hw.data(), 1, kWindow, f);
        std::fclose(f);
      }
      std::fprintf(res,
                   "{\"case\": %zu, \"launch\": %d, \"arm\": %u, \"done\": %llu, \"done_ns\": %llu, \"changed_bytes\": "
                   "%zu}\n",
                   ci, launch, arm, (unsigned long long)h.done, (unsigned long long)h.done_ns, changed);
      std::fflush(res);
    }
  }
  std::fclose(res);
  return 0;
}
