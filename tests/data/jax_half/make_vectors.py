#!/usr/bin/env python3
"""Generates the bfloat16 / float16 reference vectors in tests/data/jax_half (casts, elementwise
math over every 16-bit pattern, binary ops, fused chains, reductions, dtype promotion, jax.random
draws).  README.md next to this script states the rules found; the script asserts them, so a jax
whose behaviour changed makes it fail.

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
    /tmp/jaxenv/bin/python tests/data/jax_half/make_vectors.py [--exhaustive | --large]

It writes the files below next to itself (about 30 s on one core).  --exhaustive instead converts
all 2^32 float32 patterns to bfloat16 and float16 under jax.jit and compares them with numpy /
ml_dtypes (about 6 minutes on one core); --large checks the reduction models on (512,37),
(128,1000) and (64,4096) arrays.  Neither writes a file; they print the counts README.md quotes.
The vectors in the repository were made with jax 0.10.2 / jaxlib 0.10.2 / numpy 2.4.6 /
ml_dtypes 0.7.0 on an x86-64 AMD EPYC with AVX-512 (including avx512_bf16, no avx512_fp16), F16C
and FMA.  Every file starts with '#' header lines naming the versions and the backend.  The script
is deterministic (numpy default_rng with fixed seeds).  JAX runs with its defaults (x64 off);
int64 / float64 are used only inside `with jax.enable_x64(True):` blocks, which the blocks say.

Elementwise ops are evaluated under jax.jit on 1-D arrays padded to a multiple of 1024 elements
(padding value 1): XLA:CPU evaluates a short array tail with the C library instead of its vector
code (see tests/data/jax_math/make_vectors.py).  Reductions, dots and random draws are evaluated
at exactly the shapes listed (the shape decides XLA's summation order).

Format -- the block grammar of tests/data/jax_semantics and tests/data/jax_ops: whitespace
separated tokens, '#' lines are comments, a block is `<kind> <header words> <count>` followed by
<count> rows of a fixed number of tokens.  Values: bfloat16 / float16 = 4 hex digits (bit
pattern), float32 = 8 hex digits, float64 = 16 hex digits, integers and bools decimal.

casts.txt
  castsweep <from> <to> <start> <step> <count>
      followed by <count> results, 16 per line; the inputs are the <from> bit patterns
      start + i * step (mod 2^bits), i = 0 .. count-1 (start / step are hex of the <from> width).
      float32 -> bfloat16 and float32 -> float16 (32768 patterns over the whole float32 range),
      bfloat16 -> float16 and float16 -> bfloat16 (all 65536 patterns).
  cast <from> <to> <count>
      followed by <count> rows  <x> <result>  (x.astype(to) under jax.jit).  Pairs: float32 ->
      bfloat16 / float16 (zeros, infinities, NaNs with payloads and signs, rounding ties in the
      normal and subnormal ranges, largest finite, overflow, float32 subnormals), bfloat16 /
      float16 -> float32, -> int32 int8 uint8 bool, -> int64 (x64 on); int32 int8 uint8 bool ->
      bfloat16 / float16; int64 and float64 -> bfloat16 / float16 (x64 on).
      A comment line before a block says on how many rows numpy / ml_dtypes `astype` gives other
      bits, and lists them as `x jit numpy`.

math_bf16/<fn>.txt, math_f16/<fn>.txt  (one file per function: all functions in one file would
  be 3.9 MB)
  sweep 0000 0001 65536
      followed by 65536 result bit patterns, 16 per line; input i is the 16-bit pattern i.
  fn: exp log tanh erf logistic gelu sqrt rsqrt sin cos abs neg   (jnp.exp, jnp.log, jnp.tanh,
      jax.scipy.special.erf, jax.nn.sigmoid, jax.nn.gelu(approximate=True), jnp.sqrt,
      jax.lax.rsqrt, jnp.sin, jnp.cos, jnp.abs, jnp.negative)

binary_bf16.txt, binary_f16.txt
  binary <name> <count>   followed by <count> rows  <a> <b> <result>
      name: add sub mul div (jnp.true_divide) maximum minimum (jnp.maximum / jnp.minimum)
      pow (jnp.power); pairs: S x S for a special set S, then random values and bit patterns.

fusion.txt, reduce.txt, random.txt use the `case` / `tensor` kinds of tests/data/jax_ops:
  case <name> <count>                          rows: <key> <value>
  tensor <case> <role> <dtype> <shape> <count> rows: 1 value each, row-major; shape like (8,37)
  fusion.txt: per dtype, inputs x y z (2048,) and out_<chain> for each chain of
      fusion_chains() (one jax.jit each); the case rows give each chain's expression (expr_<c>),
      output dtype and model match counts (model_<c>_<model>).  Dots: a (8,300) @ b (300,16)
      with jnp.dot (out) and with preferred_element_type=float32 (out_f32).
  reduce.txt: per dtype and shape (8,37) (3,1000) (4096,): x, g, b and out_sum out_mean out_var
      out_max (axis -1), out_softmax (jax.nn.softmax, axis -1), out_layer_norm
      ((x - mean) * rsqrt(var + 1e-5) * g + b over the last axis), out_div_row_sum
      (x / jnp.sum(x, -1, keepdims=True)).
  random.txt:
    array <fn> <dtype> <k0> <k1> <shape> <minval> <maxval> <count>
        followed by <count> values (dtype bit patterns) in row-major order; fn uniform | normal;
        k0 k1 the key words (hex); shape like 16 3x5 1000; minval / maxval dtype bits
        (0000 0000 for normal).
promote.txt
  promote_types <x64 0|1> <count>   rows <a> <b> <jnp.promote_types(a, b)>
  add_dtype <x64 0|1> <count>       rows <a> <b> <dtype of jnp.zeros(4, a) + jnp.zeros(4, b)>
  array_dtype <x64 0|1> <count>     rows <requested> <dtype of jnp.zeros(4, requested)>
  weak <x64 0|1> <count>            rows <a> <expr> <result dtype> <weak_type 0|1>
      expr: x*2.0 x+1 x*True x*np.float32(2)  for x = jnp.zeros(4, a)

Every file carries '#' comments with the match counts of the rounding models checked (the XLA
model, which the script asserts, and the alternatives it rules out).
"""

import os
import sys
import warnings

import numpy as np
import ml_dtypes

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vector_header  # noqa: E402  (tests/data/vector_header.py)

OUT = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "tests/data/jax_half/make_vectors.py"

F32 = np.float32
F64 = np.float64
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
HALVES = (BF16, F16)
SHORT = {BF16: "bf16", F16: "f16"}

warnings.filterwarnings("ignore", category=RuntimeWarning)
warnings.filterwarnings("ignore", message=".*Explicitly requested dtype.*")


# ------------------------------------------------------------------------------------- writing

def shape_tok(s):
    if len(s) == 1:
        return f"({s[0]},)"
    return "(" + ",".join(str(d) for d in s) + ")"


def toks(a):
    a = np.asarray(a)
    if a.dtype in (BF16, F16):
        return [f"{int(v):04x}" for v in a.reshape(-1).view(np.uint16)]
    if a.dtype == np.float32:
        return [f"{int(v):08x}" for v in a.reshape(-1).view(np.uint32)]
    if a.dtype == np.float64:
        return [f"{int(v):016x}" for v in a.reshape(-1).view(np.uint64)]
    if a.dtype.kind in "iub":
        return [str(int(v)) for v in a.reshape(-1)]
    raise TypeError(a.dtype)


