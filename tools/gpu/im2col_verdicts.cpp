// The im2col mode of record_driver_verdicts (issue 14): the driver's verdicts on
// im2col (§1.4) and im2col_wide (§1.5) maps, written to
// tests/vectors/driver_verdicts_im2col.jsonl. Random sets (about half valid, the rest
// broken in exactly one rule) plus probes of what the spec leaves open: every
// channels × element-bytes residue mod 16 and 32 with each interleave and swizzle,
// pixel box corners at their limits and one past, pixelsPerColumn against the pixels
// the box holds, element strides, ranks, swizzle spans against channel bytes, and the
// byte limit with and without interleave. "intended_rule" names the rule the set
// breaks as the validator reads it ("none": valid); the recording decides.
#include <algorithm>
#include <vector>

#include "verdict_draws.hpp"

namespace tmakit::gpu_tools::verdicts {
namespace {

constexpr const char* kNone = "none";

// A plain data type of `bytes` bytes per element, drawn among those of that size.
DataType type_of_size(int bytes) {
  std::vector<DataType> fit;
  for (int t = 0; t <= 12; ++t)
    if (elem_bytes(static_cast<DataType>(t)) == bytes) fit.push_back(static_cast<DataType>(t));
  return fit[size_t(irand(0, int(fit.size()) - 1))];
}

// A valid, small im2col (or im2col_wide) map to change one thing in: C = 256 channels,
// spatial extents 4..64, N 1..8, dense strides, corners -1 / 0, 16 channel bytes.
TensorMap frame(Encode encode, DataType t, int rank, Interleave il, Swizzle sw) {
  TensorMap m;
  m.encode = encode;
  m.data_type = t;
  m.rank = rank;
  m.interleave = il;
  m.swizzle = sw;
  const int eb = elem_bytes(t);
  const uint64_t align = il == Interleave::b32 ? 32 : 16;
  m.dims[0] = 256;
  for (int i = 1; i < rank; ++i) m.dims[i] = i == rank - 1 ? urand(1, 8) : urand(4, 64);
  uint64_t stride = round_up(m.dims[0] * eb, align);
  for (int i = 0; i + 1 < rank; ++i) {
    m.strides[i] = stride;
    stride = round_up(stride * m.dims[i + 1], align);
  }
  for (int s = 0; s + 2 < rank; ++s) m.pixel_box_lower[s] = -1, m.pixel_box_upper[s] = 0;
  m.pixel_box_lower_w = -1, m.pixel_box_upper_w = 0;
  m.wide_mode = chance(0.3) ? WideMode::w128 : WideMode::w;
  m.channels_per_pixel = uint32_t(std::max(1, 16 / eb));
  m.pixels_per_column = uint32_t(irand(1, 256));
  m.global_address = base_address + align * urand(0, 64);
  m.l2_promotion = static_cast<L2Promotion>(irand(0, 3));
  return m;
}

Interleave any_interleave() { return static_cast<Interleave>(irand(0, 2)); }
Swizzle any_swizzle() { return static_cast<Swizzle>(irand(0, 3)); }  // the sm_90 ones
Swizzle wide_swizzle() { return chance(0.5) ? Swizzle::b64 : Swizzle::b128; }

// Bytes the channels of one pixel may span without breaking the swizzle-span rule
// (§1.4: interleave none only; kept with interleave too, a separate probe asks).
int channel_byte_room(const TensorMap& m) {
  return m.swizzle == Swizzle::none ? 256 * elem_bytes(m.data_type) : span_of(m.swizzle);
}

// Halves pixelsPerColumn until the box fits the 233,472-byte limit.
void fit_pixels(TensorMap& m) {
  while (box_bytes(m) > kMaxBoxBytes && m.pixels_per_column > 1) m.pixels_per_column /= 2;
}

// --- random sets ---------------------------------------------------------------

TensorMap valid_wide() {
  TensorMap m = frame(Encode::im2col_wide, static_cast<DataType>(irand(0, 12)), irand(3, 5), Interleave::none,
                      wide_swizzle());
  const int eb = elem_bytes(m.data_type);
  m.channels_per_pixel = uint32_t(irand(1, span_of(m.swizzle) / 16) * 16 / eb);
  m.pixels_per_column = uint32_t(chance(0.1) ? 1 : irand(1, 1024));
  for (int i = 0; i < m.rank; ++i) m.element_strides[i] = chance(0.6) ? 1 : irand(1, 8);
  random_extents(m, 16);
  const int64_t X = int64_t(m.dims[1]);
  do {
    m.pixel_box_lower_w = chance(0.5) ? irand(-3, 0) : irand(-32768, 32767);
    m.pixel_box_upper_w = chance(0.5) ? irand(-3, 3) : irand(-32768, 32767);
  } while (X + m.pixel_box_upper_w - m.pixel_box_lower_w < 1);
  m.oob_fill = is_float_type(m.data_type) && chance(0.4) ? OobFill::nan_request_zero_fma : OobFill::zero;
  return m;
}

// Breaks exactly one rule of a valid im2col_wide map ("" when the rule does not apply).
std::string break_wide(TensorMap& m, int rule) {
  const int64_t X = int64_t(std::min<uint64_t>(m.dims[1], kTwo32));
  switch (rule) {
    case 0: return break_one(m, 0);   // rank
    case 1: return break_one(m, 1);   // address
    case 2: return break_one(m, 3);   // stride alignment
    case 3: return break_one(m, 4);   // stride range
    case 4: return break_one(m, 7);   // element strides
    case 5: return break_one(m, 10);  // NaN fill type
    case 6: return break_one(m, 18);  // channel bytes
    case 7: {  // corners in [-32768, 32767]
      const bool low = chance(0.5);
      const int32_t v = chance(0.5) ? -32768 - irand(1, 100) : 32767 + irand(1, 100);
      (low ? m.pixel_box_lower_w : m.pixel_box_upper_w) = v;
      if (X + m.pixel_box_upper_w - m.pixel_box_lower_w < 1) return "";
      return "map.im2col-wide-corner-range";
    }
    case 8: {  // an empty box along W
      m.dims[1] = urand(1, 100);
      m.pixel_box_upper_w = irand(-100, 0);
      m.pixel_box_lower_w = int32_t(int64_t(m.dims[1]) + m.pixel_box_upper_w + irand(0, 3));
      if (m.pixel_box_lower_w > 32767) return "";
      return "map.im2col-box-empty";
    }
    case 9:  // swizzle 64b, 128b or 128b_atom_32b only
      m.swizzle = chance(0.5) ? Swizzle::none : Swizzle::b32;
      if (m.swizzle == Swizzle::b32 && m.channels_per_pixel * elem_bytes(m.data_type) > 32) return "";
      return "map.im2col-wide-swizzle";
    case 10:  // interleave none only
      m.interleave = Interleave::b16;
      return "map.im2col-wide-interleave";
    case 11:
      m.channels_per_pixel = 0;
      return "map.im2col-channels";
    case 12:  // pixelsPerColumn in 1..1024 in mode w (ignored in mode w128)
      if (m.wide_mode == WideMode::w128) return "";
      m.pixels_per_column = chance(0.5) ? 0 : uint32_t(irand(1025, 4096));
      if (box_bytes(m) > kMaxBoxBytes) return "";
      return "map.im2col-pixels";
    case 13: {  // channel bytes past the swizzle span, still a multiple of 16
      const int eb = elem_bytes(m.data_type), span = span_of(m.swizzle);
      const int bytes = span + 16 * irand(1, 8);
      if (bytes / eb > 256) return "";
      m.channels_per_pixel = uint32_t(bytes / eb);
      return "map.swizzle-span";
    }
    case 14:
      m.swizzle = Swizzle::b128_atom_32b;
      return "map.atom-swizzle-target";
  }
  return "";
}
constexpr int kWideRules = 15;

void random_sets(Recorder& rec, int count, bool wide) {
  for (int n = 0; n < count; ++n) {
    TensorMap m = wide ? valid_wide() : valid_im2col(true);
    if (chance(0.5)) {
      rec.emit(m, kNone);
      continue;
    }
    std::string rule;
    TensorMap t;
    for (int attempt = 0; attempt < 50 && rule.empty(); ++attempt) {
      t = m;
      rule = wide ? break_wide(t, irand(0, kWideRules - 1)) : break_one(t, irand(0, kRules - 1));
    }
    if (rule.empty()) rec.emit(m, kNone);
    else rec.emit(t, rule);
  }
}

// --- probes --------------------------------------------------------------------

// Every residue of channels × element bytes mod 32 for element sizes 1, 2, 4, 8, each
// with `draws` (interleave, swizzle) pairs; the bytes stay within the swizzle span.
int channel_residues(Recorder& rec, Encode encode, int draws) {
  int n = 0;
  for (int eb : {1, 2, 4, 8})
    for (int r = 0; r < 32; r += eb)
      for (int d = 0; d < draws; ++d, ++n) {
        const bool wide = encode == Encode::im2col_wide;
        TensorMap m = frame(encode, type_of_size(eb), irand(3, 5), wide ? Interleave::none : any_interleave(),
                            wide ? wide_swizzle() : any_swizzle());
        const int room = channel_byte_room(m);
        int bytes = r;
        while (bytes == 0 || (bytes + 32 <= room && chance(0.5))) bytes += 32;
        m.channels_per_pixel = uint32_t(bytes / eb);
        fit_pixels(m);
        rec.emit(m, bytes % 16 ? "map.im2col-channel-bytes" : kNone);
      }
  return n;
}

// Each corner of each spatial dimension at -lim, lim-1 (valid) and one past, with the
// spatial extent large enough that the box stays non-empty; then both at their limits.
int corner_limits(Recorder& rec, int reps) {
  int n = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (int rank = 3; rank <= 5; ++rank) {
      const int lim = corner_limit(rank);
      for (int s = 0; s + 2 < rank; ++s) {
        for (int v : {-lim, lim - 1, -lim - 1, lim})
          for (bool low : {true, false}) {
            TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), rank, Interleave::none, any_swizzle());
            m.dims[s + 1] = uint64_t(2 * lim + 8);
            for (int i = s + 1; i + 1 < rank; ++i) m.strides[i] = m.strides[i - 1] * m.dims[i];
            m.pixel_box_lower[s] = low ? v : 0;
            m.pixel_box_upper[s] = low ? 0 : v;
            const bool inside = v >= -lim && v <= lim - 1;
            rec.emit(m, inside ? kNone : "map.im2col-corner-range");
            ++n;
          }
        TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), rank, any_interleave(), any_swizzle());
        m.pixel_box_lower[s] = -lim, m.pixel_box_upper[s] = lim - 1;
        rec.emit(m, kNone);
        ++n;
      }
    }
  for (int v : {-32768, 32767, -32769, 32768})
    for (bool low : {true, false})
      for (int rep = 0; rep < reps; ++rep, ++n) {
        TensorMap m = frame(Encode::im2col_wide, type_of_size(1 << irand(0, 3)), irand(3, 5), Interleave::none,
                            wide_swizzle());
        m.dims[1] = 65544;
        for (int i = 1; i + 1 < m.rank; ++i) m.strides[i] = m.strides[i - 1] * m.dims[i];
        (low ? m.pixel_box_lower_w : m.pixel_box_upper_w) = v;
        (low ? m.pixel_box_upper_w : m.pixel_box_lower_w) = 0;
        rec.emit(m, v >= -32768 && v <= 32767 ? kNone : "map.im2col-wide-corner-range");
      }
  return n;
}

