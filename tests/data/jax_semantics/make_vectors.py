#!/usr/bin/env python3
"""Generates the JAX semantics reference vectors (integer arithmetic, NaN/Inf, reductions, casts,
matmul / dot_general shape rules) that the C++ tests read from tests/data/jax_semantics.

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
    /tmp/jaxenv/bin/python tests/data/jax_semantics/make_vectors.py

It writes the files below next to itself; every file starts with '#' header lines naming the jax,
jaxlib, numpy and python versions and the backend.  The script is deterministic (fixed seeds).
JAX runs with its defaults (jax_enable_x64 off); float64 is only used inside explicit
`with jax.enable_x64(True):` blocks (jax 0.10 no longer has jax.experimental.enable_x64).

Every elementwise op is evaluated on device arrays padded to a multiple of 1024 elements (padding
value 1), under jax.jit, so XLA:CPU's vector code runs.  Reductions are evaluated as
jnp.<op>(x, axis=1) over an (R, n) array whose row count is padded so that R*n >= 1024.

Notes for the readers of these files:
  * XLA:CPU runs with flush-to-zero and denormals-are-zero: subnormal inputs act as (signed) zero
    and subnormal results come out as zero, also in the casts.
  * NaN bit patterns are recorded as JAX produced them.  They are not stable across ops or even
    element positions (e.g. the NaN from a max/min reduction depends on where the NaN was, log
    returns ffffffff for any NaN/negative input, fresh NaNs from inf-inf, 0/0, sqrt(-1) are
    ffc00000); tests will usually want to check "is NaN" rather than the exact bits.
  * The random-normal reduction rows are rounded in XLA's (unspecified) summation order.

Tokens are whitespace separated; lines starting with '#' are comments.  "bits" are float32 bit
patterns as 8 lower-case hex digits (float64: 16 hex digits); integers are decimal.

int32_binary.txt  (int32 x int32; pairs = E x E, then 150 random pairs from the whole int32 range,
                   then 50 pairs of a random int32 and a random b in [-20, 20];
                   E = 0 1 -1 2 -2 3 -3 7 -7 100 -100 2147483647 -2147483648 2147483646
                       -2147483647 65536 -65536 46341 -46341)
  op <name> <count>            followed by <count> lines  <a> <b> <result>
      name: add sub mul (a+b, a-b, a*b)  floor_divide (jnp.floor_divide, //)
            remainder (jnp.remainder, %)  lax_div (jax.lax.div)  lax_rem (jax.lax.rem)
            minimum maximum (jnp.minimum / jnp.maximum)
            true_divide (jnp.true_divide, int32 / int32 -> float32): <result> is float32 bits
            pow (jnp.power): pairs E x {0..40}, then 200 random (a, b) with 0 <= b <= 40

int32_unary.txt   (int32, over E then 200 random int32)
  op <name> <count>            followed by <count> lines  <a> <result>
      name: neg abs sign (jnp.negative / jnp.abs / jnp.sign)

float32_special.txt
  S = nan(7fc00000) -nan(ffc00000) inf -inf 0.0 -0.0 1.0 -1.0 0.5 -2.5 3.0 1e30 -1e30 88.0 -104.0
      3.4028235e38(7f7fffff, largest finite) 1.1754944e-38(00800000, smallest normal)
  unary <name> <count>         followed by <count> lines  <x bits> <result bits>
      inputs: S, then 1.5 2.5 -0.5 -1.5 0.49999997 1e-45(00000001, subnormal) 80000001
              sNaN 7fa00000, NaN with payload 7fc12345, 89.0 -89.0 10.0 -10.0
      name: neg abs relu (jax.nn.relu) exp log tanh sqrt rsqrt (jax.lax.rsqrt) sin cos
            erf (jax.scipy.special.erf) sigmoid (jax.nn.sigmoid)
            gelu (jax.nn.gelu, approximate=True) sign floor ceil round (jnp.round) square
  binary <name> <count>        followed by <count> lines  <a bits> <b bits> <result>
      pairs S x S (a outer, b inner); name: add sub mul div (jnp.true_divide) pow (jnp.power)
      minimum maximum floor_divide remainder: <result> is bits;
      lt le gt ge eq ne: <result> is 0 or 1
  select <count>               followed by <count> lines  <c> <a bits> <b bits> <result bits>
      jnp.where(c, a, b) with c in {0, 1}
  reduce <name> <n> <count>    followed by <count> lines  <x_0 bits> ... <x_{n-1} bits> <result bits>
      name: sum max min prod mean (jnp.<name>(x, axis=1)), n in 1 7 8 16 33.
      Rows (n > 1): NaN first / middle / last, -NaN in the middle, NaN together with +-inf,
      +inf and -inf mixed, +inf only, -inf only, all -inf, all +inf, all 0.0, all -0.0,
      0.0 and -0.0 mixed (both orders), overflow (all largest finite), 1e30 (prod overflow),
      ties, "exact" rows (values in +-{0.5,1,2,4}: sum and prod are exact in any order), and
      random normal rows (their sum/mean/prod depend on the summation order; compare those
      with a tolerance).  For n = 1 the rows are the elements of S and a few randoms.
  reduce_index <name> <n> <count>   same rows, <result> is the decimal index
      name: argmax argmin (jnp.argmax / jnp.argmin along axis 1)

casts.txt
  cast <from> <to> <count>     followed by <count> lines  <x> <result>
      float32 int32     x float32 bits, result decimal   (x.astype(jnp.int32))
      float64 int32     x float64 bits (16 hex), result decimal  (x64 enabled)
      int32   float32   x decimal, result float32 bits
      float32 float64   x float32 bits, result float64 bits      (x64 enabled)
      float64 float32   x float64 bits, result float32 bits      (x64 enabled)

shapes.txt       (float32 operands; shapes written like () (5,) (8,2) with no spaces)
  matmul <shape a> <shape b> <result>         jnp.matmul under jax.eval_shape
  dot_general <shape a> <shape b> <lhs_contract> <rhs_contract> <lhs_batch> <rhs_batch> <result>
      jax.lax.dot_general(a, b, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))
      under jax.eval_shape; dimension lists written like [] [1] [0,2]
  <result> is a shape or the word `error`; after an error case a comment line
  "# <ExceptionType>: <first line of JAX's message>" follows (for humans; the reader skips it).
"""

