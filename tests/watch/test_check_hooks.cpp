// `tmakit check -- CMD` end to end on a machine with no GPU: check_probe loads a PTX module and
// launches its kernel by every route a program takes, against the stand-in libcuda, whose
// "launch" writes a recorded trace into the host-mapped buffer the library attached. The
// expectations are the contract of docs/check.md (the trace directory), the module's own text
// and site table (tmakit::instrument, called here), and the replay run separately.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "check_hooks_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using check_test::CheckHooks;
using check_test::count;
using check_test::kKernel;
using check_test::kModule;
using check_test::kRefused;
using check_test::Outcome;
using check_test::read_file;

TEST_F(CheckHooks, EveryRouteInstrumentsLoadsTracesAndReports) {
  for (const std::string route : {"linked", "dlsym", "gpa", "runtime", "ex", "library", "link"}) {
    SCOPED_TRACE(route);
    fs::remove_all(dir_ / "saved");
    Outcome r = run(checked(), route + " " + kModule + " " + kKernel);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;  // 1: the replay found something in the made-up trace
    EXPECT_EQ(r.out, "launch 0 sync 0\n");
    auto images = loaded();
    ASSERT_EQ(images.size(), 1u);
    // The module the driver got: the instrumented text (a link's with its module id line).
    if (route == "link") {
      EXPECT_NE(images[0].find("__tmakit_module_id = "), std::string::npos);
    } else {
      EXPECT_EQ(images[0], inst_.text);
    }
    const json m = meta();
    EXPECT_EQ(m["format"], "tmakit-trace/1");
    EXPECT_EQ(m["kernel"], kKernel);
    EXPECT_EQ(m["outcome"], "completed");
    EXPECT_EQ(m["driver_result"], "CUDA_SUCCESS");
    EXPECT_EQ(m["records"], inst_.sites.size());
    EXPECT_EQ(m["next"], inst_.sites.size());
    EXPECT_EQ(m["grid"], json::parse("[4,1,1]"));
    EXPECT_EQ(m["block"], json::parse("[128,1,1]"));
    EXPECT_EQ(m["cluster"], json::parse("[1,1,1]"));
    const fs::path saved = dir_ / "saved" / "launch-0";
    EXPECT_EQ(read_file(saved / "trace.bin"), recorded_);
    EXPECT_EQ(read_file(saved / "sites.json"), tmakit::instrument::sites_json(inst_.sites));
    EXPECT_EQ(read_file(saved / "module.ptx"), images[0]);
    EXPECT_NE(r.err.find("tmakit check: " + kKernel + " <<<(4,1,1), (128,1,1)>>>: completed, " +
                         std::to_string(inst_.sites.size()) + " records"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("tmakit check: 1 launch checked (1 completed, 0 hung, 0 faulted)"), std::string::npos)
        << r.err;
  }
}

// `tmakit check --replay DIR` into `out`: its exit status. Each line of its report is expected
// among the lines a checked run printed (`err`), with its one prefix; the report is not empty.
int replay_matches(const fs::path& dir, const fs::path& out, const std::string& err) {
  const int s = std::system((std::string(TMAKIT_CLI) + " check --replay " + dir.string() + " >" + out.string() + " 2>&1").c_str());
  std::istringstream lines(read_file(out));
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const std::string said = line.starts_with("tmakit check: ") ? line : "tmakit check: " + line;  // one prefix
    EXPECT_NE(err.find(said + "\n"), std::string::npos) << line << "\n---\n" << err;
  }
  EXPECT_GT(n, 0);
  return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

// --no-replay keeps the trace and checks nothing now: the program's own exit status (a checked
// run's is 1 where the replay of this made-up trace finds something), and the saved trace
// replays later to the very report a checked run gives.
TEST_F(CheckHooks, NoReplayKeepsTheTraceForALaterReplay) {
  Outcome r = run(checked("--no-replay"), "gpa " + kModule + " " + kKernel);
  EXPECT_EQ(r.status, 0) << r.err;
  const fs::path saved = dir_ / "saved" / "launch-0";
  EXPECT_EQ(read_file(saved / "trace.bin"), recorded_);
  EXPECT_NE(r.err.find("not replayed (--no-replay): tmakit check --replay " + saved.string() + "\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tmakit check: 1 launch recorded (1 completed, 0 hung, 0 faulted), not replayed"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("checked ("), std::string::npos) << r.err;
  fs::rename(dir_ / "saved", dir_ / "unreplayed");
  const fs::path kept = dir_ / "unreplayed" / "launch-0";
  Outcome checked_run = run(checked(), "gpa " + kModule + " " + kKernel);
  EXPECT_EQ(replay_matches(kept, dir_ / "later.txt", checked_run.err), checked_run.status);
}

TEST_F(CheckHooks, TheReportIsTheReplayOfTheSavedTrace) {
  Outcome r = run(checked(), "gpa " + kModule + " " + kKernel);
  const int replay_status = replay_matches(dir_ / "saved" / "launch-0", dir_ / "replay.txt", r.err);
  EXPECT_TRUE(replay_status == 0 || replay_status == 1) << read_file(dir_ / "replay.txt");
  // The exit status says whether the replay found anything (the program itself exited 0).
  EXPECT_EQ(r.status, replay_status);
}

TEST_F(CheckHooks, LaunchExGivesTheClusterShape) {
  Outcome r = run(checked(), "linked " + kModule + " " + kKernel + " ex");
  EXPECT_EQ(r.out, "launch 0 sync 0\n") << r.err;
  const json m = meta();
  EXPECT_EQ(m["grid"], json::parse("[2,1,1]"));
  EXPECT_EQ(m["cluster"], json::parse("[2,1,1]"));
  EXPECT_EQ(m["dynamic_smem"], 1024);
}

TEST_F(CheckHooks, EachLaunchHasItsOwnTrace) {
  Outcome r = run(checked(), "linked " + kModule + " " + kKernel + " plain 3");
  EXPECT_EQ(r.out, "launch 0 sync 0\nlaunch 0 sync 0\nlaunch 0 sync 0\n") << r.err;
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(meta(n)["records"], inst_.sites.size());  // reset between launches: no records carried over
    EXPECT_EQ(read_file(dir_ / "saved" / ("launch-" + std::to_string(n)) / "trace.bin"), recorded_);
  }
  EXPECT_NE(r.err.find("tmakit check: 3 launches checked (3 completed"), std::string::npos) << r.err;
}

TEST_F(CheckHooks, LaunchesLimitsTheCheckedLaunchesPerKernel) {
  Outcome r = run(checked("--launches 2"), "linked " + kModule + " " + kKernel + " plain 3");
  EXPECT_EQ(r.out, "launch 0 sync 0\nlaunch 0 sync 0\nlaunch 0 sync 0\n") << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "saved" / "launch-1"));
  EXPECT_FALSE(fs::exists(dir_ / "saved" / "launch-2"));  // the third ran unchecked
  EXPECT_NE(r.err.find("tmakit check: 2 launches checked (2 completed"), std::string::npos) << r.err;
  // ... and recorded nothing: its trace words' records address was 0.
  std::ifstream launched(dir_ / "launched.txt");
  std::stringstream lines;
  lines << launched.rdbuf();
  EXPECT_EQ(lines.str(), "recording\nrecording\nnot recording\n");
  // Launches left unrecorded: the module carries its functions' plain copies, which they run
  // (without --launches or --ctas it does not: EveryRouteInstrumentsLoadsTracesAndReports).
  const auto images = loaded();
  ASSERT_FALSE(images.empty());
  const std::string with_copies =
      tmakit::instrument::instrument_module(read_file(kModule), kModule, tmakit::instrument::OpSet::all, true).text;
  EXPECT_NE(with_copies, inst_.text);
  for (const std::string& image : images) EXPECT_EQ(image, with_copies);
}

