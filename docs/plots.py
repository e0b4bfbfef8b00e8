"""Turns the benchmark CSVs (docs/results/<gpu>.csv, written by `make bench`)
into the course's plots. Every number drawn comes from a CSV row; nothing is
typed in here.

    python docs/plots.py docs/results/*.csv --out docs/img

For each CSV (one GPU) it writes three PNGs:
  <gpu>-sweep.png   effective GB/s against N (log2) at M x N = 2^26, one line
                    per lesson (its first kernel in the CSV, the one its
                    program runs), plus the copy roofline and cuDNN
  <gpu>-paths.png   the same for lesson 8's entry point and each of its
                    paths forced on every shape
  <gpu>-bars.png    every kernel at one shape (16384 x 4096, `make lessons`)
                    as % of the copy
  <gpu>-small.png   1024 x 512 (2 MiB, fits in L2): time per call in
                    microseconds, where launch overhead dominates
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

SWEEP_ELEMS = 1 << 26


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"lesson", "name", "rows", "cols", "median_ms", "gbps", "pct_of_copy", "gpu", "date", "commit"}
    if not rows:
        sys.exit(f"plots: {path} has no rows")
    missing = need - set(rows[0])
    if missing:
        sys.exit(f"plots: {path} lacks columns {sorted(missing)}")
    for r in rows:
        r["rows"], r["cols"], r["lesson"] = int(r["rows"]), int(r["cols"]), int(r["lesson"])
        r["median_ms"], r["gbps"], r["pct_of_copy"] = float(r["median_ms"]), float(r["gbps"]), float(r["pct_of_copy"])
    return rows


def label(r):
    if r["name"] == "copy":
        return "copy (cudaMemcpy D2D)"
    if r["lesson"] == 0:
        return r["name"]
    return f"{r['lesson']} {r['name']}"


def series(rows):
    """Kernels in the order they first appear (lesson order), copy first."""
    order = []
    for r in rows:
        if label(r) not in order:
            order.append(label(r))
    order.sort(key=lambda s: (not s.startswith("copy"), s.startswith("cudnn"), 0))
    return order


def caption(rows):
    r = rows[0]
    return f"{r['gpu']}, {r['date'][:10]}, commit {r['commit']}"


def main_kernels(rows):
    """Per lesson, its first kernel in the CSV: the lesson's own."""
    first = {}
    for r in rows:
        if r["lesson"] > 0:
            first.setdefault(r["lesson"], r["name"])
    return {(k, v) for k, v in first.items()}


def plot_sweep(rows, out, keep, title):
    sweep = [r for r in rows if r["rows"] * r["cols"] == SWEEP_ELEMS and keep(r)]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = iter(plt.get_cmap("tab10").colors)
    for name in series(sweep):
        pts = sorted((r["cols"], r["gbps"]) for r in sweep if label(r) == name)
        if not pts:
            continue
        xs, ys = zip(*pts)
        if name.startswith("copy"):
            style = {"color": "black", "linestyle": "--", "linewidth": 2}
        elif name == "cudnn":
            style = {"color": "grey", "linestyle": ":", "marker": "x", "markersize": 4, "linewidth": 1.5}
        else:
            style = {"color": next(colors), "marker": "o", "markersize": 3}
        ax.plot(xs, ys, label=name, **style)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (row length); M x N = 2^26 floats")
    ax.set_ylabel("effective GB/s (2 x M x N x 4 bytes / time)")
    ax.set_title(title + "\n" + caption(rows), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_bars(rows, out, shape=(16384, 4096)):
    at = [r for r in rows if (r["rows"], r["cols"]) == shape and r["name"] != "copy"]
    if not at:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(at) + 1.5))
    names = [label(r) for r in at]
    ax.barh(names, [r["pct_of_copy"] for r in at], color="tab:blue")
    for i, r in enumerate(at):
        ax.text(r["pct_of_copy"] + 1, i, f"{r['pct_of_copy']:.1f} %  ({r['gbps']:.0f} GB/s)", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 120)
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("% of the device-to-device copy of the same bytes")
    ax.set_title(f"Every kernel at {shape[0]} x {shape[1]}\n" + caption(rows), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def plot_small(rows, out, shape=(1024, 512)):
    at = [r for r in rows if (r["rows"], r["cols"]) == shape]
    if not at:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(at) + 1.5))
    names = [label(r) for r in at]
    us = [1000 * r["median_ms"] for r in at]
    ax.barh(names, us, color=["black" if r["name"] == "copy" else "tab:orange" for r in at])
    for i, v in enumerate(us):
        ax.text(v, i, f" {v:.1f} us", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time per call, microseconds (median)")
    ax.set_title(f"A small problem: {shape[0]} x {shape[1]} (2 MiB, fits in L2)\n" + caption(rows), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for path in a.csv:
        rows = read_rows(path)
        base = os.path.join(a.out, os.path.splitext(os.path.basename(path))[0])
        mains = main_kernels(rows)
        plot_sweep(rows, base + "-sweep.png", lambda r: r["lesson"] == 0 or (r["lesson"], r["name"]) in mains,
                   "Softmax bandwidth against row length, one line per lesson")
        wrote = [base + "-sweep.png"]
        if any(r["lesson"] == 8 for r in rows):
            plot_sweep(rows, base + "-paths.png", lambda r: r["lesson"] in (0, 8),
                       "Lesson 8: the entry point and each of its paths forced on every shape")
            wrote.append(base + "-paths.png")
        if plot_bars(rows, base + "-bars.png"):
            wrote.append(base + "-bars.png")
        if plot_small(rows, base + "-small.png"):
            wrote.append(base + "-small.png")
        print("wrote " + " ".join(wrote))


if __name__ == "__main__":
    main()
