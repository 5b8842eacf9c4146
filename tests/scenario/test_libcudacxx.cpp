// libcu++ `call` steps (scenario-format.md "libcu++ calls", seed page 004, spec §12):
// the PTX each call lowers to, compared with the strings of CCCL's headers; the seed
// example and mixed programs against bytes computed here from the {"random"} rule;
// every libcudacxx.* rule with a failing case and a neighbour that runs clean.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tmakit/model/libcudacxx.hpp"
#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Byte i of an allocation initialised with {"random": SEED}: the low byte of
// splitmix64(SEED + i/8) >> 8*(i%8), written out here independently of the loader.
uint8_t random_byte(uint64_t seed, uint64_t i) {
  uint64_t z = seed + i / 8 + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return uint8_t(z >> (8 * (i % 8)));
}

constexpr uint64_t kSeed = 9;  // G's init

// Two CTAs (so that another CTA's shared memory can be named), G of 64 KiB. A program of one step
// is passed as json::array({step}): braces around a single json copy it with clang, where g++
// makes an array of one.
json make_scenario(json program, json extra_symbols = json::object(), json outputs = json::array()) {
  json sym = {{"dst", "shared:0"}, {"bar", "shared:4096"}, {"G", "global:G"}, {"far", "shared@1:0"},
              {"farbar", "shared@1:4096"}, {"nearbar", "shared@0:4096"}};
  for (auto& [k, v] : extra_symbols.items()) sym[k] = v;
  return {{"format", "tmakit-scenario/1"},
          {"cluster", {{"ctas", 2}}},
          {"shared_bytes", 8192},
          {"global", {{"G", {{"bytes", 65536}, {"init", {{"random", kSeed}}}}}}},
          {"tensor_maps",
           {{"tmap",
             {{"encode", "tiled"}, {"data_type", "float32"}, {"global", "G"}, {"offset", 0}, {"dims", {64, 32}},
              {"strides", {256}}, {"box", {16, 4}}, {"interleave", "none"}, {"swizzle", "none"},
              {"l2_promotion", "none"}, {"oob_fill", "none"}}}}},
          {"symbols", sym},
          {"program", program},
          {"outputs", outputs}};
}

json call(const char* name, json keys, int thread = 0) {
  keys["call"] = name;
  keys["thread"] = thread;
  return keys;
}
json init(int expected) { return call("cuda::barrier::init", {{"barrier", "bar"}, {"expected", expected}}); }
json copy(json dest, json src, json size, json align = 16, json bar = "bar") {
  return call("cuda::device::memcpy_async_tx",
              {{"dest", dest}, {"src", src}, {"size", size}, {"alignment", align}, {"barrier", bar}});
}
json arrive_tx(json count, json tx, const char* token = "t0", int thread = 0) {
  return call("cuda::device::barrier_arrive_tx", {{"barrier", "bar"}, {"arrive_count", count}, {"tx_count", tx}, {"token", token}},
              thread);
}
json wait(const char* token, int thread = 0) { return call("cuda::barrier::wait", {{"barrier", "bar"}, {"token", token}}, thread); }

scenario::RunResult run(const json& j, std::optional<uint64_t> seed = std::nullopt) {
  scenario::RunOptions o;
  o.seed = seed;
  return scenario::run(scenario::from_json(j, ""), o);
}

// The rule a scenario fails with, "" when it runs clean.
std::string rule_of(const json& j) {
  try {
    run(j);
    return "";
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule;
  }
}
std::string message_of(const json& j) {
  try {
    run(j);
    return "";
  } catch (const DiagnosticError& e) {
    return e.diagnostic().where + ": " + e.diagnostic().message;
  }
}

// A one-copy program around `c`: init, the copy, arm with `size` bytes, wait.
json one_copy(json c, int64_t size) { return make_scenario({init(1), c, arrive_tx(1, size), wait("t0")}); }

}  // namespace

// ---- the PTX each call compiles to (CCCL 13.0 headers, sm_90) ----

struct Lowered : ::testing::Test {
  model::Engine engine{[] {
    model::EngineConfig c;
    c.ctas = 2;
    c.shared_bytes = 8192;
    return c;
  }()};
  Lowered() {
    engine.global().allocate("G", 4096, 256);
    engine.set_symbol("bar", {model::Value::Kind::shared, 64});
    engine.set_symbol("dst", {model::Value::Kind::shared, 1024});
    engine.set_symbol("src", {model::Value::Kind::global, static_cast<int64_t>(engine.global().allocation("G")->base)});
  }
  std::vector<std::string> lower(model::CallKind k, std::map<std::string, ptx::Expr> args, std::string token = "") {
    return model::lower_call({k, std::move(args), std::move(token)}, engine, 0, "here");
  }
  static ptx::Expr sym(const char* s, int64_t off = 0) { return {s, off}; }
  static ptx::Expr imm(int64_t v) { return {"", v}; }
};

