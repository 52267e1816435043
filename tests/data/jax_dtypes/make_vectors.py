#!/usr/bin/env python3
"""Generates the JAX reference vectors for the int8 / uint8 / int64 / bool tensor dtypes that the
C++ tests read from tests/data/jax_dtypes.

Run with a CPU jax (no GPU plugin), from the repository root:

    /tmp/jaxenv/bin/python tests/data/jax_dtypes/make_vectors.py

It writes the files below next to itself; every file starts with '#' header lines (versions,
backend, format).  Deterministic: fixed numpy seeds.  jax_enable_x64 is ON (needed for int64 and
float64), but every input's dtype is explicit and the computed functions contain no Python
scalars, so x64 does not change any result dtype.  Every result that involves no 64-bit dtype is
recomputed with x64 off and asserted bit-identical.  Sums/products of bool/int8/uint8 are taken
with dtype=jnp.int32 (JAX with x64 off gives int32 for bool/int8 but uint32 for uint8).

Elementwise ops run under jax.jit on 1-D arrays padded with ones to a multiple of 1024 elements
(so XLA:CPU's vector loops run); reductions run under jax.jit on the unpadded 1-D array.

Token encodings: float32 8 hex digits of the bits, float64 16, bfloat16/float16 4 (lower case);
int8/uint8/int32/int64 decimal; bool 0/1.  dtype names are jnp.dtype(...).name.

casts.txt   cast <from> <to> <n>                then n rows  <x> <y>       y = x.astype(to)
binary.txt  binary <dtype> <op> <res_dtype> <n> then n rows  <a> <b> <result>
unary.txt   unary <dtype> <op> <res_dtype> <n>  then n rows  <x> <result>
reduce.txt  reduce <dtype> <op> <res_dtype> <n> then 1 row   <x_0> ... <x_{n-1}> <result>
where.txt   where <dtype> <n>                   then n rows  <cond> <a> <b> <result>
"""

import os
import sys

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)

OUT = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "tests/data/jax_dtypes/make_vectors.py"
X64_CHECKS = [0]  # how many results were re-checked with x64 off


def dt(name):
    return jnp.dtype(name)  # a numpy dtype (ml_dtypes for the half types)


def arr(values, name):
    """A numpy array of exactly dtype `name` (integers wrap modulo 2^bits, as C++ casts do)."""
    d = dt(name)
    if d.kind in "iu":
        bits = 8 * d.itemsize
        v = [int(x) % (1 << bits) for x in values]
        return np.asarray(v, dtype=f"uint{bits}").view(d)
    return np.asarray(values, dtype=d)


def from_bits(bits, name):
    d = dt(name)
    return np.asarray(bits, dtype=f"uint{8 * d.itemsize}").view(d)


def toks(x):
    """The token encoding of every element of x (see the docstring)."""
    x = np.asarray(x)
    if x.dtype.kind == "f" or x.dtype.name in ("bfloat16", "float16"):
        w = x.dtype.itemsize
        return [f"{int(v):0{2 * w}x}" for v in x.view(f"uint{8 * w}")]
    return [str(int(v)) for v in x]


def jit_eval(f, *args):
    """jax.jit(f)(*args) on the CPU; args are numpy arrays whose dtype is kept exactly.  When no
    64-bit dtype is involved, also evaluate with x64 off and assert the same dtype and bits."""
    def once():
        xs = [jnp.asarray(a, dtype=a.dtype) for a in args]
        assert all(x.dtype == a.dtype for x, a in zip(xs, args))
        return np.asarray(jax.jit(f)(*xs))
    r = once()
    if all(np.dtype(d).itemsize < 8 for d in [a.dtype for a in args] + [r.dtype]):
        with jax.enable_x64(False):
            r0 = once()
        assert r0.dtype == r.dtype and r0.tobytes() == r.tobytes(), (f, r0, r)
        X64_CHECKS[0] += 1
    return r


def elementwise(f, *cols):
    """f over 1-D columns padded with ones to a multiple of 1024 elements."""
    n = len(cols[0])
    pad = max(1024, n + (-n) % 1024) - n
    padded = [np.concatenate([c, np.ones(pad, c.dtype)]) for c in cols]
    return jit_eval(f, *padded)[:n]


