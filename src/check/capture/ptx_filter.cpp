// `tmakit check --ptx-filter CMD` (include/tmakit/check/ptx_filter.hpp): the module goes to the
// filter's standard input from an anonymous file (never a pipe: a filter that stops reading
// early must not stall us, nor raise SIGPIPE in the user's program), its standard output and
// error come back through pipes read with poll() up to a deadline, so a filter that hangs, or
// writes without end, costs at most the timeout and the size limit.
#include "tmakit/check/ptx_filter.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tmakit/check/child.hpp"
#include "tmakit/terminal_text.hpp"

namespace tmakit::check {
namespace {

constexpr size_t kErrKept = 4096;  // the filter's standard error kept for the message

// An unlinked file holding `text`, at offset 0; -1 and why when none can be had.
int input_file(std::string_view text, std::string* why) {
  int fd = memfd_create("tmakit-ptx-filter-input", MFD_CLOEXEC);
  if (fd < 0) {  // a kernel without memfd: an unlinked file in the temporary folder
    std::error_code ec;
    std::string name = (std::filesystem::temp_directory_path(ec) / "tmakit-ptx-filter-XXXXXX").string();
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) {
    *why = fmt::format("no file for the filter's input: {}", std::strerror(errno));
    return -1;
  }
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = fmt::format("cannot write the filter's input: {}", std::strerror(errno));
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

// The last non-empty line of the filter's standard error, for the message.
std::string last_line(std::string_view err) {
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r' || err.back() == ' ')) err.remove_suffix(1);
  const size_t at = err.rfind('\n');
  return std::string(at == std::string_view::npos ? err : err.substr(at + 1));
}

}  // namespace

std::vector<std::string> split_filter_command(std::string_view command) {
  std::vector<std::string> words;
  size_t at = 0;
  while (at < command.size()) {
    const size_t start = command.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(command.find_first_of(" \t", start), command.size());
    words.emplace_back(command.substr(start, end - start));
    at = end;
  }
  return words;
}

std::optional<PtxFilter> ptx_filter_from_environment() {
  const char* cmd = std::getenv(kEnvPtxFilter);
  if (cmd == nullptr) return std::nullopt;
  PtxFilter f;
  f.command = cmd;
  f.argv = split_filter_command(f.command);
  if (f.argv.empty()) return std::nullopt;
  if (const char* t = std::getenv(kEnvPtxFilterTimeout); t != nullptr && *t != '\0') {
    char* end = nullptr;
    const double s = std::strtod(t, &end);
    if (end != t && *end == '\0' && s > 0 && s <= 86400) f.timeout_s = s;
  }
  return f;
}

FilterOutcome run_ptx_filter(const PtxFilter& filter, std::string_view ptx, size_t max_bytes) {
  FilterOutcome res;
  const int in = input_file(ptx, &res.why);
  if (in < 0) return res;
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    res.why = fmt::format("no pipe for the filter: {}", std::strerror(errno));
    for (int fd : {in, out[0], out[1], err[0], err[1]})
      if (fd >= 0) ::close(fd);
    return res;
  }
  const std::optional<pid_t> pid = spawn_child(filter.argv, {in, out[1], err[1]}, /*own_group=*/true, &res.why);
  for (int fd : {in, out[1], err[1]}) ::close(fd);
  if (!pid) {
    ::close(out[0]);
    ::close(err[0]);
    return res;
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(filter.timeout_s));
  std::string text, errors;
  bool too_much = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  for (int open = 2; open > 0 && !too_much;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || p.revents == 0) continue;
      char buf[65536];
      const ssize_t r = ::read(p.fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {  // the end of the stream (or an error on it)
        ::close(p.fd);
        p.fd = -1;
        --open;
        continue;
      }
      if (p.fd == out[0]) {
        if (text.size() + static_cast<size_t>(r) > max_bytes) too_much = true;
        else text.append(buf, static_cast<size_t>(r));
      } else if (errors.size() < kErrKept) {
        errors.append(buf, std::min(static_cast<size_t>(r), kErrKept - errors.size()));
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  std::optional<ChildEnd> end;
  if (!too_much) end = wait_child_until(*pid, deadline);
  if (!end) {  // over time or over size: the filter and whatever it started go
    ::kill(-*pid, SIGKILL);
    ::kill(*pid, SIGKILL);
    wait_child(*pid);
  }
  const std::string said = last_line(errors);
  const std::string quoted = said.empty() ? "" : fmt::format(" (its last line on standard error: {})", terminal_clip(said, 200));
  if (too_much) res.why = fmt::format("it wrote more than {} bytes, the most a module may have (killed)", max_bytes);
  else if (!end) res.why = fmt::format("it did not finish within {} s (killed)", filter.timeout_s);
  else if (end->how == ChildEnd::How::signalled)
    res.why = fmt::format("it was ended by signal {} ({}){}", end->code, strsignal(end->code), quoted);
  else if (end->how == ChildEnd::How::exited && end->code != 0)
    res.why = fmt::format("it exited with status {}{}", end->code, quoted);
  else if (text.empty()) res.why = "it wrote nothing on its standard output" + quoted;
  else if (text.find('\0') != std::string::npos) res.why = "its output holds a NUL byte: it is not PTX text";
  else if (text.find(".version") == std::string::npos || text.find(".target") == std::string::npos)
    res.why = fmt::format("its output ({} bytes) is not PTX: it has no .version and .target", text.size());
  else res.ptx = std::move(text);
  return res;
}

}  // namespace tmakit::check
