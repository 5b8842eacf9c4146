// The sm_100-only forms of the bulk-copy engine (§11): .tile::gather4 loads and
// prefetch, .tile::scatter4 stores, .cta_group::1/::2 tensor loads, .cp_mask bulk
// stores, .im2col::w / .im2col::w::128 loads and prefetch. The functions are generated
// from the table of forms (generated/sm100.cuh); copy.cuh (and tma.cuh) include this header.
//
// Each function compiles only where the target can run its form (the targets of
// the forms table, src/spec/forms_table.cpp):
//   TMAKIT_DEVICE_SM100         sm_100 or higher: gather4 / im2col::w into
//                               .shared::cta, .cp_mask
//   TMAKIT_DEVICE_SM100_FAMILY  sm_100a / sm_100f (and sm_103, sm_110 a/f): the rest
// Used in a device pass for any other target, it stops the build with
//   "tmakit: .tile::gather4 needs sm_100 or higher (compiling for sm_90a)".
// Guard multi-target code with `#if TMAKIT_DEVICE_SM100_FAMILY` (target.cuh).
//
// CCCL 13.0 has gather4 into .shared::cta and .cp_mask, and those go through it.
// Its gather4 into .shared::cluster, scatter4 and .cta_group wrappers compile
// only under __CUDA_ARCH_FEAT_SM100_ALL (sm_100a: an sm_100f build fails in
// ptxas with "Unresolved extern function"), it has no non-multicast gather4 into
// .shared::cluster, and no im2col or prefetch forms: inline PTX for those.
#pragma once
#include "tmakit/device/generated/sm100.cuh"
#include "tmakit/device/target.cuh"
