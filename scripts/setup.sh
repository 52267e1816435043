#!/usr/bin/env bash
# Makes a build environment for tessel and records which one in build/env.sh.
#
# Order of preference (issue 2):
#   1. a Kokkos the user already has: Kokkos_ROOT or CMAKE_PREFIX_PATH pointing at a KokkosConfig.cmake;
#   2. the distribution's own Kokkos, if apt offers one >= 4.4 (installed natively);
#   3. otherwise a Debian 13 (trixie) userland with sid's libkokkos-dev, in which builds and tests run.
# Idempotent: on a ready machine it only checks a stamp and returns.
#
# --hip (or TESSEL_WITH_ROCM=1): ROCm for the hip presets (hipcc, the HIP runtime, rocBLAS and
# hipBLAS), which nothing else needs, so CI's host presets never install it. In the Debian 13
# userland they come from sid (ROCm 6.4; trixie's is 5.7), which upgrades glibc (2.43), libstdc++
# and libgomp to sid's and brings clang 21, so they go to a userland of their own, the plain one's
# path + "-rocm" (TESSEL_ROCM_SYSROOT): the plain one stays what CI and the other presets run in, and
# nvcc 13.0 cannot compile against glibc 2.43 (its math headers declare rsqrt apart from glibc's).
# The hip presets also need a HIP-enabled Kokkos of the user's (Kokkos_ROOT).
set -euo pipefail

with_rocm=${TESSEL_WITH_ROCM:-0}
for arg in "$@"; do
  case "$arg" in
    --hip|--rocm) with_rocm=1 ;;
    *) echo "usage: scripts/setup.sh [--hip]  (--hip: also install ROCm for the hip preset)" >&2; exit 2 ;;
  esac
done

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sysroot=${TESSEL_SYSROOT:-/opt/tessel-trixie}
[ "$with_rocm" = 1 ] && sysroot=${TESSEL_ROCM_SYSROOT:-$sysroot-rocm}
# Bump when the set-up steps below change, so an old userland is brought up to date. The package
# list is part of the stamp by itself (a checksum). A missing stamp re-runs only the apt steps
# (debootstrap is skipped when the root already has apt), which install just what is missing.
stamp_version=2
# clang, libclang-rt-dev (its libFuzzer and sanitizer runtimes: libclang-rt-19-dev on Debian 13) and
# libomp-dev (clang's OpenMP runtime, which also serves the GCC-built libkokkoscore's GOMP_* calls)
# build the fuzz preset. libopenblas-openmp-dev: OpenBLAS on OpenMP, which tessel links (CMakeLists.txt)
# so that the BLAS and Kokkos share one thread pool; it installs beside the default (pthreads) one.
# libdnnl-dev (oneDNN): the host's 16-bit GEMMs (bfloat16 and float16 operands, float accumulation),
# which Debian's OpenBLAS is built without; oneDNN runs them on AMX or AVX512-BF16 where the CPU has them.
# nlohmann-json3-dev: the trace writer (tools/trace.hpp) and the study's JSON results.
# libtomlplusplus-dev (study files), python3 and python3-matplotlib (the study's pictures,
# scripts/study_plot.py) serve ./tessel study. iproute2 (ip netns): the two-hosts MPI test.
trixie_packages=(g++ cmake ninja-build ccache pkgconf catch2 librange-v3-dev libbenchmark-dev
                 libopenblas-dev libopenblas-openmp-dev libopenmpi-dev openmpi-bin clang libclang-rt-dev libomp-dev
                 libtomlplusplus-dev nlohmann-json3-dev libdnnl-dev python3 python3-matplotlib iproute2)
native_packages=(g++ cmake ninja-build ccache pkgconf catch2 librange-v3-dev libbenchmark-dev
                 libopenblas-dev libopenblas-openmp-dev libopenmpi-dev openmpi-bin clang libclang-rt-dev libomp-dev
                 libtomlplusplus-dev nlohmann-json3-dev libdnnl-dev python3 python3-matplotlib iproute2)
# ROCm for the hip preset (--hip). Not librccl-dev: Debian's RCCL 5.4.3 is built on HIP 5
# (libamdhip64-5), which ROCm 6.4's runtime declares it breaks, so apt cannot install both; the hip
# preset's collectives between GPUs are the in-process ones and MPI.
rocm_packages=(hipcc libamdhip64-dev librocblas-dev libhipblas-dev)
rocm_stamp_version=1

