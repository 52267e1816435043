#!/usr/bin/env python3
"""Generates the jax.random reference vectors used by tests/runtime/test_threefry.cpp.

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax
    /tmp/jaxenv/bin/python tests/data/jax_random/make_vectors.py

It writes the *.txt files next to itself.  Every output file starts with '#' header lines naming the
jax / jaxlib version, the backend, the host CPU FMA support and the x64 setting.  The vectors in the
repository were made with jax 0.10.2 / jaxlib 0.10.2 on an x86-64 CPU with AVX2+FMA.

Settings: JAX's defaults (jax_threefry_partitionable=True, the default since JAX 0.5), with
jax_enable_x64=False for the *_f32 / bits32 / keys / split / fold_in files and jax_enable_x64=True
for keys_x64.txt, bits64.txt, uniform_f64.txt and normal_f64.txt.

Format (whitespace separated tokens, '#' starts a comment line; all numbers hex unless noted):
  keys*.txt     key <seed, decimal> <k0> <k1>
  split.txt     split <k0> <k1> <n, decimal> <i, decimal> <out0> <out1>     (jax.random.split(key, n)[i])
  fold_in.txt   fold_in <k0> <k1> <data, decimal> <out0> <out1>
  bits / uniform / normal files:
    array <k0> <k1> <shape, e.g. 128x4> <minval bits> <maxval bits> <count, decimal>
        followed by <count> value bit patterns in row-major order
        (minval/maxval are the uniform bounds' bit patterns, 0 0 for bits and normal arrays)
    sparse <k0> <k1> <shape> <count, decimal>
        followed by <count> pairs <flat index, decimal> <value bits>: a subset of a large array
        (its tails plus a regular sample), so large arrays can be checked without storing them
    frombits <count, decimal>
        followed by <count> pairs <random bits> <value bits>: jax.random.normal's transform applied
        to chosen bits (edge cases, erf_inv branch boundaries), through a pass-through PRNG impl so
        the computation is jax.random.normal's own code
Float values are stored as their IEEE bit patterns (uint32 for float32, uint64 for float64).
"""

import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)
from jax.extend.random import define_prng_impl

OUT = os.path.dirname(os.path.abspath(__file__))

SEEDS = [0, 1, 42, 2**31 - 1, -5]
RANGES = ((-3.0, 7.5), (2.0, 3.0), (-1e-3, 1e-3), (0.1, 1e4), (-5.0, -4.999))
# PRNGKey edge cases: negative and beyond-32-bit seeds differ between x64 off and on.
KEY_SEEDS = SEEDS + [7, 123456789, -1, -2**31, 2**31, 2**32 - 1, 2**32 + 5, 2**40 + 7,
                     -2**40 - 3, 2**63 - 1, -2**63]


def header(f, what):
    vector_header.header(f, what, "tests/data/jax_random/make_vectors.py",
                         f", jax_threefry_partitionable={jax.config.jax_threefry_partitionable}, "
                         f"jax_default_prng_impl={jax.config.jax_default_prng_impl}", libc=False)


def h32(v):
    return f"{int(v) & 0xFFFFFFFF:08x}"


def h64(v):
    return f"{int(v) & 0xFFFFFFFFFFFFFFFF:016x}"


def key_data(seed):
    return [int(v) for v in np.asarray(jax.random.PRNGKey(seed))]


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def fbits(a):
    a = np.asarray(a)
    if a.dtype == np.float32:
        return a.view(np.uint32).ravel(), h32
    if a.dtype == np.float64:
        return a.view(np.uint64).ravel(), h64
    if a.dtype == np.uint32:
        return a.ravel(), h32
    if a.dtype == np.uint64:
        return a.ravel(), h64
    raise TypeError(a.dtype)