// pixelsPerColumn against the pixels the box holds: a 2..4-wide spatial box, N 1..2,
// and pixels at 1, the box, one more, N × box, one more, 1024 and 1025.
int pixels_against_box(Recorder& rec, int reps) {
  int n = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (int rank = 3; rank <= 5; ++rank) {
      TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), rank, any_interleave(), any_swizzle());
      uint64_t box = 1;
      for (int s = 0; s + 2 < rank; ++s) {
        m.dims[s + 1] = urand(2, 4);
        m.pixel_box_lower[s] = 0, m.pixel_box_upper[s] = 0;
        box *= m.dims[s + 1];
      }
      m.dims[rank - 1] = urand(1, 2);
      uint64_t stride = m.strides[0];
      for (int i = 1; i + 1 < rank; ++i) m.strides[i] = stride = stride * m.dims[i];
      const uint64_t all = box * m.dims[rank - 1];
      for (uint64_t p : {uint64_t(1), box, box + 1, all, all + 1, uint64_t(1024), uint64_t(1025)}) {
        m.pixels_per_column = uint32_t(p);
        rec.emit(m, p > 1024 ? "map.im2col-pixels" : kNone);
        ++n;
      }
      // im2col_wide: pixelsPerColumn is ignored in mode w128 (§1.5), checked in mode w.
      TensorMap w = frame(Encode::im2col_wide, m.data_type, rank, Interleave::none, wide_swizzle());
      for (uint32_t p : {0u, 1025u}) {
        w.pixels_per_column = p;
        w.wide_mode = WideMode::w128;
        rec.emit(w, kNone);
        w.wide_mode = WideMode::w;
        rec.emit(w, "map.im2col-pixels");
        n += 2;
      }
    }
  return n;
}

