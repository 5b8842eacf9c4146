// Exercises every public function of include/tmakit/device (map.cuh, mbarrier.cuh,
// copy.cuh, Pipeline) on a GPU and checks bytes and barrier phases against values
// computed here on the host. The sm_100-only wrappers (sm100.cuh) are covered by
// the compile tests in tests/gpu/compile. Not a ctest test (CI has no GPU):
// scripts/gpu.sh device runs it on the device machine. Exit 0 = pass.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpu_check.cuh"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
namespace cg = cooperative_groups;
using tmakit::tensor_map::TensorMap;

// A 64 × 32 uint32 tensor, element (x, y) = y * 64 + x, row stride 256 bytes; boxes of 16 × 8.
constexpr int W = 64, H = 32, BX = 16, BY = 8, BOX = BX * BY;

struct Results {
  uint32_t tile[5][BOX];      // load_tile, load_tile_cluster, load_tile_hint, load_tile + policy,
                              // load_tile from a CUtensorMap, all at (16, 4)
  uint32_t bulk[4][64];       // bulk_load, bulk_load_cluster, both + policy: elements 128..191
  uint32_t pipe_sum[6];       // pipeline: sum of each of 6 boxes down the tensor
  uint32_t box_bytes;         // what the handle carried
  uint32_t phases_ok;         // try_wait / expect_tx / arrive sequence
  uint32_t im2col[8][4];      // load_im2col rows
  uint32_t mcast[2][BOX + 64];  // per cluster rank: multicast tile + multicast bulk
  uint32_t mcast_hint[2][BOX + 64];  // the same with a cache policy
  uint32_t peer[64];          // rank 1: received from rank 0, then reduced (add) once more
  uint32_t remote_arrive_ok;
};

