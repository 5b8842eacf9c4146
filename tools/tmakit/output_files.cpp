// All-or-nothing output files (output_files.hpp).
#include "output_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "tmakit/scenario/scenario.hpp"

namespace tmakit::cli {
namespace {

namespace fs = std::filesystem;

Diagnostic error(const std::string& flag, const std::string& rule, std::string message) {
  return {Severity::error, rule, std::move(message), flag};
}

// The permissions a plain create would give (0666 or 0777 less the umask): the
// temporary folder is made 0700 by mkdtemp.
mode_t without_umask(mode_t mode) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mode & ~mask;
}

bool write_all(int fd, const void* data, size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return ::fsync(fd) == 0;
}

// "/a/b/out/" and "out/." name the folder "/a/b/out": its parent is where the
// temporary folder goes, so the final rename never crosses file systems.
fs::path folder_path(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p;
}

// The file tmakit leaves in every output folder it makes, naming the files it wrote there
// (one a line): only such a folder, holding only those files, is ever replaced.
constexpr const char* kMarker = ".tmakit-outputs";
constexpr size_t kMaxMarkerBytes = 1 << 20;

// The names an earlier run's marker in `dir` lists, or nullopt when there is none (or it
// is not a plain file tmakit could have written).
std::optional<std::set<std::string>> marked_names(const fs::path& dir) {
  const int fd = ::open((dir / kMarker).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= kMaxMarkerBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    if (::read(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) text.clear();
  } else {
    ::close(fd);
    return std::nullopt;
  }
  ::close(fd);
  std::set<std::string> names;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    names.insert(text.substr(start, end - start));
  }
  return names;
}

// Why an existing DIR may not be replaced, or "" when it may: it must be a real folder
// (not a symlink) that is empty, or that an earlier run made (its marker) and that holds
// nothing but the regular files that run wrote.
std::string foreign_content(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (fs::is_symlink(st)) return "it is a symbolic link";
  if (!fs::is_directory(st)) return "it is not a folder";
  const auto marked = marked_names(dir);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!marked)
      return fmt::format("it holds \"{}\" and no {} file, so tmakit did not make it", name, kMarker);
    const fs::file_status s = it->symlink_status(ec);
    if (name != kMarker && (!fs::is_regular_file(s) || !marked->contains(name)))
      return fmt::format("it holds \"{}\", which is not one of an earlier run's outputs", name);
  }
  if (ec) return "it cannot be listed: " + ec.message();
  return "";
}

// Puts the complete folder `tmp` at `dir`: a plain rename when `dir` does not exist,
// otherwise an atomic exchange (the old outputs end up in `tmp` and are removed).
std::optional<std::string> publish(const fs::path& tmp, const fs::path& dir, bool exists) {
  if (!exists) {
    if (::rename(tmp.c_str(), dir.c_str()) == 0) return std::nullopt;
    return fmt::format("cannot rename {} to {}: {}", tmp.string(), dir.string(), std::strerror(errno));
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS)
      return fmt::format("cannot replace {}: {}", dir.string(), std::strerror(errno));
    // A file system without exchange: move the old folder aside, then the new one in.
    // DIR is briefly absent, but never partly written.
    const fs::path old = tmp.string() + ".old";
    if (::rename(dir.c_str(), old.c_str()) != 0 || ::rename(tmp.c_str(), dir.c_str()) != 0)
      return fmt::format("cannot replace {}: {}", dir.string(), std::strerror(errno));
    std::error_code ec;
    fs::remove_all(old, ec);
    return std::nullopt;
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);  // now the earlier outputs
  return std::nullopt;
}

}  // namespace

