// Exercises every public function of include/tmakit/device once on a GPU and
// checks the bytes against values computed here on the host. Not a ctest test
// (CI has no GPU): scripts/gpu.sh runs it on the device machine. Exit 0 = pass.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
namespace cg = cooperative_groups;
using tmakit::tensor_map::TensorMap;

// A 64 × 32 uint32 tensor, element (x, y) = y * 64 + x, row stride 256 bytes; boxes of 16 × 8.
constexpr int W = 64, H = 32, BX = 16, BY = 8, BOX = BX * BY;

struct Results {
  uint32_t tile[3][BOX];      // load_tile, load_tile_cluster, load_tile_hint at (16, 4)
  uint32_t bulk[2][64];       // bulk_load, bulk_load_cluster of elements 128..191
  uint32_t pipe_sum[6];       // pipeline: sum of each of 6 boxes down the tensor
  uint32_t box_bytes;         // what the handle carried
  uint32_t phases_ok;         // try_wait / expect_tx / arrive sequence
  uint32_t im2col[8][4];      // load_im2col rows
  uint32_t mcast[2][BOX + 64];  // per cluster rank: multicast tile + multicast bulk
  uint32_t peer[64];          // rank 1 received from rank 0
  uint32_t remote_arrive_ok;
};

__global__ void single_cta(const __grid_constant__ dev::MapHandle in, const __grid_constant__ dev::MapHandle out,
                           const uint32_t* g, uint32_t* gout, Results* r) {
  __shared__ alignas(1024) uint32_t tiles[3][BOX];
  __shared__ alignas(128) uint32_t bulk[2][64];
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
    dev::bulk_prefetch(g, 512);
    dev::arrive_expect_tx(&bar[0], in, 3);  // three boxes, count from the map
    dev::load_tile(tiles[0], in, c, &bar[0]);
    dev::load_tile_cluster(tiles[1], in, c, &bar[0]);
    dev::load_tile_hint(tiles[2], in, c, &bar[0], dev::kEvictFirst);
    dev::wait_parity(&bar[0], 0, 3 * in.box_bytes);
    // expect_tx + plain arrive, two bulk loads
    dev::expect_tx(&bar[1], 512);
    dev::bulk_load(bulk[0], g + 128, 256, &bar[1]);
    dev::bulk_load_cluster(bulk[1], g + 128, 256, &bar[1]);
    bool before = dev::try_wait_parity(&bar[1], 1);  // phase 0 not complete: parity 1 is the "previous" phase
    dev::arrive(&bar[1]);
    dev::wait_parity(&bar[1], 0, 512);
    r->phases_ok = before ? 1u : 0u;
    dev::mbar_inval(&bar[3]);
    r->box_bytes = in.box_bytes;
  }
  __syncthreads();
  for (int i = t; i < 3 * BOX; i += blockDim.x) r->tile[i / BOX][i % BOX] = tiles[i / BOX][i % BOX];
  for (int i = t; i < 128; i += blockDim.x) r->bulk[i / 64][i % 64] = bulk[i / 64][i % 64];
  // stores: tile 0 to (0, 0) and with a hint to (16, 0) of `out`; then add tile 0 again at (0, 0)
  if (t == 0) {
    dev::fence_proxy_async_shared();
    const int32_t c0[2] = {0, 0}, c1[2] = {16, 0};
    dev::store_tile(out, c0, tiles[0]);
    dev::store_tile_hint(out, c1, tiles[0], dev::kEvictNormal);
    dev::commit_group();
    dev::wait_group<0>();
    dev::reduce_tile(cuda::ptx::op_add, out, c0, tiles[0]);
    dev::commit_group();
    dev::wait_group_read<0>();
    dev::wait_group<0>();
    // non-tensor: bulk store 256 bytes at gout + 1024 elements, then add them twice more
    dev::bulk_store(gout + 1024, bulk[0], 256);
    dev::bulk_store_hint(gout + 1088, bulk[1], 256, dev::kEvictLast);
    dev::commit_group();
    dev::wait_group<0>();
    dev::bulk_reduce(cuda::ptx::op_add, gout + 1024, bulk[0], 256u);
    dev::commit_group();
    dev::wait_group<0>();
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

// Cluster of 2: rank 0 multicasts a tile and 256 bulk bytes to both, copies 256 bytes
// into rank 1's shared memory, and rank 1 arrives remotely on rank 0's barrier.
__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(const __grid_constant__ dev::MapHandle in, const uint32_t* g,
                                                       Results* r) {
  __shared__ alignas(1024) uint32_t buf[BOX + 64];
  __shared__ alignas(128) uint32_t peer[64];
  __shared__ uint64_t bar[3];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) {
    for (int i = 0; i < 3; ++i) dev::mbar_init(&bar[i], 1);
    dev::fence_mbarrier_init();
    for (int i = 0; i < 64; ++i) peer[i] = 0xEEEEEEEEu;
  }
  cluster.sync();
  if (threadIdx.x == 0) {
    dev::arrive_expect_tx(&bar[0], in.box_bytes + 256);
    if (rank == 1) dev::arrive_expect_tx(&bar[1], 256);
    if (rank == 0) {
      const int32_t c[2] = {32, 8};
      dev::load_tile_multicast(buf, in, c, &bar[0], 0x3);
      dev::bulk_load_multicast(buf + BOX, g + 256, 256, &bar[0], 0x3);
      dev::wait_parity(&bar[0], 0, in.box_bytes + 256, true);
      dev::fence_proxy_async_shared();
      dev::bulk_copy_to_peer(cluster.map_shared_rank(peer, 1), buf + BOX, 256, cluster.map_shared_rank(&bar[1], 1));
      dev::wait_parity(&bar[2], 0, 0, true);  // rank 1's remote arrival
      r->remote_arrive_ok = 1;
    } else {
      dev::wait_parity(&bar[0], 0, in.box_bytes + 256, true);
      dev::wait_parity(&bar[1], 0, 256, true);
      dev::arrive_cluster(cluster.map_shared_rank(&bar[2], 0));
      for (int i = 0; i < 64; ++i) r->peer[i] = peer[i];
    }
    for (int i = 0; i < BOX + 64; ++i) r->mcast[rank][i] = buf[i];
  }
  cluster.sync();
}

