// `tmakit check`'s hooks in the preload library (docs/check.md): module loading (PTX images are
// instrumented), function lookup, and launches. The exported names below catch a program that
// links libcuda; dlsym, cuGetProcAddress and cudaGetDriverEntryPoint hand out the same hooks
// through hooks.cpp's substitution, but only under tmakit check (check_slot_of answers -1
// otherwise), so `tmakit watch` alone hands out exactly what it did before. Without
// TMAKIT_CHECK_DIR the exported hooks call the driver's function and nothing else.
#include <cstring>

#include "check_abi.hpp"
#include "check_session.hpp"
#include "../../watch/real_driver.hpp"

namespace tmakit::watch {
namespace {

using abi::CUresult;

template <typename Fn>
Fn real_fn(Slot slot) {
  return reinterpret_cast<Fn>(real(slot));
}

CUresult hook_module_load_data(void** module, const void* image) {
  auto fn = real_fn<abi::ModuleLoadData>(Slot::module_load_data);
  if (fn == nullptr) return abi::kNotFound;
  if (!check_active()) return fn(module, image);
  return check_module_load(module, image, ModuleKind::module, [&](const void* i) { return fn(module, i); });
}

CUresult hook_module_load_data_ex(void** module, const void* image, unsigned n, int* options, void** values) {
  auto fn = real_fn<abi::ModuleLoadDataEx>(Slot::module_load_data_ex);
  if (fn == nullptr) return abi::kNotFound;
  if (!check_active()) return fn(module, image, n, options, values);
  return check_module_load(module, image, ModuleKind::module,
                           [&](const void* i) { return fn(module, i, n, options, values); });
}

CUresult hook_library_load_data(void** library, const void* code, int* jo, void** jv, unsigned nj, int* lo,
                                void** lv, unsigned nl) {
  auto fn = real_fn<abi::LibraryLoadData>(Slot::library_load_data);
  if (fn == nullptr) return abi::kNotFound;
  if (!check_active()) return fn(library, code, jo, jv, nj, lo, lv, nl);
  return check_module_load(library, code, ModuleKind::library,
                           [&](const void* i) { return fn(library, i, jo, jv, nj, lo, lv, nl); });
}

// cuModuleLoadFatBinary loads fatbins only: an instrumented replacement (PTX text) goes
// through cuModuleLoadData.
CUresult hook_module_load_fat_binary(void** module, const void* fat) {
  auto fn = real_fn<abi::ModuleLoadFatBinary>(Slot::module_load_fat_binary);
  if (fn == nullptr) return abi::kNotFound;
  if (!check_active()) return fn(module, fat);
  auto ptx_loader = real_fn<abi::ModuleLoadData>(Slot::module_load_data);
  return check_module_load(module, fat, ModuleKind::module, [&](const void* i) {
    return i == fat || ptx_loader == nullptr ? fn(module, i) : ptx_loader(module, i);
  });
}

template <Slot S>
CUresult hook_link_add_data(void* state, int type, void* data, size_t size, const char* name, unsigned n,
                            int* options, void** values) {
  auto fn = real_fn<abi::LinkAddData>(S);
  if (fn == nullptr) return abi::kNotFound;
  if (!check_active() || type != abi::kJitInputPtx) return fn(state, type, data, size, name, n, options, values);
  return check_link_add(state, data, size,
                        [&](void* d, size_t s) { return fn(state, type, d, s, name, n, options, values); });
}

CUresult hook_module_get_function(void** function, void* module, const char* name) {
  auto fn = real_fn<abi::ModuleGetFunction>(Slot::module_get_function);
  if (fn == nullptr) return abi::kNotFound;
  CUresult r = fn(function, module, name);
  if (r == abi::kSuccess && check_active()) check_function_found(*function, module, name);
  return r;
}

CUresult hook_library_get_kernel(void** kernel, void* library, const char* name) {
  auto fn = real_fn<abi::LibraryGetKernel>(Slot::library_get_kernel);
  if (fn == nullptr) return abi::kNotFound;
  CUresult r = fn(kernel, library, name);
  if (r == abi::kSuccess && check_active()) check_function_found(*kernel, library, name);
  return r;
}

CUresult hook_kernel_get_function(void** function, void* kernel) {
  auto fn = real_fn<abi::KernelGetFunction>(Slot::kernel_get_function);
  if (fn == nullptr) return abi::kNotFound;
  CUresult r = fn(function, kernel);
  if (r == abi::kSuccess && check_active()) check_same_function(*function, kernel);
  return r;
}

// cuLaunchKernel and its per-thread-default-stream twin (S: the slot of the one called).
template <Slot S>
CUresult hook_launch_kernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void* stream, void** params, void** extra) {
  auto fn = real_fn<abi::LaunchKernel>(S);
  if (fn == nullptr) return abi::kNotFound;
  auto launch = [&] { return fn(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra); };
  if (!check_active()) return launch();
  LaunchShape shape{.grid = {gx, gy, gz}, .block = {bx, by, bz}, .dynamic_smem = smem, .stream = stream};
  return check_launch(f, shape, launch);
}

// cuLaunchCooperativeKernel(_ptsz): the same launch, every CTA resident at once.
template <Slot S>
CUresult hook_launch_cooperative(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned smem, void* stream, void** params) {
  auto fn = real_fn<abi::LaunchCooperativeKernel>(S);
  if (fn == nullptr) return abi::kNotFound;
  auto launch = [&] { return fn(f, gx, gy, gz, bx, by, bz, smem, stream, params); };
  if (!check_active()) return launch();
  LaunchShape shape{.grid = {gx, gy, gz}, .block = {bx, by, bz}, .dynamic_smem = smem, .stream = stream};
  return check_launch(f, shape, launch);
}

template <Slot S>
CUresult hook_launch_kernel_ex(const abi::LaunchConfig* config, void* f, void** params, void** extra) {
  auto fn = real_fn<abi::LaunchKernelEx>(S);
  if (fn == nullptr) return abi::kNotFound;
  auto launch = [&] { return fn(config, f, params, extra); };
  if (!check_active() || config == nullptr) return launch();
  LaunchShape shape{.grid = {config->grid_x, config->grid_y, config->grid_z},
                    .block = {config->block_x, config->block_y, config->block_z},
                    .dynamic_smem = config->shared_mem_bytes,
                    .stream = config->stream};
  // The cluster shape is a launch attribute (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).
  for (unsigned i = 0; config->attrs != nullptr && i < config->num_attrs; ++i)
    if (config->attrs[i].id == abi::kLaunchAttributeClusterDimension) {
      const auto& c = config->attrs[i].value.cluster_dim;
      shape.cluster[0] = c.x, shape.cluster[1] = c.y, shape.cluster[2] = c.z;
    }
  return check_launch(f, shape, launch);
}

}  // namespace

