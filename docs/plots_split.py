"""Lesson 11's plot (lesson11-split.png): its table, from
lessons/11_multi_gpu/sweep.sh, has columns of its own (GPU counts, ways of
combining, the collectives' share), so its reader and its plot live apart
from the single-GPU plots of docs/plots.py, which draws it with --multi-gpu."""
import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

import figstyle as st  # noqa: E402
from plots_common import caption, read_csv, save  # noqa: E402


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
