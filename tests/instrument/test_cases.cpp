// Hand-written modules for what the corpus has little of: guards (@p, @!p), a try_wait whose
// result is its own guard, an arrive whose state overwrites its address register, `{ }`
// scopes with scoped registers, statements sharing a line, .maxnreg and a .func, and the
// record layout in the site table.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include <map>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

const char* const kModule = R"(.version 8.6
.target sm_90a
.address_size 64

.func helper(.param .b32 bar)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [bar];
	mbarrier.inval.shared::cta.b64 [%r1+8];
	ret;
}

.visible .entry k(.param .u64 map, .param .u64 src)
.maxnreg 40
.reqntid 128
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<6>;
	.shared .align 8 .b64 bar[2];
	.shared .align 128 .b8 buf[4096];
	ld.param.u64 %rd1, [map];
	ld.param.u64 %rd2, [src];
	mov.u32 %r1, bar;
	mov.u32 %r2, buf;
	setp.eq.u32 %p1, %r3, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 1;
	@%p1 fence.mbarrier_init.release.cluster;
	@!%p2 mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r1], 4096;
	@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [%rd1, {%r4, %r5}], [bar+0];
	@%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2+-16], [%rd2], 256, [%r1];
	{
	.reg .pred P1;
	WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r6;
	@!P1 bra WAIT;
	}
	@%p3 mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], 0;
	fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
	cvt.u64.u32 %rd4, %r1;
	mbarrier.arrive.shared::cta.b64 %rd4, [%rd4];
	st.shared.v4.u32 [buf+16], {%r4, %r5, %r6, %r7}; fence.proxy.async.shared::cta; cp.async.bulk.global.shared::cta.bulk_group [%rd2], [buf], 64;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	ret;
}
)";

const instrument::Site& site(const instrument::Result& r, instrument::TraceOp op, size_t nth = 0) {
  for (const auto& s : r.sites)
    if (s.op == op && nth-- == 0) return s;
  throw std::runtime_error("no such site");
}

// The inserted lines of one site, in order (from its comment to the label its no-record branch
// jumps to, just past the store of its record's first word).
std::vector<std::string> lines_of(const std::string& text, uint32_t id) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  bool on = false;
  while (std::getline(in, l)) {
    if (l.find("// __tmakit site " + std::to_string(id) + ":") != std::string::npos) on = true;
    if (on) out.push_back(l);
    if (on && l.find("$__tmakit_skip_" + std::to_string(id) + ":") != std::string::npos) break;
  }
  return out;
}

size_t index_of(const std::vector<std::string>& lines, const std::string& what) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(what) != std::string::npos) return i;
  return lines.size();
}

