// The watch library's per-process state (session.hpp).
#include "session.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "call_site.hpp"
#include "driver_abi.hpp"

namespace tmakit::watch {
namespace {

namespace tm = tmakit::tensor_map;
using Descriptor = std::array<uint8_t, abi::kTensorMapBytes>;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

bool is_root_process() {
  const char* v = std::getenv(kEnvRootPid);
  return v != nullptr && std::atoi(v) == static_cast<int>(getpid());
}

// Writes all of `s` to fd (a log line in one write, so records of several
// processes appending to one O_APPEND file never interleave).
void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n, left -= static_cast<size_t>(n);
  }
}

std::string utc_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm t{};
  gmtime_r(&ts.tv_sec, &t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                     t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000);
}

// A map's identity for the "distinct maps" count: every field, address included.
uint64_t map_hash(const tm::TensorMap& m) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  mix(static_cast<uint64_t>(m.encode)), mix(static_cast<uint64_t>(m.data_type)), mix(static_cast<uint64_t>(m.rank));
  mix(m.global_address);
  for (auto v : m.dims) mix(v);
  for (auto v : m.strides) mix(v);
  for (auto v : m.box) mix(v);
  for (auto v : m.element_strides) mix(v);
  for (auto v : m.pixel_box_lower) mix(static_cast<uint32_t>(v));
  for (auto v : m.pixel_box_upper) mix(static_cast<uint32_t>(v));
  mix(static_cast<uint32_t>(m.pixel_box_lower_w)), mix(static_cast<uint32_t>(m.pixel_box_upper_w));
  mix(static_cast<uint64_t>(m.wide_mode)), mix(m.channels_per_pixel), mix(m.pixels_per_column);
  mix(static_cast<uint64_t>(m.interleave)), mix(static_cast<uint64_t>(m.swizzle));
  mix(static_cast<uint64_t>(m.l2_promotion)), mix(static_cast<uint64_t>(m.oob_fill));
  return h;
}

struct Counters {
  uint64_t calls = 0, encodes = 0, replaces = 0, refused = 0, explained = 0, flagged = 0, disagreements = 0,
           driver_errors = 0, strict_refused = 0;
};

class Session {
 public:
  Session() {
    const char* log = std::getenv(kEnvLog);
    if (log != nullptr && *log != '\0') {
      log_path_ = log;
      log_fd_ = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (log_fd_ < 0)
        write_all(2, fmt::format("tmakit watch: cannot open the log {}: {}; going on without it\n", log,
                                 std::strerror(errno)));
    }
    strict_ = env_flag(kEnvStrict);
    quiet_ = env_flag(kEnvQuiet);
    const char* t = std::getenv(kEnvTarget);
    target_text_ = (t != nullptr && *t != '\0') ? t : "sm_90a";
    auto parsed = spec::parse_target(target_text_);
    if (!parsed) {
      write_all(2, fmt::format("tmakit watch: unknown target \"{}\"; validating for sm_90a\n", target_text_));
      target_text_ = "sm_90a";
      parsed = spec::parse_target(target_text_);
    }
    target_ = *parsed;
    root_ = is_root_process();
    // A fork while another thread holds the mutex must not leave it locked in the child.
    pthread_atfork([] { instance()->mutex_.lock(); }, [] { instance()->mutex_.unlock(); },
                   [] {
                     Session* s = instance();
                     s->mutex_.unlock();
                     s->counters_ = {};  // the child's summary counts the child's calls
                     s->distinct_.clear();
                     s->root_ = false;
                   });
  }

  // Created once, never destroyed: calls may come from threads still running at exit.
  static Session* instance() {
    static Session* s = new Session();
    return s;
  }
  static Session* existing() { return created_.load(std::memory_order_acquire); }

  int after_encode(Via via, const EncodeArgs& args, int driver_result) {
    std::lock_guard lock(mutex_);
    CallRecord r = begin(args.entry, via, args.tensor_map, driver_result);
    r.capture = capture(args);
    return finish(r);
  }

  int after_replace(Via via, void* tensor_map, void* address, const std::optional<Descriptor>& before,
                    int driver_result) {
    std::lock_guard lock(mutex_);
    CallRecord r = begin(Entry::replace_address, via, tensor_map, driver_result);
    std::optional<tm::TensorMap> known;
    if (before) {
      auto it = maps_.find(*before);
      if (it != maps_.end()) known = it->second;
    }
    r.capture = capture_replace(known, tensor_map, address);
    return finish(r);
  }

  void summary() {
    std::lock_guard lock(mutex_);
    const Counters& c = counters_;
    if (log_fd_ >= 0)
      write_all(log_fd_, nlohmann::json{{"kind", "summary"},
                                        {"pid", getpid()},
                                        {"calls", c.calls},
                                        {"encodes", c.encodes},
                                        {"replaces", c.replaces},
                                        {"distinct_maps", distinct_.size()},
                                        {"refused", c.refused},
                                        {"explained", c.explained},
                                        {"flagged", c.flagged},
                                        {"disagreements", c.disagreements},
                                        {"driver_errors", c.driver_errors},
                                        {"strict_refused", c.strict_refused}}
                                 .dump() +
                             "\n");
    if (quiet_ && c.disagreements == 0) return;
    if (c.calls == 0 && !root_) return;
    write_all(2, summary_line(c));
  }

  static std::atomic<Session*> created_;