std::optional<std::string> not_replaceable(const fs::path& file) {
  struct stat st{};
  if (::lstat(file.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return std::nullopt;
  return S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a folder"
         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISFIFO(st.st_mode) ? "a pipe"
                                                                                            : "not a regular file";
}

std::optional<Diagnostic> write_output_folder(const fs::path& out, const std::vector<OutputFile>& files,
                                              const std::string& flag) {
  for (const OutputFile& f : files)
    if (!scenario::portable_name(f.name))
      return error(flag, "scenario.output-name",
                   fmt::format("output file name \"{}\" is not portable: use letters, digits and . _ -", f.name));
  const fs::path dir = folder_path(out);
  if (!dir.has_filename() || dir.filename() == "..")
    return error(flag, "cli.output-exists", fmt::format("{} cannot be an output folder; name a new folder", out.string()));
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(dir, ec));
  if (exists) {
    const std::string why = foreign_content(dir);
    if (!why.empty())
      return error(flag, "cli.output-exists",
                   fmt::format("{} exists and {}; tmakit replaces an output folder as a whole, so give a new folder, "
                               "an empty one, or one an earlier run wrote (and nothing else since)",
                               out.string(), why));
  }
  fs::create_directories(dir.parent_path(), ec);
  if (ec) return error(flag, "cli.output", fmt::format("cannot create {}: {}", dir.parent_path().string(), ec.message()));

  std::string pattern = (dir.parent_path() / ("." + dir.filename().string() + ".tmakit-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    return error(flag, "cli.output",
                 fmt::format("cannot create a temporary folder beside {}: {}", dir.string(), std::strerror(errno)));
  const fs::path tmp = pattern;
  auto fail = [&](std::string message) {
    fs::remove_all(tmp, ec);
    return error(flag, "cli.output", message + "; nothing was written");
  };
  const int dfd = ::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return fail(fmt::format("cannot open {}: {}", tmp.string(), std::strerror(errno)));
  for (const OutputFile& f : files) {
    const int fd = ::openat(dfd, f.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    const bool ok = fd >= 0 && write_all(fd, f.bytes.data(), f.bytes.size());
    const int saved = errno;
    if (fd >= 0) ::close(fd);
    if (!ok) {
      ::close(dfd);
      return fail(fmt::format("cannot write {}: {}", (dir / f.name).string(), std::strerror(saved)));
    }
  }
  std::string marker;
  for (const OutputFile& f : files) marker += f.name + "\n";
  const int mfd = ::openat(dfd, kMarker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  const bool marked = mfd >= 0 && write_all(mfd, marker.data(), marker.size());
  const int saved = errno;
  if (mfd >= 0) ::close(mfd);
  if (!marked) {
    ::close(dfd);
    return fail(fmt::format("cannot write {}: {}", (dir / kMarker).string(), std::strerror(saved)));
  }
  ::fsync(dfd);
  ::close(dfd);
  if (::chmod(tmp.c_str(), without_umask(0777)) != 0)
    return fail(fmt::format("cannot set the permissions of {}: {}", tmp.string(), std::strerror(errno)));
  if (auto why = publish(tmp, dir, exists)) return fail(*why);
  return std::nullopt;
}

std::optional<Diagnostic> write_output_file(const fs::path& file, const std::string& bytes, const std::string& flag) {
  const fs::path path = fs::absolute(file).lexically_normal();
  if (!path.has_filename()) return error(flag, "cli.output", fmt::format("{} names a folder, not a file", file.string()));
  if (auto why = not_replaceable(path))
    return error(flag, "cli.output-exists",
                 fmt::format("{} exists and is {}; tmakit replaces only a regular file, so name another file",
                             file.string(), *why));
  // mkstemp creates with O_EXCL: it never opens an existing file or follows a symlink.
  std::string pattern = (path.parent_path() / ("." + path.filename().string() + ".tmakit-XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    return error(flag, "cli.output", fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
  const bool ok = write_all(fd, bytes.data(), bytes.size()) &&
                  ::fchmod(fd, without_umask(0666)) == 0;
  const int saved = errno;
  ::close(fd);
  // rename replaces FILE (or a symlink named FILE) itself; it never writes through it.
  if (!ok || ::rename(pattern.c_str(), path.c_str()) != 0) {
    const int why = ok ? errno : saved;
    ::unlink(pattern.c_str());
    return error(flag, "cli.output", fmt::format("cannot write {}: {}; nothing was written", file.string(),
                                                 std::strerror(why)));
  }
  return std::nullopt;
}

}  // namespace tmakit::cli