import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)

OUT = os.path.dirname(os.path.abspath(__file__))

I32_MIN, I32_MAX = -(2**31), 2**31 - 1

E = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 2147483647, -2147483648, 2147483646,
     -2147483647, 65536, -65536, 46341, -46341]

S_BITS = [0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x3F800000,
          0xBF800000, 0x3F000000, 0xC0200000, 0x40400000]
S_BITS += [int(np.float32(v).view(np.uint32)) for v in (1e30, -1e30, 88.0, -104.0)]
S_BITS += [0x7F7FFFFF, 0x00800000]

UNARY_EXTRA_BITS = [int(np.float32(v).view(np.uint32))
                    for v in (1.5, 2.5, -0.5, -1.5, 0.49999997)]
UNARY_EXTRA_BITS += [0x00000001, 0x80000001, 0x7FA00000, 0x7FC12345]
UNARY_EXTRA_BITS += [int(np.float32(v).view(np.uint32)) for v in (89.0, -89.0, 10.0, -10.0)]


def f32(b):
    return np.asarray(np.asarray(b, dtype=np.uint64).astype(np.uint32)).view(np.float32)


def b32(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def h32(b):
    return f"{int(b) & 0xFFFFFFFF:08x}"


def h64(b):
    return f"{int(b) & 0xFFFFFFFFFFFFFFFF:016x}"


def header(fh, what):
    vector_header.header(fh, what, "tests/data/jax_semantics/make_vectors.py",
                         " (float64 only inside enable_x64 blocks)")


def evaluate(f, *cols, dtypes=None):
    """f elementwise over 1-D columns, each padded with 1 to a multiple of 1024 elements."""
    n = len(cols[0])
    pad = max(1024, n + (-n) % 1024) - n
    args = []
    for i, c in enumerate(cols):
        dt = dtypes[i] if dtypes else np.asarray(c).dtype
        c = np.asarray(c, dtype=dt)
        args.append(jnp.asarray(np.concatenate([c, np.ones(pad, dt)])))
        assert args[-1].dtype == c.dtype, (args[-1].dtype, c.dtype)  # float64 needs enable_x64
    r = np.asarray(jax.jit(f)(*args))
    return r[:n]


def write_file(name, what, body):
    path = os.path.join(OUT, name)
    with open(path, "w") as fh:
        header(fh, what)
        body(fh)
    print(path, os.path.getsize(path), "bytes")


# ----------------------------------------------------------------------------------------- int32

def int32_pairs(rng):
    a = [x for x in E for _ in E]
    b = [y for _ in E for y in E]
    ra = rng.integers(I32_MIN, I32_MAX + 1, size=150, dtype=np.int64)
    rb = rng.integers(I32_MIN, I32_MAX + 1, size=150, dtype=np.int64)
    sa = rng.integers(I32_MIN, I32_MAX + 1, size=50, dtype=np.int64)
    sb = rng.integers(-20, 21, size=50, dtype=np.int64)
    a += ra.tolist() + sa.tolist()
    b += rb.tolist() + sb.tolist()
    return np.asarray(a, np.int32), np.asarray(b, np.int32)


INT_BINARY = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("floor_divide", jnp.floor_divide),
    ("remainder", jnp.remainder),
    ("lax_div", jax.lax.div),
    ("lax_rem", jax.lax.rem),
    ("true_divide", jnp.true_divide),
    ("minimum", jnp.minimum),
    ("maximum", jnp.maximum),
]


