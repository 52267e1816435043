#!/usr/bin/env python3
"""GPT-2's forward in JAX beside tessel's, on the same 8 CPU devices and the same Megatron plan.

Times the forward of models/gpt2.hpp (GPT2LMHeadModel, logits only: gelu_new, two-pass LayerNorm
with epsilon 1e-5, causal attention, the LM head tied to wte; random weights; 4 blocks, n_embd 768,
12 heads, batch 8 x seq 256, float32 or bfloat16) as ONE jax.jit over a (2, 4) mesh ('dp', 'mp')
with tessel's Gpt2Shardings, then runs tessel's benchmark of the same dtype (BM_gpt2_f32_mesh2x4 or
BM_gpt2_bf16_mesh2x4), alternating the two for --rounds rounds, and prints tokens/s of each and
the ratio tessel / JAX.

tessel splits the real vocabulary 50257 unevenly over mp; JAX refuses an uneven split, so the JAX
side pads it to the next multiple of the mp size (50260), as a JAX user must, and says so.

  python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
  /tmp/jaxenv/bin/python scripts/gpt2_jax.py               # from the repo root; needs bench_gpt2 built
  /tmp/jaxenv/bin/python scripts/gpt2_jax.py --dtype bfloat16   # bfloat16 weights and activations
  /tmp/jaxenv/bin/python scripts/gpt2_jax.py --jax-only    # JAX alone
  python3 scripts/gpt2_jax.py --platform gpu --bench-command build/cuda/bench/bench_gpt2
      # on a GPU (jax[cuda]): JAX on one GPU as a (1, 1) mesh beside tessel's 1-device benchmark
      # (BM_gpt2_f32_1device, BM_gpt2_bf16_1device); scripts/gpu_check.sh runs it where jax imports
"""
import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--repetitions", type=int, default=10, help="timed JAX forwards per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jax-only", action="store_true", help="skip tessel's benchmark")
    p.add_argument("--platform", choices=["cpu", "gpu"], default="cpu",
                   help="cpu: 8 host devices as a (2, 4) mesh; gpu: the first GPU as a (1, 1) mesh")
    p.add_argument("--bench-command", default="./tessel run build/openmp/bench/bench_gpt2")
    p.add_argument("--bench-filter", default=None,
                   help="tessel's benchmark (default: BM_gpt2_f32_mesh2x4, or BM_gpt2_bf16_mesh2x4 for --dtype bfloat16)")
    p.add_argument("--bench-min-time", default="2s", help="Google Benchmark's --benchmark_min_time")
    return p.parse_args()


