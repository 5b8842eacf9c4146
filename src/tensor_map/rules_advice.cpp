// Advice on maps the driver accepts: boxes larger than the tensor (H5), store
// extents off 16 bytes (H6), the interleave walk, shared-memory alignment, and
// strides that let coordinates alias (Q24).
#include "checker.hpp"

namespace tmakit::tensor_map {
using namespace checker;

void Checker::advisories(int r) {
  if (tiled())
    for (int i = 0; i < r; ++i)
      if (m_.dims[i] >= 1 && m_.box[i] > m_.dims[i] && !in_error(idx("dims", i)) && !in_error(idx("box", i)))
        add("map.box-exceeds-tensor",
            fmt::format("box[{}] = {} is larger than dims[{}] = {}: valid; loads fill the rest, stores skip it", i,
                        m_.box[i], i, m_.dims[i]),
            idx("box", i));
  // H6: stores (and reductions) write whole 16-byte global chunks. im2col_wide has no store form.
  if (r >= 1 && m_.encode != Encode::im2col_wide && m_.interleave == Interleave::none && m_.dims[0] >= 1 &&
      !in_error("dims[0]")) {
    uint64_t gbits = static_cast<uint64_t>(bits_per_element(m_.data_type));
    uint64_t bits = detail::mul_sat(m_.dims[0], gbits);
    if (bits % 128) {
      uint64_t past = (128 - bits % 128 + 7) / 8;
      add("map.store-inner-extent",
          fmt::format("inner extent dims[0] × element size = {} × {} bytes = {} bytes is not a multiple of 16: a "
                      "store or reduction writes the whole last 16-byte chunk, up to {} bytes past each row",
                      m_.dims[0], detail::bytes_text(gbits), detail::bytes_text(bits), past),
          "dims[0]");
    }
  }
  stride_overlap(r);
  std::string phase;
  if (m_.swizzle != Swizzle::none)
    phase = fmt::format("; with swizzle {} the pattern starts at phase 0 only at a multiple of {} bytes",
                        name(m_.swizzle), m_.swizzle_period());
  // Only on a map that can be used: a refused map is never loaded, so where its box would lie in
  // shared memory cannot matter (under `tmakit watch` the note sat beside every refusal).
  if (in_error("")) return;
  add("map.smem-alignment",
      fmt::format("the shared-memory box operand must be {}-byte aligned, not 16 as PTX states{}",
                  m_.smem_alignment(), phase),
      "");
}

// Sorted by stride, each dimension must start past the whole extent of the ones
// below it (stride[k] >= stride[k-1] × dims[k-1], the first one past one element);
// otherwise two coordinates can name the same bytes.
void Checker::stride_overlap(int r) {
  if (r < 2 || m_.interleave != Interleave::none || in_error("dims[") || in_error("strides[")) return;
  struct Dim { uint64_t stride_bits, extent; int i; };
  const uint64_t elem = static_cast<uint64_t>(bits_per_element(m_.data_type));
  std::vector<Dim> ds;
  for (int i = 0; i < r; ++i) {
    if (m_.dims[i] <= 1) continue;  // a dimension of one element cannot alias
    uint64_t sb = i == 0 ? elem : detail::mul_sat(m_.strides[i - 1], 8);
    ds.push_back({sb, m_.dims[i], i});
  }
  std::stable_sort(ds.begin(), ds.end(), [](const Dim& a, const Dim& b) { return a.stride_bits < b.stride_bits; });
  unsigned __int128 below = elem;  // bits spanned by the dimensions already passed (exact: it can pass 2^64)
  std::string below_text = fmt::format("one element ({} bytes)", detail::bytes_text(elem));
  for (const Dim& d : ds) {
    if (d.stride_bits < below) {
      add("map.stride-overlap",
          fmt::format("dimension {} has stride {} bytes, less than the {} bytes of {}: coordinates may alias; loads are "
                      "fine, stores and reductions would write such bytes more than once (Q24)",
                      d.i, detail::bytes_text(d.stride_bits), detail::bytes_text_wide(below), below_text),
          d.i == 0 ? std::string("dims[0]") : idx("strides", d.i - 1));
      return;  // one report is enough
    }
    below = static_cast<unsigned __int128>(d.stride_bits) * d.extent;
    below_text = fmt::format("dimension {} ({} × {} bytes)", d.i, d.extent, detail::bytes_text(d.stride_bits));
  }
}

}  // namespace tmakit::tensor_map
