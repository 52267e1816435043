# Layers only look down: core -> expr -> plan -> runtime -> tools (docs/design.md). A header under
# include/tessel/LAYER/ or a source under src/LAYER/ may include tessel/L/ only for a layer L at or
# below its own; library sources include nothing from bench/, examples/ or apps/. The layers below
# the runtime (core, expr, plan) include no <Kokkos_Core.hpp>, only Kokkos' macro and math headers:
# the planner runs in the compiler (static_jit) and must not depend on the runtime. No two library
# headers include each other, and no two sources include each other's headers (a.cpp including b.hpp
# while b.cpp includes a.hpp): the pair is one module split in two, or a missing layer between.
#   cmake -DROOT=<checkout> -P cmake/check_layers.cmake
# Fails naming every file that includes a layer above its own, and the include.
if(NOT ROOT)
  message(FATAL_ERROR "check_layers: pass -DROOT=<the checkout to check>")
endif()
set(layers core expr plan runtime tools)
set(violations "")
set(checked 0)
foreach(layer IN LISTS layers)
  list(FIND layers ${layer} own)
  file(GLOB_RECURSE files "${ROOT}/include/tessel/${layer}/*.hpp" "${ROOT}/src/${layer}/*.hpp"
       "${ROOT}/src/${layer}/*.cpp")
  foreach(file IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    file(RELATIVE_PATH shown "${ROOT}" "${file}")
    # The file's module (its path without include/tessel/ or src/ and the extension) and those of
    # the library headers it includes, for the check of mutual includes below.
    string(REGEX REPLACE "^(include/tessel|src)/(.*)\\.[ch]pp$" "\\2" module "${shown}")
    string(REGEX MATCH "\\.[ch]pp$" ext "${shown}")
    list(APPEND modules_${ext} "${module}")
    set(file_of_${ext}_${module} "${shown}")
    set(deps_${ext}_${module} "")
    get_filename_component(dir "${file}" DIRECTORY)
    foreach(line IN LISTS includes)
      if(line MATCHES "[\"<]tessel/([a-z_]+)/([^\">]+)\\.hpp[\">]")
        list(APPEND deps_${ext}_${module} "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}")
      elseif(line MATCHES "\"([^\"<>]+)\\.hpp\"" AND NOT line MATCHES "[\"<]tessel/")
        get_filename_component(resolved "${dir}/${CMAKE_MATCH_1}.hpp" ABSOLUTE)
        file(RELATIVE_PATH where "${ROOT}" "${resolved}")
        string(REGEX REPLACE "^(include/tessel|src)/(.*)\\.hpp$" "\\2" dep "${where}")
        list(APPEND deps_${ext}_${module} "${dep}")
      endif()
      if(line MATCHES "[\"<]tessel/([a-z_]+)/([^\">]+)[\">]")
        set(target ${CMAKE_MATCH_1})
        set(header ${CMAKE_MATCH_2})
        list(FIND layers ${target} above)
        if(above GREATER own)
          list(SUBLIST layers 0 ${own} allowed)
          list(APPEND allowed ${layer})
          string(REPLACE ";" ", " allowed "${allowed}")
          list(APPEND violations
               "${shown} (layer ${layer}) includes tessel/${target}/${header}: ${layer} may include only ${allowed}")
        endif()
      elseif(line MATCHES "[\"<]Kokkos_Core\\.hpp[\">]" AND own LESS 3)
        list(APPEND violations
             "${shown} (layer ${layer}) includes Kokkos_Core.hpp: core, expr and plan include only Kokkos' macros and math (Kokkos_Macros.hpp, Kokkos_MathematicalFunctions.hpp, ...)")
      elseif(line MATCHES "[\"<]tessel/tessel\\.hpp[\">]")
        list(APPEND violations "${shown} (layer ${layer}) includes tessel/tessel.hpp, which includes every layer")
      elseif(line MATCHES "\"([^\"]+)\"")
        # A quoted include of the library's own sources sits beside the file; one found elsewhere
        # (a benchmark's or an application's header through an include path) is not the library's.
        set(header ${CMAKE_MATCH_1})
        get_filename_component(dir "${file}" DIRECTORY)
        get_filename_component(resolved "${dir}/${header}" ABSOLUTE)
        file(RELATIVE_PATH where "${ROOT}" "${resolved}")
        if(NOT EXISTS "${resolved}" OR NOT where MATCHES "^(src|include)/")
          list(APPEND violations "${shown} (layer ${layer}) includes \"${header}\", which is not a library source beside it")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
# Mutual includes: two headers including each other, or two sources each including the other's
# header.
foreach(ext .hpp .cpp)
  foreach(a IN LISTS modules_${ext})
    foreach(b IN LISTS deps_${ext}_${a})
      if(b STREQUAL a OR NOT DEFINED deps_${ext}_${b})
        continue()
      endif()
      list(FIND deps_${ext}_${b} "${a}" back)
      if(back GREATER_EQUAL 0 AND a STRLESS b)
        if(ext STREQUAL ".hpp")
          list(APPEND violations "${file_of_${ext}_${a}} and ${file_of_${ext}_${b}} include each other")
        else()
          list(APPEND violations
               "${file_of_${ext}_${a}} includes ${b}.hpp and ${file_of_${ext}_${b}} includes ${a}.hpp: the two sources include each other's headers")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers: no sources under ${ROOT}/include/tessel or ${ROOT}/src")
endif()
if(violations)
  list(LENGTH violations count)
  string(REPLACE ";" "\n  " text "${violations}")
  message(FATAL_ERROR "check_layers: ${count} include(s) look up a layer or include each other:\n  ${text}")
endif()
message(STATUS "check_layers: ${checked} files, every include looks down and none include each other")
