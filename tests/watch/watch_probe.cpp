// A program that makes tensor-map calls the way real programs reach the driver,
// for the watch tests (test_watch.cpp, on the stand-in libcuda) and for the H100
// (scripts/watch-device.sh, on the real driver). It prints one line per call:
// the result the program got and a hash of the 128 descriptor bytes, so a run
// with and without `tmakit watch` can be compared line by line.
//
//   watch_probe PATH replay FILE [FIRST COUNT]   encode the recorded maps of FILE
//   watch_probe PATH defensive NAME|list         one call with null pointers, a bad rank or enum
//   watch_probe PATH threads FILE T N            T threads, N encodes each
//   watch_probe PATH fork FILE                   encode, fork, encode in both
//   watch_probe PATH exec FILE                   encode, then exec itself (replay of the next map)
//   watch_probe PATH replace FILE                encode, then replace the address (aligned, misaligned)
//   watch_probe PATH repeat FILE I N             encode map I of FILE N times: nanoseconds per call
// PATH: linked (calls libcuda's exported symbols), dlsym (dlopen + dlsym, as Triton's
// launcher does), gpa (cuGetProcAddress_v2 from dlsym), runtime (the CUDA runtime's
// way: cuGetProcAddress asked for cuGetProcAddress, then that asked for the encoder).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../../src/watch/driver_abi.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace abi = tmakit::watch::abi;
namespace tmap = tmakit::tensor_map;

extern "C" {
abi::CUresult cuTensorMapEncodeTiled(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*, const uint32_t*,
                                     const uint32_t*, int, int, int, int);
abi::CUresult cuTensorMapEncodeIm2col(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*, const int*,
                                      const int*, uint32_t, uint32_t, const uint32_t*, int, int, int, int);
abi::CUresult cuTensorMapEncodeIm2colWide(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*, int, int,
                                          uint32_t, uint32_t, const uint32_t*, int, int, int, int, int);
abi::CUresult cuTensorMapReplaceAddress(void*, void*);
}

namespace {

struct Driver {
  abi::EncodeTiled tiled = nullptr;
  abi::EncodeIm2col im2col = nullptr;
  abi::EncodeIm2colWide im2col_wide = nullptr;
  abi::ReplaceAddress replace = nullptr;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "watch_probe: %s\n", what.c_str());
  std::exit(3);
}

template <class Fn>
Fn from_gpa(abi::GetProcAddressV2 gpa, const char* name, int version) {
  void* fn = nullptr;
  int status = -1;
  if (gpa(name, &fn, version, 0, &status) != 0 || fn == nullptr) die(std::string("cuGetProcAddress: no ") + name);
  return reinterpret_cast<Fn>(fn);
}

// The H100's driver answers an encode before cuInit with CUDA_ERROR_NOT_INITIALIZED
// and one with no current context with CUDA_ERROR_INVALID_CONTEXT: real programs set
// both up first (the runtime does it itself), and so does the probe.
void* g_context = nullptr;                           // the primary context, for every thread
abi::CUresult (*g_set_current)(void*) = nullptr;     // cuCtxSetCurrent

void init_driver(void* handle) {
  auto find = [&](const char* name) {
    void* fn = handle ? dlsym(handle, name) : dlsym(RTLD_DEFAULT, name);
    if (fn == nullptr) die(std::string("no ") + name);
    return fn;
  };
  using Init = abi::CUresult (*)(unsigned);
  using Retain = abi::CUresult (*)(void**, int);
  using SetCurrent = abi::CUresult (*)(void*);
  if (reinterpret_cast<Init>(find("cuInit"))(0) != 0) die("cuInit failed");
  if (reinterpret_cast<Retain>(find("cuDevicePrimaryCtxRetain"))(&g_context, 0) != 0) die("no primary context");
  g_set_current = reinterpret_cast<SetCurrent>(find("cuCtxSetCurrent"));
  if (g_set_current(g_context) != 0) die("cuCtxSetCurrent failed");
}

