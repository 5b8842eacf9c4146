// The stand-in libcuda's part for `tmakit check` (tests only; stand_in_libcuda.cpp has the
// rest). It answers the module, memory, launch and event calls from recorded behaviour, not by
// running anything:
//   - a module is its image's text (PTX, or a "cubin": the bytes "\x7fELF" followed by the PTX
//     it was built from); its globals are `__tmakit_trace[6]` when the text declares it and
//     `__tmakit_module_id` with the value the text gives it; its functions are its `.entry`s;
//   - host-mapped memory is ordinary memory, its device address the host address (as under
//     unified addressing); so is device memory (cuMemAlloc);
//   - streams a caller creates (cuStreamCreate) carry copies only: they finish at once, while a
//     hung kernel runs (the H100 copies on a non-blocking stream while a kernel spins), unless
//     TMAKIT_STAND_IN_OUTCOME=hang-nocopy: then they do not finish while the kernel hangs;
//   - a launch copies the records of TMAKIT_STAND_IN_TRACE (a trace.bin: 128-byte records, as
//     an H100 run left them) into the buffer `__tmakit_trace` points at, with their clocks and
//     counts, each thread's in chunks of its own, as the kernel's lanes would (trace.hpp); then
//     it is finished, or never finishes
//     (TMAKIT_STAND_IN_OUTCOME=hang: events stay CUDA_ERROR_NOT_READY, cuCtxSynchronize blocks),
//     or finishes after 0.2 s (=slow: events CUDA_ERROR_NOT_READY until then, as a real kernel
//     longer than one query is),
//     or faults (=fault: CUDA_ERROR_ILLEGAL_INSTRUCTION, sticky: every later call returns it).
//   - TMAKIT_STAND_IN_LOADED names a file that gets each loaded image's text, for the tests;
//     TMAKIT_STAND_IN_LAUNCHED one that gets a line a launch: whether its trace words record.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../src/check/hooks/check_abi.hpp"
#include "tmakit/instrument/trace.hpp"

