// check_seeded's driver-API side: module, maps, launch with a bounded wait, the trace directory.
#include "run.hpp"

#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "driver.hpp"
#include "tmakit/check/capture.hpp"
#include "tmakit/gpu/encode.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace check_seeded {
namespace {

namespace tm = tmakit::tensor_map;
constexpr uint32_t kSide = 256;                  // the tensors: kSide × kSide float32
constexpr uint32_t kThreads = 128;

std::string name_of(CUresult r) {
  const char* n = nullptr;
  return driver().cuGetErrorName(r, &n) == CUDA_SUCCESS && n ? n : "CUresult " + std::to_string(int(r));
}

void cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Usage(std::string(what) + " failed: " + name_of(r));
}
#define CU(call) cu(call, #call)

std::string hex(const void* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = static_cast<const uint8_t*>(p)[i];
    s += kDigits[b >> 4], s += kDigits[b & 15];
  }
  return s;
}

struct Gpu {
  CUdevice dev{};
  CUcontext ctx{};
  CUstream stream{};
  Gpu() {
    CU(driver().cuInit(0));
    CU(driver().cuDeviceGet(&dev, 0));
    CU(driver().cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(driver().cuCtxSetCurrent(ctx));
    CU(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  }
};

CUdeviceptr alloc_floats(const std::vector<float>& init) {
  CUdeviceptr d = 0;
  CU(driver().cuMemAlloc(&d, init.size() * sizeof(float)));
  CU(driver().cuMemcpyHtoD(d, init.data(), init.size() * sizeof(float)));
  return d;
}

std::vector<float> ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + float(i);
  return v;
}

// A 2-D float32 map over a side × side tensor at `address`, encoded by the driver
// (cuTensorMapEncodeTiled through tmakit's bridge); its watch-log line goes to `log`.
struct Map {  // CUtensorMap is 64-byte aligned by its own declaration
  CUtensorMap map;
};
Map encode(CUdeviceptr address, uint32_t side, uint32_t box_x, uint32_t box_y, bool swizzle128, std::string& log) {
  tm::TensorMap m;
  m.rank = 2;
  m.global_address = address;
  m.dims = {side, side};
  m.strides = {uint64_t(side) * 4};
  m.box = {box_x, box_y};
  m.swizzle = swizzle128 ? tm::Swizzle::b128 : tm::Swizzle::none;
  Map out{};
  CUresult r = tmakit::gpu::encode(m, &out.map);
  if (r != CUDA_SUCCESS) throw Usage("cuTensorMapEncodeTiled refused the case's map: " + name_of(r));
  nlohmann::json line = {{"call", "cuTensorMapEncodeTiled"}, {"map", tm::map_to_json(m)},
                         {"descriptor", hex(&out.map, sizeof out.map)}, {"driver_code", 0}};
  log += line.dump() + "\n";
  return out;
}

// Polls the stream until the kernel ends or `timeout` passes (0: forever).
CUresult wait_for(CUstream s, double timeout) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    CUresult r = driver().cuStreamQuery(s);
    if (r != CUDA_ERROR_NOT_READY) return r;
    if (timeout > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout)
      return CUDA_ERROR_NOT_READY;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text)) throw Usage("cannot write " + path);
}

