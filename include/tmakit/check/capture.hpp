// The host side of `tmakit check` (docs/check.md): a trace buffer in host-mapped memory that
// instrumented modules write their records into (include/tmakit/instrument/trace.hpp), and the
// trace directory a launch leaves for the replay (the format: docs/check.md, "Trace directory").
// Callers need no CUDA header: the driver's handles are declared here exactly as cuda.h
// declares them (redeclaring an identical typedef is allowed), and the driver's functions are
// reached through DriverCalls, so the preload library never links libcuda.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/instrument/trace.hpp"

typedef struct CUmod_st* CUmodule;
typedef struct CUlib_st* CUlibrary;
typedef unsigned long long CUdeviceptr;

namespace tmakit::check {

// The driver functions the capture uses (CUDA 12.0 ABIs; CUresult as int: 0 = CUDA_SUCCESS).
struct DriverCalls {
  int (*mem_host_alloc)(void** pp, size_t bytes, unsigned flags) = nullptr;                  // cuMemHostAlloc
  int (*mem_host_get_device_pointer)(CUdeviceptr* d, void* p, unsigned flags) = nullptr;     // cuMemHostGetDevicePointer
  int (*mem_free_host)(void* p) = nullptr;                                                   // cuMemFreeHost
  int (*module_get_global)(CUdeviceptr* d, size_t* bytes, CUmodule m, const char* name) = nullptr;   // cuModuleGetGlobal
  int (*library_get_global)(CUdeviceptr* d, size_t* bytes, CUlibrary l, const char* name) = nullptr; // cuLibraryGetGlobal
  int (*memcpy_htod)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;              // cuMemcpyHtoD
  int (*memcpy_dtoh)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;                    // cuMemcpyDtoH
  int (*get_error_name)(int error, const char** name) = nullptr;                             // cuGetErrorName
  bool complete() const;  // every pointer set
};

// cuGetProcAddress's CUDA 12 ABI.
using GetProcAddress = int (*)(const char* symbol, void** pfn, int cuda_version, uint64_t flags, int* status);
// The functions as `get_proc_address` answers them (CUDA 12.0 versions).
DriverCalls driver_calls_from(GetProcAddress get_proc_address);
// dlopen("libcuda.so.1") and its cuGetProcAddress_v2; an incomplete DriverCalls when there is none.
DriverCalls driver_calls_from_libcuda();

// The driver's name for a result ("CUDA_ERROR_ILLEGAL_INSTRUCTION"), or "CUresult <n>".
std::string result_name(const DriverCalls& driver, int result);

// Records in host-mapped memory (cuMemHostAlloc, portable and device-mapped), and the modules
// whose `__tmakit_trace` words point at them. Not thread-safe: one launch at a time.
class TraceBuffer {
 public:
  static std::unique_ptr<TraceBuffer> create(const DriverCalls& driver, size_t capacity_records, std::string* why);
  ~TraceBuffer();
  TraceBuffer(const TraceBuffer&) = delete;
  TraceBuffer& operator=(const TraceBuffer&) = delete;

  // Sets the module's `__tmakit_trace` words (records, capacity, next = 0). False (and why)
  // when the module has no such symbol or the driver refuses a call.
  bool attach(CUmodule module, std::string* why);
  bool attach_library(CUlibrary library, std::string* why);  // the global in the current context
  // Zeroes the records and the next-index word of every attached module. The records zeroed
  // are those below the largest next index snapshot() was given since the last reset (the
  // device writes no others), or all of them when snapshot() was not given one (or was given
  // none: a hang or a fault).
  void reset();
  // The next-index word of the module attached last (a device copy: only after the launch
  // finished, never during a hang); nullopt when it cannot be read.
  std::optional<uint64_t> read_next() const;

  // Records with op != 0, in index order. Reads host memory only (safe while a kernel hangs).
  std::vector<instrument::Record> written() const;
  // Records 0..n-1 with their holes (op 0), n = min(next, capacity) when `next` is known, else
  // one past the last written record.
  std::vector<instrument::Record> snapshot(std::optional<uint64_t> next) const;
  size_t capacity() const { return capacity_; }
  // `tmakit check --ctas`: only clusters [first, end) by linear %clusterid record (trace.hpp,
  // word 3), from the next attach() on; end == 0: every cluster.
  void trace_clusters(uint32_t first, uint32_t end) { clusters_word_ = end ? first | uint64_t{end} << 32 : 0; }
  const instrument::Record* records() const { return records_; }
  CUdeviceptr device_address() const { return device_; }

 private:
  TraceBuffer() = default;
  bool attach_found(int lookup, const char* holder, CUdeviceptr words, size_t bytes, std::string* why);
  bool set_words(CUdeviceptr words, size_t bytes, std::string* why);
  DriverCalls driver_;
  instrument::Record* records_ = nullptr;
  CUdeviceptr device_ = 0;
  size_t capacity_ = 0;
  uint64_t clusters_word_ = 0;
  std::vector<CUdeviceptr> attached_;  // the `__tmakit_trace` of each attached module
  mutable std::optional<size_t> dirty_;  // records that may be non-zero since reset(); nullopt: unknown
};

// One launch, as meta.json says it.
struct LaunchInfo {
  std::string kernel;  // the mangled name
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
  uint64_t dynamic_smem = 0;
  std::string outcome = "completed";  // completed | timeout | fault | launch_error
  std::string driver_result = "CUDA_SUCCESS";
  std::optional<uint64_t> next;        // the next-index word when known
  double timeout_s = 0;                // for a timeout
  uint32_t clusters_traced[2] = {0, 0};  // --ctas: [first, end) by linear %clusterid; end 0: all
  std::string target = "sm_90a";
};

// Writes DIR/meta.json, trace.bin (snapshot(info.next)), sites.json, maps.jsonl and (when not
// empty) module.ptx, through DIR.tmp-<pid> renamed into place. Throws std::runtime_error with
// the path and the reason when it cannot.
void write_trace_dir(const std::filesystem::path& dir, const LaunchInfo& info, const TraceBuffer& trace,
                     std::string_view sites_json, std::string_view maps_jsonl, std::string_view instrumented_ptx);
// The same from records already taken (the buffer may be reused by then).
void write_trace_dir(const std::filesystem::path& dir, const LaunchInfo& info,
                     const std::vector<instrument::Record>& records, size_t capacity, std::string_view sites_json,
                     std::string_view maps_jsonl, std::string_view instrumented_ptx);

// Contract item 7 (docs/check.md): the 64-bit FNV-1a of a text, and the line the ptxas wrapper
// adds after the `__tmakit_trace` declaration.
uint64_t module_id_of(std::string_view instrumented_ptx);
inline constexpr std::string_view kModuleIdSymbol = "__tmakit_module_id";
// The text with `.global .align 8 .u64 __tmakit_module_id = <id>;` after the `__tmakit_trace`
// declaration line; nullopt when there is no such line.
std::optional<std::string> add_module_id(std::string_view instrumented_ptx, uint64_t* id);

}  // namespace tmakit::check
