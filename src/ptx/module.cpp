// The module reader: one pass over the text, splitting it into statements
// (`;`-terminated, or line-terminated for .version/.target/.address_size/.file/.loc),
// blocks, labels and `.section` blocks, and recording declarations with their types.
#include "tmakit/ptx/module.hpp"

#include "module_lexis.hpp"
#include "reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tmakit::ptx {
namespace {

using namespace detail;  // module_lexis.hpp

// `.version 8.6` ends at the end of its line (PTX ISA §11: these directives take no `;`),
// at the top level and in function bodies alike (`.loc` is written before instructions).
bool line_directive(std::string_view s) {
  for (std::string_view d : {".version", ".target", ".address_size", ".file", ".loc"})
    if (starts_with(s, d) && (s.size() == d.size() || is_space(s[d.size()]))) return true;
  return false;
}

bool section_header(std::string_view s) { return starts_with(s, ".section") && s.size() > 8 && is_space(s[8]); }

class Reader {
 public:
  Reader(std::string_view text, const std::string& file, Diagnostics& diags, const StatementHandler& handler,
         const detail::SpanHandler& spans)
      : t_(text), diags_(diags), handler_(handler), spans_(spans) {
    m_.file = file;
  }

  Module run() {
    while (i_ < t_.size()) step();
    if (!cur_.empty()) {
      if (line_directive(cur_)) finish();
      else diags_.error("module.syntax", "the module ends inside a statement that has no `;`", at(cur_line_, cur_col_));
    }
    if (depth_ > 0)
      diags_.error("module.brace",
                   in_function_ ? "function `" + fn_.name + "` opened here has no closing `}`"
                                : "a block opened here has no closing `}`",
                   at(block_line_, 1));
    return std::move(m_);
  }

 private:
  std::string at(int line, int col) const { return m_.file + ":" + std::to_string(line) + ":" + std::to_string(col); }

  void newline() {
    ++line_;
    line_start_ = i_ + 1;
  }

  void step() {
    const char c = t_[i_];
    const char next = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
    if (c == '\n') {
      if (!cur_.empty() && line_directive(cur_)) finish();
      else if (!cur_.empty()) cur_ += '\n';
      newline();
      ++i_;
      return;
    }
    if (c == '/' && next == '/') {
      while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      return;
    }
    if (c == '/' && next == '*') {
      const int line = line_, col = static_cast<int>(i_ - line_start_) + 1;
      size_t end = t_.find("*/", i_ + 2);
      if (end == std::string_view::npos) {
        diags_.error("module.comment", "`/*` comment is never closed", at(line, col));
        i_ = t_.size();
        return;
      }
      for (; i_ < end + 2; ++i_) {  // blanked, so later columns stay right
        if (t_[i_] == '\n') {
          if (!cur_.empty()) cur_ += '\n';
          newline();
        } else if (!cur_.empty()) {
          cur_ += ' ';
        }
      }
      return;
    }
    if (is_space(c)) {
      if (!cur_.empty()) cur_ += c;
      ++i_;
      return;
    }
    if (cur_.empty()) {
      if (c == '{') return ++i_, open_block(false);
      if (c == '}') return ++i_, close_block();
      cur_line_ = line_;
      cur_col_ = static_cast<int>(i_ - line_start_) + 1;
      cur_begin_ = i_;
    }
    if (c == '"') return string();
    if (c == ';') {
      cur_ += ';';
      code_end_ = ++i_;
      return finish();
    }
    // `{` ends a function header at the top level (an initializer `= {..}` does not), or
    // opens a `.section`'s data.
    if (c == '{' && depth_ == 0 && cur_.find('=') == std::string::npos) {
      ++i_;
      return section_header(cur_) ? section() : open_block(true);
    }
    // A label: an identifier followed by one `:` (never `::`, which qualifiers use).
    if (c == ':' && depth_ > 0 && next != ':' && is_identifier(cur_)) {
      ++i_;
      Statement& s = stmt_;
      s.kind = Statement::Kind::label;
      s.text = cur_;
      s.line = cur_line_;
      s.column = cur_col_;
      span(Piece::Kind::label, cur_begin_, i_, &s);
      emit();
      cur_.clear();
      return;
    }
    cur_ += c;
    code_end_ = ++i_;
  }

  // `.section .debug_info { ... }`: DWARF data whose lines (`.b8 1`, `.b32 .debug_abbrev`,
  // labels) take no `;`. Nothing in it concerns the linter; it is kept as one verbatim piece.
  void section() {
    const int line = cur_line_, col = cur_col_;
    int depth = 1;
    while (i_ < t_.size() && depth > 0) {
      const char c = t_[i_];
      const char next = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
      if (c == '/' && next == '/') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
        continue;
      }
      if (c == '/' && next == '*') {
        const size_t end = t_.find("*/", i_ + 2);
        if (end == std::string_view::npos) break;  // reported below as an unclosed section
        for (; i_ < end + 2; ++i_)
          if (t_[i_] == '\n') newline();
        continue;
      }
      if (c == '"') {
        for (++i_; i_ < t_.size() && t_[i_] != '"' && t_[i_] != '\n'; ++i_)
          if (t_[i_] == '\\') ++i_;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (i_ < t_.size() && t_[i_] == '\n') newline();
      ++i_;
    }
    if (depth > 0) {
      diags_.error("module.brace",
                   "`" + first_line(cur_) + "` opened here has no closing `}`: its data runs to the end of the module",
                   at(line, col));
      i_ = t_.size();
    }
    span(Piece::Kind::section, cur_begin_, std::min(i_, t_.size()), nullptr);
    cur_.clear();
  }