int check_slot_of(const char* symbol) {
  if (!check_active()) return -1;
  for (int i = static_cast<int>(Slot::module_load_data); i < static_cast<int>(Slot::count); ++i)
    if (std::strcmp(symbol, kSlotSymbol[i]) == 0) return i;
  return -1;
}

void* check_hook_for(Slot slot) {
  switch (slot) {
    case Slot::module_load_data: return reinterpret_cast<void*>(&hook_module_load_data);
    case Slot::module_load_data_ex: return reinterpret_cast<void*>(&hook_module_load_data_ex);
    case Slot::library_load_data: return reinterpret_cast<void*>(&hook_library_load_data);
    case Slot::link_add_data: return reinterpret_cast<void*>(&hook_link_add_data<Slot::link_add_data>);
    case Slot::link_add_data_v2: return reinterpret_cast<void*>(&hook_link_add_data<Slot::link_add_data_v2>);
    case Slot::module_get_function: return reinterpret_cast<void*>(&hook_module_get_function);
    case Slot::library_get_kernel: return reinterpret_cast<void*>(&hook_library_get_kernel);
    case Slot::kernel_get_function: return reinterpret_cast<void*>(&hook_kernel_get_function);
    case Slot::launch_kernel: return reinterpret_cast<void*>(&hook_launch_kernel<Slot::launch_kernel>);
    case Slot::launch_kernel_ex: return reinterpret_cast<void*>(&hook_launch_kernel_ex<Slot::launch_kernel_ex>);
    case Slot::module_load_fat_binary: return reinterpret_cast<void*>(&hook_module_load_fat_binary);
    case Slot::launch_kernel_ptsz: return reinterpret_cast<void*>(&hook_launch_kernel<Slot::launch_kernel_ptsz>);
    case Slot::launch_kernel_ex_ptsz:
      return reinterpret_cast<void*>(&hook_launch_kernel_ex<Slot::launch_kernel_ex_ptsz>);
    case Slot::launch_cooperative: return reinterpret_cast<void*>(&hook_launch_cooperative<Slot::launch_cooperative>);
    case Slot::launch_cooperative_ptsz:
      return reinterpret_cast<void*>(&hook_launch_cooperative<Slot::launch_cooperative_ptsz>);
    default: return nullptr;
  }
}

}  // namespace tmakit::watch