class Writer:
    def __init__(self, fh):
        self.fh = fh

    def comment(self, text):
        for line in text.strip("\n").splitlines():
            self.fh.write(f"# {line}".rstrip() + "\n")

    def block(self, kind, header, rows):
        self.fh.write(" ".join([kind] + [str(h) for h in header] + [str(len(rows))]) + "\n")
        for r in rows:
            self.fh.write(" ".join(str(t) for t in r) + "\n")

    def values(self, head, values, per=16):
        self.fh.write(head + "\n")
        for i in range(0, len(values), per):
            self.fh.write(" ".join(values[i:i + per]) + "\n")

    def case(self, name, **attrs):
        self.fh.write(f"case {name} {len(attrs)}\n")
        for k, v in attrs.items():
            self.fh.write(f"{k} {v}\n")

    def tensor(self, case, role, a):
        a = np.asarray(a)
        t = toks(a)
        assert len(t) == max(1, a.size)
        self.values(f"tensor {case} {role} {a.dtype.name} {shape_tok(a.shape)} {len(t)}", t,
                    per=16 if a.dtype.itemsize == 2 else 8)


def write_file(name, what, body, x64_note=""):
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        vector_header.header(fh, what, SCRIPT,
                             f", ml_dtypes {ml_dtypes.__version__}{x64_note}")
        body(Writer(fh))
    print(path, os.path.getsize(path), "bytes")


# ---------------------------------------------------------------------------------- evaluation

def evaluate(f, *cols):
    """f under jax.jit over 1-D columns padded (with 1) to a multiple of 1024 elements."""
    cols = [np.asarray(c) for c in cols]
    n = cols[0].size
    pad = (-n) % 1024
    padded = [np.concatenate([c.reshape(-1), np.ones(pad, c.dtype)]) for c in cols]
    return np.asarray(jax.jit(f)(*padded))[:n]


def run(f, *args):
    """f under jax.jit at the arguments' own shapes."""
    return np.asarray(jax.jit(f)(*[jnp.asarray(a) for a in args]))


def xla32(f, *cols):
    """XLA's float32 f, elementwise (vector code), shaped like the first column."""
    shape = np.shape(cols[0])
    return evaluate(f, *[np.asarray(c, F32) for c in cols]).reshape(shape)


TINY = F32(2.0**-126)


def ftz(a):
    """XLA:CPU's flush-to-zero / denormals-are-zero on float32 values."""
    a = np.asarray(a, F32)
    return np.where((np.abs(a) < TINY) & (a != 0), np.copysign(F32(0), a), a).astype(F32)


def xla_max(a, b):
    """XLA maximum: NaN if either is NaN, and +0 > -0"""
    m = np.maximum(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a) & np.signbit(b), F32(-0.0), F32(0.0)), m).astype(F32)


def xla_min(a, b):
    """XLA minimum: NaN if either is NaN, and -0 < +0"""
    m = np.minimum(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a) | np.signbit(b), F32(-0.0), F32(0.0)), m).astype(F32)


def rnd(a, dt):
    """float32 -> dt (round to nearest even; ml_dtypes / numpy, equal to XLA off NaNs) -> float32"""
    return np.asarray(a, F32).astype(dt).astype(F32)


def same(a, b):
    """elementwise: equal bits, or both NaN (NaN payloads ignored)"""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype != b.dtype:
        a = a.astype(F64)
        b = b.astype(F64)
        return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    eq = a.view(u) == b.view(u)
    if a.dtype.kind == "f" or a.dtype in HALVES:
        eq |= np.isnan(a.astype(F32)) & np.isnan(b.astype(F32))
    return eq


def count_same(a, b):
    return int(np.sum(same(a, b)))


class Emu:
    """numpy emulation of XLA:CPU's arithmetic on dtype dt: every op computed in float32 (with
    FTZ/DAZ), its result rounded to dt (R)."""

    def __init__(self, dt):
        self.dt = dt

    def R(self, a):
        """round a float32 function result (XLA's convert keeps subnormals)"""
        return rnd(a, self.dt)

    def A(self, a):
        """round a float32 arithmetic result (flushed to zero first, as XLA:CPU's FTZ does)"""
        return rnd(ftz(a), self.dt)

    def up(self, x):
        """x converted to float32 as XLA does: exact, subnormals kept (its arithmetic flushes them,
        see ftz); a float16 NaN is made quiet (F16C), a bfloat16 NaN is kept as it is"""
        v = np.asarray(x).astype(F32)
        if np.asarray(x).dtype == F16:
            u = v.view(np.uint32)
            v = np.where(np.isnan(v), u | 0x00400000, u).astype(np.uint32).view(F32)
        return v

    def c(self, v):
        """a weakly-typed Python scalar: rounded to dt first"""
        return rnd(F32(v), self.dt)


def h16(v):
    return f"{int(v) & 0xFFFF:04x}"


def h32(v):
    return f"{int(v) & 0xFFFFFFFF:08x}"


def h64(v):
    return f"{int(v) & 0xFFFFFFFFFFFFFFFF:016x}"


def from16(bits, dt):
    return np.asarray(bits, np.uint32).astype(np.uint16).view(dt)


def from32(bits):
    return np.asarray(np.asarray(bits, np.uint64) & 0xFFFFFFFF, np.uint32).view(F32)


# ----------------------------------------------------------------------------------------- casts

def f32_cast_specials():
    b = [0x00000000, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FA00000, 0x7FC00001, 0x7FC12345,
         0x7FFFFFFF, 0x7F810000, 0x7FE00000, 0x7F802000, 0x7F801FFF, 0x7F7FFFFF,
         # bfloat16: largest finite 7f7f0000, the tie to inf 7f7f8000 and its neighbours
         0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7F8001, 0x7F7E8000,
         # float32 subnormals -> bfloat16 subnormals (not flushed) / float16 zero
         0x00000001, 0x00007FFF, 0x00008000, 0x00008001, 0x00018000, 0x0000FFFF, 0x00010000,
         0x00400000, 0x007F7FFF, 0x007F8000, 0x007FFFFF, 0x00800000]
    # bfloat16 ties and neighbours: kept half even / odd, low 16 bits around 0x8000
    for hi in (0x3F80, 0x3F81, 0x0080, 0x0081, 0x4B00, 0x4B01, 0x7F7E, 0x0000, 0x0001, 0x3DCC):
        for lo in (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF):
            b.append((hi << 16) | lo)
    # float16: 65504 (477fe000) is the largest finite; 65520 (477ff000) is the tie to inf
    f16_vals = [0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000, 0x47C35000,
                0x38800000, 0x387FF000, 0x387FE000, 0x387FEFFF,  # 2^-14 (smallest normal) ...
                0x33800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x33C00000, 0x34200000,
                0x34400000, 0x33400000, 0x38000000, 0x387FC000, 0x3E2AAAAB, 0x3DCCCCCD]
    b += f16_vals
    for base in (0x3F800000, 0x3F802000, 0x40000000, 0x46FFE000, 0x38800000, 0x38802000):
        for lo in (0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x3000, 0x2FFF, 0x3001):
            b.append(base + lo)
    # float16 subnormal ties: k * 2^-24 + 2^-25
    for k in (0, 1, 2, 3, 511, 1022, 1023):
        v = (k + 0.5) * 2.0**-24
        fb = int(np.float32(v).view(np.uint32))
        b += [fb - 1, fb, fb + 1]
    rng = np.random.default_rng(20250601)
    b += [int(v) for v in rng.standard_normal(40).astype(F32).view(np.uint32)]
    b += [int(v) for v in (rng.standard_normal(20) * 3e4).astype(F32).view(np.uint32)]
    b += [int(v) for v in rng.integers(0, 2**32, 40, dtype=np.uint64)]
    b = sorted(set(x & 0xFFFFFFFF for x in b) | set((x | 0x80000000) & 0xFFFFFFFF for x in b))
    return from32(b)