TEST_F(Lowered, MemcpyAsyncTxIsOneSharedClusterBulkCopy) {
  // memcpy_async_tx.h -> cp_async_bulk(space_cluster, space_global, ...):
  // "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
  EXPECT_EQ(lower(model::CallKind::memcpy_async_tx,
                  {{"dest", sym("dst", 16)}, {"src", sym("src", 32)}, {"size", imm(64)}, {"alignment", imm(16)}, {"barrier", sym("bar")}}),
            std::vector<std::string>{"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst+16], [src+32], 64, [bar];"});
}

TEST_F(Lowered, BarrierArriveTxIsOneInstructionForOneArrivalElseTwo) {
  // barrier_arrive_tx.h: arrive count 1 -> mbarrier_arrive_expect_tx(sem_release, scope_cta, space_shared, ...)
  EXPECT_EQ(lower(model::CallKind::barrier_arrive_tx, {{"barrier", sym("bar")}, {"arrive_count", imm(1)}, {"tx_count", imm(4096)}}, "tok"),
            std::vector<std::string>{"mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 tok, [bar], 4096;"});
  // otherwise the inline "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" then mbarrier_arrive(release, cta, shared, count)
  EXPECT_EQ(lower(model::CallKind::barrier_arrive_tx, {{"barrier", sym("bar")}, {"arrive_count", imm(3)}, {"tx_count", imm(0)}}),
            (std::vector<std::string>{"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 0;",
                                      "mbarrier.arrive.release.cta.shared::cta.b64 _, [bar], 3;"}));
  EXPECT_EQ(lower(model::CallKind::barrier_expect_tx, {{"barrier", sym("bar")}, {"tx_count", imm(1048575)}}),
            std::vector<std::string>{"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 1048575;"});
}

TEST_F(Lowered, CudaBarrierMembers) {
  // barrier_block_scope.h on sm_90 with the barrier in shared memory.
  EXPECT_EQ(lower(model::CallKind::barrier_init, {{"barrier", sym("bar")}, {"expected", imm(1048575)}}),
            std::vector<std::string>{"mbarrier.init.shared.b64 [bar], 1048575;"});
  EXPECT_EQ(lower(model::CallKind::barrier_arrive, {{"barrier", sym("bar")}}, "tok"),
            std::vector<std::string>{"mbarrier.arrive.shared::cta.b64 tok, [bar], 1;"});
  EXPECT_EQ(lower(model::CallKind::barrier_arrive, {{"barrier", sym("bar")}, {"count", imm(5)}}),
            std::vector<std::string>{"mbarrier.arrive.shared::cta.b64 _, [bar], 5;"});
  EXPECT_EQ(lower(model::CallKind::barrier_wait, {{"barrier", sym("bar")}}, "tok"),
            std::vector<std::string>{"mbarrier.try_wait.shared.b64 __tmakit_ready, [bar], tok;"});
  EXPECT_EQ(lower(model::CallKind::barrier_arrive_and_wait, {{"barrier", sym("bar")}}),
            (std::vector<std::string>{"mbarrier.arrive.shared::cta.b64 __tmakit_token, [bar], 1;",
                                      "mbarrier.try_wait.shared.b64 __tmakit_ready, [bar], __tmakit_token;"}));
}

TEST(CallOperands, SymbolsOffsetsAndIntegersOnly) {
  EXPECT_EQ(model::parse_call_operand("bar+8")->str(), ptx::Expr({"bar", 8}).str());
  EXPECT_EQ(model::parse_call_operand("0x40")->offset, 64);
  EXPECT_FALSE(model::parse_call_operand("bar], [x"));
  EXPECT_FALSE(model::parse_call_operand("bar+-8"));
  EXPECT_FALSE(model::parse_call_operand(""));
}

// ---- behaviour ----

TEST(SeedExample, SharedMemoryHoldsTheFirst4096BytesOfGmemX) {
  const fs::path file = fs::path(TMAKIT_SOURCE_DIR) / "examples/memcpy_async_tx/scenario.json";
  const auto r = scenario::run(scenario::load_file(file));
  ASSERT_EQ(r.outputs.size(), 1u);
  const auto& smem = r.outputs[0].second;
  ASSERT_EQ(smem.size(), 4096u);  // int smem_x[1024]
  // gmem_x is {"random": 4}; smem_x = gmem_x[0..1023] (the page's closing comment).
  for (uint64_t i = 0; i < smem.size(); ++i) ASSERT_EQ(smem[i], random_byte(4, i)) << "byte " << i;
}

