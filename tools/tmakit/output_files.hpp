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

// Writes `files` as DIR/NAME. DIR must not exist, or be a folder that is empty or holds
// only regular *.bin files (an earlier run's outputs); it is then replaced as a whole,
// so it always holds the outputs of exactly one run. Returns the error, or nullopt.
// `flag` names the option in messages ("-o").
std::optional<Diagnostic> write_output_folder(const std::filesystem::path& dir, const std::vector<OutputFile>& files,
                                              const std::string& flag);

// Writes one file (replacing FILE, or a symlink named FILE, never writing through it).
std::optional<Diagnostic> write_output_file(const std::filesystem::path& file, const std::string& bytes,
                                            const std::string& flag);

}  // namespace tmakit::cli