def half_specials(dt):
    if dt == BF16:
        b = [0x0000, 0x0001, 0x007F, 0x0080, 0x0081, 0x3F80, 0x3F81, 0x4000, 0x7F7F, 0x7F80,
             0x7F81, 0x7FA0, 0x7FBF, 0x7FC0, 0x7FC1, 0x7FFF, 0x477F, 0x4780, 0x4781, 0x3380,
             0x3300, 0x3381, 0x4B80, 0x4F00, 0x4EFF, 0x5F00, 0x5EFF, 0x42FE, 0x4300, 0x4301,
             0x437F, 0x4380, 0x3F00, 0x3FC0, 0x4020, 0x3F7F, 0x2000, 0x387F, 0x3880, 0x37FF]
    else:
        b = [0x0000, 0x0001, 0x0002, 0x03FF, 0x0400, 0x0401, 0x3C00, 0x3C01, 0x4000, 0x7BFF,
             0x7C00, 0x7C01, 0x7D00, 0x7DFF, 0x7E00, 0x7E01, 0x7FFF, 0x57F8, 0x57FA, 0x57FC,
             0x57FE, 0x5800, 0x5BFF, 0x5C00, 0x5C01, 0x3800, 0x3E00, 0x4100, 0x3BFF, 0x1400,
             0x0200, 0x0155]
    b = sorted(set(b) | set(x | 0x8000 for x in b))
    return from16(b, dt)


def numpy_diff_comment(w, xs, jit, ref, fmt_x, fmt_r, what="numpy / ml_dtypes astype"):
    assert jit.dtype == ref.dtype
    if jit.dtype.kind in "iub":
        d = jit != ref
    else:
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[jit.dtype.itemsize]
        d = jit.view(u) != ref.view(u)
    n = int(d.sum())
    if n == 0:
        w.comment(f"{what} gives the same bits on all {len(xs)} rows")
        return 0
    idx = np.nonzero(d)[0]
    shown = " ".join(f"{fmt_x(xs[i])}:{fmt_r(jit[i])}/{fmt_r(ref[i])}" for i in idx[:12])
    w.comment(f"{what} differs on {n} of {len(xs)} rows (x:jit/numpy): {shown}"
              + (" ..." if n > 12 else ""))
    return n


def fmt_of(dt):
    dt = np.dtype(dt)
    if dt in HALVES:
        return lambda v: h16(np.asarray(v).view(np.uint16))
    if dt == np.float32:
        return lambda v: h32(np.asarray(v).view(np.uint32))
    if dt == np.float64:
        return lambda v: h64(np.asarray(v).view(np.uint64))
    return lambda v: str(int(v))


def name_of(dt):
    return np.dtype(dt).name


def cast_block(w, xs, to, x64=False):
    to = np.dtype(to)
    if x64:
        with jax.enable_x64(True):
            r = evaluate(lambda v: v.astype(to), xs)
    else:
        r = evaluate(lambda v: v.astype(to), xs)
    assert r.dtype == to, (r.dtype, to)
    with np.errstate(all="ignore"):
        ref = np.asarray(xs).astype(to)
    fx, fr = fmt_of(xs.dtype), fmt_of(to)
    numpy_diff_comment(w, xs, r, ref, fx, fr)
    w.block("cast", [name_of(xs.dtype), name_of(to)], [(fx(x), fr(v)) for x, v in zip(xs, r)])
    return r


def write_casts():
    def body(w):
        w.comment("x.astype(<to>) under jax.jit (XLA:CPU); see README.md for the rules.")
        # ---- float32 -> half, sweeps
        start, step, count = 0x00001234, 0x0001FFFF, 32768
        inputs = ((start + np.arange(count, dtype=np.uint64) * step) & 0xFFFFFFFF).astype(np.uint32)
        x = inputs.view(F32)
        for dt in HALVES:
            r = evaluate(lambda v, dt=dt: v.astype(dt), x)
            ref = x.astype(dt)
            d = ~same(r, ref) | (r.view(np.uint16) != ref.view(np.uint16))
            nn = int(np.sum(d & ~np.isnan(x)))
            w.comment(f"float32 -> {dt.name} sweep: numpy / ml_dtypes astype gives other bits on "
                      f"{int(d.sum())} of {count} patterns, {nn} of them not NaN inputs")
            assert nn == 0
            w.values(f"castsweep float32 {dt.name} {h32(start)} {h32(step)} {count}", toks(r))
        # ---- half <-> half, all patterns
        allp = np.arange(65536, dtype=np.uint32).astype(np.uint16)
        for a, b in ((BF16, F16), (F16, BF16)):
            xs = allp.view(a)
            r = evaluate(lambda v, b=b: v.astype(b), xs)
            ref = xs.astype(b)
            d = r.view(np.uint16) != ref.view(np.uint16)
            via = xs.astype(F32).astype(b)
            dv = r.view(np.uint16) != via.view(np.uint16)
            nn = int(np.sum(d & ~np.isnan(xs.astype(F32))))
            w.comment(f"{a.name} -> {b.name}, all 65536 patterns: ml_dtypes direct astype differs on "
                      f"{int(d.sum())} ({nn} not NaN); numpy via float32 differs on {int(dv.sum())}")
            assert nn == 0
            w.values(f"castsweep {a.name} {b.name} 0000 0001 65536", toks(r))
        # ---- specials
        xs = f32_cast_specials()
        for dt in HALVES:
            cast_block(w, xs, dt)
        for dt in HALVES:
            hs = half_specials(dt)
            r = cast_block(w, hs, F32)
            if dt == BF16:
                allr = evaluate(lambda v: v.astype(jnp.float32), allp.view(BF16))
                assert np.all(allr.view(np.uint32) == allp.astype(np.uint32) << 16)
                w.comment("bfloat16 -> float32 on all 65536 patterns is bits << 16 (exact, NaNs "
                          "keep payload and signalling bit, subnormals kept); checked")
            else:
                allr = evaluate(lambda v: v.astype(jnp.float32), allp.view(F16))
                ref = allp.view(F16).astype(F32)
                nanin = np.isnan(ref)
                assert np.all(allr.view(np.uint32)[~nanin] == ref.view(np.uint32)[~nanin])
                q = (ref.view(np.uint32) | 0x00400000)
                assert np.all(allr.view(np.uint32)[nanin] == q[nanin])
                w.comment("float16 -> float32 on all 65536 patterns: exact (subnormals become "
                          "normal float32); a NaN keeps sign and payload (<< 13) and is made quiet "
                          "(| 00400000); checked")
        # ---- half -> integers
        for dt in HALVES:
            vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.99, -0.99, 1.5, 2.5, -1.5, -2.5,
                    -0.5, 127.0, 127.5, 128.0, -128.0, -128.5, -129.0, 255.0, 255.5, 256.0, -1.0,
                    300.0, -300.0, 32767.0, 32768.0, 65504.0, -65504.0, 1e5, 2.0**31, -2.0**31,
                    2.0**31 - 2.0**23, 2.0**40, -2.0**40, 2.0**63, -2.0**63, 2.0**63 - 2.0**55,
                    2.0**64, 1e30, -1e30, 3e38]
            hs = np.concatenate([np.asarray(vals, F32).astype(dt), half_specials(dt)])
            _, first = np.unique(hs.view(np.uint16), return_index=True)
            hs = hs[np.sort(first)]
            for to in (np.int32, np.int8, np.uint8, np.bool_):
                cast_block(w, hs, to)
            cast_block(w, hs, np.int64, x64=True)
        # ---- integers -> half
        i32 = np.asarray([0, 1, -1, 7, 255, 256, 257, 258, 259, 2049, 2050, 2051, 4097, 65504,
                          65519, 65520, 65535, 65536, -65520, 2**24 + 1, 2**25 + 2**17 + 1,
                          2**25 + 2**17, 2**25 + 2**17 - 1, -(2**25 + 2**17 + 1), 2**25 + 3 * 2**17,
                          2**30 + 2**22 + 1, 2**30 + 2**22, 2**31 - 1, -2**31, -2**31 + 1,
                          2**24 + 2**16 + 1, 0x7FC00000, 123456789, -987654321], np.int32)
        for dt in HALVES:
            r = cast_block(w, i32, dt)
            if dt == BF16:
                via = i32.astype(F32).astype(dt)
                assert np.array_equal(r.view(np.uint16), via.view(np.uint16))
                w.comment("int32 -> bfloat16 is int32 -> float32 -> bfloat16 (two roundings): "
                          "checked on the rows above")
        i8 = np.arange(-128, 128, dtype=np.int8)
        u8 = np.arange(0, 256, dtype=np.uint16).astype(np.uint8)
        bo = np.asarray([False, True])
        for dt in HALVES:
            for xs in (i8, u8, bo):
                cast_block(w, xs, dt)
        with jax.enable_x64(True):
            i64 = np.asarray([0, -1, 2**31, 2**40 + 2**32 + 1, 2**40 + 2**32, 2**63 - 1, -2**63,
                              2**25 + 2**17 + 1, 2**56 + 2**48 + 1, 65520, -65520, 1 << 62],
                             np.int64)
            f64 = np.asarray([0.0, -0.0, 1.0 + 2.0**-8 + 2.0**-40, 1.0 + 2.0**-8,
                              1.0 + 2.0**-11 + 2.0**-40, 1.0 + 2.0**-11, 65519.99999, 65520.0,
                              3.4e38, 3.5e38, 1e300, -1e300, 1e-300, 2.0**-133, 2.0**-134 * 1.5,
                              2.0**-25 * (1 + 2.0**-40), np.inf, np.nan], F64)
            f64 = np.concatenate([f64, np.asarray([0x7FF0000000000001, 0x7FF8000000000123,
                                                   0xFFF4000000000000], np.uint64).view(F64)])
            for dt in HALVES:
                r = cast_block(w, i64, dt, x64=True)
                via = i64.astype(F32).astype(dt)
                w.comment(f"int64 -> {dt.name} equals int64 -> float32 -> {dt.name} on "
                          f"{count_same(r, via)} of {len(i64)} rows")
            for dt in HALVES:
                r = cast_block(w, f64, dt, x64=True)
                via = f64.astype(F32).astype(dt)
                via_ftz = ftz(f64.astype(F32)).astype(dt)
                assert count_same(r, via_ftz) == len(f64)
                w.comment(f"float64 -> {dt.name} equals float64 -> float32 (subnormal results "
                          f"flushed to 0) -> {dt.name} on {count_same(r, via_ftz)} of {len(f64)} "
                          f"rows (NaN payloads ignored); without the flush on {count_same(r, via)}; "
                          f"direct ml_dtypes rounding on {count_same(r, f64.astype(dt))}")

    write_file("casts.txt", "dtype casts to / from bfloat16 and float16 (astype under jax.jit)",
               body, " (int64 / float64 only inside enable_x64 blocks)")