// --plain-copy overrides the choice: off keeps the module as every checked launch has it even
// with --launches, on gives the copies with every launch checked.
TEST_F(CheckHooks, PlainCopyFollowsTheOption) {
  const std::string with_copies =
      tmakit::instrument::instrument_module(read_file(kModule), kModule, tmakit::instrument::OpSet::all, true).text;
  Outcome off = run(checked("--launches 1 --plain-copy off"), "linked " + kModule + " " + kKernel + " plain 2");
  EXPECT_EQ(off.out, "launch 0 sync 0\nlaunch 0 sync 0\n") << off.err;
  for (const std::string& image : loaded()) EXPECT_EQ(image, inst_.text);
  Outcome on = run(checked("--plain-copy on"), "linked " + kModule + " " + kKernel);
  EXPECT_EQ(on.out, "launch 0 sync 0\n") << on.err;
  const auto images = loaded();
  ASSERT_FALSE(images.empty());
  for (const std::string& image : images) EXPECT_EQ(image, with_copies);
  Outcome bad = run(checked("--plain-copy sometimes"), "linked " + kModule + " " + kKernel);
  EXPECT_EQ(bad.status, 2) << bad.err;
}

TEST_F(CheckHooks, HangIsReportedWhileAliveThenKilled) {
  Outcome r = run(checked("--timeout 0.3"), "linked " + kModule + " " + kKernel, "hang");
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_EQ(r.out, "");  // killed inside cuCtxSynchronize
  EXPECT_GE(r.seconds, 0.3);  // the whole timeout was waited
  EXPECT_LT(r.seconds, 10);
  EXPECT_NE(r.err.find("tmakit check: " + kKernel + " <<<(4,1,1), (128,1,1)>>>: timeout (not finished after 0.3 s) "
                       "(CUDA_ERROR_NOT_READY), " + std::to_string(inst_.sites.size()) + " records"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 launch checked (0 completed, 1 hung, 0 faulted)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exit status 124"), std::string::npos) << r.err;
  const json m = meta();
  EXPECT_EQ(m["outcome"], "timeout");
  EXPECT_EQ(m["records_in"], "device");  // copied while the kernel still ran
  EXPECT_TRUE(m["next"].is_null());  // the driver's next-index read waits for the kernel
  EXPECT_EQ(m["records"], inst_.sites.size());
  EXPECT_EQ(m["timeout_s"], 0.3);
}

// A kernel still running at the first queries is waited for, not called hung (the H100 showed
// a wait loop that gave up after one "not ready").
TEST_F(CheckHooks, ASlowKernelIsWaitedForUntilItCompletes) {
  Outcome r = run(checked("--timeout 5"), "linked " + kModule + " " + kKernel, "slow");
  EXPECT_NE(r.status, 124) << r.err;  // not hung (the fixture's trace has findings: status 1)
  EXPECT_GE(r.seconds, 0.2);
  EXPECT_NE(r.err.find("1 launch checked (1 completed, 0 hung, 0 faulted)"), std::string::npos) << r.err;
  EXPECT_EQ(meta()["outcome"], "completed");
}

// --records host: the records are in host memory, which the fault leaves readable.
TEST_F(CheckHooks, FaultIsReportedAndTheProgramGetsTheError) {
  Outcome r = run(checked("--records host"), "linked " + kModule + " " + kKernel, "fault");
  EXPECT_EQ(r.status, 3) << r.err;  // the probe's own status: its sync got the sticky error
  EXPECT_EQ(r.out, "launch 0 sync 715\n");
  EXPECT_NE(r.err.find(">>>: fault (CUDA_ERROR_ILLEGAL_INSTRUCTION)"), std::string::npos) << r.err;
  const auto& last = inst_.sites.back();  // the recorded trace ends with the last site
  const std::string where =
      last.file.empty() ? "PTX line " + std::to_string(last.ptx_line) : last.file + ":" + std::to_string(last.line);
  EXPECT_NE(r.err.find("the last operation recorded before the fault: " + where + ": " + last.text + " (CTA (0,0,0)"),
            std::string::npos)
      << r.err;
  const json m = meta();
  EXPECT_EQ(m["outcome"], "fault");
  EXPECT_EQ(m["driver_result"], "CUDA_ERROR_ILLEGAL_INSTRUCTION");
  EXPECT_EQ(m["records_in"], "host");
  EXPECT_TRUE(m["next"].is_null());
  EXPECT_EQ(read_file(dir_ / "saved" / "launch-0" / "trace.bin"), recorded_);
}

// --records device: a fault makes device memory unreadable; the report says so and how to
// keep the records, and the replay lists every check as skipped.
TEST_F(CheckHooks, AFaultLosesDeviceRecordsAndSaysHowToKeepThem) {
  Outcome r = run(checked("--records device"), "linked " + kModule + " " + kKernel, "fault");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "launch 0 sync 715\n");  // run once
  EXPECT_NE(r.err.find("the records were in device memory, which the fault made unreadable: run again with --records "
                       "host"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("skipped: every check of this launch: the records were in device memory"), std::string::npos) << r.err;
  const json m = meta();
  EXPECT_EQ(m["records_in"], "device");
  EXPECT_EQ(m["records"], 0);
  EXPECT_EQ(read_file(dir_ / "saved" / "launch-0" / "trace.bin"), "");
}

// The default (--records auto): device memory; a launch that lost its records to a fault has
// the program run once more with host-mapped records, whose report names the last operation.
TEST_F(CheckHooks, AutoRunsTheProgramAgainWithHostRecordsAfterAFault) {
  Outcome r = run(checked(), "linked " + kModule + " " + kKernel, "fault");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "launch 0 sync 715\nlaunch 0 sync 715\n");  // run twice
  EXPECT_NE(r.err.find("tmakit check: 1 launch lost its records in device memory; running the program again with the "
                       "records in host-mapped memory (--records host)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the last operation recorded before the fault: "), std::string::npos) << r.err;
  EXPECT_EQ(meta(0)["records_in"], "device");
  EXPECT_EQ(meta(1)["records_in"], "host");
  EXPECT_EQ(read_file(dir_ / "saved" / "launch-1" / "trace.bin"), recorded_);
  EXPECT_NE(r.err.find("1 launch checked (0 completed, 0 hung, 1 faulted)"), std::string::npos) << r.err;  // the rerun's
}

// --no-replay keeps --records auto's second run: the records lost to the fault are kept from the
// rerun's host-mapped memory, and neither run is replayed.
TEST_F(CheckHooks, NoReplayStillRunsAgainWithHostRecordsAfterAFault) {
  Outcome r = run(checked("--no-replay"), "linked " + kModule + " " + kKernel, "fault");
  EXPECT_EQ(r.out, "launch 0 sync 715\nlaunch 0 sync 715\n") << r.err;  // run twice
  EXPECT_NE(r.err.find("running the program again with the records in host-mapped memory"), std::string::npos) << r.err;
  EXPECT_EQ(meta(1)["records_in"], "host");
  EXPECT_EQ(read_file(dir_ / "saved" / "launch-1" / "trace.bin"), recorded_);
  EXPECT_NE(r.err.find("1 launch recorded (0 completed, 0 hung, 1 faulted), not replayed"), std::string::npos) << r.err;
}

// A hung kernel's device records are copied while it still runs (a stream of the trace's own);
// where that copy cannot finish either, the program runs again with host-mapped records.
TEST_F(CheckHooks, AHangWhoseDeviceRecordsCannotBeCopiedRunsAgainWithHostRecords) {
  Outcome r = run(checked("--timeout 0.3"), "linked " + kModule + " " + kKernel, "hang-nocopy");
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_NE(r.err.find("copying them while the kernel still ran did not finish within 2 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("running the program again with the records in host-mapped memory"), std::string::npos) << r.err;
  EXPECT_EQ(meta(1)["records_in"], "host");
  EXPECT_EQ(meta(1)["records"], inst_.sites.size());
}

// nvcc's PTX of a kernel that calls cuda::ptx through its own helpers (tests/check/kernels/inlined.ptx):
// the fault line names the user's line that called cuda::ptx, not CCCL's header, as the replay
// places findings (docs/check-replay.md, "Places"). The line is found in inlined.cu by its text.
TEST_F(CheckHooks, AFaultInInlinedCodeNamesTheUsersLine) {
  const std::string module = std::string(TMAKIT_SOURCE_DIR) + "/tests/check/kernels/inlined.ptx";
  const auto inst = tmakit::instrument::instrument_module(read_file(module), module);
  ASSERT_EQ(inst.status, 0);
  std::string bin;  // one record per site, up to the tensor copy: the last one recorded
  for (const auto& s : inst.sites) {
    tmakit::instrument::Record r{};
    r.site = s.id;
    r.op = static_cast<uint16_t>(s.op);
    bin.append(reinterpret_cast<const char*>(&r), sizeof r);
    if (s.op == tmakit::instrument::TraceOp::tensor_load) break;
  }
  std::ofstream(dir_ / "recorded.bin", std::ios::binary) << bin;
  int copy_line = 0;
  std::istringstream cu(read_file(std::string(TMAKIT_SOURCE_DIR) + "/tests/check/kernels/inlined.cu"));
  std::string l;
  for (int n = 1; std::getline(cu, l); ++n)
    if (l.find("ptx::cp_async_bulk_tensor(") != std::string::npos) copy_line = n;
  ASSERT_GT(copy_line, 0);
  Outcome r = run(checked(), "linked " + module + " inlined_stage", "fault");
  EXPECT_NE(r.err.find("the last operation recorded before the fault: /tmp/src/inlined.cu:" + std::to_string(copy_line) +
                       ": cp.async.bulk.tensor.2d"),
            std::string::npos)
      << r.err;
}

TEST_F(CheckHooks, NoEffectWithoutCheck) {
  const std::string original = read_file(kModule);
  for (const std::string& prefix : {std::string("env LD_PRELOAD=" WATCH_LIBRARY), std::string(TMAKIT_CLI) + " watch --"}) {
    for (const std::string route : {"linked", "gpa", "library"}) {
      SCOPED_TRACE(prefix + " " + route);
      Outcome r = run(prefix, route + " " + kModule + " " + kKernel);
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out, "launch 0 sync 0\n");
      auto images = loaded();
      ASSERT_EQ(images.size(), 1u);
      EXPECT_EQ(images[0], original);  // byte for byte
      EXPECT_EQ(r.err.find("tmakit check"), std::string::npos) << r.err;
    }
  }
}

TEST_F(CheckHooks, RefusedPtxIsLoadedUnchangedAndSaidOnce) {
  const std::string original = read_file(kRefused);
  Outcome r = run(checked(), "linked " + kRefused + " tma_copy_host_desc plain 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "launch 0 sync 0\nlaunch 0 sync 0\n");
  auto images = loaded();
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0], original);
  EXPECT_EQ(images[1], original);
  EXPECT_EQ(count(r.err, "is loaded as it is, not instrumented:"), 1u) << r.err;
  EXPECT_NE(r.err.find("[ptx.missing-qualifier]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tmakit check: no instrumented kernel was launched"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "saved" / "launch-0"));
}

TEST_F(CheckHooks, CubinWithoutModuleIdRunsUnchecked) {
  std::ofstream(dir_ / "plain.cubin", std::ios::binary) << std::string("\x7f" "ELF") << read_file(kModule);
  Outcome r = run(checked(), "linked " + (dir_ / "plain.cubin").string() + " " + kKernel);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "launch 0 sync 0\n");
  EXPECT_NE(r.err.find("no instrumented kernel was launched"), std::string::npos) << r.err;
}

