// The preload library's exported symbols (docs/watch.md): the driver's four
// tensor-map calls, cuGetProcAddress in both ABIs, and dlsym. However a program
// reaches an encoder (linked, dlsym, cuGetProcAddress, cudaGetDriverEntryPoint), it
// gets one of the hooks below, each of which calls the real driver function once
// and hands its arguments to the session. Everything else passes straight through:
// dlsym of another name is a tail call into glibc's dlsym, with no lock and no
// allocation, so glibc still sees the caller's own return address (RTLD_NEXT).
#include <cstring>

#include "driver_abi.hpp"
#include "real_driver.hpp"
#include "session.hpp"

namespace tmakit::watch {
namespace {

using abi::CUresult;

template <Via V>
CUresult hook_encode_tiled(void* tm, int type, uint32_t rank, void* addr, const uint64_t* dims,
                           const uint64_t* strides, const uint32_t* box, const uint32_t* estr, int il, int sw, int l2,
                           int oob) {
  EncodeArgs a{.entry = Entry::encode_tiled, .tensor_map = tm, .data_type = type, .rank = rank,
               .global_address = addr, .dims = dims, .strides = strides, .box = box, .element_strides = estr,
               .interleave = il, .swizzle = sw, .l2_promotion = l2, .oob_fill = oob};
  return observe_encode(V, a, [&] {
    auto fn = reinterpret_cast<abi::EncodeTiled>(real(Slot::encode_tiled));
    return fn ? fn(tm, type, rank, addr, dims, strides, box, estr, il, sw, l2, oob) : abi::kNotFound;
  });
}

template <Via V>
CUresult hook_encode_im2col(void* tm, int type, uint32_t rank, void* addr, const uint64_t* dims,
                            const uint64_t* strides, const int* lower, const int* upper, uint32_t channels,
                            uint32_t pixels, const uint32_t* estr, int il, int sw, int l2, int oob) {
  EncodeArgs a{.entry = Entry::encode_im2col, .tensor_map = tm, .data_type = type, .rank = rank,
               .global_address = addr, .dims = dims, .strides = strides, .element_strides = estr, .lower = lower,
               .upper = upper, .channels = channels, .pixels = pixels, .interleave = il, .swizzle = sw,
               .l2_promotion = l2, .oob_fill = oob};
  return observe_encode(V, a, [&] {
    auto fn = reinterpret_cast<abi::EncodeIm2col>(real(Slot::encode_im2col));
    return fn ? fn(tm, type, rank, addr, dims, strides, lower, upper, channels, pixels, estr, il, sw, l2, oob)
              : abi::kNotFound;
  });
}

template <Via V>
CUresult hook_encode_im2col_wide(void* tm, int type, uint32_t rank, void* addr, const uint64_t* dims,
                                 const uint64_t* strides, int lower_w, int upper_w, uint32_t channels,
                                 uint32_t pixels, const uint32_t* estr, int il, int mode, int sw, int l2, int oob) {
  EncodeArgs a{.entry = Entry::encode_im2col_wide, .tensor_map = tm, .data_type = type, .rank = rank,
               .global_address = addr, .dims = dims, .strides = strides, .element_strides = estr,
               .lower_w = lower_w, .upper_w = upper_w, .channels = channels, .pixels = pixels, .interleave = il,
               .swizzle = sw, .l2_promotion = l2, .oob_fill = oob, .mode = mode};
  return observe_encode(V, a, [&] {
    auto fn = reinterpret_cast<abi::EncodeIm2colWide>(real(Slot::encode_im2col_wide));
    return fn ? fn(tm, type, rank, addr, dims, strides, lower_w, upper_w, channels, pixels, estr, il, mode, sw, l2,
                   oob)
              : abi::kNotFound;
  });
}

template <Via V>
CUresult hook_replace_address(void* tm, void* addr) {
  return observe_replace(V, tm, addr, [&] {
    auto fn = reinterpret_cast<abi::ReplaceAddress>(real(Slot::replace_address));
    return fn ? fn(tm, addr) : abi::kNotFound;
  });
}

// The hook for a tensor-map symbol reached by way V; nullptr for other names.
template <Via V>
void* hook_for(Slot slot) {
  switch (slot) {
    case Slot::encode_tiled: return reinterpret_cast<void*>(&hook_encode_tiled<V>);
    case Slot::encode_im2col: return reinterpret_cast<void*>(&hook_encode_im2col<V>);
    case Slot::encode_im2col_wide: return reinterpret_cast<void*>(&hook_encode_im2col_wide<V>);
    case Slot::replace_address: return reinterpret_cast<void*>(&hook_replace_address<V>);
    default: return check_hook_for(slot);
  }
}

// Which slot a symbol name is (the tensor-map calls and cuGetProcAddress); -1 for others.
int slot_of(const char* symbol) {
  for (int i = 0; i < static_cast<int>(Slot::get_error_name); ++i)
    if (std::strcmp(symbol, kSlotSymbol[i]) == 0) return i;
  return check_slot_of(symbol);
}

// A cuGetProcAddress the program got from the library's own cuGetProcAddress is
// what the CUDA runtime uses for cudaGetDriverEntryPoint: its pointers are tagged so.
enum class Level { outer, nested };

template <Level L>
CUresult hook_get_proc_address_v1(const char* symbol, void** pfn, int version, uint64_t flags);
template <Level L>
CUresult hook_get_proc_address_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status);

// Swaps the driver's answer for a hook when the symbol is one the library watches.
template <Level L>
void substitute(const char* symbol, int version, uint64_t flags, void** pfn) {
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr) return;
  const int s = slot_of(symbol);
  if (s < 0) return;
  auto slot = static_cast<Slot>(s);
  // With the per-thread-default-stream flag the driver answers a launch with its _ptsz variant:
  // that one is remembered and gets its own hook (tmakit check, docs/check.md).
  constexpr uint64_t kPerThreadDefaultStream = 2;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
  if ((flags & kPerThreadDefaultStream) != 0) {
    if (slot == Slot::launch_kernel) slot = Slot::launch_kernel_ptsz;
    else if (slot == Slot::launch_kernel_ex) slot = Slot::launch_kernel_ex_ptsz;
    else if (slot == Slot::launch_cooperative) slot = Slot::launch_cooperative_ptsz;
  }
  if (slot == Slot::get_proc_address_v1 || slot == Slot::get_proc_address_v2) {
    // "cuGetProcAddress" for CUDA 12.0 and later is the _v2 ABI (cudaTypedefs.h).
    const bool v2 = slot == Slot::get_proc_address_v2 || version >= 12000;
    remember(v2 ? Slot::get_proc_address_v2 : Slot::get_proc_address_v1, *pfn);
    *pfn = v2 ? reinterpret_cast<void*>(&hook_get_proc_address_v2<Level::nested>)
              : reinterpret_cast<void*>(&hook_get_proc_address_v1<Level::nested>);
    return;
  }
  remember(slot, *pfn);
  *pfn = hook_for<L == Level::nested ? Via::runtime : Via::get_proc_address>(slot);
}