# ------------------------------------------------------------------------------------------ math

MATH = {
    "exp": jnp.exp,
    "log": jnp.log,
    "tanh": jnp.tanh,
    "erf": jax.scipy.special.erf,
    "logistic": jax.nn.sigmoid,
    "gelu": jax.nn.gelu,
    "sqrt": jnp.sqrt,
    "rsqrt": lax.rsqrt,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "abs": jnp.abs,
    "neg": jnp.negative,
}
PRIMITIVES = ("exp", "log", "tanh", "erf", "sqrt", "rsqrt", "sin", "cos")


def gelu_model(e, x):
    """jax.nn.gelu(approximate=True) as XLA runs it: x * (0.5 * (1 + tanh(c2 * (x + c1 * x^3)))),
    every op rounded, the constants rounded to the dtype."""
    R, A = e.R, e.A
    x = ftz(x)
    c1, c2 = e.c(0.044715), e.c(np.sqrt(2 / np.pi))
    x3 = A(A(x * x) * x)
    inner = A(x + A(x3 * c1))
    t = R(xla32(jnp.tanh, A(inner * c2)))
    return A(x * A(A(t + F32(1)) * F32(0.5)))


def sigmoid_model(e, x):
    """jax.nn.sigmoid = 1 / (1 + exp(-x)), every op rounded"""
    R, A = e.R, e.A
    return A(F32(1) / A(F32(1) + R(xla32(jnp.exp, R(-x)))))


def write_math():
    allp = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    for dt in HALVES:
        e = Emu(dt)
        xs = allp.view(dt)
        x32 = e.up(xs)
        for name, f in MATH.items():
            r = evaluate(f, xs)
            assert r.dtype == dt, (name, r.dtype)
            notes = []
            if name in PRIMITIVES:
                m = e.R(xla32(f, x32))
                notes.append(f"round_to_{dt.name}(XLA float32 {name}(float32(x))) matches {count_same(r, m)}"
                             " of 65536 (NaN payloads ignored)")
                assert count_same(r, m) == 65536, name
            elif name == "logistic":
                m = sigmoid_model(e, x32)
                at_end = e.R(xla32(f, x32))
                notes.append(f"jax.nn.sigmoid lowers to neg, exp, add 1, divide 1/...; each op rounded "
                             f"to {dt.name} matches {count_same(r, m)} of 65536; one rounding of the "
                             f"float32 sigmoid matches {count_same(r, at_end)}")
                assert count_same(r, m) == 65536
            elif name == "gelu":
                m = gelu_model(e, x32)
                at_end = e.R(xla32(f, x32))
                notes.append(f"gelu is a chain of 9 ops with constants rounded to {dt.name}; each op "
                             f"rounded matches {count_same(r, m)} of 65536; one rounding of the "
                             f"float32 gelu matches {count_same(r, at_end)}")
                assert count_same(r, m) == 65536
            else:
                want = allp & 0x7FFF if name == "abs" else allp ^ 0x8000
                ok = int(np.sum(r.view(np.uint16) == want))
                op = 'x & 7fff' if name == 'abs' else 'x ^ 8000'
                if dt == F16:
                    notes.append(f"bit operation ({op}, NaNs included, subnormals kept) matches "
                                 f"{ok} of 65536")
                    assert ok == 65536
                else:
                    nan = np.isnan(xs.astype(F32))
                    want = np.where(nan, (want & 0x8000) | 0x7FC0, want).astype(np.uint16)
                    ok2 = int(np.sum(r.view(np.uint16) == want))
                    notes.append(f"bit operation ({op}, subnormals kept) matches {ok} of 65536; "
                                 "the others are NaNs, which come out as the canonical quiet NaN "
                                 f"7fc0 with the result's sign (sign of {op}): {ok2} of 65536 with that")
                    assert ok2 == 65536
            nan_in = np.isnan(x32) | np.isnan(xs.astype(F32))
            nan_out = np.isnan(r.astype(F32))
            nan_bits = sorted(set(int(v) for v in r.view(np.uint16)[nan_out]))
            notes.append(f"NaN results: {int(nan_out.sum())} ({int((nan_out & nan_in).sum())} from "
                         f"NaN inputs); their bit patterns: "
                         + (" ".join(h16(v) for v in nan_bits[:8]) + (" ..." if len(nan_bits) > 8 else "")))

            def body(w, r=r, notes=notes, name=name, dt=dt):
                w.comment(f"{name} on {dt.name}: all 65536 input bit patterns -> result bits "
                          "(jax.jit, arrays padded to a multiple of 1024)")
                for n in notes:
                    w.comment(n)
                w.values("sweep 0000 0001 65536", toks(r))

            write_file(os.path.join(f"math_{SHORT[dt]}", f"{name}.txt"),
                       f"{name}: {dt.name} input bits -> result bits", body)


# ---------------------------------------------------------------------------------------- binary

BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.true_divide,
    "maximum": jnp.maximum, "minimum": jnp.minimum, "pow": jnp.power,
}


