// Reading a file the user named, bounded and without surprises (docs/security.md): only a
// regular file, its size checked against the caller's bound before a byte is read, devices,
// pipes and folders refused by name. Shared by every command that reads a file: scenarios and
// their init files, map files, PTX modules, logs.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"

namespace tmakit {

// Unusable input (malformed JSON, missing or mistyped fields, a file that cannot be read):
// the commands exit 2. Program errors are plain DiagnosticErrors: exit 1.
class InputError : public DiagnosticError {
 public:
  using DiagnosticError::DiagnosticError;
};

// Reads a regular file of exactly `size` bytes when given, else of at most `max`
// bytes. Throws InputError naming `where`: rule RULE (cannot read), RULE-not-regular
// (a device, pipe or folder: never read), RULE-size (checked before reading).
std::vector<uint8_t> read_regular_file(const std::filesystem::path& p, std::optional<uint64_t> size, uint64_t max,
                                       const std::string& where, const std::string& what,
                                       const std::string& rule = "scenario.file");

// The same for a file already open as `fd` (closed here; scenario init files are opened
// beneath their folder's descriptor first): `p` names it in messages.
std::vector<uint8_t> read_open_file(int fd, const std::filesystem::path& p, std::optional<uint64_t> size, uint64_t max,
                                    const std::string& where, const std::string& what, const std::string& rule);

// What a file that is not regular is, for a message that refuses it ("a folder", "a device",
// "a pipe"); `mode` is stat's st_mode.
const char* file_kind(unsigned mode);

}  // namespace tmakit
