#!/usr/bin/env python3
"""Compile time and peak compiler memory of static_plan (bench/compile_time/static_plan.cpp).

Run inside the build environment from the project root:
  ./tessel run python3 bench/compile_time/measure.py [--compiler g++]
Prints one line per program: seconds (wall), peak resident MB of the compiler, and the same less
the baseline that plans nothing (the headers' own cost)."""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compile_once(cxx, defines):
    cmd = [cxx, "-std=c++20", "-fsyntax-only", "-fopenmp", "-fconstexpr-ops-limit=4294967296",
           "-DKOKKOS_DEPENDENCE", f"-I{ROOT}/include", f"-I{ROOT}/tests", "-isystem", "/usr/include/kokkos"]
    cmd += [f"-D{d}" for d in defines] + [f"{ROOT}/bench/compile_time/static_plan.cpp"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)  # this compiler's own peak memory
    seconds = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"compile failed for {defines}:\n{err[:4000]}")
    return seconds, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default="g++")
    args = ap.parse_args()
    programs = [("none", ["PROGRAM=none"]), ("megatron", ["PROGRAM=megatron"])]
    programs += [(f"chain {n} ops", ["PROGRAM=chain", f"CHAIN_OPS={n}"]) for n in (10, 50, 100, 200)]
    programs += [("transformer layer", ["PROGRAM=transformer"])]
    base = None
    print(f"{'program':<20} {'seconds':>8} {'peak MB':>8} {'+seconds':>9}")
    for name, defines in programs:
        s, mb = compile_once(args.compiler, defines)
        base = s if base is None else base
        print(f"{name:<20} {s:8.1f} {mb:8.0f} {s - base:9.1f}", flush=True)


if __name__ == "__main__":
    main()
