// tmakit check's launches (check_session.hpp): a launch of an instrumented kernel is
// serialised, its trace reset, the launch made, and then waited for (an event polled, never a
// blocking call) up to the timeout. What it left becomes a trace directory that `tmakit check
// --replay` (run as a child process, so the model never runs inside the user's program)
// reports on, to stderr. A hang is reported while the process is alive, from the host-mapped
// records; then the parent `tmakit check` is told, and kills the process.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "check_abi.hpp"
#include "tmakit/check/child.hpp"
#include "check_state.hpp"
#include "tmakit/instrument/instrument.hpp"
#include "../../watch/session.hpp"

namespace tmakit::watch {
namespace {

namespace fs = std::filesystem;

struct Events {
  abi::EventCreate create = reinterpret_cast<abi::EventCreate>(check_driver_proc("cuEventCreate"));
  abi::EventRecord record = reinterpret_cast<abi::EventRecord>(check_driver_proc("cuEventRecord"));
  abi::EventQuery query = reinterpret_cast<abi::EventQuery>(check_driver_proc("cuEventQuery"));
  abi::EventDestroy destroy = reinterpret_cast<abi::EventDestroy>(check_driver_proc("cuEventDestroy"));
  // Optional: the kernel's time on the GPU, traced (docs/benchmarks.md compares it with plain runs).
  using EventElapsedTime = int (*)(float* ms, void* start, void* end);
  EventElapsedTime elapsed = reinterpret_cast<EventElapsedTime>(check_driver_proc("cuEventElapsedTime"));
  bool complete() const { return create && record && query && destroy; }
};

const Events& events() {
  static const Events e;
  return e;
}

double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  return (end != v && *end == '\0' && d > 0) ? d : fallback;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tensor maps encoded so far: the watch log's "call" records (tmakit check always logs).
std::string maps_jsonl() {
  const char* log = std::getenv(kEnvLog);
  if (log == nullptr || *log == '\0') return {};
  std::istringstream in(read_text(log));
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("\"kind\":\"call\"") != std::string::npos) out += line + "\n";
  return out;
}

// A fresh folder name for this launch's trace: <root>/launch-<n>, n the first free number
// (mkdir is atomic, so processes of one run never share one).
fs::path fresh_launch_dir(const fs::path& root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  for (int n = 0;; ++n) {
    fs::path p = root / fmt::format("launch-{}", n);
    if (::mkdir(p.c_str(), 0755) == 0) return p;
    if (errno != EEXIST) return p;
  }
}

struct ReplayResult {
  int status = -1;  // tmakit check --replay's exit status: 0 clean, 1 findings, 2 unusable; -1 not run
  std::string report;
  int findings = 0, errors = 0, warnings = 0, skipped = 0;  // counted from the report's lines
};

// `tmakit check --replay DIR`, as a child with the preload library taken out of its environment.
ReplayResult run_replay(const fs::path& dir) {
  ReplayResult res;
  const char* cli = std::getenv(kEnvCheckCli);
  if (cli == nullptr || *cli == '\0') return res;
  // The report goes to tmakit's own folder for the run (never beside the saved trace, in a
  // folder of the user's, where a planted symlink would be followed into a truncation).
  const char* run_dir = std::getenv(kEnvCheckDir);
  const fs::path out = fs::path(run_dir != nullptr ? run_dir : "/nonexistent") /
                       fmt::format("report-{}-{}.txt", getpid(), dir.filename().string());
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    res.report = fmt::format("cannot write the replay's report to {}: {}", out.string(), std::strerror(errno));
    return res;
  }
  std::string why;
  const auto pid = check::spawn_child({cli, "check", "--replay", dir.string()}, {-1, fd, fd}, false, &why);
  ::close(fd);
  if (!pid) {
    res.report = fmt::format("the replay ({} check --replay) did not start: {}", cli, why);
    return res;
  }
  const check::ChildEnd end = check::wait_child(*pid);
  // A program that ignores SIGCHLD has its children reaped for it: the report is there, the
  // exit status is lost (3 in launches.jsonl); the findings are still counted from the report.
  res.status = end.how == check::ChildEnd::How::exited ? end.code
               : end.how == check::ChildEnd::How::signalled ? 128 + end.code : 3;
  res.report = read_text(out);
  std::error_code ec;
  fs::remove(out, ec);
  std::istringstream in(res.report);
  for (std::string line; std::getline(in, line);) {
    res.errors += line.find(": error: ") != std::string::npos;
    res.warnings += line.find(": warning: ") != std::string::npos;
    res.skipped += line.rfind("skipped: ", 0) == 0;
  }
  res.findings = res.errors + res.warnings;
  return res;
}

