// A stand-in for the driver's libcuda.so.1, for tests on machines with no GPU (CI).
// It exports what the watch tests call: the four tensor-map calls, cuGetProcAddress
// in both ABIs, cuDriverGetVersion, cuGetErrorName. Every encode is answered with
// the verdict the H100's driver gave for the same parameters, read from the JSON
// Lines files named by TMAKIT_STAND_IN_VERDICTS (colon-separated; the format of
// tests/vectors/driver_verdicts.jsonl). Calls with arguments no recorded map can
// express (null pointers, ranks outside 1..5, enums the driver does not define) get
// what the H100's driver did with them (tests/vectors/watch/h100/defensive.txt,
// which test_watch.cpp compares with the stand-in): CUDA_ERROR_INVALID_VALUE, or a
// crash where the driver crashed. A map with no recorded verdict is answered
// CUDA_ERROR_UNKNOWN, loudly.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "../../src/watch/driver_abi.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace {

namespace abi = tmakit::watch::abi;
namespace tmap = tmakit::tensor_map;
constexpr abi::CUresult kUnknown = 999;

// Canonical text of a map: the key of the recorded verdicts.
std::string key_of(const tmap::TensorMap& m) { return tmap::map_to_json(m).dump(); }

const std::unordered_map<std::string, std::string>& verdicts() {
  static std::unordered_map<std::string, std::string> table;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* files = std::getenv("TMAKIT_STAND_IN_VERDICTS");
    std::string list = files ? files : "";
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      std::ifstream in(list.substr(start, end - start));
      for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        nlohmann::json j = nlohmann::json::parse(line);
        std::string driver = j.at("driver").get<std::string>();
        j.erase("driver");
        j.erase("intended_rule");
        try {
          table[key_of(tmap::map_from_json(j, "verdicts").map)] = driver;
        } catch (const std::exception&) {
          // A map the JSON reader refuses has no TensorMap key; calls cannot reach it.
        }
      }
      start = end + 1;
    }
  });
  return table;
}

abi::CUresult answer(void* out, const tmap::TensorMap& m) {
  auto it = verdicts().find(key_of(m));
  if (it == verdicts().end()) {
    std::fprintf(stderr, "stand-in libcuda: no recorded verdict for %s\n", key_of(m).c_str());
    return kUnknown;
  }
  if (it->second != "CUDA_SUCCESS") return abi::kInvalidValue;
  // 128 bytes that depend on every parameter (FNV-1a of the key, then a xorshift
  // stream), so a test can see that the program gets the same descriptor with and
  // without the watch library.
  uint64_t h = 1469598103934665603ull;
  for (char c : it->first) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  auto* bytes = static_cast<unsigned char*>(out);
  for (int i = 0; i < abi::kTensorMapBytes; ++i) {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;
    bytes[i] = static_cast<unsigned char>(h >> 56);
  }
  return abi::kSuccess;
}

bool enums_defined(int type, int il, int sw, int l2, int oob) {
  return type >= 0 && type <= 15 && il >= 0 && il <= 2 && sw >= 0 && sw <= 6 && l2 >= 0 && l2 <= 3 && oob >= 0 &&
         oob <= 1;
}

// The common part of the three encoders: pointers, rank, enums, then the map's arrays.
bool fill_common(tmap::TensorMap& m, void* out, int type, uint32_t rank, void* addr, const uint64_t* dims,
                 const uint64_t* strides, const uint32_t* estr, int il, int sw, int l2, int oob) {
  // The H100's driver writes a map at an address off 64 bytes, refuses a null one, and
  // crashes on a rank above 2^31 (it reads that many entries): the stand-in does the same.
  if (out == nullptr) return false;
  if (rank > 0x7fffffffu) std::raise(SIGSEGV);
  if (rank < 1 || rank > 5 || dims == nullptr || estr == nullptr || (rank > 1 && strides == nullptr)) return false;
  if (!enums_defined(type, il, sw, l2, oob)) return false;
  m.data_type = static_cast<tmap::DataType>(type);
  m.rank = static_cast<int>(rank);
  m.global_address = reinterpret_cast<uintptr_t>(addr);
  for (uint32_t i = 0; i < rank; ++i) {
    m.dims[i] = dims[i];
    m.element_strides[i] = estr[i];
    if (i + 1 < rank) m.strides[i] = strides[i];
  }
  m.interleave = static_cast<tmap::Interleave>(il);
  m.swizzle = static_cast<tmap::Swizzle>(sw);
  m.l2_promotion = static_cast<tmap::L2Promotion>(l2);
  m.oob_fill = static_cast<tmap::OobFill>(oob);
  return true;
}

}  // namespace

#define STAND_IN extern "C" __attribute__((visibility("default")))

STAND_IN abi::CUresult cuTensorMapEncodeTiled(void* out, int type, uint32_t rank, void* addr, const uint64_t* dims,
                                              const uint64_t* strides, const uint32_t* box, const uint32_t* estr,
                                              int il, int sw, int l2, int oob) {
  tmap::TensorMap m;
  if (!fill_common(m, out, type, rank, addr, dims, strides, estr, il, sw, l2, oob) || box == nullptr)
    return abi::kInvalidValue;
  for (uint32_t i = 0; i < rank; ++i) m.box[i] = box[i];
  return answer(out, m);
}