int run_case(const Case& c, bool clean, double timeout, const std::string& ptx, const Capture* capture) {
  Gpu gpu;
  CUmodule mod{};
  CU(driver().cuModuleLoadData(&mod, ptx.c_str()));
  CUfunction fn{};
  CU(driver().cuModuleGetFunction(&fn, mod, c.symbol.c_str()));

  std::unique_ptr<tmakit::check::TraceBuffer> trace;
  if (capture) {
    std::string why;
    auto calls = tmakit::check::driver_calls_from_libcuda();
    trace = tmakit::check::TraceBuffer::create(calls, capture->capacity, &why);
    if (!trace || !trace->attach(reinterpret_cast<::CUmodule>(mod), &why))
      throw Usage("--self-capture: no trace buffer: " + why);
    trace->reset();
  }

  const auto source = ramp(kSide * kSide, 0.0f), other = ramp(kSide * kSide, 100000.0f);
  const CUdeviceptr src = alloc_floats(source), alt = alloc_floats(other);
  const CUdeviceptr dst = alloc_floats(std::vector<float>(kSide * kSide, 0.0f));
  const CUdeviceptr out = alloc_floats(std::vector<float>(4096, 0.0f));
  std::string maps_log;
  const int64_t seed = clean ? c.clean : c.seeded;
  const bool stores = c.kernel == Kernel::store_fence || c.kernel == Kernel::overwrite;
  Map map = encode(stores ? dst : src, kSide, c.box_x, c.box_y, c.swizzle128, maps_log);
  CUdeviceptr gmap = 0;  // tensormap_fence: the map in global memory
  CU(driver().cuMemAlloc(&gmap, sizeof(CUtensorMap)));
  CU(driver().cuMemcpyHtoD(gmap, &map.map, sizeof(CUtensorMap)));

  int32_t i32 = static_cast<int32_t>(seed);
  uint32_t u32 = static_cast<uint32_t>(seed), box_bytes = c.box_x * c.box_y * 4, bulk_bytes = 256;
  uint16_t mask = static_cast<uint16_t>(seed);
  CUdeviceptr bulk_src = src;
  if (c.name == "bulk_size") bulk_bytes = u32;
  if (c.name == "bulk_src_align") bulk_src = src + u32;
  std::vector<void*> args;
  switch (c.kernel) {
    case Kernel::expect_tx: args = {&map.map, &i32, &box_bytes, (void*)&out}; break;
    case Kernel::arrive_count: case Kernel::wrong_parity: case Kernel::dst_offset:
      args = {&map.map, &u32, (void*)&out}; break;
    case Kernel::coord_granule: case Kernel::read_before_wait: args = {&map.map, &i32, (void*)&out}; break;
    case Kernel::multicast_mask: args = {&map.map, &mask, (void*)&out}; break;
    case Kernel::store_fence: case Kernel::overwrite: args = {&map.map, &i32}; break;
    case Kernel::init_fence: args = {&i32, (void*)&out}; break;
    case Kernel::tensormap_fence: args = {(void*)&gmap, (void*)&alt, &i32, (void*)&out}; break;
    case Kernel::bulk: args = {(void*)&bulk_src, &bulk_bytes, (void*)&out}; break;
  }

  CUlaunchConfig cfg{};
  cfg.gridDimX = c.cluster, cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = kThreads, cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = std::max(box_bytes, 4096u) + 2048;  // room for the 1 KiB round-up and an offset
  cfg.hStream = gpu.stream;
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = c.cluster, attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  if (c.cluster > 1) cfg.attrs = &attr, cfg.numAttrs = 1;

  std::printf("case %s (%s): %s\n", c.name.c_str(), clean ? "clean twin" : "seeded", clean ? "no bug" : c.what);
  std::fflush(stdout);
  CUresult launched = driver().cuLaunchKernelEx(&cfg, fn, args.data(), nullptr);
  CUresult ended = launched == CUDA_SUCCESS ? wait_for(gpu.stream, timeout) : launched;

  tmakit::check::LaunchInfo info;
  info.kernel = c.symbol;
  info.grid[0] = c.cluster, info.block[0] = kThreads, info.cluster[0] = c.cluster;
  info.dynamic_smem = cfg.sharedMemBytes;
  info.driver_result = name_of(ended == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : ended);
  int status = 0;
  if (launched != CUDA_SUCCESS) info.outcome = "launch_error", status = 5;
  else if (ended == CUDA_ERROR_NOT_READY) info.outcome = "timeout", info.timeout_s = timeout, status = 3;
  else if (ended != CUDA_SUCCESS) info.outcome = "fault", status = 4;

  if (status == 0) {
    std::vector<float> got(stores ? kSide * kSide : 4096);
    CU(driver().cuMemcpyDtoH(got.data(), stores ? dst : out, got.size() * sizeof(float)));
    std::printf("observed: completed; %s\n", observe(c, clean, got, source, other).c_str());
  } else if (status == 3) {
    std::printf("observed: still running after %.1f s (a hang)\n", timeout);
  } else {
    std::printf("observed: %s: %s\n", status == 5 ? "launch refused" : "kernel faulted", info.driver_result.c_str());
  }
  if (trace) {
    // The records made (those in the slots and those counted past the capacity): read after the
    // launch finished, never during a hang.
    std::string lost;
    if (status == 0 && trace->collect(tmakit::check::LaunchEnd::finished, 10, &lost)) info.next = trace->made();
    tmakit::check::write_trace_dir(capture->dir, info, *trace, capture->sites_json, maps_log,
                                   capture->instrumented_ptx);
    const size_t written = trace->written().size();
    std::printf("trace: %s (%zu records written%s%s)\n", capture->dir.c_str(), written,
                info.next ? (", next " + std::to_string(*info.next)).c_str() : "",
                written >= trace->capacity() || (info.next && *info.next > trace->capacity()) ? "; the buffer filled up" : "");
  }
  std::fflush(stdout);
  if (status == 3 || status == 4) _exit(status);  // a hung or dead context: nothing more to ask it
  return status;
}

