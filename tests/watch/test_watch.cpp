// `tmakit watch` end to end, on a machine with no GPU: watch_probe reaches the
// encoders by each path a real program takes, against the stand-in libcuda.so.1,
// which answers every encode with the verdict the H100's driver gave for the same
// parameters (tests/vectors/driver_verdicts*.jsonl). The expectations are those
// recorded verdicts, the program's own output without the library, and the
// validator's rule table; scripts/watch-device.sh runs the same probe on the H100.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tmakit/tensor_map/json.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kVerdicts = std::string(TMAKIT_SOURCE_DIR) + "/tests/vectors/driver_verdicts.jsonl";
// The H100 driver's answers to watch_probe's defensive calls that carry a whole map
// (scripts/watch-device.sh records them; the stand-in answers from them).
const std::string kDefensive = std::string(TMAKIT_SOURCE_DIR) + "/tests/vectors/watch/defensive_verdicts.jsonl";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  int status = -1;
  std::string out, err;
  std::vector<json> log;  // every record, in file order
  std::vector<json> calls() const {
    std::vector<json> c;
    for (const auto& r : log)
      if (r.value("kind", "") == "call") c.push_back(r);
    return c;
  }
};

class Watch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tmakit-watch-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Runs `args` through the shell with the stand-in driver; under `tmakit watch WATCH_ARGS --`
  // when `watched`. The log (if --log is among watch_args as LOG) is parsed line by line.
  Outcome run(const std::string& args, bool watched, const std::string& watch_args = "--log LOG",
          const std::string& verdicts = kVerdicts) {
    Outcome r;
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt", log = dir_ / "log.jsonl";
    std::string wa = watch_args;
    for (size_t p; (p = wa.find("LOG")) != std::string::npos;) wa.replace(p, 3, log.string());
    std::string cmd = "env LD_LIBRARY_PATH=" STAND_IN_DIR " TMAKIT_STAND_IN_VERDICTS=" + verdicts +
                      " TMAKIT_WATCH_LIBRARY=" WATCH_LIBRARY " ";
    if (watched) cmd += std::string(TMAKIT_CLI) + " watch " + wa + (args.empty() ? "" : " -- ");
    cmd += args + " >" + out.string() + " 2>" + err.string();
    fs::remove(log);
    int s = std::system(cmd.c_str());
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
    r.out = read_file(out);
    r.err = read_file(err);
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) r.log.push_back(json::parse(line));
    return r;
  }

  fs::path dir_;
};

// The recorded verdicts, in file order: the driver's answer as the probe sees it (0 or 1).
std::vector<int> recorded_results(const std::string& file) {
  std::vector<int> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line).at("driver") == "CUDA_SUCCESS" ? 0 : 1);
  return out;
}

TEST_F(Watch, EveryEntryPathIsSeenAndChangesNothing) {
  const std::vector<int> recorded = recorded_results(kVerdicts);
  const std::map<std::string, std::string> via{
      {"linked", "linked"}, {"dlsym", "dlsym"}, {"gpa", "cuGetProcAddress"}, {"runtime", "cudaGetDriverEntryPoint"}};
  for (const auto& [path, name] : via) {
    const std::string args = std::string(WATCH_PROBE) + " " + path + " replay " + kVerdicts + " 0 40";
    Outcome plain = run(args, false);
    Outcome watched = run(args, true);
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(watched.status, 0) << watched.err;
    EXPECT_EQ(watched.out, plain.out) << "the program's results and descriptor bytes must not change";
    std::vector<json> calls = watched.calls();
    ASSERT_EQ(calls.size(), 40u) << path << "\n" << watched.err;
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i]["via"], name) << path;
      EXPECT_EQ(calls[i]["index"], i);
      EXPECT_EQ(calls[i]["driver_code"], recorded[i]) << path << " call " << i;
      EXPECT_EQ(calls[i]["returned"], recorded[i]);
      EXPECT_NE(calls[i]["verdict"], "unexplained-refusal") << calls[i].dump();
      EXPECT_NE(calls[i]["verdict"], "accepted-against-rule") << calls[i].dump();
      if (calls[i]["map"].is_null())  // a recorded rank outside 1..5: the format cannot spell it
        EXPECT_TRUE(calls[i].contains("map_error")) << calls[i].dump();
      else
        tmakit::tensor_map::map_from_json(calls[i]["map"], "log");  // reads back as a scenario map
    }
    ASSERT_EQ(watched.log.back()["kind"], "summary");
    EXPECT_EQ(watched.log.back()["calls"], 40);
  }
}

