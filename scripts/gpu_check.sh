#!/usr/bin/env bash
# The GPU check (issue 29): builds the `cuda` preset against a CUDA-enabled Kokkos you already
# have, runs tests and benchmarks on a GPU and prints a summary. It does not build Kokkos.
#
#   Kokkos_ROOT=/path/to/cuda/kokkos scripts/gpu_check.sh [TARGET ...]
#       build and run here (a machine with a GPU and the build's dependencies);
#   Kokkos_ROOT=/path/to/cuda/kokkos scripts/gpu_check.sh --pack FILE.tar.xz [TARGET ...]
#       build here (no GPU needed) and pack the stripped binaries with the shared libraries they
#       need, except glibc's and CUDA's own (libcuda, cudart, cuBLAS come from the GPU machine);
#   scripts/gpu_check.sh --run FILE.tar.xz [TARGET ...]
#       on a GPU machine that lacks the build's dependencies (Catch2, Google Benchmark, toml++):
#       unpack into build/cuda and run what was packed, from a checkout of the same commit.
#
# TARGETs are test or benchmark executables (test_*: each test case in its own process, since a
# CUDA error ends the process that meets it; bench_*: as they are, GPU_CHECK_BENCH_ARGS added; the
# benchmarks run each workload on its mesh of 8 logical devices and on a mesh of one, devices:1);
# the default set is sized to build and run within about 10 minutes on 16 cores (nvcc compiles a
# fused-kernel test source in minutes, so not every test file is in it); --pack's default is every
# test binary and the issue's five benchmarks (build/cuda/gpu_pack/targets lists them). Logs go to
# build/cuda/gpu_check/. nvcc must be on PATH (or under /usr/local/cuda/bin) to build.
# Where python3 imports jax and JAX sees a GPU, GPT-2's forward also runs in JAX on one GPU beside
# bench_gpt2's 1-device benchmarks, float32 and bfloat16 (scripts/gpt2_jax.py --platform gpu).
set -uo pipefail
mode=check pack=
case "${1:-}" in
  --pack) mode=pack; pack=$(realpath -m "${2:?usage: gpu_check.sh --pack FILE.tar.xz [TARGET ...]}"); shift 2 ;;
  --run) mode=run; pack=$(realpath -m "${2:?usage: gpu_check.sh --run FILE.tar.xz [TARGET ...]}"); shift 2 ;;
esac
cd "$(dirname "$0")/.."
if [ "$mode" != run ]; then
  : "${Kokkos_ROOT:?set Kokkos_ROOT to a CUDA-enabled Kokkos (one with bin/nvcc_wrapper)}"
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  command -v nvcc >/dev/null || { echo "gpu_check: no nvcc on PATH" >&2; exit 2; }
fi
targets=("$@")
issue_benchmarks=(bench_elementwise bench_normalization bench_matmul bench_collectives bench_transfer bench_gpt2
                  bench_dispatch)
