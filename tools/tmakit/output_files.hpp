// Writing a command's files all at once or not at all (docs/security.md, "Outputs").
// Files are created in a fresh temporary folder (or under a fresh temporary name)
// beside the destination with O_EXCL | O_NOFOLLOW, so nothing planted there is
// followed, and renamed into place only when every byte is written: a crash, a kill
// or a full disk leaves either the earlier state or the whole new one.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"

namespace tmakit::cli {

struct OutputFile {
  std::string name;  // a portable name (scenario::portable_name), e.g. "tile.bin"
  std::vector<uint8_t> bytes;
};

// Writes `files` as DIR/NAME, with DIR/.tmakit-outputs listing them. DIR must not exist,
// or be a folder that is empty or that an earlier run wrote (its .tmakit-outputs lists
// every other file in it); it is then replaced as a whole, so it always holds the outputs
// of exactly one run and nothing tmakit did not write is ever removed. Returns the error, or nullopt.
// `flag` names the option in messages ("-o").
std::optional<Diagnostic> write_output_folder(const std::filesystem::path& dir, const std::vector<OutputFile>& files,
                                              const std::string& flag);

// Why an existing `file` may not be replaced by an output (a symlink, a device, a pipe,
// a folder), or nullopt when it does not exist or is a regular file.
std::optional<std::string> not_replaceable(const std::filesystem::path& file);

// Writes one file, replacing FILE when it is a regular file. Anything else named FILE (a
// symlink, a device such as /dev/null, a pipe, a folder) is refused (cli.output-exists)
// and left as it is: the rename would replace it, not write through it.
std::optional<Diagnostic> write_output_file(const std::filesystem::path& file, const std::string& bytes,
                                            const std::string& flag);

}  // namespace tmakit::cli