// Every refusal the H100's driver gave, replayed through the library: each is
// explained on stderr by the driver-enforced rule(s) the validator names, and no
// recorded verdict disagrees with the validator.
TEST_F(Watch, EveryRecordedRefusalIsExplainedByItsRules) {
  std::vector<std::string> files{kVerdicts};
  const std::string im2col = std::string(TMAKIT_SOURCE_DIR) + "/tests/vectors/driver_verdicts_im2col.jsonl";
  if (fs::exists(im2col)) files.push_back(im2col);
  for (const std::string& file : files) {
    const std::vector<int> recorded = recorded_results(file);
    Outcome w = run(std::string(WATCH_PROBE) + " dlsym replay " + file, true, "--log LOG", file);
    ASSERT_EQ(w.status, 0) << w.err.substr(0, 2000);
    std::vector<json> calls = w.calls();
    ASSERT_EQ(calls.size(), recorded.size()) << file;
    // stderr, cut into one block per message ("tmakit watch: ... (call N of pid P, ...").
    std::map<int, std::string> block;
    std::istringstream err(w.err);
    int current = -1;
    for (std::string line; std::getline(err, line);) {
      if (line.rfind("tmakit watch:", 0) == 0) {
        size_t at = line.find("(call ");
        current = at == std::string::npos ? -1 : std::atoi(line.c_str() + at + 6);
      }
      if (current >= 0) block[current] += line + "\n";
    }
    int refused = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const json& c = calls[i];
      ASSERT_EQ(c["driver_code"], recorded[i]) << file << " record " << i;
      if (recorded[i] == 0) {
        EXPECT_TRUE(c["verdict"] == "ok" || c["verdict"] == "flagged") << c.dump();
        continue;
      }
      ++refused;
      EXPECT_EQ(c["verdict"], "explained") << c.dump();
      int named = 0;
      for (const auto& f : c["findings"]) {
        if (!f["driver_enforced"].get<bool>()) continue;
        ++named;
        EXPECT_NE(block[static_cast<int>(i)].find("[" + f["rule"].get<std::string>() + "]"), std::string::npos)
            << "stderr does not name " << f["rule"] << " for record " << i << ":\n" << block[static_cast<int>(i)];
      }
      EXPECT_GT(named, 0) << c.dump();
    }
    EXPECT_GT(refused, 100) << file;
    const json& summary = w.log.back();
    EXPECT_EQ(summary["refused"], refused);
    EXPECT_EQ(summary["explained"], refused);
    EXPECT_EQ(summary["disagreements"], 0);
    const std::string line = std::to_string(refused) + " refused by the driver (" + std::to_string(refused) +
                             " explained), ";
    EXPECT_NE(w.err.find(line), std::string::npos) << w.err.substr(w.err.size() - 400);
  }
}

// The first recorded map the driver accepted and the validator warns about, as a
// verdicts file of one line (for --strict).
std::string flagged_map_file(const fs::path& dir) {
  const tmakit::spec::Target sm90a{90, tmakit::spec::Suffix::a};
  std::ifstream in(kVerdicts);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j["driver"] != "CUDA_SUCCESS") continue;
    json m = j;
    m.erase("driver");
    m.erase("intended_rule");
    bool warned = false;
    for (const auto& d : tmakit::tensor_map::validate(tmakit::tensor_map::map_from_json(m, "v").map, sm90a))
      warned |= d.severity == tmakit::Severity::warning;
    if (!warned) continue;
    fs::path f = dir / "flagged.jsonl";
    std::ofstream(f) << line << "\n";
    return f.string();
  }
  return {};
}

