// Records hardware test vectors: random valid cases run on the GPU with the
// device library, each written as tests/vectors/<category>/<id>.json =
// {"format": "tmakit-vector/1", "device", "scenario" (scenario-format.md, with
// outputs), "expected" (hex of the bytes the hardware produced)}.
// Loads and stores are also checked against a small independent reference
// (vector_common.hpp); disagreements are listed in <outdir>/mismatches.txt and
// the vector is still written (the hardware is the truth).
// Usage: record_vectors OUTDIR CATEGORY COUNT SEED [FIRST]
//   CATEGORY: tile_load tile_store tile_reduce bulk_copy multicast
// The program exits with code 3 at the first failing launch, naming the case,
// so that a driver script can resume from FIRST = that case + 1.
#include <cuda_runtime.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tmakit/device/launch.cuh"
#include "tmakit/device/tma.cuh"
#include "tmakit/gpu/encode.hpp"

#include "record_vectors.hpp"

using namespace tmakit::gpu_tools::record;
namespace dev = tmakit::device;
template <int OP>
__host__ __device__ constexpr cuda::ptx::dot_op dot_op_of() {
  using cuda::ptx::dot_op;
  return OP == 0 ? dot_op::add : OP == 1 ? dot_op::min : OP == 2 ? dot_op::max : OP == 3 ? dot_op::inc
       : OP == 4 ? dot_op::dec : OP == 5 ? dot_op::and_op : OP == 6 ? dot_op::or_op : dot_op::xor_op;
}

__device__ inline void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ inline uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

template <int N, int OP>
__global__ void run_job(const __grid_constant__ dev::MapHandle map, Job j) {
  extern __shared__ __align__(1024) uint8_t dyn[];
  uint8_t* base = dyn + ((1024u - (dev::smem_addr(dyn) & 1023u)) & 1023u);  // window offset 0 is 1024-aligned
  const bool mcast = j.kind == kMcastTile || j.kind == kMcastBulk;
  const uint32_t rank = mcast ? cluster_rank() : 0;
  for (uint32_t i = threadIdx.x; i < j.region_bytes; i += blockDim.x)
    base[j.region_off + i] = j.prefill[size_t(rank) * j.region_bytes + i];
  dev::fence_proxy_async_shared();
  __syncthreads();
  uint64_t* bar = reinterpret_cast<uint64_t*>(base + j.bar_off);
  void* data = base + j.data_off;
  int32_t c[N];
  for (int i = 0; i < N; ++i) c[i] = j.c[i];
  const bool load = j.kind == kTileLoad || j.kind == kBulkLoad || mcast;
  if (load) {
    if (threadIdx.x == 0) {
      dev::mbar_init(bar, 1);
      dev::fence_mbarrier_init();
    }
    if (mcast) cluster_sync_all();
    else __syncthreads();
    if (threadIdx.x == 0) {
      const bool in_mask = !mcast || ((j.mask >> rank) & 1);
      if (in_mask) dev::arrive_expect_tx(bar, j.tx_bytes);
      if (j.kind == kTileLoad) {
        if (j.form == 0) dev::load_tile(data, map, c, bar);
        else if (j.form == 1) dev::load_tile_cluster(data, map, c, bar);
        else dev::load_tile_hint(data, map, c, bar, dev::kEvictLast);
      } else if (j.kind == kBulkLoad) {
        if (j.form == 0) dev::bulk_load(data, j.gsrc, j.bulk_size, bar);
        else dev::bulk_load_cluster(data, j.gsrc, j.bulk_size, bar);
      } else if (rank == 0) {
        if (j.kind == kMcastTile) dev::load_tile_multicast(data, map, c, bar, j.mask);
        else dev::bulk_load_multicast(data, j.gsrc, j.bulk_size, bar, j.mask);
      }
      if (in_mask) dev::wait_parity(bar, 0, j.tx_bytes, mcast);
    }
    if (mcast) cluster_sync_all();
    __syncthreads();
  } else if (threadIdx.x == 0) {
    if (j.kind == kTileStore) dev::store_tile(map, c, data);
    else if (j.kind == kTileReduce) dev::reduce_tile(cuda::ptx::op_t<dot_op_of<OP>()>{}, map, c, data);
    else dev::bulk_store(j.gdst, data, j.bulk_size);
    dev::commit_group();
    dev::wait_group<0>();
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < j.region_bytes; i += blockDim.x)
    j.out[size_t(rank) * j.region_bytes + i] = base[j.region_off + i];
}

