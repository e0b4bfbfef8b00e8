"""Turns the benchmark CSVs (docs/results/<gpu>.csv, written by `make bench`)
into the course's plots. Every number drawn comes from a CSV row; nothing is
typed in here.

    python docs/plots.py docs/results/*.csv --out docs/img

For each CSV (one GPU) it writes these PNGs (those it has rows for):
  <gpu>-sweep.png   effective GB/s against N (log2) at M x N = 2^26, one line
                    per lesson (its first kernel in the CSV, the one its
                    program runs), plus the copy roofline and cuDNN
  <gpu>-paths.png   the same for lesson 8's entry point and each of its
                    paths forced on every shape
  <gpu>-bars.png    every kernel at one shape (16384 x 4096, `make lessons`)
                    as % of the copy
  <gpu>-small.png   1024 x 512 (2 MiB, fits in L2): time per call in
                    microseconds, where launch overhead dominates
  <gpu>-climb.png   each lesson's main kernel at 16384 x 4096 as % of the
                    copy, lesson 1 to 8, with cuDNN for reference
  <gpu>-lessonL.png lesson L's kernels against N at M x N = 2^26 (% of
                    copy), beside lesson L-1's main kernel and the copy
  <gpu>-lesson9.png lesson 9 (16-bit storage): left, its entry points and
                    cuDNN in float16 and bfloat16 as % of the copy of the same
                    16-bit bytes; right, the float32 time of lesson 8 (and of
                    the copy) over the 16-bit time, against N
  <gpu>-lesson10.png lesson 10 (training): each kernel as % of its OWN bound
                    against N (the CSV's pct_of_copy in lesson 10's rows): the
                    backward against 1.5 x the copy, log-softmax and the
                    classifier against the copy, the cross-entropy against the
                    read-only pass, the float16 classifier against the 16-bit copy

Lesson 10's rows and lesson 0's "read" (the read-only pass, lesson 10's
cross-entropy bound) are measured against other bounds than the copy of a
softmax's 8 bytes: the softmax plots (sweep, paths, bars) leave them out.

A CSV's dtype column (f32, f16, bf16; absent in older CSVs: all float32)
names the storage type. A 16-bit row is known by its name and type
("fastest f16", "copy bf16"); the float32 plots leave those rows out.

Given two CSVs or more, it also compares each later one with the first:
  <b>-vs-<a>.png    (e.g. h200-vs-h100.png) per lesson, its main kernel's
                    effective GB/s on GPU b over GPU a's at the same shape,
                    against N at M x N = 2^26, with the same ratio for the copy

Lesson 11's table (docs/results/multi-gpu/*.csv, written by
lessons/11_multi_gpu/sweep.sh) has other columns and lives in a folder of its
own, so that the plots above and `make tables` never read it. Given with
--multi-gpu, each such CSV gives:
  lesson11-split.png  (lesson11-split-<csv>.png for a second CSV and later)
                    time per call at each shape, in the CSV's order: lesson 8
                    on one GPU, the split on one GPU, and on the most GPUs
                    measured by all-gather and by all-reduce (hatched: the
                    share in the collectives), with lesson 8's time over the
                    all-gather's above each shape

    python docs/plots.py docs/results/*.csv --multi-gpu docs/results/multi-gpu/*.csv --out docs/img

The CSV reading and what every plot shares are in plots_common.py; lesson
11's plot, from its table of other columns, in plots_split.py.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figstyle as st  # noqa: E402
from plots_common import (HALF_L, MAIN, SWEEP_ELEMS, TRAIN_L, caption, label, main_kernels, read_rows,  # noqa: E402
                          save, series, softmax_row)
from plots_split import plot_split, read_split_rows  # noqa: E402

CLIMB_SHAPE = (16384, 4096)
# lesson 10's kernels, the bound each is measured against, and its line
TRAIN = [("softmax_backward", "1.5 x copy", {"color": st.VARIANTS[0], "marker": "s"}),
         ("log_softmax_forward", "copy", {"color": st.VARIANTS[1], "marker": "v"}),
         ("cross_entropy_forward", "read-only pass", {"color": st.VARIANTS[5], "marker": "^"}),
         ("classifier_fused", "copy", {"color": st.LESSON[HALF_L], "marker": "o", "linewidth": 2.5}),
         ("classifier_fused f16", "16-bit copy", {"color": st.LESSON[HALF_L], "marker": "D", "linestyle": "-."})]


def plot_sweep(rows, out, keep, title):
    sweep = [r for r in rows if r["rows"] * r["cols"] == SWEEP_ELEMS and r["dtype"] == "f32" and softmax_row(r)
             and keep(r)]
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
    save(fig, out, dpi=110)


def plot_bars(rows, out, shape=(16384, 4096)):
    at = [r for r in rows if (r["rows"], r["cols"]) == shape and not (r["lesson"] == 0 and r["name"].startswith("copy"))
          and softmax_row(r)]
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
    return save(fig, out, dpi=110)


def plot_small(rows, out, shape=(1024, 512)):
    at = [r for r in rows if (r["rows"], r["cols"]) == shape]
    if not at:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(at) + 1.5))
    names = [label(r) for r in at]
    us = [1000 * r["median_ms"] for r in at]
    ax.barh(names, us, color=["black" if r["lesson"] == 0 and r["name"].startswith("copy") else "tab:orange" for r in at])
    for i, v in enumerate(us):
        ax.text(v, i, f" {v:.1f} us", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time per call, microseconds (median)")
    ax.set_title(f"A small problem: {shape[0]} x {shape[1]} (2 MiB, fits in L2)\n" + caption(rows), fontsize=10)
    return save(fig, out, dpi=110)


def plot_climb(rows, out, shape=CLIMB_SHAPE):
    """The course on one screen: lesson 1 to 8 at one shape, as % of copy."""
    at = {(r["lesson"], r["name"]): r for r in rows if (r["rows"], r["cols"]) == shape}
    lessons = [L for L in sorted(MAIN) if (L, MAIN[L]) in at]
    if not lessons:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    vals = [at[(L, MAIN[L])]["pct_of_copy"] for L in lessons]
    xs = range(len(lessons))
    ax.bar(xs, vals, color=[st.LESSON[L] for L in lessons], width=0.7, edgecolor=st.INK, linewidth=0.6, zorder=2)
    for x, L, v in zip(xs, lessons, vals):
        gb = at[(L, MAIN[L])]["gbps"]
        ax.text(x, v + 1.5, f"{v:.1f} %", ha="center", va="bottom", fontsize=10, fontweight="bold")
        ax.text(x, v + 1.5 + 7, f"{gb:.0f} GB/s", ha="center", va="bottom", fontsize=7, color="#444444")
    ax.axhline(100, color=st.COPY, linestyle="--", linewidth=1.5, zorder=3)
    copy = at.get((0, "copy"))
    copy_txt = f" ({copy['gbps']:.0f} GB/s)" if copy else ""
    ax.text(-0.45, 101.5, "copy = 100 %" + copy_txt, ha="left", va="bottom", fontsize=8)
    cud = at.get((0, "cudnn"))
    if cud:
        ax.axhline(cud["pct_of_copy"], color=st.CUDNN, linestyle=":", linewidth=1.3, zorder=3)
        ax.text(-0.5, cud["pct_of_copy"] - 1.5, f" cuDNN {cud['pct_of_copy']:.1f} %", ha="left", va="top", fontsize=8,
                color=st.CUDNN)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{L}\n{MAIN[L]}" for L in lessons], fontsize=9)
    ax.set_xlim(-0.5, len(lessons) - 0.5)
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("% of the copy of the same bytes")
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(True, axis="y", alpha=0.3, zorder=0)
    ax.set_title(f"Softmax of {shape[0]} x {shape[1]} floats: each lesson's main kernel\n" + caption(rows),
                 fontsize=10)
    return save(fig, out)


def lesson_shapes(rows, L):
    """Lesson L's rows on the sweep (M x N = 2^26); if it has none there, all of its rows."""
    mine = [r for r in rows if r["lesson"] == L]
    sweep = [r for r in mine if r["rows"] * r["cols"] == SWEEP_ELEMS]
    return (sweep, True) if sweep else (mine, False)