// nvcc's fatbins (tests/watch/fatbin/: the toolkit's fatbinary over kModule): the PTX inside is
// instrumented and loaded in the fatbin's place, through every loader the runtime may use.
TEST_F(CheckHooks, FatbinPtxIsInstrumentedAndLoadedInItsPlace) {
  const std::string dir = std::string(TMAKIT_SOURCE_DIR) + "/tests/watch/fatbin/";
  std::string first;
  for (const std::string kind : {"zstd", "plain"})
    for (const std::string route : {"linked", "library", "fatbin"}) {
      SCOPED_TRACE(kind + " " + route);
      fs::remove_all(dir_ / "saved");
      Outcome r = run(checked(), route + " " + dir + "debug_wait." + kind + ".fatbin " + kKernel);
      EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
      EXPECT_EQ(r.out, "launch 0 sync 0\n");
      auto images = loaded();
      ASSERT_EQ(images.size(), 1u);
      EXPECT_NE(images[0].find("__tmakit_trace"), std::string::npos);  // instrumented PTX, not the fatbin
      EXPECT_NE(images[0].find(".visible .entry " + kKernel), std::string::npos);
      if (first.empty()) first = images[0];
      EXPECT_EQ(images[0], first);  // the compressed and the plain PTX are the same text
      EXPECT_EQ(meta()["records"], inst_.sites.size());
      EXPECT_NE(r.err.find("tmakit check: 1 launch checked (1 completed"), std::string::npos) << r.err;
    }
}