def write_file(name, what, fmt, blocks):
    """blocks: iterable of (block header, list of row strings)."""
    path = os.path.join(OUT, name)
    nblocks = 0
    with open(path, "w") as fh:
        vector_header.header(fh, what, SCRIPT,
                             " (on for int64/float64; input dtypes explicit, so it changes no"
                             " result dtype)")
        for line in fmt:
            fh.write(f"# {line}\n")
        for head, rows in blocks:
            fh.write(head + "\n")
            fh.writelines(r + "\n" for r in rows)
            nblocks += 1
    print(f"{path}: {nblocks} blocks, {os.path.getsize(path)} bytes")


def wide_ints(rng, name, n):
    """n random values of int dtype `name`: half uniform over the range, half log-uniform."""
    info = np.iinfo(name)
    full = [int(v) for v in rng.integers(info.min, info.max, n // 2, endpoint=True)]
    k = rng.integers(1, 8 * dt(name).itemsize - (info.min < 0), n - n // 2)
    mag = [int(rng.integers(0, 1 << int(b))) for b in k]
    sgn = rng.choice([-1, 1] if info.min < 0 else [1], n - n // 2)
    return full + [int(s) * m for s, m in zip(sgn, mag)]


# ----------------------------------------------------------------------------------------- casts

CAST_TYPES = ["bool", "int8", "uint8", "int32", "int64", "float32", "float64"]
# int64 -> float32 double-rounding probes: 2^60+2^36+1 is just above a float32 tie; rounding it
# through float64 first (to 2^60+2^36, a tie) would give 2^60 instead of 2^60+2^37.
INT64_EXTRA = [2**31, 2**53 + 1, 2**63 - 1, -2**63, 2**40 + 12345, 2**60 + 2**36 + 1,
               -(2**60 + 2**36 + 1), 2**53 + 3, 2**24 + 3, 2**32 - 1, 2**32 + 255]


def cast_inputs(name, rng):
    if name == "bool":
        return arr([0, 1], "bool")
    if name in ("int8", "uint8"):
        info = np.iinfo(name)
        return arr(range(info.min, info.max + 1), name)
    if name in ("int32", "int64"):
        info = np.iinfo(name)
        v = [info.min, info.min + 1, -1, 0, 1, 127, 128, 255, 256, -129, -128, 2**24 + 1,
             2**31 - 1]
        v += INT64_EXTRA if name == "int64" else []
        return arr(v + wide_ints(rng, name, 40), name)
    d = dt(name)
    fi = np.finfo(d)
    ulp_below = lambda x: np.nextafter(d.type(x), d.type(0))  # noqa: E731
    v = [0.0, -0.0, np.inf, -np.inf, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.9, -0.9, 1.0, -1.0,
         127.9, -127.9, 128.0, -128.0, 128.5, -128.5, 255.5, 256.0, -1e-30, 2.0**31, -2.0**31,
         ulp_below(2**31), ulp_below(-2**31), 2.0**32, 2.0**63, -2.0**63, ulp_below(2**63),
         ulp_below(-2**63), 2.0**64, 1e30, fi.max, -fi.max]
    if name == "float64":  # float64 -> float32 overflow / underflow / tie probes
        v += [1e300, -1e300, 1e-300, 1e-40, 3.4028235677973366e38, 3.4028235677973362e38,
              1.0 + 2.0**-24, 1.0 + 2.0**-24 + 2.0**-52]
    x = np.asarray(v, d)
    w = 8 * d.itemsize
    mant = 23 if w == 32 else 52
    nan = [0x7FC00000, 0xFFC00000] if w == 32 else [0x7FF8000000000000, 0xFFF8000000000000]
    sub = [1, 1 << (w - 1) | 1, (1 << mant) - 1]           # subnormals: min, -min, max
    # random: uniform mantissa in [1, 2), exponent -30..70, random sign
    m = rng.random(40) + 1.0
    e = rng.integers(-30, 71, 40)
    s = rng.choice([-1.0, 1.0], 40)
    rnd = (s * np.ldexp(m, e)).astype(d)
    return np.concatenate([from_bits(nan + sub, name), x, rnd])


def cast_blocks():
    rng = np.random.default_rng(20250601)
    inputs = {name: cast_inputs(name, rng) for name in CAST_TYPES}
    for src in CAST_TYPES:
        for to in CAST_TYPES:
            if src == to:
                continue
            x = inputs[src]
            y = elementwise(lambda a, to=to: a.astype(to), x)
            assert y.dtype == dt(to), (src, to, y.dtype)
            yield f"cast {src} {to} {len(x)}", [f"{a} {b}" for a, b in zip(toks(x), toks(y))]


# ------------------------------------------------------------------------------ binary and unary

BINARY_OPS = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
              "less", "less_equal", "equal", "not_equal", "greater", "greater_equal",
              "true_divide"]
EDGES = {
    "int8": [0, 1, -1, 2, -3, 7, 127, -128, 126, -127, 64, -100],
    "uint8": [0, 1, 2, 3, 7, 15, 16, 127, 128, 200, 254, 255],
    "int64": [0, 1, -1, 2, -3, 7, 2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1, 2**32,
              -3037000500],
}


def binary_pairs(name, rng):
    """12x12 edge pairs + 28 random pairs + 28 (random, small b) pairs = 200."""
    e = EDGES[name]
    a = [x for x in e for _ in e]
    b = [y for _ in e for y in e]
    a += wide_ints(rng, name, 56)
    b += wide_ints(rng, name, 28)
    lo = -5 if np.iinfo(name).min < 0 else 0
    b += [int(v) for v in rng.integers(lo, 6, 28)]
    return arr(a, name), arr(b, name)


def binary_blocks():
    rng = np.random.default_rng(20250602)
    for name in ("int8", "uint8", "int64"):
        a, b = binary_pairs(name, rng)
        for op in BINARY_OPS:
            r = elementwise(getattr(jnp, op), a, b)
            rows = [" ".join(t) for t in zip(toks(a), toks(b), toks(r))]
            yield f"binary {name} {op} {r.dtype.name} {len(a)}", rows
    a, b = arr([0, 0, 1, 1], "bool"), arr([0, 1, 0, 1], "bool")
    for op in ("equal", "not_equal", "less", "greater", "maximum", "minimum"):
        r = elementwise(getattr(jnp, op), a, b)
        assert r.dtype == dt("bool")
        yield f"binary bool {op} bool 4", [" ".join(t) for t in zip(toks(a), toks(b), toks(r))]


def unary_blocks():
    rng = np.random.default_rng(20250603)
    xs = {n: arr(range(np.iinfo(n).min, np.iinfo(n).max + 1), n) for n in ("int8", "uint8")}
    e64 = EDGES["int64"] + [-2, 3, 3037000499, 3037000500, -2**32, 2**31, -2**31, 2**31 - 1,
                            2**32 + 1, 2**62, -2**62, 2**62 + 1, 4294967295, 65536]
    xs["int64"] = arr(e64 + wide_ints(rng, "int64", 50 - len(e64)), "int64")
    for name, x in xs.items():
        for op in ("negative", "abs", "sign", "square"):
            r = elementwise(getattr(jnp, op), x)
            assert r.dtype == x.dtype, (name, op, r.dtype)
            yield f"unary {name} {op} {r.dtype.name} {len(x)}", [
                f"{p} {q}" for p, q in zip(toks(x), toks(r))]


# ------------------------------------------------------------------------------------ reductions

def reduce_arrays(name, op, rng):
    """Three 1-D arrays (lengths 7, 64, 1000) for reduction `op` over dtype `name`."""
    out = []
    for n in (7, 64, 1000):
        if name == "bool":
            if op in ("prod", "min"):      # all(): one all-True array so the result is not 0
                v = np.ones(n, bool) if n != 64 else rng.random(n) < 0.97
            elif op == "max":              # any(): all False, a single True, random
                v = np.zeros(n, bool)
                if n == 64:
                    v[rng.integers(n)] = True
                elif n == 1000:
                    v = rng.random(n) < 0.5
            else:
                v = rng.random(n) < 0.4
            out.append(arr(v, "bool"))
            continue
        info = np.iinfo(name)
        signed = info.min < 0
        if op == "prod":                   # small odd factors and few 2s: wraps, but is not 0
            if n == 7:
                v = rng.integers(1, 13 if name != "int64" else 500, n)
            else:
                v = rng.choice([1, 1, 1, 3, 5, 7] if n == 64 else [1] * 40 + [3, 5], n)
                v[rng.choice(n, 6, replace=False)] = 2
            if signed:
                v = v * rng.choice([-1, 1], n)
            v = v.tolist()
        elif op == "mean" and name == "int64":  # |sum| < 2^53, so the float64 sum is exact
            v = [int(x) for x in rng.integers(-2**(50 if n == 7 else 40), 2**40, n)]
        elif op == "sum" and n == 7:       # certainly overflows the narrow type
            v = rng.integers(info.max // 2, info.max, n, endpoint=True).tolist()
        elif op == "sum" and name == "int64" and n == 1000:  # wraps int64
            v = [int(x) for x in rng.integers(2**59, 2**62, n)]
        else:
            v = [int(x) for x in rng.integers(info.min, info.max, n, endpoint=True)]
        out.append(arr(v, name))
    return out


def reduce_fn(name, op):
    small = name != "int64"
    if op in ("sum", "prod"):
        acc = jnp.int32 if small else jnp.int64
        return lambda x: getattr(jnp, op)(x, dtype=acc)
    if op == "mean":
        return lambda x: jnp.mean(x, dtype=jnp.float32 if small else jnp.float64)
    return getattr(jnp, op)


def reduce_blocks():
    rng = np.random.default_rng(20250604)
    for name in ("bool", "int8", "uint8", "int64"):
        for op in ("sum", "prod", "max", "min", "mean"):
            f = reduce_fn(name, op)
            for x in reduce_arrays(name, op, rng):
                r = jit_eval(f, x)
                assert r.shape == ()
                yield (f"reduce {name} {op} {r.dtype.name} {len(x)}",
                       [" ".join(toks(x) + toks(r.reshape(1)))])


def where_blocks():
    rng = np.random.default_rng(20250605)
    for name in ("int8", "uint8", "int64", "bool"):
        if name == "bool":
            c = [i >> 2 & 1 for i in range(8)] + rng.integers(0, 2, 42).tolist()
            a = [i >> 1 & 1 for i in range(8)] + rng.integers(0, 2, 42).tolist()
            b = [i & 1 for i in range(8)] + rng.integers(0, 2, 42).tolist()
        else:
            e = EDGES[name]
            c = [0] * len(e) + [1] * len(e) + rng.integers(0, 2, 50 - 2 * len(e)).tolist()
            a = e + e[::-1] + wide_ints(rng, name, 50 - 2 * len(e))
            b = e[::-1] + e + wide_ints(rng, name, 50 - 2 * len(e))
        c, a, b = arr(c, "bool"), arr(a, name), arr(b, name)
        r = elementwise(jnp.where, c, a, b)
        assert r.dtype == dt(name)
        yield f"where {name} {len(c)}", [" ".join(t) for t in zip(toks(c), toks(a), toks(b),
                                                                   toks(r))]


def main():
    enc = ("encodings: float32/float64 = 8/16 hex digits of the bits, int8/uint8/int32/int64"
           " decimal, bool 0/1")
    write_file("casts.txt", "dtype casts among bool int8 uint8 int32 int64 float32 float64",
               [enc, "cast <from> <to> <n>, then n rows: <x> <x.astype(to)>"], cast_blocks())
    write_file("binary.txt", "binary ops on int8 / uint8 / int64 (and bool compare/min/max)",
               [enc, "binary <dtype> <op> <result_dtype> <n>, then n rows: <a> <b> "
                     "<jnp.op(a, b)>"], binary_blocks())
    write_file("unary.txt", "unary ops on int8 / uint8 / int64",
               [enc, "unary <dtype> <op> <result_dtype> <n>, then n rows: <x> <jnp.op(x)>"],
               unary_blocks())
    write_file("reduce.txt", "full reductions of 1-D bool / int8 / uint8 / int64 arrays",
               [enc, "reduce <dtype> <op> <result_dtype> <n>, then one row: <x_0> ... <x_n-1>"
                     " <result>",
                "sum/prod: dtype=int32 for bool/int8/uint8 (JAX x64-off default: int32 for "
                "bool/int8, uint32 for uint8), int64 for int64",
                "max/min keep the dtype (any/all on bool); mean: dtype=float32 "
                "(bool/int8/uint8), float64 (int64)"], reduce_blocks())
    write_file("where.txt", "jnp.where(cond, a, b) on int8 / uint8 / int64 / bool",
               [enc, "where <dtype> <n>, then n rows: <cond 0/1> <a> <b> <result>"],
               where_blocks())
    print(f"{X64_CHECKS[0]} results re-checked bit-identical with jax_enable_x64 off")


if __name__ == "__main__":
    main()