def write_array(f, key, shape, values, minval=None, maxval=None):
    bits, hx = fbits(values)
    lo = 0 if minval is None else fbits(np.asarray([minval], values.dtype))[0][0]
    hi = 0 if maxval is None else fbits(np.asarray([maxval], values.dtype))[0][0]
    k = np.asarray(key)
    f.write(f"array {h32(k[0])} {h32(k[1])} {shape_str(shape)} {hx(lo)} {hx(hi)} {bits.size}\n")
    for s in range(0, bits.size, 8):
        f.write(" ".join(hx(b) for b in bits[s:s + 8]) + "\n")


def write_sparse(f, key, shape, values, idx):
    bits, hx = fbits(values)
    k = np.asarray(key)
    f.write(f"sparse {h32(k[0])} {h32(k[1])} {shape_str(shape)} {len(idx)}\n")
    for i in idx:
        f.write(f"{int(i)} {hx(bits[i])}\n")


def write_frombits(f, rbits, values):
    rb, hr = fbits(rbits)
    vb, hv = fbits(values)
    f.write(f"frombits {rb.size}\n")
    for a, b in zip(rb, vb):
        f.write(f"{hr(a)} {hv(b)}\n")


# A pass-through PRNG implementation: the "key" holds the random bits themselves, so that
# jax.random.normal(key, shape, dtype) applies JAX's own uniform->erf_inv transform to chosen bits.
def passthrough_impl(n, bit_width):
    words = n * bit_width // 32

    def random_bits(key, bw, shape):
        assert bw == bit_width and int(np.prod(shape)) == n
        if bw == 32:
            return key.reshape(shape)
        hi = key[0::2].astype(jnp.uint64)
        lo = key[1::2].astype(jnp.uint64)
        return ((hi << jnp.uint64(32)) | lo).reshape(shape)

    def unsupported(*a):
        raise NotImplementedError

    return define_prng_impl(key_shape=(words,), seed=unsupported, split=unsupported,
                            random_bits=random_bits, fold_in=unsupported,
                            name=f"passthrough{bit_width}_{n}")


def normal_from_bits(rbits, dtype):
    rbits = np.asarray(rbits)
    bw = 32 if dtype == jnp.float32 else 64
    words = rbits.astype(np.uint32) if bw == 32 else np.stack(
        [(rbits >> np.uint64(32)).astype(np.uint32), (rbits & np.uint64(0xFFFFFFFF)).astype(np.uint32)],
        axis=1).ravel()
    impl = passthrough_impl(rbits.size, bw)
    key = jax.random.wrap_key_data(jnp.asarray(words, jnp.uint32), impl=impl)
    return np.asarray(jax.random.normal(key, (rbits.size,), dtype))


def check_passthrough(key, n, dtype):
    """The pass-through route must reproduce jax.random.normal exactly for threefry bits."""
    bw = 32 if dtype == jnp.float32 else 64
    rb = np.asarray(jax.random.bits(key, (n,), jnp.uint32 if bw == 32 else jnp.uint64))
    a = normal_from_bits(rb, dtype)
    b = np.asarray(jax.random.normal(key, (n,), dtype))
    assert np.array_equal(a.view(rb.dtype), b.view(rb.dtype)), "pass-through normal differs"


def sparse_indices(values, tail, every):
    v = np.asarray(values).ravel()
    idx = np.nonzero(np.abs(v) > tail)[0]
    return np.union1d(idx, np.arange(0, v.size, every))


def edge_bits32():
    """Bits for float32 normal: extremes and the erf_inv branch switch (w = -log1p(-u*u) = 5)."""
    m = []  # the 23 mantissa bits; u = 2*(m * 2^-23) - (1 - 2^-24)
    m += list(range(0, 64)) + list(range(2**23 - 64, 2**23))
    m += list(range(2**22 - 64, 2**22 + 64))  # u around 0
    for sgn in (-1, 1):
        u = sgn * np.sqrt(-np.expm1(-5.0))  # |u| where w == 5
        mc = int(round((u + 1 - 2.0**-24) / 2 * 2**23))
        m += list(range(mc - 200, mc + 200))
    m = np.unique(np.clip(np.asarray(m, np.int64), 0, 2**23 - 1))
    rng = np.random.default_rng(1234)
    low = rng.integers(0, 2**9, m.size)  # the 9 discarded low bits must not matter
    return ((m.astype(np.uint64) << np.uint64(9)) | low.astype(np.uint64)).astype(np.uint32)


