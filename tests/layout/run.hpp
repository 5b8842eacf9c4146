// Running programs from the layout tests: the built tmakit, scripts/gallery.sh
// and Chromium, through the shell, with stdout and stderr captured together.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tmakit::layout::test {

inline const std::string kTmakit = TMAKIT_BINARY_DIR "/tools/tmakit/tmakit";
inline const std::string kSource = TMAKIT_SOURCE_DIR;

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Ran {
  int status = -1;  // exit status, -1 when killed by a signal
  std::string out;  // stdout and stderr
};

inline Ran run(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int raw = ::pclose(p);
  if (WIFEXITED(raw) && WEXITSTATUS(raw) <= 128) r.status = WEXITSTATUS(raw);
  return r;
}

inline std::string read_file(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder under the system's temporary folder, removed with the object.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("tmakit_layout_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace tmakit::layout::test
