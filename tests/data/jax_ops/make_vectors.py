#!/usr/bin/env python3
"""Generates the JAX reference vectors for the ops tessel is adding (take, cumsum, argmax/argmin,
var, Flax LayerNorm / RMSNorm, causal-mask softmax) in tests/data/jax_ops.

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
    /tmp/jaxenv/bin/python tests/data/jax_ops/make_vectors.py

The vectors in the repository were made with jax 0.10.2 / jaxlib 0.10.2 / numpy 2.4.6 on an x86-64
CPU with AVX2+FMA (every file's '#' header lines name the versions and the backend).  Flax is NOT
needed: LayerNorm / RMSNorm are written below as the jnp compositions of flax 0.12.8's
flax/linen/normalization.py.  If flax happens to be importable (e.g. PYTHONPATH=<dir> after
`pip install --no-deps --target <dir> flax msgpack rich PyYAML treescope absl-py`), the script also
checks flax.linen.LayerNorm / RMSNorm against the compositions bit for bit.

The script is deterministic (numpy default_rng with fixed seeds).  JAX runs with its defaults
(jax_enable_x64 off) everywhere, as in tests/data/jax_semantics: the float64 references are
computed by numpy, not by JAX.  Every JAX result is computed under jax.jit at exactly the shapes
listed (no padding: the shape decides e.g. XLA's cumsum algorithm).  The script asserts the
behaviours the README states (tie / NaN rules, take modes, cumsum order, var formula, Flax
formulas), so a rerun with another jax fails loudly when one of them changes.

Format -- the block grammar of tests/data/jax_semantics (whitespace separated tokens, '#' lines are
comments; a block is `<kind> <header words> <count>` followed by <count> rows of a fixed number of
tokens; float32 values are 8-hex-digit bit patterns, float64 16 hex digits, integers decimal).
tests/semantics/vectors.hpp's layout() does not know these two kinds yet (it would need
`if (kind == "case") return {2, 2};  if (kind == "tensor") return {5, 1};` and the folder
"jax_ops" instead of the hard-coded "jax_semantics"); ReferenceTokens reads them as they are.

  case <name> <count>
      followed by <count> rows  <key> <value>: the op and its parameters, e.g.
      `op take` `axis 0` `mode default` `epsilon 358637bd` (float32 bits of 1e-6).
  tensor <case name> <role> <dtype> <shape> <count>
      followed by <count> values in row-major (C) order; dtype float32 | float64 | int32;
      shape written like () (6,) (16,8) (4,6,8) (as in jax_semantics/shapes.txt);
      <count> is the product of the shape (1 for ()).
      Roles: inputs (x, table, indices, scale, bias, s) and outputs (out, or out_<variant>);
      ref_f64 / ref_f64_<variant> roles are numpy float64 references computed from the same
      float32 inputs (NOT JAX results) for choosing tolerances.

Files (see README.md for the facts found):
  take.txt            jnp.take(table, indices, axis=0), default mode, in-range / negative / OOB
  take_modes.txt      one index vector through mode default / fill / clip / wrap, x[indices],
                      and an int32 table (its fill value)
  cumsum.txt          jnp.cumsum float32 (with float64 sequential refs) and int32 (wraparound)
  argminmax.txt       jnp.argmax / jnp.argmin, axis 0, 1 and None (flattened index), ties, NaN, inf
  var.txt             jnp.var (ddof=0) float32 / int32 input, axis 1 and (0, 1), keepdims
  norms.txt           Flax LayerNorm (fast variance, the default; and two-pass) and RMSNorm
  causal_softmax.txt  jax.nn.softmax(jnp.where(row >= col, s, -inf), axis=-1)
"""

import os
from fractions import Fraction
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)

OUT = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "tests/data/jax_ops/make_vectors.py"

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
F32 = np.float32


# ------------------------------------------------------------------------------------- writing

def shape_tok(s):
    if len(s) == 1:
        return f"({s[0]},)"
    return "(" + ",".join(str(d) for d in s) + ")"


def value_toks(a):
    a = np.asarray(a)
    if a.dtype == np.float32:
        return [f"{int(v):08x}" for v in a.reshape(-1).view(np.uint32)]
    if a.dtype == np.float64:
        return [f"{int(v):016x}" for v in a.reshape(-1).view(np.uint64)]
    if a.dtype == np.int32:
        return [str(int(v)) for v in a.reshape(-1)]
    raise TypeError(a.dtype)


class Writer:
    def __init__(self, fh):
        self.fh = fh

    def comment(self, text):
        for line in text.strip("\n").splitlines():
            self.fh.write(f"# {line}".rstrip() + "\n")

    def case(self, name, **attrs):
        self.fh.write(f"case {name} {len(attrs)}\n")
        for k, v in attrs.items():
            self.fh.write(f"{k} {v}\n")

    def tensor(self, case, role, a):
        a = np.asarray(a)
        toks = value_toks(a)
        assert len(toks) == max(1, a.size)
        self.fh.write(f"tensor {case} {role} {a.dtype.name} {shape_tok(a.shape)} {len(toks)}\n")
        per = 8
        for i in range(0, len(toks), per):
            self.fh.write(" ".join(toks[i:i + per]) + "\n")


def write_file(name, what, body):
    path = os.path.join(OUT, name)
    with open(path, "w") as fh:
        vector_header.header(fh, what, SCRIPT, " (float64 references computed by numpy)")
        body(Writer(fh))
    print(path, os.path.getsize(path), "bytes")


def run(f, *args):
    """f under jax.jit on device arrays; the result as numpy (dtype checked by the callers)."""
    return np.asarray(jax.jit(f)(*[jnp.asarray(a) for a in args]))