using KernelFn = void (*)(dev::MapHandle, Job);
template <int N>
KernelFn kernel_for_op(int op) {
  switch (op) {
    case 0: return run_job<N, 0>;
    case 1: return run_job<N, 1>;
    case 2: return run_job<N, 2>;
    case 3: return run_job<N, 3>;
    case 4: return run_job<N, 4>;
    case 5: return run_job<N, 5>;
    case 6: return run_job<N, 6>;
    default: return run_job<N, 7>;
  }
}
KernelFn kernel_for(int rank, int op) {
  switch (rank) {
    case 1: return kernel_for_op<1>(op);
    case 2: return kernel_for_op<2>(op);
    case 3: return kernel_for_op<3>(op);
    case 4: return kernel_for_op<4>(op);
    default: return kernel_for_op<5>(op);
  }
}

// ---------------------------------------------------------------------------------

namespace {

std::string g_device;
std::string g_outdir;
std::FILE* g_mismatch = nullptr;
int g_mismatches = 0;
uint8_t *d_global = nullptr, *d_prefill = nullptr, *d_out = nullptr;
constexpr size_t kArena = 1 << 20;

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
                   cudaGetErrorString(e_));                                                        \
      return false;                                                                                \
    }                                                                                              \
  } while (0)

bool g_dry = false;  // TMAKIT_DRY_RUN=1: no GPU; the reference stands in (tests the generator)

