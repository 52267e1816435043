cmake_minimum_required(VERSION 3.25)
# cmake -P: configures, builds and runs tests/install/consumer against this build of tessel.
#   MODE=package: installs the build into WORK/prefix first and finds it with find_package; also
#     configures it once more with -DTESSEL_MARCH= (the consumer's override) and checks the line.
#   MODE=subdirectory / fetchcontent: builds tessel's source tree as a subproject (its library only,
#     from ccache when this build's flags are the same).
# In every mode the consumer's compile line must carry no warning flag and -march=MARCH exactly
# when MARCH (tessel's TESSEL_MARCH) is set.
# Inputs: MODE, BUILD_DIR (tessel's build), SOURCE_DIR, WORK (scratch folder), MARCH, plus the
# generator, compiler, launcher, Kokkos_DIR and prefix path tessel was configured with.
file(REMOVE_RECURSE ${WORK})
set(consumer_args -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
    -DKokkos_DIR=${KOKKOS_DIR} -DTESSEL_CONSUMER_MODE=${MODE} -DTESSEL_SOURCE_DIR=${SOURCE_DIR})
if(MODE STREQUAL "package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install ${BUILD_DIR} failed (${rc}):\n${out}\n${err}")
  endif()
  file(GLOB_RECURSE installed RELATIVE ${WORK}/prefix ${WORK}/prefix/*)
  foreach(file include/tessel/tessel.hpp "libtessel\\.(a|so)" cmake/tessel/tesselConfig.cmake
          cmake/tessel/tesselConfigVersion.cmake cmake/tessel/tesselTargets.cmake)
    set(found ${installed})
    list(FILTER found INCLUDE REGEX "(^|/)${file}$")
    if(NOT found)
      message(FATAL_ERROR "cmake --install did not install ${file} (in ${WORK}/prefix)")
    endif()
  endforeach()
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${WORK}/prefix;${PREFIX_PATH}")
else()
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
endif()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# Checks the compile line of the consumer's main.cpp in build folder $1 against -march=$2.
function(check_compile_line build march)
  file(READ ${build}/compile_commands.json commands)
  string(JSON n LENGTH "${commands}")
  math(EXPR last "${n} - 1")
  set(line "")
  foreach(i RANGE ${last})
    string(JSON file GET "${commands}" ${i} file)
    if(file MATCHES "tests/install/consumer/main\\.cpp$")
      string(JSON line GET "${commands}" ${i} command)
    endif()
  endforeach()
  if(line STREQUAL "")
    message(FATAL_ERROR "consumer (${MODE}): no compile line for main.cpp in ${build}/compile_commands.json")
  endif()
  if(line MATCHES "(^| )(-W[^ ]*)")
    message(FATAL_ERROR "consumer (${MODE}): tessel::tessel gives the consumer's code ${CMAKE_MATCH_2}:\n${line}")
  endif()
  string(REGEX MATCHALL "-march=[^ ]*" got "${line}")
  if(march AND NOT got STREQUAL "-march=${march}")
    message(FATAL_ERROR "consumer (${MODE}): expected -march=${march} (TESSEL_MARCH) once, got '${got}':\n${line}")
  elseif(NOT march AND got)
    message(FATAL_ERROR "consumer (${MODE}): expected no -march (TESSEL_MARCH is empty), got '${got}':\n${line}")
  endif()
endfunction()

run(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK}/build ${consumer_args})
check_compile_line(${WORK}/build "${MARCH}")
run(build ${CMAKE_COMMAND} --build ${WORK}/build -j2)
run(run ${WORK}/build/app)
message(STATUS "consumer (${MODE}): ${out}")
if(MODE STREQUAL "package")
  # A consumer of the installed package overrides the -march tessel::tessel gives its code.
  run("configure with -DTESSEL_MARCH=" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
      -B ${WORK}/build-no-march ${consumer_args} -DTESSEL_MARCH=)
  check_compile_line(${WORK}/build-no-march "")
endif()