namespace {

namespace abi = tmakit::watch::abi;
constexpr abi::CUresult kInvalidImage = 200, kIllegalInstruction = 715;

struct Module {
  std::string text;
  uint64_t trace[6] = {0, 0, 0, 0, 0, 0};
  uint64_t module_id = 0;
};
struct Function {
  Module* module;
  std::string name;
};
struct Link {
  std::string text;
  std::string cubin;
};

std::mutex g_mutex;
abi::CUresult g_sticky = 0;        // the context's sticky error after a fault
bool g_pending_forever = false;    // the last launch hangs
std::chrono::steady_clock::time_point g_done_at{};  // =slow: when the last launch finishes

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The module's text from an image: PTX (NUL-terminated) or the stand-in's "cubin".
bool image_text(const void* image, std::string& text) {
  if (image == nullptr) return false;
  const char* p = static_cast<const char*>(image);
  if (std::memcmp(p, "\x7f" "ELF", 4) == 0) p += 4;
  text = p;
  return text.find(".version") != std::string::npos && text.find(".target") != std::string::npos;
}

abi::CUresult load(void** out, const void* image) {
  if (g_sticky) return g_sticky;
  std::string text;
  // A fatbin (nvcc's container) loads as a module whose kernels the stand-in does not know.
  if (out != nullptr && image != nullptr && std::memcmp(image, "\x50\xed\x55\xba", 4) == 0) {
    if (std::string f = env("TMAKIT_STAND_IN_LOADED"); !f.empty()) std::ofstream(f, std::ios::app) << "<fatbin>" << '\0';
    *out = new Module{""};
    return 0;
  }
  if (out == nullptr || !image_text(image, text)) return kInvalidImage;
  auto* m = new Module{text};
  if (size_t at = text.find("__tmakit_module_id = "); at != std::string::npos)
    m->module_id = std::strtoull(text.c_str() + at + 21, nullptr, 10);
  if (std::string f = env("TMAKIT_STAND_IN_LOADED"); !f.empty()) std::ofstream(f, std::ios::app) << text << '\0';
  *out = m;
  return 0;
}

abi::CUresult global(unsigned long long* d, size_t* bytes, void* module, const char* name) {
  if (g_sticky) return g_sticky;
  auto* m = static_cast<Module*>(module);
  if (m == nullptr || name == nullptr) return abi::kInvalidValue;
  const std::string n = name;
  if (n == "__tmakit_trace" && m->text.find("__tmakit_trace[6]") != std::string::npos) {
    if (d) *d = reinterpret_cast<uintptr_t>(m->trace);
    if (bytes) *bytes = sizeof m->trace;
    return 0;
  }
  if (n == "__tmakit_module_id" && m->text.find("__tmakit_module_id = ") != std::string::npos) {
    if (d) *d = reinterpret_cast<uintptr_t>(&m->module_id);
    if (bytes) *bytes = 8;
    return 0;
  }
  return abi::kNotFound;
}

abi::CUresult get_function(void** f, void* module, const char* name) {
  if (g_sticky) return g_sticky;
  auto* m = static_cast<Module*>(module);
  if (f == nullptr || m == nullptr || name == nullptr) return abi::kInvalidValue;
  if (m->text.find(std::string(".entry ") + name) == std::string::npos) return abi::kNotFound;
  *f = new Function{m, name};
  return 0;
}

// What the kernel would have written: the recorded records with their clocks, the counters.
abi::CUresult launch(void* f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sticky) return g_sticky;
  auto* fn = static_cast<Function*>(f);
  if (fn == nullptr) return abi::kInvalidValue;
  Module* m = fn->module;
  if (std::string f = env("TMAKIT_STAND_IN_LAUNCHED"); !f.empty())
    std::ofstream(f, std::ios::app) << (m->trace[0] != 0 ? "recording\n" : "not recording\n");
  if (m->trace[0] != 0) {
    std::ifstream in(env("TMAKIT_STAND_IN_TRACE"), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string bytes = s.str();
    const uint64_t n = bytes.size() / 128;
    // As the lanes that made them would (trace.hpp): each thread's records in chunks of its
    // own, 63 after the chunk's header (op 31, the thread's ids; the records' own ids zero but
    // their clocks), clocks 1.. in the recorded order (none at a map's halves, which share their
    // operation's); the counters: chunks taken, the records dropped. Chunks past the capacity
    // are counted, their records too.
    auto* counters = reinterpret_cast<uint32_t*>(m->trace[4]);
    auto* slots = reinterpret_cast<unsigned char*>(m->trace[0]);
    constexpr size_t kIdsAt = 8, kIdsBytes = 24;  // ctaid, tid, rank, clusterid
    std::map<std::string, std::vector<uint64_t>> by_thread;  // ids (ctaid, tid) → record indices
    std::vector<std::string> threads;
    for (uint64_t i = 0; i < n; ++i) {
      const std::string ids = bytes.substr(i * 128 + kIdsAt, 14);
      if (by_thread.find(ids) == by_thread.end()) threads.push_back(ids);
      by_thread[ids].push_back(i);
    }
    uint64_t chunk = counters[0];
    for (const std::string& t : threads) {
      const auto& mine = by_thread[t];
      for (size_t k = 0; k < mine.size(); k += 63, ++chunk) {
        const uint64_t first = chunk * 64;
        if (first + 64 > m->trace[1]) {  // past the capacity: counted in counter 1, not written
          counters[1] += static_cast<uint32_t>(std::min<size_t>(mine.size() - k, 63));
          continue;
        }
        unsigned char* header = slots + first * 128;
        std::memset(header, 0, 128);
        std::memcpy(header + kIdsAt, bytes.data() + mine[k] * 128 + kIdsAt, kIdsBytes);
        const uint64_t head = uint64_t{31} << 32;
        std::memcpy(header, &head, 8);
        for (size_t j = k; j < std::min(mine.size(), k + 63); ++j) {
          unsigned char* slot = slots + (first + 1 + (j - k)) * 128;
          std::memcpy(slot, bytes.data() + mine[j] * 128, 128);
          std::memset(slot + kIdsAt, 0, kIdsBytes);
          // The clock in the slot (bytes 8..15).
          uint16_t op = 0;
          std::memcpy(&op, slot + 4, 2);
          const uint64_t clock = op == 25 || op == 26 ? 0 : mine[j] + 1;  // tensor_map_lo, tensor_map_hi
          std::memcpy(slot + 8, &clock, 8);
        }
      }
    }
    counters[0] = static_cast<uint32_t>(chunk);
  }
  const std::string outcome = env("TMAKIT_STAND_IN_OUTCOME");
  g_pending_forever = outcome == "hang" || outcome == "hang-nocopy";
  g_done_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(outcome == "slow" ? 200 : 0);
  if (outcome == "fault") g_sticky = kIllegalInstruction;
  return 0;
}

abi::CUresult query() {
  if (g_sticky) return g_sticky;
  return g_pending_forever || std::chrono::steady_clock::now() < g_done_at ? abi::kNotReady : 0;
}

}  // namespace