def binary_pairs(dt, rng):
    if dt == BF16:
        s = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FA0, 0x3F80, 0xBF80, 0x3F00,
             0x4000, 0xC020, 0x4040, 0x7F7F, 0xFF7F, 0x0080, 0x8080, 0x0001, 0x8001, 0x007F,
             0x4B80, 0x3DCD, 0x5F80, 0x1F80]
    else:
        s = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D00, 0x3C00, 0xBC00, 0x3800,
             0x4000, 0xC100, 0x4200, 0x7BFF, 0xFBFF, 0x0400, 0x8400, 0x0001, 0x8001, 0x03FF,
             0x5BFF, 0x2E66, 0x5C00, 0x1C00]
    s = np.asarray(s, np.uint16)
    a = [np.repeat(s, len(s))]
    b = [np.tile(s, len(s))]

    def add(x, y):
        a.append(np.asarray(x, F32).astype(dt).view(np.uint16))
        b.append(np.asarray(y, F32).astype(dt).view(np.uint16))

    n = 400
    add(rng.standard_normal(n) * 4, rng.standard_normal(n) * 4)
    big = 3e4 if dt == F16 else 1e37
    add(rng.uniform(-big, big, n), rng.uniform(-big, big, n) / 4)     # overflow edges
    add(rng.uniform(0.0, 4.0, n), rng.uniform(-8.0, 8.0, n))          # pow range
    add(np.exp(rng.uniform(-8, 8, n)), rng.uniform(-3.0, 3.0, n))
    add(-rng.uniform(0, 10, 100), np.round(rng.uniform(-9, 9, 100)))  # negative base, integer y
    x = rng.standard_normal(200)
    add(x, x * (1 + rng.uniform(-0.01, 0.01, 200)))                   # cancellation
    add(rng.standard_normal(200) * 1e-3, rng.standard_normal(200) * 1e-3)
    a.append(rng.integers(0, 65536, 400, dtype=np.uint32).astype(np.uint16))
    b.append(rng.integers(0, 65536, 400, dtype=np.uint32).astype(np.uint16))
    return np.concatenate(a).view(dt), np.concatenate(b).view(dt)


def write_binary():
    for dt, seed in ((BF16, 20250602), (F16, 20250603)):
        rng = np.random.default_rng(seed)
        a, b = binary_pairs(dt, rng)
        e = Emu(dt)
        a32, b32 = e.up(a), e.up(b)
        ad, bd = ftz(a32), ftz(b32)

        def body(w, dt=dt, a=a, b=b, a32=a32, b32=b32, ad=ad, bd=bd, e=e):
            w.comment(f"{dt.name} x {dt.name} -> {dt.name} under jax.jit; a b result (bit patterns)")
            w.comment("model: the float32 op on float32(a), float32(b) with FTZ/DAZ, rounded to "
                      f"{dt.name} (pow: XLA's float32 pow); match counts (NaN payloads ignored):")
            for name, f in BINARY.items():
                r = evaluate(f, a, b)
                assert r.dtype == dt, (name, r.dtype)
                with np.errstate(all="ignore"):
                    if name == "pow":
                        m = e.R(xla32(jnp.power, a32, b32))
                    elif name == "maximum":
                        m = e.A(xla_max(ad, bd))
                    elif name == "minimum":
                        m = e.A(xla_min(ad, bd))
                    else:
                        m = e.A({"add": np.add, "sub": np.subtract, "mul": np.multiply,
                                 "div": np.divide}[name](ad, bd))
                k = count_same(r, m)
                assert k == len(a), (dt, name, k)
                w.comment(f"  {name}: {k} of {len(a)}")
                w.block("binary", [name], [(h16(x), h16(y), h16(v)) for x, y, v in
                                           zip(a.view(np.uint16), b.view(np.uint16),
                                               r.view(np.uint16))])

        write_file(f"binary_{SHORT[dt]}.txt",
                   f"{dt.name} binary ops: add sub mul div maximum minimum pow", body)


# ---------------------------------------------------------------------------------------- fusion

def fusion_inputs(dt, rng, n=2048):
    cols = []
    for k in range(3):
        v = rng.standard_normal(n) * 2
        wide = np.sign(rng.standard_normal(200)) * 10.0 ** rng.uniform(-3, 3, 200)
        v[1600:1800] = wide
        sp = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 3.0, -3.0, 1e-3, 100.0,
              float(ml_dtypes.finfo(dt).max), -float(ml_dtypes.finfo(dt).max), 2.0 ** -14, 60.0]
        sp = sp[k:] + sp[:k]
        v[1800:1800 + len(sp)] = sp
        cols.append(np.asarray(v, F32).astype(dt))
    return cols


def fusion_chains(dt):
    """(name, expression, f, {model: numpy emulation}); the first model is XLA's."""
    e = Emu(dt)
    R = e.A  # inputs here hold no subnormals; A (FTZ then round) is right for every op
    T = lambda a: xla32(jnp.tanh, a)  # noqa: E731
    E = lambda a: xla32(jnp.exp, a)   # noqa: E731
    third = F32(1) / F32(3)
    k3 = third if dt == BF16 else R(third)
    bf = dt == BF16
    return [
        ("c1", "tanh(x*y+1)*0.5-x/3", lambda x, y, z: jnp.tanh(x * y + 1) * 0.5 - x / 3,
         lambda x, y, z: {
             "per_op_x_times_recip3": R(R(R(T(R(R(x * y) + 1))) * F32(0.5)) - R(x * k3)),
             "per_op_true_div": R(R(R(T(R(R(x * y) + 1))) * F32(0.5)) - R(x / F32(3))),
             "at_end": R(T(ftz(x * y) + 1) * F32(0.5) - x * third)}),
        ("c2", "exp(x)*x+y", lambda x, y, z: jnp.exp(x) * x + y,
         lambda x, y, z: {"per_op": R(R(R(E(x)) * x) + y), "at_end": R(ftz(E(x) * x) + y),
                          "at_end_fma": R((E(x).astype(F64) * x + y).astype(F32))}),
        ("c3", "x*y+z", lambda x, y, z: x * y + z,
         lambda x, y, z: {"per_op": R(R(x * y) + z), "at_end": R(ftz(x * y) + z)}),
        ("c4", "gelu(x)*y", lambda x, y, z: jax.nn.gelu(x) * y,
         lambda x, y, z: {"per_op": R(gelu_model(e, x) * y),
                          "at_end": R(xla32(jax.nn.gelu, x) * y)}),
        ("c5", "(x+y)+z", lambda x, y, z: (x + y) + z,
         lambda x, y, z: {"per_op": R(R(x + y) + z), "at_end": R((x + y) + z)}),
        ("c6", "x*0.1+0.3", lambda x, y, z: x * 0.1 + 0.3,
         lambda x, y, z: {"per_op_constants_rounded": R(R(x * e.c(0.1)) + e.c(0.3)),
                          "per_op_float32_constants": R(R(x * F32(0.1)) + F32(0.3)),
                          "at_end": R(x * F32(0.1) + F32(0.3))}),
        ("c7", "sigmoid(x)*y", lambda x, y, z: jax.nn.sigmoid(x) * y,
         lambda x, y, z: {"per_op": R(sigmoid_model(e, x) * y),
                          "at_end": R(xla32(jax.nn.sigmoid, x) * y)}),
        ("c8", "x*y+z*x", lambda x, y, z: x * y + z * x,
         lambda x, y, z: {"per_op": R(R(x * y) + R(z * x)), "at_end": R(ftz(x * y) + ftz(z * x))}),
        ("c9", "exp(x).astype(float32)*2", lambda x, y, z: jnp.exp(x).astype(jnp.float32) * 2,
         lambda x, y, z: ({"exp_not_rounded": E(x) * F32(2), "exp_rounded": R(E(x)) * F32(2)}
                          if bf else
                          {"exp_rounded": R(E(x)) * F32(2), "exp_not_rounded": E(x) * F32(2)})),
        ("c10", "(x*y).astype(float32)+z.astype(float32)",
         lambda x, y, z: (x * y).astype(jnp.float32) + z.astype(jnp.float32),
         lambda x, y, z: ({"product_not_rounded": ftz(x * y) + z, "product_rounded": R(x * y) + z}
                          if bf else
                          {"product_rounded": R(x * y) + z, "product_not_rounded": ftz(x * y) + z})),
        ("c11", "exp(x)/y", lambda x, y, z: jnp.exp(x) / y,
         lambda x, y, z: {"per_op": R(R(E(x)) / y), "at_end": R(E(x) / y)}),
        ("c12", "log(x*x+1)-sqrt(abs(y))", lambda x, y, z: jnp.log(x * x + 1) - jnp.sqrt(jnp.abs(y)),
         lambda x, y, z: {"per_op": R(R(xla32(jnp.log, R(R(x * x) + 1))) - R(xla32(jnp.sqrt, np.abs(y)))),
                          "at_end": R(xla32(jnp.log, ftz(x * x) + 1) - xla32(jnp.sqrt, np.abs(y)))}),
    ]