int run_overhead(const std::string& plain_ptx, const std::string& instrumented_ptx, const std::string& label,
                 int iterations) {
  Gpu gpu;
  CUmodule plain{}, traced{};
  CU(driver().cuModuleLoadData(&plain, plain_ptx.c_str()));
  CU(driver().cuModuleLoadData(&traced, instrumented_ptx.c_str()));
  std::string why;
  auto calls = tmakit::check::driver_calls_from_libcuda();
  auto trace = tmakit::check::TraceBuffer::create(calls, 1 << 20, &why);  // 128 MiB: a whole run's records
  if (!trace || !trace->attach(reinterpret_cast<::CUmodule>(traced), &why)) throw Usage("no trace buffer: " + why);

  constexpr uint32_t side = 2048;
  const auto source = ramp(size_t(side) * side, 0.0f);
  const CUdeviceptr in = alloc_floats(source), out = alloc_floats(std::vector<float>(source.size(), 0.0f));
  std::string log;
  Map min = encode(in, side, 32, 32, false, log), mout = encode(out, side, 32, 32, false, log);
  int tiles = side / 32;
  void* args[] = {&min.map, &mout.map, &tiles, &tiles};
  CUevent a{}, b{};
  CU(driver().cuEventCreate(&a, CU_EVENT_DEFAULT));
  CU(driver().cuEventCreate(&b, CU_EVENT_DEFAULT));
  auto time = [&](CUmodule m) {
    CUfunction fn{};
    CU(driver().cuModuleGetFunction(&fn, m, "copy_tiles"));
    CU(driver().cuMemsetD32(out, 0, source.size()));
    if (m == traced) trace->reset();
    CUlaunchConfig cfg{};
    cfg.gridDimX = 132, cfg.gridDimY = cfg.gridDimZ = 1, cfg.blockDimX = kThreads, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 4096 + 1024;
    cfg.hStream = gpu.stream;
    CU(driver().cuEventRecord(a, gpu.stream));
    CU(driver().cuLaunchKernelEx(&cfg, fn, args, nullptr));
    CU(driver().cuEventRecord(b, gpu.stream));
    CU(driver().cuEventSynchronize(b));
    float ms = 0;
    CU(driver().cuEventElapsedTime(&ms, a, b));
    std::vector<float> got(source.size());
    CU(driver().cuMemcpyDtoH(got.data(), out, got.size() * sizeof(float)));
    if (got != source) throw Usage(std::string("copy_tiles (") + (m == traced ? "instrumented" : "plain") + ") copied wrong bytes");
    return double(ms);
  };
  std::vector<double> tp, ti;
  time(plain), time(traced);  // warm-up
  for (int i = 0; i < iterations; ++i) tp.push_back(time(plain)), ti.push_back(time(traced));
  std::sort(tp.begin(), tp.end()), std::sort(ti.begin(), ti.end());
  const double p = tp[tp.size() / 2], t = ti[ti.size() / 2];
  std::string lost;
  auto next = trace->collect(tmakit::check::LaunchEnd::finished, 10, &lost) ? trace->made() : std::nullopt;
  std::printf("overhead: copy_tiles %ux%u float32 (%d tiles of 32x32, 132 CTAs x %u threads), median of %d: "
              "plain %.3f ms, instrumented (%s) %.3f ms, ratio %.2fx; last run's records: %llu (capacity %zu)\n",
              side, side, tiles * tiles, kThreads, iterations, p, label.c_str(), t, t / p,
              static_cast<unsigned long long>(next.value_or(0)), trace->capacity());
  return 0;
}

}  // namespace check_seeded
