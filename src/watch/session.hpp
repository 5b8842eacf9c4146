// The watch library's state in one process: options from the environment that
// `tmakit watch` sets, the counters of the exit summary, the log, and the maps of
// the descriptors encoded so far (for cuTensorMapReplaceAddress). Created on the
// first tensor-map call; every member is used under one mutex, which only
// tensor-map calls take (pass-through paths never touch the session).
#pragma once
#include <cstdint>
#include <functional>

#include "tmakit/watch/call.hpp"

namespace tmakit::watch {

// Environment of the preloaded library (docs/watch.md):
inline constexpr const char* kEnvLog = "TMAKIT_WATCH_LOG";          // JSON Lines log (appended)
inline constexpr const char* kEnvStrict = "TMAKIT_WATCH_STRICT";    // "1": refuse what tmakit flags
inline constexpr const char* kEnvQuiet = "TMAKIT_WATCH_QUIET";      // "1": only refusals and disagreements
inline constexpr const char* kEnvTarget = "TMAKIT_WATCH_TARGET";    // validator target, default sm_90a
inline constexpr const char* kEnvRootPid = "TMAKIT_WATCH_ROOT_PID"; // the watched command's pid

// An encode call: `call_driver` runs the real driver function once; the result
// the program gets back is returned (the driver's, or CUDA_ERROR_INVALID_VALUE
// under --strict). Never throws: on any internal failure the driver's result stands.
int observe_encode(Via via, const EncodeArgs& args, const std::function<int()>& call_driver);
// cuTensorMapReplaceAddress, likewise.
int observe_replace(Via via, void* tensor_map, void* global_address, const std::function<int()>& call_driver);

}  // namespace tmakit::watch
