// tmakit check's module registry (check_session.hpp): PTX images instrumented in-process
// (tmakit::instrument) and loaded in place of the original; modules the ptxas wrapper or a
// link instrumented found again by their __tmakit_module_id; functions mapped to modules.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "check_state.hpp"
#include "../../watch/driver_abi.hpp"
#include "fatbin.hpp"
#include "../../watch/real_driver.hpp"
#include "tmakit/check/ptx_filter.hpp"
#include "tmakit/instrument/instrument.hpp"
#include "tmakit/terminal_text.hpp"

namespace tmakit::watch {
namespace {

// The comment line cmake/TmakitInstrument.cmake's PTX ends with (tools/check/ptxas_wrapper.cpp).
constexpr std::string_view kEmbeddedSites = "// tmakit-sites: ";

struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, std::shared_ptr<CheckModule>> modules;  // CUmodule / CUlibrary
  std::unordered_map<void*, CheckFunction> functions;               // CUfunction / CUkernel
  // Instrumented text handed to a link, by module id, until the linked cubin is loaded.
  std::unordered_map<uint64_t, std::shared_ptr<CheckModule>> by_id;
  std::set<void*> links_instrumented;  // link states that have an instrumented input
  std::deque<std::string> link_texts;  // kept alive: the driver may read them until cuLinkComplete
  // The PTX filter's text for each module text it was given (by module_id_of), null where the
  // module stays as it was: run once per distinct module, kept while the process lives (a
  // library may read its binary for as long as it is loaded).
  std::unordered_map<uint64_t, std::shared_ptr<const std::string>> filtered;
  int modules_seen = 0;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: hooks may run during exit
  return *r;
}

// A PTX image: NUL-terminated text with .version and .target (a cubin starts with ELF's magic,
// a fatbin with 0xBA55ED50).
bool is_ptx(const void* image, std::string_view& text) {
  if (image == nullptr) return false;
  const auto* b = static_cast<const unsigned char*>(image);
  if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') return false;
  if (b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) return false;
  text = std::string_view(static_cast<const char*>(image));
  return text.find(".version") != std::string_view::npos && text.find(".target") != std::string_view::npos;
}

std::string first_problem(const Diagnostics& diags) {
  for (const auto& d : diags)
    if (d.severity == Severity::error) return format(d);
  return diags.empty() ? "no reason given" : format(diags.front());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A loaded module with a __tmakit_module_id: its site table from a link of this process, or
// from the ptxas wrapper's folder ($TMAKIT_CHECK_DIR/modules/<id>.sites.json, .ptx).
void find_by_module_id(void* handle, ModuleKind kind) {
  const check::DriverCalls& d = check_driver();
  CUdeviceptr at = 0;
  size_t bytes = 0;
  const char* symbol = check::kModuleIdSymbol.data();
  const int r = kind == ModuleKind::module
                    ? d.module_get_global(&at, &bytes, static_cast<CUmodule>(handle), symbol)
                    : d.library_get_global(&at, &bytes, static_cast<CUlibrary>(handle), symbol);
  uint64_t id = 0;
  if (r != 0 || bytes != 8 || d.memcpy_dtoh(&id, at, 8) != 0) return;  // not instrumented
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  std::shared_ptr<CheckModule> m;
  if (auto it = reg.by_id.find(id); it != reg.by_id.end()) {
    m = std::make_shared<CheckModule>(*it->second);
  } else {
    const std::string base = fmt::format("{}/modules/{:016x}", std::getenv(kEnvCheckDir), id);
    m = std::make_shared<CheckModule>();
    m->sites_json = read_text(base + ".sites.json");
    m->ptx = read_text(base + ".ptx");
    m->origin = "ptxas wrapper";
    if (m->sites_json.empty()) {
      check_say(fmt::format("a module with {} {:016x} was loaded, but {}.sites.json is missing; its launches are "
                            "not checked", check::kModuleIdSymbol, id, base));
      return;
    }
  }
  m->kind = kind;
  m->handle = handle;
  reg.modules[handle] = m;
}

// The GPU's compute capability (major * 10 + minor) from the current context; 0 when unknown.
uint32_t current_cc() {
  using CtxGetDevice = int (*)(int*);
  using DeviceGetAttribute = int (*)(int*, int, int);
  auto get_device = reinterpret_cast<CtxGetDevice>(check_driver_proc("cuCtxGetDevice"));
  auto get_attribute = reinterpret_cast<DeviceGetAttribute>(check_driver_proc("cuDeviceGetAttribute"));
  int dev = 0, major = 0, minor = 0;
  if (get_device == nullptr || get_attribute == nullptr || get_device(&dev) != 0) return 0;
  if (get_attribute(&major, 75, dev) != 0 || get_attribute(&minor, 76, dev) != 0) return 0;  // COMPUTE_CAPABILITY_*
  return static_cast<uint32_t>(major * 10 + minor);
}

// The executable itself (dladdr names it by its path, or by "" for the main program on some libcs).
bool is_main_program(const char* path) {
  if (path[0] == '\0') return true;
  std::error_code ec;
  static const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return std::filesystem::equivalent(path, self, ec);
}

// The PTX of a fatbin the runtime (or the program) loads, for this GPU; nullopt, said once per
// reason, when it holds none tmakit can read: the fatbin is then loaded as it is, unchecked.
std::optional<std::string> fatbin_ptx(const void* image) {
  const Fatbin f = read_fatbin(image);
  const uint32_t cc = current_cc();
  if (const FatbinEntry* e = pick_ptx(f, cc)) return e->ptx;
  std::string why = f.problem;
  std::set<uint32_t> cubins;
  for (const FatbinEntry& e : f.entries) {
    if (e.kind == 2) cubins.insert(e.arch);
    if (e.kind == 1 && !e.problem.empty()) why = e.problem;
  }
  if (why.empty() && cubins.empty()) return std::nullopt;  // an empty container: nothing to check
  if (why.empty()) {
    std::string archs;
    for (uint32_t a : cubins) archs += (archs.empty() ? "sm_" : ", sm_") + std::to_string(a);
    why = fmt::format("it holds cubins ({}) and no PTX for this GPU; build with "
                      "-gencode arch=compute_{}a,code=[sm_{}a,compute_{}a] to have them checked",
                      archs, cc ? cc : 90, cc ? cc : 90, cc ? cc : 90);
  }
  // Said once for the program's own fatbins, and once in all for those of its libraries (a
  // PyTorch process loads dozens from libtorch_cuda.so and friends: naming each is noise).
  Dl_info where{};
  const bool own = dladdr(image, &where) == 0 || where.dli_fname == nullptr || is_main_program(where.dli_fname);
  if (own) check_say_once("kernels of a fatbin are loaded as they are, not checked: " + why);
  else
    check_say_once(fmt::format("kernels of libraries' fatbins without PTX for this GPU are loaded as they are, not "
                               "checked (the first: {})",
                               std::filesystem::path(where.dli_fname).filename().string()));
  return std::nullopt;
}

// Only a module that uses the bulk-copy engine is worth instrumenting from a fatbin (the
// runtime loads every fatbin of the program and its libraries).
bool uses_bulk_copies(std::string_view ptx) {
  return ptx.find("cp.async.bulk") != std::string_view::npos || ptx.find("mbarrier") != std::string_view::npos ||
         ptx.find("cp.reduce.async.bulk") != std::string_view::npos || ptx.find("tensormap") != std::string_view::npos;
}

// The text `tmakit check --ptx-filter` makes of a module about to be instrumented (docs/check.md,
// "Mutation testing"): null when no filter is set, or when the module stays as it was (the
// filter left it unchanged, or failed: said once, with why).
std::shared_ptr<const std::string> filtered_text(std::string_view text, const std::string& name) {
  static const std::optional<check::PtxFilter> filter = check::ptx_filter_from_environment();
  if (!filter) return nullptr;
  static std::mutex* running = new std::mutex;  // one filter at a time; each module text once
  std::lock_guard<std::mutex> one(*running);
  Registry& reg = registry();
  const uint64_t key = check::module_id_of(text);
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (auto it = reg.filtered.find(key); it != reg.filtered.end()) return it->second;
  }
  check::FilterOutcome out = check::run_ptx_filter(*filter, text, instrument::kMaxModuleBytes);
  std::shared_ptr<const std::string> kept;
  if (!out.ptx) {
    check_say(fmt::format("{}: the PTX filter `{}` failed: {}; the module is used as it was [check.ptx-filter]", name,
                          filter->command, out.why));
  } else if (*out.ptx != text) {
    check_say(fmt::format("{}: the PTX filter `{}` changed it ({} lines, {} before); its text stands in the "
                          "module's place", name, filter->command, std::count(out.ptx->begin(), out.ptx->end(), '\n'),
                          std::count(text.begin(), text.end(), '\n')));
    kept = std::make_shared<const std::string>(std::move(*out.ptx));
  }
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.filtered.emplace(key, kept);
  return kept;
}

}  // namespace

