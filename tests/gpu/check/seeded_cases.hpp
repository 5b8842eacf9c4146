// The seeded cases of check_seeded (docs/check-seeded.md): which kernel of seeded_kernels.cu,
// its map, its launch, and the argument that plants the bug (`seeded`) or leaves it out
// (`clean`). The expected diagnoses are in cases.json beside this file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace check_seeded {

enum class Kernel {
  expect_tx, arrive_count, wrong_parity, coord_granule, dst_offset, multicast_mask, store_fence, overwrite,
  init_fence, tensormap_fence, read_before_wait, bulk,
};

struct Case {
  std::string name;
  Kernel kernel;
  std::string symbol;          // the kernel's (extern "C") name in the PTX
  uint32_t box_x = 32, box_y = 32;  // the map's box (float32 elements)
  bool swizzle128 = false;
  uint32_t cluster = 1;        // CTAs of a cluster (the grid is one cluster)
  int64_t seeded = 0, clean = 0;  // the kernel's seed argument: with the bug, without it
  const char* what;            // the bug, in words
};

inline const std::vector<Case>& cases() {
  static const std::vector<Case> k = {
      {"expect_short16", Kernel::expect_tx, "seed_expect_tx", 32, 32, false, 1, -16, 0,
       "arrive.expect_tx arms 16 bytes fewer than the 4 KiB box delivers"},
      {"expect_short128_8k", Kernel::expect_tx, "seed_expect_tx", 64, 32, false, 1, -128, 0,
       "arrive.expect_tx arms 128 bytes fewer than the 8 KiB box delivers"},
      {"expect_long16", Kernel::expect_tx, "seed_expect_tx", 32, 32, false, 1, 16, 0,
       "arrive.expect_tx arms 16 bytes more than the 4 KiB box delivers"},
      {"arrive_count", Kernel::arrive_count, "seed_arrive_count", 32, 32, false, 1, 2, 1,
       "mbarrier.init for 2 arrivals; one thread arrives"},
      {"wrong_parity", Kernel::wrong_parity, "seed_wrong_parity", 32, 32, false, 1, 1, 0,
       "try_wait.parity 1 on a barrier in its first phase (parity 0): returns at once"},
      {"coord_granule", Kernel::coord_granule, "seed_coord_granule", 32, 32, false, 1, 1, 4,
       "innermost coordinate 1 (4 bytes: off its 16-byte granule)"},
      {"dst_align64", Kernel::dst_offset, "seed_dst_offset", 32, 32, false, 1, 64, 0,
       "tile load into shared memory 64-byte aligned (needs 128)"},
      {"swizzle_phase", Kernel::dst_offset, "seed_dst_offset", 32, 32, true, 1, 128, 0,
       "128B-swizzled load into shared memory 128- but not 1024-byte aligned"},
      {"multicast_mask", Kernel::multicast_mask, "seed_multicast_mask", 32, 32, false, 2, 7, 3,
       "multicast ctaMask 0b111 in a cluster of 2"},
      {"store_no_fence", Kernel::store_fence, "seed_store_fence", 32, 32, false, 1, 0, 1,
       "st.shared then a TMA store with no fence.proxy.async"},
      {"overwrite_before_read", Kernel::overwrite, "seed_overwrite", 32, 32, false, 1, 1, 0,
       "a TMA store's source overwritten before cp.async.bulk.wait_group.read"},
      {"init_no_fence", Kernel::init_fence, "seed_init_fence", 32, 32, false, 2, 0, 1,
       "mbarrier.init with no fence.mbarrier_init before a remote arrive (relaxed cluster barrier)"},
      {"tensormap_no_fence", Kernel::tensormap_fence, "seed_tensormap_fence", 32, 32, false, 1, 0, 1,
       "tensormap.replace in global memory, then a load through the map with no fence.proxy.tensormap"},
      {"read_before_wait", Kernel::read_before_wait, "seed_read_before_wait", 32, 32, false, 1, 1, 0,
       "the load's destination read before the wait"},
      {"bulk_size", Kernel::bulk, "seed_bulk", 32, 32, false, 1, 264, 256,
       "cp.async.bulk of 264 bytes (not a multiple of 16)"},
      {"bulk_src_align", Kernel::bulk, "seed_bulk", 32, 32, false, 1, 8, 0,
       "cp.async.bulk from a global source 8 bytes past 16-byte alignment"},
  };
  return k;
}

}  // namespace check_seeded
