#!/usr/bin/env python3
"""Pictures of a tessel study (./tessel study): PNGs from results.csv or merged.csv.

  study_plot.py RESULTS.csv [OUT_DIR]

writes into OUT_DIR (default: the CSV's folder)
  cascade.png   per problem: each application's efficiency on every platform, platforms sorted
                best first (Pennycook's cascade), and its PP (harmonic mean over the platforms,
                0 when one is unsupported) as a bar;
  roofline.png  per workload: attained GFLOP/s against arithmetic intensity (flops / byte) under
                the measured ceilings of each platform (STREAM triad bandwidth, BLAS SGEMM peak, and
                the vector FMA peak of every thread, dotted, where it is higher);
                the collectives, which do (almost) no flops, as GB/s against the copy limit;
  jax.png       when JAX rows are present: tessel's best configuration against JAX per problem.
Only the standard library and matplotlib (Debian's python3-matplotlib).
"""
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EFF = "app eff"


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for col in ("problem", "platform", "application", "fom", "unit"):
        if rows and col not in rows[0]:
            sys.exit(f"study_plot.py: {path} has no '{col}' column (not a tessel study CSV)")
    for r in rows:
        for k in ("fom", "app eff", "arch eff", "limit", "flops", "bytes", "median_s", "peak_GBps", "peak_GFLOPps",
                  "peak_FMA_GFLOPps", "fom_min", "fom_max"):
            try:
                r[k] = float(r.get(k) or 0)
            except ValueError:
                r[k] = 0.0
    return rows


def pp(effs):
    """Pennycook's PP: harmonic mean, 0 if any platform is unsupported (None) or 0."""
    if not effs or any(e is None or e <= 0 for e in effs):
        return 0.0
    return len(effs) / sum(1.0 / e for e in effs)


def colors_for(names):
    cmap = plt.get_cmap("tab10")
    return {n: cmap(i % 10) for i, n in enumerate(names)}


