#!/usr/bin/env python3
"""Generates random sharded programs and XLA's collectives for each: the reference data of
tests/plan/test_xla_parity.cpp (issue 11, "communicate no more than XLA's partitioner").

Run with a CPU jax (no GPU plugin), from anywhere:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax
    XLA_FLAGS=--xla_force_host_platform_device_count=8 /tmp/jaxenv/bin/python \
        tests/data/xla_collectives/make_reference.py [--seed 11] [--cases 360] [--uneven 60] [--gpt2-attn 30]

It writes cases.txt next to itself: '#' header lines, then one line per program,

    id=17 prog=mlp mesh=4x2 c=1.5 r=0 mode=out x0=16x32:a,- x1=32x16:-,b x2=16x16:~ s=~ out=a,b \
        | xla_n=3 xla_bytes=2048 xla=all-reduce:2,all-gather:1

A sharding is a spec over the mesh's axes ('a', 'b', 'c' in mesh order): '~' is P(), otherwise one
entry per dimension, '-' for None, 'a' for one axis, 'a+b' for several (in that order). The mesh
'4x2' is 8 devices in order, reshaped row-major (axes 'a': 4, 'b': 2). mode: 'jit' is jax.jit(f);
'in' is jax.jit(f, in_shardings=<the inputs' shardings>); 'out' adds out_shardings=<out>. Inputs
are put on their shardings with device_put first, so in every mode the program sees the same
inputs. `s` is a sharding constraint's spec (programs that have one), `r` a program variant.

XLA's numbers come from the compiled per-device (SPMD-partitioned) HLO,
jax.jit(f).lower(*args).compile().as_text(): every all-gather, all-reduce, reduce-scatter,
all-to-all and collective-permute (async pairs counted once, by their -done) counts one, and its
output shape's bytes (a tuple's elements summed) are the bytes per device it moves (xla_bytes);
xla_link is what each device sends over its links by the ring algorithms tessel's cost model
prices, from the output bytes and the replica groups' size (link_bytes). The C++ test measures
tessel's plan both ways.

The programs (the C++ test builds the same ones, by name; keep the two in step):
  bcast       tanh(x0 * c + x1)                       x0[M,N], x1[N]
  bcast_col   x0 - x1 * c                             x0[M,N], x1[M,1]
  reduce      sum(x0 * x1 + c, axis=r)                x0, x1 [M,N]
  softmax     softmax(x0 + c)                         x0[M,N]
  softmax2    softmax(softmax(x0 * c) + x1)           x0[M,N], x1[N]
  scalar_cse  sum(x0*c, 1, keepdims) * sum(x0*c, 1, keepdims)
  center      (x0 - mean(x0, 1, keepdims)) * x1       x0[M,N], x1[N]
  matmul      (x0 @ x1) * c                           x0[M,K], x1[K,N]
  mlp         softmax(x0 @ x1) @ x2                   x0[M,K], x1[K,N], x2[N,Q]
  attn        dot(softmax(dot(x0, x1^T) * c), x2)     x0, x1, x2 [B,S,D], batch dim 0
  transpose   x0.T + x1 * c                           x0[M,N], x1[N,M]
  reshape     sum(reshape(x0, r ? (A*B, C) : (A, B*C)) * c, axis=-1)   x0[A,B,C]
  constraint  exp(with_sharding_constraint(x0 * c, s))                 x0[A,B,C]
  constraint_mm sum(with_sharding_constraint(x0 @ x1, s), axis=0)      x0[M,K], x1[K,N]
  gpt2_attn   GPT-2's attention block without layer norm, biases or mask (models/gpt2.hpp):
              x0 + dot(dot(softmax(dot(q, k) * c), v), x4)   x0[B,S,E], x1, x2, x3 [E,H,D], x4[H,D,E],
              q, k, v = dot(x0, x1 | x2 | x3) (B,S,H,D); scores (B,H,S,S), batch B, H; context (B,H,S,D)

The cases: `--cases` random programs from the seed (ids from 0), `--uneven` uneven ones (ids from
1000), then the gpt2_attn cases (ids from 2000, their own generator, random.Random(seed + 2000),
so the others are the same with or without them): the Megatron layout on every mesh of two or
more axes (x0 P('a'), the batch over the first axis; x1, x2, x3 P(None, 'b', None), the heads over
the second; x4 P('b', None, None)), modes 'in' and 'out' (out P('a')), then `--gpt2-attn` with
random shardings over every mesh.
"""

