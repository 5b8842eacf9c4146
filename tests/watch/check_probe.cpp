// A program that loads a module and launches one of its kernels the ways real programs reach
// the driver, for the `tmakit check` tests (test_check_hooks.cpp, on the stand-in libcuda).
//
//   check_probe ROUTE FILE KERNEL [plain|ex|ptsz|coop] [LOADS]
// ROUTE: how the driver's functions are reached, and how the module is loaded:
//   linked  (libcuda's exported symbols; cuModuleLoadData)   dlsym (dlopen + dlsym, as Triton)
//   gpa     (cuGetProcAddress_v2 from dlsym)                  runtime (cuGetProcAddress asked for itself:
//                                                              cudaGetDriverEntryPoint's way)
//   library (cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction)
//   link    (cuLinkCreate/AddData(PTX)/Complete, then cuModuleLoadData of the result)
//   ex      (cuModuleLoadDataEx)                              fatbin  (cuModuleLoadFatBinary)
// FILE is loaded as it is (PTX text, a cubin, a fatbin). `ex` launches with cuLaunchKernelEx and
// a cluster of 2x1x1, `ptsz` with cuLaunchKernel_ptsz, `coop` with cuLaunchCooperativeKernel. LOADS (default 1) loads the module that many times (one launch each).
// Prints "launch R sync S" per launch; exit 0 when every sync succeeded, 3 otherwise.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "../../src/check/hooks/check_abi.hpp"

namespace abi = tmakit::watch::abi;

extern "C" {
abi::CUresult cuInit(unsigned);
abi::CUresult cuDevicePrimaryCtxRetain(void**, int);
abi::CUresult cuCtxSetCurrent(void*);
abi::CUresult cuCtxSynchronize();
abi::CUresult cuModuleLoadData(void**, const void*);
abi::CUresult cuModuleLoadDataEx(void**, const void*, unsigned, int*, void**);
abi::CUresult cuModuleGetFunction(void**, void*, const char*);
abi::CUresult cuLibraryLoadData(void**, const void*, int*, void**, unsigned, int*, void**, unsigned);
abi::CUresult cuLibraryGetKernel(void**, void*, const char*);
abi::CUresult cuKernelGetFunction(void**, void*);
abi::CUresult cuLinkCreate_v2(unsigned, int*, void**, void**);
abi::CUresult cuLinkAddData_v2(void*, int, void*, size_t, const char*, unsigned, int*, void**);
abi::CUresult cuLinkComplete(void*, void**, size_t*);
abi::CUresult cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**);
abi::CUresult cuLaunchKernelEx(const abi::LaunchConfig*, void*, void**, void**);
abi::CUresult cuLaunchKernel_ptsz(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                                  void**, void**);
abi::CUresult cuLaunchCooperativeKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        void*, void**);
abi::CUresult cuModuleLoadFatBinary(void**, const void*);
}

namespace {

struct Driver {
  abi::ModuleLoadData load = cuModuleLoadData;
  abi::ModuleLoadDataEx load_ex = cuModuleLoadDataEx;
  abi::ModuleGetFunction get_function = cuModuleGetFunction;
  abi::LibraryLoadData library_load = cuLibraryLoadData;
  abi::LibraryGetKernel library_kernel = cuLibraryGetKernel;
  abi::KernelGetFunction kernel_function = cuKernelGetFunction;
  abi::LinkAddData link_add = cuLinkAddData_v2;
  abi::LaunchKernel launch = cuLaunchKernel;
  abi::LaunchKernelEx launch_ex = cuLaunchKernelEx;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "check_probe: %s\n", what.c_str());
  std::exit(4);
}

template <typename Fn>
void set(Fn& slot, void* p, const char* name) {
  if (p == nullptr) die(std::string("no ") + name);
  slot = reinterpret_cast<Fn>(p);
}

