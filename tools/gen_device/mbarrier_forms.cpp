// The mbarrier forms (include/tmakit/device/generated/mbarrier.cuh): one function per row and
// sem / scope / state-space combination the device library offers, with and without an arrive's
// optional count. They live in namespace tmakit::device::forms under cuda::ptx's names, with its
// tag parameters (ptx::sem_release_t, ptx::scope_cta_t, ptx::space_shared_t, ...), so that
// mbarrier.cuh's Scope-templated helpers pick one by tag exactly as they would pick CCCL's.
// CCCL's cuda::ptx where it has the form; inline PTX elsewhere (CCCL 13.0 has no arrive_drop,
// no complete_tx, no inval, and no .release.cta arrive on a barrier of another CTA).
//
// The signature follows the row: a tag per sem and scope slot, a state-space tag where the
// opcode also has a .shared::cluster form (as cuda::ptx does), then the operands in the table's
// order (a state destination is the return value, `_` takes nothing, a predicate is a bool
// result). Inline PTX numbers the operands in that order, outputs first.
#include <fmt/format.h>

#include <stdexcept>

#include "device_forms.hpp"
#include "tmakit/spec/forms.hpp"

namespace tmakit::gen_device {
namespace {

using spec::OperandKind;

struct MbarForm {
  std::string form;    // table row id
  std::string quals;   // the written sem, scope and state space: ".release.cta.shared::cta"
  bool count = false;  // with the row's optional count operand
  bool cccl = false;   // cuda::ptx has this form
};

// cuda::ptx's tag type of a sem, scope or state-space qualifier.
std::string tag_of(std::string_view q) {
  if (q == ".release") return "sem_release_t";
  if (q == ".relaxed") return "sem_relaxed_t";
  if (q == ".acquire") return "sem_acquire_t";
  if (q == ".cta") return "scope_cta_t";
  if (q == ".cluster") return "scope_cluster_t";
  if (q == ".shared" || q == ".shared::cta") return "space_shared_t";
  if (q == ".shared::cluster") return "space_cluster_t";
  throw std::runtime_error("gen_device: no cuda::ptx tag for " + std::string(q));
}

// Whether some row of this opcode takes a .shared::cluster barrier (its functions then take a
// state-space tag, as cuda::ptx's mbarrier_arrive and mbarrier_expect_tx do).
bool has_cluster_space(std::string_view opcode) {
  for (const auto& f : spec::forms())
    if (f.opcode == opcode)
      for (const auto& s : f.slots)
        if (s.name == "state_space")
          for (const auto& c : s.choices)
            if (c.text == ".shared::cluster") return true;
  return false;
}

// cuda::ptx's function name of an opcode: mbarrier.try_wait.parity -> mbarrier_try_wait_parity.
std::string cpp_name(std::string_view opcode) {
  std::string s(opcode);
  for (char& c : s)
    if (c == '.') c = '_';
  return s;
}
std::string param_name(std::string_view n) {
  if (n == "txCount") return "tx_count";
  if (n == "phaseParity") return "phase_parity";
  return std::string(n);
}

DeviceFn make_mbar_fn(const MbarForm& m) {
  const spec::Form* form = spec::find_form(m.form);
  if (!form) throw std::runtime_error("gen_device: no row " + m.form);
  std::string text = std::string(form->opcode) + m.quals;
  // The row's fixed qualifiers (.b64; a remote row's .shared::cluster, unless written already).
  for (const auto& s : form->slots)
    if (s.required && s.choices.size() == 1 && m.quals.find(s.choices[0].text) == std::string::npos)
      text += s.choices[0].text;
  const spec::Selection sel = select_form(text);

  DeviceFn fn;
  fn.file = "mbarrier.cuh";
  fn.name = cpp_name(form->opcode);
  fn.mnemonic = spec::canonical_mnemonic(sel);
  fn.cccl = m.cccl;

  std::vector<std::string> params, args, shown, outs, ins, asm_ops;
  for (const auto& s : form->slots) {
    const bool tagged = s.name == "sem" || s.name == "scope" ||
                        (s.name == "state_space" && has_cluster_space(form->opcode));
    if (!tagged) continue;
    const std::string tag = tag_of(sel.get(s.name));
    params.push_back("ptx::" + tag);
    args.push_back("ptx::" + tag.substr(0, tag.size() - 2));
  }
  std::string ret = "void";
  int next = 0;
  for (const spec::Operand* op : spec::operands_of(sel)) {
    if (op->optional && !(m.count && op->name == "count")) continue;
    const std::string n = param_name(op->name);
    switch (op->kind) {
      case OperandKind::state:
        ret = "uint64_t";
        shown.push_back(n);
        outs.push_back("\"=l\"(" + n + ")");
        asm_ops.push_back(fmt::format("%{}", next++));
        break;
      case OperandKind::sink:
        shown.push_back("_");
        asm_ops.push_back("_");
        break;
      case OperandKind::predicate:
        if (!m.cccl) throw std::runtime_error("gen_device: no inline PTX for the predicate of " + fn.mnemonic);
        ret = "bool";
        shown.push_back(n);
        break;
      case OperandKind::address:
        params.push_back("uint64_t* " + n);
        args.push_back(n);
        shown.push_back("[" + n + "]");
        ins.push_back("\"r\"(smem_addr(" + n + "))");
        asm_ops.push_back(fmt::format("[%{}]", next++));
        break;
      case OperandKind::value: {
        const bool wide = op->bits == 64;
        params.push_back((wide ? "uint64_t " : "uint32_t ") + n);
        args.push_back(n);
        shown.push_back(std::string(op->name));
        ins.push_back((wide ? "\"l\"(" : "\"r\"(") + n + ")");
        asm_ops.push_back(fmt::format("%{}", next++));
        break;
      }
      default:
        throw std::runtime_error("gen_device: no C++ operand for " + std::string(op->name));
    }
  }
  const auto join = [](const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
  };
  fn.ptx = fn.mnemonic + (shown.empty() ? "" : " " + join(shown, ", ")) + ";";

  std::string body;
  if (fn.cccl) {
    body = fmt::format("  {}ptx::{}({});\n", ret == "void" ? "" : "return ", fn.name, join(args, ", "));
  } else {
    const std::string instr = fn.mnemonic + (asm_ops.empty() ? "" : " " + join(asm_ops, ", ")) + ";";
    if (ret == "uint64_t") body = "  uint64_t state;\n";
    body += "  asm volatile(\"" + instr + "\"\n               " +
            (outs.empty() ? "::" + join(ins, ", ") : ": " + join(outs, ", ") + "\n               : " + join(ins, ", ")) +
            "\n               : \"memory\");\n";
    if (ret == "uint64_t") body += "  return state;\n";
  }
  fn.code = "// " + fn.ptx + (fn.cccl ? "  (cuda::ptx)" : "") + "\n__device__ inline " + ret + " " + fn.name + "(" +
            join(params, ", ") + ") {\n" + body + "}\n";
  return fn;
}

}  // namespace

void add_mbarrier_functions(std::vector<DeviceFn>& out) {
  std::vector<MbarForm> v;
  const auto add = [&](const std::string& form, const std::string& quals, bool cccl, bool counts = false) {
    v.push_back({form, quals, false, cccl});
    if (counts) v.push_back({form, quals, true, cccl});
  };
  add("mbarrier.init", ".shared", true);  // CCCL writes .shared (= .shared::cta)
  add("fence.mbarrier_init", "", true);
  // Arrivals on a barrier of the executing CTA (they return the state token), then on one of
  // another CTA of the cluster (`_`).
  for (const char* scope : {".cta", ".cluster"}) {
    const std::string q = std::string(".release") + scope + ".shared::cta";
    add("mbarrier.arrive.local", q, true, true);
    add("mbarrier.arrive.expect_tx.local", q, true);
    add("mbarrier.arrive_drop.local", q, false, true);
    add("mbarrier.arrive_drop.expect_tx.local", q, false);
  }
  const std::string remote = ".release.cluster.shared::cluster";
  add("mbarrier.arrive.remote", ".release.cta.shared::cluster", false);
  add("mbarrier.arrive.remote", remote, true, true);
  add("mbarrier.arrive.expect_tx.remote", remote, true);
  add("mbarrier.arrive_drop.remote", remote, false, true);
  add("mbarrier.arrive_drop.expect_tx.remote", remote, false);
  // Transaction counts.
  add("mbarrier.expect_tx", ".relaxed.cta.shared::cta", true);
  add("mbarrier.expect_tx", ".relaxed.cluster.shared::cta", true);
  add("mbarrier.expect_tx", ".relaxed.cluster.shared::cluster", true);
  add("mbarrier.complete_tx", ".relaxed.cta.shared::cta", false);
  add("mbarrier.complete_tx", ".relaxed.cluster.shared::cluster", false);
  // Waits (acquire).
  for (const char* row : {"mbarrier.try_wait.parity", "mbarrier.try_wait", "mbarrier.test_wait.parity",
                          "mbarrier.test_wait"})
    for (const char* scope : {".cta", ".cluster"}) add(row, std::string(".acquire") + scope + ".shared::cta", true);
  add("mbarrier.inval", ".shared::cta", false);
  for (const auto& m : v) out.push_back(make_mbar_fn(m));
}

}  // namespace tmakit::gen_device