void append_launch_line(const nlohmann::json& j) {
  const fs::path p = fs::path(std::getenv(kEnvCheckDir)) / "launches.jsonl";
  const std::string line = j.dump() + "\n";
  int fd = ::open(p.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

// The last record the kernel wrote before it faulted, in the user's words.
std::string last_operation(const std::vector<instrument::Record>& records, const std::string& sites_json) {
  const instrument::Record* last = nullptr;
  for (const auto& r : records)
    if (r.op != 0) last = &r;
  if (last == nullptr) return "no operation was recorded before the fault";
  std::string where = fmt::format("site {}", last->site), text;
  try {
    const auto sites = nlohmann::json::parse(sites_json).at("sites");
    if (last->site < sites.size()) {
      const auto& s = sites[last->site];
      text = s.value("text", "");
      where = fmt::format("PTX line {}", s.value("ptx_line", 0));
      if (s.contains("loc")) {  // the user's line, as the replay places its findings
        std::vector<instrument::SourceFrame> frames{{s["loc"].value("file", ""), s["loc"].value("line", 0), 0, {}}};
        for (const auto& x : s.value("inlined_at", nlohmann::json::array()))
          frames.push_back({x.value("file", ""), x.value("line", 0), 0, {}});
        const auto& user = frames[instrument::user_frame(frames)];
        where = fmt::format("{}:{}", user.file, user.line);
      }
    }
  } catch (const std::exception&) {
  }
  return fmt::format("the last operation recorded before the fault: {}: {} (CTA ({},{},{}), thread ({},{},{}))", where,
                     text, last->ctaid_x, last->ctaid_y, last->ctaid_z, last->tid_x, last->tid_y, last->tid_z);
}

// A hang was reported: the parent `tmakit check` kills this process (SIGUSR1 carries its pid).
[[noreturn]] void hand_over_to_parent() {
  const char* parent = std::getenv(kEnvCheckParent);
  if (parent != nullptr && *parent != '\0') {
    sigval v{};
    v.sival_int = static_cast<int>(getpid());
    sigqueue(static_cast<pid_t>(std::atoi(parent)), SIGUSR1, v);
    std::this_thread::sleep_for(std::chrono::seconds(30));  // killed long before this
  }
  _exit(124);  // no parent to do it (the library used without tmakit check): as timeout(1) does
}

std::mutex& launch_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

// The cluster shape an entry declares (`.reqnctapercluster X, Y, Z` between `.entry NAME` and
// its body), or nullopt.
std::optional<std::array<unsigned, 3>> required_cluster(std::string_view ptx, const std::string& entry) {
  size_t at = 0;
  for (;;) {  // the entry's own declaration: ".entry NAME" followed by '(' or space
    at = ptx.find(".entry " + entry, at);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t after = at + 7 + entry.size();
    if (after < ptx.size() && (ptx[after] == '(' || ptx[after] == ' ' || ptx[after] == '\n' || ptx[after] == '\t')) break;
    at = after;
  }
  const size_t body = ptx.find('{', at);
  const size_t req = ptx.find(".reqnctapercluster", at);
  if (req == std::string_view::npos || req > body) return std::nullopt;
  std::array<unsigned, 3> c{1, 1, 1};
  const char* p = ptx.data() + req + 18;
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v == 0 || v > 16) break;
    c[i] = static_cast<unsigned>(v);
    p = end;
    while (*p == ' ' || *p == ',') ++p;
  }
  return c;
}

}  // namespace