TEST_F(CheckHooks, FatbinWithoutPtxIsLoadedAsItIsAndSaid) {
  const std::string fatbin = std::string(TMAKIT_SOURCE_DIR) + "/tests/watch/fatbin/debug_wait.cubin.fatbin";
  Outcome r = run(checked(), "linked " + fatbin + " " + kKernel);
  auto images = loaded();
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0], "<fatbin>");  // the stand-in was handed the fatbin itself
  EXPECT_EQ(count(r.err, "kernels of a fatbin are loaded as they are, not checked: it holds cubins (sm_90) and no "
                         "PTX for this GPU; build with -gencode arch=compute_90a,code=[sm_90a,compute_90a]"),
            1u)
      << r.err;
}

TEST_F(CheckHooks, PerThreadStreamAndCooperativeLaunchesAreChecked) {
  for (const std::string how : {"ptsz", "coop"}) {
    SCOPED_TRACE(how);
    fs::remove_all(dir_ / "saved");
    Outcome r = run(checked(), "linked " + kModule + " " + kKernel + " " + how);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    EXPECT_EQ(r.out, "launch 0 sync 0\n");
    EXPECT_EQ(meta()["records"], inst_.sites.size());
    EXPECT_EQ(meta()["grid"], json::parse("[4,1,1]"));
  }
}

