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
#include <map>
#include <thread>
#include <tuple>

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
  if (capacity == 0 || capacity > instrument::kMaxCapacity) return fail(fmt::format("capacity {} records is out of range", capacity));
  std::unique_ptr<TraceBuffer> t(new TraceBuffer);
  t->driver_ = driver;
  t->where_ = where;
  // Whole chunks (trace.hpp): a lane's chunk is in the buffer or past it.
  t->capacity_ = (capacity + instrument::kChunkRecords - 1) / instrument::kChunkRecords * instrument::kChunkRecords;
  std::string failed;
  if (!t->allocate(t->records_, t->capacity_ * instrument::kRecordBytes, &failed) ||
      !t->allocate(t->counters_, t->counters_bytes(), &failed))
    return fail(failed);
  if (where == RecordsIn::device) {
    void* p = nullptr;
    if (int r = driver.mem_host_alloc(&p, kStagingRecords * instrument::kRecordBytes, kHostAllocPortable); r != 0 || p == nullptr)
      return fail(fmt::format("cuMemHostAlloc of {} bytes failed: {}", kStagingRecords * instrument::kRecordBytes,
                              result_name(driver, r)));
    t->staging_ = static_cast<instrument::Record*>(p);
    if (int r = driver.stream_create(&t->copy_stream_, kStreamNonBlocking); r != 0)
      return fail(fmt::format("cuStreamCreate failed: {}", result_name(driver, r)));
  }
  // Cleared before any launch of the user's can run, on whatever stream.
  t->reset(t->copy_stream_);
  if (where == RecordsIn::device)
    if (int r = driver.stream_synchronize(t->copy_stream_); r != 0)
      return fail(fmt::format("clearing the trace's device memory failed: {}", result_name(driver, r)));
  return t;
}

bool TraceBuffer::allocate(Block& b, size_t bytes, std::string* why) {
  b.bytes = bytes;
  if (where_ == RecordsIn::device) {
    if (int r = driver_.mem_alloc(&b.device, bytes); r != 0) {
      *why = fmt::format("cuMemAlloc of {} bytes of device memory failed: {}", bytes, result_name(driver_, r));
      return false;
    }
    return true;
  }
  if (int r = driver_.mem_host_alloc(&b.host, bytes, kHostAllocPortable | kHostAllocDeviceMap); r != 0 || b.host == nullptr) {
    *why = fmt::format("cuMemHostAlloc of {} bytes failed: {}", bytes, result_name(driver_, r));
    return false;
  }
  if (int r = driver_.mem_host_get_device_pointer(&b.device, b.host, 0); r != 0) {
    *why = fmt::format("cuMemHostGetDevicePointer failed: {}", result_name(driver_, r));
    return false;
  }
  return true;
}

void TraceBuffer::release(Block& b) {
  if (b.host != nullptr && driver_.mem_free_host != nullptr) driver_.mem_free_host(b.host);
  else if (b.host == nullptr && b.device != 0 && driver_.mem_free != nullptr) driver_.mem_free(b.device);
  b = Block{};
}

void TraceBuffer::fill(const Block& b, size_t bytes, unsigned char value, void* stream) {
  if (b.host != nullptr) std::memset(b.host, value, bytes);
  else if (b.device != 0) driver_.memset_d8_async(b.device, value, bytes, stream);
}

TraceBuffer::~TraceBuffer() {
  release(records_);
  release(counters_);
  if (staging_ != nullptr && driver_.mem_free_host != nullptr) driver_.mem_free_host(staging_);
  if (copy_stream_ != nullptr && driver_.stream_destroy != nullptr) driver_.stream_destroy(copy_stream_);
}

