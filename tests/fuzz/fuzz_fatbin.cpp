// libFuzzer target: any bytes as an nvcc fatbin handed to a module loader under tmakit check
// (src/watch/fatbin.cpp): read within the bytes given, PTX decompressed within its bound, never
// a crash, a hang or an unbounded allocation. The runtime's wrapper (magic 0x466243B1) holds a
// pointer, so inputs that start with it are not read (a program's wrapper points at its own
// fatbin: there the pointer is the runtime's).
#include <cstdint>
#include <cstring>

#include "../../src/check/hooks/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 4) {
    uint32_t magic;
    std::memcpy(&magic, data, 4);
    if (magic == tmakit::watch::kFatbinWrapperMagic) return 0;
  }
  const tmakit::watch::Fatbin f = tmakit::watch::read_fatbin(data, size);
  (void)tmakit::watch::pick_ptx(f, 90);
  return 0;
}
