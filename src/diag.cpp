#include "tmakit/diag.hpp"

#include "tmakit/terminal_text.hpp"

namespace tmakit {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

// Places and messages quote inputs (names, paths, tokens): escaped, so that what is
// printed is always one line and never a terminal's escape sequence, and long tokens
// clipped, so that it is a short line.
std::string format(const Diagnostic& d) {
  std::string out;
  if (!d.where.empty()) out += terminal_line(d.where) + ": ";
  out += to_string(d.severity);
  out += ": " + terminal_line(d.message);
  if (!d.rule.empty()) out += " [" + d.rule + "]";
  return out;
}

bool Diagnostics::has_errors() const {
  for (const auto& d : *this)
    if (d.severity == Severity::error) return true;
  return false;
}

void Diagnostics::error(std::string rule, std::string message, std::string where) {
  push_back({Severity::error, std::move(rule), std::move(message), std::move(where)});
}
void Diagnostics::warning(std::string rule, std::string message, std::string where) {
  push_back({Severity::warning, std::move(rule), std::move(message), std::move(where)});
}
void Diagnostics::note(std::string rule, std::string message, std::string where) {
  push_back({Severity::note, std::move(rule), std::move(message), std::move(where)});
}

DiagnosticError::DiagnosticError(Diagnostic d) : std::runtime_error(format(d)), diag_(std::move(d)) {}

void fail(std::string rule, std::string message, std::string where) {
  throw DiagnosticError({Severity::error, std::move(rule), std::move(message), std::move(where)});
}

}  // namespace tmakit