TEST(Mixed, CopiesArriveCountsAndATensorLoadShareOneBarrierOverTwoPhases) {
  const json program = {
      init(3),
      // phase 0: two copies and a 16x4 float32 tile on one barrier, armed by one
      // barrier_arrive_tx for two arrivals; thread 1 brings the third.
      copy("dst", "G+32768", 1024),
      copy("dst+1024", "G+40976", 48),
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst+2048], [tmap, {16, 8}], [bar];",
      arrive_tx(2, 1024 + 48 + 256),
      call("cuda::barrier::arrive", {{"barrier", "bar"}, {"token", "t1"}}, 1),
      wait("t0"),
      wait("t1", 1),
      // phase 1: expect_tx, a copy, arrive(2) and thread 1's arrive_and_wait.
      call("cuda::device::barrier_expect_tx", {{"barrier", "bar"}, {"tx_count", 64}}),
      copy("dst+3072", "G+1600", 64, 64),
      call("cuda::barrier::arrive", {{"barrier", "bar"}, {"count", 2}, {"token", "t2"}}),
      call("cuda::barrier::arrive_and_wait", {{"barrier", "bar"}}, 1),
      wait("t2"),
  };
  const json j = make_scenario(program, {}, {{{"name", "s"}, {"shared", {{"offset", 0}, {"bytes", 3136}}}}});
  // The naive expectation: copies are byte ranges of G; the tile row r (of 4) is
  // 16 floats at tensor row 8 + r, column 16 (row pitch 256 bytes), packed at 64 bytes.
  std::vector<uint8_t> want(3136, 0);
  for (int i = 0; i < 1024; ++i) want[i] = random_byte(kSeed, 32768 + i);
  for (int i = 0; i < 48; ++i) want[1024 + i] = random_byte(kSeed, 40976 + i);
  for (int r = 0; r < 4; ++r)
    for (int b = 0; b < 64; ++b) want[2048 + r * 64 + b] = random_byte(kSeed, (8 + r) * 256 + 16 * 4 + b);
  for (int i = 0; i < 64; ++i) want[3072 + i] = random_byte(kSeed, 1600 + i);
  for (uint64_t seed : {0, 1, 2, 3}) {  // the completion order must not matter
    const auto r = run(j, seed ? std::optional<uint64_t>(seed) : std::nullopt);
    EXPECT_EQ(r.outputs.at(0).second, want) << "seed " << seed;
  }
}

TEST(Mixed, CallsAndPtxStepsInterleaveOnOneBarrier) {
  // A raw mbarrier.arrive.expect_tx arms a barrier that cuda::barrier::init made.
  const json j = make_scenario({init(1), copy("dst", "G", 32),
                           "mbarrier.arrive.expect_tx.shared::cta.b64 st, [bar], 32;",
                           "mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0;"},
                          {}, {{{"name", "s"}, {"shared", {{"offset", 0}, {"bytes", 32}}}}});
  const auto r = run(j);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(r.outputs[0].second[i], random_byte(kSeed, i));
}

TEST(Mixed, SizeZeroCopiesCompleteWithZeroBytes) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 0), 0)), "");
}

// ---- what the engine says about a lowered call ----

TEST(Engine, OverArmedWaitIsADeadlockNamingTheCall) {
  const std::string m = message_of(one_copy(copy("dst", "G", 64), 128));
  EXPECT_NE(m.find("cuda::barrier::wait"), std::string::npos) << m;
  EXPECT_NE(m.find("64 armed bytes were never delivered"), std::string::npos) << m;
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64), 128)), "model.deadlock");
}

TEST(Engine, ForgottenExpectTxEndsWithATransactionMismatch) {
  // memcpy_async_tx does not arm the barrier (§12.1): a plain arrive completes the phase at once.
  const json j = make_scenario({init(1), copy("dst", "G", 64), call("cuda::barrier::arrive", {{"barrier", "bar"}, {"token", "t0"}}),
                           wait("t0")});
  EXPECT_EQ(rule_of(j), "model.tx-mismatch");
}

TEST(Engine, CopyOnAnUninitialisedBarrier) {
  EXPECT_EQ(rule_of(make_scenario(json::array({copy("dst", "G", 64)}))), "mbarrier.invalid");
  EXPECT_EQ(rule_of(make_scenario({init(1), init(1)})), "");  // untouched since its init: initialised again
  EXPECT_EQ(rule_of(make_scenario({init(2), call("cuda::barrier::arrive", {{"barrier", "bar"}, {"token", "t0"}}), init(1)})),
            "mbarrier.init-valid");
}

