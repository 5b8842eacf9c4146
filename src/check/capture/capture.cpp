// The trace buffer (include/tmakit/check/capture.hpp): host-mapped records and the modules
// whose `__tmakit_trace` words point at them.
#include "tmakit/check/capture.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstring>

namespace tmakit::check {
namespace {

constexpr unsigned kHostAllocPortable = 0x01;   // CU_MEMHOSTALLOC_PORTABLE: every context may use it
constexpr unsigned kHostAllocDeviceMap = 0x02;  // CU_MEMHOSTALLOC_DEVICEMAP: the GPU writes it directly
constexpr int kVersion = 12000;                 // the ABIs DriverCalls spells

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

std::unique_ptr<TraceBuffer> TraceBuffer::create(const DriverCalls& driver, size_t capacity, std::string* why) {
  auto fail = [&](std::string m) {
    if (why) *why = std::move(m);
    return nullptr;
  };
  if (!driver.complete()) return fail("the driver lacks a function the trace needs (cuMemHostAlloc, ...)");
  if (capacity == 0 || capacity > (size_t(1) << 32)) return fail(fmt::format("capacity {} records is out of range", capacity));
  std::unique_ptr<TraceBuffer> t(new TraceBuffer);
  t->driver_ = driver;
  void* p = nullptr;
  const size_t bytes = capacity * instrument::kRecordBytes;
  if (int r = driver.mem_host_alloc(&p, bytes, kHostAllocPortable | kHostAllocDeviceMap); r != 0 || p == nullptr)
    return fail(fmt::format("cuMemHostAlloc of {} bytes failed: {}", bytes, result_name(driver, r)));
  t->records_ = static_cast<instrument::Record*>(p);
  t->capacity_ = capacity;
  if (int r = driver.mem_host_get_device_pointer(&t->device_, p, 0); r != 0)
    return fail(fmt::format("cuMemHostGetDevicePointer failed: {}", result_name(driver, r)));
  std::memset(p, 0, bytes);
  return t;
}

TraceBuffer::~TraceBuffer() {
  if (records_ != nullptr && driver_.mem_free_host != nullptr) driver_.mem_free_host(records_);
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

void TraceBuffer::reset() {
  // Only what the last launch can have written: records below its next index when a snapshot
  // read that index, else all of them (a per-launch memset of the whole buffer would cost more
  // than a short kernel).
  std::memset(static_cast<void*>(records_), 0, (dirty_ ? *dirty_ : capacity_) * instrument::kRecordBytes);
  dirty_.reset();  // from now on, unknown until a snapshot reads the next index
  const uint64_t zero = 0;
  for (CUdeviceptr words : attached_) driver_.memcpy_htod(words + instrument::kTraceNextWord * 8, &zero, 8);
}

std::optional<uint64_t> TraceBuffer::read_next() const {
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
  std::vector<instrument::Record> out;
  for (size_t i = 0; i < capacity_; ++i)
    if (op_of(records_ + i) != 0) out.push_back(read_record(records_ + i));
  return out;
}

std::vector<instrument::Record> TraceBuffer::snapshot(std::optional<uint64_t> next) const {
  size_t n = 0;
  if (next) {
    n = static_cast<size_t>(std::min<uint64_t>(*next, capacity_));
    dirty_ = std::max(dirty_.value_or(0), n);
  } else {
    dirty_.reset();  // unknown: reset() clears everything
    for (size_t i = capacity_; i > 0; --i)
      if (op_of(records_ + i - 1) != 0) {
        n = i;
        break;
      }
  }
  std::vector<instrument::Record> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(read_record(records_ + i));
  return out;
}

}  // namespace tmakit::check