Driver open_driver(const std::string& path) {
  Driver d;
  if (path == "linked") {
    init_driver(nullptr);
    d.tiled = &cuTensorMapEncodeTiled, d.im2col = &cuTensorMapEncodeIm2col;
    d.im2col_wide = &cuTensorMapEncodeIm2colWide, d.replace = &cuTensorMapReplaceAddress;
    return d;
  }
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) die(std::string("dlopen libcuda.so.1: ") + dlerror());
  init_driver(h);
  if (path == "dlsym") {
    d.tiled = reinterpret_cast<abi::EncodeTiled>(dlsym(h, "cuTensorMapEncodeTiled"));
    d.im2col = reinterpret_cast<abi::EncodeIm2col>(dlsym(h, "cuTensorMapEncodeIm2col"));
    d.im2col_wide = reinterpret_cast<abi::EncodeIm2colWide>(dlsym(h, "cuTensorMapEncodeIm2colWide"));
    d.replace = reinterpret_cast<abi::ReplaceAddress>(dlsym(h, "cuTensorMapReplaceAddress"));
    if (!d.tiled || !d.im2col || !d.replace) die("dlsym: an encoder is missing");
    return d;
  }
  auto gpa = reinterpret_cast<abi::GetProcAddressV2>(dlsym(h, "cuGetProcAddress_v2"));
  if (gpa == nullptr) die("dlsym: no cuGetProcAddress_v2");
  if (path == "runtime") gpa = from_gpa<abi::GetProcAddressV2>(gpa, "cuGetProcAddress", 12000);
  else if (path != "gpa") die("unknown path " + path);
  d.tiled = from_gpa<abi::EncodeTiled>(gpa, "cuTensorMapEncodeTiled", 12000);
  d.im2col = from_gpa<abi::EncodeIm2col>(gpa, "cuTensorMapEncodeIm2col", 12000);
  d.im2col_wide = from_gpa<abi::EncodeIm2colWide>(gpa, "cuTensorMapEncodeIm2colWide", 12080);
  d.replace = from_gpa<abi::ReplaceAddress>(gpa, "cuTensorMapReplaceAddress", 12000);
  return d;
}

struct alignas(64) Descriptor {
  unsigned char bytes[128];
};

uint64_t hash(const Descriptor& d) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char b : d.bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

abi::CUresult encode(const Driver& d, const tmap::TensorMap& m, Descriptor* out) {
  uint64_t dims[5], strides[5];
  uint32_t box[5], estr[5];
  int lower[3], upper[3];
  for (int i = 0; i < 5; ++i) {
    dims[i] = m.dims[i], box[i] = m.box[i], estr[i] = m.element_strides[i];
    strides[i] = i < 4 ? m.strides[i] : 0;
  }
  for (int i = 0; i < 3; ++i) lower[i] = m.pixel_box_lower[i], upper[i] = m.pixel_box_upper[i];
  void* addr = reinterpret_cast<void*>(static_cast<uintptr_t>(m.global_address));
  const int type = static_cast<int>(m.data_type), il = static_cast<int>(m.interleave);
  const int sw = static_cast<int>(m.swizzle), l2 = static_cast<int>(m.l2_promotion);
  const int oob = static_cast<int>(m.oob_fill);
  const auto rank = static_cast<uint32_t>(m.rank);
  switch (m.encode) {
    case tmap::Encode::tiled: return d.tiled(out, type, rank, addr, dims, strides, box, estr, il, sw, l2, oob);
    case tmap::Encode::im2col:
      return d.im2col(out, type, rank, addr, dims, strides, lower, upper, m.channels_per_pixel, m.pixels_per_column,
                      estr, il, sw, l2, oob);
    case tmap::Encode::im2col_wide:
      if (d.im2col_wide == nullptr) return abi::kNotFound;
      return d.im2col_wide(out, type, rank, addr, dims, strides, m.pixel_box_lower_w, m.pixel_box_upper_w,
                           m.channels_per_pixel, m.pixels_per_column, estr, il, static_cast<int>(m.wide_mode), sw,
                           l2, oob);
  }
  return abi::kInvalidValue;
}