#define STAND_IN extern "C" __attribute__((visibility("default")))

STAND_IN abi::CUresult cuModuleLoadData(void** m, const void* image) { return load(m, image); }
STAND_IN abi::CUresult cuModuleLoadDataEx(void** m, const void* image, unsigned, int*, void**) {
  return load(m, image);
}
STAND_IN abi::CUresult cuLibraryLoadData(void** l, const void* code, int*, void**, unsigned, int*, void**, unsigned) {
  return load(l, code);
}
STAND_IN abi::CUresult cuModuleUnload(void* m) {
  delete static_cast<Module*>(m);
  return 0;
}
STAND_IN abi::CUresult cuModuleGetGlobal_v2(unsigned long long* d, size_t* bytes, void* m, const char* name) {
  return global(d, bytes, m, name);
}
STAND_IN abi::CUresult cuLibraryGetGlobal(unsigned long long* d, size_t* bytes, void* l, const char* name) {
  return global(d, bytes, l, name);
}
STAND_IN abi::CUresult cuModuleGetFunction(void** f, void* m, const char* name) { return get_function(f, m, name); }
STAND_IN abi::CUresult cuLibraryGetKernel(void** k, void* l, const char* name) { return get_function(k, l, name); }
STAND_IN abi::CUresult cuKernelGetFunction(void** f, void* k) {
  if (f == nullptr || k == nullptr) return abi::kInvalidValue;
  *f = k;  // the driver lets a CUkernel stand for a CUfunction
  return g_sticky;
}

STAND_IN abi::CUresult cuLinkCreate_v2(unsigned, int*, void**, void** state) {
  *state = new Link;
  return g_sticky;
}
STAND_IN abi::CUresult cuLinkAddData_v2(void* state, int type, void* data, size_t, const char*, unsigned, int*,
                                        void**) {
  std::string text;
  if (type != abi::kJitInputPtx || !image_text(data, text)) return kInvalidImage;
  static_cast<Link*>(state)->text += text;
  return g_sticky;
}
STAND_IN abi::CUresult cuLinkComplete(void* state, void** cubin, size_t* size) {
  auto* l = static_cast<Link*>(state);
  l->cubin = "\x7f" "ELF" + l->text;
  *cubin = l->cubin.data();
  *size = l->cubin.size() + 1;
  return g_sticky;
}
STAND_IN abi::CUresult cuLinkDestroy(void* state) {
  delete static_cast<Link*>(state);
  return 0;
}