TEST(InstrumentCases, GuardsScopesSharedLinesAndFunctions) {
  auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  EXPECT_EQ(strip_inserted(r.text), kModule);
  EXPECT_EQ(r.sites.size(), count_families(kModule, "all") + 2);  // + the two sharing a line with the store
  EXPECT_EQ(count_records(r.text), r.sites.size());
  // The statements sharing a line keep it, each with its record inline.
  EXPECT_NE(r.text.find("/*tmakit:*/"), std::string::npos);

  // @p / @!p: the record is written only where the instruction runs.
  EXPECT_NE(r.text.find("setp.ne.and.u64 %__tmakit_p0, %__tmakit_d0, 0, !%p2;"), std::string::npos);
  EXPECT_NE(r.text.find("setp.ne.and.u64 %__tmakit_p0, %__tmakit_d0, 0, %p1;"), std::string::npos);

  // A try_wait guarded by its own result: the guard is read before the instruction writes it,
  // the result after.
  const auto& guarded_wait = site(r, instrument::TraceOp::mbar_try_wait, 1);
  EXPECT_TRUE(guarded_wait.after);
  auto w = lines_of(r.text, guarded_wait.id);
  size_t inst = index_of(w, "mbarrier.try_wait.parity.shared::cta.b64 %p3");
  ASSERT_LT(inst, w.size());
  EXPECT_LT(index_of(w, ", 0, %p3;"), inst);
  const size_t head = index_of(w, "selp.b64 %__tmakit_d");  // the head: its flags from the result
  ASSERT_LT(head, w.size());
  EXPECT_GT(head, inst);
  EXPECT_NE(w[head].find(", %p3;"), std::string::npos);

  // The scoped try_wait reads its scoped predicate after it, inside the scope.
  auto scoped = lines_of(r.text, site(r, instrument::TraceOp::mbar_try_wait, 0).id);
  size_t selp = index_of(scoped, "selp.b64 %__tmakit_d"), bra = index_of(scoped, "@!P1 bra WAIT;");
  ASSERT_LT(selp, scoped.size());
  EXPECT_NE(scoped[selp].find(", P1;"), std::string::npos);
  EXPECT_EQ(bra, scoped.size());  // the branch comes after the whole record

  // arrive's state overwrites its address register: the address is taken before.
  auto a = lines_of(r.text, site(r, instrument::TraceOp::mbar_arrive, 1).id);
  EXPECT_LT(index_of(a, "mov.b64 %__tmakit_d6, %rd4;"), index_of(a, "mbarrier.arrive.shared::cta.b64 %rd4, [%rd4];"));

  // Registers are declared once a function, in the .func too, and the .maxnreg stays.
  EXPECT_NE(r.text.find(".maxnreg 40\n"), std::string::npos);
  size_t helper = r.text.find(".func helper"), entry = r.text.find(".visible .entry k");
  EXPECT_LT(helper, r.text.find(".reg .b64 %__tmakit_d<", helper));
  EXPECT_LT(r.text.find(".reg .b64 %__tmakit_d<", helper), entry);
  EXPECT_LT(entry, r.text.find(".reg .b64 %__tmakit_d<", entry));

  if (have_ptxas()) {
    std::string log;
    EXPECT_EQ(ptxas(r.text, "sm_90a", fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "cases", &log), 0) << log;
  }
}

TEST(InstrumentCases, FieldsFollowTheTableAndFitTheRecord) {
  auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0);
  const auto& t = site(r, instrument::TraceOp::tensor_load);
  EXPECT_EQ(t.form, "tensor.load.shared::cluster");
  ASSERT_EQ(t.fields.size(), 4u);
  EXPECT_EQ(t.fields[0].name, "dstMem");
  EXPECT_EQ(t.fields[1].name, "tensorMap");
  EXPECT_EQ(t.fields[2].name, "tensorCoords");
  EXPECT_EQ(t.fields[2].count, 2u);
  EXPECT_EQ(t.fields[2].stride, 4u);
  EXPECT_EQ(t.fields[3].name, "mbar");
  // [%r2+-16] on a 32-bit register: the sum in 32 bits (as the instruction forms it), stored in
  // the field's low half.
  const auto& copy = site(r, instrument::TraceOp::bulk_copy);
  auto b = lines_of(r.text, copy.id);
  std::string copy_lines;
  for (const auto& x : b) copy_lines += x + "\n";
  std::smatch g;
  ASSERT_TRUE(std::regex_search(copy_lines, g, std::regex(R"(add\.u32 (%__tmakit_r\d+), %r2, 4294967280;)"))) << copy_lines;
  ASSERT_FALSE(copy.fields.empty());
  ASSERT_EQ(copy.fields[0].name, "dstMem");
  const uint32_t at = copy.fields[0].offset;
  EXPECT_NE(copy_lines.find("st.global.b32 [%__tmakit_d1+" + std::to_string(at) + "], " + g[1].str() + ";"), std::string::npos)
      << copy_lines;
  // The store records its address and the bytes it writes (v4 × 32 bits).
  const auto& st = site(r, instrument::TraceOp::shared_store);
  ASSERT_EQ(st.fields.size(), 2u);
  EXPECT_EQ(st.fields[1].name, "size");
  EXPECT_NE(r.text.find("st.global.b32 [%__tmakit_d1+40], 16;"), std::string::npos);
  for (const auto& s : r.sites) {
    uint32_t at = instrument::kValuesOffset;
    for (const auto& f : s.fields) {
      EXPECT_GE(f.offset, at) << s.text;  // in order, never overlapping
      at = f.offset + f.stride * f.count;
      EXPECT_LE(at, instrument::kRecordBytes) << s.text;
      EXPECT_LE(f.bytes, f.stride) << s.text;
    }
  }
}

