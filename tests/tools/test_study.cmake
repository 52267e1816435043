# The study tool's command line (tessel_study): MODE=errors (every error names the offending item,
# exits non-zero and runs nothing), MODE=merge (two platforms' CSVs merge into merged.csv, pp.csv
# and merged.json with hand-computed PP), MODE=plots (scripts/study_plot.py draws the pictures),
# MODE=jax (scripts/study_jax.py skips cleanly without JAX), MODE=run (a tiny JSON study runs and
# its results.json holds per-instruction times).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# Runs the study tool with ARGN; fails unless it exits with failure `fails` (TRUE/FALSE) and its
# output contains `expect`.
function(expect_run fails expect)
  execute_process(COMMAND ${STUDY} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(fails AND rc EQUAL 0)
    message(FATAL_ERROR "tessel_study ${ARGN}: exit 0, expected a failure\n${out}${err}")
  elseif(NOT fails AND NOT rc EQUAL 0)
    message(FATAL_ERROR "tessel_study ${ARGN}: exit ${rc}\n${out}${err}")
  endif()
  string(FIND "${out}${err}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "tessel_study ${ARGN}: the output lacks '${expect}':\n${out}${err}")
  endif()
endfunction()

if(MODE STREQUAL "errors")
  file(WRITE ${WORK}/unknown.toml "[[workload]]\nname = \"softmax\"\n\n[[workload]]\nname = \"layer_norm\"\n")
  expect_run(TRUE "tessel_study: ${WORK}/unknown.toml:4: unknown workload 'layer_norm' (known: fused_chain," ${WORK}/unknown.toml)
  file(WRITE ${WORK}/mesh.toml "[[configuration]]\ndevices = 8\nmesh = [2, 2]\n[[workload]]\nname = \"softmax\"\n")
  expect_run(TRUE "mesh.toml:1: configuration 1 has mesh [2, 2] of 4 devices, but devices = 8" ${WORK}/mesh.toml)
  file(WRITE ${WORK}/bad.toml "[study\nname = 1\n")
  expect_run(TRUE "bad.toml:1: not a valid TOML study file" ${WORK}/bad.toml)
  expect_run(TRUE "tessel_study: cannot read study file '${WORK}/missing.toml'" ${WORK}/missing.toml)
  expect_run(TRUE "tessel_study: unknown option '--fast'" ${WORK}/mesh.toml --fast)
  expect_run(TRUE "cannot read result file '${WORK}/none.csv'" --merge ${DATA}/study_a.csv ${WORK}/none.csv)
  file(WRITE ${WORK}/nofom.csv "problem,platform,application,unit\np,q,a,GB/s\n")
  expect_run(TRUE "nofom.csv:1: the header has no 'fom' column" --merge ${WORK}/nofom.csv)
  expect_run(FALSE "rms_norm" --list)
elseif(MODE STREQUAL "merge" OR MODE STREQUAL "plots")
  expect_run(FALSE "merged 8 rows of 2 files over 2 platforms" --merge ${DATA}/study_a.csv ${DATA}/study_b.csv --out ${WORK})
  file(READ ${WORK}/merged.csv merged)
  string(FIND "${merged}" "problem,platform,application,fom,unit,arch eff,app eff," at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "merged.csv does not start with the P3 columns:\n${merged}")
  endif()
  file(READ ${WORK}/pp.csv pp)
  foreach(line
      "softmax 2048x1024,tessel d8 m8 t2,\"cpu-a / OpenMP; gpu-b, CUDA\",,1,0.2857142857"
      "softmax 2048x1024,jax d8,\"cpu-a / OpenMP; gpu-b, CUDA\",\"gpu-b, CUDA\",0,0"
      "megatron_mlp 1024x512x2048,tessel d8 m4x2 t2,\"cpu-a / OpenMP; gpu-b, CUDA\",,0.5,0.25")
    string(FIND "${pp}" "${line}\n" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "pp.csv lacks the line '${line}':\n${pp}")
    endif()
  endforeach()
  file(READ ${WORK}/merged.json json)
  string(JSON n LENGTH "${json}" portability)
  string(JSON rows LENGTH "${json}" results)
  string(JSON triad GET "${json}" limits "cpu-a / OpenMP" stream_triad_GBps)
  if(NOT n EQUAL 5 OR NOT rows EQUAL 8 OR NOT triad EQUAL 20)
    message(FATAL_ERROR "merged.json: ${n} PP entries (want 5), ${rows} results (want 8), triad ${triad} (want 20)")
  endif()
  if(MODE STREQUAL "plots")
    execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/scripts/study_plot.py ${WORK}/merged.csv ${WORK}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "study_plot.py failed (${rc}):\n${out}${err}")
    endif()
    foreach(png cascade roofline jax)
      file(SIZE ${WORK}/${png}.png bytes)
      if(bytes LESS 10000)
        message(FATAL_ERROR "${png}.png has only ${bytes} bytes")
      endif()
    endforeach()
  endif()
elseif(MODE STREQUAL "jax")
  # scripts/study_jax.py on a tiny problem: without JAX (as in the Debian userland) it writes a
  # header-only CSV and says so; with JAX, one row. Either merges with tessel's rows.
  file(WRITE ${WORK}/problems.json [=[{"platform": "p", "repetitions": 2, "min_time": 0.001, "devices": [2],
  "problems": [{"problem": "fused_chain 1024", "workload": "fused_chain", "size": {"n": 1024},
                "bytes": 16384, "flops": 6144, "unit": "GB/s"}]}]=])
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/scripts/study_jax.py ${WORK}/problems.json ${WORK}/jax.csv
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "study_jax.py failed (${rc}):\n${out}${err}")
  endif()
  if(NOT err MATCHES "no JAX rows|\\[jax\\] fused_chain 1024")
    message(FATAL_ERROR "study_jax.py neither skipped nor ran:\n${out}${err}")
  endif()
  expect_run(FALSE "merged" --merge ${DATA}/study_a.csv ${WORK}/jax.csv --out ${WORK})