using namespace tmakit::watch;
#define TMAKIT_EXPORT extern "C" __attribute__((visibility("default")))

TMAKIT_EXPORT abi::CUresult cuModuleLoadData(void** m, const void* image) { return hook_module_load_data(m, image); }
TMAKIT_EXPORT abi::CUresult cuModuleLoadDataEx(void** m, const void* image, unsigned n, int* o, void** v) {
  return hook_module_load_data_ex(m, image, n, o, v);
}
TMAKIT_EXPORT abi::CUresult cuLibraryLoadData(void** l, const void* code, int* jo, void** jv, unsigned nj, int* lo,
                                              void** lv, unsigned nl) {
  return hook_library_load_data(l, code, jo, jv, nj, lo, lv, nl);
}
TMAKIT_EXPORT abi::CUresult cuLinkAddData(void* st, int type, void* data, size_t size, const char* name, unsigned n,
                                          int* o, void** v) {
  return hook_link_add_data<Slot::link_add_data>(st, type, data, size, name, n, o, v);
}
TMAKIT_EXPORT abi::CUresult cuLinkAddData_v2(void* st, int type, void* data, size_t size, const char* name,
                                             unsigned n, int* o, void** v) {
  return hook_link_add_data<Slot::link_add_data_v2>(st, type, data, size, name, n, o, v);
}
TMAKIT_EXPORT abi::CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  return hook_module_get_function(f, m, name);
}
TMAKIT_EXPORT abi::CUresult cuLibraryGetKernel(void** k, void* l, const char* name) {
  return hook_library_get_kernel(k, l, name);
}
TMAKIT_EXPORT abi::CUresult cuKernelGetFunction(void** f, void* k) { return hook_kernel_get_function(f, k); }
TMAKIT_EXPORT abi::CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                           unsigned bz, unsigned smem, void* stream, void** params, void** extra) {
  return hook_launch_kernel<Slot::launch_kernel>(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}
TMAKIT_EXPORT abi::CUresult cuLaunchKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                unsigned by, unsigned bz, unsigned smem, void* stream, void** params,
                                                void** extra) {
  return hook_launch_kernel<Slot::launch_kernel_ptsz>(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}
TMAKIT_EXPORT abi::CUresult cuLaunchKernelEx(const abi::LaunchConfig* config, void* f, void** params, void** extra) {
  return hook_launch_kernel_ex<Slot::launch_kernel_ex>(config, f, params, extra);
}
TMAKIT_EXPORT abi::CUresult cuLaunchKernelEx_ptsz(const abi::LaunchConfig* config, void* f, void** params,
                                                  void** extra) {
  return hook_launch_kernel_ex<Slot::launch_kernel_ex_ptsz>(config, f, params, extra);
}
TMAKIT_EXPORT abi::CUresult cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                      unsigned by, unsigned bz, unsigned smem, void* stream,
                                                      void** params) {
  return hook_launch_cooperative<Slot::launch_cooperative>(f, gx, gy, gz, bx, by, bz, smem, stream, params);
}
TMAKIT_EXPORT abi::CUresult cuLaunchCooperativeKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz,
                                                           unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                                           void* stream, void** params) {
  return hook_launch_cooperative<Slot::launch_cooperative_ptsz>(f, gx, gy, gz, bx, by, bz, smem, stream, params);
}
TMAKIT_EXPORT abi::CUresult cuModuleLoadFatBinary(void** m, const void* fat) { return hook_module_load_fat_binary(m, fat); }