 private:
  CallRecord begin(Entry entry, Via via, const void* tensor_map, int driver_result) {
    CallRecord r;
    r.index = counters_.calls++;
    r.pid = static_cast<int>(getpid());
    r.thread = static_cast<long>(syscall(SYS_gettid));
    r.time = utc_now();
    r.entry = entry;
    r.via = via;
    r.tensor_map_address = reinterpret_cast<uintptr_t>(tensor_map);
    r.driver_result = driver_result;
    r.target = target_text_;
    return r;
  }

  int finish(CallRecord& r) {
    r.judgement = judge(r.capture, r.driver_result, target_, strict_);
    r.returned = r.judgement.strict_refused ? abi::kInvalidValue : r.driver_result;
    if (r.driver_result == abi::kSuccess && r.tensor_map_address != 0) {
      Descriptor d{};
      if (read_program_memory(d.data(), reinterpret_cast<const void*>(r.tensor_map_address), d.size())) {
        r.descriptor = d;
        if (r.capture.map) remember_descriptor(d, *r.capture.map);
      }
    }
    count(r);
    const Verdict v = r.judgement.verdict;
    const bool speak = v != Verdict::ok && !(quiet_ && v == Verdict::flagged);
    if (speak || log_fd_ >= 0) r.call_site = current_call_site();
    if (log_fd_ >= 0) write_all(log_fd_, to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (speak) write_all(2, explain(r, log_path_));
    return r.returned;
  }

  void count(const CallRecord& r) {
    Counters& c = counters_;
    (r.entry == Entry::replace_address ? c.replaces : c.encodes)++;
    if (r.capture.map && distinct_.size() < kMaxDistinct) distinct_.insert(map_hash(*r.capture.map));
    switch (r.judgement.verdict) {
      case Verdict::explained: c.refused++, c.explained++; break;
      case Verdict::unexplained_refusal: c.refused++, c.disagreements++; break;
      case Verdict::accepted_against_rule: c.disagreements++; break;
      case Verdict::flagged: c.flagged++; break;
      case Verdict::driver_error: c.driver_errors++; break;
      case Verdict::ok: break;
    }
    c.strict_refused += r.judgement.strict_refused;
  }

  // Bounded: the oldest descriptors are forgotten first.
  void remember_descriptor(const Descriptor& d, const tm::TensorMap& m) {
    if (maps_.emplace(d, m).second) {
      order_.push_back(d);
      if (order_.size() > kMaxDescriptors) {
        maps_.erase(order_.front());
        order_.pop_front();
      }
    }
  }

  std::string summary_line(const Counters& c) const {
    std::string s = fmt::format("tmakit watch: pid {}: {} tensor-map call{} ({} encode{}, {} address replacement{}), "
                                "{}{} distinct map{}, {} refused by the driver ({} explained), {} flagged, "
                                "{} disagreement{}",
                                getpid(), c.calls, c.calls == 1 ? "" : "s", c.encodes, c.encodes == 1 ? "" : "s",
                                c.replaces, c.replaces == 1 ? "" : "s",
                                distinct_.size() >= kMaxDistinct ? "at least " : "", distinct_.size(),
                                distinct_.size() == 1 ? "" : "s", c.refused, c.explained, c.flagged,
                                c.disagreements, c.disagreements == 1 ? "" : "s");
    if (c.driver_errors) s += fmt::format(", {} other driver error{}", c.driver_errors, c.driver_errors == 1 ? "" : "s");
    if (c.strict_refused) s += fmt::format(", {} refused by --strict", c.strict_refused);
    if (!log_path_.empty()) s += "; log: " + log_path_;
    return s + "\n";
  }

  static constexpr size_t kMaxDistinct = 1 << 20;
  static constexpr size_t kMaxDescriptors = 4096;

  std::mutex mutex_;
  std::string log_path_;
  int log_fd_ = -1;
  bool strict_ = false, quiet_ = false, root_ = false;
  std::string target_text_;
  spec::Target target_{};
  Counters counters_;
  std::unordered_set<uint64_t> distinct_;
  std::map<Descriptor, tm::TensorMap> maps_;
  std::deque<Descriptor> order_;
};

std::atomic<Session*> Session::created_{nullptr};

Session* session() {
  Session* s = Session::instance();
  Session::created_.store(s, std::memory_order_release);
  return s;
}

// At exit (or unload): the summary. The root process (the command `tmakit watch`
// ran) always says it, even with no calls, so that "nothing was seen" is visible.
__attribute__((destructor)) void at_exit() {
  try {
    if (Session* s = Session::existing()) {
      s->summary();
    } else if (is_root_process() && !env_flag(kEnvQuiet)) {
      write_all(2, fmt::format("tmakit watch: pid {}: no tensor-map calls\n", getpid()));
    }
  } catch (...) {
  }
}

}  // namespace

int observe_encode(Via via, const EncodeArgs& args, const std::function<int()>& call_driver) {
  const int result = call_driver();  // first, and exactly once: the program's behaviour is the driver's
  try {
    return session()->after_encode(via, args, result);
  } catch (...) {
    return result;
  }
}

int observe_replace(Via via, void* tensor_map, void* address, const std::function<int()>& call_driver) {
  std::optional<Descriptor> before;
  try {
    Descriptor d{};
    if (tensor_map != nullptr && read_program_memory(d.data(), tensor_map, d.size())) before = d;
  } catch (...) {
  }
  const int result = call_driver();
  try {
    return session()->after_replace(via, tensor_map, address, before, result);
  } catch (...) {
    return result;
  }
}

}  // namespace tmakit::watch