def write_int32_binary():
    rng = np.random.default_rng(20250101)
    a, b = int32_pairs(rng)
    pa = [x for x in E for _ in range(41)]
    pb = [y for _ in E for y in range(41)]
    pa += rng.integers(I32_MIN, I32_MAX + 1, size=200, dtype=np.int64).tolist()
    pb += rng.integers(0, 41, size=200, dtype=np.int64).tolist()
    pa, pb = np.asarray(pa, np.int32), np.asarray(pb, np.int32)

    def body(fh):
        for name, f in INT_BINARY:
            r = evaluate(f, a, b)
            if name == "true_divide":
                assert r.dtype == np.float32, r.dtype
                toks = [h32(v) for v in b32(r)]
            else:
                assert r.dtype == np.int32, (name, r.dtype)
                toks = [str(int(v)) for v in r]
            fh.write(f"op {name} {len(a)}\n")
            for x, y, t in zip(a, b, toks):
                fh.write(f"{int(x)} {int(y)} {t}\n")
        r = evaluate(jnp.power, pa, pb)
        assert r.dtype == np.int32, r.dtype
        fh.write(f"op pow {len(pa)}\n")
        for x, y, v in zip(pa, pb, r):
            fh.write(f"{int(x)} {int(y)} {int(v)}\n")

    write_file("int32_binary.txt", "int32 binary ops: a b result (true_divide: float32 bits)", body)


def write_int32_unary():
    rng = np.random.default_rng(20250102)
    xs = np.asarray(E + rng.integers(I32_MIN, I32_MAX + 1, size=200, dtype=np.int64).tolist(),
                    np.int32)

    def body(fh):
        for name, f in (("neg", jnp.negative), ("abs", jnp.abs), ("sign", jnp.sign)):
            r = evaluate(f, xs)
            assert r.dtype == np.int32
            fh.write(f"op {name} {len(xs)}\n")
            for x, v in zip(xs, r):
                fh.write(f"{int(x)} {int(v)}\n")

    write_file("int32_unary.txt", "int32 unary ops: a result", body)


# ------------------------------------------------------------------------------- float32 special

FLOAT_UNARY = [
    ("neg", jnp.negative), ("abs", jnp.abs), ("relu", jax.nn.relu), ("exp", jnp.exp),
    ("log", jnp.log), ("tanh", jnp.tanh), ("sqrt", jnp.sqrt), ("rsqrt", jax.lax.rsqrt),
    ("sin", jnp.sin), ("cos", jnp.cos), ("erf", jax.scipy.special.erf),
    ("sigmoid", jax.nn.sigmoid), ("gelu", lambda x: jax.nn.gelu(x, approximate=True)),
    ("sign", jnp.sign), ("floor", jnp.floor), ("ceil", jnp.ceil), ("round", jnp.round),
    ("square", jnp.square),
]