STAND_IN abi::CUresult cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      void*, void**, void**) {
  return launch(f);
}
STAND_IN abi::CUresult cuLaunchKernelEx(const abi::LaunchConfig* config, void* f, void**, void**) {
  return config == nullptr ? abi::kInvalidValue : launch(f);
}
// The per-thread-default-stream and cooperative launches: the same kernel run.
STAND_IN abi::CUresult cuLaunchKernel_ptsz(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, void*, void**, void**) {
  return launch(f);
}
STAND_IN abi::CUresult cuLaunchCooperativeKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                                 unsigned, void*, void**) {
  return launch(f);
}
STAND_IN abi::CUresult cuModuleLoadFatBinary(void** m, const void* fat) {
  return fat != nullptr && std::memcmp(fat, "\x50\xed\x55\xba", 4) == 0 ? load(m, fat) : kInvalidImage;
}

STAND_IN abi::CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned) {
  if (g_sticky) return g_sticky;
  *p = std::aligned_alloc(128, (bytes + 127) / 128 * 128);
  return *p ? 0 : 2;  // CUDA_ERROR_OUT_OF_MEMORY
}
STAND_IN abi::CUresult cuMemHostGetDevicePointer_v2(unsigned long long* d, void* p, unsigned) {
  *d = reinterpret_cast<uintptr_t>(p);
  return g_sticky;
}
STAND_IN abi::CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return 0;
}
STAND_IN abi::CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* src, size_t bytes) {
  if (g_sticky) return g_sticky;
  std::memcpy(reinterpret_cast<void*>(d), src, bytes);
  return 0;
}
STAND_IN abi::CUresult cuMemcpyDtoH_v2(void* dst, unsigned long long s, size_t bytes) {
  if (g_sticky) return g_sticky;
  std::memcpy(dst, reinterpret_cast<const void*>(s), bytes);
  return 0;
}

STAND_IN abi::CUresult cuEventCreate(void** e, unsigned) {
  static int event;
  *e = &event;
  return g_sticky;
}
STAND_IN abi::CUresult cuEventRecord(void*, void*) { return g_sticky; }
STAND_IN abi::CUresult cuEventQuery(void*) { return query(); }
STAND_IN abi::CUresult cuEventDestroy_v2(void*) { return 0; }
// A stream of the caller's (cuStreamCreate) holds only its copies; any other is the kernel's.
std::set<void*>& copy_streams() {
  static auto* s = new std::set<void*>;  // never destroyed: callers free streams at exit
  return *s;
}
STAND_IN abi::CUresult cuStreamQuery(void* stream) {
  if (g_sticky || !copy_streams().count(stream)) return query();
  return g_pending_forever && env("TMAKIT_STAND_IN_OUTCOME") == "hang-nocopy" ? abi::kNotReady : 0;
}
STAND_IN abi::CUresult cuStreamCreate(void** stream, unsigned) {
  if (g_sticky) return g_sticky;
  *stream = new char;
  copy_streams().insert(*stream);
  return 0;
}
STAND_IN abi::CUresult cuStreamSynchronize(void* stream) {
  while (cuStreamQuery(stream) == abi::kNotReady) std::this_thread::sleep_for(std::chrono::seconds(1));
  return cuStreamQuery(stream);
}
STAND_IN abi::CUresult cuStreamDestroy_v2(void* stream) {
  if (copy_streams().erase(stream)) delete static_cast<char*>(stream);
  return 0;
}
// Device memory: pages the host commits only when written (a trace's default 512 MiB costs
// the tests nothing), zeroed by giving whole pages back.
std::map<uintptr_t, size_t>& device_blocks() {
  static auto* m = new std::map<uintptr_t, size_t>;  // never destroyed, as copy_streams()
  return *m;
}
STAND_IN abi::CUresult cuMemAlloc_v2(unsigned long long* d, size_t bytes) {
  if (g_sticky) return g_sticky;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  device_blocks()[reinterpret_cast<uintptr_t>(p)] = bytes;
  *d = reinterpret_cast<uintptr_t>(p);
  return 0;
}
STAND_IN abi::CUresult cuMemFree_v2(unsigned long long d) {
  auto it = device_blocks().find(d);
  if (it == device_blocks().end()) return abi::kInvalidValue;
  munmap(reinterpret_cast<void*>(d), it->second);
  device_blocks().erase(it);
  return 0;
}
STAND_IN abi::CUresult cuMemsetD8Async(unsigned long long d, unsigned char value, size_t n, void*) {
  if (g_sticky) return g_sticky;
  const uintptr_t page = 4096, first = (d + page - 1) / page * page, last = (d + n) / page * page;
  if (value != 0 || first >= last) {
    std::memset(reinterpret_cast<void*>(d), value, n);
    return 0;
  }
  std::memset(reinterpret_cast<void*>(d), 0, first - d);
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);  // reads as zero again
  std::memset(reinterpret_cast<void*>(last), 0, d + n - last);
  return 0;
}
STAND_IN abi::CUresult cuMemcpyDtoHAsync_v2(void* dst, unsigned long long s, size_t bytes, void*) {
  return cuMemcpyDtoH_v2(dst, s, bytes);
}
STAND_IN abi::CUresult cuCtxSynchronize() {
  while (query() == abi::kNotReady) std::this_thread::sleep_for(std::chrono::seconds(1));
  return query();
}

