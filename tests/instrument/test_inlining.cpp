// Inlining chains of sites (Site::inlined_at): nvcc's PTX of a kernel written with cuda::ptx
// through the user's helpers (tests/check/kernels/inlined.ptx), whose expected chains are
// read here from its .cu source (the lines and columns of the calls, found by their text);
// hand-written modules for recursion, a parent place no longer in force and chains past the
// cap; the rule that tells library headers from the user's files; the site table's JSON.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

const fs::path kKernels = fs::path(TMAKIT_SOURCE_DIR) / "tests/check/kernels";
const std::string kUserFile = "/tmp/src/inlined.cu";  // where inlined.ptx was compiled
const std::string kCcclHeaders = "/usr/local/cuda-13.0/include/cccl/cuda/__ptx/instructions/generated/";

struct Expected {
  std::string file;
  int line = 0, column = 0;
  std::string function;  // a part of the mangled name ("" for none)
};

// The line and column (1-based, at its first character) of the one line of inlined.cu holding `call`.
Expected at_call(const std::string& call, const std::string& function = "") {
  std::istringstream in(read(kKernels / "inlined.cu"));
  std::string l;
  Expected found;
  for (int n = 1; std::getline(in, l); ++n) {
    const size_t at = l.find(call);
    if (at == std::string::npos) continue;
    EXPECT_EQ(found.line, 0) << call << " is on two lines";
    found = {kUserFile, n, static_cast<int>(l.find_first_not_of(' ')) + 1, function};
  }
  EXPECT_GT(found.line, 0) << call;
  return found;
}

void expect_frames(const instrument::Site& s, const std::vector<Expected>& want) {
  const auto frames = s.frames();
  ASSERT_EQ(frames.size(), want.size()) << s.text;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(s.text + ", frame " + std::to_string(i));
    EXPECT_EQ(frames[i].file, want[i].file);
    if (want[i].line) {
      EXPECT_EQ(frames[i].line, want[i].line);
    }
    if (want[i].column) {
      EXPECT_EQ(frames[i].column, want[i].column);
    }
    if (want[i].function.empty()) {
      EXPECT_EQ(frames[i].function, nullptr);
    } else {
      ASSERT_NE(frames[i].function, nullptr);
      EXPECT_NE(frames[i].function->find(want[i].function), std::string::npos) << *frames[i].function;
    }
  }
}

const instrument::Site& site_with(const instrument::Result& r, const std::string& text) {
  for (const auto& s : r.sites)
    if (s.text.find(text) != std::string::npos) return s;
  ADD_FAILURE() << "no site " << text;
  return r.sites.front();
}

TEST(InstrumentInlining, ChainsOfNvccsPtxReachTheUsersLines) {
  const auto r = instrument::instrument_module(read(kKernels / "inlined.ptx"), "inlined.ptx");
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.sites.size(), 7u);  // init, fence, arrive, the copy, the block barrier, the wait, the shared load
  // The kernel's own lines (in no inlined function), and its helpers' calls with the helper that holds each.
  const Expected kernel_init = at_call("ptx::mbarrier_init(&bar"), kernel_fence = at_call("ptx::fence_mbarrier_init(");
  const Expected kernel_stage = at_call("stage(tile, &map"), kernel_wait = at_call("wait_for(&bar, 0)");
  const Expected stage_arm = at_call("arm(bar, bytes)", "5stage"), stage_load = at_call("load_tile(dst, map, x, 0", "5stage");
  const Expected arm_ptx = at_call("ptx::mbarrier_arrive_expect_tx(", "3arm");
  const Expected load_ptx = at_call("ptx::cp_async_bulk_tensor(", "9load_tile");
  const Expected wait_ptx = at_call("ptx::mbarrier_try_wait_parity(", "8wait_for");
  auto header = [&](const std::string& name) { return Expected{kCcclHeaders + name + ".h", 0, 0, "cuda3ptx"}; };

  expect_frames(site_with(r, "mbarrier.init"), {header("mbarrier_init"), kernel_init});
  expect_frames(site_with(r, "fence.mbarrier_init"), {header("fence_mbarrier_init"), kernel_fence});
  expect_frames(site_with(r, "mbarrier.arrive.expect_tx"), {header("mbarrier_arrive_expect_tx"), arm_ptx, stage_arm, kernel_stage});
  expect_frames(site_with(r, "cp.async.bulk.tensor"), {header("cp_async_bulk_tensor"), load_ptx, stage_load, kernel_stage});
  expect_frames(site_with(r, "mbarrier.try_wait"), {header("mbarrier_try_wait_parity"), wait_ptx, kernel_wait});
  expect_frames(site_with(r, "ld.shared"), {at_call("out[threadIdx.x] = tile")});  // the kernel's own line
  // The innermost function is the cuda::ptx wrapper itself.
  EXPECT_NE(site_with(r, "cp.async.bulk.tensor").loc_function->find("cp_async_bulk_tensor"), std::string::npos);
  // The user's frame: the helper's line that called cuda::ptx, else the kernel's.
  for (const auto& [text, want] : std::vector<std::pair<std::string, Expected>>{
           {"mbarrier.init", kernel_init}, {"mbarrier.arrive", arm_ptx}, {"cp.async.bulk.tensor", load_ptx},
           {"mbarrier.try_wait", wait_ptx}}) {
    const auto frames = site_with(r, text).frames();
    const auto& user = frames[instrument::user_frame(frames)];
    EXPECT_EQ(user.file + ":" + std::to_string(user.line), want.file + ":" + std::to_string(want.line)) << text;
  }
}

