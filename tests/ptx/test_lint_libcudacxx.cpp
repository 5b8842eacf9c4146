// tmakit lint on what libcu++'s bulk-copy calls compile to (issue 15): the example of the
// cuda::device::memcpy_async_tx page (tests/seeds/004_*), compiled by nvcc 13.0 with -ptx
// for every target the project supports (tests/corpus/libcudacxx/, the commands in its .cu;
// ptxas's verdicts in tests/corpus/verdicts.jsonl, so test_corpus.cpp reads them too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/lint.hpp"
#include "tmakit/ptx/module.hpp"

using namespace tmakit;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/libcudacxx";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Linted {
  std::string mnemonic;
  ptx::Instruction inst;
};

// The instructions of the table's families, in order, each parsed and checked for `target`.
std::vector<Linted> linted_instructions(const std::string& text, const std::string& file, const spec::Target& target) {
  Diagnostics d;
  ptx::ModuleText m = ptx::parse_module(text, file, d);
  EXPECT_TRUE(d.empty()) << file << ": " << (d.empty() ? "" : format(d.front()));
  std::vector<Linted> out;
  for (const auto& p : m.pieces) {
    if (p.kind != ptx::Piece::Kind::instruction || !ptx::linted_mnemonic(p.statement.mnemonic())) continue;
    Diagnostics pd;
    auto inst = ptx::parse_instruction(p.statement.text, pd, file);
    EXPECT_TRUE(inst.has_value()) << file << ":" << p.line << ": " << p.text;
    if (!inst) continue;
    Diagnostics cd = ptx::check(*inst, target, spec::kNewestPtx);
    EXPECT_TRUE(cd.empty()) << file << ":" << p.line << ": " << format(cd.front());
    out.push_back({std::string(p.statement.mnemonic()), *inst});
  }
  return out;
}

size_t index_of(const std::vector<Linted>& v, const std::string& mnemonic, size_t from = 0) {
  for (size_t i = from; i < v.size(); ++i)
    if (v[i].mnemonic == mnemonic) return i;
  return v.size();
}

}  // namespace

// Both PTX files lint clean, every instruction of the table's families is checked, and the
// sequence is the one the model lowers the calls to (docs/model.md, "libcu++ calls"):
// init; the bulk copy on the barrier, then barrier_arrive_tx's arrive.expect_tx with the
// copy's size on the same barrier; the other threads' arrive; the wait on the token.
TEST(LintLibcudacxx, SeedExampleForEveryTarget) {
  for (const char* arch : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(arch);
    const std::string file = std::string("memcpy_async_tx_example.") + arch + ".ptx";
    const std::string text = read(kDir / file);
    ASSERT_FALSE(text.empty()) << file;
    ASSERT_NE(text.find(std::string(".target ") + arch), std::string::npos);

    const ptx::LintResult r = ptx::lint_module(text, file);
    EXPECT_FALSE(r.unusable);
    EXPECT_EQ(r.errors(), 0u) << (r.diags.empty() ? "" : format(r.diags.front()));
    EXPECT_EQ(r.warnings(), 0u);

    const spec::Target target{arch == std::string("sm_90a") ? 90 : 100, spec::Suffix::a};
    const auto seq = linted_instructions(text, file, target);
    // mbarrier.init, arrive, cp.async.bulk, arrive.expect_tx, try_wait: what lint counted.
    EXPECT_EQ(seq.size(), 5u);
    EXPECT_EQ(r.instructions, seq.size());

    const std::string kInit = "mbarrier.init.shared.b64";
    const std::string kCopy = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes";
    const std::string kArriveTx = "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64";
    const std::string kArrive = "mbarrier.arrive.shared::cta.b64";
    const std::string kWait = "mbarrier.try_wait.shared.b64";
    size_t n_copy = 0, n_arrive_tx = 0;
    for (const auto& l : seq) n_copy += l.mnemonic == kCopy, n_arrive_tx += l.mnemonic == kArriveTx;
    EXPECT_EQ(n_copy, 1u);  // the one memcpy_async_tx
    EXPECT_EQ(n_arrive_tx, 1u);

    const size_t init = index_of(seq, kInit), copy = index_of(seq, kCopy), arrive_tx = index_of(seq, kArriveTx),
                 arrive = index_of(seq, kArrive), wait = index_of(seq, kWait);
    ASSERT_LT(init, seq.size());
    ASSERT_LT(copy, seq.size());
    ASSERT_LT(arrive_tx, seq.size());
    ASSERT_LT(arrive, seq.size());
    ASSERT_LT(wait, seq.size());
    EXPECT_EQ(init, 0u);
    EXPECT_LT(copy, arrive_tx);  // the copy is issued before the arrival that expects its bytes
    EXPECT_EQ(wait, seq.size() - 1);
    EXPECT_EQ(seq[init].inst.op(), spec::Op::mbar_init);
    EXPECT_EQ(seq[copy].inst.op(), spec::Op::bulk_copy);
    EXPECT_EQ(seq[arrive_tx].inst.op(), spec::Op::mbar_arrive);
    EXPECT_EQ(seq[arrive].inst.op(), spec::Op::mbar_arrive);
    EXPECT_EQ(seq[wait].inst.op(), spec::Op::mbar_try_wait);

    // cp.async.bulk [dst], [src], size, [mbar] and arrive.expect_tx state, [mbar], tx:
    // the same barrier and the same byte count (sizeof(smem_x) = 4096 in a register).
    const auto& c = seq[copy].inst;
    const auto& a = seq[arrive_tx].inst;
    ASSERT_EQ(c.operands.size(), 4u);
    ASSERT_EQ(a.operands.size(), 3u);
    EXPECT_EQ(c.operands[3].kind, ptx::Operand::Kind::address);
    EXPECT_EQ(c.operands[3].str(), a.operands[1].str());
    EXPECT_EQ(c.operands[2].str(), a.operands[2].str());
    // 4096 is the register's value: nvcc moves the constant into it (mov.u32 for sm_90a,
    // mov.b32 for sm_100a).
    const std::string size_reg = c.operands[2].str();
    EXPECT_TRUE(text.find("mov.u32 \t" + size_reg + ", 4096;") != std::string::npos ||
                text.find("mov.b32 \t" + size_reg + ", 4096;") != std::string::npos)
        << "size register " << size_reg;
  }
}
