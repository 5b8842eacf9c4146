// RTLD_NEXT through the watch library's dlsym (test_watch.cpp): libA and libB both
// define probe_name(); libA asks dlsym(RTLD_NEXT) for it, which glibc resolves
// relative to the caller, so the answer must be libB's. A dlsym hook that calls
// glibc instead of jumping to it would make glibc see the hook as the caller and
// answer with libA's own definition.
#include <dlfcn.h>

extern "C" const char* probe_name() { return "A"; }
extern "C" const char* next_probe_name() {
  auto fn = reinterpret_cast<const char* (*)()>(dlsym(RTLD_NEXT, "probe_name"));
  return fn ? fn() : "none";
}