__global__ void single_cta(const __grid_constant__ dev::MapHandle in, const __grid_constant__ dev::MapHandle out,
                           const uint32_t* g, uint32_t* gout, Results* r) {
  __shared__ alignas(1024) uint32_t tiles[5][BOX];
  __shared__ alignas(128) uint32_t bulk[4][64];
  __shared__ alignas(128) uint32_t stage[3][BOX];
  __shared__ uint64_t bar[4];
  __shared__ dev::Pipeline<3> pipe;
  const int t = threadIdx.x;
  if (t == 0) {
    for (int i = 0; i < 4; ++i) dev::mbar_init(&bar[i], 1);
    pipe.init(blockDim.x);
    dev::fence_mbarrier_init();
  }
  __syncthreads();
  if (t == 0) {
    const int32_t c[2] = {16, 4};
    dev::prefetch_tile(in, c);
    dev::prefetch_tile(in, c, dev::kEvictLast);
    dev::bulk_prefetch(g, 512);
    dev::bulk_prefetch(g, 512, dev::kEvictLast);
    dev::arrive_expect_tx(&bar[0], in, 5);  // five boxes, count from the map
    dev::load_tile(tiles[0], in, c, &bar[0]);
    dev::load_tile_cluster(tiles[1], in, c, &bar[0]);
    dev::load_tile_hint(tiles[2], in, c, &bar[0], dev::kEvictFirst);
    dev::load_tile(tiles[3], in, c, &bar[0], dev::kEvictFirst);
    dev::load_tile(tiles[4], in.map, c, &bar[0]);  // the CUtensorMap itself (the GPU engine's form)
    dev::wait_parity(&bar[0], 0, 5 * in.box_bytes);
    // expect_tx + plain arrive, four bulk loads
    dev::expect_tx(&bar[1], 1024);
    dev::bulk_load(bulk[0], g + 128, 256, &bar[1]);
    dev::bulk_load_cluster(bulk[1], g + 128, 256, &bar[1]);
    dev::bulk_load(bulk[2], g + 128, 256, &bar[1], dev::kEvictNormal);
    dev::bulk_load_cluster(bulk[3], g + 128, 256, &bar[1], dev::kEvictNormal);
    bool before = dev::try_wait_parity(&bar[1], 1);  // phase 0 not complete: parity 1 is the "previous" phase
    dev::arrive(&bar[1]);
    dev::wait_parity(&bar[1], 0, 1024);
    r->phases_ok = before ? 1u : 0u;
    dev::mbar_inval(&bar[3]);
    r->box_bytes = in.box_bytes;
  }
  __syncthreads();
  for (int i = t; i < 5 * BOX; i += blockDim.x) r->tile[i / BOX][i % BOX] = tiles[i / BOX][i % BOX];
  for (int i = t; i < 256; i += blockDim.x) r->bulk[i / 64][i % 64] = bulk[i / 64][i % 64];
  // stores: tile 0 to (0, 0) and with a hint to (16, 0) and (32, 0) of `out`; then add
  // tile 0 again at (0, 0), and with a hint at (16, 0)
  if (t == 0) {
    dev::fence_proxy_async_shared();
    const int32_t c0[2] = {0, 0}, c1[2] = {16, 0}, c2[2] = {32, 0};
    dev::store_tile(out, c0, tiles[0]);
    dev::store_tile_hint(out, c1, tiles[0], dev::kEvictNormal);
    dev::store_tile(out, c2, tiles[0], dev::kEvictFirst);
    dev::commit_group();
    dev::wait_group<0>();
    dev::reduce_tile(cuda::ptx::op_add, out, c0, tiles[0]);
    dev::reduce_tile(cuda::ptx::op_add, out, c1, tiles[0], dev::kEvictFirst);
    dev::commit_group();
    dev::wait_group_read<0>();
    dev::wait_group<0>();
    // non-tensor: bulk store 256 bytes at gout + 1024 elements, then add them twice more
    dev::bulk_store(gout + 1024, bulk[0], 256);
    dev::bulk_store_hint(gout + 1088, bulk[1], 256, dev::kEvictLast);
    dev::bulk_store(gout + 1152, bulk[2], 256, dev::kEvictFirst);
    dev::commit_group();
    dev::wait_group<0>();
    dev::bulk_reduce(cuda::ptx::op_add, gout + 1024, bulk[0], 256u);
    dev::bulk_reduce(cuda::ptx::op_add, gout + 1152, bulk[2], 256u, dev::kEvictFirst);
    dev::commit_group();
    dev::wait_group<0>();
    dev::fence_proxy_async_global();  // no visible effect to check: exercised only
  }
  // pipeline: 6 boxes (x = 0, y = 0, 4, ..., 20) through 3 stages; all threads consume
  dev::PipeState ps;
  for (int k = 0; k < 6; ++k) {
    if (t == 0) {
      uint64_t* full = pipe.producer_acquire(ps, in);
      const int32_t c[2] = {0, 4 * k};
      dev::load_tile(stage[ps.stage], in, c, full);
    }
    pipe.consumer_wait(ps, in.box_bytes);
    __syncthreads();
    if (t == 0) {
      uint32_t s = 0;
      for (int i = 0; i < BOX; ++i) s += stage[ps.stage][i];
      r->pipe_sum[k] = s;
    }
    __syncthreads();
    pipe.consumer_release(ps);
    ps.advance<3>();
  }
}

// im2col: NWC uint32, C = 4, W = 8, N = 2; 8 pixels from (c 0, w 0, n 1), offset 0.
__global__ void im2col_kernel(const __grid_constant__ dev::MapHandle m, Results* r) {
  __shared__ alignas(128) uint32_t rows[8][4];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    const int32_t c[3] = {0, 0, 1};
    const uint16_t off[1] = {0};
    dev::prefetch_im2col(m, c, off);
    dev::arrive_expect_tx(&bar, m);
    dev::load_im2col(rows, m, c, off, &bar);
    dev::wait_parity(&bar, 0, m.box_bytes);
    for (int i = 0; i < 32; ++i) r->im2col[i / 4][i % 4] = rows[i / 4][i % 4];
  }
}