TEST_F(Watch, StrictRefusesWhatTheValidatorFlagsAndOnlyThen) {
  const std::string file = flagged_map_file(dir_);
  ASSERT_FALSE(file.empty()) << "no accepted map with a warning among the recorded verdicts";
  const std::string args = std::string(WATCH_PROBE) + " dlsym replay " + file;
  Outcome plain = run(args, true, "--log LOG", file);
  EXPECT_NE(plain.out.find("result 0 "), std::string::npos) << plain.out;
  ASSERT_EQ(plain.calls().size(), 1u);
  EXPECT_EQ(plain.calls()[0]["verdict"], "flagged");
  EXPECT_NE(plain.err.find("warning: cuTensorMapEncodeTiled accepted a map that tmakit flags"), std::string::npos)
      << plain.err;
  Outcome strict = run(args, true, "--strict --log LOG", file);
  EXPECT_NE(strict.out.find("result 1 "), std::string::npos) << strict.out;
  EXPECT_EQ(strict.calls()[0]["driver_code"], 0);
  EXPECT_EQ(strict.calls()[0]["returned"], 1);
  EXPECT_EQ(strict.calls()[0]["strict_refused"], true);
  EXPECT_NE(strict.err.find("--strict: the program gets CUDA_ERROR_INVALID_VALUE"), std::string::npos);
  // A clean map passes --strict untouched.
  Outcome clean = run(std::string(WATCH_PROBE) + " dlsym replay " + kVerdicts + " 0 1", true, "--strict --log LOG");
  ASSERT_EQ(clean.calls().size(), 1u);
  EXPECT_EQ(clean.calls()[0]["returned"], clean.calls()[0]["driver_code"]);
}

// Arguments no driver should see. The H100's driver answered each as recorded in
// tests/vectors/watch/h100/defensive.txt (or crashed): the stand-in answers the same,
// the program gets the same answer (or the same crash) watched or not, the log names
// the rule, and a call the driver may crash on is named before it is made.
TEST_F(Watch, HostileArgumentsAreNamedAndChangeNothing) {
  const std::map<std::string, std::string> expected_rule{
      {"valid", ""},
      {"null-map", "watch.null-argument"},
      {"misaligned-map", "watch.tensor-map-align"},
      {"null-dims", "watch.null-argument"},
      {"null-strides", "watch.null-argument"},
      {"null-box", "watch.null-argument"},
      {"null-element-strides", "watch.null-argument"},
      {"rank-0", "map.rank-range"},
      {"rank-6", "map.rank-range"},
      {"rank-huge", "map.rank-range"},
      {"type-99", "watch.enum-value"},
      {"type-negative", "watch.enum-value"},
      {"swizzle-9", "watch.enum-value"},
      {"interleave-3", "watch.enum-value"},
      {"l2-4", "watch.enum-value"},
      {"fill-2", "watch.enum-value"},
      {"null-address", ""},
      {"im2col-null-corners", "watch.null-argument"},
  };
  // "NAME: exit E NAME: result R" per case, as scripts/watch-device.sh printed them on the H100.
  std::map<std::string, std::pair<int, std::string>> h100;
  std::ifstream recorded(std::string(TMAKIT_SOURCE_DIR) + "/tests/vectors/watch/h100/defensive.txt");
  for (std::string line; std::getline(recorded, line);) {
    const size_t colon = line.find(':');
    const int exit_code = std::atoi(line.c_str() + line.find("exit ") + 5);
    const size_t result = line.find("result ");
    h100[line.substr(0, colon)] = {exit_code, result == std::string::npos ? "" : line.substr(result)};
  }
  ASSERT_EQ(h100.size(), expected_rule.size());
  Outcome list = run(std::string(WATCH_PROBE) + " dlsym defensive list", false);
  std::istringstream names(list.out);
  int cases = 0;
  for (std::string name; std::getline(names, name); ++cases) {
    ASSERT_TRUE(expected_rule.count(name) && h100.count(name)) << "no expectation for " << name;
    const auto& [h100_exit, h100_result] = h100.at(name);
    const std::string args = std::string(WATCH_PROBE) + " dlsym defensive " + name;
    Outcome plain = run(args, false, "", kDefensive);
    Outcome watched = run(args, true, "--log LOG", kDefensive);
    EXPECT_EQ(plain.status, h100_exit) << name << ": the stand-in must do what the H100's driver did";
    EXPECT_EQ(watched.status, h100_exit) << name << ": " << watched.err;
    EXPECT_EQ(watched.out, plain.out) << name;
    if (h100_exit != 0) {  // the driver itself crashed: the line before the call says why
      EXPECT_NE(watched.err.find("if the program crashes now, this is why"), std::string::npos) << watched.err;
      continue;
    }
    EXPECT_NE(plain.out.find(h100_result), std::string::npos) << name << ": " << plain.out;
    const std::vector<json> calls = watched.calls();
    ASSERT_EQ(calls.size(), 1u) << name;
    std::set<std::string> rules;
    for (const auto& f : calls[0]["findings"]) rules.insert(f["rule"].get<std::string>());
    const bool accepted = h100_result == "result 0";
    if (expected_rule.at(name).empty()) {
      EXPECT_EQ(calls[0]["verdict"], "ok") << calls[0].dump();
    } else {
      EXPECT_TRUE(rules.count(expected_rule.at(name))) << name << ": " << calls[0].dump();
      EXPECT_EQ(calls[0]["verdict"], accepted ? "flagged" : "explained") << calls[0].dump();
    }
  }
  EXPECT_EQ(cases, static_cast<int>(expected_rule.size()));
}