  // `.section\t.debug_info`'s first line with its white space written as single spaces.
  static std::string first_line(std::string_view s) {
    std::string out;
    for (std::string_view w : words(s.substr(0, s.find('\n')))) out += (out.empty() ? "" : " ") + std::string(w);
    return out;
  }

  void span(Piece::Kind kind, size_t begin, size_t end, const Statement* s) {
    if (spans_) spans_(kind, begin, end, s);
  }

  void string() {
    const int line = line_, col = static_cast<int>(i_ - line_start_) + 1;
    cur_ += t_[i_++];
    while (i_ < t_.size() && t_[i_] != '"' && t_[i_] != '\n') {
      if (t_[i_] == '\\' && i_ + 1 < t_.size()) cur_ += t_[i_++];
      cur_ += t_[i_++];
    }
    if (i_ >= t_.size() || t_[i_] != '"') {
      diags_.error("module.string", "string is not closed on its line", at(line, col));
      return;
    }
    cur_ += t_[i_++];
    code_end_ = i_;
  }

  void open_block(bool header) {
    if (header) span(Piece::Kind::header, cur_begin_, code_end_, nullptr);
    span(Piece::Kind::open, i_ - 1, i_, nullptr);
    if (depth_ == 0) {
      block_line_ = line_;
      in_function_ = false;
      if (header && (cur_.find(".entry") != std::string::npos || cur_.find(".func") != std::string::npos))
        begin_function();
      cur_.clear();
    }
    ++depth_;
  }

  void close_block() {
    span(Piece::Kind::close, i_ - 1, i_, nullptr);
    if (depth_ == 0) {
      diags_.error("module.brace", "`}` closes no block", at(line_, static_cast<int>(i_ - line_start_)));
      return;
    }
    if (--depth_ == 0 && in_function_) {
      m_.functions.push_back(std::move(fn_));
      fn_ = Function{};
      in_function_ = false;
    }
  }

  void begin_function() {
    in_function_ = true;
    fn_ = Function{};
    fn_.line = cur_line_;
    std::string_view h = cur_;
    size_t k = h.find(".entry");
    fn_.entry = k != std::string_view::npos;
    k = fn_.entry ? k + 6 : h.find(".func") + 5;
    while (k < h.size() && is_space(h[k])) ++k;
    if (k < h.size() && h[k] == '(') k = declare_params(h, k, fn_.symbols, cur_line_);  // return parameters
    while (k < h.size() && is_space(h[k])) ++k;
    size_t start = k;
    while (k < h.size() && ident_char(h[k])) ++k;
    fn_.name = std::string(h.substr(start, k - start));
    while (k < h.size() && is_space(h[k])) ++k;
    if (k < h.size() && h[k] == '(') declare_params(h, k, fn_.symbols, cur_line_);
  }

  void finish() {
    while (!cur_.empty() && is_space(cur_.back())) cur_.pop_back();
    if (depth_ == 0) {
      span(Piece::Kind::directive, cur_begin_, code_end_, nullptr);
      top_level();
    } else if (in_function_) {
      body();
    } else {  // a statement in a top-level block that is no function
      span(Piece::Kind::directive, cur_begin_, code_end_, nullptr);
    }
    cur_.clear();
  }

  void top_level() {
    std::string_view s = cur_;
    auto w = words(s);
    if (w.empty()) return;
    if (w[0] == ".version") {
      m_.version_line = cur_line_;
      if (w.size() > 1) m_.version = spec::parse_ptx_version(w[1]);
      if (!m_.version)
        diags_.error("module.version", "`" + std::string(s) + "` does not name a PTX ISA version",
                     at(cur_line_, cur_col_));
    } else if (w[0] == ".target") {
      m_.target_line = cur_line_;
      m_.target_text = w.size() > 1 ? std::string(w[1]) : "";
      m_.target = spec::parse_target(m_.target_text);
    } else if (s.find(".func") == std::string_view::npos && s.find(".entry") == std::string_view::npos) {
      declare(s, m_.globals, cur_line_);
    }
  }

  void body() {
    if (cur_[0] == '.') {
      span(Piece::Kind::directive, cur_begin_, code_end_, nullptr);
      if (is_space_name(std::string_view(cur_).substr(0, cur_.find_first_of(" \t\n"))))
        declare(cur_, fn_.symbols, cur_line_);
      return;
    }
    Statement& s = stmt_;
    s.kind = Statement::Kind::instruction;
    s.text = cur_;
    s.line = cur_line_;
    s.column = cur_col_;
    span(Piece::Kind::instruction, cur_begin_, code_end_, &s);
    emit();
  }

  void emit() {
    if (!in_function_) return;
    if (handler_) handler_(stmt_, fn_, m_);
    else fn_.body.push_back(stmt_);
  }

  std::string_view t_;
  Diagnostics& diags_;
  const StatementHandler& handler_;
  const detail::SpanHandler& spans_;
  Module m_;
  size_t i_ = 0, line_start_ = 0;
  size_t cur_begin_ = 0, code_end_ = 0;  // the current statement's span: first character, after its last
  int line_ = 1, depth_ = 0, block_line_ = 0;
  std::string cur_;
  int cur_line_ = 0, cur_col_ = 0;
  bool in_function_ = false;
  Function fn_;
  Statement stmt_;
};

}  // namespace

Module read_module(std::string_view text, const std::string& file, Diagnostics& diags,
                   const StatementHandler& on_statement) {
  return Reader(text, file, diags, on_statement, {}).run();
}

Module detail::read_module(std::string_view text, const std::string& file, Diagnostics& diags,
                           const StatementHandler& on_statement, const SpanHandler& on_span) {
  return Reader(text, file, diags, on_statement, on_span).run();
}

}  // namespace tmakit::ptx
