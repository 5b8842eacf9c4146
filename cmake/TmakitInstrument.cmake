# tmakit_instrument_ptx(<target> <file.cu>... [ARCH sm_90a] [OPTIONS <nvcc flag>...])
#
# For nvcc-built C++ under `tmakit check` (docs/check.md): kernels that nvcc would embed in a
# fatbin are not checked (the CUDA runtime loads fatbins itself), so build them as PTX and load
# them with the driver API. For each file.cu this function runs
#   nvcc -ptx -lineinfo -arch=<ARCH> <OPTIONS> file.cu            -> tmakit/file.ptx
#   tmakit-ptxas --tmakit-embed file.ptx file.tmakit.ptx         -> instrumented, site table in its last line
# and compiles the result into <target> as a NUL-terminated string
#   extern "C" const char tmakit_ptx_<file>[];
# which the program loads with cuModuleLoadData(&module, tmakit_ptx_<file>). Under tmakit check
# the preload library finds the site table in the text and checks every launch; without it the
# module runs as it is (the trace buffer is never set, so no record is written; the atomic that
# takes an index and the branch around each record remain). The build stops with lint's
# diagnostics when a file cannot be instrumented.
set(TMAKIT_INSTRUMENT_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/TmakitEmbedText.cmake)

function(tmakit_instrument_ptx target)
  cmake_parse_arguments(T "" "ARCH" "OPTIONS" ${ARGN})
  if(NOT T_ARCH)
    set(T_ARCH sm_90a)
  endif()
  if(TARGET tmakit_ptxas)
    set(tool $<TARGET_FILE:tmakit_ptxas>)
  else()
    # Installed: <prefix>/bin/tmakit-ptxas, this file in <prefix>/lib*/cmake/tmakit.
    find_program(TMAKIT_PTXAS_WRAPPER tmakit-ptxas HINTS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../bin REQUIRED)
    set(tool ${TMAKIT_PTXAS_WRAPPER})
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "tmakit_instrument_ptx(${target}): needs nvcc (enable the CUDA language)")
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/tmakit)
  foreach(cu IN LISTS T_UNPARSED_ARGUMENTS)
    get_filename_component(cu_abs ${cu} ABSOLUTE)
    get_filename_component(name ${cu} NAME_WE)
    string(MAKE_C_IDENTIFIER ${name} id)
    set(ptx ${out_dir}/${name}.ptx)
    set(inst ${out_dir}/${name}.tmakit.ptx)
    set(src ${out_dir}/${name}_tmakit_ptx.cpp)
    add_custom_command(OUTPUT ${ptx}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${CMAKE_CUDA_COMPILER} -ptx -lineinfo -arch=${T_ARCH} ${T_OPTIONS} ${cu_abs} -o ${ptx}
      DEPENDS ${cu_abs} IMPLICIT_DEPENDS CXX ${cu_abs} COMMAND_EXPAND_LISTS
      COMMENT "nvcc -ptx ${name}.cu")
    add_custom_command(OUTPUT ${inst}
      COMMAND ${tool} --tmakit-embed ${ptx} ${inst}
      DEPENDS ${ptx} ${tool}
      COMMENT "tmakit instrument ${name}.ptx")
    add_custom_command(OUTPUT ${src}
      COMMAND ${CMAKE_COMMAND} -DIN=${inst} -DOUT=${src} -DNAME=tmakit_ptx_${id} -P ${TMAKIT_INSTRUMENT_EMBED_SCRIPT}
      DEPENDS ${inst} ${TMAKIT_INSTRUMENT_EMBED_SCRIPT}
      COMMENT "embed ${name}.tmakit.ptx")
    target_sources(${target} PRIVATE ${src})
  endforeach()
endfunction()
