// The target gates of the sm_100 forms, for code built for several targets (user-facing,
// documented in docs/device-library.md, "The sm_100 forms"):
//   TMAKIT_DEVICE_SM100         1 in a device pass for sm_100 or higher: gather4 / im2col::w
//                               into .shared::cta, .cp_mask
//   TMAKIT_DEVICE_SM100_FAMILY  1 in a device pass for sm_100a/f, sm_103a/f, sm_110a/f: the rest
// Both are 0 in the host pass and for other targets. Guard calls with `#if TMAKIT_DEVICE_SM100_FAMILY`.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define TMAKIT_DEVICE_SM100 1
#else
#define TMAKIT_DEVICE_SM100 0
#endif
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000 && \
    __CUDA_ARCH_FAMILY_SPECIFIC__ < 1200
#define TMAKIT_DEVICE_SM100_FAMILY 1
#else
#define TMAKIT_DEVICE_SM100_FAMILY 0
#endif