bool run_case(Case& k) {
  Job& j = k.job;
  if (g_dry) {
    if (k.want.empty()) k.want = k.output_global ? k.global : k.prefill;
  }
  dev::MapHandle h{};
  if (k.has_map && !g_dry) {
    TensorMap m = k.map;
    m.global_address = reinterpret_cast<uint64_t>(d_global) + k.map_offset;
    CUresult r = gpu::encode(m, &h.map);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "%s/%s: driver refused the map: %s (skipped)\n", k.category.c_str(), k.id.c_str(),
                   gpu::result_name(r).c_str());
      return true;
    }
    h.rank = m.rank;
  }
  if (!g_dry) {
  CHECK(cudaMemcpy(d_global, k.global.data(), k.global.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_prefill, k.prefill.data(), k.prefill.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0, k.prefill.size()));
  j.prefill = d_prefill;
  j.out = d_out;
  if (j.kind == kBulkLoad || j.kind == kMcastBulk) j.gsrc = d_global + reinterpret_cast<uint64_t>(j.gsrc);
  if (j.kind == kBulkStore) j.gdst = d_global + reinterpret_cast<uint64_t>(j.gdst);
  KernelFn fn = kernel_for(k.has_map ? k.map.rank : 1, k.op);
  const size_t smem = k.shared_bytes + 1024;
  CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  tmakit::device::ClusterLaunch launch(k.ctas, 128, smem);
  CHECK(cudaLaunchKernelEx(&launch.config, fn, h, j));
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  }

  json outputs = json::array(), expected = json::object();
  std::vector<uint8_t> got;
  if (k.output_global) {
    got.resize(k.global.size());
    if (g_dry) got = k.want;
    else CHECK(cudaMemcpy(got.data(), d_global, got.size(), cudaMemcpyDeviceToHost));
    outputs.push_back({{"name", "A"}, {"global", "A"}});
    expected["A"] = hex(got);
  } else {
    got.resize(k.prefill.size());
    if (g_dry) got = k.want;
    else CHECK(cudaMemcpy(got.data(), d_out, got.size(), cudaMemcpyDeviceToHost));
    for (int r = 0; r < k.ctas; ++r) {
      std::string name = k.ctas == 1 ? "tile" : "tile" + std::to_string(r);
      outputs.push_back({{"name", name}, {"shared", {{"cta", r}, {"offset", j.region_off}, {"bytes", j.region_bytes}}}});
      expected[name] = hex(got.data() + size_t(r) * j.region_bytes, j.region_bytes);
    }
  }
  if (!k.want.empty() && k.want != got) {
    size_t first = 0;
    while (first < got.size() && got[first] == k.want[first]) ++first;
    std::fprintf(g_mismatch, "%s/%s first differing byte %zu\n", k.category.c_str(), k.id.c_str(), first);
    ++g_mismatches;
  }

  json sc;
  sc["format"] = "tmakit-scenario/1";
  sc["target"] = "sm_90a";
  sc["ptx_version"] = "8.7";
  if (k.ctas > 1) sc["cluster"] = {{"ctas", k.ctas}};
  sc["shared_bytes"] = k.shared_bytes;
  sc["global"] = {{"A", {{"bytes", k.global.size()}, {"align", 256}, {"init", k.global_init}}}};
  sc["shared_init"] = k.shared_init;
  if (k.has_map) sc["tensor_maps"] = {{"map0", map_json(k.map, "A", k.map_offset)}};
  sc["symbols"] = k.symbols;
  sc["program"] = k.program;
  sc["outputs"] = outputs;
  json v = {{"format", "tmakit-vector/1"}, {"device", g_device}, {"scenario", sc}, {"expected", expected}};
  std::filesystem::create_directories(g_outdir + "/" + k.category);
  std::ofstream(g_outdir + "/" + k.category + "/" + k.id + ".json") << v.dump(1) << "\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s OUTDIR CATEGORY COUNT SEED [FIRST]\n", argv[0]);
    return 2;
  }
  g_outdir = argv[1];
  const std::string cat = argv[2];
  const int count = std::atoi(argv[3]);
  const uint64_t seed = std::strtoull(argv[4], nullptr, 0);
  const int first = argc > 5 ? std::atoi(argv[5]) : 0;
  cudaDeviceProp prop{};
  g_dry = std::getenv("TMAKIT_DRY_RUN") != nullptr;
  if (g_dry) {
    g_device = "dry run (no GPU)";
  } else if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  if (!g_dry) {
    g_device = prop.name;
    if (cudaMalloc(&d_global, kArena) != cudaSuccess || cudaMalloc(&d_prefill, kArena) != cudaSuccess ||
        cudaMalloc(&d_out, kArena) != cudaSuccess)
      return 1;
  }
  std::filesystem::create_directories(g_outdir);
  g_mismatch = std::fopen((g_outdir + "/mismatches.txt").c_str(), "a");
  int written = 0;
  for (int i = 0; i < count; ++i) {
    rng.seed(seed * 1000003ull + i);  // each case reproducible on its own
    const uint64_t case_seed = seed * 100000ull + i;
    Case k;
    if (cat == "tile_load") k = make_tile_load(i, case_seed);
    else if (cat == "tile_store") k = make_tile_store(i, case_seed, false);
    else if (cat == "tile_reduce") k = make_tile_store(i, case_seed, true);
    else if (cat == "bulk_copy") k = make_bulk(i, case_seed);
    else if (cat == "multicast") k = make_multicast(i, case_seed);
    else {
      std::fprintf(stderr, "unknown category %s\n", cat.c_str());
      return 2;
    }
    if (i < first) continue;
    char id[16];
    std::snprintf(id, sizeof id, "%04d", i);
    k.id = id;
    if (!run_case(k)) {
      std::fprintf(stderr, "FAULT %s case %d\n", cat.c_str(), i);
      std::fprintf(g_mismatch, "FAULT %s/%s\n", cat.c_str(), id);
      std::fclose(g_mismatch);
      return 3;
    }
    ++written;
  }
  std::printf("%s: %d vectors, %d reference mismatches (cumulative in mismatches.txt)\n", cat.c_str(), written,
              g_mismatches);
  std::fclose(g_mismatch);
  return 0;
}