// Cluster of 2: rank 0 multicasts a tile and 256 bulk bytes to both (once plain,
// once with a cache policy), copies 256 bytes into rank 1's shared memory and then
// adds them there once more (bulk_reduce_cluster); rank 1 arrives remotely on rank
// 0's barrier in between.
__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(const __grid_constant__ dev::MapHandle in, const uint32_t* g,
                                                       Results* r) {
  __shared__ alignas(1024) uint32_t buf[BOX + 64];
  __shared__ alignas(1024) uint32_t buf_hint[BOX + 64];
  __shared__ alignas(128) uint32_t peer[64];
  __shared__ uint64_t bar[5];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) {
    for (int i = 0; i < 5; ++i) dev::mbar_init(&bar[i], 1);
    dev::fence_mbarrier_init();
    for (int i = 0; i < 64; ++i) peer[i] = 0xEEEEEEEEu;
    dev::fence_proxy_async_cluster();  // no visible effect to check: exercised only
  }
  cluster.sync();
  if (threadIdx.x == 0) {
    dev::arrive_expect_tx<dev::Scope::cluster>(&bar[0], 2 * (in.box_bytes + 256));
    if (rank == 1) dev::arrive_expect_tx(&bar[1], 256), dev::arrive_expect_tx(&bar[3], 256);
    if (rank == 0) {
      const int32_t c[2] = {32, 8};
      dev::load_tile_multicast(buf, in, c, &bar[0], 0x3);
      dev::bulk_load_multicast(buf + BOX, g + 256, 256, &bar[0], 0x3);
      dev::load_tile_multicast(buf_hint, in, c, &bar[0], 0x3, dev::kEvictLast);
      dev::bulk_load_multicast(buf_hint + BOX, g + 256, 256, &bar[0], 0x3, dev::kEvictLast);
      dev::wait_parity(&bar[0], 0, 2 * (in.box_bytes + 256), true);
      dev::bulk_copy_to_peer(cluster.map_shared_rank(peer, 1), buf + BOX, 256, cluster.map_shared_rank(&bar[1], 1));
      dev::wait_parity(&bar[2], 0, 0, true);  // rank 1's remote arrival: the copy has landed
      r->remote_arrive_ok = 1;
      dev::bulk_reduce_cluster(cuda::ptx::op_add, cluster.map_shared_rank(peer, 1), buf + BOX, 256u,
                               cluster.map_shared_rank(&bar[3], 1));
    } else {
      dev::wait_parity(&bar[0], 0, 2 * (in.box_bytes + 256), true);
      dev::wait_parity(&bar[1], 0, 256, true);
      dev::arrive_cluster(cluster.map_shared_rank(&bar[2], 0));
      dev::wait_parity(&bar[3], 0, 256, true);
      for (int i = 0; i < 64; ++i) r->peer[i] = peer[i];
    }
    for (int i = 0; i < BOX + 64; ++i) r->mcast[rank][i] = buf[i], r->mcast_hint[rank][i] = buf_hint[i];
  }
  cluster.sync();
}

// mbarrier arrivals and waits on the executing CTA's barriers, one thread. Each
// entry of `ok` is one expectation from the phase rules of §8.2/§8.4 (a phase
// completes when pending arrivals and tx-count are both 0; arrive_drop lowers the
// expected count of later phases; a parity wait is true once that phase completed).
constexpr int kBarrierChecks = 18;
__global__ void barrier_ops(uint32_t* ok) {
  __shared__ uint64_t a, b, c;
  if (threadIdx.x != 0) return;
  using dev::Scope;
  dev::mbar_init(&a, 2);
  dev::mbar_init(&b, 3);
  dev::mbar_init(&c, 3);
  dev::fence_mbarrier_init();
  // a, phase 0: one of two arrivals; then the second through the count form.
  const uint64_t s0 = dev::arrive(&a);
  ok[0] = !dev::test_wait(&a, s0) && !dev::test_wait_parity(&a, 0);
  dev::arrive(&a, 1);
  ok[1] = dev::try_wait(&a, s0) && dev::test_wait_parity(&a, 0);
  // a, phase 1: both arrivals at once, cluster scope.
  const uint64_t s1 = dev::arrive<Scope::cluster>(&a, 2);
  ok[2] = dev::test_wait<Scope::cluster>(&a, s1) && dev::test_wait_parity<Scope::cluster>(&a, 1) &&
          dev::try_wait_parity<Scope::cluster>(&a, 1) && dev::try_wait<Scope::cluster>(&a, s1);
  // a, phase 2: all arrivals but 16 expected bytes: complete only after complete_tx.
  dev::expect_tx<Scope::cluster>(&a, 16);
  dev::arrive(&a, 2);
  ok[3] = !dev::test_wait_parity(&a, 0);
  dev::complete_tx(&a, 16);
  ok[4] = dev::test_wait_parity(&a, 0);
  // a, phase 3: arrive.expect_tx at cluster scope, the second arrival, then the bytes.
  dev::arrive_expect_tx<Scope::cluster>(&a, 32);
  dev::arrive(&a);
  ok[5] = !dev::test_wait_parity(&a, 1);
  dev::complete_tx(&a, 32);
  ok[6] = dev::test_wait_parity(&a, 1);
  // b (3 expected): arrive_drop counts as one arrival and leaves 2 expected.
  const uint64_t d0 = dev::arrive_drop(&b);
  ok[7] = !dev::test_wait(&b, d0);
  dev::arrive(&b, 2);
  ok[8] = dev::try_wait(&b, d0);
  // b, phase 1 (2 expected): arrive_drop with a count, at cluster scope: 1 expected from now on.
  dev::arrive_drop<Scope::cluster>(&b, 1);
  ok[9] = !dev::test_wait_parity(&b, 1);
  dev::arrive(&b);
  ok[10] = dev::test_wait_parity(&b, 1);
  dev::arrive(&b);  // phase 2 completes with a single arrival
  ok[11] = dev::test_wait_parity(&b, 0);
  // c (3 expected): arrive_drop.expect_tx: one arrival and 16 bytes, 2 expected from now on.
  dev::arrive_drop_expect_tx<Scope::cluster>(&c, 16);
  dev::arrive(&c, 2);
  ok[12] = !dev::test_wait_parity(&c, 0);
  dev::complete_tx(&c, 16);
  ok[13] = dev::test_wait_parity(&c, 0);
  // c, phase 1 (2 expected), cta scope: 1 expected from now on.
  dev::arrive_drop_expect_tx(&c, 16);
  dev::arrive(&c);
  ok[14] = !dev::test_wait_parity(&c, 1);
  dev::complete_tx(&c, 16);
  ok[15] = dev::test_wait_parity(&c, 1);
  dev::arrive(&c);  // phase 2: one arrival
  ok[16] = dev::test_wait_parity(&c, 0);
  dev::mbar_inval(&a);
  dev::mbar_init(&a, 1);  // inval made the memory reusable (§8.1)
  dev::arrive(&a);
  ok[17] = dev::test_wait_parity(&a, 0);
}

