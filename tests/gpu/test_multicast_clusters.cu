// §14 Q15 (the rest): tensor multicast with several clusters in the grid, so
// %ctaid and %cluster_ctarank differ. Grid of 16 CTAs in clusters of 2, 4 and 8.
// In every cluster the CTA of rank `issuer` loads a 64 x 8 u32 box (2 KiB; rows
// 8k.. of the tensor for cluster k) with .multicast::cluster and ctaMask `mask`.
// Every CTA whose rank bit is set arms its own barrier with the box's bytes
// before a cluster barrier, then waits (bounded). Checks, for every (issuer,
// mask) with 2 and 4 CTAs per cluster (all masks) and 8 (a sample), in every
// cluster: bit k selects the CTA with %cluster_ctarank k (not %ctaid k), the
// issuer may be outside the mask, every destination's barrier completes when
// armed with exactly the box's bytes, and its tile holds its cluster's rows;
// CTAs outside the mask keep their sentinel bytes. Armed with 16 bytes more the
// barriers do not complete (the count is exact, not more).
//
// Masks with bits at or above the cluster size, and mask 0, are undefined
// behaviour. `gpu_test_multicast_clusters --unsafe CLUSTER MASK` runs one such
// launch (issuer rank 0) and prints what every CTA saw: whether its barrier
// completed (destinations only, bounded wait), and how many bytes hold which
// cluster's rows or the sentinel. Run each in its own process under `timeout`.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dense_map.cuh"
#include "gpu_check.cuh"
#include "tmakit/device/launch.cuh"
#include "tmakit/device/tma.cuh"

namespace dev = tmakit::device;
namespace ptx = cuda::ptx;

namespace {

constexpr int kCtas = 16;
constexpr int kW = 64, kRowsPerCluster = 8, kH = kRowsPerCluster * kCtas;  // rows for up to 16 clusters
constexpr int kBoxN = kW * kRowsPerCluster;                                 // 512 u32, 2 KiB
constexpr uint32_t kSentinel = 0xEEEEEEEEu;

struct Params {
  uint32_t issuer;      // cluster rank that issues the load
  uint32_t mask;        // ctaMask (16 bits used)
  uint32_t extra;       // bytes armed beyond the box
  uint64_t wait_ns;     // bounded wait of the destinations
  uint32_t settle_ns;   // pause before every CTA inspects its tile
};

struct Record {
  uint32_t ctaid, rank, cluster, nrank;
  uint32_t dest;       // the mask bit of this CTA's rank
  uint32_t completed;  // the barrier completed within the bound (destinations)
  uint32_t own_rows;   // elements equal to its cluster's rows
  uint32_t sentinel;   // elements still the sentinel
  uint32_t other;      // neither
  int32_t from_cluster;  // when every element is some cluster's rows: that cluster, else -1
};

__device__ inline uint32_t value(uint32_t row, uint32_t col) { return (row << 16) | col | 0x80000000u; }

__global__ void multicast(const __grid_constant__ dev::MapHandle m, Params p, Record* rec) {
  __shared__ __align__(128) uint32_t tile[kBoxN];
  __shared__ uint64_t bar;
  __shared__ uint32_t completed;
  const uint32_t rank = ptx::get_sreg_cluster_ctarank(), cluster = ptx::get_sreg_clusterid_x();
  const bool dest = rank < 16 && ((p.mask >> rank) & 1);
  for (int i = threadIdx.x; i < kBoxN; i += blockDim.x) tile[i] = kSentinel;
  dev::fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    dev::mbar_init(&bar, 1);
    dev::fence_mbarrier_init();
    completed = 0;
    if (dest) dev::arrive_expect_tx<dev::Scope::cluster>(&bar, kBoxN * 4 + p.extra);
  }
  ptx::barrier_cluster_arrive(ptx::sem_release);  // every barrier initialised and armed
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  if (threadIdx.x == 0 && rank == p.issuer) {
    const int32_t c[2] = {0, int32_t(cluster * kRowsPerCluster)};
    dev::load_tile_multicast(tile, m, c, &bar, uint16_t(p.mask));
  }
  if (threadIdx.x == 0 && dest) {
    const unsigned long long t0 = dev::global_timer_ns();
    bool ok = false;
    while (!(ok = dev::try_wait_parity<dev::Scope::cluster>(&bar, 0)) && dev::global_timer_ns() - t0 < p.wait_ns) {
    }
    completed = ok;
  }
  __syncthreads();
  ptx::barrier_cluster_arrive(ptx::sem_release);  // destinations done before anyone inspects or exits
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  if (p.settle_ns) {
    const unsigned long long t0 = dev::global_timer_ns();
    while (dev::global_timer_ns() - t0 < p.settle_ns) {
    }
  }
  if (threadIdx.x == 0) {
    Record r{blockIdx.x, rank, cluster, ptx::get_sreg_cluster_nctarank(), dest, completed, 0, 0, 0, -1};
    int32_t from = -2;  // -2: not decided yet
    for (int i = 0; i < kBoxN; ++i) {
      const uint32_t v = tile[i], row = i / kW, col = i % kW;
      r.own_rows += v == value(cluster * kRowsPerCluster + row, col);
      r.sentinel += v == kSentinel;
      const bool any_rows = (v & 0x80000000u) && (v & 0xFFFFu) == col && ((v >> 16) & 0x7FFFu) % kRowsPerCluster == row;
      r.other += v != kSentinel && !any_rows;
      const int32_t k = any_rows ? int32_t(((v >> 16) & 0x7FFFu) / kRowsPerCluster) : -1;
      from = from == -2 ? k : (from == k ? from : -1);
    }
    r.from_cluster = from;
    rec[blockIdx.x] = r;
  }
  ptx::barrier_cluster_arrive(ptx::sem_release);  // no CTA leaves while another may still read its window
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}

