// The device library's functions, built from the table of forms: each family below names its
// row, the qualifiers it fixes and its C++ signature; the mnemonic, the operand order, the
// target gate and the reduction op x type lists come from the table (spec::match,
// spec::operands_of, spec::check_target, spec::reduction_pairs).
//
// Operand numbering of the inline PTX (kept from the hand-written headers, so nvcc's PTX is
// unchanged): a tensor form's five coordinates are %0..%4 (only the first N named in the text;
// detail::pad5), an .im2col form's three im2colInfo offsets follow as %5..%7 (detail::pad3),
// then every other operand in the table's order.
#include "device_forms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "tmakit/spec/forms.hpp"

namespace tmakit::gen_device {

spec::Selection select_form(const std::string& text) {
  Diagnostics d;
  auto sel = spec::match(text, d);
  if (!sel) throw std::runtime_error("gen_device: the table has no form for " + text);
  if (spec::check_combination(*sel).has_errors())
    throw std::runtime_error("gen_device: the table refuses the combination " + text);
  return *sel;
}

namespace {

using spec::OperandKind;

enum class Gate { none, sm100, sm100_family };

// The gate a form needs, from the table's targets: none where sm_90a takes it, TMAKIT_DEVICE_SM100
// where any sm_100 does, TMAKIT_DEVICE_SM100_FAMILY where sm_100f does (from PTX 8.8).
Gate gate_of(const spec::Selection& sel) {
  auto ok = [&](std::string_view t) {
    return !spec::check_target(sel, *spec::parse_target(t), spec::kNewestPtx).has_errors();
  };
  if (ok("sm_90a")) return Gate::none;
  if (ok("sm_100")) return Gate::sm100;
  if (ok("sm_100f")) return Gate::sm100_family;
  throw std::runtime_error("gen_device: no gate for " + spec::canonical_mnemonic(sel));
}

}  // namespace

std::string_view ctype_of(spec::RedType t) {
  using T = spec::RedType;
  switch (t) {
    case T::u32: case T::b32: return "uint32_t";
    case T::s32: return "int32_t";
    case T::u64: case T::b64: return "uint64_t";
    case T::s64: return "int64_t";
    case T::f16: return "__half";
    case T::bf16: return "__nv_bfloat16";
    case T::f32: case T::f32_ftz: return "float";
    case T::f64: return "double";
  }
  return "";
}
namespace {

// cuda::ptx's name of the op tag's dot_op (and, or, xor are and_op, or_op, xor_op).
std::string dot_op(spec::RedOp op) {
  std::string s(spec::name(op));
  if (op == spec::RedOp::and_ || op == spec::RedOp::or_ || op == spec::RedOp::xor_) s += "_op";
  return s;
}
constexpr spec::RedOp kOps[] = {spec::RedOp::add, spec::RedOp::min, spec::RedOp::max, spec::RedOp::inc,
                                spec::RedOp::dec, spec::RedOp::and_, spec::RedOp::or_, spec::RedOp::xor_};

// The C++ names of a family's operands (those not fixed by the convention above).
struct Names {
  std::string dst = "dst", src = "src", bar = "bar";
};

// One family: a C++ function over a set of ranks, with or without a policy.
struct Family {
  std::string file;
  std::string name;
  std::string form;                  // table row id
  std::string quals;                 // qualifiers it fixes (after the form's own), e.g. ".tile"
  std::vector<int> dims;             // ranks; empty for non-tensor forms
  bool hint = false;                 // the .L2::cache_hint variant (else the plain one)
  std::string cccl;                  // the cuda::ptx call of the plain variant ("" = inline PTX)
  std::string head = "TensorMapArg M";  // template parameters after `int N` (tensor forms)
  std::string extra_requires;        // e.g. "G == 1"
  std::string params;                // the parameter list, with {c} for the coordinate parameter
  Names names;
  std::string gate_form;             // the form as the gate's message names it
};

// The operand text and the C++ operand list of the inline PTX.
struct Asm {
  std::string text, inputs, preamble, shown;
};

Asm asm_of(const spec::Selection& sel, int dim, const Names& nm) {
  Asm a;
  std::vector<std::string> ops_text, ins, shown;
  const bool tensor = dim > 0;
  const bool im2col = sel.get("load_mode") == ".im2col";
  int next = 0;
  std::string coords, coords_shown;
  if (tensor) {
    // The coordinate count is the table's (dim, or 5 for gather4/scatter4).
    int n = dim;
    for (const spec::Operand* op : spec::operands_of(sel))
      if (op->kind == OperandKind::tensor) n = spec::vector_length(sel, *op);
    a.preamble += "  const detail::Coords5 k = detail::pad5(c);\n";
    for (int i = 0; i < 5; ++i) ins.push_back(fmt::format("\"r\"(k.v[{}])", i));
    for (int i = 0; i < n; ++i) {
      coords += fmt::format("{}%{}", i ? ", " : "", i);
      coords_shown += fmt::format("{}c{}", i ? ", " : "", i);
    }
    next = 5;
  }
  std::string offsets, offsets_shown;
  if (im2col) {
    a.preamble += "  const detail::Offsets3 o = detail::pad3<N>(offsets);\n";
    for (int i = 0; i < 3; ++i) ins.push_back(fmt::format("\"h\"(o.v[{}])", i));
    for (int i = 0; i < dim - 2; ++i) {
      offsets += fmt::format("{}%{}", i ? ", " : "", 5 + i);
      offsets_shown += fmt::format("{}o{}", i ? ", " : "", i);
    }
    next = 8;
  }
  const auto shared = [&](std::string_view slot) { return sel.get(slot).starts_with(".shared"); };
  for (const spec::Operand* op : spec::operands_of(sel)) {
    const std::string_view n = op->name;
    if (op->kind == OperandKind::tensor) {
      ops_text.push_back(fmt::format("[%{}, {{{}}}]", next++, coords));
      ins.push_back("\"l\"(map_ptr(m))");
      shown.push_back(fmt::format("[tensorMap, {{{}}}]", coords_shown));
    } else if (n == "im2colInfo" && im2col) {
      ops_text.push_back("{" + offsets + "}");
      shown.push_back("{" + offsets_shown + "}");
    } else if (n == "im2colInfo") {  // .im2col::w, ::w::128: {wHalo, wOffset}
      ops_text.push_back(fmt::format("{{%{}, %{}}}", next, next + 1));
      next += 2;
      ins.push_back("\"h\"(w_halo)");
      ins.push_back("\"h\"(w_offset)");
      shown.push_back("{wHalo, wOffset}");
    } else {
      std::string in;
      bool address = op->kind == OperandKind::address;
      if (n == "dstMem") in = shared("dst") ? fmt::format("\"r\"(smem_addr({}))", nm.dst) : "\"l\"(" + nm.dst + ")";
      else if (n == "srcMem") in = shared("src") ? fmt::format("\"r\"(smem_addr({}))", nm.src) : "\"l\"(" + nm.src + ")";
      else if (n == "mbar") in = fmt::format("\"r\"(smem_addr({}))", nm.bar);
      else if (n == "size") in = "\"r\"(size)";
      else if (n == "ctaMask") in = "\"h\"(cta_mask)";
      else if (n == "cache-policy") in = "\"l\"(policy)";
      else if (n == "byteMask") in = "\"h\"(byte_mask)";
      else throw std::runtime_error("gen_device: no C++ operand for " + std::string(n));
      ops_text.push_back(address ? fmt::format("[%{}]", next++) : fmt::format("%{}", next++));
      ins.push_back(in);
      shown.push_back(address ? "[" + std::string(n) + "]" : std::string(n));
    }
  }
  for (size_t i = 0; i < ops_text.size(); ++i) a.text += (i ? ", " : " ") + ops_text[i];
  for (size_t i = 0; i < ins.size(); ++i) a.inputs += (i ? ", " : "") + ins[i];
  for (size_t i = 0; i < shown.size(); ++i) a.shown += (i ? ", " : " ") + shown[i];
  return a;
}

std::string gate_macro(Gate g) {
  return g == Gate::sm100 ? "TMAKIT_DEVICE_SM100" : "TMAKIT_DEVICE_SM100_FAMILY";
}
std::string gate_message(Gate g, const std::string& form) {
  return g == Gate::sm100 ? "tmakit: " + form + " needs sm_100 or higher (compiling for \" TMAKIT_TARGET_NAME \")"
                          : "tmakit: " + form + " needs sm_100a or sm_100f (compiling for \" TMAKIT_TARGET_NAME \")";
}

// One function of a family: rank `dim` (0: not a tensor form), reduction op `op` (or none).
DeviceFn make_fn(const Family& f, int dim, const spec::RedOp* op, const std::string& red_type,
                 const std::string& t_param) {
  const spec::Form* form = spec::find_form(f.form);
  if (!form) throw std::runtime_error("gen_device: no row " + f.form);
  std::string text(form->opcode);
  if (dim) text += fmt::format(".{}d", dim);
  // The row's fixed qualifiers (dst, src, level, completion) come from its one-choice required slots.
  std::string written = f.quals;
  if (op) written += "." + std::string(spec::name(*op));
  if (!red_type.empty()) written += red_type;
  if (f.hint) written += ".L2::cache_hint";
  for (const auto& s : form->slots)
    if (s.required && s.choices.size() == 1) text += s.choices[0].text;
  text += written;
  const spec::Selection sel = select_form(text);
  DeviceFn fn;
  fn.file = f.file;
  fn.name = f.name;
  fn.mnemonic = spec::canonical_mnemonic(sel);
  fn.cccl = !f.hint && !f.cccl.empty();
  const Asm a = asm_of(sel, dim, f.names);
  fn.ptx = fn.mnemonic + a.shown + ";";
  const Gate gate = gate_of(sel);

  // gather4 / scatter4 take five coordinates {x0, y0, y1, y2, y3}, whatever the (2-D) rank.
  const bool four_rows = f.name.find("gather4") != std::string::npos || f.name.find("scatter4") != std::string::npos;
  std::vector<std::string> tparams, reqs;
  if (dim && !four_rows && f.head.find("int N") == std::string::npos) tparams.push_back("int N");
  if (!f.head.empty()) tparams.push_back(f.head);
  if (!t_param.empty()) tparams.push_back(t_param);
  if (dim && !four_rows) reqs.push_back(fmt::format("N == {}", dim));
  if (!f.extra_requires.empty()) reqs.push_back(f.extra_requires);
  std::string params = f.params;
  const auto replace = [&](std::string_view key, const std::string& value) {
    for (size_t p; (p = params.find(key)) != std::string::npos;) params.replace(p, key.size(), value);
  };
  replace("{op}", op ? fmt::format("ptx::op_t<ptx::dot_op::{}>{}", dot_op(*op), fn.cccl ? " op" : "") : "");
  replace("{c}", four_rows ? "const int32_t (&c)[5]" : "const int32_t (&c)[N]");
  replace("{offsets}", dim ? fmt::format("const uint16_t (&offsets)[{}]", dim - 2) : "");

  std::string body;
  if (fn.cccl) {
    body = "  " + f.cccl + "\n";
  } else {
    body = a.preamble + "  asm volatile(\"" + fn.mnemonic + a.text + ";\"\n               ::" + a.inputs +
           "\n               : \"memory\");\n";
  }
  if (gate != Gate::none) {
    // The static_assert depends on a template parameter, so it fires only when the function is used.
    const std::string dep = f.head.find("TensorMapArg M") != std::string::npos ? "M" : "D";
    body = "#if " + gate_macro(gate) + "\n" + body + "#elif defined(__CUDA_ARCH__)\n  static_assert(detail::dependent_false<" +
           dep + ">, \"" + gate_message(gate, f.gate_form) + "\");\n#endif\n";
  }
  std::string code = "// " + fn.ptx + (fn.cccl ? "  (cuda::ptx)" : "") + "\n";
  if (!tparams.empty()) {
    code += "template <";
    for (size_t i = 0; i < tparams.size(); ++i) code += (i ? ", " : "") + tparams[i];
    code += ">\n";
  }
  if (!reqs.empty()) {
    code += "  requires(";
    for (size_t i = 0; i < reqs.size(); ++i) code += (i ? " && " : "") + reqs[i];
    code += ")\n";
  }
  code += "__device__ inline void " + f.name + "(" + params + ") {\n" + body + "}\n";
  fn.code = code;
  return fn;
}

void add_family(std::vector<DeviceFn>& out, const Family& f) {
  const std::vector<int> dims = f.dims.empty() ? std::vector<int>{0} : f.dims;
  for (int d : dims) out.push_back(make_fn(f, d, nullptr, "", ""));
}
// A tensor reduction family: one function per op (the type is the map's) and rank.
void add_tensor_reduce(std::vector<DeviceFn>& out, const Family& f) {
  for (spec::RedOp op : kOps)
    for (int d : f.dims) out.push_back(make_fn(f, d, &op, "", ""));
}

// A bulk reduction family: one function per (op, type) pair of the table. The C++ type picks the
// PTX type; bitwise pairs take any type of the width; a u64 add also takes int64_t (as in CCCL:
// the same bits).
void add_bulk_reduce(std::vector<DeviceFn>& out, Family f, const std::string& params) {
  for (const auto& p : bulk_pairs(f.form)) {
    const bool bitwise = p.op == spec::RedOp::and_ || p.op == spec::RedOp::or_ || p.op == spec::RedOp::xor_;
    const std::string type = (p.noftz ? ".noftz." : ".") + std::string(spec::name(p.type));
    std::vector<std::string> ctypes;
    if (bitwise) ctypes = {"T"};
    else ctypes = {std::string(ctype_of(p.type))};
    if (p.op == spec::RedOp::add && p.type == spec::RedType::u64) ctypes.push_back("int64_t");
    for (const auto& ct : ctypes) {
      Family g = f;
      g.params = params;
      for (size_t i; (i = g.params.find("{T}")) != std::string::npos;) g.params.replace(i, 3, ct);
      if (bitwise) g.extra_requires = fmt::format("sizeof(T) == {}", spec::red_type_bytes(p.type));
      out.push_back(make_fn(g, 0, &p.op, type, bitwise ? "class T" : ""));
    }
  }
}

std::vector<DeviceFn> build() {
  std::vector<DeviceFn> v;
  const std::string tile = ".tile", im2col = ".im2col", mc = ".multicast::cluster";
  const std::vector<int> all{1, 2, 3, 4, 5}, im{3, 4, 5};
  for (bool hint : {false, true}) {
    const std::string pol = hint ? ", uint64_t policy" : "";
    // ---- tensor.cuh ----
    add_family(v, {"tensor.cuh", "load_tile", "tensor.load.shared::cta", tile, all, hint,
                   "ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, dst, map_ptr(m), c, bar);",
                   "TensorMapArg M", "", "void* dst, const M& m, {c}, uint64_t* bar" + pol});
    add_family(v, {"tensor.cuh", "load_tile_cluster", "tensor.load.shared::cluster", tile, all, hint,
                   "ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map_ptr(m), c, bar);",
                   "TensorMapArg M", "", "void* dst, const M& m, {c}, uint64_t* bar" + pol});
    add_family(v, {"tensor.cuh", "load_tile_multicast", "tensor.load.shared::cluster", tile + mc, all, hint,
                   "ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map_ptr(m), c, bar, cta_mask);",
                   "TensorMapArg M", "", "void* dst, const M& m, {c}, uint64_t* bar, uint16_t cta_mask" + pol});
    add_family(v, {"tensor.cuh", "load_im2col", "tensor.load.shared::cta", im2col, im, hint, "", "TensorMapArg M", "",
                   "void* dst, const M& m, {c}, {offsets}, uint64_t* bar" + pol});
    add_family(v, {"tensor.cuh", "load_im2col_cluster", "tensor.load.shared::cluster", im2col, im, hint, "",
                   "TensorMapArg M", "", "void* dst, const M& m, {c}, {offsets}, uint64_t* bar" + pol});
    add_family(v, {"tensor.cuh", "load_im2col_multicast", "tensor.load.shared::cluster", im2col + mc, im, hint, "",
                   "TensorMapArg M", "", "void* dst, const M& m, {c}, {offsets}, uint64_t* bar, uint16_t cta_mask" + pol});
    add_family(v, {"tensor.cuh", "store_tile", "tensor.store", tile, all, hint,
                   "ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_ptr(m), c, src);",
                   "TensorMapArg M", "", "const M& m, {c}, const void* src" + pol});
    add_family(v, {"tensor.cuh", "store_im2col", "tensor.store", ".im2col_no_offs", im, hint, "", "TensorMapArg M", "",
                   "const M& m, {c}, const void* src" + pol});
    add_tensor_reduce(v, {"tensor.cuh", "reduce_tile", "tensor.reduce", tile, all, hint,
                          "ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, op, map_ptr(m), c, src);",
                          "TensorMapArg M", "", "{op}, const M& m, {c}, const void* src" + pol});
    add_tensor_reduce(v, {"tensor.cuh", "reduce_im2col", "tensor.reduce", ".im2col_no_offs", im, hint, "",
                          "TensorMapArg M", "", "{op}, const M& m, {c}, const void* src" + pol});
    add_family(v, {"tensor.cuh", "prefetch_tile", "tensor.prefetch", tile, all, hint, "", "TensorMapArg M", "",
                   "const M& m, {c}" + pol});
    add_family(v, {"tensor.cuh", "prefetch_im2col", "tensor.prefetch", im2col, im, hint, "", "TensorMapArg M", "",
                   "const M& m, {c}, {offsets}" + pol});
    // ---- bulk.cuh ----
    add_family(v, {"bulk.cuh", "bulk_load", "bulk.shared::cta.global", "", {}, hint,
                   "ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, dst, src, size, bar);", "", "",
                   "void* dst, const void* src, uint32_t size, uint64_t* bar" + pol});
    add_family(v, {"bulk.cuh", "bulk_load_cluster", "bulk.shared::cluster.global", "", {}, hint,
                   "ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar);", "", "",
                   "void* dst, const void* src, uint32_t size, uint64_t* bar" + pol});
    add_family(v, {"bulk.cuh", "bulk_load_multicast", "bulk.shared::cluster.global", mc, {}, hint,
                   "ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar, cta_mask);", "", "",
                   "void* dst, const void* src, uint32_t size, uint64_t* bar, uint16_t cta_mask" + pol});
    if (!hint)
      add_family(v, {"bulk.cuh", "bulk_copy_to_peer", "bulk.shared::cluster.shared::cta", "", {}, false,
                     "ptx::cp_async_bulk(ptx::space_cluster, ptx::space_shared, dst, src, size, remote_bar);", "", "",
                     "void* dst, const void* src, uint32_t size, uint64_t* remote_bar", {"dst", "src", "remote_bar"}});
    add_family(v, {"bulk.cuh", "bulk_store", "bulk.global.shared::cta", "", {}, hint,
                   "ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, dst, src, size);", "", "",
                   "void* dst, const void* src, uint32_t size" + pol});
    add_bulk_reduce(v, {"bulk.cuh", "bulk_reduce", "bulk-reduce.global.shared::cta", "", {}, hint,
                        "ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, op, dst, src, size);", ""},
                    "{op}, {T}* dst, const {T}* src, uint32_t size" + pol);
    if (!hint)
      add_bulk_reduce(v, {"bulk.cuh", "bulk_reduce_cluster", "bulk-reduce.shared::cluster.shared::cta", "", {}, false,
                          "ptx::cp_reduce_async_bulk(ptx::space_cluster, ptx::space_shared, op, remote_dst, src, size, "
                          "remote_bar);",
                          "", "", "", {"remote_dst", "src", "remote_bar"}},
                      "{op}, {T}* remote_dst, const {T}* src, uint32_t size, uint64_t* remote_bar");
    add_family(v, {"bulk.cuh", "bulk_prefetch", "bulk.prefetch", "", {}, hint, "", "", "",
                   "const void* src, uint32_t size" + pol});
  }
  // ---- sm100.cuh: the sm_100 forms, gated by the table's targets ----
  const std::string g4 = ".tile::gather4";
  auto sm = [&](Family f) {
    f.file = "sm100.cuh";
    add_family(v, f);
  };
  sm({"", "load_tile_gather4", "tensor.load.shared::cta", g4, {2}, false,
      "ptx::cp_async_bulk_tensor_tile_gather4(ptx::space_shared, ptx::space_global, dst, map_ptr(m), c, bar);",
      "TensorMapArg M", "", "void* dst, const M& m, {c}, uint64_t* bar", {}, ".tile::gather4"});
  sm({"", "load_tile_gather4_cluster", "tensor.load.shared::cluster", g4, {2}, false, "", "TensorMapArg M", "",
      "void* dst, const M& m, {c}, uint64_t* bar", {}, ".tile::gather4 into .shared::cluster"});
  sm({"", "load_tile_gather4_multicast", "tensor.load.shared::cluster", g4 + mc, {2}, false, "", "TensorMapArg M", "",
      "void* dst, const M& m, {c}, uint64_t* bar, uint16_t cta_mask", {}, ".tile::gather4 .multicast::cluster"});
  sm({"", "prefetch_tile_gather4", "tensor.prefetch", g4, {2}, false, "", "TensorMapArg M", "", "const M& m, {c}", {},
      ".tile::gather4 prefetch"});
  sm({"", "store_tile_scatter4", "tensor.store", ".tile::scatter4", {2}, false, "", "TensorMapArg M", "",
      "const M& m, {c}, const void* src", {}, ".tile::scatter4"});
  for (int g : {1, 2}) {
    sm({"", "load_tile_cta_group", "tensor.load.shared::cluster", fmt::format(".tile.cta_group::{}", g), all, false, "",
        "int G, int N, TensorMapArg M", fmt::format("G == {}", g), "void* dst, const M& m, {c}, uint64_t* bar", {},
        ".cta_group"});
  }
  for (int g : {1, 2}) {
    sm({"", "load_tile_gather4_cta_group", "tensor.load.shared::cluster", fmt::format("{}.cta_group::{}", g4, g), {2},
        false, "", "int G, TensorMapArg M", fmt::format("G == {}", g), "void* dst, const M& m, {c}, uint64_t* bar", {},
        ".cta_group"});
  }
  sm({"", "bulk_store_masked", "bulk.global.shared::cta", ".cp_mask", {}, false,
      "ptx::cp_async_bulk_cp_mask(ptx::space_global, ptx::space_shared, dst, src, size, byte_mask);", "class D = void",
      "", "void* dst, const void* src, uint32_t size, uint16_t byte_mask", {}, ".cp_mask"});
  const std::string wp = "const M& m, {c}, uint16_t w_halo, uint16_t w_offset";
  sm({"", "load_im2col_w", "tensor.load.shared::cta", ".im2col::w", im, false, "", "TensorMapArg M", "",
      "void* dst, " + wp + ", uint64_t* bar", {}, ".im2col::w"});
  sm({"", "load_im2col_w128", "tensor.load.shared::cta", ".im2col::w::128", im, false, "", "TensorMapArg M", "",
      "void* dst, " + wp + ", uint64_t* bar", {}, ".im2col::w::128"});
  sm({"", "prefetch_im2col_w", "tensor.prefetch", ".im2col::w", im, false, "", "TensorMapArg M", "", wp, {},
      ".im2col::w prefetch"});
  sm({"", "prefetch_im2col_w128", "tensor.prefetch", ".im2col::w::128", im, false, "", "TensorMapArg M", "", wp, {},
      ".im2col::w::128 prefetch"});
  // ---- mbarrier.cuh ----
  add_mbarrier_functions(v);
  return v;
}

}  // namespace

std::vector<spec::ReductionPair> bulk_pairs(std::string_view form_id) {
  std::vector<spec::ReductionPair> v;
  for (const auto& p : spec::reduction_pairs())
    if (p.form_id == form_id) v.push_back(p);
  const auto bitwise = [](const spec::ReductionPair& p) {
    return p.op == spec::RedOp::and_ || p.op == spec::RedOp::or_ || p.op == spec::RedOp::xor_;
  };
  std::stable_sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
    if (bitwise(a) != bitwise(b)) return !bitwise(a);
    return bitwise(a) && spec::red_type_bytes(a.type) < spec::red_type_bytes(b.type);
  });
  return v;
}

const std::vector<DeviceFn>& device_functions() {
  static const std::vector<DeviceFn> fns = build();
  return fns;
}

}  // namespace tmakit::gen_device
