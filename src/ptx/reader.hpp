// Internal to the PTX layer: the module reader with a second callback that receives the
// byte span of every piece it recognises, so parse_module (module_text.cpp) can keep the
// module whole and verbatim while read_module streams it.
#pragma once
#include <functional>

#include "tmakit/ptx/module.hpp"

namespace tmakit::ptx::detail {

// [begin, end) of the source; `statement` is set for instructions and labels.
using SpanHandler = std::function<void(Piece::Kind, size_t begin, size_t end, const Statement* statement)>;

Module read_module(std::string_view text, const std::string& file, Diagnostics& diags,
                   const StatementHandler& on_statement, const SpanHandler& on_span);

}  // namespace tmakit::ptx::detail