elseif(MODE STREQUAL "run")
  # A tiny study from a JSON file: attention, the transformer layer and a collective on a 2 x 4
  # mesh. results.json carries each run's per-instruction times (profile), none for the collective.
  file(WRITE ${WORK}/tiny.json [=[{"study": {"name": "tiny", "repetitions": 2, "min_time": 0.001},
  "configuration": [{"devices": 8, "mesh": [2, 4], "axes": ["dp", "mp"], "threads": 2, "wait_policy": "passive"}],
  "workload": [{"name": "attention", "sizes": [{"batch": 2, "seq": 64, "heads": 4, "head_dim": 16}]},
               {"name": "transformer", "sizes": [{"batch": 2, "seq": 32, "model": 64, "heads": 4, "hidden": 128}]},
               {"name": "all_reduce", "sizes": [{"mb": 1}]}]}]=])
  expect_run(FALSE "study 'tiny': 3 runs" ${WORK}/tiny.json --out ${WORK}/out)
  file(READ ${WORK}/out/results.json json)
  string(JSON n LENGTH "${json}" results)
  string(JSON attention GET "${json}" results 0 problem)
  string(JSON steps LENGTH "${json}" results 0 instructions)
  string(JSON kinds GET "${json}" results 0 instructions)
  string(JSON layer LENGTH "${json}" results 1 instructions)
  math(EXPR last "${layer} - 1")
  string(JSON last_call GET "${json}" results 1 instructions ${last} call)
  string(JSON collective ERROR_VARIABLE none GET "${json}" results 2 instructions)
  if(NOT n EQUAL 3 OR NOT attention STREQUAL "attention 2x64x4x16" OR NOT steps EQUAL 3 OR NOT last_call EQUAL 1
     OR NOT none)
    message(FATAL_ERROR "results.json: ${n} results (want 3), first '${attention}', ${steps} attention instructions "
                        "(want 3: gemm, fused, gemm), the layer's last from call ${last_call} (want 1: the MLP half), "
                        "the collective's instructions '${collective}' (want none)")
  endif()
  foreach(kind gemm fused)
    if(NOT kinds MATCHES "\"kind\" *: *\"${kind}\"")
      message(FATAL_ERROR "the attention's instructions have no ${kind}:\n${kinds}")
    endif()
  endforeach()
  # Presets as configurations: this build's own preset runs through build/openmp/tessel_study as a
  # platform of its own; a preset not built here is unsupported, so the PP over the three is 0.
  get_filename_component(build_dir ${STUDY} DIRECTORY)
  get_filename_component(preset ${build_dir} NAME)
  file(WRITE ${WORK}/presets.toml "[study]\nname = \"presets\"\nrepetitions = 2\nmin_time = 0.001\n"
       "[[configuration]]\ndevices = 8\nthreads = 2\nwait_policy = \"passive\"\n"
       "[[configuration]]\ndevices = 8\nthreads = 2\nwait_policy = \"passive\"\npreset = \"${preset}\"\n"
       "[[configuration]]\ndevices = 8\nthreads = 2\nwait_policy = \"passive\"\npreset = \"nonesuch\"\n"
       "[[workload]]\nname = \"softmax\"\nsizes = [{rows = 256, cols = 256}]\n")
  expect_run(FALSE "preset 'nonesuch' is not built here" ${WORK}/presets.toml --out ${WORK}/presets --platform here)
  file(READ ${WORK}/presets/pp.csv pp)
  file(READ ${WORK}/presets/results.csv csv)
  string(REGEX MATCH "softmax 256x256,[^,\n]*\\[${preset}\\],tessel d8 m8 t2 passive,[0-9.]+" own "${csv}")
  string(REGEX MATCH "softmax 256x256,tessel d8 m8 t2 passive,[^,\n]*\\[${preset}\\][^,\n]*,\\[nonesuch\\] unsupported,0,0\n"
         zero "${pp}")
  if(NOT own OR NOT zero OR NOT pp MATCHES "here")
    message(FATAL_ERROR "presets: no row of preset '${preset}' with a figure of merit, or PP is not 0 over here, "
                        "[${preset}] and [nonesuch] (unsupported):\n${csv}\n${pp}")
  endif()
else()
  message(FATAL_ERROR "test_study.cmake: unknown MODE '${MODE}'")
endif()
