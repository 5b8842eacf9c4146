// Declarations of a PTX module (`.reg`, `.shared`, `.param`, ...) and their value types: the
// symbol table the module reader (module.cpp) fills and the linter reads.
#include <algorithm>
#include <charconv>

#include "module_lexis.hpp"

namespace tmakit::ptx {
namespace detail {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!ident_char(c)) return false;
  return true;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (is_space(s[i]) || s[i] == ',')) ++i;
    size_t start = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != ',') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_space_name(std::string_view w) {
  for (std::string_view s : {".reg", ".param", ".shared", ".global", ".const", ".local", ".tex"})
    if (w == s) return true;
  return false;
}

void declare(std::string_view decl, SymbolTable& table, int line) {
  if (auto eq = decl.find('='); eq != std::string_view::npos) decl = decl.substr(0, eq);  // drop initializers
  if (!decl.empty() && decl.back() == ';') decl.remove_suffix(1);
  Symbol sym;
  sym.line = line;
  bool typed = false, skip_next = false;
  for (std::string_view w : words(decl)) {
    if (skip_next) {
      skip_next = false;
      continue;
    }
    if (w[0] == '.') {
      if (is_space_name(w) && sym.space.empty()) sym.space = std::string(w);
      else if (w == ".align") skip_next = true;
      else if (auto t = parse_value_type(w); t && !typed) sym.type = *t, typed = true;
      continue;
    }
    if (!typed || sym.space.empty()) continue;
    std::string_view name = w;
    if (auto lt = name.find('<'); lt != std::string_view::npos) {
      int count = 0;
      const size_t gt = std::min(name.find('>', lt), name.size());
      auto r = std::from_chars(name.data() + lt + 1, name.data() + gt, count);
      if (r.ec == std::errc{}) table.declare_range(std::string(name.substr(0, lt)), count, sym);
      continue;
    }
    if (auto br = name.find('['); br != std::string_view::npos) name = name.substr(0, br);
    if (is_identifier(name)) table.declare(std::string(name), sym);
  }
}

size_t declare_params(std::string_view h, size_t open, SymbolTable& table, int line) {
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open; i < h.size(); ++i) {
    if (h[i] == '(') ++depth;
    if (h[i] == ')' && --depth == 0) {
      declare(h.substr(start, i - start), table, line);
      return i + 1;
    }
    if (h[i] == ',' && depth == 1) {
      declare(h.substr(start, i - start), table, line);
      start = i + 1;
    }
  }
  return h.size();
}

}  // namespace detail

using detail::is_space;

std::string ValueType::str() const {
  if (kind == 'p') return ".pred";
  return "." + std::string(1, kind) + std::to_string(bits);
}

std::optional<ValueType> parse_value_type(std::string_view t) {
  if (t == ".pred") return ValueType{'p', 1};
  if (t == ".f16x2" || t == ".bf16x2") return ValueType{'f', 32};
  if (t == ".bf16") return ValueType{'f', 16};
  if (t.size() < 3 || t[0] != '.' || std::string_view("busf").find(t[1]) == std::string_view::npos) return std::nullopt;
  int bits = 0;
  auto r = std::from_chars(t.data() + 2, t.data() + t.size(), bits);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 128) return std::nullopt;
  return ValueType{t[1], bits};
}

const Symbol* SymbolTable::find(std::string_view name) const {
  if (auto it = names_.find(std::string(name)); it != names_.end()) return &it->second;
  // %r12 belongs to %r<N> when 12 < N (PTX ISA "parameterized variable names").
  size_t d = name.size();
  while (d > 0 && std::isdigit(static_cast<unsigned char>(name[d - 1]))) --d;
  if (d == name.size() || d == 0) return nullptr;
  auto it = ranges_.find(std::string(name.substr(0, d)));
  if (it == ranges_.end()) return nullptr;
  int n = 0;
  auto r = std::from_chars(name.data() + d, name.data() + name.size(), n);
  if (r.ec != std::errc{} || (name.size() - d > 1 && name[d] == '0')) return nullptr;
  return n < it->second.first ? &it->second.second : nullptr;
}

std::pair<int, int> Statement::position(size_t offset) const {
  offset = std::min(offset, text.size());
  int line_no = line;
  size_t last_nl = std::string::npos;
  for (size_t k = 0; k < offset; ++k)
    if (text[k] == '\n') ++line_no, last_nl = k;
  if (last_nl == std::string::npos) return {line, column + static_cast<int>(offset)};
  return {line_no, static_cast<int>(offset - last_nl)};
}

std::string_view Statement::mnemonic() const {
  std::string_view s = text;
  size_t k = 0;
  if (!s.empty() && s[0] == '@') {
    while (k < s.size() && !is_space(s[k])) ++k;
    while (k < s.size() && is_space(s[k])) ++k;
  }
  size_t start = k;
  while (k < s.size() && !is_space(s[k]) && s[k] != ';') ++k;
  return s.substr(start, k - start);
}

}  // namespace tmakit::ptx
