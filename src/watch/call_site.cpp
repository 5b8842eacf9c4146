// The call site of a watched call (call_site.hpp).
#include "call_site.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

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

  bool find() {
    DlsymFn f = real_dlsym();
    if (f == nullptr) return false;
    auto get = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(f(RTLD_DEFAULT, name));
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
json python_frames() {
  json frames = json::array();
  PythonApi py{};
  if (!py.find() || !py.is_initialized() || py.gil_check() != 1) return frames;
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

json native_frames() {
  json frames = json::array();
  void* pcs[32];
  int n = backtrace(pcs, 32);
  Dl_info own{};
  dladdr(reinterpret_cast<void*>(&native_frames), &own);
  for (int i = 0; i < n && frames.size() < 8; ++i) {
    Dl_info info{};
    // A return address points after the call: look up the byte before it.
    void* pc = static_cast<char*>(pcs[i]) - 1;
    if (!dladdr(pc, &info) || info.dli_fbase == own.dli_fbase) continue;
    json f{{"module", basename_of(info.dli_fname)},
           {"module_offset", fmt::format("{:#x}", static_cast<char*>(pc) - static_cast<char*>(info.dli_fbase))}};
    if (info.dli_sname != nullptr) {
      f["symbol"] = demangle(info.dli_sname);
      f["offset"] = fmt::format("{:#x}", static_cast<char*>(pc) - static_cast<char*>(info.dli_saddr));
    } else {
      f["offset"] = f["module_offset"];
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

}  // namespace

json current_call_site() {
  json site = json::object();
  json py = python_frames();
  if (!py.empty()) site["python"] = std::move(py);
  site["native"] = native_frames();
  return site;
}

}  // namespace tmakit::watch