static int failures = 0;
static void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  failures += !ok;
}
#define CUDA_OK(x)                                                                   \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));                      \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

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

  auto at = [&](int x, int y) { return uint32_t(y * W + x); };
  check(r->box_bytes == BOX * 4, "make_map_handle: box bytes from TensorMap::bytes_per_box()");
  for (int f = 0; f < 3; ++f) {
    bool ok = true;
    for (int y = 0; y < BY; ++y)
      for (int x = 0; x < BX; ++x) ok &= r->tile[f][y * BX + x] == at(16 + x, 4 + y);
    check(ok, f == 0 ? "load_tile" : f == 1 ? "load_tile_cluster" : "load_tile_hint + prefetch_tile");
  }
  bool ok0 = true, ok1 = true;
  for (int i = 0; i < 64; ++i) ok0 &= r->bulk[0][i] == uint32_t(128 + i), ok1 &= r->bulk[1][i] == uint32_t(128 + i);
  check(ok0, "bulk_load + expect_tx + arrive + bulk_prefetch");
  check(ok1, "bulk_load_cluster");
  check(r->phases_ok == 1, "try_wait_parity on the preceding phase");
  std::vector<uint32_t> o(8192);
  CUDA_OK(cudaMemcpy(o.data(), gout, o.size() * 4, cudaMemcpyDeviceToHost));
  bool st = true, sth = true;
  for (int y = 0; y < BY; ++y)
    for (int x = 0; x < BX; ++x) {
      st &= o[y * W + x] == 2 * at(16 + x, 4 + y);  // stored, then added once more (reduce_tile add)
      sth &= o[y * W + 16 + x] == at(16 + x, 4 + y);
    }
  check(st, "store_tile + reduce_tile(add) + commit_group/wait_group/wait_group_read");
  check(sth, "store_tile_hint");
  bool bs = true, bsh = true;
  for (int i = 0; i < 64; ++i) bs &= o[1024 + i] == 2u * (128 + i), bsh &= o[1088 + i] == uint32_t(128 + i);
  check(bs, "bulk_store + bulk_reduce(add)");
  check(bsh, "bulk_store_hint");
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
  bool mc = true;
  for (int rank = 0; rank < 2; ++rank) {
    for (int y = 0; y < BY; ++y)
      for (int x = 0; x < BX; ++x) mc &= r->mcast[rank][y * BX + x] == at(32 + x, 8 + y);
    for (int i = 0; i < 64; ++i) mc &= r->mcast[rank][BOX + i] == uint32_t(256 + i);
  }
  check(mc, "load_tile_multicast + bulk_load_multicast (both ranks)");
  bool pr = true;
  for (int i = 0; i < 64; ++i) pr &= r->peer[i] == uint32_t(256 + i);
  check(pr, "bulk_copy_to_peer");
  check(r->remote_arrive_ok == 1, "arrive_cluster");
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASSED", failures);
  return failures ? 1 : 0;
}