TEST_F(Watch, ThreadsGetOneWholeRecordEach) {
  Outcome w = run(std::string(WATCH_PROBE) + " dlsym threads " + kVerdicts + " 8 150", true);
  ASSERT_EQ(w.status, 0) << w.err;
  std::vector<json> calls = w.calls();
  ASSERT_EQ(calls.size(), 1200u);
  std::set<int> indices, threads;
  for (const auto& c : calls) indices.insert(c["index"].get<int>()), threads.insert(c["thread"].get<int>());
  EXPECT_EQ(indices.size(), 1200u);
  EXPECT_EQ(*indices.rbegin(), 1199);
  EXPECT_GE(threads.size(), 2u);
  EXPECT_EQ(w.log.back()["calls"], 1200);
}

// The same map again and again (as Triton encodes before every launch): the cached
// judgement and record text serve each call, and every record says what the first said.
TEST_F(Watch, RepeatedMapsGetTheSameRecordEachTime) {
  for (const char* index : {"1", "0"}) {  // recorded map 1 is refused by the driver, map 0 accepted
    Outcome w = run(std::string(WATCH_PROBE) + " dlsym repeat " + kVerdicts + " " + index + " 50", true);
    ASSERT_EQ(w.status, 0) << w.err;
    const std::vector<json> calls = w.calls();
    ASSERT_EQ(calls.size(), 50u);
    for (const json& c : calls) {
      EXPECT_EQ(c["map"], calls[0]["map"]);
      EXPECT_EQ(c["findings"], calls[0]["findings"]);
      EXPECT_EQ(c["verdict"], calls[0]["verdict"]);
      EXPECT_EQ(c["driver_code"], recorded_results(kVerdicts)[std::stoul(index)]);
    }
    EXPECT_EQ(w.log.back()["distinct_maps"], 1);
  }
}

TEST_F(Watch, ForkedChildrenCountTheirOwnCallsAndExecKeepsWatching) {
  Outcome f = run(std::string(WATCH_PROBE) + " dlsym fork " + kVerdicts, true);
  ASSERT_EQ(f.status, 0) << f.err;
  std::map<int, int> per_pid, summaries;
  for (const auto& r : f.log) (r["kind"] == "call" ? per_pid : summaries)[r["pid"].get<int>()]++;
  ASSERT_EQ(per_pid.size(), 2u) << f.err;
  std::vector<int> counts;
  for (auto [pid, n] : per_pid) counts.push_back(n);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{2, 2})) << "parent: 1 before the fork + 1 after; child: 2";
  EXPECT_EQ(summaries.size(), 2u);
  Outcome e = run(std::string(WATCH_PROBE) + " dlsym exec " + kVerdicts, true);
  ASSERT_EQ(e.status, 0) << e.err;
  std::vector<json> calls = e.calls();
  ASSERT_EQ(calls.size(), 2u) << "the exec'd image is watched too (LD_PRELOAD is inherited)";
  EXPECT_EQ(calls[0]["pid"], calls[1]["pid"]);
  EXPECT_NE(e.out.find("map 0: "), std::string::npos);
  EXPECT_NE(e.out.find("map 1: "), std::string::npos);
}

TEST_F(Watch, ReplacedAddressesAreCheckedAgainstTheMapTheyBelongTo) {
  Outcome w = run(std::string(WATCH_PROBE) + " linked replace " + kVerdicts, true);
  ASSERT_EQ(w.status, 0) << w.err;
  std::vector<json> calls = w.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1]["call"], "cuTensorMapReplaceAddress");
  EXPECT_EQ(calls[1]["verdict"], "ok") << calls[1].dump();
  EXPECT_EQ(calls[1]["map"]["global_address"].get<uint64_t>(),
            calls[0]["map"]["global_address"].get<uint64_t>() + 4096);
  EXPECT_EQ(calls[2]["verdict"], "explained") << calls[2].dump();
  EXPECT_EQ(calls[2]["findings"][0]["rule"], "map.global-address-align");
}

