// The memories the engine works on: global allocations at fixed addresses and
// the shared memory of each CTA of the one simulated cluster.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::model {

struct Allocation {
  std::string name;
  uint64_t base = 0;
  std::vector<uint8_t> bytes;
};

class GlobalMemory {
 public:
  // Allocations start at `align`-aligned addresses, in order, with a gap between
  // them so that a run past one end never lands in the next.
  uint64_t allocate(std::string name, uint64_t bytes, uint64_t align = 256);
  // The bytes [addr, addr + n) when they lie inside one allocation, else nullptr.
  uint8_t* find(uint64_t addr, uint64_t n);
  const uint8_t* find(uint64_t addr, uint64_t n) const;
  const Allocation* allocation(std::string_view name) const;
  Allocation* allocation(std::string_view name);
  const std::vector<Allocation>& allocations() const { return allocs_; }

 private:
  std::vector<Allocation> allocs_;
  uint64_t next_ = 1ull << 32;  // first base: far from 0 so that null-ish addresses fault
};

// Shared memory of one CTA. Offset 0 of the shared::cta window is 1024-aligned,
// so swizzle patterns follow the offset's own address bits (scenario-format.md).
struct SharedMemory {
  std::vector<uint8_t> bytes;
  std::span<uint8_t> span() { return bytes; }
  std::span<const uint8_t> span() const { return bytes; }
};

}  // namespace tmakit::model