std::vector<tmap::TensorMap> load(const std::string& file) {
  std::ifstream in(file);
  if (!in) die("cannot read " + file);
  std::vector<tmap::TensorMap> maps;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    j.erase("driver");
    j.erase("intended_rule");
    // Ranks outside 1..5 (recorded as refusals) cannot be read as a map: read a
    // rank-1 map and set the rank as recorded, so the driver sees that rank.
    const size_t rank = j.at("dims").size();
    if (rank < 1 || rank > 5)
      for (const char* key : {"dims", "box", "element_strides"})
        if (j.contains(key)) j[key] = nlohmann::json::array({1});
    if (rank < 1 || rank > 5) j["strides"] = nlohmann::json::array();
    tmap::TensorMap m = tmap::map_from_json(j, file).map;
    m.rank = static_cast<int>(rank);
    maps.push_back(m);
  }
  return maps;
}

void report(const char* what, size_t i, abi::CUresult r, const Descriptor& d) {
  std::printf("%s %zu: result %d descriptor %016llx\n", what, i, r,
              r == 0 ? static_cast<unsigned long long>(hash(d)) : 0ull);
}

int replay(const Driver& d, const std::vector<tmap::TensorMap>& maps, size_t first, size_t count) {
  for (size_t i = first; i < maps.size() && i < first + count; ++i) {
    Descriptor out{};
    report("map", i, encode(d, maps[i], &out), out);
  }
  return 0;
}

