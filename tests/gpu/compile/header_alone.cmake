# One header, compiled on its own: a one-line .cu with nvcc (device headers) or a one-line
# .cpp with the C++ compiler (host headers). -D COMPILER, KIND (cu|cpp), HEADER (below
# include/), INCLUDE, OUT; FLAGS: more arguments (a list).
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
set(src ${OUT}.${KIND})
file(WRITE ${src} "#include \"${HEADER}\"\n")
if(KIND STREQUAL "cu")
  set(cmd ${COMPILER} -std=c++20 -gencode=arch=compute_90a,code=sm_90a -I${INCLUDE} ${FLAGS} -c ${src} -o ${OUT}.o)
else()
  set(cmd ${COMPILER} -std=c++20 -fsyntax-only -Wall -Wextra -I${INCLUDE} ${FLAGS} ${src})
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${HEADER} does not compile on its own:\n${out}${err}")
endif()
