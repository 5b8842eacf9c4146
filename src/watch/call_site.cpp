// The call site of a watched call (call_site.hpp).
#include "call_site.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <unordered_map>

#include "real_driver.hpp"

namespace tmakit::watch {
namespace {

using nlohmann::json;

// The few CPython calls needed, found in the process at run time (stable ABI, 3.9+),
// so that the library neither links nor needs Python.
struct PythonApi {
  int (*is_initialized)();
  int (*gil_check)();
  void* (*get_frame)();           // PyEval_GetFrame: borrowed
  void* (*frame_code)(void*);     // PyFrame_GetCode: new reference
  void* (*frame_back)(void*);     // PyFrame_GetBack: new reference
  int (*frame_line)(void*);       // PyFrame_GetLineNumber
  void* (*getattr)(void*, const char*);
  const char* (*utf8)(void*);
  void (*decref)(void*);
  void (*err_fetch)(void**, void**, void**);
  void (*err_restore)(void*, void*, void*);

  const char* missing = nullptr;  // the first symbol not found, when Python is there at all

  bool find() {
    DlsymFn f = real_dlsym();
    if (f == nullptr) return false;
    auto get = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(f(RTLD_DEFAULT, name));
      if (slot == nullptr && missing == nullptr) missing = name;
      return slot != nullptr;
    };
    return get(is_initialized, "Py_IsInitialized") && get(gil_check, "PyGILState_Check") &&
           get(get_frame, "PyEval_GetFrame") && get(frame_code, "PyFrame_GetCode") &&
           get(frame_back, "PyFrame_GetBack") && get(frame_line, "PyFrame_GetLineNumber") &&
           get(getattr, "PyObject_GetAttrString") && get(utf8, "PyUnicode_AsUTF8") && get(decref, "Py_DecRef") &&
           get(err_fetch, "PyErr_Fetch") && get(err_restore, "PyErr_Restore");
  }

  std::string text(void* obj, const char* attr) {
    void* v = getattr(obj, attr);
    if (v == nullptr) return "?";
    const char* s = utf8(v);
    std::string out = s ? s : "?";
    decref(v);
    return out;
  }
};

// Innermost Python frames of this thread, only while it holds the GIL (then the
// calls below are safe); a pending Python exception is kept as it was.
// Found once per process: a lookup in every loaded library (hundreds in a PyTorch
// process) costs more than the rest of a call; Python is loaded before it runs code.
const PythonApi& python_api() {
  static const PythonApi api = [] {
    PythonApi py{};
    py.find();
    return py;
  }();
  return api;
}

// The frames, or a string that says why there are none although Python is loaded
// (null when it is not).
json python_frames() {
  json frames = json::array();
  PythonApi py = python_api();
  if (py.is_initialized == nullptr) return nullptr;  // not a Python process
  if (py.missing != nullptr) return std::string("this Python lacks ") + py.missing;
  if (!py.is_initialized()) return "Python is not initialised";
  if (py.gil_check() != 1) return "the calling thread does not hold the GIL (its caller released it)";
  void *type = nullptr, *value = nullptr, *trace = nullptr;
  py.err_fetch(&type, &value, &trace);
  void* frame = py.get_frame();
  bool owned = false;  // PyEval_GetFrame is borrowed, PyFrame_GetBack new
  for (int depth = 0; frame != nullptr && depth < 8; ++depth) {
    void* code = py.frame_code(frame);
    if (code != nullptr) {
      frames.push_back({{"file", py.text(code, "co_filename")},
                        {"line", py.frame_line(frame)},
                        {"function", py.text(code, "co_name")}});
      py.decref(code);
    }
    void* back = py.frame_back(frame);
    if (owned) py.decref(frame);
    frame = back;
    owned = true;
  }
  if (owned && frame != nullptr) py.decref(frame);
  py.err_restore(type, value, trace);
  return frames;
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = ::abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : name;
  std::free(d);
  return out;
}

std::string basename_of(const char* path) {
  std::string p = path ? path : "?";
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// One frame's description; dladdr scans a library's symbols (slow in a library as
// large as libtorch_cuda), so each return address is described once (the caller
// holds the session's lock).
const json& describe_frame(void* pc) {
  static std::unordered_map<void*, json> seen;
  auto it = seen.find(pc);
  if (it != seen.end()) return it->second;
  if (seen.size() >= 65536) seen.clear();  // bounded
  Dl_info info{};
  json f = nullptr;
  if (dladdr(pc, &info)) {
    f = json{{"module", basename_of(info.dli_fname)},
             {"module_offset", fmt::format("{:#x}", static_cast<char*>(pc) - static_cast<char*>(info.dli_fbase))}};
    if (info.dli_sname != nullptr) {
      f["symbol"] = demangle(info.dli_sname);
      f["offset"] = fmt::format("{:#x}", static_cast<char*>(pc) - static_cast<char*>(info.dli_saddr));
    } else {
      f["offset"] = f["module_offset"];
    }
    f["own"] = info.dli_fbase == own_base();
  }
  return seen.emplace(pc, std::move(f)).first->second;
}

// The native frames outside this library, as JSON text, kept per distinct stack.
const std::string& native_frames() {
  static std::unordered_map<std::string, std::string> seen;
  // The library's own frames (6) and the caller's first 6: unwinding more of a deep
  // Python stack costs more than the rest of the record.
  void* pcs[12];
  int n = backtrace(pcs, 12);
  std::string key(reinterpret_cast<const char*>(pcs), sizeof(void*) * static_cast<size_t>(n));
  auto it = seen.find(key);
  if (it != seen.end()) return it->second;
  if (seen.size() >= 4096) seen.clear();  // bounded
  json frames = json::array();
  for (int i = 0; i < n && frames.size() < 8; ++i) {
    // A return address points after the call: describe the byte before it.
    const json& f = describe_frame(static_cast<char*>(pcs[i]) - 1);
    if (f.is_null() || f["own"].get<bool>()) continue;
    json copy = f;
    copy.erase("own");
    frames.push_back(std::move(copy));
  }
  return seen.emplace(std::move(key), frames.dump(-1, ' ', false, json::error_handler_t::replace)).first->second;
}

}  // namespace

std::string current_call_site() {
  std::string site = "{";
  json py = python_frames();
  if (py.is_array() && !py.empty()) site += R"("python":)" + py.dump(-1, ' ', false, json::error_handler_t::replace) + ",";
  if (py.is_string()) site += R"("python_unavailable":)" + py.dump() + ",";
  return site + R"("native":)" + native_frames() + "}";
}

}  // namespace tmakit::watch