// Arguments no driver should see, one case per process (`defensive NAME`;
// `defensive list` names them): the program must survive each, watched or not.
int defensive(const Driver& d, const std::string& which) {
  alignas(64) static Descriptor out{};
  uint64_t dims[5] = {64, 64, 1, 1, 1}, strides[4] = {256, 0, 0, 0};
  uint32_t box[5] = {16, 16, 1, 1, 1}, estr[5] = {1, 1, 1, 1, 1};
  alignas(64) static unsigned char page[4096];
  // A fixed global address (the driver does not read it), so the H100's answers
  // can be recorded for exactly these maps (tests/vectors/watch/defensive_verdicts.jsonl).
  void* addr = reinterpret_cast<void*>(0x10000);
  auto* misaligned = reinterpret_cast<Descriptor*>(page + 32);
  using Case = std::pair<const char*, std::function<abi::CUresult()>>;
  const std::vector<Case> cases = {
      {"valid", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"null-map", [&] { return d.tiled(nullptr, 7, 2, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"misaligned-map", [&] { return d.tiled(misaligned, 7, 2, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"null-dims", [&] { return d.tiled(&out, 7, 2, addr, nullptr, strides, box, estr, 0, 0, 0, 0); }},
      {"null-strides", [&] { return d.tiled(&out, 7, 2, addr, dims, nullptr, box, estr, 0, 0, 0, 0); }},
      {"null-box", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, nullptr, estr, 0, 0, 0, 0); }},
      {"null-element-strides", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, nullptr, 0, 0, 0, 0); }},
      {"rank-0", [&] { return d.tiled(&out, 7, 0, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"rank-6", [&] { return d.tiled(&out, 7, 6, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"rank-huge", [&] { return d.tiled(&out, 7, 0xffffffffu, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"type-99", [&] { return d.tiled(&out, 99, 2, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"type-negative", [&] { return d.tiled(&out, -1, 2, addr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"swizzle-9", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, estr, 0, 9, 0, 0); }},
      {"interleave-3", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, estr, 3, 0, 0, 0); }},
      {"l2-4", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, estr, 0, 0, 4, 0); }},
      {"fill-2", [&] { return d.tiled(&out, 7, 2, addr, dims, strides, box, estr, 0, 0, 0, 2); }},
      {"null-address", [&] { return d.tiled(&out, 7, 2, nullptr, dims, strides, box, estr, 0, 0, 0, 0); }},
      {"im2col-null-corners",
       [&] { return d.im2col(&out, 7, 3, addr, dims, strides, nullptr, nullptr, 16, 16, estr, 0, 0, 0, 0); }},
  };
  for (const auto& [name, call] : cases) {
    if (which == "list") std::printf("%s\n", name);
    else if (which == name) return std::printf("%s: result %d\n", name, call()) > 0 ? 0 : 1;
  }
  return which == "list" ? 0 : (die("no defensive case " + which), 1);
}

int threads(const Driver& d, const std::vector<tmap::TensorMap>& maps, int t, int n) {
  std::vector<std::thread> pool;
  std::vector<int> failures(static_cast<size_t>(t), 0);
  for (int k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      g_set_current(g_context);  // a context is current per thread
      for (int i = 0; i < n; ++i) {
        Descriptor out{};
        const tmap::TensorMap& m = maps[static_cast<size_t>(k * n + i) % maps.size()];
        failures[static_cast<size_t>(k)] += encode(d, m, &out) == 999;  // no verdict: a test bug
      }
    });
  for (auto& th : pool) th.join();
  int total = 0;
  for (int f : failures) total += f;
  std::printf("threads: %d x %d calls, %d unanswered\n", t, n, total);
  return total == 0 ? 0 : 1;
}

int forked(const Driver& d, const std::vector<tmap::TensorMap>& maps) {
  replay(d, maps, 0, 1);
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    replay(d, maps, 1, 2);
    std::fflush(stdout);
    std::exit(0);  // exit(), not _exit(): the child's summary is part of the test
  }
  int status = 0;
  waitpid(child, &status, 0);
  replay(d, maps, 3, 1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int replace(const Driver& d, const std::vector<tmap::TensorMap>& maps) {
  for (size_t i = 0; i < maps.size(); ++i) {
    Descriptor out{};
    if (encode(d, maps[i], &out) != 0) continue;
    auto base = reinterpret_cast<char*>(static_cast<uintptr_t>(maps[i].global_address));
    abi::CUresult aligned = d.replace(&out, base + 4096);
    report("replace-aligned", i, aligned, out);
    abi::CUresult misaligned = d.replace(&out, base + 8);
    report("replace-misaligned", i, misaligned, out);
    return 0;
  }
  die("no accepted map to replace the address of");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) die("usage: watch_probe PATH MODE [ARGS]");
  const std::string mode = argv[2];
  const Driver d = open_driver(argv[1]);
  if (mode == "defensive") return defensive(d, argc > 3 ? argv[3] : "list");
  if (argc < 4) die("mode " + mode + " needs a verdicts file");
  const std::vector<tmap::TensorMap> maps = load(argv[3]);
  if (maps.empty()) die(std::string("no maps in ") + argv[3]);
  if (mode == "replay")
    return replay(d, maps, argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 0,
                  argc > 5 ? std::strtoul(argv[5], nullptr, 10) : maps.size());
  if (mode == "threads")
    return threads(d, maps, argc > 4 ? std::atoi(argv[4]) : 4, argc > 5 ? std::atoi(argv[5]) : 100);
  if (mode == "fork") return forked(d, maps);
  if (mode == "repeat") {  // the same map N times: nanoseconds per call (the watch's cost per encode)
    const tmap::TensorMap& m = maps.at(argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 0);
    const long n = argc > 5 ? std::atol(argv[5]) : 10000;
    Descriptor out{};
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) encode(d, m, &out);
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
    std::printf("repeat: %ld calls, %.0f ns per call\n", n, ns);
    return 0;
  }
  if (mode == "replace") return replace(d, maps);
  if (mode == "exec") {
    replay(d, maps, 0, 1);
    std::fflush(stdout);
    std::string next = "1";
    execl("/proc/self/exe", argv[0], argv[1], "replay", argv[3], next.c_str(), "1", static_cast<char*>(nullptr));
    die("exec failed");
  }
  die("unknown mode " + mode);
}
