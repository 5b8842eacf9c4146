// The real functions behind the hooks: glibc's dlsym, and the driver's entry points
// as the program (or the library) found them. Each slot is an atomic pointer, set
// once from the first real pointer seen, so the pass-through paths take no lock.
#pragma once
#include <atomic>
#include <iterator>

#include "driver_abi.hpp"

namespace tmakit::watch {

using DlsymFn = void* (*)(void*, const char*);
// glibc's own dlsym (found with dlvsym, which the library does not hook).
DlsymFn real_dlsym();

// The slots after get_error_name are `tmakit check`'s (check_hooks.cpp): handed out in place of
// the driver's only under tmakit check.
enum class Slot : int { encode_tiled, encode_im2col, encode_im2col_wide, replace_address, get_proc_address_v1,
                        get_proc_address_v2, get_error_name, module_load_data, module_load_data_ex,
                        library_load_data, link_add_data, link_add_data_v2, module_get_function,
                        library_get_kernel, kernel_get_function, launch_kernel, launch_kernel_ex,
                        module_load_fat_binary, launch_kernel_ptsz, launch_kernel_ex_ptsz,
                        launch_cooperative, launch_cooperative_ptsz, count };
inline constexpr const char* kSlotSymbol[] = {
    "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide", "cuTensorMapReplaceAddress",
    "cuGetProcAddress", "cuGetProcAddress_v2", "cuGetErrorName", "cuModuleLoadData", "cuModuleLoadDataEx",
    "cuLibraryLoadData", "cuLinkAddData", "cuLinkAddData_v2", "cuModuleGetFunction", "cuLibraryGetKernel",
    "cuKernelGetFunction", "cuLaunchKernel", "cuLaunchKernelEx",
    "cuModuleLoadFatBinary", "cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel",
    "cuLaunchCooperativeKernel_ptsz"
};
static_assert(std::size(kSlotSymbol) == static_cast<size_t>(Slot::count));

// tmakit check's slots (check_hooks.cpp): the slot of a symbol, -1 when it is none of them or
// the process is not under tmakit check; the hook of a check slot.
int check_slot_of(const char* symbol);
void* check_hook_for(Slot slot);

// Keeps `fn` as the real function of `slot` unless one is already kept (or `fn` is
// one of the library's own hooks, which would make a loop).
void remember(Slot slot, void* fn);
// The real function of `slot`: the one remembered, else the next definition after
// this library (RTLD_NEXT), else libcuda.so.1's own; nullptr when there is none.
void* real(Slot slot);
// True when `fn` is one of the library's hooks.
bool is_hook(void* fn);
// This library's load address, to tell its own code (and stack frames) from the program's.
const void* own_base();

}  // namespace tmakit::watch
