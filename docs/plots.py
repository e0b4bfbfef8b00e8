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
"""
import argparse
import csv
import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figstyle as st  # noqa: E402

SWEEP_ELEMS = 1 << 26
CLIMB_SHAPE = (16384, 4096)
# each lesson's main kernel: the same list as tests/tables.awk's MAIN
MAIN = {1: "naive", 2: "stable", 3: "three-pass", 4: "warp", 5: "fused", 6: "online", 7: "attention-plain",
        8: "fastest"}
HALF_L = 9  # lesson 9 (16-bit storage) has a plot of its own: plot_half
TRAIN_L = 10  # lesson 10 (training kernels, each against its own bound): plot_train
# lesson 10's kernels, the bound each is measured against, and its line
TRAIN = [("softmax_backward", "1.5 x copy", {"color": st.VARIANTS[0], "marker": "s"}),
         ("log_softmax_forward", "copy", {"color": st.VARIANTS[1], "marker": "v"}),
         ("cross_entropy_forward", "read-only pass", {"color": st.VARIANTS[5], "marker": "^"}),
         ("classifier_fused", "copy", {"color": st.LESSON[HALF_L], "marker": "o", "linewidth": 2.5}),
         ("classifier_fused f16", "16-bit copy", {"color": st.LESSON[HALF_L], "marker": "D", "linestyle": "-."})]


def save(fig, out, dpi=st.DPI, **layout):
    """Lays out (layout: tight_layout's, e.g. rect= to keep room for a footer),
    writes and closes a figure; True (the plot was made)."""
    fig.tight_layout(**layout)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return True


def softmax_row(r):
    """A row measured against the copy of a softmax's bytes: not lesson 10's, not the read pass."""
    return r["lesson"] != TRAIN_L and (r["lesson"], r["name"]) != (0, "read")


def read_csv(path, need):
    """A CSV's rows as dicts; exits with one line when it is empty or lacks a column of need."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plots: {path} has no rows")
    missing = need - set(rows[0])
    if missing:
        sys.exit(f"plots: {path} lacks columns {sorted(missing)}")
    return rows


def read_rows(path):
    rows = read_csv(path, {"lesson", "name", "rows", "cols", "median_ms", "gbps", "pct_of_copy", "gpu", "date",
                           "commit"})
    for r in rows:
        r["rows"], r["cols"], r["lesson"] = int(r["rows"]), int(r["cols"]), int(r["lesson"])
        r["dtype"] = r.get("dtype") or "f32"
        if r["dtype"] != "f32":
            r["name"] = f"{r['name']} {r['dtype']}"
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
    """The GPU, then each date and commit once, in the CSV's order (a bench
    CSV has one of each; lesson 11's table may hold several runs)."""
    def once(key):
        return ", ".join(dict.fromkeys(r[key][:10] if key == "date" else r[key] for r in rows))
    commits = once("commit")
    text = f"{rows[0]['gpu']}, {once('date')}, commit{'s' if ',' in commits else ''} {commits}"
    return textwrap.fill(text, 80)  # a long list of commits would run off the figure's sides


def main_kernels(rows):
    """Per lesson, its first kernel in the CSV: the lesson's own."""
    first = {}
    for r in rows:
        if r["lesson"] > 0 and r["dtype"] == "f32":
            first.setdefault(r["lesson"], r["name"])
    return {(k, v) for k, v in first.items()}


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


def read_split_rows(path):
    """Lesson 11's table: one row per GPU count, shape and way of combining."""
    rows = read_csv(path, {"gpus", "rows", "cols", "combine", "median_ms", "collectives_pct", "lesson8_ms",
                           "lesson8_over_this", "gpu", "date", "commit"})
    for r in rows:
        r["gpus"], r["rows"], r["cols"] = int(r["gpus"]), int(r["rows"]), int(r["cols"])
        r["median_ms"], r["collectives_pct"] = float(r["median_ms"]), float(r["collectives_pct"])
        # empty where lesson 8 was not run (sweep.sh: up to 2^32 elements)
        for k in ("lesson8_ms", "lesson8_over_this"):
            r[k] = float(r[k]) if r[k] else None
    return rows


def dim(n):
    """A dimension as the texts write it: 32768, but 2^28 from 2^20 up (a power of two)."""
    if n >= 1 << 20 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def plot_split(rows, out):
    """Lesson 11: time per call at each shape, lesson 8 on one GPU beside the
    split on one GPU and on K, by each way of combining. A log scale, since
    the shapes run from a decoding step (10 us) to a 128 GiB row (50 ms)."""
    K = max(r["gpus"] for r in rows)
    if K < 2:
        return False
    shapes = list(dict.fromkeys((r["rows"], r["cols"]) for r in rows))  # the CSV's order
    at = {(r["gpus"], r["combine"], r["rows"], r["cols"]): r for r in rows}
    lesson8 = {}
    for r in rows:
        if r["lesson8_ms"] is not None:
            lesson8.setdefault((r["rows"], r["cols"]), r["lesson8_ms"])

    def ms(gpus, combine):
        return lambda s: at[(gpus, combine) + s]["median_ms"] if (gpus, combine) + s in at else None

    def share(gpus, combine):
        return lambda s: at[(gpus, combine) + s]["collectives_pct"] if (gpus, combine) + s in at else 0.0

    c11 = st.LESSON[11]
    # (label, time at a shape or None, share in the collectives, bar style)
    bars = [("lesson 8, one GPU", lesson8.get, None, {"color": st.LESSON[8]}),
            ("split over 1 GPU (all-gather)", ms(1, "all-gather"), None, {"color": "#cedb9c", "edgecolor": c11}),
            (f"{K} GPUs, all-gather", ms(K, "all-gather"), share(K, "all-gather"), {"color": c11}),
            (f"{K} GPUs, all-reduce", ms(K, "all-reduce"), share(K, "all-reduce"), {"color": st.VARIANTS[0]})]
    times = [t(s) for _, t, _, _ in bars for s in shapes if t(s)]
    floor, top = min(times) / 2, max(times) * 6  # above the tallest: room for the speed-ups and the legend
    width = 0.8 / len(bars)
    fig, ax = plt.subplots(figsize=(11.0, 5.6))
    shown = set()  # one legend entry per series
    for b, (name, t, pct, style) in enumerate(bars):
        for x, s in enumerate(shapes):
            xb = x + (b - (len(bars) - 1) / 2) * width
            v = t(s)
            if v is None:  # a gap says why it is empty, so that it does not read as zero
                ax.text(xb, floor * 1.15, "not measured", rotation=90, ha="center", va="bottom", fontsize=7,
                        color="#888888")
                continue
            ax.bar(xb, v - floor, bottom=floor, width=width, linewidth=0.6, zorder=2,
                   **{"edgecolor": st.INK, **style}, label=None if name in shown else name)
            shown.add(name)
            if pct and pct(s) > 0:
                # the collectives' share as the bar's top part: t (1 - p) to t. On
                # a log scale its height is -log(1 - p), so a share of a few per cent
                # hardly shows, as the collectives hardly matter there
                lo = v * (1 - pct(s) / 100)
                ax.bar(xb, v - lo, bottom=lo, width=width, color="none", edgecolor="white", hatch="////",
                       linewidth=0, zorder=3)
    # lesson 8's time over the K-GPU all-gather's, above each shape: below 1, the split is slower
    for x, s in enumerate(shapes):
        r = at.get((K, "all-gather") + s)
        if r and r["lesson8_over_this"] is not None:
            high = max(t(s) or 0 for _, t, _, _ in bars)
            v = r["lesson8_over_this"]
            ax.text(x, high * 1.3, f"{v:.2f}×", ha="center", va="bottom", fontsize=9, fontweight="bold",
                    color=st.INK if v >= 1 else st.WARN)
    ax.set_yscale("log")
    ax.set_ylim(floor, top)
    # 0.01, 0.1, 1, 10 rather than 10^-2 ...: ms a learner reads off directly
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel("time per call, ms (median; log scale)")
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([f"{dim(m)} ×\n{dim(n)}" for m, n in shapes], fontsize=8.5)
    ax.set_xlim(-0.5, len(shapes) - 0.5)
    ax.set_xlabel("M × N: rows × row length (floats), in the order measured")
    ax.grid(True, axis="y", which="major", alpha=0.3, zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    hatched = Patch(facecolor="#bbbbbb", edgecolor="white", hatch="////", linewidth=0,
                    label=f"hatched: the part of a {K}-GPU call in the collectives")
    ax.legend(handles=ax.get_legend_handles_labels()[0] + [hatched], fontsize=8, loc="upper left", frameon=False,
              title=f"n× above a shape: lesson 8's time / the {K}-GPU all-gather's (red: slower than lesson 8)",
              title_fontsize=8, alignment="left")
    ax.set_title(f"Lesson 11: softmax with each row split over {K} GPUs, time per call\n" + caption(rows),
                 fontsize=10)
    fig.text(0.01, 0.012, "Reproduce: make build/lesson11 build/lesson8, then bash lessons/11_multi_gpu/sweep.sh "
             "> out.csv.  Not measured: lesson 8 beyond 2^32 elements (its harness holds x and y on the host "
             "too),\nor a row that one GPU cannot hold.", fontsize=7.5, color="#444444", va="bottom")
    return save(fig, out, rect=(0, 0.05, 1, 1))


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