def bits_eq(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.float32:
        return np.array_equal(a.view(np.uint32), b.view(np.uint32))
    return np.array_equal(a, b)


def ordered(a):
    """float32 -> integers in the order of the floats, so |ordered(a) - ordered(b)| is ulps."""
    i = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def max_ulp(a, b):
    a = np.atleast_1d(np.asarray(a, np.float32))
    b = np.atleast_1d(np.asarray(b, np.float32))
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.abs(ordered(a) - ordered(b))
    d[both_nan] = 0
    return int(d.max()) if d.size else 0


# ------------------------------------------------------------------------------------------ take

def take_default(a, i):
    return jnp.take(a, i, axis=0)


def write_take():
    rng = np.random.default_rng(20250201)
    t16 = rng.standard_normal((16, 8)).astype(F32)
    t32 = rng.standard_normal((32, 4)).astype(F32)
    cases = [
        ("take_t16x8_i6", t16, rng.integers(0, 16, 6)),
        ("take_t16x8_i3x4", t16, rng.integers(0, 16, (3, 4))),
        ("take_t32x4_i6", t32, rng.integers(0, 32, 6)),
        ("take_t32x4_i3x4", t32, rng.integers(0, 32, (3, 4))),
        ("take_t16x8_negative_i6", t16, np.array([-1, -16, -8, -2, -15, -1])),
        ("take_t32x4_negative_i3x4", t32, np.array([[-1, -32, 0, 31], [-31, 5, -5, -17],
                                                    [-2, 1, -30, 30]])),
        ("take_t16x8_oob_i3x4", t16, np.array([[16, 17, 100, I32_MAX], [-17, -100, I32_MIN, -16],
                                               [-1, 0, 15, 31]])),
        ("take_t32x4_oob_i6", t32, np.array([32, -33, 33, -1, 0, 64])),
    ]

    def body(w):
        w.comment("jnp.take(table, indices, axis=0), default mode (= mode='fill'), int32 indices.\n"
                  "Default mode: an index i < 0 is first replaced by i + n (once; n = table rows);\n"
                  "if it is then still outside [0, n) the whole output row is NaN (7fc00000).\n"
                  "out[j..., :] = table[indices[j...], :]; out shape = indices.shape + (cols,).")
        for name, table, idx in cases:
            idx = np.asarray(idx, np.int32)
            r = run(take_default, table, idx)
            assert r.dtype == np.float32 and r.shape == idx.shape + table.shape[1:]
            n = table.shape[0]
            norm = np.where(idx < 0, idx.astype(np.int64) + n, idx)
            ok = (norm >= 0) & (norm < n)
            want = np.where(ok[..., None], table[np.clip(norm, 0, n - 1)], F32(np.nan))
            assert bits_eq(r, want.astype(F32)), name
            assert np.all(r[~ok].view(np.uint32) == 0x7FC00000)
            w.case(name, op="take", axis=0, mode="default")
            w.tensor(name, "table", table)
            w.tensor(name, "indices", idx)
            w.tensor(name, "out", r)

    write_file("take.txt", "jnp.take(table, indices, axis=0), default mode", body)


TAKE_MODE_INDICES = [0, 15, 7, -1, -8, -16, -17, 16, 17, 100, -100, I32_MAX, I32_MIN, I32_MIN + 15]


def write_take_modes():
    table = (np.arange(16 * 2, dtype=np.int64).reshape(16, 2)).astype(F32)  # row r = 2r, 2r+1
    itable = (np.arange(16 * 2, dtype=np.int64).reshape(16, 2) * 1000 + 7).astype(np.int32)
    idx = np.asarray(TAKE_MODE_INDICES, np.int32)
    n = 16
    i64 = idx.astype(np.int64)
    wrapped_once = np.where(i64 < 0, i64 + n, i64)
    fill_ok = (wrapped_once >= 0) & (wrapped_once < n)
    variants = [
        ("default", lambda a, i: jnp.take(a, i, axis=0),
         np.where(fill_ok, wrapped_once, -1)),                     # -1 = the NaN / fill row
        ("fill", lambda a, i: jnp.take(a, i, axis=0, mode="fill"),
         np.where(fill_ok, wrapped_once, -1)),
        ("clip", lambda a, i: jnp.take(a, i, axis=0, mode="clip"),
         np.clip(i64, 0, n - 1)),                                  # NO negative wrap: -1 -> 0
        ("wrap", lambda a, i: jnp.take(a, i, axis=0, mode="wrap"),
         np.mod(i64, n)),                                          # Python-style modulo
        ("getitem", lambda a, i: a[i],
         np.clip(wrapped_once, 0, n - 1)),                         # wrap once, then clamp
    ]

    def body(w):
        w.comment("""\
What jnp.take(table, indices, axis=0, mode=...) does with negative / out-of-range int32 indices
(jax/_src/numpy/indexing.py _take), n = 16 table rows; table (16, 2) float32 row r holds 2r, 2r+1;
itable (16, 2) int32 row r holds (2r + c) * 1000 + 7.
  default (mode=None) == "fill": i < 0 -> i + n once (so -1 -> 15, -16 -> 0, -17 -> -1), then
      lax.gather FILL_OR_DROP: a row still outside [0, n) is the fill value:
      NaN (7fc00000) for float32, INT32_MIN (-2147483648) for int32 (fill_value= overrides).
      INT32_MIN + n stays negative -> fill (no overflow in the wrap for these n).
  "clip": NO negative wrap; the index is clamped to [0, n-1]: -1 -> 0, -17 -> 0, 16 -> 15.
  "wrap": i mod n (Python sign convention, result in [0, n)): -1 -> 15, -17 -> 15, 17 -> 1.
  table[indices] (getitem, x.at[i].get() default): wrap once, then clamp: -17 -> 0, 100 -> 15.
The `expect_row` tensor is the source row each variant picked (-1 = fill), computed by numpy
from these rules and checked against JAX's output.""")
        w.case("take_modes", op="take", axis=0, mode="default,fill,clip,wrap,getitem")
        w.tensor("take_modes", "table", table)
        w.tensor("take_modes", "itable", itable)
        w.tensor("take_modes", "indices", idx)
        for mode, f, rows in variants:
            r = run(f, table, idx)
            ri = run(f, itable, idx)
            assert r.dtype == np.float32 and ri.dtype == np.int32
            rows = np.asarray(rows, np.int64)
            want = np.where((rows >= 0)[:, None], table[np.clip(rows, 0, n - 1)], F32(np.nan))
            wanti = np.where((rows >= 0)[:, None], itable[np.clip(rows, 0, n - 1)],
                             np.int32(I32_MIN))
            assert bits_eq(r, want.astype(F32)), mode
            assert bits_eq(ri, wanti.astype(np.int32)), mode
            w.tensor("take_modes", f"expect_row_{mode}", rows.astype(np.int32))
            w.tensor("take_modes", f"out_{mode}", r)
            w.tensor("take_modes", f"iout_{mode}", ri)

    write_file("take_modes.txt", "jnp.take index modes: default/fill/clip/wrap and getitem", body)


# ---------------------------------------------------------------------------------------- cumsum

def seq_cumsum(x, axis, dtype):
    """Left-to-right running sum starting from 0, every add rounded to dtype."""
    xm = np.moveaxis(np.asarray(x), axis, 0).astype(dtype)
    out = np.empty_like(xm)
    acc = np.zeros(xm.shape[1:], dtype)
    for i in range(xm.shape[0]):
        acc = (acc + xm[i]).astype(dtype)
        out[i] = acc
    return np.moveaxis(out, 0, axis)


def xla_cpu_cumsum_1d(x, base=16):
    """The order XLA:CPU (jaxlib 0.10.2) sums in: reduce_window(window n, pad n-1 zeros in front)
    is rewritten for n > 16 into blocks of 16 (zero padded at the end): within a block a
    sequential running sum from 0; the block totals get the same scan recursively; element
    16b + r = exclusive-prefix-of-totals[b] + block_running_sum[b, r]."""
    x = np.asarray(x, F32)
    n = len(x)
    if n <= base:
        return seq_cumsum(x, 0, F32)
    blocks = -(-n // base)
    xp = np.concatenate([x, np.zeros(blocks * base - n, F32)]).reshape(blocks, base)
    s = seq_cumsum(xp, 1, F32)
    inclusive = xla_cpu_cumsum_1d(s[:, -1].copy(), base)
    prefix = np.concatenate([[F32(0)], inclusive[:-1]]).astype(F32)
    return (prefix[:, None] + s).astype(F32).reshape(-1)[:n]


CUMSUM_F32 = [((16, 8), 0), ((16, 8), 1), ((4, 6, 8), 1), ((4, 6, 8), 2)]
CUMSUM_F32_LONG = [((4, 40), 1), ((1, 300), 1)]


def cumsum_f32_input(rng, shape, axis):
    x = rng.standard_normal(shape).astype(F32)
    x = x * rng.choice(np.asarray([1.0, 1.0, 1.0, 100.0, 0.01], F32), shape)
    if shape[axis] > 16:
        return x
    # a lane with -0.0 values (cumsum starts from +0.0, so -0.0 + ... gives +0.0) and big values
    lane = [slice(None)] * len(shape)
    for d in range(len(shape)):
        if d != axis:
            lane[d] = 0
    x[tuple(lane)] = np.resize(np.asarray([-0.0, -0.0, 1e30, -1e30, 3.0, -0.0], F32),
                               shape[axis])
    return x


def rel_err_units(out, x, axis):
    """max |out - exact| / (eps32 * running sum of |x|), exact = float64 sequential."""
    ref = seq_cumsum(x.astype(np.float64), axis, np.float64)
    scale = seq_cumsum(np.abs(x.astype(np.float64)), axis, np.float64)
    eps = float(np.finfo(F32).eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.abs(out.astype(np.float64) - ref) / (eps * scale)
    r = r[np.isfinite(r)]
    return float(r.max()) if r.size else 0.0


def write_cumsum():
    rng = np.random.default_rng(20250202)
    summary = []

    def body(w):
        w.comment("""\
jnp.cumsum(x, axis): out[..., k, ...] = x[..., 0, ...] + ... + x[..., k, ...]; int32 stays int32
(wraps modulo 2^32), float32 stays float32.
ref_f64 = float64 left-to-right running sum of the float32 inputs (numpy, not JAX).
XLA:CPU lowers cumsum to reduce_window(window n, n-1 zeros padded in front); for a scan length
n <= 16 it is evaluated as a sequential running sum starting from +0.0, so the float32 results are
bit-identical to a left-to-right float32 sum (0 ulp) -- all four shapes the ops need (n = 16, 8, 6,
8).  For n > 16 XLA rewrites it into blocks of 16 (see xla_cpu_cumsum_1d in make_vectors.py: block
running sums + a recursive scan of the block totals); the 4x40 and 1x300 cases below show that
order (bit-exact to that model, not to a sequential sum).  Lane 0 of the short cases holds
-0.0, 1e30, -1e30 (catastrophic cancellation), so the ulp figures below leave it out.
Starting from +0.0 means a lane of -0.0 gives +0.0 (0 + -0.0 = +0.0).""")
        for shape, axis in CUMSUM_F32 + CUMSUM_F32_LONG:
            name = f"cumsum_f32_{'x'.join(map(str, shape))}_axis{axis}"
            x = cumsum_f32_input(rng, shape, axis)
            r = run(lambda v, a=axis: jnp.cumsum(v, axis=a), x)
            assert r.dtype == np.float32
            seq = seq_cumsum(x, axis, F32)
            model = np.apply_along_axis(xla_cpu_cumsum_1d, axis, x)
            assert bits_eq(r, model), name
            if shape[axis] <= 16:
                assert bits_eq(r, seq), name
            # ulps over the random lanes only (lane 0 holds -0.0 / 1e30 / -1e30 and cancels
            # catastrophically, so its ulp distances say nothing about the summation order)
            lane_mask = np.ones(shape, bool)
            lane = [slice(None)] * len(shape)
            for d in range(len(shape)):
                if d != axis:
                    lane[d] = 0
            if shape[axis] <= 16:
                lane_mask[tuple(lane)] = False
            ulp = max_ulp(r[lane_mask], seq[lane_mask])
            rel = rel_err_units(np.where(lane_mask, r, 0).astype(F32),
                                np.where(lane_mask, x, 0).astype(F32), axis)
            summary.append((name, ulp, rel))
            w.comment(f"{name}: max ulp |jax - sequential float32| = {ulp}; max |jax - exact| /"
                      f"\n  (eps32 * running sum of |x|) = {rel:.3f}")
            w.case(name, op="cumsum", axis=axis, dtype="float32")
            w.tensor(name, "x", x)
            w.tensor(name, "out", r)
            w.tensor(name, "ref_f64", seq_cumsum(x.astype(np.float64), axis, np.float64))
        w.comment("int32: random values from the whole int32 range (running sums wrap); lane 0\n"
                  "starts at INT32_MAX - 2 and adds +1s (wraps to INT32_MIN), lane 1 starts at\n"
                  "INT32_MIN + 1 and adds -1s, lane 2 adds values in [2^30, 2^31).")
        for shape, axis in CUMSUM_F32:
            name = f"cumsum_i32_{'x'.join(map(str, shape))}_axis{axis}"
            x = rng.integers(I32_MIN, I32_MAX + 1, shape, dtype=np.int64)
            xm = np.moveaxis(x, axis, -1).reshape(-1, shape[axis])
            xm[0, :] = 1
            xm[0, 0] = I32_MAX - 2
            xm[1, :] = -1
            xm[1, 0] = I32_MIN + 1
            xm[2, :] = rng.integers(2**30, 2**31, shape[axis])
            rest = list(np.moveaxis(x, axis, -1).shape)
            x = np.moveaxis(xm.reshape(rest), -1, axis).astype(np.int32)
            r = run(lambda v, a=axis: jnp.cumsum(v, axis=a), x)
            assert r.dtype == np.int32
            want = seq_cumsum(x.astype(np.int64), axis, np.int64)
            want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
            assert bits_eq(r, want), name
            w.case(name, op="cumsum", axis=axis, dtype="int32")
            w.tensor(name, "x", x)
            w.tensor(name, "out", r)

    write_file("cumsum.txt", "jnp.cumsum float32 / int32", body)
    return summary


# ------------------------------------------------------------------------------ argmax / argmin

NAN = F32(np.nan)
INF = F32(np.inf)


def special_lanes(n, rng):
    """Lanes of n float32 values exercising the tie / NaN / inf rules (n >= 8)."""
    def ints():
        return rng.integers(-3, 4, n).astype(F32)

    lanes = []

    def put(lane, **kv):
        lane = lane.copy()
        for k, v in kv.items():
            lane[int(k[1:])] = v
        return lane

    lanes.append(put(ints(), p1=9.0, p5=9.0, p2=-9.0, p6=-9.0))        # ties for max and min
    lanes.append(put(ints(), p3=NAN))                                   # one NaN
    lanes.append(put(ints(), p2=NAN, p6=NAN))                           # two NaNs
    lanes.append(put(ints(), p0=INF, p4=NAN, p7=-INF))                  # NaN with +-inf
    lanes.append(np.full(n, NAN, F32))                                  # all NaN
    lanes.append(np.full(n, -INF, F32))                                 # all -inf
    lanes.append(np.full(n, INF, F32))                                  # all +inf
    lanes.append(put(np.full(n, -INF, F32), p5=-1e30))                  # -inf and one finite
    lanes.append(put(ints(), p2=INF, p6=INF, p3=-INF, p7=-INF))         # inf ties
    lanes.append(np.resize(np.asarray([-0.0, 0.0], F32), n))           # -0.0 == 0.0: first wins
    lanes.append(np.resize(np.asarray([0.0, -0.0], F32), n))
    lanes.append(np.full(n, 2.5, F32))                                  # all equal
    lanes.append(put(ints(), **{f"p{n - 1}": NAN}))                     # NaN last
    lanes.append(put(rng.standard_normal(n).astype(F32), p0=NAN))      # NaN first
    while len(lanes) < 16:
        lanes.append(ints())
    return lanes


def np_arg(x, axis, fn):
    """numpy's argmax/argmin: first occurrence; a NaN counts as the extreme (first NaN wins)."""
    return getattr(np, fn)(x, axis=axis).astype(np.int32)


def write_argminmax():
    rng = np.random.default_rng(20250203)
    rows = np.stack(special_lanes(8, rng))                  # (16, 8): special rows
    cols = np.stack(special_lanes(16, rng)[:8], axis=1)     # (16, 8): special columns
    ties = rng.integers(-2, 3, (16, 8)).astype(F32)         # many ties, flattened too
    ties[3, 5] = ties[11, 2] = 7.0                          # flat max tie: first (3, 5) = 29
    ties[6, 0] = ties[0, 7] = -7.0                          # flat min tie: (0, 7) = 7 wins
    nan_multi = rng.standard_normal((16, 8)).astype(F32)
    nan_multi[9, 4] = nan_multi[2, 6] = nan_multi[14, 1] = NAN   # first flat NaN is (2, 6) = 22
    nan_multi[5, 3] = INF
    nan_multi[1, 1] = -INF
    neginf = np.full((16, 8), -INF, F32)
    neginf[4, :] = rng.standard_normal(8).astype(F32)        # one finite row
    neginf[:, 6] = INF                                        # ... and a +inf column
    neginf[10, 2] = NAN
    inputs = [
        ("argminmax_f32_special_rows", rows),
        ("argminmax_f32_special_cols", cols),
        ("argminmax_f32_ties", ties),
        ("argminmax_f32_nan_multi", nan_multi),
        ("argminmax_f32_neginf", neginf),
        ("argminmax_f32_all_neginf", np.full((16, 8), -INF, F32)),
        ("argminmax_f32_all_nan", np.full((16, 8), NAN, F32)),
    ]
    xi = rng.integers(-3, 4, (16, 8)).astype(np.int64)
    xi[2, :] = I32_MIN
    xi[:, 3] = I32_MAX
    xi[7, 3] = I32_MIN
    xi[12, :] = [I32_MIN, I32_MAX, 0, I32_MAX, I32_MIN, -1, 1, I32_MAX]
    inputs.append(("argminmax_i32", xi.astype(np.int32)))

    def body(w):
        w.comment("""\
jnp.argmax / jnp.argmin over (16, 8) inputs; results int32 (x64 off), decimal.
Roles: out_argmax_axis0 (8,), out_argmax_axis1 (16,), out_argmax_all () = index into the row-major
flattened array (axis=None); the same for argmin.
Rules (lax argmax reducer, jax/_src/lax/lax.py _ArgMinMaxReducer; all checked against numpy):
  * ties: the smallest index wins (also -0.0 vs 0.0, which compare equal, and +-inf ties);
  * a NaN beats every number for BOTH argmax and argmin; with several NaNs the first NaN wins
    on XLA:CPU (the reducer itself would let a later NaN win if XLA combined them in another
    order, so it is an observed order, the same as numpy's rule);
  * an all -inf lane gives 0 for argmax (identity is (-inf, 0)), all +inf gives 0 for argmin;
  * int32: plain first-occurrence max / min.""")
        for name, x in inputs:
            w.case(name, op="argmax,argmin", axes="0,1,none")
            w.tensor(name, "x", x)
            for fn in ("argmax", "argmin"):
                for axis, tag in ((0, "axis0"), (1, "axis1"), (None, "all")):
                    r = run(lambda v, f=fn, a=axis: getattr(jnp, f)(v, axis=a), x)
                    assert r.dtype == np.int32, r.dtype
                    assert bits_eq(r, np_arg(x, axis, fn)), (name, fn, axis, r)
                    w.tensor(name, f"out_{fn}_{tag}", r)

    write_file("argminmax.txt", "jnp.argmax / jnp.argmin (int32 indices)", body)


# ------------------------------------------------------------------------ fused vs op-by-op, FMA

def run_unfused(f, *args):
    """f op by op: under jax.disable_jit every primitive runs as its own XLA computation, so
    nothing is fused (no FMA contraction across ops, each reduction on its own)."""
    with jax.disable_jit():
        return np.asarray(f(*[jnp.asarray(a) for a in args]))


def round_f32(q):
    """The float32 nearest (ties to even) to the exact rational q (finite, normal range)."""
    r = F32(float(q))
    best = None
    for cand in (np.nextafter(r, F32(-np.inf)), r, np.nextafter(r, F32(np.inf))):
        if not np.isfinite(cand):
            continue
        d = abs(Fraction(float(cand)) - q)
        if best is None or d < best[0] or (d == best[0] and int(cand.view(np.uint32)) % 2 == 0):
            best = (d, cand)
    return F32(best[1])


def fma32(a, b, c):
    """Exactly rounded float32 fma(a, b, c), elementwise."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    out = np.empty(a.shape, F32)
    for i in np.ndindex(a.shape):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        if np.isfinite(x) and np.isfinite(y) and np.isfinite(z):
            out[i] = round_f32(Fraction(x) * Fraction(y) + Fraction(z))
        else:
            out[i] = F32(x * y + z)
    return out


# ------------------------------------------------------------------------------------------- var

def var_composition(x, axis, keepdims=False, ddof=0):
    """jnp.var(x, axis, keepdims) for real input as jax/_src/numpy/reductions.py _var writes it
    (jnp.mean = lax.div(sum, count))."""
    x = x.astype(jnp.float32)                                  # int32 -> float32 first
    n = np.prod([x.shape[a] for a in (axis if isinstance(axis, tuple) else (axis,))])
    mean = lax.div(jnp.sum(x, axis, keepdims=True), jnp.float32(n))
    centered = lax.square(lax.sub(x, mean))
    var = lax.div(jnp.sum(centered, axis, keepdims=keepdims), jnp.float32(n - ddof))
    return jnp.where(n - ddof > 0, var, jnp.nan)


def var_seq_f32(x, axis, fma=False):
    """The same composition in numpy float32 with left-to-right sums (no FMA), or (fma=True,
    axis 1 only) the order XLA:CPU's fused kernel uses: acc = c1*c1; acc = fma(c0, c0, acc);
    acc = fma(ck, ck, acc) for k = 2 ..; var = acc * (1/n)."""
    x = np.asarray(x, F32)
    axes = axis if isinstance(axis, tuple) else (axis,)
    n = F32(np.prod([x.shape[a] for a in axes]))
    lead = np.moveaxis(x, axes, tuple(range(len(axes))))
    lead = lead.reshape((-1,) + lead.shape[len(axes):])
    acc = np.zeros(lead.shape[1:], F32)
    for t in lead:
        acc = (acc + t).astype(F32)
    mean = np.expand_dims((acc / n).astype(F32), axes)
    c = (x - mean).astype(F32)
    lead = np.moveaxis(c, axes, tuple(range(len(axes))))
    lead = lead.reshape((-1,) + lead.shape[len(axes):])
    if fma:
        acc = (lead[1] * lead[1]).astype(F32)
        acc = fma32(lead[0], lead[0], acc)
        for t in lead[2:]:
            acc = fma32(t, t, acc)
    else:
        acc = np.zeros(lead.shape[1:], F32)
        for t in lead:
            acc = (acc + (t * t).astype(F32)).astype(F32)
    return (acc / n).astype(F32)


def write_var():
    rng = np.random.default_rng(20250204)
    special = rng.standard_normal((16, 8)).astype(F32)
    special[0, 3] = NAN
    special[1, 2] = INF
    special[2, 0], special[2, 5] = INF, -INF
    special[3, :] = 1.25                                     # constant row: var exactly 0
    special[4, :] = rng.standard_normal(8).astype(F32) * F32(1e20)   # square overflows -> inf
    special[5, :] = rng.standard_normal(8).astype(F32) * F32(1e-20)  # square underflows (FTZ)
    offset = (F32(1000.0) + rng.standard_normal((16, 8)).astype(F32) * F32(0.01)).astype(F32)
    xi = rng.integers(-1000, 1001, (16, 8)).astype(np.int64)
    xi[3, :] = rng.integers(2**30, 2**31, 8)                 # large ints: float32 cast rounds
    xi[4, :] = [I32_MIN, I32_MAX, 0, 1, -1, I32_MAX, I32_MIN, 7]
    inputs = [
        ("var_f32_normal", rng.standard_normal((16, 8)).astype(F32) * F32(3.0)),
        ("var_f32_offset", offset),
        ("var_f32_special", special),
        ("var_i32", xi.astype(np.int32)),
    ]
    variants = [(1, False, "axis1"), (1, True, "axis1_keepdims"),
                ((0, 1), False, "axes01"), ((0, 1), True, "axes01_keepdims")]
    facts = []

    def body(w):
        w.comment("""\
jnp.var(x, axis, keepdims=...) with ddof=0, x (16, 8); int32 input gives a float32 result
(_var_promote_types: to_inexact_dtype(int32) = float32; the cast happens BEFORE the mean).
The exact composition (jax/_src/numpy/reductions.py _var, real dtypes), n = number of reduced
elements, as float32:
    x = x.astype(float32)
    mean = lax.div(jnp.sum(x, axis, keepdims=True), n)          # jnp.mean: sum / count
    centered = lax.square(lax.sub(x, mean))                      # real input: square, not x*conj(x)
    var = lax.div(jnp.sum(centered, axis, keepdims=keepdims), n - ddof)
    var = where(n - ddof > 0, var, nan)
i.e. two-pass (mean of squared deviations); XLA turns the divisions by n = 8 / 128 into
multiplications by 1/n (exact: powers of two).
out_<v>          = jax.jit(jnp.var) -- what JAX gives.  XLA:CPU fuses sub, square and the second
                   sum, and LLVM contracts square + add into FMAs (on an FMA CPU).
out_unfused_<v>  = the same ops run one by one (jax.disable_jit: no fusion, no FMA): the target
                   for a composition of separately-evaluated tessel ops.
ref_f64_<v>      = numpy float64 variance of the float32 inputs.
Variants <v>: axis1 (16,), axis1_keepdims (16,1), axes01 (), axes01_keepdims (1,1).""")
        for name, x in inputs:
            w.case(name, op="var", ddof=0, dtype=x.dtype.name,
                   variants="axis1,axis1_keepdims,axes01,axes01_keepdims")
            w.tensor(name, "x", x)
            for axis, keep, tag in variants:
                f = (lambda v, a=axis, k=keep: jnp.var(v, axis=a, keepdims=k))
                r = run(f, x)
                assert r.dtype == np.float32, r.dtype
                assert bits_eq(r, run(lambda v, a=axis, k=keep: var_composition(v, a, k), x))
                u = run_unfused(f, x)
                assert bits_eq(u, run_unfused(
                    lambda v, a=axis, k=keep: var_composition(v, a, k), x))
                w.tensor(name, f"out_{tag}", r)
                w.tensor(name, f"out_unfused_{tag}", u)
                w.tensor(name, f"ref_f64_{tag}", np.asarray(x, np.float64).var(
                    axis=axis, keepdims=keep))
                if keep:
                    continue
                seq = var_seq_f32(x, axis).reshape(r.shape)
                fact = dict(case=name, v=tag, fused_vs_unfused_ulp=max_ulp(r, u),
                            unfused_is_seq=bits_eq(u, seq), fused_vs_seq_ulp=max_ulp(r, seq),
                            ref_ulp=max_ulp(r, np.asarray(x, np.float64).var(axis=axis)
                                            .astype(F32)))
                if axis == 1 and name != "var_f32_special":
                    fact["fused_is_fma_chain"] = bits_eq(r, var_seq_f32(x, 1, fma=True))
                facts.append(fact)
        for fact in facts:
            w.comment(" ".join(f"{k}={v}" for k, v in fact.items()))

    write_file("var.txt", "jnp.var (ddof=0) float32 and int32 input", body)
    return facts


# ----------------------------------------------------------------------------------------- norms

EPS = 1e-6   # flax.linen.LayerNorm / RMSNorm default epsilon


def layer_norm_fast(x, scale, bias, eps=EPS):
    """flax.linen.LayerNorm() defaults (use_fast_variance=True, reduction/feature axis -1,
    force_float32_reductions=True), flax 0.12.8 _compute_stats + _normalize."""
    mu = jnp.mean(x, (1,))
    mu2 = jnp.mean(lax.square(x), (1,))
    var = jnp.maximum(0.0, mu2 - lax.square(mu))
    y = x - jnp.expand_dims(mu, (1,))
    mul = lax.rsqrt(jnp.expand_dims(var, (1,)) + eps)
    mul = mul * scale
    y = y * mul
    y = y + bias
    return y


def layer_norm_two_pass(x, scale, bias, eps=EPS):
    """flax.linen.LayerNorm(use_fast_variance=False)."""
    mu = jnp.mean(x, (1,))
    var = jnp.mean(lax.square(x - jnp.expand_dims(mu, (1,))), (1,))
    y = x - jnp.expand_dims(mu, (1,))
    mul = lax.rsqrt(jnp.expand_dims(var, (1,)) + eps)
    mul = mul * scale
    y = y * mul
    y = y + bias
    return y


def rms_norm(x, scale, eps=EPS):
    """flax.linen.RMSNorm() defaults (use_mean=False: var = mean(x^2), mean = zeros)."""
    var = jnp.mean(lax.square(x), (1,))
    mu = jnp.zeros_like(var)
    y = x - jnp.expand_dims(mu, (1,))
    mul = lax.rsqrt(jnp.expand_dims(var, (1,)) + eps)
    mul = mul * scale
    y = y * mul
    return y


def ln_ref64(x, scale, bias, eps=EPS):
    x = np.asarray(x, np.float64)
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * scale.astype(np.float64) + bias.astype(np.float64)


def rms_ref64(x, scale, eps=EPS):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(1, keepdims=True) + eps) * scale.astype(np.float64)


def flax_check(x, scale, bias, outs):
    try:
        import flax
        import flax.linen as nn
    except ImportError:
        return "flax was not importable, so the compositions were not re-checked against flax"
    p = {"params": {"scale": scale, "bias": bias}}
    mods = {"layer_norm": (nn.LayerNorm(), p),
            "layer_norm_two_pass": (nn.LayerNorm(use_fast_variance=False), p),
            "rms_norm": (nn.RMSNorm(), {"params": {"scale": scale}})}
    for k, (m, v) in mods.items():
        assert m.epsilon == EPS
        got = np.asarray(jax.jit(lambda a, m=m, v=v: m.apply(v, a))(x))
        assert bits_eq(got, outs[k]), k
    return (f"checked: jax.jit of flax {flax.__version__} nn.LayerNorm(), "
            f"nn.LayerNorm(use_fast_variance=False) and nn.RMSNorm() apply() equal the fused "
            f"outputs bit for bit")


def write_norms():
    rng = np.random.default_rng(20250205)
    x = rng.standard_normal((8, 64)).astype(F32)
    x[1] = (x[1] * F32(4.0) + F32(2.0)).astype(F32)
    x[2] = (F32(100.0) + x[2] * F32(0.01)).astype(F32)   # large mean, tiny spread: fast variance
    x[3] = F32(0.75)                                       # constant row: var 0 -> rsqrt(eps)
    x[4] = (x[4] * F32(1e3)).astype(F32)
    x[5] = (x[5] * F32(1e-3)).astype(F32)                 # var ~ 1e-6 ~ eps
    scale = (F32(1.0) + F32(0.1) * rng.standard_normal(64).astype(F32)).astype(F32)
    bias = (F32(0.1) * rng.standard_normal(64).astype(F32)).astype(F32)
    fns = {"layer_norm": (layer_norm_fast, (x, scale, bias)),
           "layer_norm_two_pass": (layer_norm_two_pass, (x, scale, bias)),
           "rms_norm": (rms_norm, (x, scale))}
    outs = {k: run(f, *a) for k, (f, a) in fns.items()}
    unfused = {k: run_unfused(f, *a) for k, (f, a) in fns.items()}
    for v in list(outs.values()) + list(unfused.values()):
        assert v.dtype == np.float32
    # constant row 3: var 0 (also E[x^2] - E[x]^2 = 0 exactly), y = 0 * mul + bias = bias
    assert bits_eq(outs["layer_norm"][3], bias) and bits_eq(outs["layer_norm_two_pass"][3], bias)
    flax_note = flax_check(x, scale, bias, outs)
    refs = {"layer_norm": ln_ref64(x, scale, bias), "layer_norm_two_pass": ln_ref64(x, scale, bias),
            "rms_norm": rms_ref64(x, scale)}
    normal_rows = [0, 1, 6, 7]
    facts = []
    for k in outs:
        ref = refs[k]
        facts.append(dict(
            out=k, fused_vs_unfused_ulp=max_ulp(outs[k], unfused[k]),
            fused_max_abs_err_rows_0_1_6_7=f"{np.abs(outs[k][normal_rows] - ref[normal_rows]).max():.3g}",
            unfused_max_abs_err_rows_0_1_6_7=f"{np.abs(unfused[k][normal_rows] - ref[normal_rows]).max():.3g}",
            fused_max_abs_err_row2=f"{np.abs(outs[k][2] - ref[2]).max():.3g}",
            fused_max_abs_err_all=f"{np.abs(outs[k] - ref).max():.3g}"))

    def body(w):
        w.comment(f"""\
Flax (0.12.8, flax/linen/normalization.py) LayerNorm and RMSNorm over the last axis of x (8, 64)
float32 with scale (64,) and bias (64,); epsilon = 1e-6 (the default of both; float32 bits
358637bd; a weakly-typed Python float, so the add is float32).
LayerNorm() defaults to use_fast_variance=True, i.e. _compute_stats + _normalize are:
    mu  = jnp.mean(x, -1)                              # sum / 64
    mu2 = jnp.mean(lax.square(x), -1)
    var = jnp.maximum(0.0, mu2 - lax.square(mu))       # E[x^2] - E[x]^2, clipped at 0
    y   = x - mu[:, None]
    mul = lax.rsqrt(var[:, None] + eps)
    mul = mul * scale                                  # scale folded into the multiplier FIRST
    y   = y * mul
    y   = y + bias
  use_fast_variance=False: var = jnp.mean(lax.square(x - mu[:, None]), -1); the rest the same.
RMSNorm() (use_mean=False, use_fast_variance irrelevant): var = jnp.mean(lax.square(x), -1),
    mean = zeros;  y = (x - 0) * (lax.rsqrt(var[:, None] + eps) * scale)      (no bias)
Rows of x: 0, 6, 7 standard normal; 1 = 4 N + 2; 2 = 100 + 0.01 N (the fast variance cancels:
E[x^2] - E[x]^2 loses the ~1e-4 variance, compare out_layer_norm with out_layer_norm_two_pass);
3 constant 0.75 (var 0 -> rsqrt(eps) = 1000, y = bias); 4 = 1e3 N; 5 = 1e-3 N (var ~ eps).
out_<k>          one jax.jit of the composition (what Flax under jit gives)
out_unfused_<k>  the same ops one by one (jax.disable_jit: no fusion / FMA contraction)
ref_f64_<k>      numpy float64, exact two-pass formula (the same for both LayerNorm variants)
{flax_note}.""")
        for fact in facts:
            w.comment(" ".join(f"{k}={v}" for k, v in fact.items()))
        w.case("norms", op="layer_norm,rms_norm", axis=-1, epsilon="358637bd",
               outputs="layer_norm,layer_norm_two_pass,rms_norm")
        w.tensor("norms", "x", x)
        w.tensor("norms", "scale", scale)
        w.tensor("norms", "bias", bias)
        for k in outs:
            w.tensor("norms", f"out_{k}", outs[k])
            w.tensor("norms", f"out_unfused_{k}", unfused[k])
        w.tensor("norms", "ref_f64_layer_norm", refs["layer_norm"])
        w.tensor("norms", "ref_f64_rms_norm", refs["rms_norm"])

    assert np.float32(EPS).view(np.uint32) == 0x358637BD
    write_file("norms.txt", "Flax LayerNorm / RMSNorm compositions (float32)", body)
    return facts, flax_note


# -------------------------------------------------------------------------------- causal softmax

def causal_softmax(s):
    rows = lax.broadcasted_iota(jnp.int32, s.shape, 0)
    cols = lax.broadcasted_iota(jnp.int32, s.shape, 1)
    masked = jnp.where(rows >= cols, s, -jnp.inf)
    return jax.nn.softmax(masked, axis=-1)


def causal_softmax_composition(s):
    """jax.nn.softmax as jax/_src/nn/functions.py writes it (where=None, initial=-inf)."""
    rows = jnp.arange(s.shape[0], dtype=jnp.int32)[:, None]
    cols = jnp.arange(s.shape[1], dtype=jnp.int32)[None, :]
    masked = jnp.where(rows >= cols, s, -jnp.inf)
    x_max = jnp.max(masked, -1, keepdims=True, initial=-jnp.inf)
    unnormalized = jnp.exp(masked - x_max)
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


def softmax_ref64(s):
    s = np.asarray(s, np.float64)
    m = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    e = np.exp(m - m.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def write_causal_softmax():
    rng = np.random.default_rng(20250206)
    cases = [("causal_softmax_normal", (rng.standard_normal((16, 16)) * 2).astype(F32)),
             ("causal_softmax_large", (rng.standard_normal((16, 16)) * 100).astype(F32))]
    facts = []

    def body(w):
        w.comment("""\
s (16, 16) float32; out = jax.nn.softmax(jnp.where(iota_rows >= iota_cols, s, -inf), axis=-1)
with iota_rows / iota_cols = lax.broadcasted_iota(int32, (16, 16), 0 / 1) (jnp.arange(16)[:, None]
/ [None, :] gives the same bits).  jax.nn.softmax (jax/_src/nn/functions.py, where=None) is
    x_max = jnp.max(x, -1, keepdims=True, initial=-inf)
    unnormalized = jnp.exp(x - x_max)
    out = unnormalized / jnp.sum(unnormalized, -1, keepdims=True)      # a true division
Masked entries are exactly +0.0 (exp(-inf) = 0); row 0 is exactly 1.0 at column 0.
`large` (s ~ 100 N): many entries underflow to 0.
out = one jax.jit; ref_f64 = numpy float64.  The same ops run one by one (jax.disable_jit, no
fusion) give the same bits (fused_vs_unfused_ulp below; an out_unfused tensor is written only
where they differ).""")
        for name, s in cases:
            r = run(causal_softmax, s)
            assert r.dtype == np.float32
            assert bits_eq(r, run(causal_softmax_composition, s)), name
            u = run_unfused(causal_softmax, s)
            upper = ~np.tril(np.ones((16, 16), bool))
            assert np.all(r[upper].view(np.uint32) == 0) and r[0, 0] == 1.0
            ref = softmax_ref64(s)
            big = ref > 1e-30
            facts.append(dict(case=name, fused_vs_unfused_ulp=max_ulp(r, u),
                              max_abs_err=f"{np.abs(r - ref).max():.3g}",
                              max_rel_err_ref_above_1e_30=
                              f"{(np.abs(r - ref)[big] / ref[big]).max():.3g}"))
            w.comment(" ".join(f"{k}={v}" for k, v in facts[-1].items()))
            w.case(name, op="causal_softmax", axis=-1)
            w.tensor(name, "s", s)
            w.tensor(name, "out", r)
            if not bits_eq(r, u):
                w.tensor(name, "out_unfused", u)
            w.tensor(name, "ref_f64", ref)

    write_file("causal_softmax.txt", "causal-mask softmax (float32)", body)
    return facts


def main():
    np.seterr(all="ignore")    # the special inputs overflow / make NaNs on purpose
    assert jax.default_backend() == "cpu", "run with a CPU-only jax"
    assert not jax.config.jax_enable_x64
    write_take()
    write_take_modes()
    for row in write_cumsum():
        print("cumsum", row)
    write_argminmax()
    for row in write_var():
        print("var", row)
    facts, note = write_norms()
    for row in facts:
        print("norms", row)
    print(note)
    for row in write_causal_softmax():
        print("softmax", row)


if __name__ == "__main__":
    main()
