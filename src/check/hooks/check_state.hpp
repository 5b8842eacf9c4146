// What check_session.cpp (loading) and check_launch.cpp (launching) share: the instrumented
// modules, their functions, the driver calls, and one way of speaking to the user.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "check_session.hpp"
#include "tmakit/check/capture.hpp"

namespace tmakit::watch {

// A module (or library) whose code writes a trace: its site table and instrumented PTX.
struct CheckModule {
  ModuleKind kind = ModuleKind::module;
  void* handle = nullptr;
  std::string sites_json;
  std::string ptx;
  std::string origin;  // "PTX image", "cuLinkAddData", "ptxas wrapper"
};

struct CheckFunction {
  std::shared_ptr<CheckModule> module;
  std::string name;
};

// The function's module when it is instrumented; nullopt otherwise.
std::optional<CheckFunction> find_check_function(void* function);

// The driver's functions the capture uses, from the real cuGetProcAddress.
const check::DriverCalls& check_driver();
// Asks the real cuGetProcAddress for `symbol` (CUDA 12.0 ABI); nullptr when absent.
void* check_driver_proc(const char* symbol);

// One message to stderr, each line prefixed "tmakit check: ".
void check_say(std::string_view text);
// The same message once per process (key: the message).
void check_say_once(const std::string& text);

}  // namespace tmakit::watch