bool check_active() {
  static const bool active = [] {
    const char* d = std::getenv(kEnvCheckDir);
    return d != nullptr && *d != '\0';
  }();
  return active;
}

void* check_driver_proc(const char* symbol) {
  auto gpa = reinterpret_cast<abi::GetProcAddressV2>(real(Slot::get_proc_address_v2));
  void* fn = nullptr;
  int status = 0;
  if (gpa == nullptr || gpa(symbol, &fn, 12000, 0, &status) != abi::kSuccess) return nullptr;
  return fn;
}

const check::DriverCalls& check_driver() {
  static const check::DriverCalls calls = check::driver_calls_from([](const char* s, void** p, int, uint64_t, int*) {
    *p = check_driver_proc(s);
    return *p != nullptr ? 0 : static_cast<int>(abi::kNotFound);
  });
  return calls;
}

void check_say(std::string_view text) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    out += line.starts_with("tmakit check: ") ? fmt::format("{}\n", line) : fmt::format("tmakit check: {}\n", line);
    start = end + 1;
  }
  out = terminal_lines(out);  // kernel names, paths and sites come from the program
  [[maybe_unused]] ssize_t n = ::write(2, out.data(), out.size());
}

void check_say_once(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(text).second) check_say(text);
}

int check_module_load(void** handle, const void* image, ModuleKind kind, const std::function<int(const void*)>& load) {
  std::string_view text;
  std::optional<std::string> from_fatbin;  // an nvcc fatbin's PTX, instrumented in its place
  if (is_fatbin(image)) {
    from_fatbin = fatbin_ptx(image);
    if (from_fatbin && uses_bulk_copies(*from_fatbin)) text = *from_fatbin;
    else from_fatbin.reset();
  }
  if (!from_fatbin && !is_ptx(image, text)) {
    const int r = load(image);
    if (r == abi::kSuccess && handle != nullptr) find_by_module_id(*handle, kind);
    return r;
  }
  // Instrumented at build time (cmake/TmakitInstrument.cmake): its site table is its last line.
  if (const size_t at = text.rfind(kEmbeddedSites); at != std::string_view::npos &&
                                                   text.find(instrument::kTraceSymbol) != std::string_view::npos) {
    const int r = load(image);
    if (r == abi::kSuccess) {
      auto m = std::make_shared<CheckModule>();
      m->kind = kind;
      m->handle = *handle;
      m->ptx = text;
      const std::string_view rest = text.substr(at + kEmbeddedSites.size());
      m->sites_json = rest.substr(0, rest.find('\n'));
      m->origin = "tmakit_instrument_ptx";
      Registry& reg = registry();
      std::lock_guard<std::mutex> lock(reg.mutex);
      reg.modules[*handle] = std::move(m);
    }
    return r;
  }
  const std::string name = fmt::format("{}-{}.ptx", from_fatbin ? "fatbin" : "module", registry().modules_seen++);
  // The PTX filter's text stands for the module from here on: instrumented, or loaded as it is.
  const std::shared_ptr<const std::string> filtered = filtered_text(text, name);
  if (filtered) text = *filtered;
  auto load_uninstrumented = [&] {
    if (!filtered) return load(image);
    const int r = load(filtered->c_str());
    if (r == abi::kSuccess) return r;
    check_say(fmt::format("the driver refused the PTX filter's text of {} ({}); loading the original [check.ptx-filter]",
                          name, check::result_name(check_driver(), r)));
    return load(image);
  };
  instrument::Result res;
  try {
    res = instrument::instrument_module(text, name, instrument::OpSet::all, check_wants_plain_copy());
  } catch (const std::exception& e) {
    res.status = 2;
    res.diags.error("check.instrument", e.what());
  }
  if (res.status != 0) {
    // Said once per distinct module text (a program may load the same module many times).
    static std::mutex said_mutex;
    static std::set<uint64_t> said;
    std::lock_guard<std::mutex> lock(said_mutex);
    if (said.insert(check::module_id_of(text)).second)
      check_say(fmt::format("{} (a PTX image of {} lines) is loaded as it is, not instrumented: {}", name,
                            std::count(text.begin(), text.end(), '\n'), first_problem(res.diags)));
    return load_uninstrumented();
  }
  if (res.sites.empty()) return load_uninstrumented();  // nothing to trace: the module, untouched
  // The text stays alive with its module: a library may keep reading it (CU_LIBRARY_BINARY_IS_PRESERVED).
  auto kept = std::make_shared<CheckModule>();
  kept->ptx = std::move(res.text);
  const int r = load(kept->ptx.c_str());
  if (r == abi::kSuccess) {
    kept->kind = kind;
    kept->handle = *handle;
    kept->sites_json = instrument::sites_json(res.sites);
    kept->origin = from_fatbin ? "fatbin PTX" : "PTX image";
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.modules[*handle] = std::move(kept);
    return r;
  }
  check_say(fmt::format("the driver refused the instrumented {} ({}); loading {}", name,
                        check::result_name(check_driver(), r), filtered ? "the PTX filter's text" : "the original"));
  return load_uninstrumented();
}

