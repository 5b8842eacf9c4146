// The stores of a record's fields that are more than one operand: a chunk header's ids, a
// tensor map's two halves, an address operand widened (emit.cpp writes the rest of a record).
#include <string>

#include "site.hpp"

namespace tmakit::instrument::detail {

std::string store(const std::string& on, const std::string& rec, uint32_t offset, uint32_t bytes, const std::string& v) {
  return "@" + on + " st.global.b" + std::to_string(bytes * 8) + " [" + rec + "+" + std::to_string(offset) + "], " +
         v + ";";
}

// The lane's ids (bytes 8..31 of a chunk's header; the records after it leave theirs zero): the
// special registers packed into three 64-bit words, two 16-bit fields to a 32-bit half with
// bfi, and written in two stores. A record may go to host-mapped memory, where every store is a
// transaction of its own: ten narrow stores cost more than a record's other fields together.
// `r`, `d`: the first of four 32-bit and three 64-bit registers it may use (none the site's values hold).
void ids(Writer& w, std::vector<std::string>& out, const std::string& on, const std::string& rec, int r, int d) {
  static_assert(kValuesOffset % 16 == 0 && offsetof(Record, ctaid_x) == 8 && offsetof(Record, ctaid_y) == 12 && offsetof(Record, ctaid_z) == 14 &&
                offsetof(Record, tid_x) == 16 && offsetof(Record, tid_y) == 18 && offsetof(Record, tid_z) == 20 &&
                offsetof(Record, cluster_ctarank) == 22 && offsetof(Record, clusterid_x) == 24 &&
                offsetof(Record, clusterid_y) == 28 && offsetof(Record, clusterid_z) == 30);
  // Each word: its low half (a 32-bit register, or two 16-bit ones) and its high half (two 16-bit ones).
  struct Half {
    const char* low;
    const char* high;  // nullptr: `low` is 32 bits
  };
  static constexpr Half kWords[3][2] = {
      {{"%ctaid.x", nullptr}, {"%ctaid.y", "%ctaid.z"}},
      {{"%tid.x", "%tid.y"}, {"%tid.z", "%cluster_ctarank"}},
      {{"%clusterid.x", nullptr}, {"%clusterid.y", "%clusterid.z"}},
  };
  for (int k = 0; k < 3; ++k) {
    std::string half[2];
    for (int h = 0; h < 2; ++h) {
      half[h] = w.r(r + 2 * h);
      out.push_back("mov.u32 " + half[h] + ", " + kWords[k][h].low + ";");
      if (kWords[k][h].high) {
        out.push_back("mov.u32 " + w.r(r + 2 * h + 1) + ", " + kWords[k][h].high + ";");
        out.push_back("bfi.b32 " + half[h] + ", " + w.r(r + 2 * h + 1) + ", " + half[h] + ", 16, 16;");
      }
    }
    out.push_back("mov.b64 " + w.d(d + k) + ", {" + half[0] + ", " + half[1] + "};");
  }
  out.push_back(store(on, rec, 8, 8, w.d(d)));
  out.push_back("@" + on + " st.global.v2.b64 [" + rec + "+16], {" + w.d(d + 1) + ", " + w.d(d + 2) + "};");
}

// The map's 128 bytes as two records (tensor_map_lo, tensor_map_hi) at `rec` and the next;
// leaves `rec` at the record after them. Loaded 8 bytes at a time from the map's own address
// (a map is 64-byte aligned; 8-byte loads need no more than a misplaced one has), only where the
// record is written, so a kernel run without tracing reads nothing extra.
void map_records(std::vector<std::string>& out, const MapRead& m, uint32_t id, const std::string& on,
                 const std::string& rec, const std::string& tmp, const std::string& tmp2) {
  std::string base = m.at.name.empty() ? "" : m.at.name;
  auto at = [&](int64_t byte) {
    int64_t off = m.at.value + byte;
    if (base.empty()) return "[" + std::to_string(off) + "]";
    return "[" + base + (off ? "+" + std::to_string(off) : "") + "]";
  };
  for (TraceOp half : {TraceOp::tensor_map_lo, TraceOp::tensor_map_hi}) {
    const int64_t first = half == TraceOp::tensor_map_lo ? 0 : static_cast<int64_t>(kMapHalfBytes);
    // Loaded 8 bytes at a time, stored 16 (the record's values are 16-byte aligned).
    for (uint32_t k = 0; k < kMapHalfBytes; k += 16) {
      out.push_back("@" + on + " ld" + m.space + ".b64 " + tmp + ", " + at(first + k) + ";");
      out.push_back("@" + on + " ld" + m.space + ".b64 " + tmp2 + ", " + at(first + k + 8) + ";");
      out.push_back("@" + on + " st.global.v2.b64 [" + rec + "+" + std::to_string(kValuesOffset + k) + "], {" + tmp +
                    ", " + tmp2 + "};");
    }
    // The head, with no clock: a half shares its operation's (trace.hpp, Order).
    out.push_back(store(on, rec, 0, 8, std::to_string(id | uint64_t(half) << 32)));
    out.push_back("@" + on + " add.u64 " + rec + ", " + rec + ", " + std::to_string(kRecordBytes) + ";");
  }
}

// `rec` = `records` + `slot` × kRecordBytes, as a shift and an add: ptxas makes them two LEAs,
// where it made mad.wide's multiply four instructions.
void slot_address(std::vector<std::string>& out, const std::string& rec, const std::string& slot, const std::string& records) {
  static_assert(kRecordBytes == 1u << 7, "a record is 128 bytes: the slot shifted by 7");
  out.push_back("cvt.u64.u32 " + rec + ", " + slot + ";");
  out.push_back("shl.b64 " + rec + ", " + rec + ", 7;");
  out.push_back("add.s64 " + rec + ", " + rec + ", " + records + ";");
}

// `t` = the address `s` names (Source::Kind::address): its base, widened, plus its offset.
void address_into(std::vector<std::string>& out, const std::string& t, const Source& s) {
  if (s.name.empty()) out.push_back("mov.u64 " + t + ", " + std::to_string(s.value) + ";");
  else if (!s.base_is_reg) out.push_back("mov.u64 " + t + ", " + s.name + ";");
  else if (s.bits == 64) out.push_back("mov.b64 " + t + ", " + s.name + ";");
  else out.push_back("cvt.u64.u" + std::to_string(s.bits) + " " + t + ", " + s.name + ";");
  if (!s.name.empty() && s.value) out.push_back("add.s64 " + t + ", " + t + ", " + std::to_string(s.value) + ";");
}

}  // namespace tmakit::instrument::detail
