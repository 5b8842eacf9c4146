// The rows of the table of instruction forms. Sources: the PTX ISA pages in
// shared/seeds and tma-semantics.md Appendix A, §6.1, §6.2 and §11.
#include "tmakit/spec/forms.hpp"

namespace tmakit::spec {
namespace {

using K = OperandKind;
constexpr PtxVersion v70{7, 0}, v71{7, 1}, v78{7, 8}, v80{8, 0}, v83{8, 3}, v86{8, 6}, v88{8, 8};

Qualifier q(std::string_view text, PtxVersion since = {}, TargetReq targets = {}, TargetReq advised = {}) {
  return {text, since, std::move(targets), std::move(advised)};
}

// `.multicast::cluster` works from sm_90 but is advised only on these targets (PTX-BT, PTX-B notes).
TargetReq multicast_advised() {
  return {{{TargetAlt::arch_specific, 90, {}},
           {TargetAlt::family, 100, {}},
           {TargetAlt::arch_specific, 100, {}},
           {TargetAlt::family, 103, {}},
           {TargetAlt::arch_specific, 103, {}},
           {TargetAlt::family, 110, {}},
           {TargetAlt::arch_specific, 110, {}}}};
}

// `.tile::gather4` / `.im2col::w` with a `.shared::cluster` destination: sm_100a, and sm_100f from PTX 8.8.
TargetReq sm100a_or_family_88() {
  return {{{TargetAlt::arch_specific, 100, {}}, {TargetAlt::family, 100, v88}}};
}

Slot dim_slot() { return {"dim", {q(".1d"), q(".2d"), q(".3d"), q(".4d"), q(".5d")}, true}; }
Slot one(std::string_view name, std::string_view text, bool ordered = false) {
  return {name, {q(text)}, true, {}, ordered};
}
Slot cache_hint_slot() { return {"level::cache_hint", {q(".L2::cache_hint")}}; }
Slot mbar_completion() { return one("completion_mechanism", ".mbarrier::complete_tx::bytes"); }
Slot bulk_group_completion() { return one("completion_mechanism", ".bulk_group"); }
Slot red_op_slot() {
  return {"redOp", {q(".add"), q(".min"), q(".max"), q(".inc"), q(".dec"), q(".and"), q(".or"), q(".xor")}, true};
}

Operand addr(std::string_view name) { return {name, K::address}; }
// An integer constant, never a register (ptxas: "Arguments mismatch" for a register).
Operand imm(std::string_view name, std::vector<std::string_view> when = {}, ValueRule values = {}) {
  return {name, K::value, 32, std::move(when), false, Length::none, {}, true, true, values};
}
// The byte count of a bulk copy: an immediate is a multiple of 16 up to 2^20 - 16 (ptxas:
// "expected to be in range [0..1048560]", "expected to be multiple of 16"; §7).
Operand bulk_size() {
  Operand o{"size", K::value, 32};
  o.values = {0, 1048560, 16};
  return o;
}
// An arrive's count: an immediate must be positive (ptxas: "expected to be a non-zero positive").
Operand arrive_count(bool optional, PtxVersion since = {}) {
  return {"count", K::value, 32, {}, optional, Length::none, since, false, true, {1, INT64_MAX, 1}};
}
Operand parity() {
  Operand o{"phaseParity", K::value, 32};
  o.values = {0, 1, 1};  // ptxas: "expected to be 0 or 1"
  return o;
}
Operand val(std::string_view name, int bits = 32) { return {name, K::value, bits}; }
Operand policy() { return {"cache-policy", K::value, 64, {".L2::cache_hint"}}; }
Operand tensor_coords() { return {"[tensorMap, tensorCoords]", K::tensor, 32, {}, false, Length::coords}; }
Operand im2col_info() {
  return {"im2colInfo", K::vector, 16, {".im2col", ".im2col::w", ".im2col::w::128"}, false, Length::im2col_info};
}

std::vector<Constraint> tensor_constraints() {
  return {{".tile::gather4", {".2d"}, "ptx.gather4-dim"},
          {".tile::scatter4", {".2d"}, "ptx.scatter4-dim"},
          {".im2col", {".3d", ".4d", ".5d"}, "ptx.im2col-dim"},
          {".im2col::w", {".3d", ".4d", ".5d"}, "ptx.im2col-dim"},
          {".im2col::w::128", {".3d", ".4d", ".5d"}, "ptx.im2col-dim"},
          {".im2col_no_offs", {".3d", ".4d", ".5d"}, "ptx.im2col-dim"}};
}

// mbarrier slots (PTX-MB). `.shared` alone means `.shared::cta`.
Slot local_space() { return {"state_space", {q(".shared"), q(".shared::cta", v78)}}; }
Slot remote_space() { return {"state_space", {q(".shared::cluster", v80)}, true}; }
Slot any_space() { return {"state_space", {q(".shared"), q(".shared::cta", v78), q(".shared::cluster", v80)}}; }
Slot arrive_sem() { return {"sem", {q(".release", v80), q(".relaxed", v86)}, false, ".release"}; }
Slot wait_sem() { return {"sem", {q(".acquire", v80), q(".relaxed", v86)}, false, ".acquire"}; }
Slot scope() { return {"scope", {q(".cta", v80), q(".cluster", v80)}, false, ".cta"}; }
Slot relaxed_only() { return {"sem", {q(".relaxed", v80)}, false, ".relaxed"}; }
Slot b64() { return one("type", ".b64"); }

// .sem and .scope are written together or not at all (ptxas 13.0: "Modifier '.release' requires
// scope", "Modifier '.cta' requires order"; measured by tools/lintfuzz).
std::vector<Constraint> sem_with_scope(const Slot& sem, const Slot& scope) {
  std::vector<std::string_view> sems, scopes;
  for (const auto& c : sem.choices) sems.push_back(c.text);
  for (const auto& c : scope.choices) scopes.push_back(c.text);
  std::vector<Constraint> out;
  for (auto s : sems) out.push_back({s, scopes, "ptx.sem-scope"});
  for (auto s : scopes) out.push_back({s, sems, "ptx.sem-scope"});
  return out;
}

// arrive, arrive_drop and their .expect_tx / .noComplete variants, local and remote (Appendix A).
void add_arrive_forms(std::vector<Form>& t, std::string_view base) {
  const bool drop = base == "mbarrier.arrive_drop";
  // plain
  t.push_back({drop ? "mbarrier.arrive_drop.local" : "mbarrier.arrive.local", base, Op::mbar_arrive,
               {arrive_sem(), scope(), local_space(), b64()},
               {{"state", K::state, 64}, addr("addr"), arrive_count(true, v78)},
               v70, at_least(80), sem_with_scope(arrive_sem(), scope()), "PTX-MB",
               drop ? "arrive-on and drop one expected arrival from later phases; returns the phase token"
                    : "arrive-on the barrier in the executing CTA; returns the phase token"});
  t.push_back({drop ? "mbarrier.arrive_drop.remote" : "mbarrier.arrive.remote", base, Op::mbar_arrive,
               {arrive_sem(), scope(), remote_space(), b64()},
               {{"state", K::sink, 64}, addr("addr"), arrive_count(true)},
               v80, at_least(90), sem_with_scope(arrive_sem(), scope()), "PTX-MB",
               "arrive-on a barrier of any CTA of the cluster (no token)"});
  std::string_view ex = drop ? "mbarrier.arrive_drop.expect_tx" : "mbarrier.arrive.expect_tx";
  t.push_back({drop ? "mbarrier.arrive_drop.expect_tx.local" : "mbarrier.arrive.expect_tx.local", ex, Op::mbar_arrive,
               {arrive_sem(), scope(), local_space(), b64()},
               {{"state", K::state, 64}, addr("addr"), val("txCount")},
               v80, at_least(90), sem_with_scope(arrive_sem(), scope()), "PTX-MB",
               "expect-tx(txCount) then arrive-on, as one operation"});
  t.push_back({drop ? "mbarrier.arrive_drop.expect_tx.remote" : "mbarrier.arrive.expect_tx.remote", ex,
               Op::mbar_arrive, {arrive_sem(), scope(), remote_space(), b64()},
               {{"state", K::sink, 64}, addr("addr"), val("txCount")},
               v80, at_least(90), sem_with_scope(arrive_sem(), scope()), "PTX-MB",
               "expect-tx then arrive-on a barrier of any CTA of the cluster"});
  std::string_view nc = drop ? "mbarrier.arrive_drop.noComplete" : "mbarrier.arrive.noComplete";
  t.push_back({drop ? "mbarrier.arrive_drop.noComplete.local" : "mbarrier.arrive.noComplete.local", nc,
               Op::mbar_arrive, {{"sem", {q(".release", v80)}, false, ".release"},
                                 {"scope", {q(".cta", v80)}, false, ".cta"}, local_space(), b64()},
               {{"state", K::state, 64}, addr("addr"), arrive_count(false)},
               v70, at_least(80), sem_with_scope({"sem", {q(".release", v80)}}, {"scope", {q(".cta", v80)}}), "PTX-MB",
               "arrive-on that must not complete the phase"});
}

std::vector<Form> build() {
  std::vector<Form> t;

  // ---- cp.async.bulk.tensor (PTX-BT) ----
  t.push_back({"tensor.load.shared::cta", "cp.async.bulk.tensor", Op::tensor_load,
               {dim_slot(), one("dst", ".shared::cta", true), one("src", ".global", true),
                {"load_mode",
                 {q(".tile"), q(".tile::gather4", v86, at_least(100)), q(".im2col"),
                  q(".im2col::w", v86, at_least(100)), q(".im2col::w::128", v86, sm100a_family_rule())},
                 false, ".tile"},
                mbar_completion(),
                {"cta_group", {q(".cta_group::1", v86, sm100a_family_rule()), q(".cta_group::2", v86, sm100a_family_rule())}},
                cache_hint_slot()},
               {addr("dstMem"), tensor_coords(), addr("mbar"), im2col_info(), policy()},
               v86, at_least(90), tensor_constraints(), "PTX-BT",
               "tensor load into the executing CTA's shared memory, completing on an mbarrier"});
  t.push_back({"tensor.load.shared::cluster", "cp.async.bulk.tensor", Op::tensor_load,
               {dim_slot(), one("dst", ".shared::cluster", true), one("src", ".global", true),
                {"load_mode",
                 {q(".tile"), q(".tile::gather4", v86, sm100a_or_family_88()), q(".im2col"),
                  q(".im2col::w", v86, sm100a_or_family_88()), q(".im2col::w::128", v86, sm100a_family_rule())},
                 false, ".tile"},
                mbar_completion(),
                {"multicast", {q(".multicast::cluster", {}, {}, multicast_advised())}},
                {"cta_group", {q(".cta_group::1", v86, sm100a_family_rule()), q(".cta_group::2", v86, sm100a_family_rule())}},
                cache_hint_slot()},
               {addr("dstMem"), tensor_coords(), addr("mbar"), im2col_info(),
                {"ctaMask", K::value, 16, {".multicast::cluster"}}, policy()},
               v80, at_least(90), tensor_constraints(), "PTX-BT",
               "tensor load into any CTA of the cluster (or several, with multicast), completing on an mbarrier"});
  t.push_back({"tensor.store", "cp.async.bulk.tensor", Op::tensor_store,
               {dim_slot(), one("dst", ".global", true), one("src", ".shared::cta", true),
                {"load_mode", {q(".tile"), q(".tile::scatter4", v86, sm100a_family_rule()), q(".im2col_no_offs")},
                 false, ".tile"},
                bulk_group_completion(), cache_hint_slot()},
               {tensor_coords(), addr("srcMem"), policy()},
               v80, at_least(90), tensor_constraints(), "PTX-BT",
               "tensor store from the executing CTA's shared memory, completing through a bulk async-group"});

  // ---- cp.reduce.async.bulk.tensor (PTX-RT) ----
  t.push_back({"tensor.reduce", "cp.reduce.async.bulk.tensor", Op::tensor_reduce,
               {dim_slot(), one("dst", ".global", true), one("src", ".shared::cta", true), red_op_slot(),
                {"load_mode", {q(".tile"), q(".im2col_no_offs")}, false, ".tile"},
                bulk_group_completion(), cache_hint_slot()},
               {tensor_coords(), addr("srcMem"), policy()},
               v80, at_least(90), tensor_constraints(), "PTX-RT",
               "element-wise reduction of shared-memory tensor data into global memory"});

  // ---- cp.async.bulk.prefetch.tensor (PTX-PT) ----
  t.push_back({"tensor.prefetch", "cp.async.bulk.prefetch.tensor", Op::tensor_prefetch,
               {dim_slot(), one("level", ".L2"), one("src", ".global"),
                {"load_mode",
                 {q(".tile"), q(".tile::gather4", v86, sm100a_family_rule()), q(".im2col"),
                  q(".im2col::w", v86, sm100a_family_rule()), q(".im2col::w::128", v86, sm100a_family_rule())},
                 false, ".tile"},
                cache_hint_slot()},
               {tensor_coords(), im2col_info(), policy()},
               v80, at_least(90), tensor_constraints(), "PTX-PT", "hint: prefetch tensor data into L2"});

  // ---- cp.async.bulk (PTX-B) ----
  t.push_back({"bulk.shared::cta.global", "cp.async.bulk", Op::bulk_copy,
               {one("dst", ".shared::cta", true), one("src", ".global", true), mbar_completion(), cache_hint_slot()},
               {addr("dstMem"), addr("srcMem"), bulk_size(), addr("mbar"), policy()},
               v86, at_least(90), {}, "PTX-B", "bulk copy global → executing CTA's shared memory"});
  t.push_back({"bulk.shared::cluster.global", "cp.async.bulk", Op::bulk_copy,
               {one("dst", ".shared::cluster", true), one("src", ".global", true), mbar_completion(),
                {"multicast", {q(".multicast::cluster", {}, {}, multicast_advised())}}, cache_hint_slot()},
               {addr("dstMem"), addr("srcMem"), bulk_size(), addr("mbar"),
                {"ctaMask", K::value, 16, {".multicast::cluster"}}, policy()},
               v80, at_least(90), {}, "PTX-B", "bulk copy global → any CTA of the cluster (or several, multicast)"});
  t.push_back({"bulk.shared::cluster.shared::cta", "cp.async.bulk", Op::bulk_copy,
               {one("dst", ".shared::cluster", true), one("src", ".shared::cta", true), mbar_completion()},
               {addr("dstMem"), addr("srcMem"), bulk_size(), addr("mbar")},
               v80, at_least(90), {}, "PTX-B", "bulk copy executing CTA → another CTA of the cluster"});
  t.push_back({"bulk.global.shared::cta", "cp.async.bulk", Op::bulk_copy,
               {one("dst", ".global", true), one("src", ".shared::cta", true), bulk_group_completion(),
                cache_hint_slot(), {"cp_mask", {q(".cp_mask", v86, at_least(100))}}},
               {addr("dstMem"), addr("srcMem"), bulk_size(), policy(), {"byteMask", K::value, 16, {".cp_mask"}}},
               v80, at_least(90), {}, "PTX-B", "bulk copy executing CTA's shared memory → global"});

  // ---- cp.reduce.async.bulk (PTX-RB, §6.2) ----
  t.push_back({"bulk-reduce.shared::cluster.shared::cta", "cp.reduce.async.bulk", Op::bulk_reduce,
               {one("dst", ".shared::cluster", true), one("src", ".shared::cta", true), mbar_completion(),
                red_op_slot(), {"type", {q(".b32"), q(".u32"), q(".s32"), q(".b64"), q(".u64")}, true}},
               {addr("dstMem"), addr("srcMem"), bulk_size(), addr("mbar")},
               v80, at_least(90), {}, "PTX-RB", "element-wise reduction into another CTA's shared memory"});
  t.push_back({"bulk-reduce.global.shared::cta", "cp.reduce.async.bulk", Op::bulk_reduce,
               {one("dst", ".global", true), one("src", ".shared::cta", true), bulk_group_completion(),
                cache_hint_slot(), red_op_slot(), {"noftz", {q(".noftz")}},
                {"type", {q(".f16"), q(".bf16"), q(".b32"), q(".u32"), q(".s32"), q(".b64"), q(".u64"), q(".s64"),
                          q(".f32"), q(".f64")}, true}},
               {addr("dstMem"), addr("srcMem"), bulk_size(), policy()},
               v80, at_least(90), {}, "PTX-RB", "element-wise reduction of shared memory into global memory"});

  // ---- cp.async.bulk.prefetch (PTX-PB) ----
  t.push_back({"bulk.prefetch", "cp.async.bulk.prefetch", Op::bulk_prefetch,
               {one("level", ".L2"), one("src", ".global"), cache_hint_slot()},
               {addr("srcMem"), bulk_size(), policy()},
               v80, at_least(90), {}, "PTX-PB", "hint: prefetch a global range into L2"});

  // ---- bulk async-groups (PTX-G) ----
  t.push_back({"bulk.commit_group", "cp.async.bulk.commit_group", Op::commit_group, {}, {},
               v80, at_least(90), {}, "PTX-G", "close the thread's pending bulk operations into a group"});
  t.push_back({"bulk.wait_group", "cp.async.bulk.wait_group", Op::wait_group, {{"read", {q(".read")}}},
               {imm("N")}, v80, at_least(90), {}, "PTX-G",
               "wait until at most N groups are pending (.read: until their sources have been read)"});

  // ---- mbarrier (PTX-MB) ----
  t.push_back({"mbarrier.init", "mbarrier.init", Op::mbar_init, {local_space(), b64()}, {addr("addr"), val("count")},
               v70, at_least(80), {}, "PTX-MB", "initialise a barrier for `count` expected arrivals"});
  add_arrive_forms(t, "mbarrier.arrive");
  add_arrive_forms(t, "mbarrier.arrive_drop");
  t.push_back({"mbarrier.expect_tx", "mbarrier.expect_tx", Op::mbar_expect_tx,
               {relaxed_only(), scope(), any_space(), b64()}, {addr("addr"), val("txCount")},
               v80, at_least(90), sem_with_scope(relaxed_only(), scope()), "PTX-MB",
               "raise the transaction count of the current phase"});
  t.push_back({"mbarrier.complete_tx", "mbarrier.complete_tx", Op::mbar_complete_tx,
               {relaxed_only(), scope(), any_space(), b64()}, {addr("addr"), val("txCount")},
               v80, at_least(90), sem_with_scope(relaxed_only(), scope()), "PTX-MB",
               "lower the transaction count, as a finished copy would"});
  t.push_back({"mbarrier.test_wait", "mbarrier.test_wait", Op::mbar_test_wait, {wait_sem(), scope(), local_space(), b64()},
               {{"waitComplete", K::predicate}, addr("addr"), val("state", 64)},
               v70, at_least(80), sem_with_scope(wait_sem(), scope()), "PTX-MB",
               "test (never block) whether the phase of `state` has completed"});
  t.push_back({"mbarrier.test_wait.parity", "mbarrier.test_wait.parity", Op::mbar_test_wait,
               {wait_sem(), scope(), local_space(), b64()},
               {{"waitComplete", K::predicate}, addr("addr"), parity()},
               v71, at_least(80), sem_with_scope(wait_sem(), scope()), "PTX-MB",
               "test whether the phase of the given parity has completed"});
  t.push_back({"mbarrier.try_wait", "mbarrier.try_wait", Op::mbar_try_wait, {wait_sem(), scope(), local_space(), b64()},
               {{"waitComplete", K::predicate}, addr("addr"), val("state", 64), {"suspendTimeHint", K::value, 32, {}, true}},
               v78, at_least(90), sem_with_scope(wait_sem(), scope()), "PTX-MB",
               "wait (bounded) for the phase of `state` to complete"});
  t.push_back({"mbarrier.try_wait.parity", "mbarrier.try_wait.parity", Op::mbar_try_wait,
               {wait_sem(), scope(), local_space(), b64()},
               {{"waitComplete", K::predicate}, addr("addr"), parity(), {"suspendTimeHint", K::value, 32, {}, true}},
               v78, at_least(90), sem_with_scope(wait_sem(), scope()), "PTX-MB",
               "wait (bounded) for the phase of the given parity to complete"});
  t.push_back({"mbarrier.pending_count", "mbarrier.pending_count", Op::mbar_pending_count, {b64()},
               {{"count", K::state, 32, {}, false, Length::none, {}, false, false}, val("state", 64)},
               v70, at_least(80), {}, "PTX-MB", "pending arrivals recorded in a .noComplete state token"});
  t.push_back({"mbarrier.inval", "mbarrier.inval", Op::mbar_inval, {local_space(), b64()}, {addr("addr")},
               v70, at_least(80), {}, "PTX-MB", "invalidate a barrier before its memory is reused"});

  // ---- fences and cluster barriers (PTX-F): accepted and recorded ----
  t.push_back({"fence.proxy.async", "fence.proxy.async", Op::fence,
               {{"state_space", {q(".shared::cta"), q(".shared::cluster"), q(".global")}}}, {},
               v80, at_least(90), {}, "PTX-F", "order generic-proxy accesses before async-proxy ones"});
  t.push_back({"fence.mbarrier_init", "fence.mbarrier_init", Op::fence,
               {one("sem", ".release"), one("scope", ".cluster")}, {},
               v80, at_least(90), {}, "PTX-F", "make mbarrier.init visible to the cluster and the async proxy"});
  t.push_back({"barrier.cluster.arrive", "barrier.cluster.arrive", Op::cluster_barrier,
               {{"sem", {q(".release", v80), q(".relaxed", v80)}, false, ".release"}, {"aligned", {q(".aligned")}}}, {},
               v78, at_least(90), {}, "PTX-BC", "arrive at the cluster barrier"});
  t.push_back({"barrier.cluster.wait", "barrier.cluster.wait", Op::cluster_barrier,
               {{"sem", {q(".acquire", v80)}, false, ".acquire"}, {"aligned", {q(".aligned")}}}, {},
               v78, at_least(90), {}, "PTX-BC", "wait at the cluster barrier"});

  // ---- tensor-map updates in memory (PTX-TM; tensormap.replace / tensormap.cp_fenceproxy pages, PTX 8.3) ----
  // .field1/.field3 take [addr], new_val; .field2 takes [addr], ord, new_val. .field3's new_val and
  // .field2's ord are integer constants. Each field has one width (.b64: global_address, global_stride).
  {
    TargetReq replace_targets = sm100a_family_rule();
    replace_targets.any.insert(replace_targets.any.begin(), {TargetAlt::arch_specific, 90, {}});
    const std::vector<std::string_view> wide = {".global_address", ".global_stride"};
    const std::vector<std::string_view> narrow = {".rank", ".box_dim", ".global_dim", ".element_stride"};
    const std::vector<std::string_view> field2 = {".box_dim", ".global_dim", ".global_stride", ".element_stride"};
    const std::vector<std::string_view> field3 = {".elemtype", ".interleave_layout", ".swizzle_mode",
                                                  ".swizzle_atomicity", ".fill_mode"};
    std::vector<Constraint> widths;
    for (auto f : wide) widths.push_back({f, {".b64"}, "ptx.tensormap-field-type"});
    for (auto f : narrow) widths.push_back({f, {".b32"}, "ptx.tensormap-field-type"});
    for (auto f : field3) widths.push_back({f, {".b32"}, "ptx.tensormap-field-type"});
    t.push_back({"tensormap.replace", "tensormap.replace", Op::tensormap,
                 {one("mode", ".tile"),
                  {"field", {q(".global_address"), q(".rank"), q(".box_dim"), q(".global_dim"), q(".global_stride"),
                             q(".element_stride"), q(".elemtype"), q(".interleave_layout"), q(".swizzle_mode"),
                             q(".swizzle_atomicity", {}, sm100a_family_rule()), q(".fill_mode")}, true},
                  {"state_space", {q(".global"), q(".shared::cta")}},
                  one("size", ".b1024"), {"type", {q(".b32"), q(".b64")}, true}},
                 // ptxas's ranges: ord [0..4]; .fill_mode [0..1], .interleave_layout [0..2], .swizzle_mode [0..3],
                 // .elemtype [0..12] (the larger values of later PTX versions and sm_100a are not modelled).
                 {addr("addr"), imm("ord", field2, {0, 4, 1}), {"new_val", K::value, 64, wide},
                  {"new_val", K::value, 32, narrow}, imm("new_val", {".fill_mode"}, {0, 1, 1}),
                  imm("new_val", {".interleave_layout"}, {0, 2, 1}), imm("new_val", {".swizzle_mode"}, {0, 3, 1}),
                  imm("new_val", {".elemtype"}, {0, 12, 1}), imm("new_val", {".swizzle_atomicity"})},
                 v83, replace_targets, widths, "PTX-TM", "replace one field of a tensor map held in memory"});
  }
  t.push_back({"tensormap.cp_fenceproxy", "tensormap.cp_fenceproxy", Op::tensormap,
               {one("dst", ".global", true), one("src", ".shared::cta", true), one("proxy", ".tensormap::generic"),
                one("sem", ".release"), {"scope", {q(".cta"), q(".cluster"), q(".gpu"), q(".sys")}, true},
                one("sync", ".sync"), one("aligned", ".aligned")},
               {addr("dst"), addr("src"), imm("size", {}, {128, 128, 1})},  // "expected to be 128"
               v83, at_least(90), {}, "PTX-TM",
               "copy a 128-byte tensor map from shared to global memory and fence it for the tensormap proxy"});

  // ---- ordinary stores a program needs before a TMA store ----
  t.push_back({"st.shared", "st", Op::store,
               {{"state_space", {q(".shared"), q(".shared::cta", v78)}, true},
                {"type", {q(".b8"), q(".b16"), q(".b32"), q(".b64")}, true}},
               {addr("addr"), val("value", 64)}, v70, at_least(80), {}, "PTX-ST",
               "ordinary (generic-proxy) store to the executing CTA's shared memory"});
  t.push_back({"st.global", "st", Op::store,
               {one("state_space", ".global"), {"type", {q(".b8"), q(".b16"), q(".b32"), q(".b64")}, true}},
               {addr("addr"), val("value", 64)}, v70, at_least(80), {}, "PTX-ST", "ordinary store to global memory"});
  return t;
}

std::vector<ReductionPair> build_pairs() {
  std::vector<ReductionPair> p;
  auto add = [&](std::string_view form, RedOp op, std::initializer_list<RedType> types, bool noftz = false) {
    for (RedType ty : types) p.push_back({form, op, ty, noftz});
  };
  using T = RedType;
  using O = RedOp;
  // §6.1: tensor form; the type is the map's (FLOAT32_FTZ / TFLOAT32_FTZ maps add as f32.ftz, H13).
  const auto tensor = "tensor.reduce";
  add(tensor, O::add, {T::u32, T::s32, T::u64, T::f32, T::f32_ftz, T::f16, T::bf16});
  add(tensor, O::min, {T::u32, T::s32, T::u64, T::s64, T::f16, T::bf16});
  add(tensor, O::max, {T::u32, T::s32, T::u64, T::s64, T::f16, T::bf16});
  add(tensor, O::inc, {T::u32});
  add(tensor, O::dec, {T::u32});
  for (O op : {O::and_, O::or_, O::xor_}) add(tensor, op, {T::b32, T::b64});
  // §6.2: shared::cluster destination.
  const auto cluster = "bulk-reduce.shared::cluster.shared::cta";
  add(cluster, O::add, {T::u32, T::s32, T::u64});
  add(cluster, O::min, {T::u32, T::s32});
  add(cluster, O::max, {T::u32, T::s32});
  add(cluster, O::inc, {T::u32});
  add(cluster, O::dec, {T::u32});
  for (O op : {O::and_, O::or_, O::xor_}) add(cluster, op, {T::b32});
  // §6.2: global destination (f16/bf16 add is spelled .add.noftz).
  const auto global = "bulk-reduce.global.shared::cta";
  add(global, O::add, {T::u32, T::s32, T::u64, T::f32, T::f64});
  add(global, O::add, {T::f16, T::bf16}, true);
  add(global, O::min, {T::u32, T::s32, T::u64, T::s64, T::f16, T::bf16});
  add(global, O::max, {T::u32, T::s32, T::u64, T::s64, T::f16, T::bf16});
  add(global, O::inc, {T::u32});
  add(global, O::dec, {T::u32});
  for (O op : {O::and_, O::or_, O::xor_}) add(global, op, {T::b32, T::b64});
  return p;
}

}  // namespace

std::span<const Form> forms() {
  static const std::vector<Form> table = build();
  return table;
}

std::span<const ReductionPair> reduction_pairs() {
  static const std::vector<ReductionPair> pairs = build_pairs();
  return pairs;
}

}  // namespace tmakit::spec
