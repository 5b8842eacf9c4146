// `tmakit check`'s state in one process (docs/check.md): the modules it instrumented or found
// instrumented, the functions of those modules, the trace buffer, and what each launch of an
// instrumented kernel gave. Active only when `tmakit check` set TMAKIT_CHECK_DIR; every entry
// point below is called by check_hooks.cpp only then.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <string_view>
#include <functional>

namespace tmakit::watch {

// The environment `tmakit check` sets for the library (docs/check.md, "Environment"):
inline constexpr const char* kEnvCheckDir = "TMAKIT_CHECK_DIR";          // the run's folder: activates check
inline constexpr const char* kEnvCheckTimeout = "TMAKIT_CHECK_TIMEOUT";  // seconds a launch may take
inline constexpr const char* kEnvCheckSave = "TMAKIT_CHECK_SAVE";        // --save-trace folder
inline constexpr const char* kEnvCheckCli = "TMAKIT_CHECK_CLI";          // the tmakit binary (replay)
inline constexpr const char* kEnvCheckParent = "TMAKIT_CHECK_PARENT_PID";  // told of a hang
inline constexpr const char* kEnvCheckCapacity = "TMAKIT_CHECK_CAPACITY";  // records in the buffer
inline constexpr const char* kEnvCheckRecords = "TMAKIT_CHECK_RECORDS";  // --records: auto | device | host
// Records in the trace buffer when --capacity is not given: 4 Mi in device memory (512 MiB;
// a whole CUTLASS 4096³ GEMM needs 3.5 Mi), 256 Ki in host-mapped memory (32 MiB pinned).
inline constexpr size_t kDefaultDeviceCapacity = size_t{1} << 22, kDefaultHostCapacity = size_t{1} << 18;
inline constexpr const char* kEnvCheckCtas = "TMAKIT_CHECK_CTAS";  // --ctas: "FIRST-END", clusters [FIRST, END)
inline constexpr const char* kEnvCheckLaunches = "TMAKIT_CHECK_LAUNCHES";  // checked launches per kernel (0: all)
inline constexpr const char* kEnvCheckPlainCopy = "TMAKIT_CHECK_PLAIN_COPY";  // --plain-copy: auto, on, off
// Whether modules carry their functions' plain copies: --plain-copy on, or auto (the default)
// where some calls record nothing (--launches N, --ctas).
inline bool check_wants_plain_copy() {
  const char* choice = std::getenv(kEnvCheckPlainCopy);
  if (choice && std::string_view(choice) == "on") return true;
  if (choice && std::string_view(choice) == "off") return false;
  const char* launches = std::getenv(kEnvCheckLaunches);
  const char* ctas = std::getenv(kEnvCheckCtas);
  return (launches && std::strtoull(launches, nullptr, 10) != 0) || (ctas && *ctas);
}
inline constexpr const char* kEnvCheckNoReplay = "TMAKIT_CHECK_NO_REPLAY";  // --no-replay: "1" saves traces unreplayed

bool check_active();

enum class ModuleKind { module, library };  // a CUmodule or a CUlibrary

// A module or library load: a PTX image is instrumented and the result handed to `load`
// (the original when instrumenting is refused or the driver refuses the result); any image
// whose module declares __tmakit_module_id is looked up in the ptxas wrapper's site tables.
int check_module_load(void** handle, const void* image, ModuleKind kind, const std::function<int(const void*)>& load);
// cuLinkAddData of a PTX input: instrumented (with a module id), then handed to `add`.
int check_link_add(void* state, void* data, size_t size, const std::function<int(void*, size_t)>& add);
// A function (or CUkernel) found in a module (or library) by name.
void check_function_found(void* function, void* module, const char* name);
// cuKernelGetFunction: `function` is the same kernel as `kernel`.
void check_same_function(void* function, void* kernel);

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
  unsigned dynamic_smem = 0;
  void* stream = nullptr;
};
// A launch: of an instrumented kernel, traced, waited for (up to the timeout) and replayed;
// any other launch is `launch()` alone. Returns what the driver's launch returned.
int check_launch(void* function, const LaunchShape& shape, const std::function<int()>& launch);

}  // namespace tmakit::watch
