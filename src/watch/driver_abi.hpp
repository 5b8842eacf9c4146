// The driver's ABI for the calls the watch library sees, spelled out so that the
// library builds without the CUDA toolkit (and never links libcuda): the four
// tensor-map calls of the CUDA 13 driver and the two cuGetProcAddress ABIs.
// Enums are passed as C enums (int-sized); CUresult is an int. These match
// cuda.h / cudaTypedefs.h (PFN_cuTensorMapEncodeTiled_v12000, ..._Im2colWide_v12080,
// PFN_cuGetProcAddress_v11030 and _v12000); tests/watch checks them against cuda.h
// where the toolkit is present.
#pragma once
#include <cstdint>

namespace tmakit::watch::abi {

using CUresult = int;
inline constexpr CUresult kSuccess = 0;               // CUDA_SUCCESS
inline constexpr CUresult kInvalidValue = 1;          // CUDA_ERROR_INVALID_VALUE
inline constexpr CUresult kNotFound = 500;            // CUDA_ERROR_NOT_FOUND
inline constexpr int kTensorMapBytes = 128;           // sizeof(CUtensorMap): CU_TENSOR_MAP_NUM_QWORDS × 8
inline constexpr int kTensorMapAlignment = 64;        // CUtensorMap is declared alignas(64)

using EncodeTiled = CUresult (*)(void* tensorMap, int dataType, uint32_t rank, void* globalAddress,
                                 const uint64_t* globalDim, const uint64_t* globalStrides, const uint32_t* boxDim,
                                 const uint32_t* elementStrides, int interleave, int swizzle, int l2Promotion,
                                 int oobFill);
using EncodeIm2col = CUresult (*)(void* tensorMap, int dataType, uint32_t rank, void* globalAddress,
                                  const uint64_t* globalDim, const uint64_t* globalStrides, const int* lowerCorner,
                                  const int* upperCorner, uint32_t channelsPerPixel, uint32_t pixelsPerColumn,
                                  const uint32_t* elementStrides, int interleave, int swizzle, int l2Promotion,
                                  int oobFill);
using EncodeIm2colWide = CUresult (*)(void* tensorMap, int dataType, uint32_t rank, void* globalAddress,
                                      const uint64_t* globalDim, const uint64_t* globalStrides, int lowerCornerW,
                                      int upperCornerW, uint32_t channelsPerPixel, uint32_t pixelsPerColumn,
                                      const uint32_t* elementStrides, int interleave, int mode, int swizzle,
                                      int l2Promotion, int oobFill);
using ReplaceAddress = CUresult (*)(void* tensorMap, void* globalAddress);
// cuGetProcAddress as exported under that name (CUDA 11.3 ABI) and cuGetProcAddress_v2
// (CUDA 12.0 ABI, what cuda.h's cuGetProcAddress means since 12.0).
using GetProcAddressV1 = CUresult (*)(const char* symbol, void** pfn, int cudaVersion, uint64_t flags);
using GetProcAddressV2 = CUresult (*)(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                                      int* symbolStatus);
using GetErrorName = CUresult (*)(CUresult error, const char** name);

}  // namespace tmakit::watch::abi
