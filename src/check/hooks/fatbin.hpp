// The PTX inside an nvcc fatbin (docs/check.md, "nvcc-built C++"): the container the CUDA
// runtime registers for every .cu file and hands to the driver's module loaders. tmakit check
// instruments that PTX and loads it in place of the fatbin, so kernels built by plain nvcc
// (with PTX embedded: `-gencode arch=compute_90a,code=[sm_90a,compute_90a]`) are checked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tmakit::watch {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50;         // the container nvcc embeds
inline constexpr uint32_t kFatbinWrapperMagic = 0x466243B1;  // the runtime's __fatBinC_Wrapper_t

struct FatbinEntry {
  uint16_t kind = 0;  // 1 PTX, 2 ELF (a cubin)
  uint32_t arch = 0;  // 90 for sm_90/sm_90a and compute_90/compute_90a
  bool compressed = false;
  std::string ptx;    // PTX entries: the text (decompressed), empty where it could not be read
  std::string problem;  // why `ptx` is empty for a PTX entry
};

struct Fatbin {
  std::vector<FatbinEntry> entries;
  std::string problem;  // a container that could not be read whole (the entries read so far are kept)
};

// True when `image` starts a fatbin or the runtime's wrapper of one.
bool is_fatbin(const void* image);

// Reads the fatbin at `image` (or the one a wrapper points to). `limit` bounds the bytes read
// (the container's own sizes are believed only up to it); compressed PTX (zstd, nvcc 13's default)
// is decompressed with the system's libzstd.so.1 loaded at run time, up to 256 MiB an entry.
Fatbin read_fatbin(const void* image, size_t limit = size_t(1) << 31);

// The PTX entry for a GPU of compute capability `cc` (major * 10 + minor; 0: unknown): the
// highest architecture at or below cc, an arch-specific target (".target sm_90a") preferred at
// equal architecture; nullptr when there is none.
const FatbinEntry* pick_ptx(const Fatbin& f, uint32_t cc);

}  // namespace tmakit::watch
