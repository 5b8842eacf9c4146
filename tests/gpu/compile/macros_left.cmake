# After #include <tmakit/device/tma.cuh>, the only TMAKIT_ macros defined are the documented
# user-facing ones (docs/device-library.md): the target gates of target.cuh. Every helper
# macro a header uses is undefined by the header itself. -D NVCC, INCLUDE, OUT
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
file(WRITE ${OUT}.cu "#include <tmakit/device/tma.cuh>\n")
execute_process(COMMAND ${NVCC} -std=c++20 -gencode=arch=compute_90a,code=sm_90a -I${INCLUDE} -E -Xcompiler -dM
  ${OUT}.cu RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -E failed:\n${err}")
endif()
string(REGEX MATCHALL "#define TMAKIT_[A-Za-z0-9_]*" defined "${out}")
list(TRANSFORM defined REPLACE "#define " "")
list(REMOVE_DUPLICATES defined)
list(REMOVE_ITEM defined TMAKIT_DEVICE_SM100 TMAKIT_DEVICE_SM100_FAMILY)
if(defined)
  message(FATAL_ERROR "helper macros left defined after tma.cuh: ${defined}")
endif()