def edge_bits64():
    """Bits for float64 normal: extremes and the erf_inv branch switches (w = 6.25 and w = 16)."""
    m = []  # the 52 mantissa bits; u = 2*(m * 2^-52) - (1 - 2^-53)
    m += list(range(0, 32)) + list(range(2**52 - 32, 2**52))
    m += list(range(2**51 - 32, 2**51 + 32))
    for w in (6.25, 16.0):
        for sgn in (-1, 1):
            u = sgn * np.sqrt(-np.expm1(-w))
            mc = int(round((u + 1 - 2.0**-53) / 2 * 2**52))
            step = 1 if w == 6.25 else 2**8
            m += list(range(mc - 60 * step, mc + 60 * step, step))
    m = np.unique(np.clip(np.asarray(m, np.int64), 0, 2**52 - 1))
    rng = np.random.default_rng(5678)
    low = rng.integers(0, 2**12, m.size)
    return (m.astype(np.uint64) << np.uint64(12)) | low.astype(np.uint64)


def main():
    if jax.default_backend() != "cpu":
        sys.exit("run this with a CPU-only jax: the reference is XLA:CPU")
    assert not jax.config.jax_enable_x64
    assert jax.config.jax_threefry_partitionable

    # ---------------- x64 disabled (JAX's default) ----------------
    with open(os.path.join(OUT, "keys.txt"), "w") as f:
        header(f, "jax.random.PRNGKey(seed) key data, jax_enable_x64=False (JAX's default)")
        for s in KEY_SEEDS:
            k = key_data(s)
            f.write(f"key {s} {h32(k[0])} {h32(k[1])}\n")

    keys = [jax.random.PRNGKey(s) for s in SEEDS]

    with open(os.path.join(OUT, "split.txt"), "w") as f:
        header(f, "jax.random.split(key, n)[i]; n=6 rows come from split(key, (2, 3)) flattened")
        for key in keys:
            k = np.asarray(key)
            for n in (2, 3, 5, 16):
                out = np.asarray(jax.random.split(key, n))
                for i in range(n):
                    f.write(f"split {h32(k[0])} {h32(k[1])} {n} {i} {h32(out[i, 0])} {h32(out[i, 1])}\n")
            out = np.asarray(jax.random.split(key, (2, 3))).reshape(6, 2)
            for i in range(6):
                f.write(f"split {h32(k[0])} {h32(k[1])} 6 {i} {h32(out[i, 0])} {h32(out[i, 1])}\n")
        # a chain: split of a split key
        key = jax.random.split(keys[2], 4)[3]
        k = np.asarray(key)
        out = np.asarray(jax.random.split(key, 3))
        for i in range(3):
            f.write(f"split {h32(k[0])} {h32(k[1])} 3 {i} {h32(out[i, 0])} {h32(out[i, 1])}\n")

    with open(os.path.join(OUT, "fold_in.txt"), "w") as f:
        header(f, "jax.random.fold_in(key, data)")
        for key in keys:
            k = np.asarray(key)
            for d in (0, 1, 2, 7, 42, 1000, 123456, 2**31 - 1, 2**31, 2**32 - 1):
                out = np.asarray(jax.random.fold_in(key, d))
                f.write(f"fold_in {h32(k[0])} {h32(k[1])} {d} {h32(out[0])} {h32(out[1])}\n")

    with open(os.path.join(OUT, "bits32.txt"), "w") as f:
        header(f, "jax.random.bits(key, shape, uint32)")
        for key in keys:
            for shape in ((64,), (3, 5)):
                write_array(f, key, shape, np.asarray(jax.random.bits(key, shape, jnp.uint32)))

    with open(os.path.join(OUT, "uniform_f32.txt"), "w") as f:
        header(f, "jax.random.uniform(key, shape, float32, minval, maxval)")
        for key in keys:
            for shape in ((8,), (3, 5), (128, 4)):
                write_array(f, key, shape, np.asarray(jax.random.uniform(key, shape, jnp.float32)),
                            0.0, 1.0)
        for key in keys[:2]:
            for lo, hi in RANGES:
                lo32, hi32 = np.float32(lo), np.float32(hi)
                v = np.asarray(jax.random.uniform(key, (64, 4), jnp.float32, lo32, hi32))
                write_array(f, key, (64, 4), v, lo32, hi32)

    with open(os.path.join(OUT, "normal_f32.txt"), "w") as f:
        header(f, "jax.random.normal(key, shape, float32)")
        for key in keys:
            for shape in ((7,), (3, 5), (128, 4)):
                write_array(f, key, shape, np.asarray(jax.random.normal(key, shape, jnp.float32)))
        for key, shape in ((keys[0], (1000,)), (keys[1], (1001,))):
            write_array(f, key, shape, np.asarray(jax.random.normal(key, shape, jnp.float32)))
        big = (1 << 18,)  # |z| > 2.9 is erf_inv's tail branch (w >= 5)
        v = np.asarray(jax.random.normal(keys[2], big, jnp.float32))
        write_sparse(f, keys[2], big, v, sparse_indices(v, 2.9, 4096))
        check_passthrough(keys[2], 4096, jnp.float32)
        rb = edge_bits32()
        write_frombits(f, rb, normal_from_bits(rb, jnp.float32))

    # ---------------- x64 enabled ----------------
    jax.config.update("jax_enable_x64", True)
    assert jax.config.jax_enable_x64

    with open(os.path.join(OUT, "keys_x64.txt"), "w") as f:
        header(f, "jax.random.PRNGKey(seed) key data, jax_enable_x64=True")
        for s in KEY_SEEDS:
            k = key_data(s)
            f.write(f"key {s} {h32(k[0])} {h32(k[1])}\n")

    keys = [jax.random.PRNGKey(s) for s in SEEDS]

    with open(os.path.join(OUT, "bits64.txt"), "w") as f:
        header(f, "jax.random.bits(key, shape, uint64)")
        for key in keys:
            for shape in ((64,), (3, 5)):
                write_array(f, key, shape, np.asarray(jax.random.bits(key, shape, jnp.uint64)))

    with open(os.path.join(OUT, "uniform_f64.txt"), "w") as f:
        header(f, "jax.random.uniform(key, shape, float64, minval, maxval)")
        for key in keys:
            for shape in ((8,), (3, 5), (32, 4)):
                write_array(f, key, shape, np.asarray(jax.random.uniform(key, shape, jnp.float64)),
                            0.0, 1.0)
        for key in keys[:2]:
            for lo, hi in RANGES:
                v = np.asarray(jax.random.uniform(key, (32, 4), jnp.float64, lo, hi))
                write_array(f, key, (32, 4), v, np.float64(lo), np.float64(hi))

    with open(os.path.join(OUT, "normal_f64.txt"), "w") as f:
        header(f, "jax.random.normal(key, shape, float64)")
        for key in keys:
            for shape in ((7,), (3, 5), (64, 4)):
                write_array(f, key, shape, np.asarray(jax.random.normal(key, shape, jnp.float64)))
        big = (1 << 17,)
        v = np.asarray(jax.random.normal(keys[0], big, jnp.float64))
        write_sparse(f, keys[0], big, v, sparse_indices(v, 3.0, 4096))
        check_passthrough(keys[2], 4096, jnp.float64)
        rb = edge_bits64()
        write_frombits(f, rb, normal_from_bits(rb, jnp.float64))


if __name__ == "__main__":
    main()