// ---- preconditions: each rule fails, its neighbour runs clean ----

TEST(LibcudacxxDiagnostics, AlignmentBelow16OrNotAPowerOfTwo) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 8), 64)), "libcudacxx.alignment");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 96, 48), 96)), "libcudacxx.alignment");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 16), 64)), "");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 64), 64)), "");
  const std::string m = message_of(one_copy(copy("dst", "G", 64, 8), 64));
  EXPECT_NE(m.find("aligned_size_t<8>"), std::string::npos) << m;
}

TEST(LibcudacxxDiagnostics, SizeNotAMultipleOfTheAlignment) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 100), 100)), "libcudacxx.size-align");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 96), 96)), "");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 48, 32), 48)), "libcudacxx.size-align");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 32), 64)), "");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", -16), 0)), "libcudacxx.size-align");
  const std::string m = message_of(one_copy(copy("dst", "G", 100), 100));
  EXPECT_NE(m.find("size 100"), std::string::npos) << m;
}

TEST(LibcudacxxDiagnostics, PointersNotAlignedAsAlignedSizePromises) {
  EXPECT_EQ(rule_of(one_copy(copy("dst+16", "G", 64, 32), 64)), "libcudacxx.pointer-align");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G+16", 64, 32), 64)), "libcudacxx.pointer-align");
  EXPECT_EQ(rule_of(one_copy(copy("dst+8", "G", 64), 64)), "libcudacxx.pointer-align");
  EXPECT_EQ(rule_of(one_copy(copy("dst+32", "G+32", 64, 32), 64)), "");
}

TEST(LibcudacxxDiagnostics, DestNotTheCallersSharedMemory) {
  EXPECT_EQ(rule_of(one_copy(copy("G", "G", 64), 64)), "libcudacxx.dest-space");
  EXPECT_EQ(rule_of(one_copy(copy("far", "G", 64), 64)), "libcudacxx.dest-space");  // CTA 1's memory
  json own = one_copy(copy("own", "G", 64), 64);
  own["symbols"]["own"] = "shared@0:0";  // CTA 0's memory through the cluster window: its own
  EXPECT_EQ(rule_of(own), "");
}

TEST(LibcudacxxDiagnostics, SrcNotGlobal) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "dst+1024", 64), 64)), "libcudacxx.src-space");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64), 64)), "");
}

TEST(LibcudacxxDiagnostics, NullPointersEvenForSizeZero) {
  EXPECT_EQ(rule_of(one_copy(copy(0, "G", 0), 0)), "libcudacxx.null-pointer");
  EXPECT_EQ(rule_of(one_copy(copy("dst", 0, 0), 0)), "libcudacxx.null-pointer");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 0, 16, 0), 0)), "libcudacxx.null-pointer");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 0), 0)), "");
}

TEST(LibcudacxxDiagnostics, InvalidPointersEvenForSizeZero) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G+65536", 0), 0)), "libcudacxx.invalid-pointer");  // one past G
  EXPECT_EQ(rule_of(one_copy(copy("dst", "0x1000", 0), 0)), "libcudacxx.invalid-pointer");
  EXPECT_EQ(rule_of(one_copy(copy("dst+8192", "G", 0), 0)), "libcudacxx.invalid-pointer");  // past shared_bytes
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G+65520", 0), 0)), "");
  EXPECT_EQ(rule_of(one_copy(copy("dst+8176", "G", 0), 0)), "");
}

TEST(LibcudacxxDiagnostics, AllocationsNarrowerThanSize) {
  EXPECT_EQ(rule_of(one_copy(copy("dst+8176", "G", 32), 32)), "libcudacxx.dest-range");
  EXPECT_EQ(rule_of(one_copy(copy("dst+8160", "G", 32), 32)), "");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G+65520", 32), 32)), "libcudacxx.src-range");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G+65504", 32), 32)), "");
}

TEST(LibcudacxxDiagnostics, BarrierNotInTheCallingCtasSharedMemory) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 16, "G"), 64)), "libcudacxx.barrier-space");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 16, "farbar"), 64)), "libcudacxx.barrier-space");
  EXPECT_EQ(rule_of(make_scenario(json::array({call("cuda::barrier::init", {{"barrier", "farbar"}, {"expected", 1}})}))), "libcudacxx.barrier-space");
  EXPECT_EQ(rule_of(make_scenario(json::array({call("cuda::barrier::init", {{"barrier", "G"}, {"expected", 1}})}))), "libcudacxx.barrier-space");
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", 64, 16, "nearbar"), 64)), "");  // shared@0: is CTA 0's own
  const std::string m = message_of(one_copy(copy("dst", "G", 64, 16, "farbar"), 64));
  EXPECT_NE(m.find("calling CTA 0"), std::string::npos) << m;
}

