// The watch library's per-process state (session.hpp).
#include "session.hpp"
#include "tmakit/terminal_text.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
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
// processes appending to one O_APPEND file never interleave): 0, or the error.
int write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? EIO : errno;
    p += n, left -= static_cast<size_t>(n);
  }
  return 0;
}

// Our messages on the program's stderr: names, paths and Python frames in them come from the
// program, so each line is escaped for the terminal (terminal_text.hpp).
int say(const std::string& text) { return write_all(2, terminal_lines(text)); }

std::string utc_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm t{};
  gmtime_r(&ts.tv_sec, &t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                     t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000);
}

// A map's identity for the "distinct maps" count and the judgement cache: every
// field, address included (a word-wise multiply-xor mix; equality is checked on use).
uint64_t map_hash(const tm::TensorMap& m) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t v) {
    h = (h ^ v) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  };
  mix(static_cast<uint64_t>(m.encode) | static_cast<uint64_t>(m.data_type) << 8 |
      static_cast<uint64_t>(m.interleave) << 16 | static_cast<uint64_t>(m.swizzle) << 24 |
      static_cast<uint64_t>(m.l2_promotion) << 32 | static_cast<uint64_t>(m.oob_fill) << 40 |
      static_cast<uint64_t>(m.wide_mode) << 48);
  mix(static_cast<uint64_t>(static_cast<uint32_t>(m.rank)));
  mix(m.global_address);
  for (auto v : m.dims) mix(v);
  for (auto v : m.strides) mix(v);
  for (int i = 0; i < tm::kMaxRank; ++i) mix(uint64_t(m.box[i]) << 32 | m.element_strides[i]);
  for (int i = 0; i < 3; ++i)
    mix(uint64_t(static_cast<uint32_t>(m.pixel_box_lower[i])) << 32 | static_cast<uint32_t>(m.pixel_box_upper[i]));
  mix(uint64_t(static_cast<uint32_t>(m.pixel_box_lower_w)) << 32 | static_cast<uint32_t>(m.pixel_box_upper_w));
  mix(uint64_t(m.channels_per_pixel) << 32 | m.pixels_per_column);
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
      log_fd_ = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (log_fd_ < 0) log_error_ = errno;  // said in the summary, which ends the process with status 2
    }
    strict_ = env_flag(kEnvStrict);
    quiet_ = env_flag(kEnvQuiet);
    const char* t = std::getenv(kEnvTarget);
    target_text_ = (t != nullptr && *t != '\0') ? t : "sm_90a";
    auto parsed = spec::parse_target(target_text_);
    if (!parsed) {
      say(fmt::format("tmakit watch: unknown target \"{}\"; validating for sm_90a\n", target_text_));
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
                     s->log_lost_ = 0;  // the child's own records; a log it cannot open stays an error
                     if (s->log_fd_ >= 0) s->log_error_ = 0;
                     s->pid_ = static_cast<int>(getpid());
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
    // An accepted call's arrays were all read by the driver: copy them without a
    // system call. A refused one may have stopped at a bad pointer: ask the kernel.
    Capture c = capture(args, driver_result == abi::kSuccess ? read_known_memory : read_program_memory);
    return finish(args.entry, via, args.tensor_map, driver_result, std::move(c));
  }

  int after_replace(Via via, void* tensor_map, void* address, const std::optional<Descriptor>& before,
                    int driver_result) {
    std::lock_guard lock(mutex_);
    std::optional<tm::TensorMap> known;
    if (before) {
      auto it = maps_.find(*before);
      if (it != maps_.end()) known = it->second;
    }
    return finish(Entry::replace_address, via, tensor_map, driver_result, capture_replace(known, tensor_map, address));
  }

  // Says the summary; false when the log could not be written in full (said here too).
  bool summary() {
    std::lock_guard lock(mutex_);
    const Counters& c = counters_;
    if (!log_path_.empty())
      log(nlohmann::json{{"kind", "summary"},
                                        {"pid", pid_},
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
    if (log_error_ != 0)
      say(fmt::format("tmakit watch: pid {}: error: the log {} could not be written ({} record{} lost): {}; "
                               "the run ends with status 2 [watch.log]\n",
                               getpid(), log_path_, log_lost_, log_lost_ == 1 ? "" : "s", std::strerror(log_error_)));
    if ((quiet_ && c.disagreements == 0) || (c.calls == 0 && !root_)) return log_error_ == 0;
    say(summary_line(c));
    return log_error_ == 0;
  }

  static std::atomic<Session*> created_;

 private:
  // Counts the call and says what there is to say. A call with nothing to say and no
  // log costs a capture, a hash and a cache look-up: no record is built.
  int finish(Entry entry, Via via, const void* tensor_map, int driver_result, Capture&& c) {
    const uint64_t hash = c.map ? map_hash(*c.map) : 0;
    const Judgement& j = judged(c, driver_result, hash);
    const int returned = j.strict_refused ? abi::kInvalidValue : driver_result;
    std::optional<Descriptor> descriptor;
    if (driver_result == abi::kSuccess && tensor_map != nullptr) {
      Descriptor d{};
      read_known_memory(d.data(), tensor_map, d.size());  // the driver just wrote it
      descriptor = d;
      if (c.map) remember_descriptor(d, *c.map);
    }
    const uint64_t index = counters_.calls++;
    count(entry, c.map.has_value(), hash, j);
    const bool speak = j.verdict != Verdict::ok && !(quiet_ && j.verdict == Verdict::flagged);
    if (!speak && log_path_.empty()) return returned;
    CallRecord r;
    r.index = index;
    r.pid = pid_;
    r.thread = static_cast<long>(syscall(SYS_gettid));
    r.time = utc_now();
    r.entry = entry;
    r.via = via;
    r.tensor_map_address = reinterpret_cast<uintptr_t>(tensor_map);
    r.capture = std::move(c);
    r.judgement = j;
    r.driver_result = driver_result;
    r.returned = returned;
    r.target = target_text_;
    r.descriptor = descriptor;
    const std::string site = current_call_site();
    if (speak) r.call_site = nlohmann::json::parse(site);
    if (!log_path_.empty()) log(to_line(r, judged_text(r), site) + "\n");
    if (speak) say(explain(r, log_path_));
    return returned;
  }

  void count(Entry entry, bool has_map, uint64_t hash, const Judgement& j) {
    Counters& c = counters_;
    (entry == Entry::replace_address ? c.replaces : c.encodes)++;
    if (has_map && distinct_.size() < kMaxDistinct) distinct_.insert(hash);
    switch (j.verdict) {
      case Verdict::explained: c.refused++, c.explained++; break;
      case Verdict::unexplained_refusal: c.refused++, c.disagreements++; break;
      case Verdict::accepted_against_rule: c.disagreements++; break;
      case Verdict::flagged: c.flagged++; break;
      case Verdict::driver_error: c.driver_errors++; break;
      case Verdict::ok: break;
    }
    c.strict_refused += j.strict_refused;
  }

  // The judgement of a map already seen with the same driver answer is reused:
  // programs such as Triton encode the same few maps before every launch. The
  // entry (`current_`) stays valid for the rest of the call (the session's lock is held).
  const Judgement& judged(const Capture& c, int driver_result, uint64_t hash) {
    current_ = nullptr;
    if (!c.map || !c.problems.empty()) return uncached_ = judge(c, driver_result, target_, strict_);
    const uint64_t key = hash ^ (static_cast<uint64_t>(static_cast<uint32_t>(driver_result)) * 0x9e3779b97f4a7c15ull);
    auto it = judged_.find(key);
    if (it == judged_.end() || !(it->second.map == *c.map)) {
      if (judged_.size() >= kMaxJudged) judged_.clear();
      it = judged_.insert_or_assign(key, Judged{*c.map, judge(c, driver_result, target_, strict_), {}}).first;
    }
    current_ = &it->second;
    return current_->judgement;
  }

  // The record text of the map and its judgement (judged_fields), made once per cached entry.
  const std::string& judged_text(const CallRecord& r) {
    if (current_ == nullptr) return uncached_text_ = judged_fields(r);
    if (current_->text.empty()) current_->text = judged_fields(r);
    return current_->text;
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
    if (!log_path_.empty() && log_error_ == 0) s += "; log: " + log_path_;
    return s + "\n";
  }

  // One record to the log; the first error is kept, and every record lost is counted.
  void log(const std::string& line) {
    const int err = log_fd_ < 0 ? 0 : write_all(log_fd_, line);
    if (log_fd_ >= 0 && err == 0) return;
    if (log_error_ == 0) log_error_ = err;
    ++log_lost_;
  }

  static constexpr size_t kMaxDistinct = 1 << 20;
  static constexpr size_t kMaxDescriptors = 4096;
  static constexpr size_t kMaxJudged = 4096;

  std::mutex mutex_;
  std::string log_path_;
  int log_fd_ = -1;
  int log_error_ = 0;  // the first error writing the log (or opening it)
  uint64_t log_lost_ = 0;
  bool strict_ = false, quiet_ = false, root_ = false;
  std::string target_text_;
  spec::Target target_{};
  Counters counters_;
  std::unordered_set<uint64_t> distinct_;
  std::map<Descriptor, tm::TensorMap> maps_;
  struct Judged {
    tm::TensorMap map;
    Judgement judgement;
    std::string text;  // the log's part for this map and verdict, made when first logged
  };
  std::unordered_map<uint64_t, Judged> judged_;
  Judged* current_ = nullptr;  // the cache entry of the call in progress, if it has one
  Judgement uncached_;
  std::string uncached_text_;
  int pid_ = static_cast<int>(getpid());
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
      if (!s->summary()) {
        // A log that was asked for and is incomplete fails the run (docs/watch.md): the
        // program's own output is flushed first, then the status is 2.
        std::fflush(nullptr);
        ::_exit(2);
      }
    } else if (is_root_process() && !env_flag(kEnvQuiet)) {
      say(fmt::format("tmakit watch: pid {}: no tensor-map calls\n", getpid()));
    }
  } catch (...) {
  }
}

}  // namespace

int observe_encode(Via via, const EncodeArgs& args, const std::function<int()>& call_driver) {
  try {
    // A pointer or rank the driver may crash on is said first: if the process dies in
    // the driver, this line is its explanation (the record comes only after the call).
    if (std::string risk = crash_risk(args); !risk.empty())
      say(fmt::format("tmakit watch: {} is called with {}; if the program crashes now, this is why\n",
                               entry_name(args.entry), risk));
  } catch (...) {
  }
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