// The .shared::cluster forms: rank 1 works on two barriers of rank 0, and rank 0
// checks their phases between cluster barriers (which order rank 1's arrivals).
constexpr int kRemoteChecks = 6;
// A bounded wait (false instead of a hang when the phase never completes).
__device__ bool eventually(uint64_t* bar, uint32_t parity) {
  for (int i = 0; i < 100000; ++i)
    if (dev::try_wait_parity<dev::Scope::cluster>(bar, parity)) return true;
  return false;
}
__global__ void __cluster_dims__(2, 1, 1) remote_barriers(uint32_t* ok) {
  __shared__ uint64_t r1, r2;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const bool lead = threadIdx.x == 0;
  if (lead && rank == 0) {
    dev::mbar_init(&r1, 3);
    dev::mbar_init(&r2, 2);
    dev::fence_mbarrier_init();
  }
  cluster.sync();
  uint64_t* x1 = cluster.map_shared_rank(&r1, 0);
  uint64_t* x2 = cluster.map_shared_rank(&r2, 0);
  if (lead && rank == 1) {
    dev::expect_tx_cluster(x1, 16);               // tx 16
    dev::arrive_expect_tx_cluster(x1, 16);        // tx 32, pending 2
    dev::arrive_drop_cluster(x1);                 // pending 1, expected 2
    dev::arrive_drop_expect_tx_cluster(x1, 16);   // pending 0, tx 48, expected 1
    dev::arrive_drop_cluster(x2, 1);              // r2: pending 1, expected 1
  }
  cluster.sync();
  if (lead && rank == 0) ok[0] = !dev::test_wait_parity(&r1, 0), ok[1] = !dev::test_wait_parity(&r2, 0);
  cluster.sync();
  if (lead && rank == 1) {
    dev::complete_tx_cluster(x1, 48);  // r1 phase 0 completes
    dev::arrive_cluster(x2, 1);        // r2 phase 0 completes
  }
  cluster.sync();
  if (lead && rank == 0) ok[2] = eventually(&r1, 0), ok[3] = eventually(&r2, 0);
  cluster.sync();
  if (lead && rank == 1) {
    dev::arrive_cluster(x1);  // one arrival completes phase 1: the drops left 1 expected
    dev::arrive_cluster(x2);
  }
  cluster.sync();
  if (lead && rank == 0) ok[4] = eventually(&r1, 1), ok[5] = eventually(&r2, 1);
  cluster.sync();
}

