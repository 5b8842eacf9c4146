# Runs one nvcc compile (cubin only: front end + ptxas, no host compiler) and
# checks its outcome. cmake -DNVCC=... -DSOURCE=... -DARCH=100a -DINCLUDE=...
#   [-DDEFINES="A;B"] [-DEXPECT_ERROR="text"] -P nvcc_check.cmake
# Without EXPECT_ERROR the compile must succeed; with it, it must fail and its
# output must contain the text.
set(args -std=c++20 -I${INCLUDE} -gencode=arch=compute_${ARCH},code=sm_${ARCH} -cubin -o ${OUT} ${SOURCE})
foreach(d ${DEFINES})
  list(PREPEND args -D${d})
endforeach()
execute_process(COMMAND ${NVCC} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT DEFINED EXPECT_ERROR)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc for sm_${ARCH} failed (exit ${rc}):\n${out}")
  endif()
  message(STATUS "nvcc for sm_${ARCH}: compiled")
else()
  if(rc EQUAL 0)
    message(FATAL_ERROR "nvcc for sm_${ARCH} compiled, but it must stop with \"${EXPECT_ERROR}\"")
  endif()
  string(FIND "${out}" "${EXPECT_ERROR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "nvcc for sm_${ARCH} failed without \"${EXPECT_ERROR}\":\n${out}")
  endif()
  message(STATUS "nvcc for sm_${ARCH} stopped with: ${EXPECT_ERROR}")
endif()