// The hooked functions, reached the way ROUTE says.
Driver driver_for(const std::string& route) {
  Driver d;
  if (route == "linked" || route == "library" || route == "link" || route == "ex" || route == "fatbin") return d;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) die("no libcuda.so.1");
  std::function<void*(const char*)> find;
  if (route == "dlsym") {
    find = [h](const char* n) { return dlsym(h, n); };
  } else {
    auto gpa = reinterpret_cast<abi::GetProcAddressV2>(dlsym(h, "cuGetProcAddress_v2"));
    if (gpa == nullptr) die("no cuGetProcAddress_v2");
    if (route == "runtime") {  // the runtime asks the driver's cuGetProcAddress for cuGetProcAddress
      void* inner = nullptr;
      if (gpa("cuGetProcAddress", &inner, 12000, 0, nullptr) != 0) die("no nested cuGetProcAddress");
      gpa = reinterpret_cast<abi::GetProcAddressV2>(inner);
    } else if (route != "gpa") {
      die("unknown route " + route);
    }
    find = [gpa](const char* n) {
      void* p = nullptr;
      return gpa(n, &p, 12000, 0, nullptr) == 0 ? p : nullptr;
    };
  }
  set(d.load, find("cuModuleLoadData"), "cuModuleLoadData");
  set(d.get_function, find("cuModuleGetFunction"), "cuModuleGetFunction");
  set(d.launch, find("cuLaunchKernel"), "cuLaunchKernel");
  set(d.launch_ex, find("cuLaunchKernelEx"), "cuLaunchKernelEx");
  return d;
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die(std::string("cannot read ") + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void check(abi::CUresult r, const char* what) {
  if (r != 0) die(std::string(what) + " returned " + std::to_string(r));
}

// The kernel, loaded the way ROUTE says.
void* function_for(const std::string& route, const Driver& d, const std::string& image, const char* kernel) {
  void* f = nullptr;
  if (route == "library") {
    void *lib = nullptr, *k = nullptr;
    check(d.library_load(&lib, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
    check(d.library_kernel(&k, lib, kernel), "cuLibraryGetKernel");
    check(d.kernel_function(&f, k), "cuKernelGetFunction");
    return f;
  }
  void* m = nullptr;
  if (route == "link") {
    void *state = nullptr, *cubin = nullptr;
    size_t size = 0;
    check(cuLinkCreate_v2(0, nullptr, nullptr, &state), "cuLinkCreate");
    check(d.link_add(state, abi::kJitInputPtx, const_cast<char*>(image.c_str()), image.size() + 1, "probe.ptx", 0,
                     nullptr, nullptr),
          "cuLinkAddData");
    check(cuLinkComplete(state, &cubin, &size), "cuLinkComplete");
    check(d.load(&m, cubin), "cuModuleLoadData (linked cubin)");
  } else if (route == "ex") {
    check(d.load_ex(&m, image.c_str(), 0, nullptr, nullptr), "cuModuleLoadDataEx");
  } else if (route == "fatbin") {
    check(cuModuleLoadFatBinary(&m, image.data()), "cuModuleLoadFatBinary");
  } else {
    check(d.load(&m, image.c_str()), "cuModuleLoadData");
  }
  check(d.get_function(&f, m, kernel), "cuModuleGetFunction");
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) die("usage: check_probe ROUTE FILE KERNEL [plain|ex|ptsz|coop] [LOADS]");
  const std::string route = argv[1];
  const std::string image = read_file(argv[2]);
  const std::string how = argc > 4 ? argv[4] : "plain";
  const bool ex = how == "ex";
  const int loads = argc > 5 ? std::atoi(argv[5]) : 1;
  void* ctx = nullptr;
  check(cuInit(0), "cuInit");
  check(cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  const Driver d = driver_for(route);
  int failed = 0;
  for (int i = 0; i < loads; ++i) {
    void* f = function_for(route, d, image, argv[3]);
    abi::CUresult launched;
    if (ex) {
      abi::LaunchAttribute cluster{};
      cluster.id = abi::kLaunchAttributeClusterDimension;
      cluster.value.cluster_dim = {2, 1, 1};
      abi::LaunchConfig config{2, 1, 1, 128, 1, 1, 1024, nullptr, &cluster, 1};
      launched = d.launch_ex(&config, f, nullptr, nullptr);
    } else if (how == "ptsz") {
      launched = cuLaunchKernel_ptsz(f, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
    } else if (how == "coop") {
      launched = cuLaunchCooperativeKernel(f, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr);
    } else {
      launched = d.launch(f, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
    }
    const abi::CUresult synced = cuCtxSynchronize();
    std::printf("launch %d sync %d\n", launched, synced);
    std::fflush(stdout);
    failed += launched != 0 || synced != 0;
  }
  return failed ? 3 : 0;
}