// Bulk reductions with a cache policy for (op, type) pairs of §6.2: the device
// library picks the qualifiers from the C++ type. 16 bytes per case; the host
// computes the expected bytes with its own arithmetic.
struct RedCase {
  alignas(16) uint8_t dst[16];
  alignas(16) uint8_t src[16];
};
constexpr int kRedCases = 12;
__global__ void bulk_reduce_types(RedCase* cases) {
  __shared__ alignas(128) uint8_t src[kRedCases][16];
  if (threadIdx.x != 0) return;
  for (int k = 0; k < kRedCases; ++k)
    for (int i = 0; i < 16; ++i) src[k][i] = cases[k].src[i];
  dev::fence_proxy_async_shared();
  namespace p = cuda::ptx;
  const uint64_t pol = dev::kEvictFirst;
  auto d = [&](int k) { return cases[k].dst; };
  dev::bulk_reduce(p::op_add, reinterpret_cast<uint32_t*>(d(0)), reinterpret_cast<uint32_t*>(src[0]), 16, pol);
  dev::bulk_reduce(p::op_min, reinterpret_cast<int32_t*>(d(1)), reinterpret_cast<int32_t*>(src[1]), 16, pol);
  dev::bulk_reduce(p::op_max, reinterpret_cast<uint64_t*>(d(2)), reinterpret_cast<uint64_t*>(src[2]), 16, pol);
  dev::bulk_reduce(p::op_min, reinterpret_cast<int64_t*>(d(3)), reinterpret_cast<int64_t*>(src[3]), 16, pol);
  dev::bulk_reduce(p::op_add, reinterpret_cast<float*>(d(4)), reinterpret_cast<float*>(src[4]), 16, pol);
  dev::bulk_reduce(p::op_add, reinterpret_cast<double*>(d(5)), reinterpret_cast<double*>(src[5]), 16, pol);
  dev::bulk_reduce(p::op_xor_op, reinterpret_cast<uint32_t*>(d(6)), reinterpret_cast<uint32_t*>(src[6]), 16, pol);
  dev::bulk_reduce(p::op_or_op, reinterpret_cast<uint64_t*>(d(7)), reinterpret_cast<uint64_t*>(src[7]), 16, pol);
  dev::bulk_reduce(p::op_inc, reinterpret_cast<uint32_t*>(d(8)), reinterpret_cast<uint32_t*>(src[8]), 16, pol);
  dev::bulk_reduce(p::op_dec, reinterpret_cast<uint32_t*>(d(9)), reinterpret_cast<uint32_t*>(src[9]), 16, pol);
  dev::bulk_reduce(p::op_add, reinterpret_cast<__half*>(d(10)), reinterpret_cast<__half*>(src[10]), 16, pol);
  dev::bulk_reduce(p::op_max, reinterpret_cast<__nv_bfloat16*>(d(11)), reinterpret_cast<__nv_bfloat16*>(src[11]),
                   16, pol);
  dev::commit_group();
  dev::wait_group<0>();
}

