// gpu_bench: tmakit's GPU benchmark suite (docs/benchmarks.md, "GPU (H100)").
// Every implementation is checked against a reference (random inputs, poisoned
// outputs) before it is timed (median of --reps launches); rates count the bytes
// the workload must move, and each is compared with cudaMemcpy D2D of the same
// bytes in the same run. Prints the sweep as it runs, then a summary table.
//   gpu_bench [--quick] [--only PREFIX] [--reps N] [--csv FILE]
#include <cstring>

#include "common.cuh"

using namespace bench;

static void summary(const Suite& s, FILE* csv) {
  std::printf("\n== summary: best configuration of each implementation (GB/s over the bytes moved; "
              "x = ratio to cudaMemcpy D2D of the same bytes, same run)\n");
  std::printf("| workload | implementation | GB/s | x cudaMemcpy | ms | best configuration |\n|---|---|---:|---:|---:|---|\n");
  std::vector<std::string> order;
  for (const Row& r : s.rows)
    if (std::find(order.begin(), order.end(), r.workload) == order.end()) order.push_back(r.workload);
  for (const std::string& wl : order) {
    std::vector<std::string> impls;
    for (const Row& r : s.rows)
      if (r.workload == wl && std::find(impls.begin(), impls.end(), r.impl) == impls.end()) impls.push_back(r.impl);
    for (const std::string& im : impls) {
      const Row* best = nullptr;
      int fails = 0;
      for (const Row& r : s.rows) {
        if (r.workload != wl || r.impl != im) continue;
        if (!r.checked) {
          ++fails;
          continue;
        }
        if (!best || r.ms < best->ms) best = &r;
      }
      if (best)
        std::printf("| %s | %s | %.0f | %.3f | %.3f | %s%s |\n", wl.c_str(), im.c_str(), best->gbs(), best->ratio(),
                    best->ms, best->config.c_str(), fails ? fmt(" (%d configs FAILED the check)", fails).c_str() : "");
      else
        std::printf("| %s | %s | - | - | - | all %d configs FAILED the check |\n", wl.c_str(), im.c_str(), fails);
    }
  }
  if (csv) {
    std::fprintf(csv, "workload,impl,config,bytes,ms,gbs,memcpy_gbs,ratio,checked,note\n");
    for (const Row& r : s.rows)
      std::fprintf(csv, "\"%s\",\"%s\",\"%s\",%.0f,%.5f,%.1f,%.1f,%.4f,%d,\"%s\"\n", r.workload.c_str(), r.impl.c_str(),
                   r.config.c_str(), r.bytes, r.ms, r.ms > 0 ? r.gbs() : 0.0, r.memcpy_gbs, r.ms > 0 ? r.ratio() : 0.0,
                   r.checked ? 1 : 0, r.note.c_str());
  }
}

int main(int argc, char** argv) {
  Suite s;
  const char* csv_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) s.quick = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) s.only = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) s.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--only PREFIX] [--reps N] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  if (s.reps < 1) s.reps = 1;
  BENCH_CUDA(cudaGetDeviceProperties(&s.prop, 0));
  s.sms = s.prop.multiProcessorCount;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("device %s, %d SMs, L2 %d MB, smem/block opt-in %zu KB; driver API %d, runtime %d; reps %d%s\n",
              s.prop.name, s.sms, s.prop.l2CacheSize >> 20, s.prop.sharedMemPerBlockOptin >> 10, driver, runtime,
              s.reps, s.quick ? " (quick)" : "");
  std::printf("  %-28s %-26s %-44s %11s %12s %7s\n", "workload", "implementation", "configuration", "median", "rate",
              "ratio");
  run_copy(s);
  run_transpose(s);
  run_reduce(s);
  run_im2col(s);
  run_multicast(s);
  run_gemm_feed(s);
  FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
  summary(s, csv);
  if (csv) std::fclose(csv);
  int fails = 0;
  for (const Row& r : s.rows) fails += !r.checked;
  std::printf("%d row(s) failed their check\n", fails);
  return fails ? 1 : 0;
}
