// The trace buffer (include/tmakit/check/capture.hpp): records in device or host-mapped
// memory, and the modules whose `__tmakit_trace` words point at them.
#include "tmakit/check/capture.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

namespace tmakit::check {
namespace {

constexpr unsigned kHostAllocPortable = 0x01;   // CU_MEMHOSTALLOC_PORTABLE: every context may use it
constexpr unsigned kHostAllocDeviceMap = 0x02;  // CU_MEMHOSTALLOC_DEVICEMAP: the GPU writes it directly
constexpr int kVersion = 12000;                 // the ABIs DriverCalls spells
constexpr int kNotReady = 600;                  // CUDA_ERROR_NOT_READY
constexpr unsigned kStreamNonBlocking = 0x1;    // CU_STREAM_NON_BLOCKING: not ordered with the legacy stream
// Device records of a launch that still runs come back through pinned memory this many at a
// time (8 MiB): a copy that can overlap the kernel needs page-locked host memory.
constexpr size_t kStagingRecords = 65536;

template <typename Fn>
void find(GetProcAddress gpa, const char* name, Fn& slot) {
  void* p = nullptr;
  int status = 0;
  if (gpa(name, &p, kVersion, 0, &status) == 0 && p != nullptr) slot = reinterpret_cast<Fn>(p);
}

}  // namespace

bool DriverCalls::complete() const {
  return mem_host_alloc && mem_host_get_device_pointer && mem_free_host && module_get_global &&
         library_get_global && memcpy_htod && memcpy_dtoh && get_error_name;
}

bool DriverCalls::device_complete() const {
  return complete() && mem_alloc && mem_free && memset_d8_async && memcpy_dtoh_async && stream_create &&
         stream_query && stream_synchronize && stream_destroy;
}

DriverCalls driver_calls_from(GetProcAddress gpa) {
  DriverCalls d;
  if (gpa == nullptr) return d;
  find(gpa, "cuMemHostAlloc", d.mem_host_alloc);
  find(gpa, "cuMemHostGetDevicePointer", d.mem_host_get_device_pointer);
  find(gpa, "cuMemFreeHost", d.mem_free_host);
  find(gpa, "cuModuleGetGlobal", d.module_get_global);
  find(gpa, "cuLibraryGetGlobal", d.library_get_global);
  find(gpa, "cuMemcpyHtoD", d.memcpy_htod);
  find(gpa, "cuMemcpyDtoH", d.memcpy_dtoh);
  find(gpa, "cuGetErrorName", d.get_error_name);
  find(gpa, "cuMemAlloc", d.mem_alloc);
  find(gpa, "cuMemFree", d.mem_free);
  find(gpa, "cuMemsetD8Async", d.memset_d8_async);
  find(gpa, "cuMemcpyDtoHAsync", d.memcpy_dtoh_async);
  find(gpa, "cuStreamCreate", d.stream_create);
  find(gpa, "cuStreamQuery", d.stream_query);
  find(gpa, "cuStreamSynchronize", d.stream_synchronize);
  find(gpa, "cuStreamDestroy", d.stream_destroy);
  return d;
}

DriverCalls driver_calls_from_libcuda() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return {};
  // Kept open: the pointers stay valid for the process's life.
  return driver_calls_from(reinterpret_cast<GetProcAddress>(dlsym(h, "cuGetProcAddress_v2")));
}

std::string result_name(const DriverCalls& driver, int result) {
  const char* name = nullptr;
  if (driver.get_error_name != nullptr && driver.get_error_name(result, &name) == 0 && name != nullptr) return name;
  return fmt::format("CUresult {}", result);
}