def cascade(rows, out, eff_col=EFF):
    problems = list(OrderedDict.fromkeys(r["problem"] for r in rows))
    apps = list(OrderedDict.fromkeys(r["application"] for r in rows))
    color = colors_for(apps)
    best = defaultdict(float)  # (problem, application, platform) -> best efficiency
    platforms = defaultdict(list)
    for r in rows:
        key = (r["problem"], r["application"], r["platform"])
        best[key] = max(best[key], r[eff_col])
        if r["platform"] not in platforms[r["problem"]]:
            platforms[r["problem"]].append(r["platform"])
    ncols = min(3, len(problems))
    nrows = math.ceil(len(problems) / ncols)
    height = 2.6 * nrows + 0.9
    fig, axes = plt.subplots(nrows, 2 * ncols, figsize=(4.6 * ncols, height), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1.3] * ncols})
    for i, problem in enumerate(problems):
        ax, bx = axes[i // ncols][2 * (i % ncols)], axes[i // ncols][2 * (i % ncols) + 1]
        hs = platforms[problem]
        scores = []
        for app in apps:
            effs = [best.get((problem, app, h)) for h in hs]
            if all(e is None for e in effs):
                continue
            supported = sorted((e for e in effs if e is not None), reverse=True)
            ax.plot(range(1, len(supported) + 1), supported, "o-", color=color[app], ms=5, lw=1.5)
            scores.append((app, pp(effs)))
        ax.set_ylim(0, 1.05)
        ax.set_xlim(0.5, max(1, len(hs)) + 0.5)
        ax.set_xticks(range(1, len(hs) + 1))
        ax.set_title(problem, fontsize=9)
        ax.set_xlabel("platforms, best first", fontsize=8)
        ax.set_ylabel(eff_col, fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        y = range(len(scores))
        bx.barh(list(y), [s for _, s in scores], height=0.6, color=[color[a] for a, _ in scores])
        for k, (_, s) in enumerate(scores):
            bx.text(min(s, 0.98), k, f"{s:.2f}", va="center", ha="right" if s > 0.3 else "left", fontsize=7,
                    color="white" if s > 0.3 else "black")
        bx.set_xlim(0, 1)
        bx.set_yticks([])
        bx.invert_yaxis()
        bx.set_title("PP", fontsize=9)
        bx.tick_params(labelsize=7)
    for j in range(len(problems), nrows * ncols):
        axes[j // ncols][2 * (j % ncols)].axis("off")
        axes[j // ncols][2 * (j % ncols) + 1].axis("off")
    handles = [plt.Line2D([], [], color=color[a], marker="o", lw=1.5) for a in apps]
    fig.legend(handles, apps, loc="lower center", ncol=min(4, len(apps)), fontsize=8, frameon=False)
    n_platforms = len({r["platform"] for r in rows})
    fig.suptitle(f"Cascade of {eff_col} over {n_platforms} platform{'s' if n_platforms > 1 else ''} "
                 "(bars: performance portability)", fontsize=10)
    legend_rows = math.ceil(len(apps) / min(4, len(apps)))
    fig.tight_layout(rect=(0, (0.2 + 0.2 * legend_rows) / height, 1, 1 - 0.4 / height))
    fig.savefig(os.path.join(out, "cascade.png"), dpi=90)
    plt.close(fig)


def roofline(rows, out):
    workloads = list(OrderedDict.fromkeys(r["workload"] or r["problem"].split()[0] for r in rows))
    # Collectives (measured against a copy) do (almost) no flops: they get a GB/s panel of their own.
    compute = [w for w in workloads if any(r["workload"] == w and r.get("limit_name") != "copy" and r["flops"] > 0
                                           for r in rows)]
    collectives = [w for w in workloads if w not in compute]
    panels = compute + (["collectives"] if collectives else [])
    apps = list(OrderedDict.fromkeys(r["application"] for r in rows))
    platforms = list(OrderedDict.fromkeys(r["platform"] for r in rows))
    color = colors_for(apps)
    markers = "osD^v<>ph*"
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    height = 3.4 * nrows + 0.9
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, height), squeeze=False)
    for i, w in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        if w == "collectives":
            sel = [r for r in rows if r["workload"] in collectives]
            labels = list(OrderedDict.fromkeys(r["problem"] for r in sel))
            here = [a for a in apps if any(r["application"] == a for r in sel)]
            width = 0.8 / max(1, len(here))
            for k, app in enumerate(here):
                xs, ys = [], []
                for j, p in enumerate(labels):
                    v = [r["fom"] for r in sel if r["problem"] == p and r["application"] == app]
                    if v:
                        xs.append(j + (k - (len(here) - 1) / 2) * width)
                        ys.append(max(v))
                ax.bar(xs, ys, width, color=color[app])
            copy = max((r["limit"] for r in sel if r.get("limit_name") == "copy"), default=0)
            if copy:
                ax.axhline(copy, color="k", ls="--", lw=1)
                ax.text(0.98, copy, f"copy {copy:.1f} GB/s", ha="right", va="bottom", fontsize=7,
                        transform=ax.get_yaxis_transform())
                ax.set_ylim(0, max([copy] + [r["fom"] for r in sel]) * 1.15)
            ax.set_xlim(-0.5, len(labels) - 0.5)
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels([p.replace(" ", "\n") for p in labels], fontsize=7)
            ax.set_ylabel("GB/s", fontsize=8)
            ax.set_title("collectives: GB/s against a copy", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(axis="y", alpha=0.3)
            continue
        sel = [r for r in rows if r["workload"] == w and r["flops"] > 0 and r["bytes"] > 0 and r["median_s"] > 0]
        ai = [r["flops"] / r["bytes"] for r in sel]
        lo, hi = min(ai + [0.1]) / 4, max(ai + [100]) * 4
        xs = [lo * (hi / lo) ** (k / 60) for k in range(61)]
        top = 0
        for pi, plat in enumerate(platforms):
            bw = max((r["peak_GBps"] for r in rows if r["platform"] == plat), default=0)
            fl = max((r["peak_GFLOPps"] for r in rows if r["platform"] == plat), default=0)
            if bw <= 0 or fl <= 0:
                continue
            ls = ["-", "--", ":", "-."][pi % 4]
            ax.plot(xs, [min(fl, bw * x) for x in xs], color="0.3", ls=ls, lw=1.2)
            ax.text(hi / 1.3, fl * 1.15, f"SGEMM {fl:.0f} GFLOP/s", ha="right", va="bottom", fontsize=6.5, color="0.3")
            ax.text(lo * 1.4, bw * lo * 1.4 * 1.6, f"triad {bw:.1f} GB/s", ha="left", va="bottom", fontsize=6.5,
                    color="0.3")
            top = max(top, fl)
            fma = max((r["peak_FMA_GFLOPps"] for r in rows if r["platform"] == plat), default=0)
            if fma > fl:
                ax.plot(xs, [min(fma, bw * x) for x in xs], color="0.6", ls=":", lw=1)
                ax.text(hi / 1.3, fma * 1.15, f"FMA peak {fma:.0f}", ha="right", va="bottom", fontsize=6.5,
                        color="0.5")
                top = max(top, fma)
        for r in sel:
            x = r["flops"] / r["bytes"]
            y = r["flops"] / r["median_s"] / 1e9
            m = markers[platforms.index(r["platform"]) % len(markers)]
            ax.plot([x], [y], m, color=color[r["application"]], ms=6, mec="k", mew=0.4)
        sizes = OrderedDict()
        for r in sel:
            sizes.setdefault(r["size"], []).append(r)
        for size, rs in sizes.items():
            r = max(rs, key=lambda r: r["flops"] / r["median_s"])
            ax.annotate(size, (r["flops"] / r["bytes"], r["flops"] / r["median_s"] / 1e9), fontsize=6,
                        xytext=(4, -9), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        if top:
            ax.set_ylim(top=top * 4)
        ax.set_xlabel("arithmetic intensity (flop / byte)", fontsize=8)
        ax.set_ylabel("attained GFLOP/s", fontsize=8)
        ax.set_title(w, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(which="both", alpha=0.2)
    for j in range(len(panels), nrows * ncols):
        axes[j // ncols][j % ncols].axis("off")
    handles = [plt.Line2D([], [], color=color[a], marker="o", ls="", mec="k", mew=0.4) for a in apps]
    labels = list(apps)
    if len(platforms) > 1:
        for pi, plat in enumerate(platforms):
            handles.append(plt.Line2D([], [], color="0.3", marker=markers[pi % len(markers)], ls=["-", "--", ":", "-."][pi % 4]))
            labels.append(plat)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8, frameon=False)
    title = platforms[0] if len(platforms) == 1 else f"{len(platforms)} platforms"
    fig.suptitle(f"Rooflines with the limits measured in the same run ({title})", fontsize=10)
    legend_rows = math.ceil(len(labels) / min(4, len(labels)))
    fig.tight_layout(rect=(0, (0.2 + 0.2 * legend_rows) / height, 1, 1 - 0.4 / height))
    fig.savefig(os.path.join(out, "roofline.png"), dpi=90)
    plt.close(fig)


def jax_bars(rows, out):
    jax = [r for r in rows if r["application"].startswith("jax")]
    if not jax:
        return False
    problems = list(OrderedDict.fromkeys(r["problem"] for r in jax))
    platforms = list(OrderedDict.fromkeys(r["platform"] for r in jax))
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(problems) * len(platforms) + 2), 3.8))
    labels, t_vals, j_vals, units = [], [], [], []
    for plat in platforms:
        for p in problems:
            t = [r for r in rows if r["problem"] == p and r["platform"] == plat and r["application"].startswith("tessel")]
            j = [r for r in jax if r["problem"] == p and r["platform"] == plat]
            if not t or not j:
                continue
            labels.append(p.replace(" ", "\n") + ("" if len(platforms) == 1 else "\n" + plat))
            t_vals.append(max(t, key=lambda r: r["fom"]))
            j_vals.append(max(j, key=lambda r: r["fom"]))
    xs = range(len(labels))
    tb = ax.bar([x - 0.2 for x in xs], [r["app eff"] for r in t_vals], 0.4, label="tessel (best configuration)",
                color="tab:blue")
    jb = ax.bar([x + 0.2 for x in xs], [r["app eff"] for r in j_vals], 0.4, label="JAX", color="tab:orange")
    for bars, rs in ((tb, t_vals), (jb, j_vals)):
        for b, r in zip(bars, rs):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 0.01, f"{r['fom']:.1f}\n{r['unit']}",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylim(0, 1.45)  # room above the bars' labels for the legend
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("app eff (fom / best on the platform)", fontsize=8)
    ax.legend(fontsize=8, loc="upper center", ncol=2, frameon=False)
    ax.set_title("tessel and JAX on the same problems", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "jax.png"), dpi=90)
    plt.close(fig)
    return True


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    path = argv[1]
    if not os.path.exists(path):
        sys.exit(f"study_plot.py: no such result file '{path}'")
    out = argv[2] if len(argv) > 2 else os.path.dirname(path) or "."
    os.makedirs(out, exist_ok=True)
    rows = read_rows(path)
    if not rows:
        sys.exit(f"study_plot.py: {path} holds no results")
    cascade(rows, out)
    roofline(rows, out)
    made = ["cascade.png", "roofline.png"]
    if jax_bars(rows, out):
        made.append("jax.png")
    elif os.path.exists(os.path.join(out, "jax.png")):
        os.remove(os.path.join(out, "jax.png"))  # an earlier run's, with JAX: not these results
    print("pictures: " + ", ".join(os.path.join(out, m) for m in made))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
