// tmakit-ptxas, the ptxas wrapper `tmakit check` puts in Triton's way (tools/check/): it
// instruments the PTX it is given, adds the module id, stores the site table, and runs the real
// ptxas with the same arguments; on any failure the real ptxas gets the original. Here the
// "real ptxas" is a script that records its arguments and writes the stand-in's cubin (ELF's
// magic, then the PTX), so check_probe can load the result on the stand-in libcuda; one test
// runs the CUDA toolkit's own ptxas where it is installed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tmakit/check/capture.hpp"
#include "check_test_files.hpp"
#include "tmakit/instrument/instrument.hpp"

namespace {

namespace fs = std::filesystem;

using check_test::kKernel;
using check_test::kModule;
using check_test::kRefused;
using check_test::read_file;

class CheckPtxas : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tmakit-check-ptxas-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fake_ = dir_ / "fake-ptxas";
    std::ofstream(fake_) << "#!/bin/sh\n"
                            "echo \"$@\" >> " << (dir_ / "args.txt").string() << "\n"
                            "[ \"$1\" = --version ] && { echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; }\n"
                            "in=; out=; prev=\n"
                            "for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; case $a in *.ptx) in=$a;; esac; prev=$a; done\n"
                            "[ -n \"$REFUSE_INSTRUMENTED\" ] && case $in in *.tmakit.ptx) exit 255;; esac\n"
                            "printf '\\177ELF' > \"$out\"; cat \"$in\" >> \"$out\"\n";
    fs::permissions(fake_, fs::perms::owner_all);
    fs::copy_file(kModule, dir_ / "kernel.ptx");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  int sh(const std::string& cmd, std::string* err = nullptr) {
    const int s = std::system((cmd + " 2>" + (dir_ / "err.txt").string()).c_str());
    if (err) *err = read_file(dir_ / "err.txt");
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  }
  std::vector<std::string> calls() {
    std::vector<std::string> lines;
    std::istringstream in(read_file(dir_ / "args.txt"));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  fs::path dir_, fake_;
};

TEST_F(CheckPtxas, TritonsRouteUnderTmakitCheck) {
  // What Triton does: $TRITON_PTXAS_PATH --version, then assemble, then load the cubin.
  const std::string in = (dir_ / "kernel.ptx").string(), out = (dir_ / "kernel.cubin").string();
  const std::string script = "\"$TRITON_PTXAS_PATH\" --version >/dev/null && \"$TRITON_PTXAS_PATH\" -lineinfo -v "
                             "--gpu-name=sm_90a " + in + " -o " + out + " && " CHECK_PROBE " linked " + out + " " + kKernel;
  std::string err;
  const int status = sh("env LD_LIBRARY_PATH=" STAND_IN_DIR " TMAKIT_WATCH_LIBRARY=" WATCH_LIBRARY
                        " TMAKIT_STAND_IN_TRACE=/dev/null TMAKIT_PTXAS_WRAPPER=" PTXAS_WRAPPER
                        " TRITON_PTXAS_PATH=" + fake_.string() + " " TMAKIT_CLI " check --save-trace " +
                        (dir_ / "saved").string() + " -- sh -c '" + script + "'", &err);
  EXPECT_EQ(status, 0) << err;
  // The real ptxas got the same arguments, the input replaced by the instrumented file.
  auto c = calls();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], "--version");
  EXPECT_EQ(c[1], "-lineinfo -v --gpu-name=sm_90a " + in + ".tmakit.ptx -o " + out);
  EXPECT_FALSE(fs::exists(in + ".tmakit.ptx"));  // removed after use
  // The cubin holds the instrumented text with the module id; the launch found its site table.
  auto inst = tmakit::instrument::instrument_module(read_file(kModule), in);
  ASSERT_EQ(inst.status, 0);
  uint64_t id = 0;
  const std::string expected = *tmakit::check::add_module_id(inst.text, &id);
  EXPECT_EQ(read_file(out), std::string("\x7f" "ELF") + expected);
  const fs::path saved = dir_ / "saved" / "launch-0";
  EXPECT_EQ(read_file(saved / "sites.json"), tmakit::instrument::sites_json(inst.sites));
  EXPECT_EQ(read_file(saved / "module.ptx"), expected);
  EXPECT_EQ(nlohmann::json::parse(read_file(saved / "meta.json"))["kernel"], kKernel);
  EXPECT_NE(err.find("1 launch checked"), std::string::npos) << err;
}