def plot_lesson(rows, L, out):
    """Lesson L's kernels against N, beside lesson L-1's main kernel and the copy."""
    mine, on_sweep = lesson_shapes(rows, L)
    if not mine:
        return False
    ns = {r["cols"] for r in mine}
    keep = [r for r in rows if r["cols"] in ns and (r["rows"] * r["cols"] == SWEEP_ELEMS) == on_sweep]
    names = []
    for r in mine:
        if r["name"] not in names:
            names.append(r["name"])
    if MAIN.get(L) in names:  # the lesson's main kernel first, in the lesson's colour
        names.remove(MAIN[L])
        names.insert(0, MAIN[L])
    fig, ax = plt.subplots(figsize=(7.5, 5.0))

    def line(sel, **style):
        pts = sorted((r["cols"], r["pct_of_copy"]) for r in keep if sel(r))
        if len(pts) == 1:  # one shape only: a line of one point needs a marker to show
            style.setdefault("marker", "o")
        if pts:
            ax.plot(*zip(*pts), **style)
        return pts

    line(lambda r: r["name"] == "copy", color=st.COPY, linestyle="--", linewidth=1.5, label="copy = 100 %")
    if L - 1 in MAIN:
        line(lambda r: (r["lesson"], r["name"]) == (L - 1, MAIN[L - 1]), color=st.PREV, linestyle="--",
             linewidth=2, label=f"lesson {L - 1}: {MAIN[L - 1]}")
    variants = iter(v for v in st.VARIANTS if v != st.LESSON[L])
    markers = iter("sv^D<>ph")
    peak = 0
    for i, name in enumerate(names):
        style = ({"color": st.LESSON[L], "linewidth": 2.5, "marker": "o", "markersize": 4} if i == 0 else
                 {"color": next(variants), "linewidth": 1.2, "marker": next(markers), "markersize": 3.5})
        pts = line(lambda r: (r["lesson"], r["name"]) == (L, name), label=f"lesson {L}: {name}", **style)
        peak = max([peak] + [p[1] for p in pts])
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 112)
    if peak < 25:  # a lesson far below the copy: the same lines, magnified, so their shape shows
        ins = ax.inset_axes([0.45, 0.28, 0.52, 0.42])
        for ln in ax.get_lines():
            if ln.get_label().startswith("lesson"):
                ins.plot(ln.get_xdata(), ln.get_ydata(), color=ln.get_color(), linestyle=ln.get_linestyle(),
                         linewidth=ln.get_linewidth(), marker=ln.get_marker(), markersize=3)
        ins.set_xscale("log", base=2)
        ins.set_ylim(0, peak * 1.15)
        ins.tick_params(labelsize=7)
        ins.set_title("the same, y magnified", fontsize=7)
        ins.grid(True, alpha=0.3)
    where = "M x N = 2^26 floats (256 MiB in, 256 MiB out)" if on_sweep else "the shapes it was measured at"
    ax.set_xlabel(f"N, the row length; {where}")
    ax.set_ylabel("% of the copy of the same bytes")
    ax.grid(True, which="major", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    # below the axes: inside, it would hide the lines at one end of N or the other
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    ax.set_title(f"Lesson {L}: its kernels against the row length\n" + caption(rows), fontsize=10)
    return save(fig, out)


def plot_half(rows, out):
    """Lesson 9: % of the 16-bit copy over N, and float32's time over 16-bit's."""
    sweep = [r for r in rows if r["rows"] * r["cols"] == SWEEP_ELEMS]
    at = {(r["lesson"], r["name"], r["cols"]): r for r in sweep}
    if not any(k[0] == HALF_L for k in at):
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 5.0))
    left.axhline(100, color=st.COPY, linestyle="--", linewidth=1.5, label="copy of the same 16-bit bytes = 100 %")
    series_ = [((HALF_L, "fastest f16"), {"color": st.LESSON[HALF_L], "linewidth": 2.5, "marker": "o"}),
               ((HALF_L, "fastest bf16"), {"color": st.LESSON[HALF_L], "linewidth": 1.5, "linestyle": "-.", "marker": "s"}),
               ((HALF_L, "fused f16"), {"color": st.VARIANTS[0], "linewidth": 1.2, "marker": "v"}),
               ((HALF_L, "fused bf16"), {"color": st.VARIANTS[0], "linewidth": 1.2, "linestyle": "-.", "marker": "^"}),
               ((0, "cudnn f16"), {"color": st.CUDNN, "linestyle": ":", "marker": "x"}),
               ((0, "cudnn bf16"), {"color": st.CUDNN, "linestyle": "-.", "marker": "+"})]
    for (L, name), style in series_:
        pts = sorted((n, r["pct_of_copy"]) for (L2, nm, n), r in at.items() if (L2, nm) == (L, name))
        if pts:
            who = f"lesson {L}: {name}" if L else name.replace("cudnn", "cuDNN")
            left.plot(*zip(*pts), label=who, markersize=3.5, **style)
    left.set_ylim(0, 112)
    left.set_ylabel("% of the copy of the same 16-bit bytes")
    left.set_title("16-bit storage against its own copy", fontsize=10)

    right.axhline(2.0, color=st.PREV, linewidth=1, zorder=1)
    right.text(0.01, 2.0, " 2: half the bytes, half the time", transform=right.get_yaxis_transform(), fontsize=7,
               color="#666666", va="bottom")

    def ratio(a, b):
        return sorted((n, at[a + (n,)]["median_ms"] / at[b + (n,)]["median_ms"]) for (L2, nm, n) in at
                      if (L2, nm) == b and a + (n,) in at and at[b + (n,)]["median_ms"] > 0)
    for (a, b, who, style) in [((0, "copy"), (0, "copy f16"), "copy: float32 / 16-bit",
                                {"color": st.COPY, "linestyle": "--", "linewidth": 2}),
                               ((8, MAIN[8]), (HALF_L, "fastest f16"), "lesson 8 float32 / lesson 9 float16",
                                {"color": st.LESSON[HALF_L], "linewidth": 2.5, "marker": "o"}),
                               ((8, MAIN[8]), (HALF_L, "fastest bf16"), "lesson 8 float32 / lesson 9 bfloat16",
                                {"color": st.LESSON[HALF_L], "linewidth": 1.5, "linestyle": "-.", "marker": "s"})]:
        pts = ratio(a, b)
        if pts:
            right.plot(*zip(*pts), label=who, markersize=3.5, **style)
    right.set_ylim(0, 2.6)
    right.set_ylabel("time in float32 / time in 16 bits (same shape)")
    right.set_title("What halving the bytes gives", fontsize=10)
    for ax in (left, right):
        sweep_axis(ax)
    fig.suptitle("Lesson 9: 16-bit storage, 32-bit arithmetic\n" + caption(rows), fontsize=10)
    return save(fig, out)


