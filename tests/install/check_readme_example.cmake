cmake_minimum_required(VERSION 3.25)
# cmake -P: README.md's example is examples/example_quickstart.cpp, and what README.md shows it
# printing is what it prints. Inputs: README, SOURCE (the example's source), PROGRAM (its binary).

# The body of the first block that `opening` starts in `text` (into `body`), and what follows it
# (into `rest`).
function(next_block text opening body rest)
  string(FIND "${text}" "${opening}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${README} has no block opened by '${opening}' where its example should be")
  endif()
  string(LENGTH "${opening}" skip)
  math(EXPR at "${at} + ${skip}")
  string(SUBSTRING "${text}" ${at} -1 after)
  string(FIND "${after}" "```" end)
  string(SUBSTRING "${after}" 0 ${end} block)
  string(SUBSTRING "${after}" ${end} -1 after)
  set(${body} "${block}" PARENT_SCOPE)
  set(${rest} "${after}" PARENT_SCOPE)
endfunction()

file(READ ${README} readme)
next_block("${readme}" "```cpp\n" shown_source rest)        # the example
string(SUBSTRING "${rest}" 3 -1 rest)                         # (its closing fence)
next_block("${rest}" "\n```\n" shown_output rest)             # then what it prints
file(READ ${SOURCE} source)
if(NOT shown_source STREQUAL source)
  message(FATAL_ERROR "README.md's example differs from ${SOURCE}:\n--- README.md\n${shown_source}--- ${SOURCE}\n${source}")
endif()
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE output RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${rc})")
endif()
if(NOT shown_output STREQUAL output)
  message(FATAL_ERROR "README.md shows the example printing:\n${shown_output}but it prints:\n${output}")
endif()
message(STATUS "README.md's example is ${SOURCE}, and prints what README.md shows")