STAND_IN abi::CUresult cuTensorMapEncodeIm2col(void* out, int type, uint32_t rank, void* addr, const uint64_t* dims,
                                               const uint64_t* strides, const int* lower, const int* upper,
                                               uint32_t channels, uint32_t pixels, const uint32_t* estr, int il,
                                               int sw, int l2, int oob) {
  tmap::TensorMap m;
  m.encode = tmap::Encode::im2col;
  if (!fill_common(m, out, type, rank, addr, dims, strides, estr, il, sw, l2, oob)) return abi::kInvalidValue;
  if (rank >= 3 && rank <= 5 && (lower == nullptr || upper == nullptr)) std::raise(SIGSEGV);  // as on the H100
  for (uint32_t i = 0; i + 2 < rank; ++i) m.pixel_box_lower[i] = lower[i], m.pixel_box_upper[i] = upper[i];
  m.channels_per_pixel = channels;
  m.pixels_per_column = pixels;
  return answer(out, m);
}

STAND_IN abi::CUresult cuTensorMapEncodeIm2colWide(void* out, int type, uint32_t rank, void* addr,
                                                   const uint64_t* dims, const uint64_t* strides, int lower_w,
                                                   int upper_w, uint32_t channels, uint32_t pixels,
                                                   const uint32_t* estr, int il, int mode, int sw, int l2, int oob) {
  tmap::TensorMap m;
  m.encode = tmap::Encode::im2col_wide;
  if (!fill_common(m, out, type, rank, addr, dims, strides, estr, il, sw, l2, oob) || mode < 0 || mode > 1)
    return abi::kInvalidValue;
  m.pixel_box_lower_w = lower_w;
  m.pixel_box_upper_w = upper_w;
  m.wide_mode = static_cast<tmap::WideMode>(mode);
  m.channels_per_pixel = channels;
  m.pixels_per_column = pixels;
  return answer(out, m);
}

// The H100's driver refuses a null map and an address off 16 bytes; the stand-in
// cannot re-encode, so it marks the descriptor's last byte to show it was written.
STAND_IN abi::CUresult cuTensorMapReplaceAddress(void* map, void* addr) {
  if (map == nullptr || reinterpret_cast<uintptr_t>(addr) % 16 != 0) return abi::kInvalidValue;
  static_cast<unsigned char*>(map)[abi::kTensorMapBytes - 1] ^= 0x5a;
  return abi::kSuccess;
}

STAND_IN abi::CUresult cuInit(unsigned flags) { return flags == 0 ? abi::kSuccess : abi::kInvalidValue; }
STAND_IN abi::CUresult cuDevicePrimaryCtxRetain(void** context, int device) {
  if (context == nullptr || device != 0) return abi::kInvalidValue;
  static int primary;
  *context = &primary;
  return abi::kSuccess;
}
STAND_IN abi::CUresult cuCtxSetCurrent(void*) { return abi::kSuccess; }

STAND_IN abi::CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return abi::kInvalidValue;
  *version = 13000;
  return abi::kSuccess;
}

STAND_IN abi::CUresult cuGetErrorName(abi::CUresult error, const char** name) {
  if (name == nullptr) return abi::kInvalidValue;
  switch (error) {
    case 0: *name = "CUDA_SUCCESS"; break;
    case 1: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case 200: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case 500: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case 600: *name = "CUDA_ERROR_NOT_READY"; break;
    case 715: *name = "CUDA_ERROR_ILLEGAL_INSTRUCTION"; break;
    default: *name = "CUDA_ERROR_UNKNOWN";
  }
  return abi::kSuccess;
}

STAND_IN abi::CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t, int* status);
extern "C" void* tmakit_stand_in_check_proc(const char* symbol);  // stand_in_check.cpp

STAND_IN abi::CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

// As the driver does: "cuGetProcAddress" at 12000 or later is the _v2 ABI.
STAND_IN abi::CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t, int* status) {
  if (symbol == nullptr || pfn == nullptr) return abi::kInvalidValue;
  struct Entry {
    const char* name;
    void* fn;
  };
  const Entry table[] = {
      {"cuTensorMapEncodeTiled", reinterpret_cast<void*>(&cuTensorMapEncodeTiled)},
      {"cuTensorMapEncodeIm2col", reinterpret_cast<void*>(&cuTensorMapEncodeIm2col)},
      {"cuTensorMapEncodeIm2colWide", reinterpret_cast<void*>(&cuTensorMapEncodeIm2colWide)},
      {"cuTensorMapReplaceAddress", reinterpret_cast<void*>(&cuTensorMapReplaceAddress)},
      {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
      {"cuInit", reinterpret_cast<void*>(&cuInit)},
      {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName)},
      {"cuGetProcAddress", version >= 12000 ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                            : reinterpret_cast<void*>(&cuGetProcAddress)},
  };
  for (const Entry& e : table)
    if (std::strcmp(symbol, e.name) == 0) {
      *pfn = e.fn;
      if (status) *status = 0;  // CU_GET_PROC_ADDRESS_SUCCESS
      return abi::kSuccess;
    }
  if ((*pfn = tmakit_stand_in_check_proc(symbol)) != nullptr) {
    if (status) *status = 0;
    return abi::kSuccess;
  }
  if (status) *status = 1;  // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  return abi::kNotFound;
}