// The 233,472-byte limit counted as channels × pixels × element bytes: exactly at it
// and one pixel past, for four element sizes; with element strides 2 (does the count
// divide?), and with interleave (does it count channels or one slice per pixel?).
int byte_limit(Recorder& rec, int reps) {
  struct At { int eb; uint32_t channels, pixels; };  // channels × pixels × eb = 233,472
  const At at[] = {{4, 228, 256}, {2, 128, 912}, {8, 114, 256}, {1, 256, 912}};
  int n = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (const At& a : at) {
      for (uint32_t extra : {0u, 1u})
        for (bool strided : {false, true}) {
          TensorMap m = frame(Encode::im2col, type_of_size(a.eb), irand(3, 5), Interleave::none, Swizzle::none);
          m.channels_per_pixel = a.channels;
          m.pixels_per_column = a.pixels + extra;
          if (strided) for (int i = 0; i < m.rank; ++i) m.element_strides[i] = 2;
          rec.emit(m, extra ? "map.box-bytes-limit" : kNone);
          ++n;
        }
      // Interleaved: channels × pixels × eb over the limit, pixels × slice far below it.
      TensorMap m = frame(Encode::im2col, type_of_size(a.eb), irand(3, 5),
                          chance(0.5) ? Interleave::b16 : Interleave::b32, Swizzle::none);
      m.channels_per_pixel = a.channels;
      m.pixels_per_column = a.pixels + 1;
      rec.emit(m, kNone);
      ++n;
    }
  return n;
}

