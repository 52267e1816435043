#!/usr/bin/env python3
"""Generates the JAX reference vectors for the ops decoder models need (lax.dynamic_slice,
lax.dynamic_update_slice and their _in_dim forms, jnp.repeat, jnp.tile, jnp.broadcast_to, `==` /
`!=` on arrays, jnp.concatenate of mixed dtypes, jax.random.gumbel and jax.random.categorical,
lax.top_k) in
tests/data/jax_ops/decoder_ops.txt.

Run with a CPU jax, from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
    /tmp/jaxenv/bin/python tests/data/jax_ops/make_decoder_vectors.py

Same format as make_vectors.py (read by tests/support/jax_tensors.hpp): `tensor <case> <role>
<dtype> <shape> <count>` blocks. A case's start indices are an int32 tensor of role `start` (one
per operand dimension), its slice sizes one of role `sizes`, its other parameters int32 tensors
named after them (`axis`, `repeats`, `reps`, `shape`). Inputs are drawn by numpy's default_rng with
fixed seeds; every result is computed under jax.jit, and the clamping the tests rely on is
asserted here, so a rerun with a JAX that changes it fails loudly.
"""

import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vector_header  # noqa: E402  (tests/data/vector_header.py)
from make_vectors import shape_tok, value_toks  # noqa: E402  (the same token format)

OUT = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "tests/data/jax_ops/make_decoder_vectors.py"


class Writer:
    def __init__(self, fh):
        self.fh = fh

    def tensor(self, case, role, a):
        a = np.asarray(a)
        toks = value_toks(a)
        self.fh.write(f"tensor {case} {role} {a.dtype.name} {shape_tok(a.shape)} {len(toks)}\n")
        for i in range(0, len(toks), 8):
            self.fh.write(" ".join(toks[i:i + 8]) + "\n")

    def ints(self, case, role, values):
        self.tensor(case, role, np.asarray(values, np.int32).reshape(-1))


def run(f, *args):
    return np.asarray(jax.jit(f)(*[jnp.asarray(a) for a in args]))


def clamp(starts, shape, sizes):
    """JAX's start: a negative one counts from the end once, then XLA clamps the box inside."""
    return [min(max(s + n if s < 0 else s, 0), n - k) for s, n, k in zip(starts, shape, sizes)]