int check_link_add(void* state, void* data, size_t size, const std::function<int(void*, size_t)>& add) {
  std::string_view text;
  if (!is_ptx(data, text)) return add(data, size);
  Registry& reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (reg.links_instrumented.count(state) != 0) {
      check_say_once("a link with more than one PTX input: only the first is instrumented (docs/check.md)");
      return add(data, size);
    }
  }
  const std::shared_ptr<const std::string> filtered = filtered_text(text, "cuLinkAddData.ptx");
  if (filtered) text = *filtered;
  auto add_uninstrumented = [&] {
    if (!filtered) return add(data, size);
    const int r = add(const_cast<char*>(filtered->c_str()), filtered->size() + 1);
    if (r == abi::kSuccess) return r;
    check_say(fmt::format("the driver refused the PTX filter's text of a cuLinkAddData input ({}); linking the "
                          "original [check.ptx-filter]", check::result_name(check_driver(), r)));
    return add(data, size);
  };
  instrument::Result res =
      instrument::instrument_module(text, "cuLinkAddData.ptx", instrument::OpSet::all, check_wants_plain_copy());
  uint64_t id = 0;
  std::optional<std::string> with_id;
  if (res.status == 0 && !res.sites.empty()) with_id = check::add_module_id(res.text, &id);
  if (!with_id) {
    if (res.status != 0)
      check_say(fmt::format("a PTX input of cuLinkAddData is linked as it is, not instrumented: {}",
                            first_problem(res.diags)));
    return add_uninstrumented();
  }
  std::string* kept;
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    kept = &reg.link_texts.emplace_back(std::move(*with_id));
  }
  const int r = add(kept->data(), kept->size() + 1);
  if (r != abi::kSuccess) {
    check_say(fmt::format("the driver refused the instrumented link input ({}); linking {}",
                          check::result_name(check_driver(), r), filtered ? "the PTX filter's text" : "the original"));
    return add_uninstrumented();
  }
  auto m = std::make_shared<CheckModule>();
  m->sites_json = instrument::sites_json(res.sites);
  m->ptx = *kept;
  m->origin = "cuLinkAddData";
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.links_instrumented.insert(state);
  reg.by_id[id] = std::move(m);
  return r;
}

void check_function_found(void* function, void* module, const char* name) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.modules.find(module);
  if (it != reg.modules.end()) reg.functions[function] = CheckFunction{it->second, name ? name : ""};
}

void check_same_function(void* function, void* kernel) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.functions.find(kernel);
  if (it != reg.functions.end()) reg.functions[function] = it->second;
}

std::optional<CheckFunction> find_check_function(void* function) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.functions.find(function);
  if (it == reg.functions.end()) return std::nullopt;
  return it->second;
}

}  // namespace tmakit::watch
