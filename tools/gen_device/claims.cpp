// What the device half claims of the table of forms: the rows its generated functions cover,
// and the combinations of those rows it has no function for, each with its reason
// (tests/gpu/coverage checks both against the table).
#include "device_forms.hpp"

namespace tmakit::gen_device {

std::vector<std::string_view> claimed_forms() {
  return {"tensor.load.shared::cta", "tensor.load.shared::cluster", "tensor.store",  "tensor.reduce",
          "tensor.prefetch",         "bulk.shared::cta.global",     "bulk.shared::cluster.global",
          "bulk.shared::cluster.shared::cta", "bulk.global.shared::cta", "bulk-reduce.global.shared::cta",
          "bulk-reduce.shared::cluster.shared::cta", "bulk.prefetch"};
}

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
  return x;
}

}  // namespace tmakit::gen_device