// The functions' plain copies on Triton's route, as for modules the program loads: with --plain-copy
// on, and under auto where some calls record nothing (--launches N, --ctas); never with off.
TEST_F(CheckPtxas, PlainCopiesWhereCallsGoUnrecorded) {
  const std::string in = (dir_ / "kernel.ptx").string(), out = (dir_ / "o.cubin").string();
  auto assembled = [&](const std::string& env) {
    std::string err;
    EXPECT_EQ(sh("env TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + fake_.string() + " " + env + " "
                 PTXAS_WRAPPER " --gpu-name=sm_90a " + in + " -o " + out, &err), 0) << err;
    return read_file(out);
  };
  auto expected = [&](bool copies) {
    auto inst = tmakit::instrument::instrument_module(read_file(kModule), in, tmakit::instrument::OpSet::all, copies);
    uint64_t id = 0;
    return std::string("\x7f" "ELF") + *tmakit::check::add_module_id(inst.text, &id);
  };
  EXPECT_EQ(assembled("TMAKIT_CHECK_PLAIN_COPY=on"), expected(true));
  EXPECT_EQ(assembled("TMAKIT_CHECK_PLAIN_COPY=auto TMAKIT_CHECK_LAUNCHES=1"), expected(true));
  EXPECT_EQ(assembled("TMAKIT_CHECK_PLAIN_COPY=auto TMAKIT_CHECK_CTAS=0-2"), expected(true));
  EXPECT_EQ(assembled("TMAKIT_CHECK_PLAIN_COPY=auto TMAKIT_CHECK_LAUNCHES=0"), expected(false));
  EXPECT_EQ(assembled("TMAKIT_CHECK_PLAIN_COPY=off TMAKIT_CHECK_LAUNCHES=1"), expected(false));
  EXPECT_NE(expected(true), expected(false));
}

TEST_F(CheckPtxas, RefusedModuleIsAssembledAsItIs) {
  fs::copy_file(kRefused, dir_ / "broken.ptx");
  const std::string in = (dir_ / "broken.ptx").string();
  std::string err;
  EXPECT_EQ(sh("env TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + fake_.string() + " " PTXAS_WRAPPER
               " --gpu-name=sm_90a " + in + " -o " + (dir_ / "o.cubin").string(), &err), 0);
  ASSERT_EQ(calls().size(), 1u);
  EXPECT_EQ(calls()[0], "--gpu-name=sm_90a " + in + " -o " + (dir_ / "o.cubin").string());
  EXPECT_NE(err.find("is assembled as it is, not instrumented: "), std::string::npos) << err;
  EXPECT_NE(err.find("[ptx.missing-qualifier]"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "modules"));
}

TEST_F(CheckPtxas, RealPtxasRefusingTheInstrumentedModuleGetsTheOriginal) {
  const std::string in = (dir_ / "kernel.ptx").string(), out = (dir_ / "o.cubin").string();
  std::string err;
  EXPECT_EQ(sh("env REFUSE_INSTRUMENTED=1 TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + fake_.string() +
               " " PTXAS_WRAPPER " --gpu-name=sm_90a " + in + " -o " + out, &err), 0);
  auto c = calls();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1], "--gpu-name=sm_90a " + in + " -o " + out);
  EXPECT_EQ(read_file(out), std::string("\x7f" "ELF") + read_file(kModule));
  EXPECT_NE(err.find("refused the instrumented"), std::string::npos) << err;
}