std::unique_ptr<TraceBuffer> TraceBuffer::create(const DriverCalls& driver, size_t capacity, std::string* why,
                                                 RecordsIn where) {
  auto fail = [&](std::string m) {
    if (why) *why = std::move(m);
    return nullptr;
  };
  if (!driver.complete()) return fail("the driver lacks a function the trace needs (cuMemHostAlloc, ...)");
  if (where == RecordsIn::device && !driver.device_complete())
    return fail("the driver lacks a function a trace in device memory needs (cuMemAlloc, cuMemcpyDtoHAsync, ...)");
  if (capacity == 0 || capacity > (size_t(1) << 32)) return fail(fmt::format("capacity {} records is out of range", capacity));
  std::unique_ptr<TraceBuffer> t(new TraceBuffer);
  t->driver_ = driver;
  t->where_ = where;
  t->capacity_ = capacity;
  const size_t bytes = capacity * instrument::kRecordBytes;
  void* p = nullptr;
  if (where == RecordsIn::host) {
    if (int r = driver.mem_host_alloc(&p, bytes, kHostAllocPortable | kHostAllocDeviceMap); r != 0 || p == nullptr)
      return fail(fmt::format("cuMemHostAlloc of {} bytes failed: {}", bytes, result_name(driver, r)));
    t->mapped_ = static_cast<instrument::Record*>(p);
    if (int r = driver.mem_host_get_device_pointer(&t->device_, p, 0); r != 0)
      return fail(fmt::format("cuMemHostGetDevicePointer failed: {}", result_name(driver, r)));
    std::memset(p, 0, bytes);
    return t;
  }
  if (int r = driver.mem_alloc(&t->device_, bytes); r != 0)
    return fail(fmt::format("cuMemAlloc of {} bytes of device memory failed: {}", bytes, result_name(driver, r)));
  if (int r = driver.mem_host_alloc(&p, kStagingRecords * instrument::kRecordBytes, kHostAllocPortable); r != 0 || p == nullptr)
    return fail(fmt::format("cuMemHostAlloc of {} bytes failed: {}", kStagingRecords * instrument::kRecordBytes,
                            result_name(driver, r)));
  t->staging_ = static_cast<instrument::Record*>(p);
  if (int r = driver.stream_create(&t->copy_stream_, kStreamNonBlocking); r != 0)
    return fail(fmt::format("cuStreamCreate failed: {}", result_name(driver, r)));
  // Zeroed before any launch of the user's can run, on whatever stream.
  if (int r = driver.memset_d8_async(t->device_, 0, bytes, t->copy_stream_); r != 0 || (r = driver.stream_synchronize(t->copy_stream_)) != 0)
    return fail(fmt::format("zeroing the trace's device memory failed: {}", result_name(driver, r)));
  return t;
}

TraceBuffer::~TraceBuffer() {
  if (mapped_ != nullptr && driver_.mem_free_host != nullptr) driver_.mem_free_host(mapped_);
  if (staging_ != nullptr && driver_.mem_free_host != nullptr) driver_.mem_free_host(staging_);
  if (where_ == RecordsIn::device && device_ != 0 && driver_.mem_free != nullptr) driver_.mem_free(device_);
  if (counters_ != 0 && driver_.mem_free != nullptr) driver_.mem_free(counters_);
  if (copy_stream_ != nullptr && driver_.stream_destroy != nullptr) driver_.stream_destroy(copy_stream_);
}

void TraceBuffer::plan_clusters(uint64_t clusters) {
  clusters_ = region_ = 0;
  if (where_ != RecordsIn::device || clusters == 0 || clusters > capacity_) return;
  if (clusters > counters_allocated_) {
    if (counters_ != 0) driver_.mem_free(counters_);
    counters_ = 0, counters_allocated_ = 0;
    if (driver_.mem_alloc(&counters_, clusters * 8) != 0) return;  // one counter, then
    counters_allocated_ = clusters;
  }
  clusters_ = clusters;
  region_ = capacity_ / clusters;
}

bool TraceBuffer::set_words(CUdeviceptr words, size_t bytes, std::string* why) {
  if (bytes < instrument::kTraceWords * 8) {
    if (why) *why = fmt::format("{} is {} bytes, not {}", instrument::kTraceSymbol, bytes, instrument::kTraceWords * 8);
    return false;
  }
  std::array<uint64_t, instrument::kTraceWords> w{};
  w[instrument::kTraceRecordsWord] = device_;
  w[instrument::kTraceCapacityWord] = capacity_;
  w[instrument::kTraceClustersWord] = clusters_word_;
  w[instrument::kTraceCountersWord] = region_ ? counters_ : 0;
  w[instrument::kTraceRegionWord] = region_;
  if (int r = driver_.memcpy_htod(words, w.data(), sizeof w); r != 0) {
    if (why) *why = fmt::format("cuMemcpyHtoD to {} failed: {}", instrument::kTraceSymbol, result_name(driver_, r));
    return false;
  }
  std::erase(attached_, words);
  attached_.push_back(words);  // the last attached is read by read_next()
  return true;
}