bool TraceBuffer::set_words(CUdeviceptr words, size_t bytes, std::string* why) {
  if (bytes < instrument::kTraceWords * 8) {
    if (why) *why = fmt::format("{} is {} bytes, not {}", instrument::kTraceSymbol, bytes, instrument::kTraceWords * 8);
    return false;
  }
  std::array<uint64_t, instrument::kTraceWords> w{};
  w[instrument::kTraceRecordsWord] = records_.device;
  w[instrument::kTraceCapacityWord] = capacity_;
  w[instrument::kTraceClustersWord] = clusters_word_;
  w[instrument::kTraceCountersWord] = counters_.device;
  if (int r = driver_.memcpy_htod(words, w.data(), sizeof w); r != 0) {
    if (why) *why = fmt::format("cuMemcpyHtoD to {} failed: {}", instrument::kTraceSymbol, result_name(driver_, r));
    return false;
  }
  std::erase(attached_, words);
  attached_.push_back(words);
  recording_ = true;
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

void TraceBuffer::stop_recording() {
  if (!recording_) return;  // every launch past N calls this; the words are set once
  const uint64_t off = 0;
  for (CUdeviceptr words : attached_) driver_.memcpy_htod(words + instrument::kTraceRecordsWord * 8, &off, 8);
  recording_ = false;
}

bool TraceBuffer::attach_found(int lookup, const char* holder, CUdeviceptr words, size_t bytes, std::string* why) {
  if (lookup != 0) {
    if (why) *why = fmt::format("the {} has no {} ({})", holder, instrument::kTraceSymbol, result_name(driver_, lookup));
    return false;
  }
  return set_words(words, bytes, why);
}

void TraceBuffer::reset(void* stream) {
  // Only the chunks taken since the last reset (a per-launch clearing of the whole buffer would
  // cost more than a short kernel): those collect() counted, or more where the chunk counter has
  // gone on since (records written after a running launch's copy, or by a launch no one
  // collected); all of them when neither is known. A chunk left uncleared would come back in
  // the next launch's records wherever that launch reuses its chunk.
  std::optional<uint64_t> chunks = used_chunks_;
  const auto now = chunks ? counters_now() : std::nullopt;
  if (now) chunks = std::max<uint64_t>(*chunks, (*now)[0]);
  else chunks.reset();
  const size_t slots = chunks ? std::min<size_t>(*chunks * instrument::kChunkRecords, capacity_) : capacity_;
  fill(records_, slots * instrument::kRecordBytes, 0, stream);
  fill(counters_, counters_bytes(), 0, stream);
  used_chunks_.reset();
  copied_.clear();
  collected_ = false;
  made_ = 0;
}

std::optional<std::vector<uint32_t>> TraceBuffer::counters_now() const {
  std::vector<uint32_t> counters(counters_bytes() / 4);
  if (counters_.host != nullptr) std::memcpy(counters.data(), counters_.host, counters_bytes());
  else if (driver_.memcpy_dtoh(counters.data(), counters_.device, counters_bytes()) != 0) return std::nullopt;
  return counters;
}

bool TraceBuffer::collect(LaunchEnd end, double wait_s, std::string* why) {
  copied_.clear();
  collected_ = false;
  made_ = 0;
  std::string failed;
  auto lost = [&](std::string m) {
    if (why) *why = std::move(m);
    copied_.clear();
    return false;
  };
  if (where_ == RecordsIn::device && end == LaunchEnd::faulted)
    return lost("the records were in device memory, which the fault made unreadable");
  using Copy = std::function<bool(CUdeviceptr, size_t, void*)>;
  // Host-mapped memory is read where it is. Device memory: a finished launch's by the driver's
  // ordinary copy; one still running on the trace's own non-blocking stream, which the kernel's
  // stream does not hold back, through pinned staging memory (a copy that can overlap a kernel
  // needs page-locked host memory); what the kernel writes meanwhile may come or not (a record
  // whose `op` reads zero is left out, one whose clock did not come follows its cluster's).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  const Copy mapped = [&](CUdeviceptr from, size_t bytes, void* into) {
    for (const Block* b : {&records_, &counters_})
      if (from >= b->device && from + bytes <= b->device + b->bytes)
        std::memcpy(into, static_cast<const char*>(b->host) + (from - b->device), bytes);
    return true;
  };
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
  const Copy& copy = where_ == RecordsIn::host ? mapped : end == LaunchEnd::finished ? finished : running;
  // The counters first: the chunks taken bound what is read.
  std::vector<uint32_t> counters(counters_bytes() / 4);
  if (!copy(counters_.device, counters_bytes(), counters.data())) return lost(failed);
  const uint64_t chunks = std::min<uint64_t>(counters[0], capacity_ / instrument::kChunkRecords);
  const size_t slots = chunks * instrument::kChunkRecords;
  std::vector<instrument::Record> records(slots);
  if (slots && !copy(records_.device, slots * instrument::kRecordBytes, records.data())) return lost(failed);
  // Records made: those in the slots (a tensor operation three, its halves written or not) and
  // those counted past the capacity (counter 1).
  made_ = counters.size() > instrument::kDroppedCounter ? counters[instrument::kDroppedCounter] : 0;
  for (const instrument::Record& r : records)
    if (r.op != 0 && r.op != static_cast<uint16_t>(instrument::TraceOp::lane_ids)) made_ += (r.flags & instrument::kFlagMapCached) ? 3 : 1;
  copied_ = in_clock_order(records.data(), slots);
  used_chunks_ = chunks;
  collected_ = true;
  return true;
}

std::vector<instrument::Record> TraceBuffer::written() const {
  if (collected_ || where_ == RecordsIn::device) return copied_;
  // Host-mapped and not collected: the buffer as it is now, every slot (the chunk count may be
  // unknown to whoever wrote them).
  return in_clock_order(static_cast<const instrument::Record*>(records_.host), capacity_);
}

}  // namespace tmakit::check