def dot_pairs_model(a32, b32):
    """avx512_bf16 VDPBF16PS order: along k in pairs, acc += a[k+1]*b[k+1], then acc += a[k]*b[k],
    every add rounded to float32 (the products are exact)."""
    k = a32.shape[1]
    if k % 2:
        a32 = np.pad(a32, ((0, 0), (0, 1)))
        b32 = np.pad(b32, ((0, 1), (0, 0)))
    acc = np.zeros((a32.shape[0], b32.shape[1]), F32)
    for i in range(0, a32.shape[1], 2):
        acc = ftz(acc + a32[:, i + 1:i + 2] * b32[i + 1:i + 2, :])
        acc = ftz(acc + a32[:, i:i + 1] * b32[i:i + 1, :])
    return acc


def write_fusion():
    def body(w):
        w.comment("Fused elementwise chains under ONE jax.jit each (XLA fuses each chain into one loop\n"
                  "fusion; 2048 = 2 x 1024 elements, so every element runs the vector code).  Inputs:\n"
                  "1600 of 2 N(0,1), 200 of +-10^U(-3,3), 16 specials (0 -0 inf -inf nan 1 -1 0.5 3\n"
                  "-3 1e-3 100 max -max 2^-14 60, rotated per input), the rest 2 N(0,1).\n"
                  "Models (numpy emulations; float32 math = XLA's float32 functions, FTZ/DAZ):\n"
                  "  per_op  every jnp op computed in float32 from the rounded operands, then rounded\n"
                  "          to the dtype (RNE); weak Python constants rounded to the dtype first\n"
                  "  at_end  the whole chain in float32, rounded once at the end\n"
                  "'model_<name> <count>' rows give how many of the 2048 outputs each model matches\n"
                  "(NaN payloads ignored); the first model is XLA's and is asserted to match all.")
        for dt, seed in ((BF16, 20250604), (F16, 20250605)):
            rng = np.random.default_rng(seed)
            x, y, z = fusion_inputs(dt, rng)
            e = Emu(dt)
            x32, y32, z32 = e.up(x), e.up(y), e.up(z)
            outs, attrs = {}, {}
            for name, expr, f, models in fusion_chains(dt):
                r = evaluate(f, x, y, z)
                with np.errstate(all="ignore"):
                    ms = models(x32, y32, z32)
                counts = {k: count_same(r.astype(F32), np.asarray(v, F32)) if r.dtype != F32
                          else count_same(r, np.asarray(v, F32)) for k, v in ms.items()}
                first = next(iter(counts))
                assert counts[first] == len(x), (dt, name, counts)
                attrs[f"expr_{name}"] = expr
                attrs[f"out_dtype_{name}"] = r.dtype.name
                for k, v in counts.items():
                    attrs[f"model_{name}_{k}"] = v
                outs[name] = r
            case = f"fusion_{dt.name}"
            w.case(case, dtype=dt.name, n=len(x), **attrs)
            w.tensor(case, "x", x)
            w.tensor(case, "y", y)
            w.tensor(case, "z", z)
            for name, r in outs.items():
                w.tensor(case, f"out_{name}", r)
        # dots
        w.comment("Dots: jnp.dot(a, b) with a (8,300), b (300,16) of the dtype, N(0,1) entries.\n"
                  "out      jnp.dot(a, b) -> dtype: XLA converts a, b to float32, runs its float32\n"
                  "         dot (the same kernel as a float32 jnp.dot) and rounds the result once.\n"
                  "out_f32  jnp.dot(a, b, preferred_element_type=float32).  float16: the float32 dot\n"
                  "         of the converted operands.  bfloat16: a native bf16 kernel (XNNPACK/YNN,\n"
                  "         avx512_bf16): along k in pairs, acc += a[k+1]*b[k+1] then acc += a[k]*b[k],\n"
                  "         each add rounded to float32 -- CPU dependent.")
        for dt, seed in ((BF16, 20250606), (F16, 20250607)):
            rng = np.random.default_rng(seed)
            a = rng.standard_normal((8, 300)).astype(F32).astype(dt)
            b = rng.standard_normal((300, 16)).astype(F32).astype(dt)
            a32, b32 = a.astype(F32), b.astype(F32)
            r = run(jnp.dot, a, b)
            rf = run(lambda p, q: jnp.dot(p, q, preferred_element_type=jnp.float32), a, b)
            assert r.dtype == dt and rf.dtype == F32
            dot32 = run(jnp.dot, a32, b32)
            exact = (a32.astype(F64) @ b32.astype(F64))
            m = {"f32_dot_then_round": count_same(r.astype(F32), rnd(dot32, dt)),
                 "exact_then_round": count_same(r.astype(F32), rnd(exact.astype(F32), dt))}
            assert m["f32_dot_then_round"] == r.size
            mf = {"f32_dot": count_same(rf, dot32), "pairs_model": count_same(rf, dot_pairs_model(a32, b32))}
            assert mf["pairs_model" if dt == BF16 else "f32_dot"] == rf.size, mf
            case = f"dot_{dt.name}"
            w.case(case, op="dot", a="(8,300)", b="(300,16)",
                   **{f"model_out_{k}": v for k, v in m.items()},
                   **{f"model_out_f32_{k}": v for k, v in mf.items()})
            w.tensor(case, "a", a)
            w.tensor(case, "b", b)
            w.tensor(case, "out", r)
            w.tensor(case, "out_f32", rf)

    write_file("fusion.txt", "fused bfloat16 / float16 chains and dots under jax.jit", body)


# ---------------------------------------------------------------------------------------- reduce

