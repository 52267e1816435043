#!/usr/bin/env python3
"""Generates the jax.numpy elementwise-math reference vectors used by tests/expr/test_math.cpp.

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax
    /tmp/jaxenv/bin/python tests/data/jax_math/make_vectors.py

It writes <function>.txt next to itself.  The vectors in the repository were made with jax 0.10.2 /
jaxlib 0.10.2 on an x86-64 CPU with AVX2+FMA (AMD EPYC) and glibc 2.36 (XLA:CPU calls the C library
for sin, cos and pow).  Every file starts with '#' header lines naming the versions.

Functions (float32, JAX defaults):
  exp log tanh abs sqrt  jnp.<name>          erf       jax.scipy.special.erf
  logistic               jax.nn.sigmoid      gelu      jax.nn.gelu (approximate=True)
  rsqrt                  jax.lax.rsqrt       sin cos   jnp.sin / jnp.cos
  pow                    jnp.power(x, y) with float32 x and y

Notes on how the values were computed:
  * XLA:CPU runs with flush-to-zero and denormals-are-zero, so subnormal inputs act as zero and
    subnormal results come out as zero.  The C++ test compares bit for bit under FTZ+DAZ and, in
    the default IEEE mode, skips the entries where a subnormal is involved.
  * XLA:CPU evaluates the elements of a short array tail (fewer than 8 left over) with the C
    library's expf / logf / ... instead of its own polynomials.  All inputs here are evaluated in
    arrays padded to a multiple of 1024 elements, so every element goes through the vector code.

Format (whitespace separated tokens, '#' starts a comment line, numbers are hex float32 bit patterns
unless noted):
  sweep <start> <step> <count, decimal>
      followed by <count> result bit patterns; the inputs are the bit patterns
      start + i * step (mod 2^32), i = 0 .. count-1, so they need not be stored
  values <count, decimal>
      followed by <count> pairs <input> <result>
  pairs <count, decimal>                                      (pow.txt only)
      followed by <count> triples <x> <y> <result>
"""

import os
import sys
import struct

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)

OUT = os.path.dirname(os.path.abspath(__file__))

FUNCS = {
    "exp": jnp.exp,
    "log": jnp.log,
    "tanh": jnp.tanh,
    "erf": jax.scipy.special.erf,
    "logistic": jax.nn.sigmoid,
    "gelu": jax.nn.gelu,
    "sqrt": jnp.sqrt,
    "rsqrt": jax.lax.rsqrt,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "abs": jnp.abs,
}

# Per function: (lo, hi) magnitude ranges swept in bit space (log-uniform) for both signs.
RANGES = {
    "exp": [(1e-6, 100.0)],
    "log": [(1e-30, 1e30), (0.5, 2.0)],
    "tanh": [(1e-5, 25.0)],
    "erf": [(1e-5, 5.0)],
    "logistic": [(1e-5, 110.0)],
    "gelu": [(1e-5, 12.0)],
    "sqrt": [(1e-30, 1e30)],
    "rsqrt": [(1e-30, 1e30)],
    "sin": [(1e-5, 130.0), (100.0, 1e6)],
    "cos": [(1e-5, 130.0), (100.0, 1e6)],
    "abs": [(1e-30, 1e30)],
}

F32 = np.float32


def bits(v):
    return int(np.asarray(v, dtype=np.float32).view(np.uint32))


def fl(b):
    return np.asarray(b & 0xFFFFFFFF, dtype=np.uint32).view(np.float32).item()


SPECIAL_BITS = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FA00000,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
    0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0x40000000, 0xC0000000,
]

