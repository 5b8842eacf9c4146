# ctest install.consumer: installs this build into a fresh prefix, then configures and
# builds tests/install/consumer (an outside project: find_package(tmakit), tmakit::tmakit,
# tmakit::device, as the README says) against that prefix alone, and runs its host part:
# validating a map whose box[0] is 300 must fail with the rule id map.box-dim-range.
# The device part is compiled and linked only (no GPU in CI).
# -D BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR, DEVICE (ON/OFF), CUDA_COMPILER
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR DEVICE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "consumer_test.cmake: -D${v}= is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix} ${build})
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix} -DCONSUMER_DEVICE=${DEVICE})
if(DEVICE AND CUDA_COMPILER)
  list(APPEND configure -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
endif()
run("configuring the consumer" ${configure})
run("building the consumer" ${CMAKE_COMMAND} --build ${build})

execute_process(COMMAND ${build}/validate_map RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out MATCHES "box\\[0\\]: error: [^\n]*300[^\n]*\\[map\\.box-dim-range\\]")
  message(FATAL_ERROR "validate_map: expected exit 1 and a map.box-dim-range error on box[0] naming 300, got ${rc}:\n${out}${err}")
endif()
if(DEVICE AND NOT EXISTS ${build}/load_tile)
  message(FATAL_ERROR "the device part (load_tile) was not built")
endif()
message(STATUS "consumer: host part validated the bad map (map.box-dim-range); device part built: ${DEVICE}")