TEST_F(Watch, OtherSymbolsPassStraightThroughDlsym) {
  Outcome plain = run(RTLD_NEXT_MAIN, false);
  Outcome watched = run(RTLD_NEXT_MAIN, true, "");
  EXPECT_EQ(plain.out, "B\n");
  EXPECT_EQ(watched.out, "B\n") << "dlsym(RTLD_NEXT) must stay relative to its caller under the library";
  EXPECT_NE(watched.err.find("no tensor-map calls"), std::string::npos) << watched.err;
}

TEST_F(Watch, QuietSaysOnlyRefusalsAndNoLogMeansNoFile) {
  const std::string args = std::string(WATCH_PROBE) + " dlsym replay " + kVerdicts + " 0 40";
  Outcome quiet = run(args, true, "--quiet");
  EXPECT_TRUE(quiet.log.empty());
  EXPECT_EQ(quiet.err.find("accepted a map that tmakit flags"), std::string::npos);
  EXPECT_EQ(quiet.err.find("tensor-map calls"), std::string::npos) << "no summary under --quiet";
  Outcome loud = run(args, true, "");
  EXPECT_NE(loud.err.find("pid "), std::string::npos);
  EXPECT_NE(loud.err.find("40 tensor-map calls (40 encodes, 0 address replacements)"), std::string::npos)
      << loud.err;
  // Both say every refusal of the 40.
  size_t blocks_quiet = 0, blocks_loud = 0;
  for (size_t p = 0; (p = quiet.err.find("returned CUDA_ERROR_INVALID_VALUE", p)) != std::string::npos; ++p)
    ++blocks_quiet;
  for (size_t p = 0; (p = loud.err.find("returned CUDA_ERROR_INVALID_VALUE", p)) != std::string::npos; ++p)
    ++blocks_loud;
  EXPECT_GT(blocks_quiet, 0u);
  EXPECT_EQ(blocks_quiet, blocks_loud);
}

// The log is what `tmakit map --from-log` and `tmakit layout --from-log` read: the
// map of a refused call is invalid there for the same rule, an accepted one is valid.
TEST_F(Watch, LogRecordsReadBackThroughMapAndLayout) {
  Outcome w = run(std::string(WATCH_PROBE) + " dlsym replay " + kVerdicts + " 0 40", true);
  const std::vector<json> calls = w.calls();
  ASSERT_EQ(calls.size(), 40u);
  const fs::path log = dir_ / "kept.jsonl";
  fs::copy_file(dir_ / "log.jsonl", log);
  int refused_checked = 0, accepted_checked = 0;
  for (const json& c : calls) {
    if (c["map"].is_null()) continue;
    const std::string index = std::to_string(c["index"].get<int>());
    Outcome m = run(std::string(TMAKIT_CLI) + " map --from-log " + log.string() + " --index " + index, false);
    if (c["driver_code"] == 1 && refused_checked < 5) {
      ++refused_checked;
      EXPECT_EQ(m.status, 1) << m.out << m.err;
      for (const auto& f : c["findings"])
        if (f["driver_enforced"].get<bool>())
          EXPECT_NE(m.out.find("[" + f["rule"].get<std::string>() + "]"), std::string::npos) << m.out;
    }
    if (c["driver_code"] == 0 && c["verdict"] == "ok" && c["map"]["encode"] == "tiled" && accepted_checked < 3) {
      ++accepted_checked;
      EXPECT_EQ(m.status, 0) << m.out << m.err;
      std::string coords = "0";
      for (size_t d = 1; d < c["map"]["dims"].size(); ++d) coords += ",0";
      Outcome l = run(std::string(TMAKIT_CLI) + " layout --from-log " + log.string() + " --index " + index +
                          " --coords " + coords + " --format text",
                      false);
      EXPECT_EQ(l.status, 0) << l.out << l.err;
      EXPECT_FALSE(l.out.empty());
    }
  }
  EXPECT_EQ(refused_checked, 5);
  EXPECT_GT(accepted_checked, 0);
}

