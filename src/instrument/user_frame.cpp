// Which of a site's source frames is the user's (instrument.hpp): code written with cuda::ptx,
// CuTe, CUTLASS or tmakit's device library is inlined from their headers, so the innermost
// `.loc` of an instruction is a library's line; the user's own line is further out in the
// inlining chain (docs/check-replay.md, "Places").
#include <algorithm>
#include <array>

#include "tmakit/instrument/instrument.hpp"

namespace tmakit::instrument {

std::vector<SourceFrame> Site::frames() const {
  std::vector<SourceFrame> out;
  if (line <= 0) return out;
  out.reserve(1 + inlined_at.size());
  out.push_back({file, line, column, loc_function});
  out.insert(out.end(), inlined_at.begin(), inlined_at.end());
  return out;
}

bool library_file(std::string_view path) {
  if (path.rfind("/usr/include/", 0) == 0 || path.rfind("/usr/lib/gcc/", 0) == 0) return true;
  std::vector<std::string_view> seg;  // the folders and the file, empty parts skipped
  for (size_t at = 0; at < path.size();) {
    const size_t slash = std::min(path.find('/', at), path.size());
    if (slash > at) seg.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  static constexpr std::array<std::string_view, 7> kLibraries = {"cuda", "cccl", "cub", "thrust", "nv", "cute",
                                                                  "cutlass"};
  const size_t n = seg.size();
  for (size_t i = 0; i + 1 < n; ++i) {  // seg[i] is a folder: something follows it
    if (seg[i] == "triton" && seg[i + 1] == "language" && i + 2 < n) return true;
    if (seg[i] != "include") continue;
    // A toolkit's own include folder: /usr/local/cuda-13.0/include/, …/cuda/targets/x86_64-linux/include/.
    if (i >= 1 && (seg[i - 1] == "cuda" || seg[i - 1].rfind("cuda-", 0) == 0)) return true;
    if (i >= 2 && seg[i - 2] == "targets") return true;
    // A library's headers wherever it is installed or cloned: …/include/cute/…, …/include/tmakit/device/….
    if (i + 2 < n)
      for (std::string_view lib : kLibraries)
        if (seg[i + 1] == lib) return true;
    if (i + 3 < n && seg[i + 1] == "tmakit" && seg[i + 2] == "device") return true;
  }
  return false;
}

// The headers that wrap one instruction or one synchronisation step, whatever kernel uses them:
// cuda::ptx and libcu++ (…/include/cuda/, …/cccl/), CuTe's arch, atom and algorithm layers,
// CUTLASS's arch and pipeline layers, tmakit's device library. Their lines say how an
// instruction is spelled, not which step of the kernel it is.
static bool wrapper_file(std::string_view path) {
  if (!library_file(path)) return false;
  static constexpr std::array<std::string_view, 8> kWrappers = {
      "/include/cuda/", "/cccl/",          "/include/cute/arch/",     "/include/cute/atom/", "/include/cute/algorithm/",
      "/include/cutlass/arch/", "/include/cutlass/pipeline/", "/include/tmakit/device/"};
  for (std::string_view w : kWrappers)
    if (path.find(w) != std::string_view::npos) return true;
  // A toolkit's own include folder (/usr/local/cuda-13.0/include/…, …/targets/…/include/) holds
  // the toolkit's wrappers only; CuTe and CUTLASS elsewhere are the libraries' own layers.
  for (std::string_view lib : {"/cute/", "/cutlass/"})
    if (path.find(lib) != std::string_view::npos) return false;
  return true;
}

size_t user_frame(const std::vector<SourceFrame>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (!library_file(frames[i].file)) return i;
  // Every frame a library's (a CUTLASS kernel is all CUTLASS): the innermost frame past the
  // instruction and synchronisation wrappers, the library's own step (CUTLASS's collective
  // mainloop line that waits or loads), else the outermost.
  for (size_t i = 0; i < frames.size(); ++i)
    if (!wrapper_file(frames[i].file)) return i;
  return frames.empty() ? 0 : frames.size() - 1;
}

}  // namespace tmakit::instrument
