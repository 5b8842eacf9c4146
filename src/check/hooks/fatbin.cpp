// Fatbin containers (fatbin.hpp). The layout is nvcc's, undocumented but stable and read the
// same way by every public parser: a 16-byte header {magic, version u16, header size u16,
// size u64}, then entries {kind u16, u16, header size u32, payload size u64, compressed size
// u32, u32, PTX version u16 minor, u16 major, arch u32, ..., decompressed size u64 at 56},
// each followed by its payload.
#include "fatbin.hpp"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

namespace tmakit::watch {
namespace {

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

constexpr uint32_t kZstdMagic = 0xFD2FB528;
constexpr size_t kMaxPtx = size_t(256) << 20;

// libzstd, found at run time: the watch library links nothing a program may not have.
struct Zstd {
  size_t (*decompress)(void* dst, size_t cap, const void* src, size_t size) = nullptr;
  unsigned (*is_error)(size_t code) = nullptr;
};
const Zstd& zstd() {
  static const Zstd z = [] {
    Zstd out;
    void* lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return out;
    out.decompress = reinterpret_cast<decltype(out.decompress)>(dlsym(lib, "ZSTD_decompress"));
    out.is_error = reinterpret_cast<decltype(out.is_error)>(dlsym(lib, "ZSTD_isError"));
    if (out.decompress == nullptr || out.is_error == nullptr) out = {};
    return out;
  }();
  return z;
}

void read_ptx(FatbinEntry& e, const unsigned char* payload, uint64_t payload_bytes, uint64_t compressed_bytes,
              uint64_t decompressed_bytes) {
  if (payload_bytes >= 4 && load<uint32_t>(payload) == kZstdMagic) {
    e.compressed = true;
    const Zstd& z = zstd();
    if (z.decompress == nullptr) {
      e.problem = "its PTX is zstd-compressed and libzstd.so.1 was not found (rebuild with nvcc --no-compress)";
      return;
    }
    if (decompressed_bytes == 0 || decompressed_bytes > kMaxPtx) {
      e.problem = "its compressed PTX declares " + std::to_string(decompressed_bytes) + " bytes (at most 256 MiB)";
      return;
    }
    std::string out(decompressed_bytes, '\0');
    const size_t in = compressed_bytes != 0 && compressed_bytes <= payload_bytes ? compressed_bytes : payload_bytes;
    const size_t n = z.decompress(out.data(), out.size(), payload, in);
    if (z.is_error(n)) {
      e.problem = "its compressed PTX does not decompress";
      return;
    }
    out.resize(n);
    e.ptx = out.substr(0, out.find('\0'));
    return;
  }
  // Uncompressed (nvcc --no-compress): the text, NUL-padded. An older compression (a flag and
  // no zstd frame) reads as no text.
  const auto* text = reinterpret_cast<const char*>(payload);
  e.ptx.assign(text, strnlen(text, payload_bytes));
  if (e.ptx.find(".version") == std::string::npos) {
    e.ptx.clear();
    e.problem = "its PTX is compressed in a way tmakit does not read (rebuild with nvcc --no-compress)";
  }
}

}  // namespace

bool is_fatbin(const void* image) {
  if (image == nullptr) return false;
  const uint32_t magic = load<uint32_t>(static_cast<const unsigned char*>(image));
  return magic == kFatbinMagic || magic == kFatbinWrapperMagic;
}

Fatbin read_fatbin(const void* image, size_t limit) {
  Fatbin f;
  const auto* base = static_cast<const unsigned char*>(image);
  if (base == nullptr || limit < 16) return f;
  if (load<uint32_t>(base) == kFatbinWrapperMagic) {  // {magic, version, const void* data, ...}
    base = load<const unsigned char*>(base + 8);
    if (base == nullptr || load<uint32_t>(base) != kFatbinMagic) {
      f.problem = "a fatbin wrapper that points at no fatbin";
      return f;
    }
  }
  // One container: the one the loader was given (the bytes after it are not the caller's to read).
  const uint16_t header = load<uint16_t>(base + 6);
  const uint64_t size = load<uint64_t>(base + 8);
  if (header < 16 || header > limit || size > limit - header) {
    f.problem = "a fatbin header declares more bytes than tmakit reads";
    return f;
  }
  const unsigned char* entry = base + header;
  const unsigned char* end = entry + size;
  while (entry + 64 <= end) {
    FatbinEntry e;
    e.kind = load<uint16_t>(entry);
    const uint32_t entry_header = load<uint32_t>(entry + 4);
    const uint64_t payload = load<uint64_t>(entry + 8);
    if (entry_header < 64 || entry_header > uint64_t(end - entry) || payload > uint64_t(end - entry) - entry_header) {
      f.problem = "a fatbin entry declares more bytes than its container holds";
      return f;
    }
    e.arch = load<uint32_t>(entry + 28);
    if (e.kind == 1)
      read_ptx(e, entry + entry_header, payload, load<uint32_t>(entry + 16), load<uint64_t>(entry + 56));
    f.entries.push_back(std::move(e));
    entry += entry_header + payload;
  }
  return f;
}

const FatbinEntry* pick_ptx(const Fatbin& f, uint32_t cc) {
  const FatbinEntry* best = nullptr;
  // ".target sm_90a" (or sm_100f): code for that GPU only, preferred over the portable form.
  auto specific = [](const FatbinEntry& e) {
    const size_t t = e.ptx.find(".target sm_");
    if (t == std::string::npos) return false;
    size_t k = t + 11;
    while (k < e.ptx.size() && e.ptx[k] >= '0' && e.ptx[k] <= '9') ++k;
    return k < e.ptx.size() && (e.ptx[k] == 'a' || e.ptx[k] == 'f');
  };
  for (const FatbinEntry& e : f.entries) {
    if (e.kind != 1 || e.ptx.empty() || (cc != 0 && e.arch > cc)) continue;
    if (best == nullptr || e.arch > best->arch || (e.arch == best->arch && specific(e) && !specific(*best))) best = &e;
  }
  return best;
}

}  // namespace tmakit::watch