TEST(LibcudacxxDiagnostics, ArriveCountsOutOfRange) {
  EXPECT_EQ(rule_of(make_scenario({init(1), arrive_tx(0, 0)})), "libcudacxx.arrive-count-range");
  EXPECT_EQ(rule_of(make_scenario({init(1), arrive_tx(1048576, 0)})), "libcudacxx.arrive-count-range");
  EXPECT_EQ(rule_of(make_scenario({init(1), call("cuda::barrier::arrive", {{"barrier", "bar"}, {"count", 0}})})),
            "libcudacxx.arrive-count-range");
  EXPECT_EQ(rule_of(make_scenario({init(2), arrive_tx(2, 0), wait("t0")})), "");
  // In range for libcu++, above the pending arrivals for the barrier: the engine's rule.
  EXPECT_EQ(rule_of(make_scenario({init(2), arrive_tx(3, 0)})), "mbarrier.arrive-underflow");
}

TEST(LibcudacxxDiagnostics, TransactionCountsOutOfRange) {
  EXPECT_EQ(rule_of(make_scenario({init(1), arrive_tx(1, -1)})), "libcudacxx.tx-count-range");
  EXPECT_EQ(rule_of(make_scenario({init(1), arrive_tx(1, 1048576)})), "libcudacxx.tx-count-range");
  EXPECT_EQ(rule_of(make_scenario({init(1), call("cuda::device::barrier_expect_tx", {{"barrier", "bar"}, {"tx_count", 1048576}})})),
            "libcudacxx.tx-count-range");
  // 2^20 - 1 is accepted; never delivered, it leaves the barrier unbalanced at the end.
  EXPECT_EQ(rule_of(make_scenario({init(1), call("cuda::device::barrier_expect_tx", {{"barrier", "bar"}, {"tx_count", 1048575}})})),
            "model.tx-mismatch");
}

TEST(LibcudacxxDiagnostics, ExpectedArrivalsOutOfRange) {
  EXPECT_EQ(rule_of(make_scenario(json::array({init(0)}))), "libcudacxx.expected-range");
  EXPECT_EQ(rule_of(make_scenario(json::array({init(1048576)}))), "libcudacxx.expected-range");
  EXPECT_EQ(rule_of(make_scenario(json::array({init(1048575)}))), "");
}

TEST(LibcudacxxDiagnostics, IntegerOperandsMustBeIntegers) {
  EXPECT_EQ(rule_of(one_copy(copy("dst", "G", "G"), 64)), "libcudacxx.operand");
  json sized = one_copy(copy("dst", "G", "n"), 64);
  sized["symbols"]["n"] = 64;
  EXPECT_EQ(rule_of(sized), "");
}

// ---- the loader ----

TEST(CallSteps, UnusableCallStepsNameTheField) {
  auto input_rule = [](json step) {
    try {
      scenario::from_json(make_scenario(json::array({step})), "");
      return std::string();
    } catch (const scenario::InputError& e) {
      return e.diagnostic().where + " " + e.diagnostic().message;
    }
  };
  EXPECT_NE(input_rule(call("cuda::memcpy_async", {})).find("unknown libcu++ call"), std::string::npos);
  EXPECT_NE(input_rule(call("cuda::barrier::init", {{"barrier", "bar"}})).find("needs \"expected\""), std::string::npos);
  EXPECT_NE(input_rule(call("cuda::barrier::init", {{"barrier", "bar"}, {"expected", 1}, {"count", 1}})).find("unknown key \"count\""),
            std::string::npos);
  EXPECT_NE(input_rule(call("cuda::barrier::wait", {{"barrier", "bar"}, {"token", "t 0"}})).find("program[0].token"), std::string::npos);
  EXPECT_NE(input_rule(call("cuda::barrier::init", {{"barrier", "bar], [x"}, {"expected", 1}})).find("program[0].barrier"),
            std::string::npos);
  EXPECT_NE(input_rule(call("cuda::barrier::init", {{"barrier", "bar"}, {"expected", 1}, {"ptx", "x"}})).find("unknown key \"ptx\""),
            std::string::npos);
  EXPECT_EQ(input_rule(call("cuda::barrier::init", {{"barrier", "bar+8"}, {"expected", "0x10"}})), "");
}