bool TraceBuffer::attach(CUmodule module, std::string* why) {
  CUdeviceptr d = 0;
  size_t bytes = 0;
  const int r = driver_.module_get_global(&d, &bytes, module, instrument::kTraceSymbol.data());
  return attach_found(r, "module", d, bytes, why);
}

bool TraceBuffer::attach_library(CUlibrary library, std::string* why) {
  CUdeviceptr d = 0;
  size_t bytes = 0;
  const int r = driver_.library_get_global(&d, &bytes, library, instrument::kTraceSymbol.data());
  return attach_found(r, "library", d, bytes, why);
}

bool TraceBuffer::attach_found(int lookup, const char* holder, CUdeviceptr words, size_t bytes, std::string* why) {
  if (lookup != 0) {
    if (why) *why = fmt::format("the {} has no {} ({})", holder, instrument::kTraceSymbol, result_name(driver_, lookup));
    return false;
  }
  return set_words(words, bytes, why);
}

void TraceBuffer::reset(void* stream) {
  // Only what the last launch can have written (a per-launch memset of the whole buffer would
  // cost more than a short kernel): host-mapped, the records below its next index when a
  // snapshot read that index, else all; in device memory, each counter's records as collect()
  // counted them, else all.
  if (where_ == RecordsIn::host) {
    std::memset(static_cast<void*>(mapped_), 0, (dirty_ ? *dirty_ : capacity_) * instrument::kRecordBytes);
  } else if (counts_.empty()) {  // not collected (a fault): all of them
    driver_.memset_d8_async(device_, 0, capacity_ * instrument::kRecordBytes, stream);
  } else {
    const uint64_t region = counts_region_;
    for (size_t k = 0; k < counts_.size(); ++k)
      if (const uint64_t n = std::min(counts_[k], region))
        driver_.memset_d8_async(device_ + k * region * instrument::kRecordBytes, 0, n * instrument::kRecordBytes, stream);
  }
  if (region_) driver_.memset_d8_async(counters_, 0, clusters_ * 8, stream);
  counts_.clear();
  copied_.clear();
  dirty_.reset();  // from now on, unknown until a snapshot reads the next index
  const uint64_t zero = 0;
  for (CUdeviceptr words : attached_) driver_.memcpy_htod(words + instrument::kTraceNextWord * 8, &zero, 8);
}