// A Python program: with the GIL held at the call (ctypes.PyDLL) the log names the
// Python file and line; with it released (ctypes.CDLL) it says why there is none.
TEST_F(Watch, PythonCallersAreNamedByFileAndLine) {
  for (const std::string loader : {"PyDLL", "CDLL"}) {
    const fs::path script = dir_ / "encode.py";
    std::ofstream(script) << "import ctypes\n"
                          << "cuda = ctypes." << loader << "('libcuda.so.1')\n"
                          << "cuda.cuInit(0)\n"
                          << "buf = ctypes.create_string_buffer(256)\n"
                          << "desc = (ctypes.addressof(buf) + 63) // 64 * 64\n"
                          << "dims = (ctypes.c_uint64 * 2)(64, 64)\n"
                          << "strides = (ctypes.c_uint64 * 1)(256)\n"
                          << "box = (ctypes.c_uint32 * 2)(16, 16)\n"
                          << "ones = (ctypes.c_uint32 * 2)(1, 1)\n"
                          << "def make_map():\n"
                          << "    return cuda.cuTensorMapEncodeTiled(ctypes.c_void_p(desc), 7, 2, "
                             "ctypes.c_void_p(0x10000), dims, strides, box, ones, 0, 0, 0, 0)\n"
                          << "print('result', make_map())\n";
    Outcome w = run("python3 " + script.string(), true, "--log LOG", kDefensive);
    ASSERT_EQ(w.status, 0) << w.err;
    EXPECT_EQ(w.out, "result 0\n");
    const std::vector<json> calls = w.calls();
    ASSERT_EQ(calls.size(), 1u) << w.err;
    const json& site = calls[0]["call_site"];
    if (loader == "PyDLL") {
      ASSERT_TRUE(site.contains("python")) << site.dump();
      EXPECT_EQ(site["python"][0]["file"], script.string());
      EXPECT_EQ(site["python"][0]["line"], 11);
      EXPECT_EQ(site["python"][0]["function"], "make_map");
    } else {
      EXPECT_FALSE(site.contains("python"));
      EXPECT_NE(site.value("python_unavailable", "").find("does not hold the GIL"), std::string::npos) << site.dump();
    }
  }
}

// The command after "--" is the program's, verbatim, options of tmakit's and "--" included;
// the exit status is the program's.
TEST_F(Watch, TheCommandGetsItsArgumentsAndGivesItsStatus) {
  Outcome echo = run("/bin/echo a -- --log b --strict", true, "--quiet");
  EXPECT_EQ(echo.status, 0);
  EXPECT_EQ(echo.out, "a -- --log b --strict\n");
  Outcome no_separator = run("", true, "--quiet /bin/echo c --");  // without "--": from the first non-option
  EXPECT_EQ(no_separator.out, "c --\n");
  Outcome status = run("sh -c 'exit 7'", true, "");
  EXPECT_EQ(status.status, 7);
}

// A log that cannot be written is an error that fails the run, not a summary naming an
// empty log: here a file-size limit of 0 makes every write of the log fail (EFBIG, with
// SIGXFSZ ignored); stderr goes to a pipe, which the limit does not touch.
TEST_F(Watch, AFailedLogWriteFailsTheRun) {
  const fs::path log = dir_ / "log.jsonl";
  const std::string cmd = "trap '' XFSZ; ulimit -f 0; env LD_LIBRARY_PATH=" STAND_IN_DIR " TMAKIT_STAND_IN_VERDICTS=" +
                          kVerdicts + " TMAKIT_WATCH_LIBRARY=" WATCH_LIBRARY " " TMAKIT_CLI " watch --log " +
                          log.string() + " -- " WATCH_PROBE " linked replay " + kVerdicts + " 0 5 2>&1 >/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) err.append(buf, n);
  const int s = ::pclose(p);
  EXPECT_EQ(WIFEXITED(s) ? WEXITSTATUS(s) : -1, 2) << err;
  EXPECT_NE(err.find("error: the log " + log.string() + " could not be written (6 records lost)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("[watch.log]"), std::string::npos) << err;
  EXPECT_EQ(err.find("; log: "), std::string::npos) << err;  // the summary does not name the log as if it held it
  EXPECT_EQ(read_file(log), "");
}

TEST_F(Watch, BadUsageIsRefusedBeforeAnythingRuns) {
  Outcome none = run("", true, "--");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no command given"), std::string::npos) << none.err;
  Outcome target = run("true", true, "--target sm_77x");
  EXPECT_EQ(target.status, 2);
  EXPECT_NE(target.err.find("unknown target"), std::string::npos);
  Outcome missing = run("/nonexistent/program", true, "");
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("cannot run /nonexistent/program"), std::string::npos);
  Outcome log = run("true", true, "--log /nonexistent/dir/log.jsonl");
  EXPECT_EQ(log.status, 2);
  EXPECT_NE(log.err.find("--log: error: cannot create"), std::string::npos);
}

}  // namespace
