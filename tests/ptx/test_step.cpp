// ptx::decode (step.hpp): every form of the table, with random qualifier choices and operands,
// decodes to the struct of its operation; every written operand lands in exactly one slot under
// its table name, with the role its table kind gives it; and the decoded qualifiers say what the
// text says (worked examples below).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "random_forms.hpp"
#include "tmakit/ptx/step.hpp"

namespace {

using namespace tmakit;
using Role = ptx::OperandSlot::Role;

ptx::Step decode(const std::string& text) {
  Diagnostics d;
  auto inst = ptx::parse_instruction(text, d);
  EXPECT_TRUE(inst) << text << (d.empty() ? "" : ": " + d.front().message);
  return ptx::decode(std::move(*inst));
}

// The variant alternative each operation decodes to, written out independently of step.cpp.
size_t expected_alternative(spec::Op op) {
  using spec::Op;
  switch (op) {
    case Op::bulk_copy: return 0;
    case Op::bulk_reduce: return 1;
    case Op::bulk_prefetch: return 2;
    case Op::tensor_load: case Op::tensor_store: case Op::tensor_reduce: case Op::tensor_prefetch: return 3;
    case Op::commit_group: return 4;
    case Op::wait_group: return 5;
    case Op::mbar_init: return 6;
    case Op::mbar_arrive: return 7;
    case Op::mbar_expect_tx: case Op::mbar_complete_tx: return 8;
    case Op::mbar_test_wait: case Op::mbar_try_wait: return 9;
    case Op::mbar_pending_count: return 10;
    case Op::mbar_inval: return 11;
    case Op::fence: return 12;
    case Op::cluster_barrier: return 13;
    case Op::store: return 14;
    case Op::tensormap: return 15;
  }
  return 99;
}

Role role_of(spec::OperandKind k) {
  switch (k) {
    case spec::OperandKind::address: return Role::address;
    case spec::OperandKind::tensor: return Role::tensor;
    case spec::OperandKind::vector: return Role::vector;
    case spec::OperandKind::state: case spec::OperandKind::sink: case spec::OperandKind::predicate: return Role::destination;
    case spec::OperandKind::value: return Role::value;
  }
  return Role::value;
}

TEST(Decode, EveryFormPutsEveryOperandInOneSlot) {
  std::mt19937 rng(22);
  int decoded = 0;
  for (const auto& f : spec::forms()) {
    for (int trial = 0; trial < 20; ++trial) {
      const auto text = ptx::test::random_instruction(f, rng);
      if (!text) continue;
      Diagnostics pd;
      auto inst = ptx::parse_instruction(*text, pd);
      ASSERT_TRUE(inst) << *text;
      ptx::Step step = ptx::decode(*inst);
      ASSERT_EQ(step.body.index(), expected_alternative(f.op)) << *text;
      EXPECT_EQ(step.mnemonic, spec::canonical_mnemonic(inst->sel));
      // Each written operand exactly once, by name, with its role; nothing else.
      std::map<std::string, int> written, slotted;
      std::map<std::string, Role> roles;
      for (size_t i = 0; i < inst->operands.size(); ++i) {
        const std::string name(inst->operand_specs[i]->name);
        ++written[name];
        roles[name] = role_of(inst->operand_specs[i]->kind);
      }
      if (f.op == spec::Op::tensormap) continue;  // not modelled: no slots
      for (const auto& slot : ptx::operand_slots(step)) {
        ++slotted[std::string(slot.name)];
        EXPECT_EQ(slot.role, roles[std::string(slot.name)]) << *text << " " << slot.name;
        EXPECT_EQ(slot.operand->str(), inst->operand(slot.name)->str()) << *text << " " << slot.name;
      }
      EXPECT_EQ(slotted, written) << *text;
      ++decoded;
    }
  }
  EXPECT_GT(decoded, 500);
}

TEST(Decode, TensorLoadQualifiers) {
  ptx::Step s = decode(
      "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [d], [m, {a, b, c}], [bar], {o}, mask, pol;");
  const auto& t = s.as<ptx::TensorCopy>();
  EXPECT_EQ(t.kind, ptx::TensorCopy::Kind::load);
  EXPECT_EQ(t.dim, 3);
  EXPECT_EQ(t.mode, ptx::LoadMode::im2col);
  EXPECT_EQ(t.dst, ptx::Space::shared_cluster);
  EXPECT_TRUE(t.multicast);
  EXPECT_EQ(t.cta_group, 0);
  EXPECT_EQ(t.tensor.map, "m");
  ASSERT_TRUE(t.ctaMask && t.policy && t.im2colInfo && t.mbar && t.dstMem);
  EXPECT_EQ(t.ctaMask->expr.symbol, "mask");
  EXPECT_EQ(t.policy->expr.symbol, "pol");
  EXPECT_FALSE(t.srcMem);
  // The absent load mode is .tile; a store's destination is global.
  const ptx::Step st_step = decode("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [m, {x, y}], [src];");
  const auto& st = st_step.as<ptx::TensorCopy>();
  EXPECT_EQ(st.kind, ptx::TensorCopy::Kind::store);
  EXPECT_EQ(st.mode, ptx::LoadMode::tile);
  EXPECT_EQ(st.dst, ptx::Space::global);
  EXPECT_FALSE(st.policy);
  const ptx::Step red_step = decode("cp.reduce.async.bulk.tensor.1d.global.shared::cta.min.bulk_group [m, {x}], [src];");
  const auto& red = red_step.as<ptx::TensorCopy>();
  EXPECT_EQ(red.red, spec::RedOp::min);
}

TEST(Decode, BarrierForms) {
  const ptx::Step a_step = decode("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [bar], 64;");
  const auto& a = a_step.as<ptx::MbarArrive>();
  EXPECT_TRUE(a.expect_tx);
  EXPECT_FALSE(a.drop);
  EXPECT_EQ(a.space, ptx::Space::shared_cluster);
  EXPECT_EQ(a.scope, ptx::Scope::cluster);
  ASSERT_TRUE(a.txCount);
  EXPECT_EQ(a.txCount->expr.offset, 64);
  EXPECT_EQ(a.state.kind, ptx::Operand::Kind::sink);
  const ptx::Step d_step = decode("mbarrier.arrive_drop.noComplete.shared.b64 st, [bar], 2;");
  const auto& d = d_step.as<ptx::MbarArrive>();
  EXPECT_TRUE(d.drop && d.no_complete);
  EXPECT_EQ(d.space, ptx::Space::shared_cta);
  const ptx::Step w_step = decode("mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 1;");
  const auto& w = w_step.as<ptx::MbarWait>();
  EXPECT_TRUE(w.blocking && w.parity);
  EXPECT_EQ(w.phase.expr.offset, 1);
  const ptx::Step t_step = decode("mbarrier.test_wait.shared.b64 p, [bar], st;");
  const auto& t = t_step.as<ptx::MbarWait>();
  EXPECT_FALSE(t.blocking || t.parity);
  EXPECT_EQ(t.phase.expr.symbol, "st");
  EXPECT_TRUE(decode("mbarrier.complete_tx.shared::cluster.b64 [bar], 16;").as<ptx::MbarTx>().complete);
  EXPECT_EQ(decode("fence.proxy.async.global;").as<ptx::Fence>().space, ptx::Space::global);
  EXPECT_FALSE(decode("fence.proxy.async;").as<ptx::Fence>().space);
  EXPECT_EQ(decode("fence.mbarrier_init.release.cluster;").as<ptx::Fence>().kind, ptx::Fence::Kind::mbarrier_init);
  EXPECT_EQ(decode("st.shared.b16 [a], 1;").as<ptx::Store>().bytes, 2);
  EXPECT_EQ(decode("st.global.b64 [a], 1;").as<ptx::Store>().space, ptx::Space::global);
  EXPECT_TRUE(decode("cp.async.bulk.wait_group.read 0;").as<ptx::WaitGroup>().read);
}

TEST(Decode, BulkFormsAndTheirSpaces) {
  const ptx::Step r_step = decode("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [g], [s], 32;");
  const auto& r = r_step.as<ptx::BulkReduce>();
  EXPECT_EQ(r.dst, ptx::Space::global);
  EXPECT_EQ(r.red, spec::RedOp::add);
  EXPECT_EQ(r.type, spec::RedType::bf16);
  EXPECT_TRUE(r.noftz);
  ptx::Step peer = decode("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [d], [s], 64, [bar];");
  const auto& b = peer.as<ptx::BulkCopy>();
  EXPECT_EQ(b.dst, ptx::Space::shared_cluster);
  EXPECT_EQ(b.src, ptx::Space::shared_cta);
  // The slots carry the state space each address lies in, from the decoded qualifiers.
  std::map<std::string, ptx::Space> spaces;
  for (const auto& slot : ptx::operand_slots(peer))
    if (slot.role == Role::address) spaces[std::string(slot.name)] = slot.space;
  EXPECT_EQ(spaces.at("dstMem"), ptx::Space::shared_cluster);
  EXPECT_EQ(spaces.at("srcMem"), ptx::Space::shared_cta);
  EXPECT_EQ(spaces.at("mbar"), ptx::Space::shared_cluster);
  ptx::Step load = decode("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [d], [g], 64, [bar];");
  for (const auto& slot : ptx::operand_slots(load))
    if (slot.name == "srcMem") EXPECT_EQ(slot.space, ptx::Space::global);
    else if (slot.role == Role::address) EXPECT_EQ(slot.space, ptx::Space::shared_cta);
}

}  // namespace