bool TraceBuffer::collect(std::optional<uint64_t> next, LaunchEnd end, double wait_s, std::string* why) {
  if (where_ == RecordsIn::host) return true;
  copied_.clear();
  counts_.clear();
  dropped_ = 0;
  std::string failed;
  auto lost = [&](std::string m) {
    if (why) *why = std::move(m);
    copied_.clear();
    return false;
  };
  if (end == LaunchEnd::faulted) return lost("the records were in device memory, which the fault made unreadable");
  using Copy = std::function<bool(CUdeviceptr, size_t, void*)>;
  // A finished launch: the driver's ordinary copy. One still running: on the trace's own
  // non-blocking stream, which the kernel's stream does not hold back, through pinned staging
  // memory (a copy that can overlap a kernel needs page-locked host memory); what the kernel
  // writes meanwhile may come or not (a record whose `op` reads zero is a hole to the reader).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  const Copy finished = [&](CUdeviceptr from, size_t bytes, void* into) {
    const int r = driver_.memcpy_dtoh(into, from, bytes);
    if (r != 0) failed = fmt::format("copying the records from device memory failed: {}", result_name(driver_, r));
    return r == 0;
  };
  const Copy running = [&](CUdeviceptr from, size_t bytes, void* into) {
    for (size_t at = 0; at < bytes; at += kStagingRecords * instrument::kRecordBytes) {
      const size_t n = std::min(kStagingRecords * instrument::kRecordBytes, bytes - at);
      int r = driver_.memcpy_dtoh_async(staging_, from + at, n, copy_stream_);
      if (r == 0) r = driver_.stream_query(copy_stream_);
      for (; r == kNotReady; r = driver_.stream_query(copy_stream_)) {
        if (std::chrono::steady_clock::now() > deadline) {
          failed = fmt::format("the records were in device memory, and copying them while the kernel still ran did "
                               "not finish within {} s", wait_s);
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (r != 0) {
        failed = fmt::format("the records were in device memory, and copying them while the kernel still ran failed: {}",
                             result_name(driver_, r));
        return false;
      }
      std::memcpy(static_cast<char*>(into) + at, staging_, n);
    }
    return true;
  };
  const Copy& copy = end == LaunchEnd::finished ? finished : running;
  // How many each counter handed out: the clusters' own counters, or the launch's one.
  std::vector<uint64_t> counts(region_ ? clusters_ : 1, 0);
  if (region_) {
    if (!copy(counters_, clusters_ * 8, counts.data())) return lost(failed);
  } else if (next && end == LaunchEnd::finished) {
    counts[0] = *next;
  } else if (attached_.empty()) {
    counts[0] = capacity_;
  } else if (!copy(attached_.back() + instrument::kTraceNextWord * 8, 8, counts.data())) {
    return lost(failed);
  }
  const uint64_t region = region_ ? region_ : capacity_;
  uint64_t kept = 0;
  for (uint64_t c : counts) kept += std::min(c, region), dropped_ += c > region ? c - region : 0;
  copied_.resize(kept);
  // Each region's records, one after another: the k-th cluster's in index order.
  size_t at = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const uint64_t n = std::min(counts[k], region);
    if (n && !copy(device_ + k * region * instrument::kRecordBytes, n * instrument::kRecordBytes, copied_.data() + at))
      return lost(failed);
    at += n;
  }
  counts_ = std::move(counts);
  counts_region_ = region;
  return true;
}

std::optional<uint64_t> TraceBuffer::read_next() {
  if (region_) {
    std::vector<uint64_t> counts(clusters_);
    if (driver_.memcpy_dtoh(counts.data(), counters_, clusters_ * 8) != 0) return std::nullopt;
    uint64_t sum = 0;
    for (uint64_t c : counts) sum += c;
    return sum;
  }
  if (attached_.empty()) return std::nullopt;
  uint64_t next = 0;
  if (driver_.memcpy_dtoh(&next, attached_.back() + instrument::kTraceNextWord * 8, 8) != 0) return std::nullopt;
  return next;
}

namespace {
// A record as the device left it: `op` is written last (with site and flags, one store), so a
// record whose op reads non-zero has its other fields (the device wrote them before).
instrument::Record read_record(const instrument::Record* r) {
  instrument::Record out;
  std::memcpy(&out, const_cast<const instrument::Record*>(r), sizeof out);
  return out;
}
uint16_t op_of(const instrument::Record* r) { return *reinterpret_cast<const volatile uint16_t*>(&r->op); }
}  // namespace

std::vector<instrument::Record> TraceBuffer::written() const {
  const instrument::Record* records = view();
  std::vector<instrument::Record> out;
  for (size_t i = 0; i < view_size(); ++i)
    if (op_of(records + i) != 0) out.push_back(read_record(records + i));
  return out;
}

std::vector<instrument::Record> TraceBuffer::snapshot(std::optional<uint64_t> next) const {
  const instrument::Record* records = view();
  size_t n = 0;
  if (next) {
    n = static_cast<size_t>(std::min<uint64_t>(*next, capacity_));
    dirty_ = std::max(dirty_.value_or(0), n);
    n = std::min(n, view_size());
  } else {
    dirty_.reset();  // unknown: reset() clears everything
    for (size_t i = view_size(); i > 0; --i)
      if (op_of(records + i - 1) != 0) {
        n = i;
        break;
      }
  }
  std::vector<instrument::Record> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(read_record(records + i));
  return out;
}

}  // namespace tmakit::check
