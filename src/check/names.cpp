// Readable kernel names (include/tmakit/check/names.hpp).
#include "tmakit/check/names.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace tmakit::check {
namespace {

std::string demangle(std::string_view name) {
  if (name.rfind("_Z", 0) != 0) return std::string(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// One round of shortening: every innermost `<...>` not yet collapsed becomes `<…>` (a collapsed
// `<…>` counts as plain text). False when nothing is left to collapse.
bool collapse_innermost(std::string& s) {
  static const std::string kDone = "<…>", kMark = "\x01";
  for (size_t at; (at = s.find(kDone)) != std::string::npos;) s.replace(at, kDone.size(), kMark);
  std::string out;
  bool changed = false;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '<') {
      const size_t close = s.find_first_of("<>", i + 1);
      if (close != std::string::npos && s[close] == '>') {  // no bracket inside: innermost
        out += kDone;
        changed = true;
        i = close + 1;
        continue;
      }
    }
    out += s[i++];
  }
  for (size_t at; (at = out.find(kMark)) != std::string::npos;) out.replace(at, kMark.size(), kDone);
  s = out;
  return changed;
}

}  // namespace

std::string readable_kernel_name(std::string_view name, size_t max) {
  std::string s = demangle(name);
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);  // kernels return void: the word says nothing
  if (s.size() <= max) return s;
  // The parameter list first: the kernel is named by its function and template.
  const size_t paren = s.find('(');
  if (paren != std::string::npos && s.back() == ')') s = s.substr(0, paren) + "(…)";
  while (s.size() > max && collapse_innermost(s)) {
  }
  return s;
}

std::string readable_function_name(std::string_view name, size_t max) {
  std::string s = demangle(name);
  for (size_t at; (at = s.find("_INTERNAL_")) != std::string::npos;) {
    const size_t end = s.find("::", at);
    if (end == std::string::npos) break;
    s.erase(at, end + 2 - at);
  }
  for (size_t at = 0; (at = s.find("::__", at)) != std::string::npos;) {
    size_t k = at + 4;
    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
    if (k > at + 4 && s.compare(k, 2, "::") == 0) s.erase(at, k - at);  // "::__4::" → "::"
    else at += 4;
  }
  return readable_kernel_name(s, max);
}

}  // namespace tmakit::check