original_library_path=${LD_LIBRARY_PATH:-}
if [ ${#targets[@]} -eq 0 ] && [ "$mode" = check ]; then
  targets=(test_core test_runtime test_models test_semantics "${issue_benchmarks[@]}")
elif [ ${#targets[@]} -eq 0 ] && [ "$mode" = pack ]; then
  # Built here, so every test binary of the preset (the cases that failed on a GPU before are in
  # test_expr, test_shard_map, test_uneven, test_models and test_runtime).
  mapfile -t targets < <(sed -n 's/^ *tessel_test(\(test_[a-z_]*\).*/\1/p' tests/CMakeLists.txt)
  targets+=("${issue_benchmarks[@]}")
fi
logs=build/cuda/gpu_check
packed=build/cuda/gpu_pack  # in a pack: the libraries, the targets' list, the source folder
start=$SECONDS

echo "== machine"
if ! nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null; then
  [ "$mode" = pack ] && echo "(no GPU here: not needed to pack)" || echo "(nvidia-smi found no GPU: the runs below will fail to start)"
fi
[ "$mode" = run ] || nvcc --version | tail -1
echo "cores: $(nproc)"

if [ "$mode" != run ]; then
  echo "== configure and build (cuda preset, -j$(nproc))"
  cmake --preset cuda -DKokkos_ROOT="$Kokkos_ROOT" -DTESSEL_MARCH= >/dev/null || exit 1
  mkdir -p "$logs"
  # (static_jit's tests are not targets of a CUDA build: nvcc cannot run the constexpr planner.)
  known=()
  for t in "${targets[@]}"; do
    if ninja -C build/cuda -t query "$t" >/dev/null 2>&1; then known+=("$t"); else echo "  $t: not a target of the cuda preset"; fi
  done
  targets=("${known[@]}")
  build_start=$SECONDS
  cmake --build build/cuda -j"$(nproc)" --target tessel "${targets[@]}" -- -k 0 >"$logs/build.log" 2>&1
  built_ok=$?
  echo "build: $((SECONDS - build_start)) s, exit $built_ok; failed sources:"
  grep '^FAILED:' "$logs/build.log" | sed 's/^FAILED: /  /' || echo "  none"
fi

# xz where it is installed, else Python's lzma (the same format; tessel's userland has no xz).
xz_filter() {
  if command -v xz >/dev/null; then xz -T0 "$@"
  elif [ "$1" = -d ]; then python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)'
  else python3 -c $'import lzma, shutil, sys\nwith lzma.open(sys.stdout.buffer, "w", preset=9) as f: shutil.copyfileobj(sys.stdin.buffer, f)'
  fi
}

if [ "$mode" = pack ]; then
  # Stripped copies of the targets, the Kokkos Tools libraries the tests load by path, and every
  # shared library they link but glibc's and the CUDA driver's and toolkit's. Solid xz compression
  # shares the library code the binaries have in common (stop 42: 31 binaries, 460 MB -> 37 MB).
  stage=$(mktemp -d) && trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/$packed/lib"
  printf '%s\n' "${targets[@]}" >"$stage/$packed/targets"
  pwd >"$stage/$packed/source_dir"
  exes=()
  for t in "${targets[@]}"; do
    exe=$(find build/cuda -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
    [ -n "$exe" ] && exes+=("$exe") || echo "  $t: not built, not packed"
  done
  mapfile -t tools < <(find build/cuda/tests -name '*.so' -type f 2>/dev/null)
  for f in "${exes[@]}" "${tools[@]}"; do
    mkdir -p "$stage/$(dirname "$f")" && strip --strip-unneeded -o "$stage/$f" "$f"
  done
  ldd "${exes[@]}" "${tools[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(ld-linux[^/]*|libc|libm|libmvec|libpthread|libdl|librt|libutil|libcuda|libcudart|libcublas[^/]*|libnvJitLink|libnvrtc)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/$packed/lib/"; done
  tar -C "$stage" -cf - build | xz_filter -9 >"$pack" || { echo "gpu_check: packing failed" >&2; exit 1; }
  echo "packed: $pack, $(du -h "$pack" | cut -f1) ($(ls "$stage/$packed/lib" | wc -l) libraries: $(ls "$stage/$packed/lib" | tr '\n' ' '))"
  echo "run it with: scripts/gpu_check.sh --run $pack"
  exit 0
fi

if [ "$mode" = run ]; then
  echo "== unpack $pack"
  xz_filter -d <"$pack" | tar -xf - || { echo "gpu_check: unpacking $pack failed" >&2; exit 1; }
  # What was packed, or the TARGETs named after FILE among them.
  [ ${#targets[@]} -gt 0 ] || mapfile -t targets <"$packed/targets"
  # The tests read their data by the absolute path they were built in.
  built_in=$(cat "$packed/source_dir")
  if [ "$built_in" != "$(pwd)" ] && [ ! -e "$built_in" ]; then
    mkdir -p "$(dirname "$built_in")" && ln -s "$(pwd)" "$built_in" ||
      echo "(could not link $built_in to this checkout: tests that read tests/data will fail)"
  fi
  # The driver's libcuda first (a toolkit's compat/libcuda stops every binary with
  # cudaErrorSystemDriverMismatch), then the packed libraries, then the toolkit's cudart and cuBLAS.
  cublas=$(ls /usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.* 2>/dev/null | head -1)
  path=
  for d in /usr/local/nvidia/lib64 "$(pwd)/$packed/lib" ${cublas:+"$(dirname "$cublas")"}; do
    [ -d "$d" ] && path=${path:+$path:}$d
  done
  export LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "libraries from: $LD_LIBRARY_PATH"
  mkdir -p "$logs"
fi

# A CUDA error is sticky: the first bad kernel ends its process. So each test case runs in its own
# process (a whole binary would hide every case after its first failure), several at a time.
# A test case's name as a Catch2 test spec (its backslashes, commas and brackets escaped).
case_spec() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g'; }
run_case() {  # exe name log
  local spec out rc
  spec=$(case_spec "$2")
  out=$(OMP_PROC_BIND=false timeout "${4:-120}" "$1" "$spec" 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "All tests passed" <<<"$out"; then echo "pass	$(basename "$1")	$2" >>"$3"
  elif [ $rc -eq 124 ]; then echo "TIMEOUT	$(basename "$1")	$2" >>"$3"
  else echo "FAIL($rc)	$(basename "$1")	$2" >>"$3"; { echo "==== $(basename "$1") :: $2"; echo "$out" | head -40; } >>"$3.failures"; fi
}
export -f case_spec run_case
declare -A result
for t in "${targets[@]}"; do
  exe=$(find build/cuda -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
  if [ -z "$exe" ]; then
    result[$t]="not built"
    continue
  fi
  run_start=$SECONDS
  if [[ $t != test_* ]] || ! "$exe" --list-tests --verbosity quiet >"$logs/$t.list" 2>&1; then
    # A benchmark, an example, a test that is its own program, or a test binary that cannot
    # start: run as it is.
    if [[ $t == bench_* ]]; then
      # shellcheck disable=SC2086
      timeout "${GPU_CHECK_BENCH_SECONDS:-300}" "$exe" ${GPU_CHECK_BENCH_ARGS:-} >"$logs/$t.log" 2>&1
    else
      timeout 300 "$exe" >"$logs/$t.log" 2>&1
    fi
    rc=$?
    result[$t]="exit $rc in $((SECONDS - run_start)) s"
    [ $rc -eq 0 ] || result[$t]+=": $(grep -v '^\s*$' "$logs/$t.log" | tail -1 | cut -c1-160)"
  else
    # The graph cases are hidden on a host (they need TESSEL_ASYNC=1 there); a GPU captures itself.
    [ "$t" = test_runtime ] && "$exe" "[.graphs]" --list-tests --verbosity quiet >>"$logs/$t.list" 2>/dev/null
    : >"$logs/$t.cases"; : >"$logs/$t.cases.failures"
    tr '\n' '\0' <"$logs/$t.list" |
      xargs -0 -P "$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))" -I{} bash -c 'run_case "$1" "$2" "$3"' _ "$exe" {} "$logs/$t.cases"
    # Processes side by side share the GPU by time slices, so a case of many small evaluations can
    # run out of time there and not alone: cases that timed out run again, one at a time.
    mapfile -t slow < <(grep '^TIMEOUT' "$logs/$t.cases" | cut -f3)
    for name in "${slow[@]}"; do
      awk -F'\t' -v n="$name" '!($1 == "TIMEOUT" && $3 == n)' "$logs/$t.cases" >"$logs/$t.cases.tmp"
      mv "$logs/$t.cases.tmp" "$logs/$t.cases"
      alone=$SECONDS
      run_case "$exe" "$name" "$logs/$t.cases" 300
      sed -i "\$s/\$/	(alone: $((SECONDS - alone)) s)/" "$logs/$t.cases"
    done
    result[$t]="$(grep -c '^pass' "$logs/$t.cases") of $(wc -l <"$logs/$t.cases") cases pass, in $((SECONDS - run_start)) s"
  fi
done

# The first failing cases again under compute-sanitizer's memcheck (GPU_CHECK_SANITIZE of them
# per binary, default 3): a bad kernel's first invalid access, named with its kernel and address.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$sanitizer" ]; then
  for t in "${targets[@]}"; do
    [[ $t == test_* && -f $logs/$t.cases ]] || continue
    exe=$(find build/cuda -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
    mapfile -t failed < <(grep -E '^(FAIL|TIMEOUT)' "$logs/$t.cases" | cut -f3 | head -"${GPU_CHECK_SANITIZE:-3}")
    for name in "${failed[@]}"; do
      { echo "==== $t :: $name"
        OMP_PROC_BIND=false timeout 300 "$sanitizer" --tool memcheck --print-limit 5 "$exe" "$(case_spec "$name")" 2>&1 | grep -E -A6 '^========= (Invalid|Program hit|Error)' | head -40
      } >>"$logs/$t.sanitizer"
    done
  done
fi

# With several GPUs, the test binaries' cases again with every GPU in use (TESSEL_GPUS=all: the 8
# logical devices in blocks over them, collectives reading peers' memory).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -ge 2 ]; then
  for t in "${targets[@]}"; do
    exe=$(find build/cuda -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
    [[ $t == test_* && -n $exe ]] || continue
    run_start=$SECONDS
    : >"$logs/$t.spread.cases"; : >"$logs/$t.spread.cases.failures"
    "$exe" --list-tests --verbosity quiet 2>/dev/null | tr '\n' '\0' |
      TESSEL_GPUS=all xargs -0 -P "$gpus" -I{} bash -c 'run_case "$1" "$2" "$3"' _ "$exe" {} "$logs/$t.spread.cases"
    result[$t]+="; over $gpus GPUs: $(grep -c '^pass' "$logs/$t.spread.cases") of $(wc -l <"$logs/$t.spread.cases") in $((SECONDS - run_start)) s"
  done
fi

echo "== results (logs in $logs/)"
for t in "${targets[@]}"; do
  printf '  %-22s %s\n' "$t" "${result[$t]}"
  [[ $t == test_* && -f $logs/$t.cases ]] && grep -v '^pass' "$logs/$t.cases" | sed 's/^/      /'
  [[ $t == test_* && -f $logs/$t.spread.cases ]] && grep -v '^pass' "$logs/$t.spread.cases" | sed 's/^/      spread: /'
  [[ -s $logs/$t.sanitizer ]] && grep -E '^(====|========= (Invalid|Program hit|Error))' "$logs/$t.sanitizer" | sed 's/^/      memcheck: /'
done
echo "== benchmarks (time and counters)"
for t in "${targets[@]}"; do
  [[ $t == bench_* && -f $logs/$t.log ]] && grep -E '^BM_' "$logs/$t.log" | cut -c1-200 | sed "s/^/  /"
done

# JAX on the GPU side by side with tessel's 1-device GPT-2 forward, where jax imports and sees a GPU
# (its own CUDA libraries: python runs with the library path this script started with; the
# benchmark with the one it set).
gpt2=$(find build/cuda -maxdepth 3 -type f -name bench_gpt2 -perm -u+x | head -1)
if [ -n "$gpt2" ] && LD_LIBRARY_PATH=$original_library_path python3 -c 'import jax; assert jax.devices("gpu")' >/dev/null 2>&1; then
  echo "== GPT-2 forward: JAX on one GPU beside tessel's 1-device benchmark"
  for dtype in float32 bfloat16; do
    LD_LIBRARY_PATH=$original_library_path timeout 900 python3 scripts/gpt2_jax.py --platform gpu --dtype "$dtype" \
      --rounds 2 --bench-command "env LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} $(realpath "$gpt2")" >"$logs/gpt2_jax_$dtype.log" 2>&1
    echo "  $dtype (exit $?): $(grep -E '^(JAX median|median tessel/JAX)' "$logs/gpt2_jax_$dtype.log" | tr '\n' ' ')"
  done
else
  echo "== GPT-2 forward beside JAX: skipped (no bench_gpt2, or python3 here has no jax that sees a GPU)"
fi
echo "total: $((SECONDS - start)) s"