// CuTe's recursive templates bring the same place back at several levels of one chain (each level
// links to the one just written); a `.loc` hangs below the function's last location at its
// inlined_at place also where another line is in force, and below a frame of its own where the
// function has none there.
constexpr const char* kRecursive = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k()
{
	.reg .b32 %r<4>;
	mov.u32 %r1, 0;
	.loc 1 10 3
	.loc 2 100 5, function_name $L__info_string0, inlined_at 1 10 3
	.loc 2 200 7, function_name $L__info_string1, inlined_at 2 100 5
	.loc 2 100 5, function_name $L__info_string2+4, inlined_at 2 200 7
	.loc 2 200 7, function_name $L__info_string1, inlined_at 2 100 5
	.loc 3 50 9, function_name $L__info_string3, inlined_at 2 200 7
	mbarrier.init.shared.b64 [%r1], 1;
	.loc 1 12 3
	mbarrier.init.shared.b64 [%r1], 2;
	.loc 2 100 5, function_name $L__info_string0, inlined_at 1 10 3
	mbarrier.init.shared.b64 [%r1], 3;
	.loc 3 60 1, function_name $L__info_string9, inlined_at 1 99 9
	mbarrier.init.shared.b64 [%r1], 4;
	ret;
}
	.file 1 "/home/u/app/k.cu"
	.file 2 "/opt/cutlass/include/cute/algorithm/copy.hpp"
	.file 3 "/usr/local/cuda-13.0/include/cccl/cuda/__ptx/x.h"
	.section .debug_str
	{
$L__info_string0:
.b8 65,0
$L__info_string1:
.b8 66,0
$L__info_string2:
.b8 88,88,88,88,67,0
$L__info_string3:
.b8 68,0
	}
)";

