// The host side of `tmakit check` (docs/check.md): a trace buffer in device memory (or
// host-mapped memory) that instrumented modules write their records into (include/tmakit/instrument/trace.hpp), and the
// trace directory a launch leaves for the replay (the format: docs/check.md, "Trace directory").
// Callers need no CUDA header: the driver's handles are declared here exactly as cuda.h
// declares them (redeclaring an identical typedef is allowed), and the driver's functions are
// reached through DriverCalls, so the preload library never links libcuda.
#pragma once
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
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
  // Records in device memory (RecordsIn::device) need these as well.
  int (*mem_alloc)(CUdeviceptr* d, size_t bytes) = nullptr;                                  // cuMemAlloc
  int (*mem_free)(CUdeviceptr d) = nullptr;                                                  // cuMemFree
  int (*memset_d8_async)(CUdeviceptr d, unsigned char value, size_t n, void* stream) = nullptr;  // cuMemsetD8Async
  int (*memcpy_dtoh_async)(void* dst, CUdeviceptr src, size_t bytes, void* stream) = nullptr;    // cuMemcpyDtoHAsync
  int (*stream_create)(void** stream, unsigned flags) = nullptr;                             // cuStreamCreate
  int (*stream_query)(void* stream) = nullptr;                                               // cuStreamQuery
  int (*stream_synchronize)(void* stream) = nullptr;                                         // cuStreamSynchronize
  int (*stream_destroy)(void* stream) = nullptr;                                             // cuStreamDestroy
  bool complete() const;         // every pointer a host-mapped trace needs
  bool device_complete() const;  // and those of a trace in device memory
};

// cuGetProcAddress's CUDA 12 ABI.
using GetProcAddress = int (*)(const char* symbol, void** pfn, int cuda_version, uint64_t flags, int* status);
// The functions as `get_proc_address` answers them (CUDA 12.0 versions).
DriverCalls driver_calls_from(GetProcAddress get_proc_address);
// dlopen("libcuda.so.1") and its cuGetProcAddress_v2; an incomplete DriverCalls when there is none.
DriverCalls driver_calls_from_libcuda();

// The driver's name for a result ("CUDA_ERROR_ILLEGAL_INSTRUCTION"), or "CUresult <n>".
std::string result_name(const DriverCalls& driver, int result);

// Where the kernel writes its records (`tmakit check --records`, docs/check.md):
//   device: device memory (cuMemAlloc), copied to the host after the launch: writing them
//           costs the kernel little. A launch that never finishes has them copied while it
//           still runs (a copy on a stream of its own); a fault makes them unreadable.
//   host:   host-mapped memory (cuMemHostAlloc, portable and device-mapped): every record
//           crosses the bus as the kernel writes it (slow for large launches), but the host
//           reads them whatever happens to the kernel, a fault included.
enum class RecordsIn { device, host };
// How the launch ended, for TraceBuffer::collect.
enum class LaunchEnd { finished, running, faulted };

// The records and the modules whose `__tmakit_trace` words point at them: the record slots
// and the counters (include/tmakit/instrument/trace.hpp). Not thread-safe: one
// launch at a time.
class TraceBuffer {
 public:
  static std::unique_ptr<TraceBuffer> create(const DriverCalls& driver, size_t capacity_records, std::string* why,
                                             RecordsIn where = RecordsIn::host);
  ~TraceBuffer();
  TraceBuffer(const TraceBuffer&) = delete;
  TraceBuffer& operator=(const TraceBuffer&) = delete;

  // Sets the module's `__tmakit_trace` words (trace.hpp). False (and why) when the module has
  // no such symbol or the driver refuses a call.
  bool attach(CUmodule module, std::string* why);
  bool attach_library(CUlibrary library, std::string* why);  // the global in the current context
  // Sets word 0 of every attached module to 0, so that launches until the next attach() record
  // nothing (`tmakit check --launches N`: the launches past N run at the cost of the
  // instrumented code alone).
  void stop_recording();
  // Clears what the last launch wrote: the record slots of the chunks it took (all of them when
  // that is unknown: no collect() since, or a fault) and the counters. Device memory
  // is cleared on `stream`, the launch's, so the clearing is ordered before the launch whatever
  // stream it uses.
  void reset(void* stream = nullptr);
  // Reads the launch's records, ordered (written()): device records are copied to the host, those
  // of a launch still running on a stream of the trace's own within `wait_s` seconds. False (and
  // why) when they cannot be read: a fault in device memory, or a copy that failed or did not
  // finish; then written() is empty.
  bool collect(LaunchEnd end, double wait_s, std::string* why);
  // The records the last collect() found the launch made, kept or dropped (past the capacity).
  std::optional<uint64_t> made() const { return collected_ ? std::optional<uint64_t>(made_) : std::nullopt; }
  // Records the last launch collected made but the capacity could not hold.
  std::optional<uint64_t> dropped() const {
    return collected_ ? std::optional<uint64_t>(made_ - std::min<uint64_t>(made_, copied_.size())) : std::nullopt;
  }

