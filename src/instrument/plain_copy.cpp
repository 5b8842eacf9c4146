// The plain copy of a function with sites (docs/check.md, "How the module is changed"): its
// body as compiled, once more after the sites' path, which a call that records nothing runs.
// rewrite.cpp places it and the prologue's branch to it (lane.cpp).
#include <cctype>
#include <set>
#include <sstream>
#include <string>

#include "site.hpp"

namespace tmakit::instrument::detail {

// A function's own declarations (state spaces and registers): one per function, so its plain
// copy leaves them out and names the same ones.
bool is_declaration(std::string_view word) {
  static const std::set<std::string_view> kSpaces = {".reg", ".local", ".shared", ".param", ".const", ".global",
                                                     ".tex", ".texref", ".surfref", ".samplerref"};
  return kSpaces.count(word) != 0;
}

// The function's body as written, [open, close) of `text`, once more: its declarations left
// out, each of its labels renamed (`name` + "_" + prefix + "_plain": labels in nested scopes
// too, harmless), each line marked as inserted (a `// prefix` comment at its end; blank lines
// dropped), so that the original comes back by dropping the lines that name the prefix. A call
// that records nothing (no records address, or a cluster `--ctas` leaves out) branches here from
// the prologue and runs the function as compiled, not its sites (recording nothing, CUTLASS's GEMM
// ran the sites' skip branches in 1.17-1.19x its time on the H200, the copy in 1.03-1.05x).
std::vector<std::string> plain_body(std::string_view text, size_t open, size_t close,
                                    const std::vector<std::pair<size_t, size_t>>& decls,
                                    const std::set<std::string>& labels, const std::string& prefix) {
  std::string body;
  size_t at = open;
  for (const auto& [b, e] : decls) {
    body.append(text.substr(at, b - at));
    at = e;
  }
  body.append(text.substr(at, close - at));
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  std::string renamed;
  renamed.reserve(body.size() + body.size() / 8);
  for (size_t i = 0; i < body.size();) {
    const char c = body[i];
    const bool starts = (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%') &&
                        (i == 0 || (!ident(body[i - 1]) && body[i - 1] != '.' && body[i - 1] != '%'));
    if (!starts) {
      renamed += c;
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < body.size() && ident(body[j])) ++j;
    const std::string word(body.substr(i, j - i));
    renamed += word;
    if (labels.count(word)) renamed += "_" + prefix + "_plain";
    i = j;
  }
  std::vector<std::string> out;
  std::istringstream in(renamed);
  for (std::string l; std::getline(in, l);)
    if (!blank(l)) out.push_back(l + " // " + prefix);
  return out;
}

}  // namespace tmakit::instrument::detail