// A kernel with __cluster_dims__ (PTX .reqnctapercluster) launched with no cluster attribute
// runs in clusters all the same: the trace says so (the bench suite's multicast kernels).
TEST_F(CheckHooks, TheKernelsOwnClusterShapeIsTheLaunchs) {
  const std::string module = std::string(TMAKIT_SOURCE_DIR) + "/tests/corpus/nvcc/multicast.sm_90a.ptx";
  const std::string kernel =
      "_ZN5bench45_GLOBAL__N__a67abf1d_12_multicast_cu_7aeb2a1210mcast_feedILi2ELi0ELi6EEEvN6tmakit6device9MapHandleEjPhPji";
  Outcome r = run(checked(), "linked " + module + " " + kernel);
  EXPECT_EQ(r.out, "launch 0 sync 0\n") << r.err;
  EXPECT_EQ(meta()["cluster"], json::parse("[2,1,1]"));
  EXPECT_EQ(meta()["grid"], json::parse("[4,1,1]"));
}

TEST(CheckRun, UnusableInput) {
  auto status_of = [](const std::string& args, std::string* err) {
    const fs::path e = fs::temp_directory_path() / ("tmakit-check-cli-" + std::to_string(getpid()));
    const int s = std::system((std::string(TMAKIT_CLI) + " check " + args + " 2>" + e.string() + " >/dev/null").c_str());
    *err = read_file(e);
    fs::remove(e);
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  };
  std::string err;
  EXPECT_EQ(status_of("--", &err), 2);
  EXPECT_NE(err.find("no command given"), std::string::npos) << err;
  EXPECT_EQ(status_of("--timeout 0 -- true", &err), 2);
  EXPECT_NE(err.find("--timeout: error: 0 is not a number of seconds"), std::string::npos) << err;
  EXPECT_EQ(status_of("-- /nonexistent/program", &err), 127);
  EXPECT_NE(err.find("cannot run /nonexistent/program"), std::string::npos) << err;
  EXPECT_EQ(status_of("-- sh -c 'exit 7'", &err), 7);  // the program's own status, its own arguments verbatim
}

}  // namespace