SPECIAL_VALUES = {
    # XLA exp: clamps at -87.8 / 88.8, scale 2^n with n in [-127, 127]; overflow near 88.7228
    "exp": [-87.8, -87.80001, -87.7999, -87.68, -87.5, -87.33, -87.0, -86.0, 88.7, 88.72, 88.7228,
            88.7229, 88.8, 88.81, 89.0, 1e-8, -1e-8, 0.34657359, -0.34657359, 0.5, -0.5, 100.0,
            -100.0, 1e10, -1e10],
    "log": [1.0000001, 0.99999994, 0.70710677, 0.7071068, 2.0, 4.0, 1e-38, 1.1754944e-38, 3e38,
            0.1, 10.0, -1.0, -1e-38, 2.718282],
    "tanh": [3.9999e-4, 4e-4, 4.0001e-4, 7.998811, 7.9988117, 7.99882, 8.0, 9.0, 19.999998, 20.0,
             20.000002, 1e-20, 0.5, 1.0, 2.0],
    "erf": [3.8325, 3.83250, 3.832499, 3.8325002, 1e-20, 0.5, 1.0, 2.0, 3.0, 4.0, 10.0, 1e20],
    "logistic": [88.8, 88.7, 87.8, 87.68, -87.68, -87.8, -88.7, -88.8, -89.0, -100.0, -104.0,
                 17.0, 16.0, 1e-8, 40.0],
    "gelu": [1e-20, 1e-10, 0.5, 1.0, 3.0, 5.0, 10.0, -3.0, -5.0, -10.0, -12.0, 1e3, 1e10, 1e20,
             -1e20, 4e12, -4e12],
    "sqrt": [2.0, 4.0, 0.25, 1e-38, 1.1754944e-38, 3e38, -1.0, -1e-38],
    "rsqrt": [2.0, 4.0, 0.25, 1e-38, 1.1754944e-38, 3e38, -1.0, -1e-38],
    "sin": [0.75, 0.7499999, 0.78539819, 2.4414062e-4, 2.4414059e-4, 119.99999, 120.0, 120.00001,
            1.5707964, 3.1415927, 4.712389, 6.2831855, 1e10, 1e20, 1e30, 3e38, 58.0,
            116.0, float.fromhex("0x1.d0f4aap+5"), float.fromhex("0x1.d0f4aap+6"), 25000.0,
            float.fromhex("0x1.921fb6p+20")],
    "cos": [0.75, 0.7499999, 0.78539819, 2.4414062e-4, 2.4414059e-4, 119.99999, 120.0, 120.00001,
            1.5707964, 3.1415927, 4.712389, 6.2831855, 1e10, 1e20, 1e30, 3e38, 58.0,
            116.0, float.fromhex("0x1.d0f4aap+5"), float.fromhex("0x1.d0f4aap+6"), 25000.0,
            float.fromhex("0x1.921fb6p+20")],
    "abs": [],
}


def evaluate(f, xs):
    """f over xs (float32) in one array padded to a multiple of 1024 (see the module docstring)."""
    n = len(xs)
    pad = (-n) % 1024
    x = np.concatenate([np.asarray(xs, np.float32), np.ones(pad, np.float32)])
    r = np.asarray(jax.jit(f)(x))
    return r[:n]


def header(fh, what):
    vector_header.header(fh, what, "tests/data/jax_math/make_vectors.py")


def h32(b):
    return f"{b & 0xFFFFFFFF:08x}"


def write_sweep(fh, f, start, step, count):
    inputs = ((start + np.arange(count, dtype=np.uint64) * step) & 0xFFFFFFFF).astype(np.uint32)
    r = evaluate(f, inputs.view(np.float32)).view(np.uint32)
    fh.write(f"sweep {h32(start)} {h32(step)} {count}\n")
    for k in range(0, count, 8):
        fh.write(" ".join(h32(int(v)) for v in r[k:k + 8]) + "\n")


