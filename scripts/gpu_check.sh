#!/usr/bin/env bash
# The GPU check (issue 29), for a machine with an NVIDIA GPU: builds the `cuda` preset against a
# CUDA-enabled Kokkos you already have, runs tests and benchmarks on the GPU and prints a summary.
# It does not build Kokkos.
#
#   Kokkos_ROOT=/path/to/cuda/kokkos scripts/gpu_check.sh [TARGET ...]
#
# TARGETs are test or benchmark executables (test_*: each test case in its own process, since a
# CUDA error ends the process that meets it; bench_*: as they are);
# the default set is sized to build and run within about 10 minutes on 16 cores (nvcc compiles a
# fused-kernel test source in minutes, so not every test file is in it). Logs go to
# build/cuda/gpu_check/. nvcc must be on PATH (or under /usr/local/cuda/bin).
set -uo pipefail
: "${Kokkos_ROOT:?set Kokkos_ROOT to a CUDA-enabled Kokkos (one with bin/nvcc_wrapper)}"
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "gpu_check: no nvcc on PATH" >&2; exit 2; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(test_core test_runtime test_models test_semantics
           bench_elementwise bench_normalization bench_matmul bench_collectives bench_transfer)
fi
logs=build/cuda/gpu_check
start=$SECONDS

echo "== machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null ||
  echo "(nvidia-smi found no GPU: the runs below will fail to start)"
nvcc --version | tail -1
echo "cores: $(nproc)"

echo "== configure and build (cuda preset, -j$(nproc))"
cmake --preset cuda -DKokkos_ROOT="$Kokkos_ROOT" -DTESSEL_MARCH= >/dev/null || exit 1
mkdir -p "$logs"
build_start=$SECONDS
cmake --build build/cuda -j"$(nproc)" --target tessel "${targets[@]}" -- -k 0 >"$logs/build.log" 2>&1
built_ok=$?
echo "build: $((SECONDS - build_start)) s, exit $built_ok; failed sources:"
grep '^FAILED:' "$logs/build.log" | sed 's/^FAILED: /  /' || echo "  none"

# A CUDA error is sticky: the first bad kernel ends its process. So each test case runs in its own
# process (a whole binary would hide every case after its first failure), several at a time.
run_case() {  # exe name log
  local spec out rc
  spec=$(printf '%s' "$2" | sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g')
  out=$(OMP_PROC_BIND=false timeout "${4:-120}" "$1" "$spec" 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "All tests passed" <<<"$out"; then echo "pass	$(basename "$1")	$2" >>"$3"
  elif [ $rc -eq 124 ]; then echo "TIMEOUT	$(basename "$1")	$2" >>"$3"
  else echo "FAIL($rc)	$(basename "$1")	$2" >>"$3"; { echo "==== $(basename "$1") :: $2"; echo "$out" | head -40; } >>"$3.failures"; fi
}
export -f run_case
declare -A result
for t in "${targets[@]}"; do
  exe=$(find build/cuda -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
  if [ -z "$exe" ]; then
    result[$t]="not built"
    continue
  fi
  run_start=$SECONDS
  if [[ $t == bench_* ]]; then
    timeout 300 "$exe" >"$logs/$t.log" 2>&1
    result[$t]="exit $? in $((SECONDS - run_start)) s"
  else
    : >"$logs/$t.cases"; : >"$logs/$t.cases.failures"
    "$exe" --list-tests --verbosity quiet 2>/dev/null | tr '\n' '\0' |
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
done
echo "== benchmarks (time and counters)"
for t in "${targets[@]}"; do
  [[ $t == bench_* && -f $logs/$t.log ]] && grep -E '^BM_' "$logs/$t.log" | cut -c1-200 | sed "s/^/  /"
done
echo "total: $((SECONDS - start)) s"