TEST(InstrumentInlining, RecursionAndPlacesOutsideTheChain) {
  const auto r = instrument::instrument_module(kRecursive, "k.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : r.diags.front().message);
  ASSERT_EQ(r.sites.size(), 4u);
  const std::string user = "/home/u/app/k.cu", cute = "/opt/cutlass/include/cute/algorithm/copy.hpp",
                    ptx = "/usr/local/cuda-13.0/include/cccl/cuda/__ptx/x.h";
  expect_frames(r.sites[0], {{ptx, 50, 9, "D"}, {cute, 200, 7, "B"}, {cute, 100, 5, "C"}, {cute, 200, 7, "B"},
                             {cute, 100, 5, "A"}, {user, 10, 3, ""}});
  expect_frames(r.sites[1], {{user, 12, 3, ""}});
  expect_frames(r.sites[2], {{cute, 100, 5, "A"}, {user, 10, 3, ""}});   // 1:10:3 was in force earlier
  expect_frames(r.sites[3], {{ptx, 60, 1, ""}, {user, 99, 9, ""}});      // an unknown label: no name
  for (const auto& s : r.sites) {
    const auto f = s.frames();
    EXPECT_EQ(f[instrument::user_frame(f)].file, user);
  }
  // Names: each once in the table, the frames naming them by index.
  const auto j = nlohmann::json::parse(instrument::sites_json(r.sites));
  std::vector<std::string> names = j["inlined_functions"];
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "C", "D"}));
  const auto& s0 = j["sites"][0];
  EXPECT_EQ(j["inlined_functions"][s0["loc"]["function"].get<size_t>()], "D");
  ASSERT_EQ(s0["inlined_at"].size(), 5u);
  EXPECT_EQ(j["inlined_functions"][s0["inlined_at"][3]["function"].get<size_t>()], "A");
  EXPECT_FALSE(s0["inlined_at"][4].contains("function"));
  EXPECT_EQ(s0["inlined_at"][4]["line"], 10);
  EXPECT_FALSE(j["sites"][1].contains("inlined_at"));
  EXPECT_FALSE(j["sites"][1]["loc"].contains("function"));
}

TEST(InstrumentInlining, ChainsPastTheCapKeepTheOutermostFrames) {
  std::string text = ".version 8.6\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<2>;\n"
                     "\tmov.u32 %r1, 0;\n\t.loc 1 10 3\n";
  std::string parent = "1 10 3";
  for (int level = 100; level < 200; ++level) {
    text += "\t.loc 2 " + std::to_string(level) + " 1, function_name $L__info_string0, inlined_at " + parent + "\n";
    parent = "2 " + std::to_string(level) + " 1";
  }
  text += "\tmbarrier.init.shared.b64 [%r1], 1;\n\tret;\n}\n\t.file 1 \"/u/k.cu\"\n\t.file 2 \"/u/include/cute/x.hpp\"\n"
          "\t.section .debug_str\n\t{\n$L__info_string0:\n.b8 70,0\n\t}\n";
  const auto r = instrument::instrument_module(text, "k.ptx");
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.sites.size(), 1u);
  const auto f = r.sites[0].frames();
  ASSERT_EQ(f.size(), instrument::kMaxFrames);
  EXPECT_EQ(f.front().line, 199);  // the innermost
  // The frames just outside it are the ones dropped: the outer 63 stay, down to level 161.
  EXPECT_EQ(f[1].line, 100 + static_cast<int>(instrument::kMaxFrames) - 3);
  EXPECT_EQ(f[f.size() - 2].line, 100);
  EXPECT_EQ(f.back().file, "/u/k.cu");
  EXPECT_EQ(f.back().line, 10);
}

// Every -lineinfo module of the corpus: a site whose `.loc` (the last before it, read by a
// regex) has inlined_at gets a chain; each chain ends at a line of the PTX function itself
// (no function name), and every frame inside it names its inlined function.
TEST(InstrumentInlining, CorpusChainsEndAtTheFunctionsOwnLines) {
  static const std::regex loc_re(R"(^\s*\.loc\s+\d+\s+\d+\s+\d+(.*)$)");
  size_t chains = 0;
  for (const auto& e : fs::directory_iterator(kCorpus / "nvcc-lineinfo")) {
    SCOPED_TRACE(e.path().filename().string());
    const std::string text = read(e.path());
    const auto r = instrument::instrument_module(text, e.path().filename().string());
    ASSERT_EQ(r.status, 0);
    std::vector<std::string> ls;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) ls.push_back(l);
    for (const auto& s : r.sites) {
      bool inlined = false;
      for (int k = s.ptx_line - 1; k >= 0; --k) {
        std::smatch m;
        if (std::regex_search(ls[k], m, loc_re)) {
          inlined = m[1].str().find("inlined_at") != std::string::npos;
          break;
        }
      }
      EXPECT_EQ(!s.inlined_at.empty(), inlined) << s.ptx_line;
      if (s.inlined_at.empty()) continue;
      ++chains;
      const auto f = s.frames();
      EXPECT_EQ(f.back().function, nullptr) << s.ptx_line;
      EXPECT_FALSE(instrument::library_file(f.back().file)) << f.back().file;
      for (size_t i = 0; i + 1 < f.size(); ++i) EXPECT_NE(f[i].function, nullptr) << s.ptx_line << " frame " << i;
    }
  }
  EXPECT_GT(chains, 100u);
}