import argparse
import os
import random
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MESHES = [((8,), "8"), ((4, 2), "4x2"), ((2, 4), "2x4"), ((2, 2, 2), "2x2x2"), ((1, 8), "1x8")]
AXIS_NAMES = "abc"
SIZES = [8, 16, 24, 32]
CONSTANTS = [0.5, 1.5, 2.0, 3.0, -1.0]


def random_spec(rng, mesh_shape, shape, p_use=0.6, even=True):
    """Each mesh axis goes to a random dimension (or nowhere), in random order, if it divides (or,
    with even=False, whether it divides or not: an uneven split, blocks of ceil(n/k))."""
    dims = [[] for _ in shape]
    order = list(range(len(mesh_shape)))
    rng.shuffle(order)
    for a in order:
        if rng.random() > p_use or not shape:
            continue
        d = rng.randrange(len(shape))
        n = mesh_shape[a]
        for x in dims[d]:
            n *= mesh_shape[x]
        if shape[d] % n == 0 or not even:
            dims[d].append(a)
    return dims


def spec_text(dims):
    while dims and not dims[-1]:
        dims = dims[:-1]
    if not dims:
        return "~"
    return ",".join("+".join(AXIS_NAMES[a] for a in d) if d else "-" for d in dims)


def shape_text(shape):
    return "x".join(str(s) for s in shape)


def program_shapes(rng, prog):
    S = lambda: rng.choice(SIZES)
    M, N, K, Q = S(), S(), S(), S()
    if prog == "bcast":
        return [(M, N), (N,)]
    if prog == "bcast_col":
        return [(M, N), (M, 1)]
    if prog == "reduce":
        return [(M, N), (M, N)]
    if prog in ("softmax", "scalar_cse"):
        return [(M, N)]
    if prog in ("softmax2", "center"):
        return [(M, N), (N,)]
    if prog in ("matmul", "constraint_mm"):
        return [(M, K), (K, N)]
    if prog == "mlp":
        return [(M, K), (K, N), (N, Q)]
    if prog == "attn":
        B, T, D = rng.choice([8, 16]), S(), S()
        return [(B, T, D)] * 3
    if prog == "transpose":
        return [(M, N), (N, M)]
    if prog in ("reshape", "constraint"):
        return [(rng.choice([8, 16]), rng.choice([8, 16]), rng.choice([8, 16]))]
    raise ValueError(prog)


PROGRAMS = ["bcast", "bcast_col", "reduce", "softmax", "softmax2", "scalar_cse", "center", "matmul", "mlp",
            "attn", "transpose", "reshape", "constraint", "constraint_mm"]


def result_shape(prog, shapes, r):
    if prog == "reduce":
        M, N = shapes[0]
        return (N,) if r == 0 else (M,)
    if prog == "scalar_cse":
        return (shapes[0][0], 1)
    if prog in ("matmul",):
        return (shapes[0][0], shapes[1][1])
    if prog == "constraint_mm":
        return (shapes[1][1],)
    if prog == "mlp":
        return (shapes[0][0], shapes[2][1])
    if prog == "transpose":
        return shapes[1]
    if prog == "reshape":
        A, B, C = shapes[0]
        return (A * B,) if r else (A,)
    return shapes[0]


