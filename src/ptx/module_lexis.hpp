// Internal to the PTX layer: what the module reader shares with the declaration reader
// (module_symbols.cpp): character classes, and the declarations it records.
#pragma once
#include <cctype>
#include <string_view>
#include <vector>

#include "tmakit/ptx/module.hpp"

namespace tmakit::ptx::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
inline bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }
inline bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_identifier(std::string_view s);
// Words of a declaration: split at spaces and commas.
std::vector<std::string_view> words(std::string_view s);
bool is_space_name(std::string_view w);  // .reg .shared .global ...

// `.reg .b32 %r<10>;`, `.shared .align 8 .b8 smem[1024];`, `.param .u64 p` (a parameter).
void declare(std::string_view decl, SymbolTable& table, int line);
// The parameter list starting at `open` (a `(`): declares each parameter, returns the index after `)`.
size_t declare_params(std::string_view h, size_t open, SymbolTable& table, int line);

}  // namespace tmakit::ptx::detail