// --ptx-filter on Triton's route: the filter's text is what gets instrumented, and what ptxas
// assembles when it refuses the instrumented one; a failing filter leaves the input as it was.
TEST_F(CheckPtxas, ThePtxFiltersTextStandsForTheInput) {
  const std::string in = (dir_ / "kernel.ptx").string(), out = (dir_ / "o.cubin").string();
  std::string edited = read_file(kModule);
  const size_t at = edited.find("\tfence.mbarrier_init.release.cluster;");
  ASSERT_NE(at, std::string::npos);
  edited.erase(at, edited.find('\n', at) + 1 - at);  // what the filter's sed does
  const std::string env = "env TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + fake_.string() +
                          " TMAKIT_CHECK_PTX_FILTER='sed /fence.mbarrier_init/d' ";
  std::string err;
  EXPECT_EQ(sh(env + PTXAS_WRAPPER " --gpu-name=sm_90a " + in + " -o " + out, &err), 0) << err;
  auto inst = tmakit::instrument::instrument_module(edited, in);
  ASSERT_EQ(inst.status, 0);
  uint64_t id = 0;
  EXPECT_EQ(read_file(out), std::string("\x7f" "ELF") + *tmakit::check::add_module_id(inst.text, &id));
  EXPECT_NE(err.find("tmakit check: " + in + ": the PTX filter `sed /fence.mbarrier_init/d` changed it (68 lines, 69 "
                     "before)"), std::string::npos) << err;
  EXPECT_EQ(read_file(in), read_file(kModule));  // the input itself is untouched
  EXPECT_FALSE(fs::exists(in + ".tmakit-filtered.ptx"));  // removed after use

  fs::remove(dir_ / "args.txt");
  EXPECT_EQ(sh("env REFUSE_INSTRUMENTED=1 " + env + PTXAS_WRAPPER " --gpu-name=sm_90a " + in + " -o " + out, &err), 0);
  auto c = calls();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1], "--gpu-name=sm_90a " + in + ".tmakit-filtered.ptx -o " + out);
  EXPECT_EQ(read_file(out), std::string("\x7f" "ELF") + edited);
  EXPECT_NE(err.find("assembling the PTX filter's text"), std::string::npos) << err;

  EXPECT_EQ(sh("env TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + fake_.string() +
               " TMAKIT_CHECK_PTX_FILTER=false " PTXAS_WRAPPER " --gpu-name=sm_90a " + in + " -o " + out, &err), 0);
  inst = tmakit::instrument::instrument_module(read_file(kModule), in);
  EXPECT_EQ(read_file(out), std::string("\x7f" "ELF") + *tmakit::check::add_module_id(inst.text, &id));
  EXPECT_NE(err.find("the PTX filter `false` failed: it exited with status 1; the module is used as it was "
                     "[check.ptx-filter]"), std::string::npos) << err;
}

TEST_F(CheckPtxas, WithoutCheckEverythingPassesThrough) {
  const std::string args = "-v --gpu-name=sm_90a " + (dir_ / "kernel.ptx").string() + " -o " + (dir_ / "o").string();
  EXPECT_EQ(sh("env -u TMAKIT_CHECK_DIR TMAKIT_REAL_PTXAS=" + fake_.string() + " " PTXAS_WRAPPER " " + args), 0);
  ASSERT_EQ(calls().size(), 1u);
  EXPECT_EQ(calls()[0], args);
  EXPECT_EQ(read_file(dir_ / "o"), std::string("\x7f" "ELF") + read_file(kModule));
}

// Looking for Triton's ptxas, the wrapper runs its parent's Python interpreter: from an
// argument vector, so a path holding quotes and a command runs nothing. The "interpreter"
// here is a copy of /bin/sh named python in a folder whose name would break out of quotes.
TEST_F(CheckPtxas, TheParentInterpretersPathRunsNoShell) {
  const fs::path odd = dir_ / "x'; touch INJECTED; '";
  fs::create_directories(odd);
  fs::copy_file("/bin/sh", odd / "python");
  fs::create_directories(dir_ / "bin");
  fs::copy_file(fake_, dir_ / "bin" / "ptxas");
  std::ofstream(dir_ / "run.sh") << "cd \"" << dir_.string() << "\" && env -u TMAKIT_REAL_PTXAS PATH=\""
                                 << (dir_ / "bin").string() << ":/usr/bin:/bin\" \"" << (odd / "python").string()
                                 << "\" -c '\"$0\" --version; true' " PTXAS_WRAPPER "\n";
  std::string err;
  EXPECT_EQ(sh("sh " + (dir_ / "run.sh").string(), &err), 0) << err;
  EXPECT_FALSE(fs::exists(dir_ / "INJECTED"));
  EXPECT_FALSE(fs::exists(odd / "INJECTED"));
  ASSERT_EQ(calls().size(), 1u) << err;  // the ptxas on PATH still ran
  EXPECT_EQ(calls()[0], "--version");
}

TEST_F(CheckPtxas, TheToolkitsPtxasAcceptsTheModuleId) {
  const fs::path ptxas = "/usr/local/cuda/bin/ptxas";
  if (!fs::exists(ptxas)) GTEST_SKIP() << "no CUDA toolkit ptxas here";
  std::string err;
  const fs::path out = dir_ / "kernel.cubin";
  EXPECT_EQ(sh("env TMAKIT_CHECK_DIR=" + dir_.string() + " TMAKIT_REAL_PTXAS=" + ptxas.string() + " " PTXAS_WRAPPER
               " -lineinfo --gpu-name=sm_90a " + (dir_ / "kernel.ptx").string() + " -o " + out.string(), &err), 0)
      << err;
  const std::string cubin = read_file(out);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(cubin.find("__tmakit_module_id"), std::string::npos);  // the symbol the host side asks for
  EXPECT_NE(cubin.find("__tmakit_trace"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "modules"), fs::directory_iterator()), 2);
}

}  // namespace