// Element strides 0..9 on every dimension of ranks 3..5, also past the extent.
int element_strides(Recorder& rec) {
  int n = 0;
  for (int rank = 3; rank <= 5; ++rank)
    for (int i = 0; i < rank; ++i)
      for (uint32_t e : {0u, 1u, 2u, 5u, 8u, 9u}) {
        TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), rank, any_interleave(), any_swizzle());
        m.element_strides[i] = e;
        if (chance(0.3)) m.element_strides[(i + 1) % rank] = uint32_t(irand(2, 8));
        rec.emit(m, e < 1 || e > 8 ? "map.element-stride-range" : kNone);
        ++n;
      }
  return n;
}

// Ranks 1..5 (im2col needs 3..5), channelsPerPixel 0, 1, 256, 272 (the range without
// breaking the 16-byte rule), and the 128B atom swizzles refused on sm_90.
int ranks_channels_atoms(Recorder& rec, int reps) {
  int n = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int rank = 1; rank <= 5; ++rank, ++n) {
      TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), std::max(rank, 3), Interleave::none,
                          any_swizzle());
      m.rank = rank;
      rec.emit(m, rank < 3 ? "map.im2col-rank" : kNone);
    }
    for (int eb : {1, 2, 4, 8})
      for (uint32_t bytes_per_16 : {0u, 1u, 16u, 17u}) {  // channels in units of 16 bytes' worth
        TensorMap m = frame(Encode::im2col, type_of_size(eb), irand(3, 5), any_interleave(), Swizzle::none);
        m.channels_per_pixel = bytes_per_16 * 16 / uint32_t(eb);
        if (bytes_per_16 == 1 && eb == 1) m.channels_per_pixel = 256;
        m.pixels_per_column = 1;
        const bool in_range = m.channels_per_pixel >= 1 && m.channels_per_pixel <= 256;
        rec.emit(m, in_range ? kNone : "map.im2col-channels");
        ++n;
      }
    for (int s = 4; s <= 6; ++s, ++n) {
      TensorMap m = frame(Encode::im2col, type_of_size(1 << irand(0, 3)), irand(3, 5), Interleave::none,
                          static_cast<Swizzle>(s));
      rec.emit(m, "map.atom-swizzle-target");
    }
  }
  return n;
}

// Channel bytes at span - 16, span, span + 16 and 2 × span for each swizzle, with each
// interleave (§1.4 states the span rule for interleave none; HW4: tiled maps skip it
// with interleave).
int swizzle_spans(Recorder& rec, int reps) {
  int n = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (Swizzle sw : {Swizzle::b32, Swizzle::b64, Swizzle::b128})
      for (int il = 0; il <= 2; ++il)
        for (int delta : {-16, 0, 16, 1000}) {
          const int span = span_of(sw);
          const int bytes = delta == 1000 ? 2 * span : span + delta;
          const int eb = 1 << irand(0, 3);
          if (bytes / eb > 256) continue;
          TensorMap m = frame(Encode::im2col, type_of_size(eb), irand(3, 5), static_cast<Interleave>(il), sw);
          m.channels_per_pixel = uint32_t(bytes / eb);
          fit_pixels(m);
          rec.emit(m, il == 0 && bytes > span ? "map.swizzle-span" : kNone);
          ++n;
        }
  return n;
}

}  // namespace

void record_im2col(Recorder& rec, int count_im2col, int count_wide) {
  int probes = 0;
  probes += channel_residues(rec, Encode::im2col, 3);
  probes += corner_limits(rec, 2);
  probes += pixels_against_box(rec, 3);
  probes += byte_limit(rec, 3);
  probes += element_strides(rec);
  probes += ranks_channels_atoms(rec, 2);
  probes += swizzle_spans(rec, 2);
  int wide_probes = channel_residues(rec, Encode::im2col_wide, 2);
  std::printf("probes: %d, of them %d im2col_wide residues\n", probes + wide_probes, wide_probes);
  // The random sets fill the counts up (the probes above hold a few wide maps too).
  random_sets(rec, std::max(0, count_im2col - probes), false);
  random_sets(rec, std::max(0, count_wide - wide_probes), true);
}

}  // namespace tmakit::gpu_tools::verdicts