TEST(InstrumentCases, OpsSelectTheFamilies) {
  auto copies = instrument::instrument_module(kModule, "k.ptx", instrument::OpSet::copies);
  auto barriers = instrument::instrument_module(kModule, "k.ptx", instrument::OpSet::barriers);
  auto all = instrument::instrument_module(kModule, "k.ptx");
  for (const auto& s : copies.sites) EXPECT_TRUE(s.op <= instrument::TraceOp::wait_group) << s.text;
  for (const auto& s : barriers.sites) EXPECT_TRUE(s.op >= instrument::TraceOp::mbar_init && s.op != instrument::TraceOp::shared_store) << s.text;
  EXPECT_EQ(copies.sites.size() + barriers.sites.size() + 1, all.sites.size());  // + the shared store
}

TEST(InstrumentCases, RefusesWhatItCannotInstrument) {
  std::string no64 = kModule;
  no64.replace(no64.find(".address_size 64\n"), 17, "");
  auto r = instrument::instrument_module(no64, "k.ptx");
  EXPECT_EQ(r.status, 2);
  ASSERT_FALSE(r.diags.empty());
  EXPECT_EQ(r.diags[0].rule, "instrument.address-size");
  EXPECT_TRUE(r.text.empty());

  auto once = instrument::instrument_module(kModule, "k.ptx");
  auto twice = instrument::instrument_module(once.text, "k.ptx");
  EXPECT_EQ(twice.status, 2);
  ASSERT_FALSE(twice.diags.empty());
  EXPECT_EQ(twice.diags[0].rule, "instrument.already");

  std::string bad = kModule;
  bad.replace(bad.find("cp.async.bulk.commit_group;"), 27, "cp.async.bulk.commit_group.bogus;");
  auto lint = instrument::instrument_module(bad, "k.ptx");
  EXPECT_EQ(lint.status, 1);
  ASSERT_FALSE(lint.diags.empty());
  EXPECT_NE(lint.diags[0].where.find("k.ptx:"), std::string::npos);
  EXPECT_TRUE(lint.text.empty());
}

// Ordinary shared accesses get records only where a bulk copy can meet them (docs/check.md,
// "What is recorded"). Each kernel below stores to shared memory once; the comment says
// whether that store is recorded and why.
const char* const kReach = R"(.version 8.6
.target sm_90a
.address_size 64

.extern .func (.param .b32 r) external_helper(.param .b32 a);
.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);

.func stores_then_bulk_store(.param .b32 a)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.b32 %r1, [a];
	st.shared.u32 [%r1], 1;
	cvt.u64.u32 %rd1, %r1;
	cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 16;
	ret;
}

.func only_stores(.param .b32 a)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [a];
	st.shared.u32 [%r1], 2;
	ret;
}

// plain: no bulk copy, no call: not recorded
.visible .entry plain(.param .b32 a)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [a];
	st.shared.u32 [%r1], 3;
	ld.shared.u32 %r2, [%r1];
	ret;
}

// prefetch_only: a prefetch and a commit_group touch no shared memory: not recorded
.visible .entry prefetch_only(.param .u64 a)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [a];
	cp.async.bulk.prefetch.L2.global [%rd1], 256;
	cp.async.bulk.commit_group;
	st.shared.u32 [%r1], 4;
	ret;
}