def layer_norm(x, g, b):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.var(x, -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


REDUCE = {
    "sum": lambda x: jnp.sum(x, -1),
    "mean": lambda x: jnp.mean(x, -1),
    "var": lambda x: jnp.var(x, -1),
    "max": lambda x: jnp.max(x, -1),
    "softmax": lambda x: jax.nn.softmax(x, -1),
    "div_row_sum": lambda x: x / jnp.sum(x, -1, keepdims=True),
}


def reduce_inputs(dt, shape, rng):
    if shape == (8, 37):
        n = 37
        rows = [rng.standard_normal(n) * 3, 100 + rng.standard_normal(n), rng.standard_normal(n) * 1e-3,
                50 + 0.1 * rng.standard_normal(n),
                (2000 * (1 + 0.1 * rng.standard_normal(n))) if dt == F16 else 1e37 * rng.standard_normal(n),
                rng.standard_normal(n), rng.standard_normal(n), np.full(n, 0.75)]
        rows[5][3] = np.inf
        rows[6][10] = np.nan
        x = np.stack(rows)
    elif shape == (3, 1000):
        x = np.stack([rng.standard_normal(1000), 10 + rng.standard_normal(1000),
                      rng.standard_normal(1000) * 0.01])
    else:
        x = rng.standard_normal(shape) * 2
    g = 1 + 0.1 * rng.standard_normal(shape[-1])
    b = 0.1 * rng.standard_normal(shape[-1])
    return [np.asarray(v, F32).astype(dt) for v in (x, g, b)]


def reduce_models(dt, x, g, b, shape):
    """{op: {model: emulation}}, XLA's first."""
    e = Emu(dt)
    R = e.A
    x32, g32, b32 = e.up(x), e.up(g), e.up(b)
    n = shape[-1]
    S = lambda a: run(lambda v: jnp.sum(v, -1, keepdims=True), np.asarray(a, F32))  # noqa: E731
    V = lambda a: run(lambda v: jnp.var(v, -1, keepdims=True), np.asarray(a, F32))  # noqa: E731
    E = lambda a: xla32(jnp.exp, a)  # noqa: E731
    sq = lambda a: a.reshape(a.shape[:-1])  # noqa: E731
    inv_n = F32(1) / F32(n)

    def seq(a):
        acc = np.zeros(a.shape[:-1] + (1,), F32)
        for i in range(a.shape[-1]):
            acc = R(acc + a[..., i:i + 1])
        return acc

    s32 = S(x32)
    m = {}
    m["sum"] = {"f32_accumulate_round_once": sq(R(s32)), "round_every_add": sq(seq(x32)),
                "exact_then_round": sq(R(x32.astype(F64).sum(-1, keepdims=True).astype(F32)))}
    m["mean"] = {"f32_sum_times_f32_recip_n": sq(R(s32 * inv_n)), "f32_sum_div_n": sq(R(s32 / F32(n)))}
    mean_d = R(s32 * inv_n)
    v_perop = R(seq(R(R(x32 - mean_d) * R(x32 - mean_d))) * inv_n)
    m["var"] = {"f32_var_round_once": sq(R(V(x32))), "per_op_in_dtype": sq(v_perop)}
    m["max"] = {"exact": sq(np.max(x32, -1, keepdims=True))}
    mx = np.max(x32, -1, keepdims=True)
    d = R(x32 - mx)
    e32 = E(d)
    if dt == BF16:
        xla_sm = R(R(e32) * (F32(1) / R(S(e32))))
    else:
        ed = R(e32)
        xla_sm = R(ed * R(F32(1) / R(S(ed))))
    ed = R(e32)
    if dt == BF16:
        other_sum = R(ed * (F32(1) / R(S(ed))))          # the sum over the rounded e
    else:
        other_sum = R(ed * R(F32(1) / R(S(e32))))       # the sum over the unrounded e
    m["softmax"] = {"xla": xla_sm,
                    "sum_over_" + ("rounded" if dt == BF16 else "unrounded") + "_e": other_sum,
                    "per_op_true_div": R(ed / R(S(ed))),
                    "at_end": R(run(lambda v: jax.nn.softmax(v, -1), x32))}
    if dt == BF16:
        xla_div = R(x32 * (F32(1) / R(s32)))
    else:
        xla_div = R(x32 * R(F32(1) / R(s32)))
    m["div_row_sum"] = {"xla": xla_div, "true_div": R(x32 / R(s32))}
    v = R(V(x32))
    rs = R(xla32(lax.rsqrt, R(v + e.c(1e-5))))
    ln = R(R(R(R(x32 - mean_d) * rs) * g32) + b32)
    m["layer_norm"] = {"xla": ln,
                       "at_end": R(run(layer_norm, x32, g32, b32))}
    return m


def write_reduce():
    def body(w):
        w.comment("Reductions over the last axis under jax.jit, at the shapes given (no padding).\n"
                  "layer_norm(x, g, b) = (x - mean(x,-1,keepdims)) * rsqrt(var(x,-1,keepdims) + 1e-5) * g + b\n"
                  "Models (numpy emulations with XLA's float32 sum / var / exp / rsqrt run on float32 copies;\n"
                  "R() = round to the dtype):\n"
                  "  sum   f32_accumulate_round_once  R(float32 sum in XLA's order)\n"
                  "        round_every_add            left to right, every partial sum rounded\n"
                  "        exact_then_round           R(float32(exact sum))\n"
                  "  mean  f32_sum_times_f32_recip_n  R(sum32 * float32(1/n))  (XLA turns /n into *(1/n))\n"
                  "  var   f32_var_round_once         R(jnp.var of the float32 copy)\n"
                  "  softmax xla  bf16: d = R(x - max); e = exp32(d); s = sum32(e) (e NOT rounded);\n"
                  "                     out = R(R(e) * (1 / R(s)))   (1/R(s) kept in float32)\n"
                  "               f16:  e = R(exp32(R(x - max))); s = sum32(e); out = R(e * R(1 / R(s)))\n"
                  "  div_row_sum xla  bf16: R(x * (1 / R(sum32)));  f16: R(x * R(1 / R(sum32)))\n"
                  "  layer_norm xla  m = R(sum32 * (1/n)); v = R(var32); rs = R(rsqrt32(R(v + R(1e-5))));\n"
                  "                  out = R(R(R(R(x - m) * rs) * g) + b)\n"
                  "'model_<op>_<model> <count>' rows: outputs matched (NaN payloads ignored); the first\n"
                  "model of each op is asserted to match all.  Row 4 of (8,37) overflows: float16 rows of\n"
                  "~2000 sum past 65504 (inf only after the float32 sum), bfloat16 rows of 1e37 N(0,1).\n"
                  "(8,37) row 5 holds +inf, row 6 a NaN, row 7 is constant 0.75 (var 0).")
        for dt, seed in ((BF16, 20250608), (F16, 20250609)):
            rng = np.random.default_rng(seed)
            for shape in ((8, 37), (3, 1000), (4096,)):
                x, g, b = reduce_inputs(dt, shape, rng)
                outs, attrs = {}, {}
                models = reduce_models(dt, x, g, b, shape)
                for op in list(REDUCE) + ["layer_norm"]:
                    r = run(REDUCE[op], x) if op != "layer_norm" else run(layer_norm, x, g, b)
                    assert r.dtype == dt, (op, r.dtype)
                    outs[op] = r
                    for k, v in models[op].items():
                        attrs[f"model_{op}_{k}"] = count_same(r.astype(F32), np.asarray(v, F32).reshape(r.shape))
                    first = next(iter(models[op]))
                    assert attrs[f"model_{op}_{first}"] == r.size, (dt, shape, op, attrs)
                case = f"reduce_{dt.name}_{'x'.join(str(s) for s in shape)}"
                w.case(case, dtype=dt.name, shape=shape_tok(shape), axis=-1,
                       epsilon=h16(np.asarray(1e-5, F32).astype(dt).view(np.uint16)), **attrs)
                w.tensor(case, "x", x)
                w.tensor(case, "g", g)
                w.tensor(case, "b", b)
                for op, r in outs.items():
                    w.tensor(case, f"out_{op}", r)

    write_file("reduce.txt", "bfloat16 / float16 reductions, softmax, layer norm under jax.jit", body)


# --------------------------------------------------------------------------------------- promote

PROMOTE_NAMES = ["bool", "int8", "uint8", "int32", "int64", "bfloat16", "float16", "float32",
                 "float64"]


def write_promote():
    def body(w):
        w.comment("dtype names as jnp.dtype(...).name.  x64 0 = JAX's default (jax_enable_x64 off),\n"
                  "x64 1 = inside jax.enable_x64(True).  add_dtype / weak use jnp.zeros(4, a), so with\n"
                  "x64 off an int64 / float64 request already gives an int32 / float32 array\n"
                  "(array_dtype): promote_types still answers int64 / float64, the arrays never are.")
        for x64 in (False, True):
            with jax.enable_x64(x64):
                rows = [(a, bb, jnp.promote_types(a, bb).name) for a in PROMOTE_NAMES for bb in PROMOTE_NAMES]
                w.block("promote_types", [int(x64)], rows)
                rows = [(a, jnp.zeros(4, a).dtype.name) for a in PROMOTE_NAMES]
                w.block("array_dtype", [int(x64)], rows)
                rows = []
                for a in PROMOTE_NAMES:
                    for bb in PROMOTE_NAMES:
                        r = jax.jit(lambda u, v: u + v)(jnp.zeros(4, a), jnp.zeros(4, bb))
                        rows.append((a, bb, r.dtype.name))
                w.block("add_dtype", [int(x64)], rows)
                rows = []
                for a in PROMOTE_NAMES:
                    xa = jnp.zeros(4, a)
                    for expr, f in (("x*2.0", lambda v: v * 2.0), ("x+1", lambda v: v + 1),
                                    ("x*True", lambda v: v * True),
                                    ("x*np.float32(2)", lambda v: v * np.float32(2))):
                        r = f(xa)
                        rows.append((a, expr, r.dtype.name, int(r.weak_type)))
                w.block("weak", [int(x64)], rows)
        with jax.enable_x64(False):
            v = jnp.asarray(np.asarray([2**40 + 5, -1, 2**31], np.int64))
            w.comment(f"x64 off: jnp.asarray(np.int64 [2**40+5, -1, 2**31]) -> {v.dtype.name} "
                      f"{[int(t) for t in v]} (wraps modulo 2^32)")

    write_file("promote.txt", "dtype promotion with bfloat16 / float16 / small ints", body,
               " (x64 1 blocks inside enable_x64)")


# ---------------------------------------------------------------------------------------- random

def random_model(key, shape, dt, minval=0.0, maxval=1.0, normal=False):
    """jax.random.uniform / normal for a 16-bit float dtype, from the float32 draw's bits."""
    e = Emu(dt)
    R = e.A
    nmant = ml_dtypes.finfo(dt).nmant
    rng_bits = 8 if nmant < 8 else 16
    w32 = np.asarray(jax.random.bits(key, shape, jnp.uint32)).astype(np.uint32)
    bits = w32 & ((1 << rng_bits) - 1)
    one = int(np.asarray(1.0, dt).view(np.uint16))
    f = from16((bits >> (rng_bits - nmant)) | one, dt).astype(F32) - F32(1)
    if normal:
        lo = np.nextafter(np.asarray(-1.0, dt), np.asarray(0.0, dt)).astype(F32)
        minval, maxval = lo, F32(1)
    mn, mx = e.c(minval), e.c(maxval)
    u = np.maximum(mn, R(R(f * R(mx - mn)) + mn))
    if not normal:
        return u
    return R(e.c(np.sqrt(2)) * R(xla32(jax.scipy.special.erfinv, u)))


def write_random():
    def body(w):
        w.comment("jax.random.uniform(key, shape, dtype[, minval, maxval]) and jax.random.normal(key, shape,\n"
                  "dtype) for dtype bfloat16 / float16, threefry2x32, jax_threefry_partitionable=True.\n"
                  "Each value is asserted equal to the emulation in make_vectors.py::random_model (README).")
        for dt in HALVES:
            for seed in (0, 42):
                key = jax.random.PRNGKey(seed)
                k0, k1 = (int(v) for v in np.asarray(key))
                for shape in ((16,), (3, 5), (1000,)):
                    for fn, mn, mx in (("uniform", 0.0, 1.0), ("normal", None, None)):
                        if fn == "uniform":
                            r = np.asarray(jax.random.uniform(key, shape, dt))
                            m = random_model(key, shape, dt)
                            lo, hi = (h16(np.asarray(v, F32).astype(dt).view(np.uint16)) for v in (mn, mx))
                        else:
                            r = np.asarray(jax.random.normal(key, shape, dt))
                            m = random_model(key, shape, dt, normal=True)
                            lo, hi = "0000", "0000"
                        assert r.dtype == dt
                        assert count_same(r.astype(F32), m) == r.size, (dt, seed, shape, fn)
                        w.values(f"array {fn} {dt.name} {h32(k0)} {h32(k1)} {'x'.join(map(str, shape))} "
                                 f"{lo} {hi} {r.size}", toks(r))
                shape = (1000,)
                r = np.asarray(jax.random.uniform(key, shape, dt, -3.0, 7.5))
                m = random_model(key, shape, dt, -3.0, 7.5)
                assert count_same(r.astype(F32), m) == r.size
                lo, hi = (h16(np.asarray(v, F32).astype(dt).view(np.uint16)) for v in (-3.0, 7.5))
                w.values(f"array uniform {dt.name} {h32(k0)} {h32(k1)} 1000 {lo} {hi} {r.size}", toks(r))

    write_file("random.txt", "jax.random.uniform / normal with dtype bfloat16 / float16", body,
               f", jax_threefry_partitionable={jax.config.jax_threefry_partitionable}")


# ------------------------------------------------------------------------------------ exhaustive

def exhaustive_check():
    """All 2^32 float32 patterns -> bfloat16 / float16 under jax.jit vs numpy / ml_dtypes."""
    chunk = 1 << 24
    fb = jax.jit(lambda v: lax.bitcast_convert_type(v.astype(jnp.bfloat16), jnp.uint16))
    fh = jax.jit(lambda v: lax.bitcast_convert_type(v.astype(jnp.float16), jnp.uint16))
    base = np.arange(chunk, dtype=np.uint32)
    res = {"bfloat16": [0, 0], "float16": [0, 0]}
    for c in range(1 << 32 >> 24):
        b = base + np.uint32(c * chunk)
        x = b.view(F32)
        nan = np.isnan(x)
        for name, f, dt in (("bfloat16", fb, BF16), ("float16", fh, F16)):
            d = np.asarray(f(x)) != x.astype(dt).view(np.uint16)
            res[name][0] += int(d.sum())
            res[name][1] += int((d & ~nan).sum())
    for name, (n, nn) in res.items():
        print(f"float32 -> {name}, all 2^32 patterns: jit vs numpy/ml_dtypes differ on {n} "
              f"({nn} of them not NaN)")


def large_checks():
    """The reduction models on more rows (nothing written; README.md quotes the counts)."""
    for dt in HALVES:
        rng = np.random.default_rng(7)
        for shape in ((512, 37), (128, 1000), (64, 4096)):
            scale = np.exp(rng.uniform(-2, 2, (shape[0], 1)))
            x = (rng.standard_normal(shape) * scale + rng.uniform(-3, 3, (shape[0], 1)))
            x = x.astype(F32).astype(dt)
            g, b = np.ones(shape[-1], dt), np.zeros(shape[-1], dt)
            models = reduce_models(dt, x, g, b, shape)
            for op in ("sum", "mean", "var", "softmax", "div_row_sum", "layer_norm"):
                r = run(REDUCE[op], x) if op != "layer_norm" else run(layer_norm, x, g, b)
                counts = {k: count_same(r.astype(F32), np.asarray(v, F32).reshape(r.shape))
                          for k, v in models[op].items()}
                print(dt.name, shape, op, f"of {r.size}:", counts)


def main():
    assert jax.default_backend() == "cpu", "run with a CPU-only jax"
    assert not jax.config.jax_enable_x64
    if "--exhaustive" in sys.argv[1:]:
        exhaustive_check()
        return
    if "--large" in sys.argv[1:]:
        large_checks()
        return
    write_casts()
    write_math()
    write_binary()
    write_fusion()
    write_reduce()
    write_promote()
    write_random()


if __name__ == "__main__":
    main()