def sweep_axis(ax):
    """The N axis of lessons 9 and 10's sweep plots, their grid and their legend below."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N, the row length; M x N = 2^26 elements")
    ax.grid(True, which="major", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


def plot_train(rows, out):
    """Lesson 10: each kernel as % of its own bound over N, at M x N = 2^26."""
    sweep = [r for r in rows if r["lesson"] == TRAIN_L and r["rows"] * r["cols"] == SWEEP_ELEMS]
    if not sweep:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    ax.axhline(100, color=st.COPY, linestyle="--", linewidth=1.5, label="its bound = 100 %")
    # where the classifier's row no longer fits on chip, even across blocks:
    # more bytes than its design's 8
    split = [r["cols"] for r in sweep if r["name"] == "classifier_fused" and float(r.get("bytes_per_elem") or 0) > 8]
    if split:
        ax.axvspan(min(split) / 2 ** 0.5, max(split) * 2 ** 0.5, color="#eeeeee", zorder=0,
                   label="rows too long for the chip, split: read twice, the same bound")
    for name, bound, style in TRAIN:
        pts = sorted((r["cols"], r["pct_of_copy"]) for r in sweep if r["name"] == name)
        if not pts:
            continue
        style = {"linewidth": 1.5, "markersize": 3.5, **style}
        if len(pts) == 1:
            style.setdefault("marker", "o")
        ax.plot(*zip(*pts), label=f"{name} (of the {bound})", **style)
    ax.set_ylim(0, 112)
    ax.set_ylabel("% of the kernel's own bound (bound time / kernel time)")
    sweep_axis(ax)
    ax.set_title("Lesson 10: the training kernels, each against its own bound\n" + caption(rows), fontsize=10)
    return save(fig, out)


def short_gpu(name):
    """"NVIDIA H100 80GB HBM3" -> "H100", as tests/tables.awk's short_gpu."""
    w = name.split()
    i = 1 if w and w[0] == "NVIDIA" else 0
    if i < len(w) and w[i] in ("GeForce", "Tesla", "Quadro"):
        i += 1
    if i + 1 < len(w) and w[i] in ("RTX", "GTX"):
        return w[i] + " " + w[i + 1]
    return w[i] if i < len(w) else name


