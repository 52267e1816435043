#!/usr/bin/env python3
"""A Llama 3-style decoder in PyTorch (Hugging Face's LlamaForCausalLM, eager) and in JAX beside
tessel's (bench/bench_llama.cpp), on the same CPU: prefill tokens/s and decode tokens/s at the same
sizes (vocabulary 32003, 4 layers, hidden 512, 8 query heads over 2 KV heads, SwiGLU 1536, rope
theta 500000, float32, batch 2, prompt 128; decode at position cache/2 of a cache of 256 or 2048).

PyTorch runs on all cores in one process with a static KV cache (transformers' StaticCache) so a
decode step's work does not depend on Python-side cache growth; with --compile the forward and a
decode step are each one torch.compile graph (the cache tensors marked static, as HF's generate
compiles a static-cache decode). JAX runs one jax.jit per step with
the cache donated (written in place by dynamic_update_slice), on one CPU device and on 8 devices
(--xla_force_host_platform_device_count=8) with tessel's Megatron layout over a (2, 4) mesh.

  /tmp/hfenv/bin/python scripts/llama_peers.py --torch        # PyTorch only (needs torch, transformers)
  /tmp/hfenv/bin/python scripts/llama_peers.py --torch --compile   # the same through torch.compile
  /tmp/hfenv/bin/python scripts/llama_peers.py --torch --bf16      # in bfloat16 (either mode; JAX too)
  /tmp/hfenv/bin/python scripts/llama_peers.py --torch --compile --profile
                                     # then where PyTorch's prefill (last logits) spends its time:
                                     # torch.profiler's ops by input shape, ms per forward
  /tmp/jaxenv/bin/python scripts/llama_peers.py --jax         # JAX only (needs jax)
  ./tessel run build/openmp/bench/bench_llama                 # tessel, the same sizes
  /tmp/hfenv/bin/python scripts/llama_peers.py --torch --compile --bf16 --tessel --rounds 3
                                     # alternated with tessel in one run: the peer's measurements,
                                     # then bench_llama's matching rows, per round; the ratios

Each prints one line per measurement: name, ms per call, tokens/s. With --tessel the peer and
bench_llama take turns (as gpt2_torch.py does), so both see the same machine; each round prints the
tessel / peer tokens/s ratio of every pair, and the end their medians. tessel's decode rows are
generate's (a windowed attention, llama::attention_window) and the whole-cache step the peers run.
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

CONFIG = dict(vocab=32003, hidden=512, intermediate=1536, layers=4, heads=8, kv_heads=2, head_dim=64,
              theta=500000.0, eps=1e-5)
BATCH, PROMPT = 2, 128


def timed(fn, reps):
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def report(name, seconds, tokens):
    print(f"{name:40s} {seconds * 1e3:9.3f} ms {tokens / seconds:11.1f} tokens/s", flush=True)
    return name, tokens / seconds


def run_torch(reps, compile_model, bf16, emulate_casts=False, profile=False):
    import torch
    import transformers
    from transformers import StaticCache

    # Inductor fuses bfloat16 ops computing in float32 and rounds only what it stores; with
    # emulate_precision_casts it rounds each op's result as eager PyTorch (and XLA, and tessel) do.
    if compile_model:
        import torch._inductor.config
        torch._inductor.config.emulate_precision_casts = emulate_casts

    c = CONFIG
    dtype = torch.bfloat16 if bf16 else torch.float32
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=c["vocab"], hidden_size=c["hidden"], intermediate_size=c["intermediate"],
                                   num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                                   num_key_value_heads=c["kv_heads"], head_dim=c["head_dim"], rope_theta=c["theta"],
                                   rms_norm_eps=c["eps"], max_position_embeddings=4096, tie_word_embeddings=False)
    cfg._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(cfg).eval().to(dtype)
    label = "torch_compile" if compile_model else "torch_eager"
    label += "_bf16" if dtype == torch.bfloat16 else ""
    label += "_emulated_casts" if emulate_casts else ""
    forward = torch.compile(model.forward, dynamic=False) if compile_model else model.forward
    print(f"# torch {torch.__version__}, transformers {transformers.__version__}, threads {torch.get_num_threads()}, "
          f"{platform.processor() or platform.machine()}")
    ids = torch.randint(0, c["vocab"], (BATCH, PROMPT))
    decoders = {}
    torch.set_grad_enabled(False)
    for room in (256, 2048):
        cache = StaticCache(config=cfg, max_batch_size=BATCH, max_cache_len=room)
        model(ids[:, :8], cache=cache, use_cache=True)  # makes the cache's tensors
        if compile_model:  # as generate compiles a static-cache decode: one graph, fixed addresses
            for layer in cache.layers:
                for t in (layer.keys, layer.values):
                    torch._dynamo.mark_static_address(t)
        position = torch.tensor([room // 2])
        args = (torch.randint(0, c["vocab"], (BATCH, 1)), position, position[None, :].expand(BATCH, 1))

        def decode(t, p, pid, cache=cache):
            return model(t, cache=cache, position_ids=pid, cache_position=p, use_cache=True).logits

        fn = torch.compile(decode, dynamic=False) if compile_model else decode
        decoders[room] = (fn, args)

    def measure():
        out = dict([report(f"{label}_prefill", timed(lambda: forward(ids), reps), BATCH * PROMPT),
                    # generate's prefill: the last position's logits only (bench_llama's BM_llama_prefill/1/1)
                    report(f"{label}_prefill_last", timed(lambda: forward(ids, logits_to_keep=1), reps), BATCH * PROMPT)])
        for room, (fn, args) in decoders.items():
            out.update([report(f"{label}_decode/cache:{room}", timed(lambda: fn(*args), reps * 4), BATCH)])
        if profile:  # (after the timing, which it would slow)
            profile_ops(f"{label}_prefill_last", lambda: forward(ids, logits_to_keep=1), reps)
        return out

    return measure


def profile_ops(name, fn, reps, rows=12):
    """torch.profiler's ops of fn by input shape, self time per call of fn (ms): where it goes."""
    from torch.profiler import profile, ProfilerActivity
    fn()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(reps):
            fn()
    ops = sorted(prof.key_averages(group_by_input_shape=True), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in ops)
    print(f"# {name} profiled: {total / reps / 1e3:.3f} ms of self time per call, by op and input shapes")
    for e in ops[:rows]:
        print(f"#   {e.self_cpu_time_total / reps / 1e3:8.3f} ms  {e.count / reps:5.1f} x  {e.key:28s} {e.input_shapes}",
              flush=True)