FLOAT_BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", jnp.true_divide), ("pow", jnp.power), ("minimum", jnp.minimum),
    ("maximum", jnp.maximum), ("floor_divide", jnp.floor_divide), ("remainder", jnp.remainder),
]

FLOAT_COMPARE = [
    ("lt", jnp.less), ("le", jnp.less_equal), ("gt", jnp.greater), ("ge", jnp.greater_equal),
    ("eq", jnp.equal), ("ne", jnp.not_equal),
]

NAN, MNAN, INF, MINF = 0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000
PZ, MZ, BIG = 0x00000000, 0x80000000, 0x7F7FFFFF


def reduce_rows(n, rng):
    """Rows of n float32 bit patterns (see the module docstring)."""
    if n == 1:
        rows = [[b] for b in S_BITS]
        rows += [[int(v)] for v in b32(rng.standard_normal(3).astype(np.float32))]
        return rows

    def rnd():
        return [int(v) for v in b32(rng.standard_normal(n).astype(np.float32))]

    mid = n // 2
    rows = []

    def put(row, pos, val):
        row = list(row)
        row[pos] = val
        return row

    rows.append(put(rnd(), 0, NAN))
    rows.append(put(rnd(), mid, NAN))
    rows.append(put(rnd(), n - 1, NAN))
    rows.append(put(rnd(), mid, MNAN))
    rows.append(put(put(put(rnd(), 0, INF), mid, NAN), n - 1, MINF))
    rows.append(put(put(rnd(), 1, INF), n - 1, MINF))
    rows.append(put(put(rnd(), 0, MINF), mid, INF))
    rows.append(put(put(rnd(), 0, INF), n - 1, INF))
    rows.append(put(rnd(), mid, MINF))
    rows.append([MINF] * n)
    rows.append([INF] * n)
    rows.append([PZ] * n)
    rows.append([MZ] * n)
    rows.append([MZ if i % 2 == 0 else PZ for i in range(n)])
    rows.append([PZ if i % 2 == 0 else MZ for i in range(n)])
    rows.append([BIG] * n)
    rows.append([int(b32(np.float32(1e30)))] * n)
    # ties: maximum value 3.0 at two positions, minimum -3.0 at two positions
    tie = [int(b32(np.float32(v))) for v in rng.uniform(-2.0, 2.0, n).astype(np.float32)]
    tie = put(put(tie, 1, 0x40400000), n - 1, 0x40400000)
    tie = put(put(tie, 2, 0xC0400000), n - 2, 0xC0400000)
    rows.append(tie)
    exact = np.asarray([0.5, 1.0, 2.0, 4.0, -0.5, -1.0, -2.0, -4.0], np.float32)
    for _ in range(2):
        rows.append([int(v) for v in b32(rng.choice(exact, n))])
    for _ in range(4):
        rows.append(rnd())
    return rows


