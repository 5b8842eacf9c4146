// The device half against the table of forms: every qualifier combination of a row the
// device library claims has its function (or an exclusion that says why not), every
// generated function is a combination the table accepts, and the checked-in generated
// files are what tools/gen_device writes now.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "device_forms.hpp"
#include "tmakit/spec/forms.hpp"

using namespace tmakit;
using namespace tmakit::gen_device;

namespace {

// Every combination of one choice per slot (optional slots also absent), as written text.
void enumerate(const spec::Form& f, size_t slot, std::string cur, std::vector<std::string>& out) {
  if (slot == f.slots.size()) {
    out.push_back(std::string(f.opcode) + cur);
    return;
  }
  if (!f.slots[slot].required) enumerate(f, slot + 1, cur, out);
  for (const auto& c : f.slots[slot].choices) enumerate(f, slot + 1, cur + std::string(c.text), out);
}

// A combination with absent slots read as their implied choice (an absent load mode is .tile).
std::string key(const spec::Selection& sel) {
  std::string k(sel.form->opcode);
  for (const auto& s : sel.form->slots) {
    const auto c = sel.get(s.name);
    if (!c.empty()) k += std::string(c);
  }
  return k;
}

std::optional<spec::Selection> accepted(const std::string& text) {
  Diagnostics d;
  auto sel = spec::match(text, d);
  if (!sel || spec::check_combination(*sel).has_errors()) return std::nullopt;
  return sel;
}

bool holds_all(const std::string& k, const std::vector<std::string>& quals) {
  for (const auto& q : quals) {
    // A qualifier is present when it appears followed by the next qualifier or the end.
    bool found = false;
    for (size_t p = k.find(q); p != std::string::npos; p = k.find(q, p + 1))
      found |= p + q.size() == k.size() || k[p + q.size()] == '.';
    if (!found) return false;
  }
  return true;
}

// Whether a combination leaves a slot out (no state space: a generic address).
bool leaves_out(const std::string& k, const std::string& slot) {
  const auto sel = accepted(k);
  return sel && sel->get(slot).empty();
}

// The keys the table accepts for a row.
std::set<std::string> table_keys(const spec::Form& f) {
  std::vector<std::string> texts;
  enumerate(f, 0, "", texts);
  std::set<std::string> keys;
  for (const auto& t : texts)
    if (auto sel = accepted(t); sel && sel->form == &f) keys.insert(key(*sel));
  return keys;
}

std::map<std::string, std::set<std::string>> device_keys() {
  std::map<std::string, std::set<std::string>> by_form;
  for (const auto& fn : device_functions()) {
    auto sel = accepted(fn.mnemonic);
    if (sel) by_form[std::string(sel->form->id)].insert(key(*sel));
  }
  return by_form;
}

}  // namespace

TEST(DeviceCoverage, EveryFunctionIsACombinationOfAClaimedRow) {
  const auto claimed = claimed_forms();
  ASSERT_GT(device_functions().size(), 300u);
  for (const auto& fn : device_functions()) {
    auto sel = accepted(fn.mnemonic);
    ASSERT_TRUE(sel) << fn.name << ": the table refuses " << fn.mnemonic;
    EXPECT_EQ(spec::canonical_mnemonic(*sel), fn.mnemonic) << fn.name;
    EXPECT_NE(std::find(claimed.begin(), claimed.end(), sel->form->id), claimed.end())
        << fn.name << " (" << fn.mnemonic << ") is on row " << sel->form->id << ", which the device half does not claim";
    // The function's text is the instruction it issues: its comment and, for inline PTX, its asm
    // (operands follow the mnemonic; fence.mbarrier_init has none).
    const auto issues = [&](const std::string& before) {
      return fn.code.find(before + fn.mnemonic + " ") != std::string::npos ||
             fn.code.find(before + fn.mnemonic + ";") != std::string::npos;
    };
    EXPECT_TRUE(issues("// ")) << fn.name;
    if (!fn.cccl) {
      EXPECT_TRUE(issues("asm volatile(\"")) << fn.name;
    }
  }
}

TEST(DeviceCoverage, EveryCombinationOfAClaimedRowHasAFunctionOrAReason) {
  const auto have = device_keys();
  std::map<const Exclusion*, int> used;
  for (auto id : claimed_forms()) {
    const spec::Form* f = spec::find_form(id);
    ASSERT_TRUE(f) << id;
    const auto keys = table_keys(*f);
    ASSERT_FALSE(keys.empty()) << id;
    const auto it = have.find(std::string(id));
    ASSERT_NE(it, have.end()) << "no function on the claimed row " << id;
    for (const auto& k : keys) {
      const bool has_fn = it->second.count(k) > 0;
      const Exclusion* why = nullptr;
      for (const auto& x : exclusions())
        if (x.form_id == id && holds_all(k, x.qualifiers) && (x.absent_slot.empty() || leaves_out(k, x.absent_slot)))
          why = &x;
      if (why) ++used[why];
      EXPECT_TRUE(has_fn || why) << id << ": no device function for " << k;
      EXPECT_FALSE(has_fn && why) << id << ": " << k << " has a function and an exclusion (" << why->reason << ")";
    }
    for (const auto& k : it->second) EXPECT_TRUE(keys.count(k)) << id << ": a function for " << k << ", not in the table";
  }
  for (const auto& x : exclusions()) {
    EXPECT_FALSE(x.reason.empty());
    EXPECT_GT(used[&x], 0) << "stale exclusion on " << x.form_id << " (no combination of the table holds it)";
  }
}