cudaError_t launch(const dev::MapHandle& m, int cluster, const Params& p, Record* d_rec, std::vector<Record>& out) {
  dev::ClusterLaunch l(cluster, 128, 0);
  l.config.gridDim = dim3(kCtas);  // several clusters
  cudaError_t e = cudaMemset(d_rec, 0xFF, sizeof(Record) * kCtas);
  if (e == cudaSuccess) e = cudaLaunchKernelEx(&l.config, multicast, m, p, d_rec);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return e;
  out.resize(kCtas);
  return cudaMemcpy(out.data(), d_rec, sizeof(Record) * kCtas, cudaMemcpyDeviceToHost);
}

void print_records(const std::vector<Record>& rs) {
  for (const Record& r : rs)
    std::printf("  ctaid %2u cluster %2u rank %u/%u dest %u barrier %s own-rows %3u sentinel %3u other %3u from-cluster %d\n",
                r.ctaid, r.cluster, r.rank, r.nrank, r.dest, r.dest ? (r.completed ? "completed" : "NOT completed") : "-",
                r.own_rows, r.sentinel, r.other, r.from_cluster);
}

int unsafe(const dev::MapHandle& m, Record* d_rec, int cluster, uint32_t mask) {
  std::printf("UNSAFE cluster size %d, ctaMask 0x%04x, issuer rank 0, grid %d CTAs\n", cluster, mask, kCtas);
  std::fflush(stdout);
  Params p{0, mask, 0, 500000000ull, 2000000};
  std::vector<Record> rs;
  const cudaError_t e = launch(m, cluster, p, d_rec, rs);
  if (e != cudaSuccess) {
    std::printf("RESULT CUDA error %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return 3;
  }
  print_records(rs);
  int completed = 0, received = 0, partial = 0, untouched = 0;
  for (const Record& r : rs) {
    completed += r.dest && r.completed;
    received += r.own_rows == kBoxN;
    untouched += r.sentinel == kBoxN;
    partial += r.sentinel != kBoxN && r.own_rows != kBoxN;
  }
  std::printf("RESULT no error; barriers completed %d, CTAs with their cluster's full box %d, with other or "
              "partial bytes %d, untouched %d\n",
              completed, received, partial, untouched);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t* d_t;
  CUDA_OK(cudaMalloc(&d_t, kW * kH * 4));
  std::vector<uint32_t> h(kW * kH);
  for (uint32_t r = 0; r < kH; ++r)
    for (uint32_t c = 0; c < kW; ++c) h[r * kW + c] = (r << 16) | c | 0x80000000u;
  CUDA_OK(cudaMemcpy(d_t, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  const dev::MapHandle m =
      dev::make_map_handle(dense_map_2d(tmakit::tensor_map::DataType::uint32, d_t, kW, kH, kW, kRowsPerCluster));
  Record* d_rec;
  CUDA_OK(cudaMalloc(&d_rec, sizeof(Record) * kCtas));

  if (argc == 4 && std::strcmp(argv[1], "--unsafe") == 0)
    return unsafe(m, d_rec, std::atoi(argv[2]), uint32_t(std::strtoul(argv[3], nullptr, 0)));
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--unsafe CLUSTER_SIZE MASK]\n", argv[0]);
    return 2;
  }

  for (int cluster : {2, 4, 8}) {
    int launches = 0, bad_records = 0, issuer_outside = 0, clusters_checked = 0;
    bool rank_differs_from_ctaid = false;
    std::vector<std::pair<uint32_t, uint32_t>> cases;  // (issuer, mask)
    const uint32_t full = (1u << cluster) - 1;
    for (uint32_t issuer = 0; issuer < uint32_t(cluster); ++issuer)
      for (uint32_t mask = 1; mask <= full; ++mask)
        if (cluster < 8 || (mask * 2654435761u >> 27) == issuer % 32 || mask == (full & ~(1u << issuer)) || mask == full)
          cases.push_back({issuer, mask});  // clusters of 8: a sample (every mask is a 1/32 draw per issuer)
    for (auto [issuer, mask] : cases) {
      Params p{issuer, mask, 0, 200000000ull, 0};
      std::vector<Record> rs;
      const cudaError_t e = launch(m, cluster, p, d_rec, rs);
      if (e != cudaSuccess) {
        std::printf("FAIL cluster %d issuer %u mask 0x%x: %s\n", cluster, issuer, mask, cudaGetErrorString(e));
        return 1;
      }
      ++launches;
      issuer_outside += !((mask >> issuer) & 1);
      clusters_checked += kCtas / cluster;
      bool bad = false;
      for (const Record& r : rs) {
        const bool want_dest = (mask >> (r.ctaid % cluster)) & 1;  // rank = ctaid mod cluster size (x clusters)
        rank_differs_from_ctaid |= r.rank != r.ctaid;
        bool ok = r.rank == r.ctaid % cluster && r.cluster == r.ctaid / cluster && r.nrank == uint32_t(cluster) &&
                  bool(r.dest) == want_dest;
        if (want_dest) ok &= r.completed && r.own_rows == kBoxN;
        else ok &= r.sentinel == kBoxN;
        if (!ok) {
          bad = true;
          ++bad_records;
        }
      }
      if (bad) {
        std::printf("MISMATCH cluster %d issuer %u mask 0x%x:\n", cluster, issuer, mask);
        print_records(rs);
      }
    }
    std::printf("INFO clusters of %d: %d launches (%d with the issuer outside the mask), %d clusters checked, "
                "%d bad CTA records\n",
                cluster, launches, issuer_outside, clusters_checked, bad_records);
    char what[200];
    std::snprintf(what, sizeof what,
                  "clusters of %d: mask bit k = %%cluster_ctarank k in every cluster, full byte count on every "
                  "destination barrier, non-destinations untouched",
                  cluster);
    check(bad_records == 0 && rank_differs_from_ctaid, what);

    // Over-armed by 16 bytes: the destinations' barriers must not complete (50 ms bound), the bytes still arrive.
    const uint32_t mask = full & ~1u;
    Params p{0, mask, 16, 50000000ull, 0};
    std::vector<Record> rs;
    const cudaError_t e = launch(m, cluster, p, d_rec, rs);
    if (e != cudaSuccess) {
      std::printf("FAIL over-armed launch: %s\n", cudaGetErrorString(e));
      return 1;
    }
    bool ok = true;
    for (const Record& r : rs) ok &= r.dest ? (!r.completed && r.own_rows == kBoxN) : r.sentinel == kBoxN;
    std::snprintf(what, sizeof what,
                  "clusters of %d, mask 0x%x armed with 16 bytes more: no destination barrier completes, bytes arrive",
                  cluster, mask);
    check(ok, what);
    if (!ok) print_records(rs);
  }
  std::printf(failures ? "FAILED\n" : "ALL PASSED\n");
  return failures ? 1 : 0;
}
