// Diagnostics shared by every layer: the map validator, the PTX front end,
// the model and the tools. Checks return diagnostics; they never assert.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace tmakit {

enum class Severity { error, warning, note };

struct Diagnostic {
  Severity severity = Severity::error;
  std::string rule;     // stable id, e.g. "map.swizzle-span"
  std::string message;  // names the values, e.g. "swizzle 128b allows ... got 256"
  std::string where;    // place: "box[0]", "program[3] (cta 0)", "file.ptx:4:7"
};

const char* to_string(Severity s);

// "WHERE: error: MESSAGE [RULE]" (the where part only when set).
std::string format(const Diagnostic& d);

struct Diagnostics : std::vector<Diagnostic> {
  bool has_errors() const;
  void error(std::string rule, std::string message, std::string where = {});
  void warning(std::string rule, std::string message, std::string where = {});
  void note(std::string rule, std::string message, std::string where = {});
};

// Thrown where a layer must stop at the first error (the model, the loaders).
class DiagnosticError : public std::runtime_error {
 public:
  explicit DiagnosticError(Diagnostic d);
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

[[noreturn]] void fail(std::string rule, std::string message, std::string where = {});

}  // namespace tmakit