def range_sweep(lo, hi, count, negative):
    b0, b1 = bits(F32(lo)), bits(F32(hi))
    step = max(1, (b1 - b0) // count)
    # an odd step so the low mantissa bits vary too
    step |= 1
    start = b0 | (0x80000000 if negative else 0)
    return start, step, count


def write_unary(name):
    f = FUNCS[name]
    path = os.path.join(OUT, f"{name}.txt")
    with open(path, "w") as fh:
        header(fh, f"{name}: float32 input bits -> result bits")
        # the whole bit-pattern space (both signs, subnormals, inf, NaN)
        fh.write("# all float32 bit patterns, evenly spaced\n")
        write_sweep(fh, f, 0x00001234, 0x001FFFFF, 1024)
        ranges = RANGES[name]
        per = 1024 // (2 * len(ranges))
        for lo, hi in ranges:
            for neg in (False, True):
                fh.write(f"# {'-' if neg else '+'}[{lo}, {hi}], log-uniform\n")
                write_sweep(fh, f, *range_sweep(lo, hi, per, neg))
        specials = [b for b in SPECIAL_BITS]
        for v in SPECIAL_VALUES[name]:
            b = bits(F32(v))
            specials += [b, b ^ 0x80000000, b + 1, b - 1]
        specials = sorted(set(s & 0xFFFFFFFF for s in specials))
        r = evaluate(f, np.asarray(specials, np.uint32).view(np.float32)).view(np.uint32)
        fh.write("# special values and boundaries (and their neighbours)\n")
        fh.write(f"values {len(specials)}\n")
        for b, v in zip(specials, r):
            fh.write(f"{h32(b)} {h32(int(v))}\n")
    print(path, os.path.getsize(path), "bytes")


def write_pow():
    rng = np.random.default_rng(20240607)
    xs, ys = [], []

    def add(x, y):
        xs.extend(np.asarray(x, np.float32).ravel().tolist())
        ys.extend(np.asarray(y, np.float32).ravel().tolist())

    n = 300
    add(rng.uniform(0.0, 4.0, n), rng.uniform(-8.0, 8.0, n))
    add(np.exp(rng.uniform(-80.0, 80.0, n)), rng.uniform(-2.0, 2.0, n))
    add(rng.uniform(0.5, 2.0, n), rng.uniform(-300.0, 300.0, n))            # over/underflow edges
    add(-rng.uniform(0.0, 10.0, n), np.round(rng.uniform(-20.0, 20.0, n)))  # negative x, integer y
    add(-rng.uniform(0.0, 10.0, 100), rng.uniform(-5.0, 5.0, 100))          # negative x -> NaN
    rb = rng.integers(0, 2**32, size=(2, 300), dtype=np.uint64).astype(np.uint32)
    add(rb[0].view(np.float32), rb[1].view(np.float32))                     # any bit patterns
    sx = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
          1.1754944e-38, 3e38, -3e38, 1e-30]
    sy = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-45,
          2.0**24, 2.0**24 + 2, 2.0**23 + 1, 1e30, -1e30, 127.5, -149.5]
    gx, gy = np.meshgrid(np.asarray(sx, np.float32), np.asarray(sy, np.float32))
    add(gx, gy)
    x = np.asarray(xs, np.float32)
    y = np.asarray(ys, np.float32)
    pad = (-len(x)) % 1024
    xp = np.concatenate([x, np.ones(pad, np.float32)])
    yp = np.concatenate([y, np.ones(pad, np.float32)])
    r = np.asarray(jax.jit(jnp.power)(xp, yp))[: len(x)]
    path = os.path.join(OUT, "pow.txt")
    with open(path, "w") as fh:
        header(fh, "pow: jnp.power(x, y), float32 bits of x, y -> result bits")
        fh.write(f"pairs {len(x)}\n")
        for a, b, v in zip(x.view(np.uint32), y.view(np.uint32), r.view(np.uint32)):
            fh.write(f"{h32(int(a))} {h32(int(b))} {h32(int(v))}\n")
    print(path, os.path.getsize(path), "bytes")


def main():
    assert jax.default_backend() == "cpu", "run with a CPU-only jax"
    assert not jax.config.jax_enable_x64
    for name in FUNCS:
        write_unary(name)
    write_pow()


if __name__ == "__main__":
    main()