// printing: vprintf issues no bulk copy: not recorded
.visible .entry printing(.param .b32 a)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	st.shared.u32 [%r1], 5;
	{
	.param .b64 f;
	.param .b64 x;
	.param .b32 r;
	st.param.b64 [f], %rd1;
	st.param.b64 [x], %rd1;
	call.uni (r), vprintf, (f, x);
	}
	ret;
}

// calls_bulk: reaches a bulk store through a call: recorded, here and in the callee
.visible .entry calls_bulk(.param .b32 a)
{
	.reg .b32 %r<3>;
	st.shared.u32 [%r1], 6;
	{
	.param .b32 x;
	st.param.b32 [x], %r1;
	call.uni
	stores_then_bulk_store,
	(
	x
	);
	}
	ret;
}

// loads_tile: a tensor load of its own, and a helper that stores: recorded, both
.visible .entry loads_tile(.param .u64 map)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [map];
	cp.async.bulk.tensor.1d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];
	{
	.param .b32 x;
	st.param.b32 [x], %r1;
	call.uni only_stores, (x);
	}
	ret;
}

// calls_outside: a function of another module may copy anything: recorded
.visible .entry calls_outside(.param .b32 a)
{
	.reg .b32 %r<3>;
	st.shared.u32 [%r1], 8;
	{
	.param .b32 x;
	.param .b32 r;
	st.param.b32 [x], %r1;
	call.uni (r), external_helper, (x);
	}
	ret;
}
)";

TEST(InstrumentCases, SharedAccessesOnlyWhereABulkCopyCanMeetThem) {
  auto r = instrument::instrument_module(kReach, "reach.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  std::map<std::string, int> shared;  // function → its recorded shared accesses
  for (const auto& s : r.sites)
    if (s.op == instrument::TraceOp::shared_store || s.op == instrument::TraceOp::shared_load) shared[s.function]++;
  const std::map<std::string, int> expected = {
      {"stores_then_bulk_store", 1}, {"calls_bulk", 1}, {"only_stores", 1}, {"loads_tile", 0}, {"calls_outside", 1}};
  for (const auto& [fn, n] : expected) EXPECT_EQ(shared[fn], n) << fn;
  for (const char* fn : {"plain", "prefetch_only", "printing"}) EXPECT_EQ(shared.count(fn), 0u) << fn;
  // The bulk operations themselves are recorded wherever they are.
  size_t copies = 0;
  for (const auto& s : r.sites) copies += s.op <= instrument::TraceOp::wait_group;
  EXPECT_EQ(copies, 4u);  // bulk store, prefetch, commit_group, tensor load
}

// CTA barriers (for the race check) are recorded as the shared accesses are: with `--ops all`,
// where a bulk copy can meet those accesses; before the instruction, with the barrier's number
// and, where it names one, its thread count.
const char* const kBarriers = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry tile(.param .u64 dst)
.reqntid 256
{
	.reg .pred %p<3>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	.shared .align 128 .b8 buf[4096];
	ld.param.u64 %rd1, [dst];
	mov.u32 %r1, 128;
	setp.eq.u32 %p1, %r3, 0;
	st.shared.u32 [buf], 1;
	fence.proxy.async.shared::cta;
	bar.sync 0;
	barrier.sync.aligned 1, %r1;
	@%p1 bar.arrive 2, 64;
	bar.red.popc.u32 %r2, 3, %p1;
	barrier.cta.red.and.pred %p2, 4, 128, !%p1;
	bar.warp.sync -1;
	barrier.cluster.arrive;
	barrier.cluster.wait;
	cp.async.bulk.global.shared::cta.bulk_group [%rd1], [buf], 64;
	ret;
}

// plain: no bulk copy: neither its store nor its barrier is recorded
.visible .entry plain(.param .u64 dst)
{
	.reg .b32 %r<2>;
	st.shared.u32 [%r1], 1;
	bar.sync 0;
	ret;
}
)";