// The bulk_reduce_types cases: dst and src values, and the expected results
// computed here with the PTX definitions of each op (§6.2).
template <class T, int K = 16 / sizeof(T)>
static void put(RedCase& c, const T (&d)[K], const T (&s)[K]) {
  std::memcpy(c.dst, d, 16);
  std::memcpy(c.src, s, 16);
}
static std::vector<RedCase> reduction_cases() {
  std::vector<RedCase> c(kRedCases);
  put<uint32_t>(c[0], {1, 2, 3, 0xFFFFFFFFu}, {10, 20, 30, 2});
  put<int32_t>(c[1], {-5, 5, 0, 7}, {3, -9, 0, 7});
  put<uint64_t>(c[2], {1, 1ull << 40}, {1ull << 33, 5});
  put<int64_t>(c[3], {-1, 3}, {-(1ll << 40), 4});
  put<float>(c[4], {1.5f, -2.0f, 0.0f, 8.0f}, {0.25f, 2.0f, -1.0f, 0.5f});
  put<double>(c[5], {1.5, 2.0}, {0.25, -4.0});
  put<uint32_t>(c[6], {0xF0F0F0F0u, 0, 0xFFFFFFFFu, 0x12345678u}, {0x0FF00FF0u, 0xFFFFFFFFu, 0xFFFFFFFFu, 0x12345678u});
  put<uint64_t>(c[7], {1, 0xF0}, {1ull << 32, 0x0F});
  put<uint32_t>(c[8], {0, 5, 9, 3}, {10, 5, 9, 0});  // inc
  put<uint32_t>(c[9], {0, 5, 9, 3}, {10, 5, 4, 7});  // dec
  __half h[8], hs[8];
  __nv_bfloat16 b[8], bs[8];
  for (int i = 0; i < 8; ++i) {
    h[i] = __float2half(0.5f * i), hs[i] = __float2half(1.0f + 0.25f * i);
    b[i] = __float2bfloat16(i % 2 ? -1.0f * i : 2.0f * i), bs[i] = __float2bfloat16(float(i) - 3.0f);
  }
  std::memcpy(c[10].dst, h, 16), std::memcpy(c[10].src, hs, 16);
  std::memcpy(c[11].dst, b, 16), std::memcpy(c[11].src, bs, 16);
  return c;
}
template <class T, int K = 16 / sizeof(T)>
static bool same(const RedCase& got, const T (&want)[K]) {
  return std::memcmp(got.dst, want, 16) == 0;
}
template <class T, class F, int K = 16 / sizeof(T)>
static bool reduced_as(const RedCase& in, const RedCase& got, F f) {
  T d[K], s[K], w[K];
  std::memcpy(d, in.dst, 16), std::memcpy(s, in.src, 16);
  for (int i = 0; i < K; ++i) w[i] = f(d[i], s[i]);
  return same<T>(got, w);
}
static void check_reductions(const std::vector<RedCase>& in, const std::vector<RedCase>& got) {
  check(reduced_as<uint32_t>(in[0], got[0], [](uint32_t d, uint32_t s) { return d + s; }), "bulk_reduce + policy: add.u32");
  check(reduced_as<int32_t>(in[1], got[1], [](int32_t d, int32_t s) { return std::min(d, s); }), "bulk_reduce + policy: min.s32");
  check(reduced_as<uint64_t>(in[2], got[2], [](uint64_t d, uint64_t s) { return std::max(d, s); }), "bulk_reduce + policy: max.u64");
  check(reduced_as<int64_t>(in[3], got[3], [](int64_t d, int64_t s) { return std::min(d, s); }), "bulk_reduce + policy: min.s64");
  check(reduced_as<float>(in[4], got[4], [](float d, float s) { return d + s; }), "bulk_reduce + policy: add.f32");
  check(reduced_as<double>(in[5], got[5], [](double d, double s) { return d + s; }), "bulk_reduce + policy: add.f64");
  check(reduced_as<uint32_t>(in[6], got[6], [](uint32_t d, uint32_t s) { return d ^ s; }), "bulk_reduce + policy: xor.b32");
  check(reduced_as<uint64_t>(in[7], got[7], [](uint64_t d, uint64_t s) { return d | s; }), "bulk_reduce + policy: or.b64");
  check(reduced_as<uint32_t>(in[8], got[8], [](uint32_t d, uint32_t s) { return d >= s ? 0u : d + 1; }),
        "bulk_reduce + policy: inc.u32 (old >= src ? 0 : old + 1)");
  check(reduced_as<uint32_t>(in[9], got[9], [](uint32_t d, uint32_t s) { return d == 0 || d > s ? s : d - 1; }),
        "bulk_reduce + policy: dec.u32 (old == 0 || old > src ? src : old - 1)");
  // f16 / bf16: the chosen values add and compare exactly in float.
  check(reduced_as<__half>(in[10], got[10],
                           [](__half d, __half s) { return __float2half(__half2float(d) + __half2float(s)); }),
        "bulk_reduce + policy: add.noftz.f16");
  check(reduced_as<__nv_bfloat16>(in[11], got[11], [](__nv_bfloat16 d, __nv_bfloat16 s) {
          return __float2bfloat16(std::max(__bfloat162float(d), __bfloat162float(s)));
        }),
        "bulk_reduce + policy: max.bf16");
}

static TensorMap tensor_2d(uint64_t addr) {
  TensorMap m;
  m.data_type = tmakit::tensor_map::DataType::uint32;
  m.rank = 2;
  m.global_address = addr;
  m.dims = {W, H};
  m.strides = {W * 4};
  m.box = {BX, BY};
  return m;
}

