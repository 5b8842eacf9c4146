// Issue 24, item 3: names users can read. Kernel names demangled and shortened as Nsight's base
// name view does, the driver's refusal named by encode call and CUresult, and a replayed trace's
// source paths shown as they are on this machine (or said to come from the recording one).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tmakit/check/names.hpp"
#include "tmakit/tensor_map/encode_names.hpp"

namespace {

// g++'s name of cutlass::device_kernel<GemmUniversal<GemmUniversal<int, float, 3>,
// GemmUniversal<double, char, 4>, 128>>(…::Params): 286 characters demangled.
const char* kCutlass =
    "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS3_IifLi3EEENS3_IdcLi4EEELi128EEEEEvNT_6ParamsE";

TEST(ReadableNames, ALongCutlassKernelIsDemangledAndShortened) {
  const std::string full = tmakit::check::readable_kernel_name(kCutlass, 1000);
  EXPECT_EQ(full,
            "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::kernel::GemmUniversal<int, "
            "float, 3>, cutlass::gemm::kernel::GemmUniversal<double, char, 4>, 128> >(cutlass::gemm::kernel::"
            "GemmUniversal<cutlass::gemm::kernel::GemmUniversal<int, float, 3>, cutlass::gemm::kernel::"
            "GemmUniversal<double, char, 4>, 128>::Params)");
  const std::string short_name = tmakit::check::readable_kernel_name(kCutlass);
  EXPECT_LE(short_name.size(), 100u) << short_name;
  EXPECT_EQ(short_name, "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<…> >(…)");
  EXPECT_EQ(tmakit::check::readable_kernel_name("seed_bulk"), "seed_bulk");  // plain names stay
  EXPECT_EQ(tmakit::check::readable_kernel_name("_Z9my_kernelPfi"), "my_kernel(float*, int)");
}

// nvcc 13's name of cuda::ptx::mbarrier_init<void> inlined into tests/check/kernels/inlined.cu (its
// .debug_str): a file-local namespace and libcu++'s versioned one that the user never wrote.
TEST(ReadableNames, AnInlinedFunctionLosesTheNamespacesNoOneWrites) {
  const char* init = "_ZN41_INTERNAL_b290a375_10_inlined_cu_ba98402e4cuda3ptx3__413mbarrier_initIvEEvPmRKj";
  EXPECT_EQ(tmakit::check::readable_kernel_name(init, 1000),
            "_INTERNAL_b290a375_10_inlined_cu_ba98402e::cuda::ptx::__4::mbarrier_init<void>(unsigned long*, "
            "unsigned int const&)");
  EXPECT_EQ(tmakit::check::readable_function_name(init, 1000),
            "cuda::ptx::mbarrier_init<void>(unsigned long*, unsigned int const&)");
  EXPECT_EQ(tmakit::check::readable_function_name(init, 40), "cuda::ptx::mbarrier_init<void>(…)");
  EXPECT_EQ(tmakit::check::readable_function_name(init, 30), "cuda::ptx::mbarrier_init<…>(…)");
  EXPECT_EQ(tmakit::check::readable_function_name("_Z5stagePvPKviPmj"),
            "stage(void*, void const*, int, unsigned long*, unsigned int)");
  EXPECT_EQ(tmakit::check::readable_function_name("ns::__x::f"), "ns::__x::f");  // only ::__<digits>:: goes
}

TEST(ReadableNames, TheEncodeCallAndItsResultAreNamed) {
  using tmakit::tensor_map::Encode;
  const std::string t = tmakit::tensor_map::encode_refusal(Encode::tiled, 500, nullptr);
  EXPECT_EQ(t.rfind("cuTensorMapEncodeTiled refused the map: CUDA_ERROR_NOT_FOUND (", 0), 0u) << t;
  EXPECT_EQ(t.find("CUresult("), std::string::npos);
  EXPECT_EQ(tmakit::tensor_map::encode_refusal(Encode::im2col, 1, "CUDA_ERROR_INVALID_VALUE")
                .rfind("cuTensorMapEncodeIm2col refused the map: CUDA_ERROR_INVALID_VALUE", 0),
            0u);
  EXPECT_EQ(tmakit::tensor_map::cu_result_name(12345), "CUresult 12345");
}

TEST(ReadableNames, AReplayedTraceShowsSourcePathsOfThisMachine) {
  // Recorded on the H100 machine in /work/main: its sites name /work/main/tests/gpu/check/….
  const std::string cmd = std::string("cd ") + TMAKIT_SOURCE_DIR + " && " + TMAKIT_BINARY_DIR +
                          "/tools/tmakit/tmakit check --replay tests/vectors/check/init_no_fence 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  EXPECT_NE(out.find("tests/gpu/check/seeded_kernels.cu:"), std::string::npos) << out;
  EXPECT_EQ(out.find("/work/main/"), std::string::npos) << out;
}

}  // namespace