TEST(InstrumentCases, CtaBarriersAreRecordedWithTheSharedAccesses) {
  auto r = instrument::instrument_module(kBarriers, "bars.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  EXPECT_EQ(strip_inserted(r.text), kBarriers);
  EXPECT_EQ(r.sites.size(), count_families(kBarriers, "all"));
  struct Want {
    instrument::TraceOp op;
    std::string text;
    std::vector<std::string> fields;
  };
  using instrument::TraceOp;
  const std::vector<Want> want = {{TraceOp::bar_sync, "bar.sync 0;", {"id"}},
                                  {TraceOp::bar_sync, "barrier.sync.aligned 1, %r1;", {"id", "count"}},
                                  {TraceOp::bar_arrive, "@%p1 bar.arrive 2, 64;", {"id", "count"}},
                                  {TraceOp::bar_red, "bar.red.popc.u32 %r2, 3, %p1;", {"id"}},
                                  {TraceOp::bar_red, "barrier.cta.red.and.pred %p2, 4, 128, !%p1;", {"id", "count"}}};
  std::vector<const instrument::Site*> bars;
  for (const auto& s : r.sites) {
    if (instrument::is_cta_barrier(s.op)) bars.push_back(&s);
    EXPECT_NE(s.function, "plain") << s.text;  // no bulk copy there
    EXPECT_EQ(s.text.find("bar.warp.sync"), std::string::npos);
  }
  ASSERT_EQ(bars.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].text);
    EXPECT_EQ(bars[i]->op, want[i].op);
    EXPECT_EQ(bars[i]->text, want[i].text);
    EXPECT_FALSE(bars[i]->after);  // before the barrier: every participant's record precedes what follows it
    ASSERT_EQ(bars[i]->fields.size(), want[i].fields.size());
    for (size_t k = 0; k < want[i].fields.size(); ++k) EXPECT_EQ(bars[i]->fields[k].name, want[i].fields[k]);
  }
  // The values: immediates written as such, the register by its own width, the guard obeyed.
  auto sync0 = lines_of(r.text, bars[0]->id);
  EXPECT_LT(index_of(sync0, "st.global.b32 [%__tmakit_d1+32], 0;"), sync0.size());
  auto count_reg = lines_of(r.text, bars[1]->id);
  EXPECT_LT(index_of(count_reg, "st.global.b32 [%__tmakit_d1+40], %r1;"), count_reg.size());
  auto guarded = lines_of(r.text, bars[2]->id);
  EXPECT_LT(index_of(guarded, "setp.ne.and.u64 %__tmakit_p0, %__tmakit_d0, 0, %p1;"), guarded.size());
  auto red = lines_of(r.text, bars[4]->id);
  EXPECT_LT(index_of(red, "st.global.b32 [%__tmakit_d1+32], 4;"), red.size());
  EXPECT_LT(index_of(red, "st.global.b32 [%__tmakit_d1+40], 128;"), red.size());
  // Their own records: the instruction stays right after its record.
  EXPECT_NE(r.text.find("$__tmakit_skip_" + std::to_string(bars[0]->id) + ":\n\tbar.sync 0;"), std::string::npos);
  // Each barrier's record reads the clock once, before the barrier (trace.hpp, Order: every
  // participant's record below whatever follows the barrier), and the barrier comes right after
  // its record's lines.
  for (const instrument::Site* b : bars) {
    const auto lines = lines_of(r.text, b->id);
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("%clock64") != std::string::npos; }),
              1)
        << b->text;
    EXPECT_NE(r.text.find("$__tmakit_skip_" + std::to_string(b->id) + ":\n\t" + b->text), std::string::npos) << b->text;
  }
  // Only with every family: the other sets record no CTA barrier.
  for (auto ops : {instrument::OpSet::copies, instrument::OpSet::barriers})
    for (const auto& s : instrument::instrument_module(kBarriers, "bars.ptx", ops).sites)
      EXPECT_FALSE(instrument::is_cta_barrier(s.op)) << s.text;
  if (have_ptxas()) {
    std::string log;
    EXPECT_EQ(ptxas(r.text, "sm_90a", fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "bars", &log), 0) << log;
  }
}

}  // namespace