def plot_vs(base, other, out):
    """other / base, per lesson's main kernel over N, beside the copy's ratio: a
    memory-bound kernel gains what the memory gains, a latency-bound one less."""
    def gbps(rows):
        return {(r["lesson"], r["name"], r["cols"]): r["gbps"] for r in rows
                if r["rows"] * r["cols"] == SWEEP_ELEMS and r["gbps"] > 0}
    a, b = gbps(base), gbps(other)
    both = sorted(set(a) & set(b))
    if not any(k[:2] == (0, "copy") for k in both):
        return False
    na, nb = short_gpu(base[0]["gpu"]), short_gpu(other[0]["gpu"])

    def ratio(L, name):
        return [(n, b[(L2, nm, n)] / a[(L2, nm, n)]) for (L2, nm, n) in both if (L2, nm) == (L, name)]

    copy = ratio(0, "copy")
    groups = [[L for L in (1, 2, 3, 4) if ratio(L, MAIN[L])], [L for L in (5, 6, 7, 8) if ratio(L, MAIN[L])]]
    groups = [g for g in groups if g] or [[]]
    fig, axes = plt.subplots(1, len(groups), figsize=(6.0 * len(groups), 5.0), sharey=True, squeeze=False)
    top = max([1.5] + [v for L in MAIN for _, v in ratio(L, MAIN[L])])
    for ax, group in zip(axes[0], groups):
        ax.axhline(1.0, color=st.PREV, linewidth=1, zorder=1)
        ax.text(0.01, 0.99, "1.0: no faster", transform=ax.get_yaxis_transform(), fontsize=7, color="#666666",
                va="top")
        ax.plot(*zip(*copy), color=st.COPY, linestyle="--", linewidth=2, label=f"copy ({nb} / {na})", zorder=3)
        # lessons that run the same code path overlap (3 and 4, 5 and 7): a wide
        # line under a narrow one, with different markers, keeps both visible
        for i, L in enumerate(group):
            pts = ratio(L, MAIN[L])
            ax.plot(*zip(*pts), color=st.LESSON[L], marker="osD^"[i], markersize=6 - i, linewidth=4 - 0.8 * i,
                    label=f"lesson {L}: {MAIN[L]}", zorder=4 + i)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0.8, top + 0.1)
        ax.set_xlabel("N, the row length; M x N = 2^26 floats")
        ax.grid(True, which="major", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    axes[0][0].set_ylabel(f"GB/s on the {nb} / GB/s on the {na}")
    fig.suptitle(f"What the {nb}'s faster memory gives each lesson's main kernel\n"
                 f"{nb}: {caption(other)};  {na}: {caption(base)}", fontsize=10)
    return save(fig, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    # "*": `make plots` passes the option with whatever the folder holds, nothing included
    ap.add_argument("--multi-gpu", nargs="*", default=[], metavar="CSV",
                    help="lesson 11's tables (lessons/11_multi_gpu/sweep.sh): lesson11-split.png")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    every = [read_rows(path) for path in a.csv]  # all checked before any file is written
    split = [read_split_rows(path) for path in a.multi_gpu]
    os.makedirs(a.out, exist_ok=True)
    for path, rows in zip(a.csv, every):
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
        if plot_climb(rows, base + "-climb.png"):
            wrote.append(base + "-climb.png")
        for L in sorted({r["lesson"] for r in rows if r["lesson"] > 0}):
            if L == HALF_L:
                if plot_half(rows, base + f"-lesson{L}.png"):
                    wrote.append(base + f"-lesson{L}.png")
                continue
            if L == TRAIN_L:
                if plot_train(rows, base + f"-lesson{L}.png"):
                    wrote.append(base + f"-lesson{L}.png")
                continue
            if plot_lesson(rows, L, base + f"-lesson{L}.png"):
                wrote.append(base + f"-lesson{L}.png")
        print("wrote " + " ".join(wrote))
    for other in every[1:]:
        name = f"{short_gpu(other[0]['gpu'])}-vs-{short_gpu(every[0][0]['gpu'])}".lower().replace(" ", "-")
        if plot_vs(every[0], other, os.path.join(a.out, name + ".png")):
            print("wrote " + os.path.join(a.out, name + ".png"))
    # the texts link lesson11-split.png: the first CSV's keeps that name
    for i, (path, rows) in enumerate(zip(a.multi_gpu, split)):
        stem = "" if i == 0 else "-" + os.path.splitext(os.path.basename(path))[0]
        out = os.path.join(a.out, f"lesson11-split{stem}.png")
        if plot_split(rows, out):
            print("wrote " + out)


if __name__ == "__main__":
    main()