// The names cuGetProcAddress answers for the calls above (version 12000 and later).
extern "C" void* tmakit_stand_in_check_proc(const char* symbol) {
  struct Entry {
    const char* name;
    void* fn;
  };
#define E(name, fn) {name, reinterpret_cast<void*>(&fn)}
  static const Entry table[] = {
      E("cuModuleLoadData", cuModuleLoadData), E("cuModuleLoadDataEx", cuModuleLoadDataEx),
      E("cuLibraryLoadData", cuLibraryLoadData), E("cuModuleUnload", cuModuleUnload),
      E("cuModuleGetGlobal", cuModuleGetGlobal_v2), E("cuLibraryGetGlobal", cuLibraryGetGlobal),
      E("cuModuleGetFunction", cuModuleGetFunction), E("cuLibraryGetKernel", cuLibraryGetKernel),
      E("cuKernelGetFunction", cuKernelGetFunction), E("cuLinkCreate", cuLinkCreate_v2),
      E("cuLinkAddData", cuLinkAddData_v2), E("cuLinkComplete", cuLinkComplete), E("cuLinkDestroy", cuLinkDestroy),
      E("cuLaunchKernel", cuLaunchKernel), E("cuLaunchKernelEx", cuLaunchKernelEx),
      E("cuLaunchKernel_ptsz", cuLaunchKernel_ptsz), E("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel),
      E("cuModuleLoadFatBinary", cuModuleLoadFatBinary),
      E("cuMemHostAlloc", cuMemHostAlloc), E("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2),
      E("cuMemFreeHost", cuMemFreeHost), E("cuMemcpyHtoD", cuMemcpyHtoD_v2), E("cuMemcpyDtoH", cuMemcpyDtoH_v2),
      E("cuEventCreate", cuEventCreate), E("cuEventRecord", cuEventRecord), E("cuEventQuery", cuEventQuery),
      E("cuEventDestroy", cuEventDestroy_v2), E("cuStreamQuery", cuStreamQuery),
      E("cuCtxSynchronize", cuCtxSynchronize), E("cuStreamCreate", cuStreamCreate),
      E("cuStreamSynchronize", cuStreamSynchronize), E("cuStreamDestroy", cuStreamDestroy_v2),
      E("cuMemAlloc", cuMemAlloc_v2), E("cuMemFree", cuMemFree_v2), E("cuMemsetD8Async", cuMemsetD8Async),
      E("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2),
  };
#undef E
  for (const Entry& e : table)
    if (std::strcmp(symbol, e.name) == 0) return e.fn;
  return nullptr;
}