def run_jax(reps, devices, bf16):
    if devices > 1:
        os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    c = CONFIG
    E, H, KV, D, F, V = c["hidden"], c["heads"], c["kv_heads"], c["head_dim"], c["intermediate"], c["vocab"]
    devs = jax.devices()[:devices]
    import numpy as np
    mesh = Mesh(np.array(devs).reshape((1, 1) if devices == 1 else (2, 4)), ("dp", "mp"))
    mp = mesh.shape["mp"]
    v_pad = -(-V // mp) * mp  # JAX splits evenly only
    split_kv = KV % mp == 0
    key = iter(jax.random.split(jax.random.PRNGKey(0), 64))

    dt = jnp.bfloat16 if bf16 else jnp.float32

    def normal(shape, spec):
        return jax.device_put((jax.random.normal(next(key), shape) * 0.02).astype(dt), NamedSharding(mesh, P(*spec)))

    kvs = (None, "mp", None) if split_kv else (None, None, None)
    params = dict(embed=normal((v_pad, E), ("mp", None)), head=normal((v_pad, E), ("mp", None)),
                  norm=jnp.ones((E,), dt), layers=[dict(
                      an=jnp.ones((E,), dt), mn=jnp.ones((E,), dt), wq=normal((E, H, D), (None, "mp", None)),
                      wk=normal((E, KV, D), kvs), wv=normal((E, KV, D), kvs), wo=normal((H, D, E), ("mp", None, None)),
                      wg=normal((E, F), (None, "mp")), wu=normal((E, F), (None, "mp")), wd=normal((F, E), ("mp", None)))
                      for _ in range(c["layers"])])
    inv = 1.0 / (c["theta"] ** (jnp.arange(0, D, 2, dtype=jnp.float32) / D))

    def rms(x, g):
        return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + c["eps"]) * g

    def rope(x, pos):  # x (b, s, h, d), pos (s,)
        ang = pos[:, None].astype(jnp.float32) * inv[None, :]
        co, si = jnp.cos(ang)[:, None, :].astype(dt), jnp.sin(ang)[:, None, :].astype(dt)
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return jnp.concatenate([x1 * co - x2 * si, x2 * co + x1 * si], -1)

    def forward(p, ids, offset, cache):
        s = ids.shape[1]
        pos = offset + jnp.arange(s)
        x = p["embed"][ids]
        new = []
        for l, y in enumerate(p["layers"]):
            n = rms(x, y["an"])
            q = rope(jnp.einsum("bse,ehd->bshd", n, y["wq"]), pos)
            k = rope(jnp.einsum("bse,ehd->bshd", n, y["wk"]), pos)
            v = jnp.einsum("bse,ehd->bshd", n, y["wv"])
            kc = jax.lax.dynamic_update_slice_in_dim(cache[2 * l], k, offset, 1)
            vc = jax.lax.dynamic_update_slice_in_dim(cache[2 * l + 1], v, offset, 1)
            new += [kc, vc]
            kr, vr = jnp.repeat(kc, H // KV, 2), jnp.repeat(vc, H // KV, 2)
            sc = jnp.einsum("bshd,bthd->bhst", q, kr) / jnp.asarray(np.sqrt(D), dt)
            t = jnp.arange(kc.shape[1])
            sc = jnp.where(t[None, None, None, :] <= pos[None, None, :, None], sc, -jnp.inf)
            o = jnp.einsum("bhst,bthd->bshd", jax.nn.softmax(sc, -1), vr)
            x = x + jnp.einsum("bshd,hde->bse", o, y["wo"])
            n = rms(x, y["mn"])
            x = x + (jax.nn.silu(n @ y["wg"]) * (n @ y["wu"])) @ y["wd"]
        return jnp.einsum("bse,ve->bsv", rms(x, p["norm"]), p["head"]), new

    step = jax.jit(forward, donate_argnums=(3,))
    cache_spec = NamedSharding(mesh, P("dp", None, "mp", None) if split_kv else P("dp"))
    print(f"# jax {jax.__version__}, {devices} CPU device(s), {'bfloat16' if bf16 else 'float32'}, "
          f"{platform.processor() or platform.machine()}")
    ids = jnp.zeros((BATCH, PROMPT), jnp.int32)
    tok = jnp.zeros((BATCH, 1), jnp.int32)
    state = {room: [jax.device_put(jnp.zeros((BATCH, room, KV, D), dt), cache_spec) for _ in range(2 * c["layers"])]
             for room in (256, 2048)}

    def measure():
        prefill = lambda: jax.block_until_ready(step(params, ids, 0, [jnp.copy(t) for t in state[256]])[0])  # noqa: E731
        out = dict([report(f"jax_prefill/devices:{devices}", timed(prefill, reps), BATCH * PROMPT)])
        for room in state:
            def decode(room=room):
                logits, state[room] = step(params, tok, room // 2, state[room])
                jax.block_until_ready(logits)

            out.update([report(f"jax_decode/devices:{devices}/cache:{room}", timed(decode, reps * 4), BATCH)])
        return out

    return measure


# bench_llama's counters of the machine's limits, measured in the same run (prefill: the FMA peak
# and the BLAS alone; decode: a STREAM triad), and those of them a peer's time also gives: the same
# work (flops, or the bytes a step must move) against the same limit.
LIMITS = ["fraction_of_peak", "blas_fraction_of_peak", "fraction_of_blas", "fraction_of_triad"]
PEER_LIMITS = ["fraction_of_peak", "fraction_of_triad"]


def run_tessel(a, devices):
    """bench_llama's rows of this dtype on `devices` (1 or 8): {name: tokens/s}."""
    kind = "bfloat16" if a.bf16 else "float"
    cmd = shlex.split(a.bench_command) + [f"--benchmark_filter=BM_llama_.*<{kind}>/{devices}/",
                                          "--benchmark_format=json", f"--benchmark_min_time={a.bench_min_time}"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"llama_peers.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    start = re.search(r"^\{", out.stdout, re.M)  # (the environment may print lines before the JSON)
    if not start:
        sys.exit(f"llama_peers.py: no JSON in the output of {' '.join(cmd)}:\n{out.stdout[-2000:]}")
    bench, _ = json.JSONDecoder().raw_decode(out.stdout[start.start():])
    rows = {b["name"].removesuffix("/manual_time").removesuffix("/real_time"): b for b in bench["benchmarks"]}
    for name, b in rows.items():
        limits = "  ".join(f"{k} {b[k]:.3f}" for k in LIMITS if k in b)
        print(f"{name:40s} {'':12s} {b['tokens_per_s']:11.1f} tokens/s  {limits}", flush=True)
    return rows


def pairs(peer, tessel, bf16, devices):
    """(label, tessel row, peer row) for each measurement both made."""
    kind = "bfloat16" if bf16 else "float"
    out = []
    for name in peer:
        if name.endswith("_prefill") or name.startswith("jax_prefill"):
            out.append((name, f"BM_llama_prefill<{kind}>/{devices}/0", name))
        elif name.endswith("_prefill_last"):
            out.append((name, f"BM_llama_prefill<{kind}>/{devices}/1", name))
        elif "decode" in name:
            room = int(name.rsplit(":", 1)[1])
            out.append((name + " (tessel windowed)", f"BM_llama_decode<{kind}>/{devices}/{room}/1/1", name))
            out.append((name + " (tessel whole cache)", f"BM_llama_decode<{kind}>/{devices}/{room}/1/0", name))
    return [(label, t, p) for label, t, p in out if t in tessel]


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--torch", action="store_true")
    a.add_argument("--compile", action="store_true", help="with --torch: torch.compile the model's forward")
    a.add_argument("--bf16", action="store_true", help="the model in bfloat16 (PyTorch and JAX)")
    a.add_argument("--emulate-casts", action="store_true",
                   help="with --compile --bf16: Inductor rounds every op's result to bfloat16, as eager PyTorch, "
                        "XLA and tessel do (torch._inductor.config.emulate_precision_casts)")
    a.add_argument("--profile", action="store_true",
                   help="with --torch: after each measurement, PyTorch's prefill (last logits) by op (torch.profiler)")
    a.add_argument("--jax", action="store_true")
    a.add_argument("--devices", type=int, default=8, help="JAX CPU devices: 8 (the (2, 4) mesh) or 1")
    a.add_argument("--reps", type=int, default=5)
    a.add_argument("--tessel", action="store_true", help="alternate the peer with bench_llama's matching rows")
    a.add_argument("--rounds", type=int, default=3, help="with --tessel: peer then tessel, this many times")
    a.add_argument("--bench-command", default="./tessel run build/openmp/bench/bench_llama")
    a.add_argument("--bench-min-time", default="1s")
    args = a.parse_args()
    peers = []
    if args.torch:
        peers.append((run_torch(args.reps, args.compile, args.bf16, args.emulate_casts, args.profile), 1))  # PyTorch: one process, all cores
    if args.jax:
        peers.append((run_jax(args.reps, args.devices, args.bf16), args.devices))
    for measure, devices in peers:
        if not args.tessel:
            measure()
            continue
        ratios = {}
        for r in range(args.rounds):
            print(f"# round {r + 1}", flush=True)
            peer, tessel = measure(), run_tessel(args, devices)
            for label, t, p in pairs(peer, tessel, args.bf16, devices):
                ratio = tessel[t]["tokens_per_s"] / peer[p]
                ratios.setdefault(label, []).append(ratio)
                limits = "  ".join(f"peer's {k} {tessel[t][k] / ratio:.3f}" for k in PEER_LIMITS if k in tessel[t])
                print(f"  {label:52s} tessel/peer {ratio:6.3f}  {limits}", flush=True)
        print("# medians of tessel / peer tokens/s over the rounds")
        for label, values in ratios.items():
            print(f"  {label:52s} {statistics.median(values):6.3f}")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    print(f"# machine: {cpu}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