template <Level L>
CUresult hook_get_proc_address_v1(const char* symbol, void** pfn, int version, uint64_t flags) {
  auto fn = reinterpret_cast<abi::GetProcAddressV1>(real(Slot::get_proc_address_v1));
  if (fn == nullptr) return abi::kNotFound;
  CUresult r = fn(symbol, pfn, version, flags);
  if (r == abi::kSuccess) substitute<L>(symbol, version, flags, pfn);
  return r;
}

template <Level L>
CUresult hook_get_proc_address_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status) {
  auto fn = reinterpret_cast<abi::GetProcAddressV2>(real(Slot::get_proc_address_v2));
  if (fn == nullptr) return abi::kNotFound;
  CUresult r = fn(symbol, pfn, version, flags, status);
  if (r == abi::kSuccess) substitute<L>(symbol, version, flags, pfn);
  return r;
}

// dlsym of a watched name: the real answer is remembered and a hook handed out.
void* dlsym_watched(void* handle, const char* symbol, int s) {
  DlsymFn find = real_dlsym();
  void* fn = find ? find(handle, symbol) : nullptr;
  if (fn == nullptr) return nullptr;
  const auto slot = static_cast<Slot>(s);
  remember(slot, fn);
  if (slot == Slot::get_proc_address_v1) return reinterpret_cast<void*>(&hook_get_proc_address_v1<Level::outer>);
  if (slot == Slot::get_proc_address_v2) return reinterpret_cast<void*>(&hook_get_proc_address_v2<Level::outer>);
  return hook_for<Via::dlsym>(slot);
}

}  // namespace
}  // namespace tmakit::watch