int main() {
  std::vector<uint32_t> host(W * H);
  for (int i = 0; i < W * H; ++i) host[i] = uint32_t(i);
  uint32_t *g, *gout;
  Results* r;
  CUDA_OK(cudaMalloc(&g, host.size() * 4));
  CUDA_OK(cudaMalloc(&gout, 8192 * 4));
  CUDA_OK(cudaMallocManaged(&r, sizeof(Results)));
  std::memset(r, 0, sizeof(Results));
  CUDA_OK(cudaMemcpy(g, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(gout, 0, 8192 * 4));
  dev::MapHandle in = dev::make_map_handle(tensor_2d(uint64_t(g)));
  dev::MapHandle out = dev::make_map_handle(tensor_2d(uint64_t(gout)));
  TensorMap im;
  im.encode = tmakit::tensor_map::Encode::im2col;
  im.data_type = tmakit::tensor_map::DataType::uint32;
  im.rank = 3;
  im.global_address = uint64_t(g);
  im.dims = {4, 8, 2};
  im.strides = {16, 128};
  im.channels_per_pixel = 4;
  im.pixels_per_column = 8;
  dev::MapHandle imh = dev::make_map_handle(im);

  single_cta<<<1, 128>>>(in, out, g, gout, r);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  im2col_kernel<<<1, 32>>>(imh, r);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  cluster_kernel<<<2, 32>>>(in, g, r);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  uint32_t* bok;  // barrier_ops then remote_barriers
  CUDA_OK(cudaMallocManaged(&bok, (kBarrierChecks + kRemoteChecks) * 4));
  std::memset(bok, 0, (kBarrierChecks + kRemoteChecks) * 4);
  barrier_ops<<<1, 32>>>(bok);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  remote_barriers<<<2, 32>>>(bok + kBarrierChecks);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<RedCase> cases = reduction_cases();
  RedCase* dcases;
  CUDA_OK(cudaMalloc(&dcases, sizeof(RedCase) * kRedCases));
  CUDA_OK(cudaMemcpy(dcases, cases.data(), sizeof(RedCase) * kRedCases, cudaMemcpyHostToDevice));
  bulk_reduce_types<<<1, 32>>>(dcases);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<RedCase> reduced(kRedCases);
  CUDA_OK(cudaMemcpy(reduced.data(), dcases, sizeof(RedCase) * kRedCases, cudaMemcpyDeviceToHost));

  auto at = [&](int x, int y) { return uint32_t(y * W + x); };
  check(r->box_bytes == BOX * 4, "make_map_handle: box bytes from TensorMap::bytes_per_box()");
  const char* tile_names[5] = {"load_tile", "load_tile_cluster", "load_tile_hint + prefetch_tile (+ policy)",
                               "load_tile + policy", "load_tile from a CUtensorMap"};
  for (int f = 0; f < 5; ++f) {
    bool ok = true;
    for (int y = 0; y < BY; ++y)
      for (int x = 0; x < BX; ++x) ok &= r->tile[f][y * BX + x] == at(16 + x, 4 + y);
    check(ok, tile_names[f]);
  }
  const char* bulk_names[4] = {"bulk_load + expect_tx + arrive + bulk_prefetch (+ policy)", "bulk_load_cluster",
                               "bulk_load + policy", "bulk_load_cluster + policy"};
  for (int f = 0; f < 4; ++f) {
    bool ok = true;
    for (int i = 0; i < 64; ++i) ok &= r->bulk[f][i] == uint32_t(128 + i);
    check(ok, bulk_names[f]);
  }
  check(r->phases_ok == 1, "try_wait_parity on the preceding phase");
  std::vector<uint32_t> o(8192);
  CUDA_OK(cudaMemcpy(o.data(), gout, o.size() * 4, cudaMemcpyDeviceToHost));
  bool st = true, sth = true, stp = true;
  for (int y = 0; y < BY; ++y)
    for (int x = 0; x < BX; ++x) {
      st &= o[y * W + x] == 2 * at(16 + x, 4 + y);  // stored, then added once more (reduce_tile add)
      sth &= o[y * W + 16 + x] == 2 * at(16 + x, 4 + y);  // the same, both with a policy
      stp &= o[y * W + 32 + x] == at(16 + x, 4 + y);
    }
  check(st, "store_tile + reduce_tile(add) + commit_group/wait_group/wait_group_read");
  check(sth, "store_tile_hint + reduce_tile(add) + policy");
  check(stp, "store_tile + policy");
  bool bs = true, bsh = true, bsp = true;
  for (int i = 0; i < 64; ++i) {
    bs &= o[1024 + i] == 2u * (128 + i);
    bsh &= o[1088 + i] == uint32_t(128 + i);
    bsp &= o[1152 + i] == 2u * (128 + i);
  }
  check(bs, "bulk_store + bulk_reduce(add)");
  check(bsh, "bulk_store_hint");
  check(bsp, "bulk_store + policy, bulk_reduce(add) + policy, fence_proxy_async_global");
  bool ps = true;
  for (int k = 0; k < 6; ++k) {
    uint32_t s = 0;
    for (int y = 0; y < BY; ++y)
      for (int x = 0; x < BX; ++x) s += at(x, 4 * k + y);
    ps &= r->pipe_sum[k] == s;
  }
  check(ps, "Pipeline<3>: 6 boxes through 3 stages");
  bool ic = true;
  for (int p = 0; p < 8; ++p)
    for (int ch = 0; ch < 4; ++ch) ic &= r->im2col[p][ch] == uint32_t(32 + p * 4 + ch);  // n = 1 starts at element 32
  check(ic, "load_im2col + prefetch_im2col (pixels w = 0..7 of n = 1)");
  bool mc = true, mch = true;
  for (int rank = 0; rank < 2; ++rank) {
    for (int y = 0; y < BY; ++y)
      for (int x = 0; x < BX; ++x) {
        mc &= r->mcast[rank][y * BX + x] == at(32 + x, 8 + y);
        mch &= r->mcast_hint[rank][y * BX + x] == at(32 + x, 8 + y);
      }
    for (int i = 0; i < 64; ++i) {
      mc &= r->mcast[rank][BOX + i] == uint32_t(256 + i);
      mch &= r->mcast_hint[rank][BOX + i] == uint32_t(256 + i);
    }
  }
  check(mc, "load_tile_multicast + bulk_load_multicast (both ranks) + arrive_expect_tx<cluster>");
  check(mch, "load_tile_multicast + bulk_load_multicast with a policy (both ranks)");
  bool pr = true;
  for (int i = 0; i < 64; ++i) pr &= r->peer[i] == 2u * (256 + i);
  check(pr, "bulk_copy_to_peer, then bulk_reduce_cluster(add) + fence_proxy_async_cluster");
  check(r->remote_arrive_ok == 1, "arrive_cluster");
  const char* barrier_names[kBarrierChecks] = {
      "arrive: one of two arrivals leaves the phase open (test_wait, test_wait_parity)",
      "arrive(bar, count) completes it (try_wait on the state token)",
      "arrive<cluster>(bar, 2) completes a phase at once (test/try_wait<cluster>, both forms)",
      "expect_tx<cluster>: all arrivals but bytes pending keep the phase open",
      "complete_tx completes it",
      "arrive_expect_tx<cluster> keeps the phase open until the bytes come",
      "complete_tx completes it",
      "arrive_drop counts as one arrival (phase open)",
      "arrive_drop: the phase completes with the remaining arrivals",
      "arrive_drop<cluster>(bar, 1): phase open",
      "... completes with one more arrival",
      "... and the next phase needs one arrival only",
      "arrive_drop_expect_tx<cluster>: phase open while bytes pending",
      "... completes after complete_tx",
      "arrive_drop_expect_tx (cta): phase open while bytes pending",
      "... completes after complete_tx",
      "... and the next phase needs one arrival only",
      "mbar_inval, then mbar_init on the same memory",
  };
  for (int k = 0; k < kBarrierChecks; ++k) check(bok[k] == 1, barrier_names[k]);
  const char* remote_names[kRemoteChecks] = {
      "expect_tx_cluster + arrive_expect_tx_cluster + arrive_drop(_expect_tx)_cluster: phase open",
      "arrive_drop_cluster(bar, 1): phase open",
      "complete_tx_cluster completes the phase",
      "arrive_cluster(bar, 1) completes the phase",
      "after the drops one remote arrival completes the next phase",
      "... on the second barrier too",
  };
  for (int k = 0; k < kRemoteChecks; ++k) check(bok[kBarrierChecks + k] == 1, remote_names[k]);
  check_reductions(cases, reduced);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASSED", failures);
  return failures ? 1 : 0;
}