def evaluate_rows(f, rows):
    n = len(rows[0])
    x = np.asarray(rows, np.uint32).view(np.float32)
    r_count = len(rows)
    want = max(r_count, -(-1024 // n))
    pad = np.ones((want - r_count, n), np.float32)
    xp = jnp.asarray(np.concatenate([x, pad], axis=0))
    r = np.asarray(jax.jit(lambda v: f(v, axis=1))(xp))
    return r[:r_count]


def write_float32_special():
    s = f32(S_BITS)
    ux = f32(S_BITS + UNARY_EXTRA_BITS)
    a = np.repeat(s, len(s))
    b = np.tile(s, len(s))
    rng = np.random.default_rng(20250103)

    def body(fh):
        fh.write("# S = " + " ".join(h32(v) for v in S_BITS) + "\n")
        for name, f in FLOAT_UNARY:
            r = evaluate(f, ux)
            assert r.dtype == np.float32, (name, r.dtype)
            fh.write(f"unary {name} {len(ux)}\n")
            for x, v in zip(b32(ux), b32(r)):
                fh.write(f"{h32(x)} {h32(v)}\n")
        for name, f in FLOAT_BINARY:
            r = evaluate(f, a, b)
            assert r.dtype == np.float32, (name, r.dtype)
            fh.write(f"binary {name} {len(a)}\n")
            for x, y, v in zip(b32(a), b32(b), b32(r)):
                fh.write(f"{h32(x)} {h32(y)} {h32(v)}\n")
        for name, f in FLOAT_COMPARE:
            r = evaluate(f, a, b)
            assert r.dtype == np.bool_, (name, r.dtype)
            fh.write(f"binary {name} {len(a)}\n")
            for x, y, v in zip(b32(a), b32(b), r):
                fh.write(f"{h32(x)} {h32(y)} {int(v)}\n")
        sel_pairs = [(NAN, 0x3F800000), (0x3F800000, NAN), (MNAN, INF), (INF, MNAN),
                     (0x7FC12345, MZ), (MZ, PZ), (PZ, MZ), (INF, MINF), (0x7FA00000, 0x40400000),
                     (0x00000001, 0x80000001)]
        c = np.asarray([cc for cc in (0, 1) for _ in sel_pairs], np.bool_)
        sa = f32([p[0] for _ in (0, 1) for p in sel_pairs])
        sb = f32([p[1] for _ in (0, 1) for p in sel_pairs])
        r = evaluate(jnp.where, c, sa, sb)
        fh.write(f"select {len(c)}\n")
        for cc, x, y, v in zip(c, b32(sa), b32(sb), b32(r)):
            fh.write(f"{int(cc)} {h32(x)} {h32(y)} {h32(v)}\n")
        for n in (1, 7, 8, 16, 33):
            rows = reduce_rows(n, rng)
            for name in ("sum", "max", "min", "prod", "mean"):
                r = evaluate_rows(getattr(jnp, name), rows)
                assert r.dtype == np.float32, (name, r.dtype)
                fh.write(f"reduce {name} {n} {len(rows)}\n")
                for row, v in zip(rows, b32(r)):
                    fh.write(" ".join(h32(t) for t in row) + f" {h32(v)}\n")
            for name in ("argmax", "argmin"):
                r = evaluate_rows(getattr(jnp, name), rows)
                fh.write(f"reduce_index {name} {n} {len(rows)}\n")
                for row, v in zip(rows, r):
                    fh.write(" ".join(h32(t) for t in row) + f" {int(v)}\n")

    write_file("float32_special.txt", "float32 NaN/Inf semantics: elementwise, select, reductions",
               body)


# ----------------------------------------------------------------------------------------- casts

def write_casts():
    rng = np.random.default_rng(20250104)
    limits = [2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 1e10, -1e10, 2.5, -2.5,
              3.7, -3.7, 0.49999997, -0.49999997, 0.5, -0.5, 1.5, -1.5, 0.99999994, -0.99999994,
              16777216.0, 16777218.0, -16777218.0, 8388607.5, -8388607.5, 4294967296.0,
              -4294967296.0, 1e20, -1e20, 1e-45, -1e-45, 65536.5, -65536.5]
    f32_inputs = np.concatenate([
        f32(S_BITS), np.asarray(limits, np.float32),
        rng.standard_normal(40).astype(np.float32) * np.float32(1000.0),
        rng.uniform(-3e9, 3e9, 40).astype(np.float32),
        f32([0x7FA00000, 0x7FC12345, 0xFFFFFFFF]),
    ])
    f64_extra = [2147483647.5, -2147483648.5, 2147483647.0, 2147483647.9999998,
                 -2147483648.99999, 2147483648.0, -2147483649.0, 1e300, -1e300]
    finite32 = f32_inputs[~np.isnan(f32_inputs)]
    f64_inputs = np.concatenate([
        np.asarray([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF4000000000000,
                    0x7FF82468A0000000, 0xFFFFFFFFFFFFFFFF], np.uint64).view(np.float64),
        finite32.astype(np.float64), np.asarray(f64_extra)])
    i32_inputs = np.asarray(
        E + [16777216, 16777217, 16777218, 16777219, -16777217, -16777219, 33554435, 2147483583,
             2147483584, 2147483585, 2147483520, 2147483647, -2147483583, -2147483584,
             -2147483585] + rng.integers(I32_MIN, I32_MAX + 1, 60, dtype=np.int64).tolist(),
        np.int32)
    maxf = float(np.finfo(np.float32).max)
    # 47efffffe0000000 = largest finite float32; ...f0000000 is halfway to 2^128 (rounds to inf)
    near_max = np.asarray([0x47EFFFFFF0000000, 0x47EFFFFFEFFFFFFF, 0xC7EFFFFFF0000000,
                           0xC7EFFFFFEFFFFFFF], np.uint64).view(np.float64).tolist()
    to_f32_extra = [1e300, -1e300, 1e-300, -1e-300, 1e-40, 1e-46, maxf] + near_max + [
                    maxf * (1 + 2.0**-24),
                    1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24, 1.0 + 2.0**-24 + 2.0**-50, 0.1, -0.1,
                    1.0 / 3.0, 2.0**-126, 2.0**-126 * (1 - 2.0**-24), 2.0**-149, 2.0**-150,
                    3.0 * 2.0**-151]
    f64_to_f32 = np.concatenate([f32(S_BITS).astype(np.float64), np.asarray(to_f32_extra),
                                 np.asarray([0x7FF8000000000000, 0xFFF8000000000000,
                                             0x7FF0000000000001, 0x7FF4000000000000,
                                             0x7FF800000000ABCD, 0x7FF8000012345678,
                                             0x7FF82468A0000000, 0xFFF82468A0000000],
                                            np.uint64).view(np.float64)])
    f32_to_f64 = np.concatenate([f32(S_BITS), f32(UNARY_EXTRA_BITS),
                                 rng.standard_normal(10).astype(np.float32)])

    def body(fh):
        r = evaluate(lambda x: x.astype(jnp.int32), f32_inputs)
        assert r.dtype == np.int32
        fh.write(f"cast float32 int32 {len(f32_inputs)}\n")
        for x, v in zip(b32(f32_inputs), r):
            fh.write(f"{h32(x)} {int(v)}\n")
        with jax.enable_x64(True):
            r = evaluate(lambda x: x.astype(jnp.int32), f64_inputs)
            assert r.dtype == np.int32
            fh.write(f"cast float64 int32 {len(f64_inputs)}\n")
            for x, v in zip(f64_inputs.view(np.uint64), r):
                fh.write(f"{h64(x)} {int(v)}\n")
        r = evaluate(lambda x: x.astype(jnp.float32), i32_inputs)
        assert r.dtype == np.float32
        fh.write(f"cast int32 float32 {len(i32_inputs)}\n")
        for x, v in zip(i32_inputs, b32(r)):
            fh.write(f"{int(x)} {h32(v)}\n")
        with jax.enable_x64(True):
            r = evaluate(lambda x: x.astype(jnp.float64), f32_to_f64)
            assert r.dtype == np.float64
            fh.write(f"cast float32 float64 {len(f32_to_f64)}\n")
            for x, v in zip(b32(f32_to_f64), r.view(np.uint64)):
                fh.write(f"{h32(x)} {h64(v)}\n")
            r = evaluate(lambda x: x.astype(jnp.float32), f64_to_f32)
            assert r.dtype == np.float32
            fh.write(f"cast float64 float32 {len(f64_to_f32)}\n")
            for x, v in zip(f64_to_f32.view(np.uint64), b32(r)):
                fh.write(f"{h64(x)} {h32(v)}\n")

    write_file("casts.txt", "dtype casts (astype): x result", body)


# ---------------------------------------------------------------------------------------- shapes

def shape_tok(s):
    if len(s) == 1:
        return f"({s[0]},)"
    return "(" + ",".join(str(d) for d in s) + ")"


def dims_tok(d):
    return "[" + ",".join(str(x) for x in d) + "]"


MATMUL_CASES = [
    ((5,), (5,)), ((5,), (4,)), ((0,), (0,)), ((1,), (1,)),
    ((5,), (5, 3)), ((5,), (4, 3)), ((3, 5), (5,)), ((3, 5), (4,)),
    ((5,), (2, 5, 3)), ((5,), (2, 4, 3)), ((2, 3, 5), (5,)), ((2, 3, 5), (3,)),
    ((5,), (2, 3, 5, 4)), ((2, 3, 4, 5), (5,)),
    ((3, 4), (4, 6)), ((3, 4), (5, 6)), ((3, 1), (1, 6)), ((0, 4), (4, 6)), ((3, 0), (0, 6)),
    ((3, 4), (4, 0)), ((0, 0), (0, 0)),
    ((8, 2), (2, 2, 6)), ((2, 2, 6), (6, 3)), ((3, 1, 4, 5), (2, 5, 6)), ((1, 4, 5), (7, 5, 6)),
    ((2, 4, 5), (3, 5, 6)), ((2, 4, 5), (2, 5, 6)), ((2, 4, 5), (1, 5, 6)), ((2, 4, 5), (2, 6, 6)),
    ((0, 4, 5), (1, 5, 6)), ((0, 4, 5), (3, 5, 6)), ((2, 4, 5), (0, 5, 6)),
    ((2, 1, 3, 4, 5), (7, 1, 5, 6)), ((2, 1, 3, 4, 5), (1, 7, 3, 5, 6)),
    ((2, 3, 3, 4, 5), (3, 1, 5, 6)), ((2, 3, 3, 4, 5), (2, 1, 5, 6)),
    ((1, 1, 1, 4, 5), (5, 6)), ((6, 5), (2, 1, 1, 5, 4)),
    ((), ()), ((), (5,)), ((5,), ()), ((), (3, 4)), ((3, 4), ()),
    ((2, 3, 4), (4, 5, 6)), ((4, 5), (3, 5, 6)), ((4, 5), (3, 4, 6)),
    ((1,), (1, 7)), ((7, 1), (1,)), ((1, 1), (1, 1)),
    ((2, 1, 4, 5), (1, 3, 5, 6)), ((3, 4, 5), (5, 6)),
]

# (a shape, b shape, lhs_contract, rhs_contract, lhs_batch, rhs_batch)
DOT_GENERAL_CASES = [
    # plain matrix products and outer products
    ((3, 4), (4, 5), [1], [0], [], []),
    ((3, 4), (5, 4), [1], [1], [], []),
    ((4, 3), (4, 5), [0], [0], [], []),
    ((3, 4), (4, 5), [0], [1], [], []),
    ((3, 4), (5, 6), [], [], [], []),
    ((3,), (5,), [], [], [], []),
    ((3,), (3,), [0], [0], [], []),
    ((), (), [], [], [], []),
    ((), (3, 4), [], [], [], []),
    ((3, 4, 5), (5, 4, 6), [1, 2], [1, 0], [], []),
    ((3, 4, 5), (4, 5, 6), [1, 2], [0, 1], [], []),
    ((3, 4, 5), (4, 5, 6), [2, 1], [1, 0], [], []),
    ((3, 4, 5), (4, 5, 6), [2, 1], [0, 1], [], []),
    # batched
    ((2, 3, 4), (2, 4, 5), [2], [1], [0], [0]),
    ((2, 3, 4), (2, 4, 5), [2], [1], [], []),
    ((2, 3, 4), (4, 2, 5), [2], [0], [0], [1]),
    ((3, 2, 4), (2, 4, 5), [2], [1], [1], [0]),
    ((3, 4, 2), (2, 4, 5), [1], [1], [2], [0]),
    ((3, 4, 2), (5, 4, 2), [1], [1], [2], [2]),
    ((2, 3, 4), (3, 2, 5), [], [], [1, 0], [0, 1]),
    ((2, 3, 4), (3, 2, 4), [2], [2], [1, 0], [0, 1]),
    ((2, 3, 4, 6), (3, 2, 6, 5), [3], [2], [0, 1], [1, 0]),
    ((2, 3, 4, 6), (6, 5, 3, 2), [3], [0], [1, 0], [2, 3]),
    ((4, 2, 3), (3, 5, 2), [], [], [1, 2], [2, 0]),
    ((2, 3), (2, 3), [], [], [0, 1], [0, 1]),
    ((2, 3), (2, 3), [1], [1], [0], [0]),
    ((2,), (2,), [], [], [0], [0]),
    ((2, 3, 4), (2, 3, 4), [1, 2], [1, 2], [0], [0]),
    # zero-sized dims
    ((0, 3, 4), (0, 4, 5), [2], [1], [0], [0]),
    ((2, 3, 0), (2, 0, 5), [2], [1], [0], [0]),
    ((2, 0, 4), (2, 4, 0), [2], [1], [0], [0]),
    ((0,), (0,), [0], [0], [], []),
    ((3, 0), (0, 5), [], [], [], []),
    # mismatched sizes
    ((3, 4), (5, 6), [1], [0], [], []),
    ((2, 3, 4), (3, 4, 5), [2], [1], [0], [0]),
    ((2, 3, 4), (1, 4, 5), [2], [1], [0], [0]),
    ((1, 3, 4), (2, 4, 5), [2], [1], [0], [0]),
    ((3, 4, 5), (4, 5, 6), [1, 2], [1, 0], [], []),
    # unequal list lengths
    ((3, 4, 5), (4, 5, 6), [1, 2], [0], [], []),
    ((3, 4), (4, 5), [1], [], [], []),
    ((2, 3, 4), (2, 4, 5), [2], [1], [0], []),
    ((2, 3, 4), (2, 2, 4, 5), [2], [2], [0], [0, 1]),
    # a dimension both batch and contracting
    ((2, 3, 4), (2, 4, 5), [0, 2], [0, 1], [0], [0]),
    ((2, 3), (2, 3), [0], [0], [0], [0]),
    ((2, 3, 4), (2, 4, 5), [2], [1], [2], [0]),
    ((2, 3, 4), (2, 4, 5), [2], [1], [0], [1]),
    # a dimension contracted twice / batched twice
    ((4, 4), (4, 4), [1, 1], [0, 1], [], []),
    ((4, 4), (4, 4), [0, 1], [0, 0], [], []),
    ((4, 4, 3), (4, 4, 5), [], [], [0, 0], [0, 1]),
    ((4, 4, 3), (4, 4, 5), [], [], [0, 1], [1, 1]),
    # out of range / negative dims
    ((3, 4), (4, 5), [2], [0], [], []),
    ((3, 4), (4, 5), [1], [2], [], []),
    ((3, 4), (4, 5), [-1], [0], [], []),
    ((3, 4), (4, 5), [1], [-2], [], []),
    ((2, 3, 4), (2, 4, 5), [2], [1], [-3], [0]),
    ((2, 3, 4), (2, 4, 5), [2], [1], [3], [0]),
    ((2, 3, 4), (2, 4, 5), [2], [1], [0], [3]),
    ((), (), [0], [0], [], []),
    # rank 5
    ((2, 3, 4, 5, 6), (3, 2, 6, 5, 7), [4, 3], [2, 3], [0, 1], [1, 0]),
    ((2, 3, 4, 5, 6), (6, 2), [4], [0], [0], [1]),
]


def eval_or_error(f, *shapes):
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    try:
        out = jax.eval_shape(f, *args)
        return shape_tok(out.shape), None
    except Exception as e:  # noqa: BLE001 - we record whatever JAX refuses with
        msg = (str(e).strip().splitlines() or [""])[0]
        return "error", f"{type(e).__name__}: {msg}"


def write_shapes():
    def body(fh):
        fh.write("# matmul <a> <b> <result>  (jnp.matmul, float32)\n")
        for sa, sb in MATMUL_CASES:
            res, err = eval_or_error(jnp.matmul, sa, sb)
            fh.write(f"matmul {shape_tok(sa)} {shape_tok(sb)} {res}\n")
            if err:
                fh.write(f"# {err}\n")
        fh.write("# dot_general <a> <b> <lhs_contract> <rhs_contract> <lhs_batch> <rhs_batch> "
                 "<result>  (jax.lax.dot_general, float32)\n")
        for sa, sb, lc, rc, lb, rb in DOT_GENERAL_CASES:
            dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
            res, err = eval_or_error(lambda x, y, dn=dn: jax.lax.dot_general(x, y, dn), sa, sb)
            fh.write(f"dot_general {shape_tok(sa)} {shape_tok(sb)} {dims_tok(lc)} {dims_tok(rc)} "
                     f"{dims_tok(lb)} {dims_tok(rb)} {res}\n")
            if err:
                fh.write(f"# {err}\n")

    write_file("shapes.txt", "shape rules of jnp.matmul and jax.lax.dot_general", body)


def main():
    assert jax.default_backend() == "cpu", "run with a CPU-only jax"
    assert not jax.config.jax_enable_x64
    write_int32_binary()
    write_int32_unary()
    write_float32_special()
    write_casts()
    write_shapes()


if __name__ == "__main__":
    main()