using namespace tmakit::watch;

#define TMAKIT_EXPORT extern "C" __attribute__((visibility("default")))

// dlsym: which function the call goes on to. Watched names go to dlsym_watched
// with the caller's arguments; every other name goes to glibc's dlsym as a jump,
// so glibc sees the caller's return address (RTLD_NEXT is relative to the caller).
namespace {
void* dlsym_not_found(void*, const char*) { return nullptr; }
void* dlsym_watched_entry(void* handle, const char* symbol) {
  return tmakit::watch::dlsym_watched(handle, symbol, tmakit::watch::slot_of(symbol));
}
}  // namespace

extern "C" __attribute__((visibility("hidden"), used)) void* tmakit_watch_dlsym_target(const char* symbol) {
  if (symbol != nullptr && symbol[0] == 'c' && symbol[1] == 'u' && slot_of(symbol) >= 0)
    return reinterpret_cast<void*>(&dlsym_watched_entry);
  DlsymFn real = real_dlsym();
  return real != nullptr ? reinterpret_cast<void*>(real) : reinterpret_cast<void*>(&dlsym_not_found);
}

#if defined(__x86_64__)
// A jump, not a call, whatever the compiler's flags (sanitizers and -O0 included):
// save the two arguments, ask for the target, restore them, jump.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  .cfi_startproc
  endbr64
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  mov %rsi, %rdi
  call tmakit_watch_dlsym_target@PLT
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#else
// Elsewhere: a tail call the optimiser makes at -O2 (src/watch/CMakeLists.txt).
TMAKIT_EXPORT void* dlsym(void* handle, const char* symbol) {
  using Fn = void* (*)(void*, const char*);
  return reinterpret_cast<Fn>(tmakit_watch_dlsym_target(symbol))(handle, symbol);
}
#endif

TMAKIT_EXPORT abi::CUresult cuTensorMapEncodeTiled(void* tm, int type, uint32_t rank, void* addr,
                                                   const uint64_t* dims, const uint64_t* strides,
                                                   const uint32_t* box, const uint32_t* estr, int il, int sw,
                                                   int l2, int oob) {
  return hook_encode_tiled<Via::linked>(tm, type, rank, addr, dims, strides, box, estr, il, sw, l2, oob);
}

TMAKIT_EXPORT abi::CUresult cuTensorMapEncodeIm2col(void* tm, int type, uint32_t rank, void* addr,
                                                    const uint64_t* dims, const uint64_t* strides, const int* lower,
                                                    const int* upper, uint32_t channels, uint32_t pixels,
                                                    const uint32_t* estr, int il, int sw, int l2, int oob) {
  return hook_encode_im2col<Via::linked>(tm, type, rank, addr, dims, strides, lower, upper, channels, pixels, estr,
                                         il, sw, l2, oob);
}

TMAKIT_EXPORT abi::CUresult cuTensorMapEncodeIm2colWide(void* tm, int type, uint32_t rank, void* addr,
                                                        const uint64_t* dims, const uint64_t* strides, int lower_w,
                                                        int upper_w, uint32_t channels, uint32_t pixels,
                                                        const uint32_t* estr, int il, int mode, int sw, int l2,
                                                        int oob) {
  return hook_encode_im2col_wide<Via::linked>(tm, type, rank, addr, dims, strides, lower_w, upper_w, channels,
                                              pixels, estr, il, mode, sw, l2, oob);
}

TMAKIT_EXPORT abi::CUresult cuTensorMapReplaceAddress(void* tm, void* addr) {
  return hook_replace_address<Via::linked>(tm, addr);
}

TMAKIT_EXPORT abi::CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags) {
  return hook_get_proc_address_v1<Level::outer>(symbol, pfn, version, flags);
}

TMAKIT_EXPORT abi::CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t flags,
                                                int* status) {
  return hook_get_proc_address_v2<Level::outer>(symbol, pfn, version, flags, status);
}