say() { printf 'tessel setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

write_env() {  # $1 = mode (native|sysroot)
  mkdir -p "$top/build"
  {
    echo "TESSEL_ENV_MODE=$1"
    echo "TESSEL_SYSROOT=$sysroot"
    [ -n "${Kokkos_ROOT:-}" ] && echo "export Kokkos_ROOT=$Kokkos_ROOT"
    true
  } > "$top/build/env.sh"
}

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# 1. The user's own Kokkos.
if [ -n "${Kokkos_ROOT:-}" ] || { [ -n "${CMAKE_PREFIX_PATH:-}" ] &&
     find ${CMAKE_PREFIX_PATH//:/ } -name KokkosConfig.cmake -print -quit 2>/dev/null | grep -q .; }; then
  say "using the Kokkos given by Kokkos_ROOT/CMAKE_PREFIX_PATH; other dependencies must be installed"
  if [ "$with_rocm" = 1 ] && ! command -v hipcc >/dev/null; then
    say "--hip: no hipcc on PATH; with your own Kokkos, install ROCm (hipcc, rocBLAS, hipBLAS) yourself"
    exit 1
  fi
  write_env native
  exit 0
fi

# 2. The distribution's own Kokkos, when it is recent enough and runs here.
if command -v apt-cache >/dev/null; then
  if dpkg-query -W -f='${Status}' libkokkos-dev 2>/dev/null | grep -q 'ok installed' &&
     version_ge "$(dpkg-query -W -f='${Version}' libkokkos-dev)" 4.4; then
    missing=()
    for p in "${native_packages[@]}"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    [ "$with_rocm" = 1 ] && missing+=("${rocm_packages[@]}")
    if [ ${#missing[@]} -gt 0 ]; then
      say "installing ${missing[*]}"
      as_root apt-get install -y -q "${missing[@]}"
    fi
    write_env native; exit 0
  fi
  candidate=$(apt-cache policy libkokkos-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && version_ge "$candidate" 4.4; then
    say "installing the distribution's libkokkos-dev $candidate"
    extra=(); [ "$with_rocm" = 1 ] && extra=("${rocm_packages[@]}")
    as_root apt-get install -y -q libkokkos-dev "${native_packages[@]}" "${extra[@]}"
    write_env native; exit 0
  fi
fi

# 3. A Debian 13 userland. The stamp also names a checksum of the package list, so that a list
# changed in another checkout (sharing this userland) is installed even if it kept the version.
ready="$sysroot/.tessel-ready-$stamp_version-$(printf '%s\n' "${trixie_packages[@]}" | cksum | cut -d' ' -f1)"
rocm_ready="$sysroot/.tessel-rocm-ready-$rocm_stamp_version-$(printf '%s\n' "${rocm_packages[@]}" | cksum | cut -d' ' -f1)"

in_root() { as_root chroot "$sysroot" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
              DEBIAN_FRONTEND=noninteractive "$@"; }
# ROCm from sid, on request (in the -rocm userland), once (its own stamp): after the userland itself.
install_rocm() {
  [ "$with_rocm" = 1 ] && [ ! -f "$rocm_ready" ] || return 0
  say "installing ROCm (${rocm_packages[*]}) from Debian sid into $sysroot (a few minutes, once)"
  in_root apt-get -o Acquire::Check-Valid-Until=false update -q
  in_root apt-get install -y -q --no-install-recommends -t sid "${rocm_packages[@]}"
  in_root apt-get clean
  as_root touch "$rocm_ready"
}
if [ -f "$ready" ]; then install_rocm; write_env sysroot; exit 0; fi

if [ -x "$sysroot/usr/bin/apt-get" ]; then
  say "bringing the Debian 13 userland in $sysroot up to date (its package list changed)"
else
  say "no usable Kokkos here (need >= 4.4); building a Debian 13 userland in $sysroot (a few minutes, once)"
  if ! command -v debootstrap >/dev/null; then
    as_root apt-get update -q || true
    as_root apt-get install -y -q debootstrap
  fi
  as_root rm -rf "$sysroot.partial"
  as_root debootstrap --variant=minbase trixie "$sysroot.partial" http://deb.debian.org/debian
  as_root mv "$sysroot.partial" "$sysroot"
fi

as_root tee "$sysroot/etc/apt/sources.list.d/sid.list" >/dev/null <<'LIST'
deb http://deb.debian.org/debian sid main
LIST
# sid only for what we ask by name (-t sid); everything else stays trixie.
as_root tee "$sysroot/etc/apt/preferences.d/sid" >/dev/null <<'PIN'
Package: *
Pin: release a=unstable
Pin-Priority: 100
PIN
as_root cp /etc/resolv.conf "$sysroot/etc/resolv.conf" 2>/dev/null || true

# sid's Release file is past its Valid-Until on this archive.
in_root apt-get -o Acquire::Check-Valid-Until=false update -q
in_root apt-get install -y -q --no-install-recommends "${trixie_packages[@]}"
in_root apt-get install -y -q --no-install-recommends -t sid libkokkos-dev

# Debian's KokkosConfig names two static archives the package does not ship; upstream builds them
# from empty sources, so empty archives are equivalent.
for lib in libkokkosalgorithms.a libkokkossimd.a; do
  path="$sysroot/usr/lib/x86_64-linux-gnu/$lib"
  [ -e "$path" ] || in_root ar rc "/usr/lib/x86_64-linux-gnu/$lib"
done
in_root apt-get clean
as_root touch "$ready"
install_rocm
write_env sysroot
say "Debian 13 userland ready"