def body(w):
    rng = np.random.default_rng(52)

    # dynamic_slice: in range, negative and past-the-end starts (clamped), on 2-D and 4-D operands.
    x2 = rng.standard_normal((6, 8)).astype(np.float32)
    x4 = rng.standard_normal((2, 4, 8, 6)).astype(np.float32)
    slices = [("dslice_in", x2, [1, 2], [3, 4]), ("dslice_negative", x2, [-2, 3], [3, 4]), ("dslice_very_negative", x2, [-9, -1], [3, 4]),
              ("dslice_past_end", x2, [5, 7], [3, 4]), ("dslice_whole", x2, [0, 0], [6, 8]),
              ("dslice_4d", x4, [1, 1, 3, 0], [1, 3, 4, 6]), ("dslice_4d_clamped", x4, [0, 2, 6, 9], [2, 2, 4, 2])]
    for name, x, start, sizes in slices:
        # Start indices as traced scalars, as tessel's run-time starts.
        out = run(lambda a, s: lax.dynamic_slice(a, tuple(s[k] for k in range(a.ndim)), sizes), x,
                  np.asarray(start, np.int32))
        c = clamp(start, x.shape, sizes)
        assert np.array_equal(out, x[tuple(slice(b, b + k) for b, k in zip(c, sizes))]), name
        w.tensor(name, "x", x)
        w.ints(name, "start", start)
        w.ints(name, "sizes", sizes)
        w.tensor(name, "out", out)

    # dynamic_slice_in_dim on a 3-D operand, axis 1.
    x3 = rng.standard_normal((4, 6, 8)).astype(np.float32)
    for name, start in (("dslice_in_dim", 2), ("dslice_in_dim_clamped", 5)):
        out = run(lambda a, s: lax.dynamic_slice_in_dim(a, s, 3, axis=1), x3, np.int32(start))
        w.tensor(name, "x", x3)
        w.ints(name, "start", [start])
        w.tensor(name, "out", out)

    # dynamic_update_slice: 2-D boxes in range and clamped; a KV cache (batch 2, heads 4, positions
    # 8, head 6) taking one position, in range and past the end.
    u2 = rng.standard_normal((2, 3)).astype(np.float32)
    cache = rng.standard_normal((2, 4, 8, 6)).astype(np.float32)
    token = rng.standard_normal((2, 4, 1, 6)).astype(np.float32)
    block = rng.standard_normal((2, 4, 3, 6)).astype(np.float32)
    updates = [("dus_in", x2, u2, [1, 2]), ("dus_negative", x2, u2, [-1, -3]), ("dus_past_end", x2, u2, [5, 7]),
               ("dus_cache_token", cache, token, [0, 0, 5, 0]), ("dus_cache_clamped", cache, token, [0, 0, 9, 0]),
               ("dus_cache_block", cache, block, [0, 0, 6, 0])]
    for name, x, u, start in updates:
        out = run(lambda a, b, s: lax.dynamic_update_slice(a, b, tuple(s[k] for k in range(a.ndim))), x, u,
                  np.asarray(start, np.int32))
        c = clamp(start, x.shape, u.shape)
        want = x.copy()
        want[tuple(slice(b, b + k) for b, k in zip(c, u.shape))] = u
        assert np.array_equal(out, want), name
        w.tensor(name, "x", x)
        w.tensor(name, "update", u)
        w.ints(name, "start", start)
        w.tensor(name, "out", out)
    out = run(lambda a, b, s: lax.dynamic_update_slice_in_dim(a, b, s, axis=2), cache, token, np.int32(3))
    w.tensor("dus_in_dim", "x", cache)
    w.tensor("dus_in_dim", "update", token)
    w.ints("dus_in_dim", "start", [3])
    w.tensor("dus_in_dim", "out", out)

    # repeat (GQA's KV heads), tile, broadcast_to.
    r = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for name, repeats, axis in (("repeat_axis1", 2, 1), ("repeat_axis0", 3, 0), ("repeat_last", 2, -1),
                                ("repeat_flat", 2, None)):
        out = run(lambda a: jnp.repeat(a, repeats, axis=axis), r)
        w.tensor(name, "x", r)
        w.ints(name, "repeats", [repeats])
        w.tensor(name, "out", out)
    t = rng.standard_normal((2, 3)).astype(np.float32)
    for name, reps in (("tile_2", (2,)), ("tile_2x3", (2, 3)), ("tile_rank_up", (2, 1, 2))):
        out = run(lambda a: jnp.tile(a, reps), t)
        w.tensor(name, "x", t)
        w.ints(name, "reps", list(reps))
        w.tensor(name, "out", out)
    b = rng.standard_normal((3, 1)).astype(np.float32)
    out = run(lambda a: jnp.broadcast_to(a, (2, 3, 4)), b)
    w.tensor("broadcast_to", "x", b)
    w.ints("broadcast_to", "shape", [2, 3, 4])
    w.tensor("broadcast_to", "out", out)

    # `==` and `!=` on arrays: NaN unequal to itself, -0.0 equal to 0.0.
    a = np.array([1.0, np.nan, -0.0, 2.5, np.inf, 3.0], np.float32)
    c = np.array([1.0, np.nan, 0.0, 2.0, np.inf, -3.0], np.float32)
    eq = run(lambda p, q: p == q, a, c)
    ne = run(lambda p, q: p != q, a, c)
    assert eq.tolist() == [True, False, True, False, True, False]
    w.tensor("compare", "a", a)
    w.tensor("compare", "b", c)
    w.tensor("compare", "eq", eq.astype(np.int32))
    w.tensor("compare", "ne", ne.astype(np.int32))

    # concatenate of float32 with bfloat16 (given as float32 values bfloat16 holds exactly): float32.
    f = rng.standard_normal((2, 3)).astype(np.float32)
    h = np.asarray(jnp.asarray(rng.standard_normal((2, 2)).astype(np.float32)).astype(jnp.bfloat16).astype(jnp.float32))
    out = np.asarray(jax.jit(lambda p, q: jnp.concatenate([p, q.astype(jnp.bfloat16)], axis=1))(f, h))
    assert out.dtype == np.float32
    w.tensor("concat_promote", "f32", f)
    w.tensor("concat_promote", "bf16", h)
    w.tensor("concat_promote", "out", out)