TEST(InstrumentInlining, LibraryHeadersAndTheUsersFrame) {
  for (const char* p : {"/usr/local/cuda-13.0/include/cccl/cuda/__ptx/instructions/generated/cp_async_bulk_tensor.h",
                        "/usr/local/cuda/bin/../targets/x86_64-linux/include/sm_20_intrinsics.hpp",
                        "/usr/local/cuda/include/cuda/barrier", "/opt/conda/targets/x86_64-linux/include/cuda_fp16.hpp",
                        "/work/ext/cutlass/include/cute/arch/copy_sm90_tma.hpp",
                        "/home/u/cutlass/include/cutlass/arch/barrier.h", "/home/u/tmakit/include/tmakit/device/copy.cuh",
                        "/usr/include/c++/13/bits/stl_algobase.h",
                        "/home/u/.venv/lib/python3.12/site-packages/triton/language/standard.py",
                        "/home/u/.venv/lib/python3.12/site-packages/nvidia/cu13/include/cccl/cuda/ptx",
                        "include/cute/tensor.hpp"})
    EXPECT_TRUE(instrument::library_file(p)) << p;
  for (const char* p : {"/tmp/src/inlined.cu", "/home/u/cutlass/examples/48_hopper/48_hopper.cu",
                        "/home/u/proj/include/my_kernels.cuh", "/home/u/proj/include/cute.hpp", "/home/u/cuda/proj/k.cu",
                        "/home/u/tmakit/tests/gpu/test_device_library.cu", "/home/u/tmakit/include/tmakit/check/x.hpp",
                        "kernels.py", "", "/home/u/triton_kernels.py"})
    EXPECT_FALSE(instrument::library_file(p)) << p;

  const instrument::SourceFrame lib{"/usr/local/cuda/include/cuda/ptx", 1, 1, nullptr}, mine{"/w/k.cu", 2, 1, nullptr};
  EXPECT_EQ(instrument::user_frame({}), 0u);
  EXPECT_EQ(instrument::user_frame({mine}), 0u);
  EXPECT_EQ(instrument::user_frame({lib, lib, mine, mine}), 2u);  // the innermost of the user's
  EXPECT_EQ(instrument::user_frame({lib, lib}), 1u);              // all a library's: the outermost
  // A CUTLASS kernel is all CUTLASS: its wait's chain as nvcc 13 wrote it for example 48 (the
  // H100 run of tests/gpu/check/cutlass_mutants.py), innermost first. The place is the first frame
  // past the instruction and synchronisation wrappers: the collective mainloop's line.
  auto at = [](const char* f) { return instrument::SourceFrame{std::string("/s/cutlass/include/") + f, 1, 1, nullptr}; };
  const std::vector<instrument::SourceFrame> wait = {
      at("cutlass/arch/barrier.h"), at("cutlass/arch/barrier.h"), at("cutlass/pipeline/sm90_pipeline.hpp"),
      at("cutlass/pipeline/sm90_pipeline.hpp"), at("cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp"),
      at("cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp"), at("cutlass/device_kernel.h")};
  EXPECT_EQ(instrument::user_frame(wait), 4u);
  const std::vector<instrument::SourceFrame> load = {at("cute/arch/copy_sm90_tma.hpp"), at("cute/atom/copy_traits_sm90_tma.hpp"),
                                                     at("cute/algorithm/copy.hpp"),
                                                     at("cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp"),
                                                     at("cutlass/device_kernel.h")};
  EXPECT_EQ(instrument::user_frame(load), 3u);
  // The toolkit's and system headers are wrappers too: past them, the outermost.
  EXPECT_EQ(instrument::user_frame({lib, instrument::SourceFrame{"/usr/include/c++/13/x", 1, 1, nullptr}}), 1u);
}

}  // namespace