// The bulk reductions: one function per table pair and direction (the element type is the C++
// pointer type), with and without the policy for the global direction.
TEST(DeviceCoverage, EveryBulkReductionPairHasItsFunctions) {
  for (const auto& p : spec::reduction_pairs()) {
    if (p.form_id == "tensor.reduce") continue;
    const bool global = p.form_id == "bulk-reduce.global.shared::cta";
    const std::string qual = "." + std::string(spec::name(p.op)) + (p.noftz ? ".noftz." : ".") + std::string(spec::name(p.type));
    int n = 0;
    for (const auto& fn : device_functions())
      if (fn.name == (global ? "bulk_reduce" : "bulk_reduce_cluster") && fn.mnemonic.ends_with(qual) &&
          fn.mnemonic.find(global ? ".global" : ".shared::cluster") != std::string::npos)
        ++n;
    const bool u64_add = p.op == spec::RedOp::add && p.type == spec::RedType::u64;  // also int64_t, as CCCL
    EXPECT_EQ(n, (global ? 2 : 1) * (u64_add ? 2 : 1)) << p.form_id << qual;
  }
}

#ifdef TMAKIT_CCCL_PTX_DIR
// The mbarrier functions call CCCL's cuda::ptx exactly where CCCL writes the instruction: a
// function marked cuda::ptx has its mnemonic in an asm string of CCCL's generated headers, an
// inline-PTX one has not (else it should call CCCL).
TEST(DeviceCoverage, MbarrierFormsUseCcclWhereItHasThem) {
  std::string cccl;
  for (const auto& e : std::filesystem::directory_iterator(TMAKIT_CCCL_PTX_DIR)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    cccl += s.str();
  }
  ASSERT_NE(cccl.find("\"mbarrier.arrive."), std::string::npos) << "no CCCL headers in " << TMAKIT_CCCL_PTX_DIR;
  int n = 0;
  for (const auto& fn : device_functions()) {
    if (fn.file != "mbarrier.cuh") continue;
    ++n;
    const bool written = cccl.find("\"" + fn.mnemonic + " ") != std::string::npos ||
                         cccl.find("\"" + fn.mnemonic + ";") != std::string::npos;
    EXPECT_EQ(written, fn.cccl) << fn.mnemonic
                                << (fn.cccl ? ": marked cuda::ptx, but CCCL does not write it"
                                            : ": inline PTX, but CCCL writes it (call cuda::ptx)");
  }
  EXPECT_GE(n, 30);
}
#endif

// The GPU engine's step codes (generated/engine_codes.hpp): every row of the table is run by
// exactly one code or listed as not run with its reason; no code names a row twice, none a row
// the table lacks.
TEST(DeviceCoverage, EveryRowTheEngineRunsHasItsCode) {
  std::map<std::string, int> run;
  std::set<std::string> names;
  for (const auto& c : engine_codes()) {
    EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name << " twice";
    for (auto row : c.rows) {
      EXPECT_NE(spec::find_form(row), nullptr) << c.name << " names no row of the table: " << row;
      ++run[std::string(row)];
    }
  }
  std::set<std::string> not_run;
  for (const auto& [row, reason] : engine_rows_not_run()) {
    EXPECT_NE(spec::find_form(row), nullptr) << "a stale row: " << row;
    EXPECT_FALSE(reason.empty()) << row;
    not_run.insert(std::string(row));
  }
  for (const auto& f : spec::forms()) {
    const std::string id(f.id);
    const int n = run.count(id) ? run[id] : 0;
    EXPECT_EQ(n + int(not_run.count(id)), 1) << id << ": run by " << n << " codes, listed as not run "
                                             << not_run.count(id) << " times";
  }
  EXPECT_EQ(names.count("kNop"), 1u);
}

TEST(DeviceGenerated, CheckedInFilesAreCurrent) {
  for (const auto& g : generated_files()) {
    std::ifstream in(std::string(TMAKIT_SOURCE_DIR) + "/" + g.path, std::ios::binary);
    ASSERT_TRUE(in) << g.path << " is missing: cmake --build build --target gen_device";
    std::stringstream s;
    s << in.rdbuf();
    EXPECT_TRUE(s.str() == g.text) << g.path << " is stale: cmake --build build --target gen_device";
    EXPECT_TRUE(g.text.starts_with("// Generated by tools/gen_device")) << g.path;
  }
}
