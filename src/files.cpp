// Bounded reads of the user's files (files.hpp).
#include "tmakit/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tmakit {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void bad_file(const std::string& rule, const std::string& where, const std::string& message) {
  throw InputError({Severity::error, rule, message, where});
}

}  // namespace

const char* file_kind(unsigned mode) {
  return S_ISDIR(mode) ? "a folder" : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : S_ISFIFO(mode) ? "a pipe"
                                                                                           : "not a plain file";
}

std::vector<uint8_t> read_open_file(int fd, const fs::path& p, std::optional<uint64_t> size, uint64_t max,
                                    const std::string& where, const std::string& what, const std::string& rule) {
  std::vector<uint8_t> bytes;
  try {
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      bad_file(rule + "-not-regular", where, fmt::format("{} {} is not a regular file", what, p.string()));
    const auto n = static_cast<uint64_t>(st.st_size);
    if (size && n != *size)
      bad_file(rule + "-size", where,
               fmt::format("{} {} holds {} bytes, the region {}; give a file of exactly {} bytes", what, p.string(), n,
                           *size, *size));
    if (n > max)
      bad_file(rule + "-size", where,
               fmt::format("{} {} holds {} bytes, more than the {} bytes allowed here", what, p.string(), n, max));
    bytes.resize(n);
    uint64_t got = 0;
    while (got < n) {
      const ssize_t r = ::read(fd, bytes.data() + got, n - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        bad_file(rule + "-size", where, fmt::format("{} {} ended after {} of its {} bytes (changed while read)",
                                                          what, p.string(), got, n));
      got += static_cast<uint64_t>(r);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}


// Anything but a regular file of the right size (a device such as /dev/zero, a FIFO,
// a folder) is refused before a byte is read, so reading is bounded whatever the path.
std::vector<uint8_t> read_regular_file(const fs::path& p, std::optional<uint64_t> size, uint64_t max,
                                       const std::string& where, const std::string& what, const std::string& rule) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0)
    bad_file(rule, where, fmt::format("cannot read {} {}: {}", what, p.string(), std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    bad_file(rule + "-not-regular", where,
             fmt::format("{} {} is not a regular file ({}); only regular files are read", what, p.string(),
                         file_kind(st.st_mode)));
  // O_NONBLOCK: a file swapped for a FIFO after the stat cannot block the open.
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    bad_file(rule, where, fmt::format("cannot read {} {}: {}", what, p.string(), std::strerror(errno)));
  return read_open_file(fd, p, size, max, where, what, rule);
}

}  // namespace tmakit
