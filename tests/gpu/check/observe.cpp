// What check_seeded prints about a completed kernel: the bytes that landed against those that
// should have, counted here from the source tensor (value = its element index) independently
// of the model.
#include <string>

#include "run.hpp"

namespace check_seeded {
namespace {

constexpr uint32_t kSide = 256;

// The box at (x, 0) of the source tensor, row by row, as a dense tile.
std::vector<float> tile(const std::vector<float>& t, uint32_t x, uint32_t box_x, uint32_t box_y) {
  std::vector<float> v;
  for (uint32_t r = 0; r < box_y; ++r)
    for (uint32_t c = 0; c < box_x; ++c) v.push_back(x + c < kSide ? t[r * kSide + x + c] : 0.0f);
  return v;
}

size_t matching(const std::vector<float>& got, const std::vector<float>& want, size_t offset = 0) {
  size_t n = 0;
  for (size_t i = 0; i < want.size() && offset + i < got.size(); ++i) n += got[offset + i] == want[i];
  return n;
}

std::string of(size_t n, size_t total, const std::string& what) {
  return std::to_string(n) + " of " + std::to_string(total) + " floats " + what;
}

// A 128B-swizzled box of 128-byte rows as it lands in shared memory when the swizzle's line
// index starts at `phase`: the 16-byte chunk j of row r goes to chunk j ^ ((r + phase) & 7).
std::vector<float> swizzled(const std::vector<float>& dense, uint32_t rows, uint32_t phase) {
  std::vector<float> v(dense.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t j = 0; j < 8; ++j)
      for (uint32_t k = 0; k < 4; ++k) v[r * 32 + (j ^ ((r + phase) & 7)) * 4 + k] = dense[r * 32 + j * 4 + k];
  return v;
}

}  // namespace

std::string observe(const Case& c, bool clean, const std::vector<float>& out, const std::vector<float>& source,
                    const std::vector<float>& other) {
  const auto box = tile(source, 0, c.box_x, c.box_y);
  switch (c.kernel) {
    case Kernel::expect_tx: case Kernel::arrive_count: case Kernel::dst_offset:
      if (c.swizzle128) {
        const uint32_t phase = clean ? 0 : static_cast<uint32_t>(c.seeded / 128);
        return of(matching(out, swizzled(box, c.box_y, 0)), box.size(), "where a 1024-aligned destination puts them") +
               ", " + of(matching(out, swizzled(box, c.box_y, phase)), box.size(),
                         "where the swizzle at this address's phase puts them");
      }
      return of(matching(out, box), box.size(), "of the box as the source holds them");
    case Kernel::wrong_parity: case Kernel::read_before_wait: {
      size_t stale = 0;
      for (size_t i = 0; i < box.size(); ++i) stale += out[i] == -1.0f;
      return of(matching(out, box), box.size(), "read as the source holds them") + ", " +
             of(stale, box.size(), "read before the copy wrote them (-1)");
    }
    case Kernel::coord_granule: {
      const uint32_t x = static_cast<uint32_t>(clean ? c.clean : c.seeded);
      return of(matching(out, tile(source, x, 32, 32)), 1024, "of the box at x = " + std::to_string(x));
    }
    case Kernel::multicast_mask:
      return "rank 0: " + of(matching(out, box), box.size(), "of the box") + "; rank 1: " +
             of(matching(out, box, 1024), box.size(), "of the box");
    case Kernel::store_fence: case Kernel::overwrite: {
      std::vector<float> stored(1024), got;
      for (uint32_t i = 0; i < 1024; ++i) stored[i] = float(i) + 0.5f;
      for (uint32_t r = 0; r < 32; ++r)
        for (uint32_t k = 0; k < 32; ++k) got.push_back(out[r * kSide + k]);
      size_t overwritten = 0;
      for (float f : got) overwritten += f == -2.0f;
      return of(matching(got, stored), 1024, "in global memory as st.shared wrote them") + ", " +
             of(overwritten, 1024, "with the overwriting value (-2)");
    }
    case Kernel::init_fence:
      return out[0] == 1.0f ? "rank 1's wait returned after rank 0's remote arrive" : "rank 1 wrote nothing";
    case Kernel::tensormap_fence: {
      const auto from_other = tile(other, 0, 32, 32);
      return of(matching(out, from_other), 1024, "from the replaced address (the new map)") + ", " +
             of(matching(out, box), 1024, "from the original address (the old map)");
    }
    case Kernel::bulk: {
      const bool misaligned = !clean && c.name == "bulk_src_align";
      const size_t bytes = !clean && c.name == "bulk_size" ? size_t(c.seeded) : 256;
      std::vector<float> want(source.begin(), source.begin() + bytes / 4);
      std::string s = of(matching(out, want), want.size(), "as the source holds them from its start");
      if (misaligned) {
        // 8 bytes past the start: the floats from element 2 on.
        std::vector<float> shifted(source.begin() + 2, source.begin() + 2 + bytes / 4);
        s += ", " + of(matching(out, shifted), shifted.size(), "as they are from the 8-byte-off address");
      }
      return s;
    }
  }
  return "";
}

}  // namespace check_seeded