#ifdef CHECK_EXAMPLE
// cmake/TmakitInstrument.cmake: examples/check built with tmakit_instrument_ptx embeds the
// instrumented PTX with its site table; under tmakit check the library takes both from the text
// (no second instrumentation), without it the text is loaded as it is.
TEST_F(CheckPtxas, CmakeFunctionsEmbeddedModuleIsChecked) {
  const fs::path built = fs::path(CHECK_EXAMPLE).parent_path() / "tmakit" / "bulk_copy.tmakit.ptx";
  const std::string embedded = read_file(built);
  const size_t at = embedded.rfind("// tmakit-sites: ");
  ASSERT_NE(at, std::string::npos);
  const std::string env = "env LD_LIBRARY_PATH=" STAND_IN_DIR " TMAKIT_WATCH_LIBRARY=" WATCH_LIBRARY
                          " TMAKIT_STAND_IN_TRACE=/dev/null TMAKIT_STAND_IN_LOADED=" + (dir_ / "loaded.txt").string();
  std::string err;
  EXPECT_EQ(sh(env + " " TMAKIT_CLI " check --save-trace " + (dir_ / "saved").string() + " -- " CHECK_EXAMPLE
               " >" + (dir_ / "out.txt").string(), &err), 0) << err;
  EXPECT_EQ(read_file(dir_ / "out.txt"), "check_example: bulk_copy ran\n");
  EXPECT_EQ(read_file(dir_ / "loaded.txt"), embedded + '\0');  // loaded as built, not instrumented again
  const fs::path saved = dir_ / "saved" / "launch-0";
  EXPECT_EQ(nlohmann::json::parse(read_file(saved / "sites.json")),
            nlohmann::json::parse(embedded.substr(at + 17, embedded.find('\n', at) - at - 17)));
  EXPECT_EQ(nlohmann::json::parse(read_file(saved / "meta.json"))["kernel"], "bulk_copy");
  EXPECT_NE(err.find("1 launch checked"), std::string::npos) << err;
  // Its sites are the kernel's own: init, fence, arrive.expect_tx, the copy, the wait.
  const auto sites = nlohmann::json::parse(read_file(saved / "sites.json"))["sites"];
  std::vector<std::string> ops;
  for (const auto& s : sites) ops.push_back(s["op"]);
  EXPECT_EQ(ops, (std::vector<std::string>{"mbar_init", "fence_proxy_async", "mbar_arrive", "bulk_copy", "mbar_try_wait"}));
  // -lineinfo: every site has a source line. nvcc's .loc of an inlined cuda::ptx call names
  // CCCL's header; its inlined_at chain reaches the example's own line of that call (docs/check.md).
  std::vector<std::string> source;
  std::istringstream cu(read_file(fs::path(TMAKIT_SOURCE_DIR) / "examples/check/bulk_copy.cu"));
  for (std::string l; std::getline(cu, l);) source.push_back(l);
  for (const auto& s : sites) {
    EXPECT_GT(s.value("loc", nlohmann::json::object()).value("line", 0), 0) << s.dump();
    ASSERT_EQ(s["inlined_at"].size(), 1u) << s.dump();
    const auto& user = s["inlined_at"][0];
    EXPECT_EQ(fs::path(user["file"].get<std::string>()).filename(), "bulk_copy.cu") << s.dump();
    const int line = user["line"];
    ASSERT_TRUE(line >= 1 && line <= static_cast<int>(source.size())) << s.dump();
    EXPECT_NE(source[line - 1].find("ptx::"), std::string::npos) << source[line - 1];  // the call of cuda::ptx
  }

  fs::remove(dir_ / "loaded.txt");
  EXPECT_EQ(sh(env + " " CHECK_EXAMPLE " >/dev/null", &err), 0) << err;  // without tmakit check
  EXPECT_EQ(read_file(dir_ / "loaded.txt"), embedded + '\0');
  EXPECT_EQ(err, "");

  if (fs::exists("/usr/local/cuda/bin/ptxas")) {  // the comment line is PTX like any other
    EXPECT_EQ(sh("/usr/local/cuda/bin/ptxas --gpu-name=sm_90a " + built.string() + " -o " + (dir_ / "e.cubin").string(),
                 &err), 0) << err;
  }
}
#endif