int check_launch(void* function, const LaunchShape& shape, const std::function<int()>& launch) {
  const std::optional<CheckFunction> fn = find_check_function(function);
  if (!fn) return launch();  // not instrumented: untouched, no wait
  std::lock_guard<std::mutex> serial(launch_mutex());
  // Never destroyed: freeing device memory from a static destructor would call the driver
  // after the program's runtime has torn its context down.
  static check::TraceBuffer* trace = nullptr;
  // --launches N: the first N launches of each kernel are checked; the rest run instrumented
  // but recording nothing (the trace words' records address is 0 until the next checked launch).
  static const auto limit = static_cast<uint64_t>(env_number(kEnvCheckLaunches, 0));
  static std::map<std::string, uint64_t>* launches = new std::map<std::string, uint64_t>;
  if (limit != 0 && (*launches)[fn->name]++ >= limit) {
    if (trace) trace->stop_recording();
    return launch();
  }

  // --ctas: the clusters to trace, as `tmakit check` wrote them ("FIRST-END"); anything else: all.
  static const std::pair<uint32_t, uint32_t> clusters = [] {
    unsigned first = 0, end = 0;
    const char* v = std::getenv(kEnvCheckCtas);
    if (v && std::sscanf(v, "%u-%u", &first, &end) == 2 && first < end) return std::pair<uint32_t, uint32_t>{first, end};
    return std::pair<uint32_t, uint32_t>{0, 0};
  }();
  // --records: where the kernel writes (capture.hpp's RecordsIn); auto is device memory, and
  // the parent runs the program again with host-mapped records when a launch lost them.
  static const std::string records_mode = [] {
    const char* v = std::getenv(kEnvCheckRecords);
    return std::string(v && (std::string_view(v) == "host" || std::string_view(v) == "device") ? v : "auto");
  }();
  std::string why;
  if (!trace) {
    // --capacity, else the default of where the records go (device memory is cheap to fill;
    // host-mapped memory is pinned host memory).
    const auto capacity = [](size_t fallback) { return static_cast<size_t>(env_number(kEnvCheckCapacity, fallback)); };
    if (records_mode != "host") {
      trace = check::TraceBuffer::create(check_driver(), capacity(kDefaultDeviceCapacity), &why, check::RecordsIn::device).release();
      if (!trace) check_say_once("records in host-mapped memory: none in device memory (" + why + ")");
    }
    if (!trace) trace = check::TraceBuffer::create(check_driver(), capacity(kDefaultHostCapacity), &why, check::RecordsIn::host).release();
    if (!trace) {
      check_say_once("no trace buffer (" + why + "); launches run unchecked");
      return launch();
    }
    trace->trace_clusters(clusters.first, clusters.second);  // every attach writes it to word 3
  }
  const CheckModule& mod = *fn->module;
  // A launch that names no cluster shape runs the kernel's own (__cluster_dims__: PTX's
  // .reqnctapercluster), which the launch does not carry.
  std::array<unsigned, 3> cluster{shape.cluster[0], shape.cluster[1], shape.cluster[2]};
  if (cluster[0] * cluster[1] * cluster[2] == 1)
    if (auto c = required_cluster(mod.ptx, fn->name)) cluster = *c;
  const bool attached = mod.kind == ModuleKind::module
                            ? trace->attach(static_cast<CUmodule>(mod.handle), &why)
                            : trace->attach_library(static_cast<CUlibrary>(mod.handle), &why);
  if (!attached || !events().complete()) {
    check_say_once(fmt::format("{} runs unchecked: {}", fn->name, attached ? "no event calls in the driver" : why));
    return launch();
  }
  trace->reset(shape.stream);

  check::LaunchInfo info;
  info.kernel = fn->name;
  for (int i = 0; i < 3; ++i) info.grid[i] = shape.grid[i], info.block[i] = shape.block[i], info.cluster[i] = cluster[i];
  info.dynamic_smem = shape.dynamic_smem;
  info.target = std::getenv(kEnvTarget) ? std::getenv(kEnvTarget) : "sm_90a";
  info.clusters_traced[0] = clusters.first, info.clusters_traced[1] = clusters.second;
  // Timed from an event just before the launch to one just after it, on the launch's stream.
  void* before = nullptr;
  const bool timed = events().elapsed != nullptr && events().create(&before, 0) == abi::kSuccess &&
                     events().record(before, shape.stream) == abi::kSuccess;
  const int launched = launch();
  const double timeout = env_number(kEnvCheckTimeout, 10);
  int state = launched;
  std::optional<float> gpu_ms;
  if (launched != abi::kSuccess) {
    info.outcome = "launch_error";
    if (before != nullptr) events().destroy(before);
  } else {
    void* ev = nullptr;
    state = events().create(&ev, timed ? 0 : abi::kEventDisableTiming);
    if (state == abi::kSuccess) state = events().record(ev, shape.stream);
    const auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(100);
    const auto waited = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    // Poll until the event is no longer "not ready" (done, or the sticky error of a fault) or
    // the timeout passes. (A loop that re-tested `state` for success ended after the first
    // "not ready" and called every kernel longer than one query hung: seen on the H100.)
    if (state == abi::kSuccess) {
      while ((state = events().query(ev)) == abi::kNotReady && waited() < timeout) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
      }
    }
    float ms = 0;
    if (timed && state == abi::kSuccess && events().elapsed(&ms, before, ev) == abi::kSuccess) gpu_ms = ms;
    if (ev != nullptr && state != abi::kNotReady) events().destroy(ev);
    if (before != nullptr && state != abi::kNotReady) events().destroy(before);
    info.outcome = state == abi::kSuccess ? "completed" : state == abi::kNotReady ? "timeout" : "fault";
  }
  info.driver_result = check::result_name(check_driver(), state);
  if (info.outcome == "timeout") info.timeout_s = timeout;
  info.records_in = trace->where() == check::RecordsIn::device ? "device" : "host";
  if (info.outcome != "launch_error") {
    const check::LaunchEnd end = info.outcome == "completed" ? check::LaunchEnd::finished
                                 : info.outcome == "timeout" ? check::LaunchEnd::running
                                                             : check::LaunchEnd::faulted;
    std::string lost;
    if (!trace->collect(end, std::max(2.0, timeout / 2), &lost)) info.records_lost = lost;
    // The records made: from the counters collect() read (after the launch finished; during a
    // hang the count is only a lower bound, and meta.json says null).
    if (info.outcome == "completed") info.next = trace->made();
    info.dropped = trace->dropped();
  }

  const char* save = std::getenv(kEnvCheckSave);
  const fs::path root = (save != nullptr && *save != '\0') ? fs::path(save) : fs::path(std::getenv(kEnvCheckDir)) / "traces";
  const fs::path dir = fresh_launch_dir(root);
  const std::vector<instrument::Record> records = trace->written();
  try {
    check::write_trace_dir(dir, info, records, trace->capacity(), mod.sites_json, maps_jsonl(), mod.ptx);
  } catch (const std::exception& e) {
    check_say(fmt::format("{}: the trace could not be written ({}); this launch is not checked", fn->name, e.what()));
    return launched;
  }
  std::string head = fmt::format("{} <<<({},{},{}), ({},{},{})>>>: {}", fn->name, info.grid[0], info.grid[1],
                                 info.grid[2], info.block[0], info.block[1], info.block[2], info.outcome);
  if (info.outcome == "timeout") head += fmt::format(" (not finished after {} s)", timeout);
  if (info.outcome != "completed") head += fmt::format(" ({})", info.driver_result);
  head += fmt::format(", {} records", records.size());
  if (gpu_ms) head += fmt::format(", {:.3f} ms on the GPU traced", *gpu_ms);
  if (!info.records_lost.empty())
    head += fmt::format("\n{}: {}", info.records_lost,
                        records_mode == "auto" ? "the program runs again with the records in host-mapped memory"
                                               : "run again with --records host to keep them through a fault or a hang");
  else if (info.outcome == "fault") head += "\n" + last_operation(records, mod.sites_json);
  // --no-replay: the trace is kept for `tmakit check --replay DIR` later (another machine, or a
  // timing run that needs only the GPU's figures), and the program goes on at once.
  const char* no_replay = std::getenv(kEnvCheckNoReplay);
  const bool replaying = no_replay == nullptr || std::strcmp(no_replay, "1") != 0;
  const ReplayResult replay = replaying ? run_replay(dir) : ReplayResult{};
  const std::string said = !replaying        ? "\nnot replayed (--no-replay): tmakit check --replay " + dir.string()
                           : replay.status < 0 ? "\nthe replay did not run (no tmakit CLI); the trace is in " + dir.string()
                                               : "";
  check_say(head + (replay.report.empty() ? "" : "\n" + replay.report) + said);
  append_launch_line({{"pid", getpid()}, {"kernel", fn->name}, {"outcome", info.outcome},
                      {"driver_result", info.driver_result}, {"records", records.size()},
                      {"records_in", info.records_in}, {"records_lost", !info.records_lost.empty()},
                      {"replayed", replaying}, {"replay_status", replay.status}, {"findings", replay.findings}, {"errors", replay.errors},
                      {"warnings", replay.warnings}, {"skipped", replay.skipped}, {"trace", dir.string()},
                      {"gpu_ms", gpu_ms ? nlohmann::json(*gpu_ms) : nlohmann::json(nullptr)}});
  if (info.outcome == "timeout") hand_over_to_parent();
  return launched;
}

}  // namespace tmakit::watch