def generate(seed, count):
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        prog = PROGRAMS[k % len(PROGRAMS)] if k < 2 * len(PROGRAMS) else rng.choice(PROGRAMS)
        mesh_shape, mesh_name = MESHES[(k // len(PROGRAMS)) % len(MESHES)] if k < 2 * len(PROGRAMS) else rng.choice(MESHES)
        shapes = program_shapes(rng, prog)
        r = rng.randrange(2) if prog in ("reduce", "reshape") else 0
        c = rng.choice(CONSTANTS)
        mode = rng.choice(["jit", "in", "out"])
        specs = [random_spec(rng, mesh_shape, s) for s in shapes]
        case = {"id": k, "prog": prog, "mesh": mesh_name, "c": c, "r": r, "mode": mode}
        for i, (shape, spec) in enumerate(zip(shapes, specs)):
            case[f"x{i}"] = f"{shape_text(shape)}:{spec_text(spec)}"
        if prog == "constraint":
            case["s"] = spec_text(random_spec(rng, mesh_shape, shapes[0], 0.8))
        elif prog == "constraint_mm":
            case["s"] = spec_text(random_spec(rng, mesh_shape, (shapes[0][0], shapes[1][1]), 0.8))
        if mode == "out":
            case["out"] = spec_text(random_spec(rng, mesh_shape, result_shape(prog, shapes, r)))
        case["_mesh_shape"] = mesh_shape
        case["_shapes"] = shapes
        cases.append(case)
    return cases


# Uneven cases: JAX refuses an uneven split of a jit argument or result (device_put, in/out
# shardings), but partitions an uneven intermediate (XLA pads it): the inputs are split only where
# they divide (few axes divide these sizes), the constraint `s` wherever it lands.
UNEVEN_SIZES = [5, 6, 7, 9, 12, 13]
UNEVEN_PROGRAMS = ["constraint", "constraint_mm"]


# gpt2_attn: small sizes; c scales the scores to a few units (random normal inputs make them
# about E * sqrt(D)), so the softmax stays smooth enough for the C++ test's value check.
GPT2_CONSTANTS = [0.015625, 0.03125, 0.0625, -0.03125]


def gpt2_attn_shapes(rng, heads_divisor=1):
    B, S, E, D = rng.choice([8, 16]), rng.choice([8, 16]), rng.choice([16, 32]), rng.choice([8, 16])
    H = rng.choice([h for h in (2, 4, 8) if h % heads_divisor == 0])
    return [(B, S, E), (E, H, D), (E, H, D), (E, H, D), (H, D, E)]


def generate_gpt2_attn(seed, count, first_id):
    rng = random.Random(seed + 2000)
    cases = []

    def add(mesh_shape, mesh_name, shapes, mode, specs, out):
        case = {"id": first_id + len(cases), "prog": "gpt2_attn", "mesh": mesh_name, "c": rng.choice(GPT2_CONSTANTS),
                "r": 0, "mode": mode}
        for i, (shape, spec) in enumerate(zip(shapes, specs)):
            case[f"x{i}"] = f"{shape_text(shape)}:{spec}"
        if mode == "out":
            case["out"] = out
        case["_mesh_shape"] = mesh_shape
        case["_shapes"] = shapes
        cases.append(case)

    # Megatron: the batch over 'a', the heads over 'b'.
    for mesh_shape, mesh_name in MESHES:
        if len(mesh_shape) < 2:
            continue
        for mode in ("in", "out"):
            shapes = gpt2_attn_shapes(rng, mesh_shape[1])
            add(mesh_shape, mesh_name, shapes, mode, ["a", "-,b", "-,b", "-,b", "b"], "a")
    for k in range(count):
        mesh_shape, mesh_name = MESHES[k % len(MESHES)]
        shapes = gpt2_attn_shapes(rng)
        mode = rng.choice(["jit", "in", "out"])
        specs = [spec_text(random_spec(rng, mesh_shape, s)) for s in shapes]
        out = spec_text(random_spec(rng, mesh_shape, shapes[0])) if mode == "out" else None
        add(mesh_shape, mesh_name, shapes, mode, specs, out)
    return cases


def generate_uneven(seed, count, first_id):
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        prog = UNEVEN_PROGRAMS[k % len(UNEVEN_PROGRAMS)]
        mesh_shape, mesh_name = MESHES[(k // len(UNEVEN_PROGRAMS)) % len(MESHES)]
        S = lambda: rng.choice(UNEVEN_SIZES)
        shapes = [(S(), S(), S())] if prog == "constraint" else [(S(), S()), None]
        if prog == "constraint_mm":
            shapes[1] = (shapes[0][1], S())
        case = {"id": first_id + k, "prog": prog, "mesh": mesh_name, "c": rng.choice(CONSTANTS), "r": 0,
                "mode": rng.choice(["jit", "in"])}
        for i, shape in enumerate(shapes):
            case[f"x{i}"] = f"{shape_text(shape)}:{spec_text(random_spec(rng, mesh_shape, shape))}"
        constrained = shapes[0] if prog == "constraint" else (shapes[0][0], shapes[1][1])
        case["s"] = spec_text(random_spec(rng, mesh_shape, constrained, 0.8, even=False))
        case["_mesh_shape"] = mesh_shape
        case["_shapes"] = shapes
        cases.append(case)
    return cases


def parse_spec(text, P):
    if text == "~":
        return P()
    dims = []
    for d in text.split(","):
        if d == "-":
            dims.append(None)
        else:
            names = d.split("+")
            dims.append(names[0] if len(names) == 1 else tuple(names))
    return P(*dims)


def build(case):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh_shape = case["_mesh_shape"]
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(mesh_shape), tuple(AXIS_NAMES[: len(mesh_shape)]))
    sh = lambda text: NamedSharding(mesh, parse_spec(text, P))
    c, r, prog = case["c"], case["r"], case["prog"]
    dot = jax.lax.dot_general
    if prog == "bcast":
        f = lambda x0, x1: jnp.tanh(x0 * c + x1)
    elif prog == "bcast_col":
        f = lambda x0, x1: x0 - x1 * c
    elif prog == "reduce":
        f = lambda x0, x1: jnp.sum(x0 * x1 + c, axis=r)
    elif prog == "softmax":
        f = lambda x0: jax.nn.softmax(x0 + c)
    elif prog == "softmax2":
        f = lambda x0, x1: jax.nn.softmax(jax.nn.softmax(x0 * c) + x1)
    elif prog == "scalar_cse":
        f = lambda x0: jnp.sum(x0 * c, 1, keepdims=True) * jnp.sum(x0 * c, 1, keepdims=True)
    elif prog == "center":
        f = lambda x0, x1: (x0 - jnp.mean(x0, 1, keepdims=True)) * x1
    elif prog == "matmul":
        f = lambda x0, x1: jnp.matmul(x0, x1) * c
    elif prog == "mlp":
        f = lambda x0, x1, x2: jnp.matmul(jax.nn.softmax(jnp.matmul(x0, x1)), x2)
    elif prog == "attn":
        f = lambda x0, x1, x2: dot(jax.nn.softmax(dot(x0, x1, (((2,), (2,)), ((0,), (0,)))) * c), x2,
                                   (((2,), (1,)), ((0,), (0,))))
    elif prog == "transpose":
        f = lambda x0, x1: jnp.transpose(x0) + x1 * c
    elif prog == "reshape":
        A, B, C = case["_shapes"][0]
        new = (A * B, C) if r else (A, B * C)
        f = lambda x0: jnp.sum(jnp.reshape(x0, new) * c, axis=-1)
    elif prog == "constraint":
        s = sh(case["s"])
        f = lambda x0: jnp.exp(jax.lax.with_sharding_constraint(x0 * c, s))
    elif prog == "constraint_mm":
        s = sh(case["s"])
        f = lambda x0, x1: jnp.sum(jax.lax.with_sharding_constraint(jnp.matmul(x0, x1), s), axis=0)
    elif prog == "gpt2_attn":
        project = (((2,), (0,)), ((), ()))  # (B,S,E) . (E,H,D) -> (B,S,H,D)
        qk = (((3,), (3,)), ((0, 2), (0, 2)))  # -> (B,H,S,S)
        pv = (((3,), (1,)), ((0, 1), (0, 2)))  # -> (B,H,S,D)
        back = (((1, 3), (0, 1)), ((), ()))  # (B,H,S,D) . (H,D,E) -> (B,S,E)

        def f(x0, x1, x2, x3, x4):
            q, k, v = dot(x0, x1, project), dot(x0, x2, project), dot(x0, x3, project)
            p = jax.nn.softmax(dot(q, k, qk) * c, axis=-1)
            return x0 + dot(dot(p, v, pv), x4, back)
    else:
        raise ValueError(prog)
    n = len(case["_shapes"])
    ins = [sh(case[f"x{i}"].split(":")[1]) for i in range(n)]
    args = [jax.device_put(jnp.ones(s, jnp.float32), i) for s, i in zip(case["_shapes"], ins)]
    if case["mode"] == "jit":
        jitted = jax.jit(f)
    elif case["mode"] == "in":
        jitted = jax.jit(f, in_shardings=tuple(ins))
    else:
        jitted = jax.jit(f, in_shardings=tuple(ins), out_shardings=sh(case["out"]))
    return jitted, args


KINDS = ["all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"]
BYTES = {"f32": 4, "f64": 8, "s32": 4, "u32": 4, "pred": 1, "bf16": 2, "f16": 2, "s64": 8, "u64": 8, "s8": 1, "u8": 1}
LINE = re.compile(r"=\s*(\(.*?\)|\S+)\s+(" + "|".join(KINDS) + r")(-start|-done)?\(")
SHAPE = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")


def shape_bytes(text):
    total = 0
    for dtype, dims in SHAPE.findall(text):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * BYTES[dtype]
    return total


GROUPS_LIST = re.compile(r"replica_groups=\{\{([0-9,]*)\}")
GROUPS_IOTA = re.compile(r"replica_groups=\[([0-9,]+)\]<=")
# mesh['axis_0'=2,'axis_1'=4] [, device_ids=(...)] {'axis_0'}: groups along the listed axes.
GROUPS_MESH = re.compile(r"replica_groups=mesh\[([^\]]*)\](?:, device_ids=\(\[[0-9,]*\](?:T\([0-9,]*\))?\))?\s*\{([^}]*)\}")


def group_size(line, devices=8):
    """The size of a collective's device groups, from any of the HLO's replica_groups forms."""
    m = GROUPS_LIST.search(line)
    if m:
        return len([d for d in m.group(1).split(",") if d])
    m = GROUPS_IOTA.search(line)
    if m:
        return int(m.group(1).split(",")[-1])
    m = GROUPS_MESH.search(line)
    if m:
        sizes = dict((k.strip().strip("'"), int(v)) for k, v in (a.split("=") for a in m.group(1).split(",")))
        n = 1
        for name in m.group(2).split(","):
            name = name.strip()
            if ":(" in name:  # a sub-axis, 'axis_1':(2)2: the size after the parenthesis
                n *= int(name.split(")")[1])
            elif name.strip("'"):
                n *= sizes[name.strip("'")]
        return n
    return devices  # replica_groups={}: one group of every device


def link_bytes(kind, out_bytes, n):
    """Bytes a device sends over its links, by the ring algorithms tessel's cost model prices
    (plan/cost_model.hpp): all-reduce 2(n-1)/n of the block, reduce-scatter (n-1)/n of its input
    (n-1 output blocks), all-gather and all-to-all (n-1)/n of the output, a permute one block."""
    if kind == "collective-permute":
        return out_bytes
    if n <= 1:
        return 0.0
    if kind == "all-reduce":
        return 2.0 * (n - 1) / n * out_bytes
    if kind == "reduce-scatter":
        return float((n - 1) * out_bytes)
    return (n - 1) / n * out_bytes


def collectives(hlo):
    counts, total, link = {}, 0, 0.0
    for line in hlo.splitlines():
        m = LINE.search(line)
        if not m or m.group(3) == "-start":
            continue
        kind = m.group(2)
        counts[kind] = counts.get(kind, 0) + 1
        out = shape_bytes(m.group(1))
        total += out
        if m.group(3) == "-done":  # the groups are on the -start line
            start = [l for l in hlo.splitlines() if kind + "-start(" in l and m.group(0).split("=")[0] in l]
            line = start[0] if start else line
        link += link_bytes(kind, out, group_size(line))
    return counts, total, link


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--cases", type=int, default=360)
    ap.add_argument("--uneven", type=int, default=60, help="uneven cases appended, ids from 1000")
    ap.add_argument("--gpt2-attn", type=int, default=30,
                    help="random-sharding gpt2_attn cases, after the Megatron ones, ids from 2000")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.txt"))
    args = ap.parse_args()
    import jax
    from vector_header import header

    if len(jax.devices()) < 8:
        sys.exit("needs 8 devices: XLA_FLAGS=--xla_force_host_platform_device_count=8")
    with open(args.out, "w") as fh:
        header(fh, f"random sharded programs and XLA's collectives (seed {args.seed}, {args.cases} cases, "
               f"{args.uneven} uneven from id 1000, gpt2_attn from id 2000: Megatron layouts and "
               f"{args.gpt2_attn} random)",
               "tests/data/xla_collectives/make_reference.py", libc=False)
        gpt2 = generate_gpt2_attn(args.seed, args.gpt2_attn, 2000)
        for case in generate(args.seed, args.cases) + generate_uneven(args.seed, args.uneven, 1000) + gpt2:
            jitted, xs = build(case)
            counts, total, link = collectives(jitted.lower(*xs).compile().as_text())
            fields = " ".join(f"{k}={v}" for k, v in case.items() if not k.startswith("_"))
            detail = ",".join(f"{k}:{counts[k]}" for k in KINDS if k in counts) or "none"
            fh.write(f"{fields} | xla_n={sum(counts.values())} xla_bytes={total} xla_link={link:.1f} xla={detail}\n")


if __name__ == "__main__":
    main()
