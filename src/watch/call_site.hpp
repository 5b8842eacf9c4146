// Where a watched call came from: the innermost native frames outside this
// library (module, symbol, offset: `addr2line -e MODULE OFFSET` finds the line),
// and, when the calling thread holds Python's GIL, the innermost Python frames.
#pragma once
#include <nlohmann/json.hpp>

namespace tmakit::watch {

// {"python": [{"file", "line", "function"}...], "native": [{"module", "symbol", "offset"}...]},
// as JSON text (the native part is described once per distinct stack).
std::string current_call_site();

}  // namespace tmakit::watch
