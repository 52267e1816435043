#!/usr/bin/env python3
"""GPT-2's forward in PyTorch (Hugging Face's GPT2LMHeadModel, eager or torch.compile) beside
tessel's, on the same CPU, alternating the two as gpt2_jax.py does.

The model is bench_gpt2's: 4 blocks, n_embd 768, 12 heads, vocabulary 50257, batch 8 x seq 256,
random weights, logits only, float32 or bfloat16, in one process on all cores. Each round times
--repetitions PyTorch forwards (the median), then runs tessel's benchmark of the same dtype
(BM_gpt2_f32_mesh2x4 or BM_gpt2_bf16_mesh2x4 by default; --bench-filter BM_gpt2_f32_1device for one
device), and prints tokens/s of each and the ratio tessel / PyTorch.

  /tmp/hfenv/bin/python scripts/gpt2_torch.py                    # eager, float32
  /tmp/hfenv/bin/python scripts/gpt2_torch.py --compile          # torch.compile
  /tmp/hfenv/bin/python scripts/gpt2_torch.py --dtype bfloat16   # either, in bfloat16
"""
import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_jax import REPO, run_tessel  # noqa: E402  (the same tessel side)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--repetitions", type=int, default=5, help="timed PyTorch forwards per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bench-command", default="./tessel run build/openmp/bench/bench_gpt2")
    p.add_argument("--bench-filter", default=None)
    p.add_argument("--bench-min-time", default="2s")
    a = p.parse_args()
    if a.bench_filter is None:
        a.bench_filter = "BM_gpt2_bf16_mesh2x4" if a.dtype == "bfloat16" else "BM_gpt2_f32_mesh2x4"
    os.chdir(REPO)
    import torch
    import transformers

    dtype = torch.bfloat16 if a.dtype == "bfloat16" else torch.float32
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=4, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024)
    cfg._attn_implementation = "eager"
    model = transformers.GPT2LMHeadModel(cfg).eval().to(dtype)
    forward = torch.compile(model) if a.compile else model
    ids = torch.randint(0, 50257, (8, 256))
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(2):
            logits = forward(ids).logits
    label = ("torch.compile" if a.compile else "PyTorch eager") + f" ({a.dtype})"
    print(f"{label}: warmed up in {time.perf_counter() - t0:.1f} s; logits {tuple(logits.shape)} {logits.dtype}")
    tokens = 8 * 256
    rows = []
    for r in range(a.rounds):
        times = []
        with torch.no_grad():
            for _ in range(a.repetitions):
                t = time.perf_counter()
                forward(ids)
                times.append(time.perf_counter() - t)
        s = statistics.median(times)
        tessel = run_tessel(a)
        rows.append((tokens / s, tessel[0]))
        print(f"round {r + 1}: {label} {s * 1e3:8.1f} ms/forward {tokens / s:9.0f} tokens/s | tessel "
              f"{tessel[1] * 1e3:8.1f} ms/forward {tessel[0]:9.0f} tokens/s | tessel/PyTorch {tessel[0] / (tokens / s):.3f}",
              flush=True)
    print(f"median tessel/PyTorch tokens/s ratio: {statistics.median(t / q for q, t in rows):.3f} ({a.bench_filter})")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, {torch.get_num_threads()} PyTorch threads; torch {torch.__version__}, "
          f"transformers {transformers.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