  // The records with op != 0, each cluster's in clock order (in_clock_order; by linear
  // %clusterid, the clusters one after another):
  // what collect() read, or for host-mapped records not yet collected, the buffer as it is now.
  std::vector<instrument::Record> written() const;
  size_t capacity() const { return capacity_; }
  // `tmakit check --ctas`: only clusters [first, end) by linear %clusterid record (trace.hpp,
  // word 3), from the next attach() on; end == 0: every cluster.
  void trace_clusters(uint32_t first, uint32_t end) { clusters_word_ = end ? first | uint64_t{end} << 32 : 0; }
  CUdeviceptr device_address() const { return records_.device; }
  CUdeviceptr counters_address() const { return counters_.device; }
  RecordsIn where() const { return where_; }

 private:
  // One allocation: device memory, or host-mapped memory and its device address.
  struct Block {
    void* host = nullptr;
    CUdeviceptr device = 0;
    size_t bytes = 0;
  };
  TraceBuffer() = default;
  bool allocate(Block& b, size_t bytes, std::string* why);
  void release(Block& b);
  void fill(const Block& b, size_t bytes, unsigned char value, void* stream);
  bool attach_found(int lookup, const char* holder, CUdeviceptr words, size_t bytes, std::string* why);
  bool set_words(CUdeviceptr words, size_t bytes, std::string* why);
  static constexpr size_t counters_bytes() { return instrument::kCounterWords * 4; }
  // The counters as they are now (host-mapped: read in place; device: a copy, which waits for
  // the launch); nullopt when the copy fails.
  std::optional<std::vector<uint32_t>> counters_now() const;
  DriverCalls driver_;
  RecordsIn where_ = RecordsIn::host;
  Block records_, counters_;                  // trace.hpp: the slots, the counters
  instrument::Record* staging_ = nullptr;     // device: pinned host memory for the copy of a running launch
  void* copy_stream_ = nullptr;               // device: a non-blocking stream of the trace's own
  std::vector<instrument::Record> copied_;    // what collect() read, ordered
  bool collected_ = false;
  uint64_t made_ = 0;                         // records made, as collect() counted them
  std::optional<uint64_t> used_chunks_;       // chunks the last collected launch took (reset() clears those)
  size_t capacity_ = 0;
  uint64_t clusters_word_ = 0;
  std::vector<CUdeviceptr> attached_;  // the `__tmakit_trace` of each attached module
  bool recording_ = false;             // an attach() set a records address since stop_recording()
};

// The records in order (TraceBuffer::written): `n` slots as the device left them (trace.hpp:
// chunk headers, each record's clock in its slot) into records with their ids, the clusters one
// after another (by %clusterid z, y, x), each cluster's records by clock, ties by slot;
// records whose clock is not there yet (a copy made while the kernel ran) after their
// cluster's, by slot. Records of op 0 (unused slots) are left out.
std::vector<instrument::Record> in_clock_order(const instrument::Record* slots, size_t n);

// One launch, as meta.json says it.
struct LaunchInfo {
  std::string kernel;  // the mangled name
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
  uint64_t dynamic_smem = 0;
  std::string outcome = "completed";  // completed | timeout | fault | launch_error
  std::string driver_result = "CUDA_SUCCESS";
  std::optional<uint64_t> next;        // the records the launch made, when known
  double timeout_s = 0;                // for a timeout
  uint32_t clusters_traced[2] = {0, 0};  // --ctas: [first, end) by linear %clusterid; end 0: all
  std::string target = "sm_90a";
  std::string records_in = "host";  // where the kernel wrote them: device | host (RecordsIn)
  std::string records_lost;         // why the records could not be read; empty when they were
  std::optional<uint64_t> dropped;  // records made but not kept (TraceBuffer::dropped)
};

// Writes DIR/meta.json, trace.bin (written()), sites.json, maps.jsonl and (when not
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
