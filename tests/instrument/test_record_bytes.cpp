// The bytes a site's lines put in its records, by a small evaluator of the instructions the
// record writer uses (mov of special registers, bfi, mov.b64 {lo, hi}, add, st.global.b/v2.b64)
// with every special register given a distinct value. Compared with a Record filled field by
// field from trace.hpp, so a packing mistake (a field at the wrong offset, a 16-bit field
// overwriting its neighbour) shows here and not only on the GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

const char* const kModule = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 pmap[128])
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar[1];
	.shared .align 128 .b8 buf[1024];
	mov.u64 %rd1, pmap;
	mbarrier.init.shared::cta.b64 [bar], 32;
	cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [pmap, {%r4}], [bar];
	ret;
}
)";

const std::map<std::string, uint64_t> kSpecial = {
    {"%ctaid.x", 0x01020304}, {"%ctaid.y", 0x1112},       {"%ctaid.z", 0x2122}, {"%tid.x", 0x3132},
    {"%tid.y", 0x4142},       {"%tid.z", 0x5152},         {"%cluster_ctarank", 0x6162},
    {"%clusterid.x", 0x71727374}, {"%clusterid.y", 0x8182}, {"%clusterid.z", 0x9192},
};

// Runs the lines of one site that build and store records, for a thread whose record lands
// at the buffer's start (evaluated from the line that makes the index an address). Values the
// evaluator does not compute read as 0xEE bytes, so a store of one shows.
std::vector<uint8_t> run_site(const std::vector<std::string>& lines, size_t records) {
  std::vector<uint8_t> buf(records * instrument::kRecordBytes, 0);
  std::map<std::string, uint64_t> reg;
  const std::string rec = "%__tmakit_d1";
  reg[rec] = 0;
  auto val = [&](const std::string& x) -> uint64_t {
    if (!x.empty() && (std::isdigit(static_cast<unsigned char>(x[0])) || x[0] == '-')) return std::stoull(x);
    auto it = reg.find(x);
    return it == reg.end() ? 0xEEEEEEEEEEEEEEEEull : it->second;
  };
  auto put = [&](uint64_t at, uint64_t v, int bytes) {
    ASSERT_LE(at + bytes, buf.size());
    std::memcpy(buf.data() + at, &v, bytes);  // little-endian, as the GPU writes
  };
  static const std::regex mov_special(R"(mov\.u32 (\S+), (%[a-z_.]+);)");
  static const std::regex bfi(R"(bfi\.b32 (\S+), (\S+), (\S+), 16, 16;)");
  static const std::regex pack(R"(mov\.b64 (\S+), \{(\S+), (\S+)\};)");
  static const std::regex step(R"(add\.u64 %__tmakit_d1, %__tmakit_d1, 128;)");
  static const std::regex st(R"(st\.global\.b(8|16|32|64) \[%__tmakit_d1\+(\d+)\], (\S+);)");
  static const std::regex st2(R"(st\.global\.v2\.b64 \[%__tmakit_d1\+(\d+)\], \{(\S+), (\S+)\};)");
  bool reserved = false;
  for (const std::string& l : lines) {
    std::smatch g;
    if (!reserved) {  // the operands and the reservation, up to the record's address
      reserved = l.find("mad.lo.u64 %__tmakit_d1, %__tmakit_d1, 128,") != std::string::npos;
      continue;
    }
    if (std::regex_search(l, g, mov_special) && kSpecial.count(g[2])) reg[g[1]] = kSpecial.at(g[2]);
    else if (std::regex_search(l, g, bfi)) reg[g[1]] = (val(g[3]) & 0xFFFF) | (val(g[2]) & 0xFFFF) << 16;
    else if (std::regex_search(l, g, pack)) reg[g[1]] = (val(g[2]) & 0xFFFFFFFF) | val(g[3]) << 32;
    else if (std::regex_search(l, g, step)) reg[rec] += instrument::kRecordBytes;
    else if (std::regex_search(l, g, st2)) put(reg[rec] + std::stoul(g[1]), val(g[2]), 8), put(reg[rec] + std::stoul(g[1]) + 8, val(g[3]), 8);
    else if (std::regex_search(l, g, st)) put(reg[rec] + std::stoul(g[2]), val(g[3]), std::stoi(g[1]) / 8);
  }
  return buf;
}

instrument::Record expected_ids() {
  instrument::Record r{};
  r.ctaid_x = 0x01020304, r.ctaid_y = 0x1112, r.ctaid_z = 0x2122;
  r.tid_x = 0x3132, r.tid_y = 0x4142, r.tid_z = 0x5152, r.cluster_ctarank = 0x6162;
  r.clusterid_x = 0x71727374, r.clusterid_y = 0x8182, r.clusterid_z = 0x9192;
  return r;
}

TEST(InstrumentRecordBytes, IdsAndHeadLandInTheirFields) {
  auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  ASSERT_EQ(r.sites.size(), 2u);

  // mbarrier.init: one record; its values: the barrier's address (shared window), the count.
  auto init = run_site(lines_of_site(r.text, 0), 1);
  instrument::Record want = expected_ids();
  want.site = 0;
  want.op = static_cast<uint16_t>(instrument::TraceOp::mbar_init);
  std::vector<uint8_t> bytes(sizeof want);
  std::memcpy(bytes.data(), &want, sizeof want);
  // Bytes 0..31 (head and ids) exactly; the values are the table's business (other tests).
  EXPECT_EQ(std::vector<uint8_t>(init.begin(), init.begin() + 32), std::vector<uint8_t>(bytes.begin(), bytes.begin() + 32));

  // The tensor load: its map's two halves, then its own record, each with the same ids.
  auto load = run_site(lines_of_site(r.text, 1), 3);
  const instrument::TraceOp ops[3] = {instrument::TraceOp::tensor_map_lo, instrument::TraceOp::tensor_map_hi,
                                      instrument::TraceOp::tensor_load};
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    want.site = 1;
    want.op = static_cast<uint16_t>(ops[k]);
    std::memcpy(bytes.data(), &want, sizeof want);
    const auto at = load.begin() + k * instrument::kRecordBytes;
    EXPECT_EQ(std::vector<uint8_t>(at, at + 32), std::vector<uint8_t>(bytes.begin(), bytes.begin() + 32));
  }
}

}  // namespace
