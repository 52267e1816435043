#!/usr/bin/env python3
"""JAX as a second application of a tessel study: runs the study's problems with jax.jit on the
same number of (CPU) devices and writes their rows in the study's CSV layout.

  study_jax.py PROBLEMS.json OUT.csv

PROBLEMS.json is what tessel_study writes beside its results (platform, devices, repetitions,
min_time, and per problem: workload, size, bytes, flops, unit). The bytes and flops are tessel's,
so both applications' figures of merit count the same work. ./tessel study runs this on the host
when `import jax` works there and merges the rows (tessel_study --merge); problems JAX cannot run
here are left out, which the PP metric counts as unsupported.
"""
import csv
import json
import os
import statistics
import sys
import time


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    spec = json.load(open(argv[1]))
    devices = max(spec.get("devices") or [8])
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
    cols = ["problem", "platform", "application", "fom", "unit", "fom_min", "fom_max", "fom_stddev", "median_s",
            "repetitions", "flops", "bytes", "workload", "size", "devices", "mesh", "threads"]
    try:
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    except ImportError:
        # Optional: without JAX the study is tessel's alone (a header-only CSV merges as no rows).
        with open(argv[2], "w", newline="") as f:
            csv.DictWriter(f, fieldnames=cols).writeheader()
        print("study_jax.py: jax is not importable here: no JAX rows", file=sys.stderr)
        return 0

    devs = jax.devices()[:devices]
    if len(devs) < devices:
        print(f"study_jax.py: JAX has {len(devs)} devices, the study wants {devices}", file=sys.stderr)
        return 1
    mesh = Mesh(devs, ("x",))
    rows_sharded = NamedSharding(mesh, P("x"))
    replicated = NamedSharding(mesh, P())

    def normal(key, shape, sharding):
        return jax.device_put(jax.random.normal(jax.random.PRNGKey(key), shape, jnp.float32), sharding)

    def make(workload, size):
        if workload == "fused_chain":
            a, x, b = (normal(k, (size["n"],), rows_sharded) for k in range(3))
            f = jax.jit(lambda a, x, b: jnp.tanh(a * x + b) * 0.5 - x / 3.0)
            return lambda: f(a, x, b)
        if workload in ("softmax", "layer_norm_gelu", "rms_norm"):
            shape = (size["rows"], size["cols"])
            x = normal(0, shape, rows_sharded)
            g = jax.device_put(jax.random.uniform(jax.random.PRNGKey(1), (size["cols"],), jnp.float32, 0.5, 1.5),
                               replicated)
            b = normal(2, (size["cols"],), replicated)
            if workload == "softmax":
                f = jax.jit(lambda x: jax.nn.softmax(x, axis=-1))
                return lambda: f(x)
            if workload == "layer_norm_gelu":
                f = jax.jit(lambda x, g, b: jax.nn.gelu(
                    (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * g + b))
                return lambda: f(x, g, b)
            f = jax.jit(lambda x, g: x * (jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g))
            return lambda: f(x, g)
        if workload == "megatron_mlp":
            x = normal(0, (size["batch"], size["model"]), rows_sharded)
            w1 = normal(1, (size["model"], size["hidden"]), replicated)
            w2 = normal(2, (size["hidden"], size["model"]), replicated)
            f = jax.jit(lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2)
            return lambda: f(x, w1, w2)
        if workload in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
            if hasattr(jax, "shard_map"):  # JAX >= 0.8
                def shard_map(f, **kw):
                    return jax.shard_map(f, check_vma=False, **kw)
            else:
                from jax.experimental.shard_map import shard_map as experimental

                def shard_map(f, **kw):
                    return experimental(f, check_rep=False, **kw)

            rows = size["mb"] * (1 << 20) // 4 // 1024
            n = devices
            if workload == "all_gather":
                x = normal(0, (rows, 1024), rows_sharded)  # each device holds rows / n
                body, out = (lambda v: jax.lax.all_gather(v, "x", tiled=True)), P()
            elif workload == "all_to_all":
                x = normal(0, (rows * n, 1024 * n), rows_sharded)  # mb MiB of rows per device
                body = lambda v: jax.lax.all_to_all(v, "x", 1, 0, tiled=True)  # noqa: E731
                out = P(None, "x")
            else:
                x = normal(0, (rows * n, 1024), rows_sharded)  # mb MiB per device
                if workload == "all_reduce":
                    body, out = (lambda v: jax.lax.psum(v, "x")), P()
                else:
                    body, out = (lambda v: jax.lax.psum_scatter(v, "x", tiled=True)), P("x")
            f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=out))
            return lambda: f(x)
        return None

    reps, min_time = int(spec.get("repetitions", 5)), float(spec.get("min_time", 0.05))
    out_rows = []
    for p in spec["problems"]:
        try:
            call = make(p["workload"], p["size"])
            if call is None:
                continue
            jax.block_until_ready(call())
            t0 = time.perf_counter()
            jax.block_until_ready(call())
            calls = max(1, int(min_time / max(time.perf_counter() - t0, 1e-7)) + 1)
            seconds = []
            for _ in range(reps):
                t0 = time.perf_counter()
                # Each call waits for its result: PjRt runs independent executions concurrently,
                # so waiting for the last one alone would not wait for the others (and tessel's
                # calls are synchronous too).
                for _ in range(calls):
                    jax.block_until_ready(call())
                seconds.append((time.perf_counter() - t0) / calls)
        except Exception as e:  # a problem JAX cannot run here is unsupported, not a failed study
            print(f"study_jax.py: {p['problem']}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        work = (p["flops"] if p["unit"] == "GFLOP/s" else p["bytes"]) / 1e9
        foms = [work / s for s in seconds]
        out_rows.append({
            "problem": p["problem"], "platform": spec["platform"], "application": f"jax d{devices}",
            "fom": statistics.median(foms), "unit": p["unit"], "fom_min": min(foms), "fom_max": max(foms),
            "fom_stddev": statistics.stdev(foms) if len(foms) > 1 else 0.0, "median_s": statistics.median(seconds),
            "repetitions": reps, "flops": p["flops"], "bytes": p["bytes"], "workload": p["workload"],
            "size": p["problem"].split(" ", 1)[1], "devices": devices, "mesh": str(devices), "threads": 0})
        print(f"[jax] {p['problem']}: {out_rows[-1]['fom']:.2f} {p['unit']}", file=sys.stderr)
    with open(argv[2], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(out_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
