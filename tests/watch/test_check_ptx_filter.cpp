// `tmakit check --ptx-filter CMD` (docs/check.md, "Mutation testing") on the stand-in libcuda:
// the module the driver gets is the filter's text, instrumented, by every loading route; a filter
// that fails in any way leaves the module as it was and is said once; the ptxas wrapper filters
// too. The expected images are made here: the filter's edit applied in C++, then instrumented.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "check_hooks_fixture.hpp"
#include "tmakit/check/capture.hpp"

namespace {

namespace fs = std::filesystem;
using check_test::count;
using check_test::kKernel;
using check_test::kModule;
using check_test::Outcome;
using check_test::read_file;

// The edit the filter scripts below make with sed: the line of the barrier's init fence goes.
std::string without_init_fence(const std::string& ptx) {
  const size_t at = ptx.find("\tfence.mbarrier_init.release.cluster;");
  EXPECT_NE(at, std::string::npos);
  const size_t end = ptx.find('\n', at);
  return ptx.substr(0, at) + ptx.substr(end + 1);
}

class CheckPtxFilter : public check_test::CheckHooks {
 protected:
  // A shell script in the test's folder, made executable; its path.
  std::string script(const std::string& name, const std::string& body) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  // tmakit check with --ptx-filter CMD (quoted for the shell) and the saved trace.
  std::string filtered(const std::string& cmd, const std::string& env = "") {
    return (env.empty() ? "" : "env " + env + " ") + checked("--ptx-filter '" + cmd + "'");
  }
  std::string edit_ = "sed '/fence.mbarrier_init/d'";
};

TEST_F(CheckPtxFilter, TheFiltersTextIsInstrumentedAndLoadedByEveryRoute) {
  const std::string filter = script("drop-fence.sh", edit_);
  const auto expected = tmakit::instrument::instrument_module(without_init_fence(read_file(kModule)), kModule);
  ASSERT_EQ(expected.status, 0);
  ASSERT_EQ(expected.sites.size() + 1, inst_.sites.size());  // the fence had a site of its own
  record(expected);
  for (const std::string route : {"linked", "library", "ex", "link"}) {
    SCOPED_TRACE(route);
    fs::remove_all(dir_ / "saved");
    Outcome r = run(filtered(filter), route + " " + kModule + " " + kKernel);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    EXPECT_EQ(r.out, "launch 0 sync 0\n");
    auto images = loaded();
    ASSERT_EQ(images.size(), 1u);
    if (route == "link") {
      uint64_t id = 0;
      EXPECT_EQ(images[0], *tmakit::check::add_module_id(expected.text, &id));
    } else {
      EXPECT_EQ(images[0], expected.text);
    }
    EXPECT_EQ(read_file(dir_ / "saved" / "launch-0" / "sites.json"), tmakit::instrument::sites_json(expected.sites));
    EXPECT_EQ(meta()["records"], expected.sites.size());
    EXPECT_EQ(count(r.err, "the PTX filter `" + filter + "` changed it (68 lines, 69 before); its text stands in the "
                    "module's place"), 1u) << r.err;
  }
}

TEST_F(CheckPtxFilter, AFatbinsPtxIsFiltered) {
  const std::string filter = script("drop-fence.sh", edit_);
  const std::string fatbin = std::string(TMAKIT_SOURCE_DIR) + "/tests/watch/fatbin/debug_wait.plain.fatbin";
  record(tmakit::instrument::instrument_module(without_init_fence(read_file(kModule)), kModule));
  Outcome r = run(filtered(filter), "linked " + fatbin + " " + kKernel);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  auto images = loaded();
  ASSERT_EQ(images.size(), 1u);
  EXPECT_NE(images[0].find("__tmakit_trace"), std::string::npos);
  EXPECT_EQ(images[0].find("fence.mbarrier_init"), std::string::npos);  // the filter's edit is there
  EXPECT_NE(r.err.find("fatbin-0.ptx: the PTX filter `" + filter + "` changed it"), std::string::npos) << r.err;
}

// Every way a filter can fail leaves the module as it was (instrumented as without a filter),
// said once however often the module is loaded, and the program runs on.
TEST_F(CheckPtxFilter, AFailingFilterLeavesTheModuleAsItWasAndIsSaidOnce) {
  struct Case {
    std::string name, body, env, said;
  };
  const std::vector<Case> cases = {
      {"fails", "cat >/dev/null; echo 'mutant x: no such place' >&2; exit 3", "",
       "failed: it exited with status 3 (its last line on standard error: mutant x: no such place)"},
      {"hangs", "exec sleep 30", "TMAKIT_CHECK_PTX_FILTER_TIMEOUT=0.5", "failed: it did not finish within 0.5 s (killed)"},
      {"not-ptx", "echo hello", "", "failed: its output (6 bytes) is not PTX: it has no .version and .target"},
      {"nothing", "cat >/dev/null", "", "failed: it wrote nothing on its standard output"},
      {"killed", "kill -9 $$", "", "failed: it was ended by signal 9"},
      {"endless", "exec yes", "", "failed: it wrote more than 67108864 bytes, the most a module may have (killed)"},
      {"nul", "printf '.version 8.0\\n.target sm_90a\\n\\000'", "", "failed: its output holds a NUL byte"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string filter = script(c.name + ".sh", c.body);
    Outcome r = run(filtered(filter, c.env), "linked " + kModule + " " + kKernel + " plain 2");
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    EXPECT_EQ(r.out, "launch 0 sync 0\nlaunch 0 sync 0\n") << r.err;
    auto images = loaded();
    ASSERT_EQ(images.size(), 2u);
    EXPECT_EQ(images[0], inst_.text);
    EXPECT_EQ(images[1], inst_.text);
    EXPECT_EQ(count(r.err, "module-0.ptx: the PTX filter `" + filter + "` " + c.said), 1u) << r.err;
    EXPECT_EQ(count(r.err, "the module is used as it was [check.ptx-filter]"), 1u) << r.err;
    EXPECT_LT(r.seconds, 20);
  }
}

// The filter is a child of the program, not checked itself: no preload library, no run folder.
TEST_F(CheckPtxFilter, TheFilterRunsWithoutTheLibraryAndALeftoverVariableIsIgnored) {
  const fs::path env = dir_ / "env.txt";
  const std::string filter = script("env.sh", "env > " + env.string() + "; cat");
  Outcome r = run(filtered(filter), "linked " + kModule + " " + kKernel);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  const std::string seen = read_file(env);
  EXPECT_NE(seen.find("TMAKIT_CHECK_PTX_FILTER=" + filter), std::string::npos) << seen;
  EXPECT_EQ(seen.find("LD_PRELOAD="), std::string::npos) << seen;
  EXPECT_EQ(seen.find("TMAKIT_CHECK_DIR="), std::string::npos) << seen;
  EXPECT_EQ(loaded().at(0), inst_.text);  // unchanged by `cat`: loaded as without a filter, and not said
  EXPECT_EQ(r.err.find("PTX filter"), std::string::npos) << r.err;
  // Without --ptx-filter, the variable from the environment is not a filter.
  fs::remove(env);
  r = run("env TMAKIT_CHECK_PTX_FILTER=" + script("drop.sh", edit_) + " " + checked(), "linked " + kModule + " " + kKernel);
  EXPECT_EQ(loaded().at(0), inst_.text);
  EXPECT_EQ(r.err.find("PTX filter"), std::string::npos) << r.err;
}

TEST_F(CheckPtxFilter, AFilterThatCannotBeRunIsRefusedBeforeTheCommand) {
  const std::string not_executable = (dir_ / "plain.txt").string();
  std::ofstream(not_executable) << "not a program\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" ", "the command is empty"},
      {"/nonexistent/filter", "/nonexistent/filter is not a program this user can run"},
      {not_executable, not_executable + " is not a program this user can run"},
      {"tmakit-no-such-filter-program --x", "tmakit-no-such-filter-program is not found on PATH"},
  };
  for (const auto& [cmd, said] : cases) {
    SCOPED_TRACE(cmd);
    Outcome r = run(std::string(TMAKIT_CLI) + " check --ptx-filter '" + cmd + "' --", "linked " + kModule + " " + kKernel);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");  // the command never ran
    EXPECT_NE(r.err.find("tmakit check: --ptx-filter: error: " + said), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[cli.ptx-filter]"), std::string::npos) << r.err;
  }
}

}  // namespace
