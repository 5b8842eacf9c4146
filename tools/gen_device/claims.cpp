// What the device half claims of the table of forms: the rows its generated functions cover,
// and the combinations of those rows it has no function for, each with its reason
// (tests/gpu/coverage checks both against the table).
#include "device_forms.hpp"

namespace tmakit::gen_device {

std::vector<std::string_view> claimed_forms() {
  return {"tensor.load.shared::cta", "tensor.load.shared::cluster", "tensor.store",  "tensor.reduce",
          "tensor.prefetch",         "bulk.shared::cta.global",     "bulk.shared::cluster.global",
          "bulk.shared::cluster.shared::cta", "bulk.global.shared::cta", "bulk-reduce.global.shared::cta",
          "bulk-reduce.shared::cluster.shared::cta", "bulk.prefetch",
          // The mbarrier rows (generated/mbarrier.cuh). Not claimed: the .noComplete arrives and
          // mbarrier.pending_count (no helper of the library uses them; the model and the GPU
          // engine check them from the table alone).
          "mbarrier.init", "fence.mbarrier_init", "mbarrier.arrive.local", "mbarrier.arrive.remote",
          "mbarrier.arrive.expect_tx.local", "mbarrier.arrive.expect_tx.remote", "mbarrier.arrive_drop.local",
          "mbarrier.arrive_drop.remote", "mbarrier.arrive_drop.expect_tx.local",
          "mbarrier.arrive_drop.expect_tx.remote", "mbarrier.expect_tx", "mbarrier.complete_tx",
          "mbarrier.test_wait", "mbarrier.test_wait.parity", "mbarrier.try_wait", "mbarrier.try_wait.parity",
          "mbarrier.inval"};
}

namespace {
// The exclusions every mbarrier row on the executing CTA's barrier shares.
void add_local_space(std::vector<Exclusion>& x, const std::string& id) {
  x.push_back({id, {}, "the library's barriers are uint64_t* in shared memory: no generic-address form", "state_space"});
  x.push_back({id, {".shared"}, "written .shared::cta (the same state space)"});
}
}  // namespace

const std::vector<Exclusion>& exclusions() {
  static const std::vector<Exclusion> x = {
      {"tensor.load.shared::cta", {".cta_group::1"}, "the library issues .cta_group loads into .shared::cluster (load_tile_cta_group): the barrier may be the peer CTA's"},
      {"tensor.load.shared::cta", {".cta_group::2"}, "as .cta_group::1"},
      {"tensor.load.shared::cluster", {".im2col::w"}, "im2col::w loads go into .shared::cta only (load_im2col_w)"},
      {"tensor.load.shared::cluster", {".im2col::w::128"}, "as .im2col::w"},
      {"tensor.load.shared::cluster", {".im2col", ".cta_group::1"}, "no im2col .cta_group function"},
      {"tensor.load.shared::cluster", {".im2col", ".cta_group::2"}, "no im2col .cta_group function"},
      {"tensor.load.shared::cluster", {".multicast::cluster", ".cta_group::1"}, "no multicast .cta_group function"},
      {"tensor.load.shared::cluster", {".multicast::cluster", ".cta_group::2"}, "no multicast .cta_group function"},
      {"tensor.load.shared::cta", {".tile::gather4", ".L2::cache_hint"}, "the sm_100 forms have no .L2::cache_hint variants yet"},
      {"tensor.load.shared::cta", {".im2col::w", ".L2::cache_hint"}, "as gather4"},
      {"tensor.load.shared::cta", {".im2col::w::128", ".L2::cache_hint"}, "as gather4"},
      {"tensor.load.shared::cluster", {".tile::gather4", ".L2::cache_hint"}, "as gather4 into .shared::cta"},
      {"tensor.load.shared::cluster", {".cta_group::1", ".L2::cache_hint"}, "the .cta_group loads have no .L2::cache_hint variants yet"},
      {"tensor.load.shared::cluster", {".cta_group::2", ".L2::cache_hint"}, "as .cta_group::1"},
      {"tensor.prefetch", {".tile::gather4", ".L2::cache_hint"}, "as gather4 loads"},
      {"tensor.prefetch", {".im2col::w", ".L2::cache_hint"}, "as im2col::w loads"},
      {"tensor.prefetch", {".im2col::w::128", ".L2::cache_hint"}, "as im2col::w loads"},
      {"tensor.store", {".tile::scatter4", ".L2::cache_hint"}, "as gather4 loads"},
      {"bulk.global.shared::cta", {".cp_mask", ".L2::cache_hint"}, "bulk_store_masked has no .L2::cache_hint variant yet"},
  };
  static const std::vector<Exclusion> all = [] {
    std::vector<Exclusion> v = x;
    v.push_back({"mbarrier.init", {}, "the library's barriers are uint64_t* in shared memory: no generic-address form",
                 "state_space"});
    v.push_back({"mbarrier.init", {".shared::cta"}, "written .shared, as CCCL's mbarrier_init does (the same state space)"});
    const std::string relaxed_arrive =
        "arrivals release (the library's protocols publish the arriving thread's writes): no .relaxed variant yet";
    for (const char* base : {"mbarrier.arrive", "mbarrier.arrive.expect_tx", "mbarrier.arrive_drop",
                             "mbarrier.arrive_drop.expect_tx"}) {
      const std::string local = std::string(base) + ".local", remote = std::string(base) + ".remote";
      v.push_back({local, {".relaxed"}, relaxed_arrive});
      add_local_space(v, local);
      v.push_back({remote, {".relaxed"}, relaxed_arrive});
      if (std::string(base) != "mbarrier.arrive")  // arrive_cluster<Scope::cta> has the .release.cta one
        v.push_back({remote, {".release", ".cta"},
                     "only the plain remote arrive has a .cta release (arrive_cluster<Scope::cta>, for handing "
                     "back a slot this CTA has read); the others release at cluster scope"});
    }
    for (const char* wait : {"mbarrier.test_wait", "mbarrier.test_wait.parity", "mbarrier.try_wait",
                             "mbarrier.try_wait.parity"}) {
      v.push_back({wait, {".relaxed"}, "waits acquire (the waiter reads what the phase published): no .relaxed variant yet"});
      add_local_space(v, wait);
    }
    add_local_space(v, "mbarrier.expect_tx");
    v.push_back({"mbarrier.expect_tx", {".cta", ".shared::cluster"},
                 "expect_tx_cluster raises another CTA's count at cluster scope only"});
    add_local_space(v, "mbarrier.complete_tx");
    v.push_back({"mbarrier.complete_tx", {".cluster", ".shared::cta"},
                 "complete_tx on the executing CTA's barrier is .cta (no cluster-scope variant yet)"});
    v.push_back({"mbarrier.complete_tx", {".cta", ".shared::cluster"},
                 "complete_tx_cluster completes bytes on another CTA's barrier at cluster scope only"});
    add_local_space(v, "mbarrier.inval");
    return v;
  }();
  return all;
}

}  // namespace tmakit::gen_device
