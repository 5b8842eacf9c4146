// tmakit lint: the seed examples, each diagnostic and warning (one case that
// triggers it, one just inside it), positions and notes, and the CLI's exit
// status and JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "seed_examples.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/lint.hpp"

using namespace tmakit;

namespace {

const char* const kPtxas = "/usr/local/cuda/bin/ptxas";

// A module around `body` (one statement a line) with registers of every kind.
std::string module(const std::string& body, const std::string& target = "sm_90a", const std::string& version = "8.6") {
  return ".version " + version + "\n.target " + target + "\n.address_size 64\n\n.visible .entry k()\n{\n" +
         "  .reg .pred %p<4>;\n  .reg .b16 %rs<8>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<4>;\n" +
         "  .shared .align 128 .b8 smem[4096];\n" + body + "\n  ret;\n}\n";
}
constexpr int kBodyLine = 13;  // the first line of `body` in module()

ptx::LintResult lint(const std::string& text, const ptx::LintOptions& opt = {}) {
  return ptx::lint_module(text, "t.ptx", opt);
}

std::vector<std::string> rules(const ptx::LintResult& r, Severity s) {
  std::vector<std::string> out;
  for (const auto& d : r.diags)
    if (d.severity == s) out.push_back(d.rule);
  return out;
}
std::vector<std::string> errors(const std::string& body, const std::string& target = "sm_90a",
                                const std::string& version = "8.6") {
  return rules(lint(module(body, target, version)), Severity::error);
}
std::vector<std::string> warnings(const std::string& body, const std::string& target = "sm_90a") {
  return rules(lint(module(body, target)), Severity::warning);
}
using V = std::vector<std::string>;

const std::string kStore = "  st.shared.u32 [%r1], %r2;\n";
const std::string kTmaStore = "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r2}], [smem];\n";
const std::string kCommit = "  cp.async.bulk.commit_group;\n";
const std::string kTmaLoad =
    "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [%rd1, {%r1, %r2}], [%r3];\n";

// Every seed example in a function of its own, its operands declared with the widths their
// written form gives them (tensor maps and addresses 64-bit, coordinates 32-bit).
struct SeedModule {
  std::string text;
  std::vector<std::string> examples;
  std::vector<int> lines;  // the line of each example
};
SeedModule seed_module() {
  SeedModule m;
  m.text = ".version 8.8\n.target sm_100a\n.address_size 64\n";
  int line = 4;
  for (std::string ex : seed_examples()) {
    // The pages' placeholder `cache-policy` is no PTX identifier; the module spells it cache_policy.
    for (size_t k; (k = ex.find("cache-policy")) != std::string::npos;) ex[k + 5] = '_';
    std::map<std::string, std::string> decl;
    Diagnostics d;
    if (auto inst = ptx::parse_instruction(ex, d)) {
      if (inst->guard) decl[inst->guard->predicate] = ".pred";
      for (size_t i = 0; i < inst->operands.size(); ++i) {
        const auto& o = inst->operands[i];
        const auto& s = *inst->operand_specs[i];
        const std::string width = ".b" + std::to_string(s.bits);
        if (!o.expr.symbol.empty())
          decl[o.expr.symbol] = s.kind == spec::OperandKind::predicate ? ".pred"
                                : o.kind == ptx::Operand::Kind::address ? ".b64" : width;
        if (!o.map.empty()) decl[o.map] = ".b64";
        for (const auto& e : o.elems)
          if (!e.symbol.empty()) decl[e.symbol] = o.kind == ptx::Operand::Kind::tensor ? ".b32" : width;
      }
    }
    m.text += ".visible .entry e" + std::to_string(m.examples.size()) + "()\n{\n";
    line += 2;
    for (const auto& [name, type] : decl) m.text += "  .reg " + type + " " + name + ";\n", ++line;
    m.text += "  " + ex + "\n  ret;\n}\n";
    m.examples.push_back(ex);
    m.lines.push_back(line);
    line += 3;
  }
  return m;
}

// The first error of each line of a lint result.
std::map<int, std::string> error_lines(const ptx::LintResult& r) {
  std::map<int, std::string> out;
  for (const auto& d : r.diags)
    if (d.severity == Severity::error) out.emplace(std::atoi(d.where.c_str() + d.where.find(':') + 1), d.rule);
  return out;
}

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  int rc = p ? pclose(p) : -1;
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("tmakit_lint_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

// The seed pages' examples lint clean, except their typos, which fail with the rules an
// assembler breaks (docs/lint.md): the .cta_group::2 example without its completion
// qualifier, the `.L2::cache_hint}` brace, and the reduce example that writes `.im2col` and no `;`.
TEST(Lint, SeedExamples) {
  SeedModule m = seed_module();
  ASSERT_GE(m.examples.size(), 25u);
  auto r = lint(m.text);
  EXPECT_FALSE(r.unusable);
  auto errs = error_lines(r);
  std::map<std::string, std::string> typos;  // the rejected examples' distinctive parts → rule
  for (size_t i = 0; i < m.examples.size(); ++i) {
    if (!errs.count(m.lines[i])) continue;
    const std::string& ex = m.examples[i];
    std::string key = ex.find("cta_group::2") != std::string::npos ? "cta_group::2"
                      : ex.find("cache_hint}") != std::string::npos  ? "cache_hint}"
                      : ex.find("xor.im2col") != std::string::npos   ? "xor.im2col"
                                                                     : ex;
    typos[key] = errs[m.lines[i]];
  }
  EXPECT_EQ(typos, (std::map<std::string, std::string>{{"cta_group::2", "ptx.missing-qualifier"},
                                                        {"cache_hint}", "ptx.syntax"},
                                                        {"xor.im2col", "ptx.unknown-qualifier"}}));
  EXPECT_EQ(errs.size(), 3u);
  EXPECT_EQ(r.warnings(), 0u);  // sm_100a is a target the ISA advises .multicast::cluster on
}

// Where ptxas is installed: it rejects exactly the examples the linter rejects.
TEST(Lint, SeedExamplesAgreeWithPtxas) {
  if (!std::filesystem::exists(kPtxas)) GTEST_SKIP() << "no ptxas";
  SeedModule m = seed_module();
  std::set<int> ptxas_rejects;
  // One module per example: a syntax error stops ptxas at the first.
  for (size_t i = 0; i < m.examples.size(); ++i) {
    size_t start = m.text.find(".visible .entry e" + std::to_string(i) + "()");
    size_t end = m.text.find(".visible .entry", start + 1);
    std::string one = ".version 8.8\n.target sm_100a\n.address_size 64\n" + m.text.substr(start, end - start);
    int status = 0;
    run(std::string(kPtxas) + " -arch=sm_100a " + write_temp("seed.ptx", one) + " -o /dev/null 2>&1", &status);
    if (status != 0) ptxas_rejects.insert(m.lines[i]);
  }
  std::set<int> lint_rejects;
  for (const auto& [line, rule] : error_lines(lint(m.text))) lint_rejects.insert(line);
  EXPECT_EQ(lint_rejects, ptxas_rejects);
}

// nvcc -lineinfo and Triton write `.loc` before instructions. Before, the reader glued the
// `.loc` to the next statement and dropped it, so an error there went unreported; and the
// DWARF sections Triton appends made the module unusable (`module.syntax`, `module.brace`).
TEST(Lint, InstructionsAfterLocAreCheckedInModulesWithDwarfSections) {
  const std::string text = module(
      "\t.loc\t1 40 22                         // k.py:40:22\n"
      "\tcp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
      "\t.loc\t1 41 3, function_name $L__info_string0, inlined_at 1 40 22\n"
      "\tcp.async.bulk.wait_group.read %r1;") +
      "\t.file\t1 \"k.py\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1 // DW_TAG\n.b8 0\n\t}\n"
      "\t.section\t.debug_macinfo\t{\t}\n";
  auto r = lint(text);
  EXPECT_EQ(r.instructions, 2u);
  EXPECT_EQ(error_lines(r), (std::map<int, std::string>{{kBodyLine + 1, "ptx.missing-qualifier"},
                                                       {kBodyLine + 3, "ptx.operand-kind"}}));
}

TEST(Lint, PositionsAndNotesOfATargetError) {
  auto r = lint(module("  cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes "
                       "[%r1], [%rd1, {%r1, %r2, %r3, %r4, %r5}], [%r3];"));
  ASSERT_EQ(r.errors(), 1u);
  const auto& e = r.diags[0];
  EXPECT_EQ(e.rule, "ptx.target");
  // Column of `.tile::gather4` in the line (2 spaces + "cp.async.bulk.tensor.2d.shared::cluster.global" = 48).
  EXPECT_EQ(e.where, "t.ptx:" + std::to_string(kBodyLine) + ":49");
  EXPECT_NE(e.message.find("sm_100a"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("sm_90a"), std::string::npos) << e.message;
  ASSERT_EQ(r.diags.size(), 2u);
  EXPECT_EQ(r.diags[1].severity, Severity::note);
  EXPECT_EQ(r.diags[1].where, "t.ptx:2:1");  // the .target line
  // --arch replaces the module's target.
  ptx::LintOptions opt;
  opt.arch = spec::parse_target("sm_100a");
  EXPECT_EQ(lint(module("  cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes "
                        "[%r1], [%rd1, {%r1, %r2, %r3, %r4, %r5}], [%r3];"), opt).errors(), 0u);
}

TEST(Lint, SharedCtaDestinationBeforePtx86) {
  const std::string load =
      "  cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];";
  EXPECT_EQ(errors(load, "sm_90a", "8.6"), V{});
  auto r = lint(module(load, "sm_90a", "8.5"));
  ASSERT_EQ(rules(r, Severity::error), V{"ptx.ptx-version"});
  // The notes suggest .shared::cluster and point at the .version line.
  ASSERT_GE(r.diags.size(), 3u);
  EXPECT_NE(r.diags[1].message.find(".shared::cluster"), std::string::npos);
  EXPECT_EQ(r.diags[2].where, "t.ptx:1:1");
}

TEST(Lint, MulticastAdvisory) {
  const std::string mc = "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                         "[%r1], [%rd1], 16, [%r2], %rs1;";
  EXPECT_EQ(warnings(mc, "sm_90"), V{"ptx.advised-target"});
  EXPECT_EQ(errors(mc, "sm_90"), V{});
  EXPECT_EQ(warnings(mc, "sm_90a"), V{});
  EXPECT_EQ(warnings(mc, "sm_100a"), V{});
}

TEST(Lint, OperandRegisterTypes) {
  const std::string copy = "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], ";
  EXPECT_EQ(errors(copy + "%r2, [%r3];"), V{});
  EXPECT_EQ(errors(copy + "%rd2, [%r3];"), V{"ptx.operand-type"});  // size is 32-bit
  EXPECT_EQ(errors(copy + "%f2, [%r3];"), V{"ptx.operand-type"});   // and an integer
  EXPECT_EQ(errors(copy + "%r2, [%f1];"), V{"ptx.operand-type"});   // addresses are integers
  EXPECT_EQ(errors(copy + "%r2, [%rs1];"), V{"ptx.operand-type"});  // of 32 or 64 bits
  EXPECT_EQ(errors(copy + "%r9, [%r3];"), V{"ptx.unknown-symbol"}); // %r<8> ends at %r7
  EXPECT_EQ(errors(copy + "5, [%r3];"), V{"ptx.operand-value"});    // multiple of 16
  EXPECT_EQ(errors(copy + "1048560, [%r3];"), V{});
  EXPECT_EQ(errors(copy + "1048576, [%r3];"), V{"ptx.operand-value"});
  EXPECT_EQ(errors(copy + "%r2, [16];"), V{"ptx.address-immediate"});
  EXPECT_EQ(errors("  mbarrier.try_wait.parity.shared::cta.b64 %r1, [%r2], 0;"), V{"ptx.operand-type"});
  EXPECT_EQ(errors("  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 1;"), V{});
  EXPECT_EQ(errors("  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 2;"), V{"ptx.operand-value"});
  EXPECT_EQ(errors("  cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
                   "[%r1], [%rd1, {%r1, %r2, %r3}], [%r3], {%r1};"), V{"ptx.operand-type"});  // im2colInfo is 16-bit
  // The note points at the declaration.
  auto r = lint(module(copy + "%rd2, [%r3];"));
  ASSERT_EQ(r.diags.size(), 2u);
  EXPECT_EQ(r.diags[1].where, "t.ptx:10:1");
}

TEST(Lint, TensormapInstructions) {
  EXPECT_EQ(errors("  tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;"), V{});
  EXPECT_EQ(errors("  tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", "sm_90"), V{"ptx.target"});
  EXPECT_EQ(errors("  tensormap.replace.tile.rank.b1024.b64 [%rd1], %r2;"), V{"ptx.tensormap-field-type"});
  EXPECT_EQ(errors("  tensormap.replace.tile.box_dim.b1024.b32 [%rd1], 1, %r2;"), V{});
  EXPECT_EQ(errors("  tensormap.replace.tile.box_dim.b1024.b32 [%rd1], %r1, %r2;"), V{"ptx.operand-kind"});
  EXPECT_EQ(errors("  tensormap.replace.tile.fill_mode.b1024.b32 [%rd1], 2;"), V{"ptx.operand-value"});
  EXPECT_EQ(errors("  tensormap.replace.tile.swizzle_atomicity.b1024.b32 [%rd1], 1;"), V{"ptx.target"});
  const std::string cp = "  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], ";
  EXPECT_EQ(errors(cp + "128;", "sm_90"), V{});
  EXPECT_EQ(errors(cp + "64;"), V{"ptx.operand-value"});
  EXPECT_EQ(errors(cp + "128;", "sm_90", "8.2"), V{"ptx.ptx-version"});
}

TEST(Lint, SemanticsAndScopeAreWrittenTogether) {
  EXPECT_EQ(errors("  mbarrier.arrive.release.cta.shared::cta.b64 %rd1, [%r1];"), V{});
  EXPECT_EQ(errors("  mbarrier.arrive.shared::cta.b64 %rd1, [%r1];"), V{});
  EXPECT_EQ(errors("  mbarrier.arrive.release.shared::cta.b64 %rd1, [%r1];"), V{"ptx.sem-scope"});
  EXPECT_EQ(errors("  mbarrier.try_wait.cta.shared::cta.b64 %p1, [%r1], %rd1;"), V{"ptx.sem-scope"});
}

TEST(Lint, OtherInstructionsAreSkipped) {
  const std::string body =
      "  ld.global.nc.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1];\n"
      "  st.global.f32 [%rd1], %f1;\n"
      "  cp.async.ca.shared.global [%r1], [%rd1], 16;\n"
      "  cp.async.commit_group;\n"
      "  fence.acq_rel.gpu;\n"
      "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n"
      "  barrier.sync 0;\n"
      "  bar.sync 0;\n"
      "  made.up.instruction %r1;";
  auto r = lint(module(body));
  EXPECT_TRUE(r.diags.empty()) << format(r.diags.front());
  EXPECT_EQ(r.instructions, 0u);
}

TEST(Lint, ProxyFenceBetweenStSharedAndTmaRead) {
  EXPECT_EQ(warnings(kStore + kTmaStore), V{"lint.proxy-fence"});
  EXPECT_EQ(warnings(kStore + "  fence.proxy.async.shared::cta;\n" + kTmaStore), V{});
  EXPECT_EQ(warnings(kStore + "  fence.proxy.async;\n" + kTmaStore), V{});
  EXPECT_EQ(warnings(kStore + "  fence.proxy.async.global;\n" + kTmaStore), V{"lint.proxy-fence"});
  // Straight-line code only: a label or a branch between them ends the analysis.
  EXPECT_EQ(warnings(kStore + "$L1:\n" + kTmaStore), V{});
  EXPECT_EQ(warnings(kStore + "  @%p1 bra $L2;\n" + kTmaStore + "$L2:"), V{});
  // A TMA load reads global memory, not shared.
  EXPECT_EQ(warnings(kStore + kTmaLoad), V{});
  auto r = lint(module(kStore + kTmaStore));
  ASSERT_EQ(r.diags.size(), 2u);
  EXPECT_EQ(r.diags[0].where, "t.ptx:" + std::to_string(kBodyLine + 1) + ":3");
  EXPECT_EQ(r.diags[1].where, "t.ptx:" + std::to_string(kBodyLine) + ":3");  // the note: the store
}

TEST(Lint, SharedReuseAfterBulkStore) {
  EXPECT_EQ(warnings(kTmaStore + kCommit + kTmaLoad), V{"lint.bulk-store-reuse"});
  EXPECT_EQ(warnings(kTmaStore + kCommit + "  cp.async.bulk.wait_group.read 0;\n" + kTmaLoad), V{});
  EXPECT_EQ(warnings(kTmaStore + kCommit + "  cp.async.bulk.wait_group 0;\n" + kTmaLoad), V{});
  // wait_group.read 1 leaves the newest group pending.
  EXPECT_EQ(warnings(kTmaStore + kCommit + "  cp.async.bulk.wait_group.read 1;\n" + kTmaLoad), V{"lint.bulk-store-reuse"});
  // A wait before the commit covers nothing.
  EXPECT_EQ(warnings(kTmaStore + "  cp.async.bulk.wait_group.read 0;\n" + kCommit + kTmaLoad), V{"lint.bulk-store-reuse"});
  // Another buffer is no reuse; an ordinary store into the same one is.
  EXPECT_EQ(warnings(kTmaStore + kCommit +
                     "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem+2048], [%rd1], 16, [%r2];"),
            V{});
  EXPECT_EQ(warnings(kTmaStore + kCommit + "  st.shared.u32 [smem], %r2;"), V{"lint.bulk-store-reuse"});
}

TEST(Lint, UnusableInput) {
  EXPECT_TRUE(lint(".version 8.6\n.entry k()\n{\n cp.async.bulk.commit_group;\n}\n").unusable);
  EXPECT_TRUE(lint(".version 7.0\n.target sm_80\n.entry k()\n{\n cp.async.bulk.commit_group;\n}\n").unusable);
  EXPECT_TRUE(lint("").unusable);
  ptx::LintOptions opt;
  opt.arch = spec::parse_target("sm_90a");
  opt.version = spec::parse_ptx_version("8.0");
  EXPECT_FALSE(lint(".entry k()\n{\n cp.async.bulk.commit_group;\n}\n", opt).unusable);
}

TEST(LintCli, ExitStatusTextAndJson) {
  const std::string tmakit = std::string(TMAKIT_BINARY_DIR) + "/tools/tmakit/tmakit";
  const std::string clean = write_temp("clean.ptx", module(kTmaLoad));
  const std::string bad = write_temp("bad.ptx", module("  cp.async.bulk.commit_group.read;"));
  const std::string warn = write_temp("warn.ptx", module(kStore + kTmaStore));
  const std::string none = write_temp("none.ptx", "// no directives\n");
  int status = -1;
  run(tmakit + " lint " + clean + " 2>&1", &status);
  EXPECT_EQ(status, 0);
  std::string out = run(tmakit + " lint " + bad + " 2>&1", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find(bad + ":" + std::to_string(kBodyLine) + ":3: error: "), std::string::npos) << out;
  EXPECT_NE(out.find("[ptx.unknown-qualifier]"), std::string::npos) << out;
  run(tmakit + " lint " + warn + " 2>&1", &status);
  EXPECT_EQ(status, 0);  // warnings alone leave the module usable
  run(tmakit + " lint " + none + " 2>&1", &status);
  EXPECT_EQ(status, 2);
  run(tmakit + " lint " + none + " --arch sm_90a --ptx-version 8.0 2>&1", &status);
  EXPECT_EQ(status, 0);
  run(tmakit + " lint " + clean + " --arch sm_42 2>&1", &status);
  EXPECT_EQ(status, 2);
  out = run(tmakit + " lint --format json " + warn + " " + bad, &status);
  EXPECT_EQ(status, 1);
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["warnings"], 1);
  EXPECT_EQ(j[0]["diagnostics"][0]["rule"], "lint.proxy-fence");
  EXPECT_EQ(j[0]["diagnostics"][0]["line"], kBodyLine + 1);
  EXPECT_EQ(j[0]["diagnostics"][0]["notes"][0]["line"], kBodyLine);
  EXPECT_EQ(j[1]["errors"], 1);
  EXPECT_EQ(j[1]["diagnostics"][0]["column"], 3);
  for (const auto& f : {clean, bad, warn, none}) std::filesystem::remove(f);
}

// Printing a seed example gives the same instruction up to qualifier order and spacing.
TEST(Printer, SeedExamplesReprintUpToOrderAndSpacing) {
  auto normal = [](const std::string& s) {
    std::istringstream in(s);
    std::string guard, mn, rest;
    in >> mn;
    if (mn[0] == '@') guard = mn, in >> mn;
    std::getline(in, rest, '\0');
    if (mn.back() == ';') mn.pop_back(), rest = ";";
    rest.erase(std::remove_if(rest.begin(), rest.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
               rest.end());
    // The mnemonic's dotted parts as a sorted list: order does not count.
    std::vector<std::string> parts;
    for (size_t k = 0; k < mn.size();) {
      size_t dot = mn.find('.', k + 1);
      parts.push_back(mn.substr(k, dot - k));
      k = dot == std::string::npos ? mn.size() : dot;
    }
    std::sort(parts.begin(), parts.end());
    std::string out = guard + "|";
    for (const auto& x : parts) out += x + " ";
    return out + "|" + rest;
  };
  int checked = 0;
  for (const auto& ex : seed_examples()) {
    Diagnostics d;
    auto inst = ptx::parse_instruction(ex, d);
    if (!inst) continue;
    std::string printed = ptx::print(*inst);
    // `.tile` and other implied defaults the example wrote stay written.
    EXPECT_EQ(normal(printed), normal(ex)) << ex << "\n" << printed;
    ++checked;
  }
  EXPECT_GE(checked, 25);
}

// Random edits of a module never crash the reader or the linter, and every diagnostic has a place.
TEST(Lint, SurvivesGarbage) {
  const std::string base = module(kStore + kTmaStore + kCommit + kTmaLoad + "$L1:\n  @%p1 bra $L1;\n");
  const std::string alphabet = "[]{}(),;.:_@!+-0x9aZ%/*\"\n \t<>=";
  std::mt19937 rng(3);
  for (int i = 0; i < 3000; ++i) {
    std::string s = base;
    for (int e = 1 + rng() % 6; e > 0; --e) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: if (pos < s.size()) s.erase(pos, 1 + rng() % 8); break;
        case 1: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: if (pos < s.size()) s[pos] = static_cast<char>(rng() % 256); break;
      }
    }
    auto r = lint(s);
    for (const auto& d : r.diags) EXPECT_EQ(d.where.rfind("t.ptx:", 0), 0u) << format(d);
  }
}
