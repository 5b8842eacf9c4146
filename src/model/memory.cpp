#include "tmakit/model/memory.hpp"

namespace tmakit::model {

uint64_t GlobalMemory::allocate(std::string name, uint64_t bytes, uint64_t align) {
  if (align == 0) align = 1;
  uint64_t base = (next_ + align - 1) / align * align;
  allocs_.push_back({std::move(name), base, std::vector<uint8_t>(bytes)});
  // Leave at least 64 KiB (and keep 1 MiB granularity) between allocations.
  next_ = (base + bytes + (1ull << 16) + (1ull << 20) - 1) & ~((1ull << 20) - 1);
  return base;
}

uint8_t* GlobalMemory::find(uint64_t addr, uint64_t n) {
  return const_cast<uint8_t*>(static_cast<const GlobalMemory*>(this)->find(addr, n));
}

const uint8_t* GlobalMemory::find(uint64_t addr, uint64_t n) const {
  for (const auto& a : allocs_) {
    if (addr >= a.base && addr - a.base <= a.bytes.size() && n <= a.bytes.size() - (addr - a.base))
      return a.bytes.data() + (addr - a.base);
  }
  return nullptr;
}

const Allocation* GlobalMemory::allocation(std::string_view name) const {
  for (const auto& a : allocs_)
    if (a.name == name) return &a;
  return nullptr;
}

Allocation* GlobalMemory::allocation(std::string_view name) {
  return const_cast<Allocation*>(static_cast<const GlobalMemory*>(this)->allocation(name));
}

}  // namespace tmakit::model