def build(jax, jnp, P, NamedSharding, mesh, a):
    """The params, ids and the compiled forward, all placed as tessel's Gpt2Shardings place them."""
    E, H, V, POS, EPS = 768, 12, 50257, 1024, 1e-5
    D, mp = E // H, mesh.shape["mp"]
    v_pad = -(-V // mp) * mp  # JAX cannot split 50257 over mp = 4 (see the docstring)
    dt, f32 = jnp.dtype(a.dtype), jnp.float32
    key = iter(jax.random.split(jax.random.PRNGKey(0), 8 * a.layers + 8))

    def normal(shape, spec):
        return jax.device_put((jax.random.normal(next(key), shape, f32) * 0.02).astype(dt), NamedSharding(mesh, P(*spec)))

    def const(shape, v, spec):
        return jax.device_put(jnp.full(shape, v, dt), NamedSharding(mesh, P(*spec)))

    def block():
        return dict(ln1_g=const((E,), 1, ()), ln1_b=const((E,), 0, ()),
                    wq=normal((E, H, D), (None, "mp", None)), wk=normal((E, H, D), (None, "mp", None)),
                    wv=normal((E, H, D), (None, "mp", None)), bq=const((H, D), 0, ("mp", None)),
                    bk=const((H, D), 0, ("mp", None)), bv=const((H, D), 0, ("mp", None)),
                    wo=normal((H, D, E), ("mp", None, None)), bo=const((E,), 0, ()),
                    ln2_g=const((E,), 1, ()), ln2_b=const((E,), 0, ()),
                    w_fc=normal((E, 4 * E), (None, "mp")), b_fc=const((4 * E,), 0, ("mp",)),
                    w_proj=normal((4 * E, E), ("mp", None)), b_proj=const((E,), 0, ()))

    params = dict(wte=normal((v_pad, E), ("mp", None)), wpe=normal((POS, E), ()),
                  lnf_g=const((E,), 1, ()), lnf_b=const((E,), 0, ()), blocks=[block() for _ in range(a.layers)])
    ids_sharding = NamedSharding(mesh, P("dp", None))
    ids = jax.device_put(jax.random.randint(next(key), (a.batch, a.seq), 0, V, jnp.int32), ids_sharding)

    def dot(spec, x, y):  # float32 accumulation whatever the storage type, as tessel's bfloat16
        return jnp.einsum(spec, x, y, preferred_element_type=f32).astype(dt)

    def layer_norm(x, g, b):  # two passes: the mean, then the variance around it
        x32 = x.astype(f32)
        mean = x32.mean(-1, keepdims=True)
        var = jnp.square(x32 - mean).mean(-1, keepdims=True)
        return ((x32 - mean) * jax.lax.rsqrt(var + EPS) * g + b).astype(dt)

    def forward(p, ids):
        s = ids.shape[1]
        x = jnp.take(p["wte"], ids, axis=0) + p["wpe"][:s]
        causal = jnp.tril(jnp.ones((s, s), bool))
        for b in p["blocks"]:
            n = layer_norm(x, b["ln1_g"], b["ln1_b"])
            q, k, v = (dot("bse,ehd->bshd", n, b[w]) + b[c] for w, c in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
            scores = dot("bqhd,bkhd->bhqk", q, k) * (1.0 / D ** 0.5)
            probs = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
            x = x + dot("bqhd,hde->bqe", dot("bhqk,bkhd->bqhd", probs, v), b["wo"]) + b["bo"]
            hidden = jax.nn.gelu(dot("bse,ef->bsf", layer_norm(x, b["ln2_g"], b["ln2_b"]), b["w_fc"]) + b["b_fc"],
                                 approximate=True)  # gelu_new
            x = x + dot("bsf,fe->bse", hidden, b["w_proj"]) + b["b_proj"]
        return dot("bse,ve->bsv", layer_norm(x, p["lnf_g"], p["lnf_b"]), p["wte"])  # the tied head

    shardings = jax.tree_util.tree_map(lambda t: t.sharding, params)
    jitted = jax.jit(forward, in_shardings=(shardings, ids_sharding),
                     out_shardings=NamedSharding(mesh, P("dp", None, "mp")))
    return params, ids, jitted.lower(params, ids).compile(), v_pad


def time_jax(compiled, params, ids, repetitions):
    times = []
    for _ in range(repetitions):
        t0 = time.perf_counter()
        compiled(params, ids).block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_tessel(a):
    cmd = shlex.split(a.bench_command) + [f"--benchmark_filter={a.bench_filter}", "--benchmark_format=json",
                                          "--benchmark_repetitions=1", f"--benchmark_min_time={a.bench_min_time}"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"gpt2_jax.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    # The environment may print lines before the JSON: decode from the first line opening an object.
    start = re.search(r"^\{", out.stdout, re.M)
    if not start:
        sys.exit(f"gpt2_jax.py: no JSON in the output of {' '.join(cmd)}:\n{out.stdout[-2000:]}")
    report, _ = json.JSONDecoder().raw_decode(out.stdout[start.start():])
    bench = next((b for b in report["benchmarks"] if b["name"].startswith(a.bench_filter)), None)
    if bench is None:
        sys.exit(f"gpt2_jax.py: {a.bench_filter} is not among {[b['name'] for b in report['benchmarks']]}")
    return bench["tokens_per_s"], bench["real_time"] * TO_SECONDS[bench.get("time_unit", "ns")]


def main():
    a = parse_args()
    if a.bench_filter is None:
        where = "1device" if a.platform == "gpu" else "mesh2x4"
        a.bench_filter = f"BM_gpt2_{'bf16' if a.dtype == 'bfloat16' else 'f32'}_{where}"
    os.chdir(REPO)
    # Must precede the import of jax: XLA reads it once, when the CPU client starts.
    if a.platform == "cpu":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
    try:
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    except ImportError as e:
        print(f"gpt2_jax.py: jax is not importable ({e}); see the docstring for a venv with jax", file=sys.stderr)
        return 2
    import numpy as np

    if a.jax_only is False and (a.batch, a.seq, a.layers) != (8, 256, 4):
        print("note: tessel's benchmark runs its own configuration (batch 8, seq 256, 4 blocks)")
    if a.platform == "gpu":
        try:
            gpus = jax.devices("gpu")
        except RuntimeError as e:
            print(f"gpt2_jax.py: JAX sees no GPU ({e})", file=sys.stderr)
            return 2
        mesh = Mesh(np.array(gpus[:1]).reshape(1, 1), ("dp", "mp"))
    else:
        mesh = Mesh(np.array(jax.devices("cpu")[:8]).reshape(2, 4), ("dp", "mp"))
    t0 = time.perf_counter()
    params, ids, compiled, v_pad = build(jax, jnp, P, NamedSharding, mesh, a)
    logits = compiled(params, ids)
    for _ in range(2):  # warm-up beyond the compile
        logits = compiled(params, ids).block_until_ready()
    print(f"JAX: built, compiled and warmed up in {time.perf_counter() - t0:.1f} s; logits {logits.shape} "
          f"{logits.dtype} {logits.sharding.spec}, all finite: {bool(jnp.isfinite(logits).all())}")
    ops = re.findall(r" (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(",
                     compiled.as_text())
    print("JAX's compiled program's collectives:", {op: ops.count(op) for op in sorted(set(ops))} or "none")

    tokens = a.batch * a.seq
    rows = []
    for r in range(a.rounds):
        s = time_jax(compiled, params, ids, a.repetitions)
        tessel = None if a.jax_only else run_tessel(a)
        rows.append((tokens / s, s, tessel))
        line = f"round {r + 1}: JAX {s * 1e3:8.1f} ms/forward {tokens / s:9.0f} tokens/s"
        if tessel:
            line += f" | tessel {tessel[1] * 1e3:8.1f} ms/forward {tessel[0]:9.0f} tokens/s | tessel/JAX {tessel[0] / (tokens / s):.3f}"
        print(line, flush=True)

    print(f"\nJAX median: {statistics.median(r[1] for r in rows) * 1e3:.1f} ms/forward, "
          f"{statistics.median(r[0] for r in rows):.0f} tokens/s")
    if not a.jax_only:
        print(f"median tessel/JAX tokens/s ratio: {statistics.median(r[2][0] / r[0] for r in rows):.3f}")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    print(f"config: GPT-2 {a.layers} blocks, n_embd 768, 12 heads, batch {a.batch} x seq {a.seq}, {a.dtype}, "
          f"mesh {dict(mesh.shape)} on {mesh.devices.flat[0].device_kind}; JAX vocabulary 50257 -> {v_pad} "
          f"(padded to a multiple of mp: JAX refuses an uneven split; tessel runs 50257)")
    print(f"machine: {cpu}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable); jax {jax.__version__}; "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