def sampling(w):
    """jax.random.gumbel (mode "low", the default) and jax.random.categorical from PRNGKey(seed)."""
    rng = np.random.default_rng(7)
    for seed in (0, 42):
        key = jax.random.PRNGKey(seed)
        g = np.asarray(jax.random.gumbel(key, (4, 10), jnp.float32))
        w.ints(f"gumbel_{seed}", "seed", [seed])
        w.tensor(f"gumbel_{seed}", "out", g)
        logits = (3 * rng.standard_normal((4, 10))).astype(np.float32)
        last = np.asarray(jax.random.categorical(key, logits, axis=-1)).astype(np.int32)
        first = np.asarray(jax.random.categorical(key, logits, axis=0)).astype(np.int32)
        assert np.array_equal(last, np.argmax(g + logits, axis=-1))
        w.ints(f"categorical_{seed}", "seed", [seed])
        w.tensor(f"categorical_{seed}", "logits", logits)
        w.tensor(f"categorical_{seed}", "out_last", last)
        w.tensor(f"categorical_{seed}", "out_first", first)


def top_k(w):
    """lax.top_k: its total order (NaN above +inf, 0.0 above -0.0, a negative NaN below -inf), ties
    to the first index, along the last axis and another one; float32, bfloat16 (given as the
    float32 values it holds exactly) and int32 operands; k = 0, 1, a few and the whole axis."""
    rng = np.random.default_rng(11)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, 1.5, -np.nan], np.float32)
    x = rng.standard_normal((6, 10)).astype(np.float32).round(1)  # rounded: ties
    x.reshape(-1)[rng.choice(60, 8, replace=False)] = special
    cases = [("topk_last", x, 3, -1), ("topk_one", x, 1, -1), ("topk_all", x, 10, -1), ("topk_none", x, 0, -1),
             ("topk_axis0", x, 4, 0)]
    x3 = rng.standard_normal((2, 7, 12)).astype(np.float32).round(1)
    cases.append(("topk_3d", x3, 5, 1))
    wide = rng.standard_normal((2, 1003)).astype(np.float32)  # a vocabulary no mesh splits evenly
    cases.append(("topk_wide", wide, 50, -1))
    bf = np.asarray(jnp.asarray(x).astype(jnp.bfloat16).astype(jnp.float32))
    for name, a, k, axis in cases + [("topk_bf16", bf, 4, -1)]:
        operand = jnp.asarray(a).astype(jnp.bfloat16) if name == "topk_bf16" else a
        v, i = jax.jit(lambda t: lax.top_k(t, k, axis=axis))(operand)
        w.tensor(name, "x", a)
        w.ints(name, "k", [k])
        w.ints(name, "axis", [axis])
        w.tensor(name, "values", np.asarray(v).astype(np.float32))
        w.tensor(name, "indices", np.asarray(i).astype(np.int32))
    ints = rng.integers(-5, 5, (4, 9)).astype(np.int32)
    v, i = jax.jit(lambda t: lax.top_k(t, 4))(ints)
    w.tensor("topk_int", "x", ints)
    w.ints("topk_int", "k", [4])
    w.ints("topk_int", "axis", [-1])
    w.tensor("topk_int", "values", np.asarray(v))
    w.tensor("topk_int", "indices", np.asarray(i).astype(np.int32))
    # The order asserted here is what the tests rely on.
    v, i = lax.top_k(jnp.array([-np.nan, 1.0, -np.inf, np.nan, -0.0, 0.0], np.float32), 6)
    assert np.asarray(i).tolist() == [3, 1, 5, 4, 2, 0], i


def main():
    path = os.path.join(OUT, "decoder_ops.txt")
    with open(path, "w") as fh:
        vector_header.header(fh, "lax.dynamic_slice / dynamic_update_slice, jnp.repeat / tile / broadcast_to, ==, "
                             "mixed concatenate, lax.top_k", SCRIPT, "")
        writer = Writer(fh)
        body(writer)
        sampling(writer)
        top_k(writer)
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
