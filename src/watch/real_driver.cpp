// The real functions behind the hooks (real_driver.hpp).
#include "real_driver.hpp"

#include <dlfcn.h>

namespace tmakit::watch {
namespace {

std::atomic<void*> g_slots[static_cast<int>(Slot::count)];

}  // namespace

const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&own_base), &info) ? info.dli_fbase : nullptr;
  }();
  return base;
}

DlsymFn real_dlsym() {
  static std::atomic<DlsymFn> fn{nullptr};
  DlsymFn f = fn.load(std::memory_order_acquire);
  if (f == nullptr) {
    // dlsym's symbol version: 2.34 where libdl moved into libc, else the architecture's first.
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"}) {
      f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", version));
      if (f != nullptr) break;
    }
    fn.store(f, std::memory_order_release);
  }
  return f;
}

bool is_hook(void* fn) {
  Dl_info info{};
  return fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fbase == own_base();
}

void remember(Slot slot, void* fn) {
  if (fn == nullptr || is_hook(fn)) return;
  void* expected = nullptr;
  g_slots[static_cast<int>(slot)].compare_exchange_strong(expected, fn, std::memory_order_acq_rel);
}

void* real(Slot slot) {
  std::atomic<void*>& s = g_slots[static_cast<int>(slot)];
  if (void* fn = s.load(std::memory_order_acquire)) return fn;
  DlsymFn find = real_dlsym();
  if (find == nullptr) return nullptr;
  const char* symbol = kSlotSymbol[static_cast<int>(slot)];
  void* fn = find(RTLD_NEXT, symbol);  // the definition after this library (a linked libcuda)
  if (fn == nullptr || is_hook(fn)) {
    fn = nullptr;
    // libcuda loaded with dlopen (RTLD_LOCAL) is not in the global scope: ask it, never load it.
    if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      fn = find(h, symbol);
      dlclose(h);
    }
  }
  remember(slot, fn);
  return s.load(std::memory_order_acquire);
}

}  // namespace tmakit::watch
