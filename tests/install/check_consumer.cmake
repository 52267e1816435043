# cmake -P: configures, builds and runs tests/install/consumer against this build of tessel.
#   MODE=package: installs the build into WORK/prefix first and finds it with find_package.
#   MODE=subdirectory: adds the source tree with add_subdirectory.
# Inputs: MODE, BUILD_DIR (tessel's build), SOURCE_DIR, WORK (scratch folder), plus the generator,
# compiler and prefix path tessel was configured with.
file(REMOVE_RECURSE ${WORK})
set(consumer_args -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DTESSEL_CONSUMER_MODE=${MODE} -DTESSEL_SOURCE_DIR=${SOURCE_DIR})
if(MODE STREQUAL "package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed: ${rc}")
  endif()
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${WORK}/prefix;${PREFIX_PATH}")
else()
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
endif()
foreach(step configure build run)
  if(step STREQUAL "configure")
    set(cmd ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK}/build ${consumer_args})
  elseif(step STREQUAL "build")
    set(cmd ${CMAKE_COMMAND} --build ${WORK}/build -j2)
  else()
    set(cmd ${WORK}/build/consumer)
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}) ${step} failed (${rc}):\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "consumer (${MODE}): ${out}")
