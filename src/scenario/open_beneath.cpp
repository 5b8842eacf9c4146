// open_beneath (open_beneath.hpp): openat2(RESOLVE_BENEATH), else a walk that opens one
// component at a time with O_NOFOLLOW, each beneath the descriptor of the one before.
#include "open_beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace tmakit::scenario {
namespace {

int kernel_beneath(int dirfd, const std::string& name, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    const long fd = ::syscall(SYS_openat2, dirfd, name.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != EINTR && errno != EAGAIN) return -errno;  // EAGAIN: a rename raced the walk; try again
  }
}

std::vector<std::string> components(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = name.find('/', start);
    const size_t end = slash == std::string::npos ? name.size() : slash;
    if (end > start && name.compare(start, end - start, ".") != 0) parts.push_back(name.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

// Every folder on the way is held open, so `..` returns to the descriptor it came
// from instead of being resolved by name.
int walk_components(int dirfd, const std::string& name, int flags) {
  if (!name.empty() && name[0] == '/') return -EXDEV;
  std::vector<int> held;
  auto release = [&](int result) {
    for (int fd : held) ::close(fd);
    return result;
  };
  auto current = [&] { return held.empty() ? dirfd : held.back(); };
  const std::vector<std::string> parts = components(name);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      if (held.empty()) return release(-EXDEV);
      ::close(held.back());
      held.pop_back();
      continue;
    }
    const bool last = i + 1 == parts.size();
    const int fd = ::openat(current(), parts[i].c_str(), (last ? flags : O_PATH) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return release(errno == ELOOP ? -ELOOP : -errno);
    struct stat st{};
    if (::fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {  // O_PATH | O_NOFOLLOW opens the link itself
      ::close(fd);
      return release(-ELOOP);
    }
    if (last) return release(fd);
    if (!S_ISDIR(st.st_mode)) {
      ::close(fd);
      return release(-ENOTDIR);
    }
    held.push_back(fd);
  }
  // The name ends at a folder ("", "sub/..", "."): open that folder itself.
  const int fd = ::openat(current(), ".", flags | O_CLOEXEC);
  return release(fd >= 0 ? fd : -errno);
}

}  // namespace

int open_beneath(int dirfd, const std::string& name, int flags, Walk walk) {
  if (walk == Walk::automatic) {
    const int fd = kernel_beneath(dirfd, name, flags);
    if (fd != -ENOSYS && fd != -EPERM) return fd;  // EPERM: a seccomp filter that forbids openat2
  }
  return walk_components(dirfd, name, flags);
}

}  // namespace tmakit::scenario
