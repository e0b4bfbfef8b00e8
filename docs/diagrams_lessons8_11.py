"""The idea pictures of lessons 8 to 11, which run on the row engine: lesson
8's dispatcher and its paths 3 and 3g, the 16-bit storage, the fused
classifier, the row split over GPUs; and the architecture figure, the engine
with its blocks and the lessons on top (docs/architecture.md). Drawn by
docs/diagrams.py."""
import math

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import figstyle as st  # noqa: E402
from diagrams_common import arrow, box, bytes_axis, canvas, save  # noqa: E402
# lesson 11 joins its GPUs' slices by lesson 6's (m, d) state and merge
from diagrams_lessons1_7 import md_merge, md_of  # noqa: E402


# ---- lesson 8: the dispatcher, and paths 3 and 3g --------------------------

# What the dispatcher asks an H100: SMs, shared memory, path 3g's resident CTAs, and
# (occupancy calculator, sm_90) the longest register class whose block fits twice per
# SM and the longest cluster class whose CTA does.
H100 = {"sms": 132, "shared_floats": 57856, "grid_resident": 528, "clusters": True,
        "block_twice": 16384, "cluster_twice": 524288, "shared_twice": 28800,
        "bulk_piece": 65536}  # path 3b: the largest power-of-two piece (bytes) of which 3 CTAs fit an SM
CLUSTERS = [(32768, 4), (65536, 8), (131072, 8), (262144, 16), (524288, 16), (1048576, 16)]  # FX_CL: max N, C


def cluster_size(cols):
    """fx_cluster_shape: C = ceil(N / floats per CTA) of the first class that holds N in at most its c."""
    for n, c in CLUSTERS:
        cap = n // c
        k = -(-cols // cap)
        if k <= c:
            return n, k, cols * 100 >= k * cap * 85  # ... and whether its CTAs are >= 85 % full
    return None, None, False


def grid_pieces(rows, cols, sms):
    """fx_grid_shape: pieces of at most 16384 floats, more (down to 2048) until every SM has one."""
    p = -(-cols // 16384)
    fill, most = -(-sms // rows), cols // 2048
    if p < fill:
        p = min(fill, most)
    p = max(p, 1)
    g = -(-cols // p)
    g = -(-g // 4) * 4
    return -(-cols // g)


def dispatch(rows, cols, gpu=H100):
    """softmax_fastest.cu's automatic choice (contiguous float4 rows)."""
    sms = gpu["sms"]
    n, c, full = cluster_size(cols)
    if cols <= 1024:
        return "1"
    if cols <= gpu["block_twice"]:
        return "2"
    if cols <= 32768 and rows >= sms // 4:
        return "2"
    bulk = -(-cols * 4 // gpu["bulk_piece"])  # path 3b's CTAs: float rows of 2 ... 8 pieces
    if gpu["clusters"] and 2 <= bulk <= 8 and rows * bulk >= sms // 2:
        return "3b"
    if gpu["clusters"] and c and n <= gpu["cluster_twice"] and full and rows * c >= sms // 2:
        return "3"
    if cols <= min(gpu["shared_floats"], gpu["shared_twice"]) and rows >= sms // 2:
        return "2s"
    if grid_pieces(rows, cols, sms) <= gpu["grid_resident"]:
        return "3g"
    return "4"


PATH_COLORS = {"1": st.LESSON[4], "2": st.LESSON[5], "2s": st.SHARED, "3b": st.LESSON[9], "3": st.LESSON[7],
               "3g": st.LESSON[8], "4": st.DRAM}
PATH_NAMES = {"1": "1 warp: 1-32 lanes per row, registers",
              "2": "2 block: a block per row, registers",
              "2s": "2s shared: a block per row, shared memory (GPUs without clusters)",
              "3b": "3b bulk: path 3, each piece copied in by the copy engine",
              "3": "3 cluster: a row over C = 2-16 CTAs, distributed shared memory",
              "3g": "3g grid: a row over P CTAs anywhere, (m, d) via global memory",
              "4": "4 split: read twice (12 B per element)"}


def lesson8(out):
    xs, ys = range(0, 27), range(0, 22)
    fig, ax = plt.subplots(figsize=(7.5, 5.6))
    order = list(PATH_COLORS)
    seen = set()
    for lx in xs:
        for ly in ys:
            if lx + ly > 31:  # more than 2^31 floats (8 GiB in): past the picture
                continue
            p = dispatch(1 << ly, 1 << lx)
            seen.add(p)
            ax.add_patch(Rectangle((lx - 0.5, ly - 0.5), 1, 1, facecolor=PATH_COLORS[p], edgecolor="white",
                                   linewidth=0.4))
    ax.plot([0, 26], [26, 0], color=st.INK, linestyle="--", linewidth=1)
    ax.annotate("M x N = 2^26:\nthe benchmark sweep", xy=(19, 7), xytext=(20.2, 12.5), fontsize=7.5,
                arrowprops=dict(arrowstyle="-", color=st.INK, lw=0.8))
    ax.text(21.5, 17.5, "(beyond 2^31 floats:\nnot drawn)", fontsize=7, color="#777777", ha="center")
    for lx, label in ((10, "1024"), (14, "16384"), (19, "2^19"), (23, "2^23")):
        ax.axvline(lx + 0.5, color="white", linewidth=1.5)
        ax.text(lx + 0.5, 21.7, label, ha="center", va="bottom", fontsize=7)
    ax.set_xlim(-0.5, 26.5)
    ax.set_ylim(-0.5, 21.5)
    ax.set_xticks(range(0, 27, 2))
    ax.set_xticklabels([f"$2^{{{v}}}$" for v in range(0, 27, 2)], fontsize=7.5)
    ax.set_yticks(range(0, 22, 2))
    ax.set_yticklabels([f"$2^{{{v}}}$" for v in range(0, 22, 2)], fontsize=7.5)
    ax.set_xlabel("N, floats per row")
    ax.set_ylabel("M, rows")
    handles = [Rectangle((0, 0), 1, 1, facecolor=PATH_COLORS[p]) for p in order]
    ax.legend(handles, [PATH_NAMES[p] for p in order], fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12),
              ncol=2, frameon=False)
    ax.set_title("Lesson 8: which path the dispatcher takes, by shape - the H100's thresholds\n"
                 "(132 SMs, clusters; softmax_fastest.cu's rule for contiguous rows)", fontsize=9.5, pad=16)
    fig.tight_layout()
    return save(fig, out, "idea-lesson8.png")


def lesson8_cluster(out):
    """Path 3 (fastest_cluster_kernel): cluster r = row r; CTA rank reads piece rank,
    merges its threads' (m, d); thread 0 -> cta_state (shared); cluster.sync();
    warp 0 of every CTA reads all C states (map_shared_rank), merges; writes its piece."""
    N, C, block, fpt = 32768, 4, 256, 8  # FX_CL's first class: rows up to 32768 floats, clusters of 4
    seg = N // C
    fig, ax = canvas(7.5, 4.8, (-0.2, 13.4), (-0.6, 7.5))
    box(ax, 0.2, 6.1, 11.6, 0.6, fc=st.DRAM)
    ax.text(6.0, 6.85, f"x: one row of N = {N} floats (128 KB) in DRAM, cut into C = {C} pieces of {seg}", fontsize=8,
            ha="center", va="bottom")
    box(ax, 0.2, 0.0, 11.6, 0.6, fc=st.DRAM, text="y: the row's output in DRAM", fs=8)
    w = 2.6
    for r in range(C):
        x0 = 0.2 + r * (w + 0.4)
        ax.plot([x0, x0], [6.1, 6.7], color=st.INK, linewidth=1.2)
        ax.text(x0 + w / 2, 6.4, f"piece {r}", ha="center", va="center", fontsize=7.5)
        arrow(ax, (x0 + w / 2, 6.1), (x0 + w / 2, 5.05), ms=7)
        box(ax, x0, 1.3, w, 3.75, fc="#f7f7f7", ec=st.INK, lw=1.0)
        ax.text(x0 + w / 2, 4.8, f"CTA {r}", ha="center", fontsize=7.5, fontweight="bold")
        box(ax, x0 + 0.15, 4.0, w - 0.3, 0.55, fc=st.REG, text=f"{block * fpt} in registers", fs=6.5)
        box(ax, x0 + 0.15, 3.35, w - 0.3, 0.55, fc=st.SHARED, text=f"{seg - block * fpt} in shared", fs=6.5)
        box(ax, x0 + 0.5, 2.5, w - 1.0, 0.55, fc="white", text=f"(m{r}, d{r})", fs=7.5)
        arrow(ax, (x0 + w / 2, 1.3), (x0 + w / 2, 0.6), ms=7)
    ax.plot([0.0, 12.0], [2.25, 2.25], color=st.WARN, linestyle="--", linewidth=1)
    ax.text(12.05, 2.25, "cluster.sync()", ha="left", va="center", fontsize=7, color=st.WARN)
    for r in range(C):
        x0 = 0.2 + r * (w + 0.4)
        for s in range(C):
            if s != r:
                xs = 0.2 + s * (w + 0.4) + w / 2
                arrow(ax, (xs, 2.5), (x0 + w / 2 + (s - r) * 0.12, 1.65), color="#7777cc", lw=0.6, ms=5,
                      connectionstyle="arc3,rad=0.0")
        ax.text(x0 + w / 2, 1.5, "merge all C -> (M, D)", ha="center", fontsize=6.5)
    ax.text(6.0, -0.35, "C = 4-16 CTAs by N, run at the same time on the SMs of one GPC. After cluster.sync(),"
            " warp 0 of each CTA\nreads all C states through distributed shared memory (map_shared_rank), merges"
            " them in the same order\n(the same bits in every CTA) and the CTA writes y = exp(x - M) / D for its"
            " piece: 8 bytes per element.", ha="center", va="top", fontsize=7.2)
    ax.set_title("Lesson 8, path 3: one row over a thread-block cluster (sm_90)", fontsize=10)
    return save(fig, out, "idea-lesson8-cluster.png")


def lesson8_grid(out):
    """Path 3g: P CTAs per row anywhere; thread 0 stores (m, d) to work[row*P + piece],
    red.release.gpu add on the row's counter, polls it with ld.acquire.gpu until P,
    merges the P states (same order), writes its piece."""
    P = 6
    fig = plt.figure(figsize=(7.5, 5.0))
    ax = fig.add_axes([0.0, 0.0, 1.0, 0.92])
    ax.set_xlim(-0.2, 12.2)
    ax.set_ylim(-0.8, 7.2)
    ax.set_aspect("equal")
    ax.axis("off")
    # the GPU's SMs, with the row's P CTAs scattered over them
    cols, rws = 22, 6
    where = [3, 17, 30, 58, 71, 112]  # any SMs: the hardware picks
    for i in range(cols * rws):
        cx, cy = 0.3 + (i % cols) * 0.25, 6.6 - (i // cols) * 0.25
        hit = i in where
        box(ax, cx, cy, 0.21, 0.21, fc=st.LESSON[8] if hit else "#eeeeee", lw=0.2, ec="#bbbbbb")
    ax.text(0.3, 6.95, "132 SMs of an H100; the row's P CTAs run wherever the hardware puts them", fontsize=7.5)
    ax.text(6.0, 5.55, "<- CTAs take their pieces in the order they start (a ticket);\n"
            "    the host checks that one row's P CTAs fit at once (528 on an H100)", fontsize=7, va="center")
    # the steps: read, publish to global memory, wait, merge and write
    w = 1.75
    xs = [0.3 + p * (w + 0.2) for p in range(P)]
    for p, x0 in enumerate(xs):
        box(ax, x0, 4.0, w, 0.75, fc=st.REG, text=f"CTA {p}: read piece {p}\n-> (m{p}, d{p})", fs=6.5)
        arrow(ax, (x0 + w / 2, 4.0), (x0 + w / 2, 3.1), ms=6)
        arrow(ax, (x0 + w / 2 - 0.3, 2.15), (x0 + w / 2 - 0.3, 1.3), ms=6, color="#555555")
        box(ax, x0, 0.5, w, 0.75, fc=st.REG, text=f"merge {P} states -> (M, D)\nwrite piece {p}", fs=6.2)
    box(ax, 0.3, 2.15, xs[-1] + w - 0.3, 0.95, fc=st.DRAM)
    for p, x0 in enumerate(xs):
        box(ax, x0 + 0.08, 2.6, w - 0.16, 0.4, fc="white", text=f"work[{p}] = (m{p}, d{p})", fs=6, lw=0.5)
    box(ax, 0.55, 2.22, xs[-1] + w - 0.8, 0.3, fc="white", text=f"the row's count: 0 -> {P}", fs=6, lw=0.5)
    ax.text(xs[-1] + w + 0.1, 2.75, "global\nmemory", fontsize=6.5, va="center")
    ax.text(6.0, 3.55, "thread 0 stores the CTA's state, then adds 1 to the row's count with red.release.gpu",
            fontsize=6.8, ha="center", va="center", bbox=dict(fc="white", ec="none", pad=1))
    ax.text(6.0, 1.75, f"... and polls the count with ld.acquire.gpu until it reads P = {P}; then reads all P states",
            fontsize=6.8, ha="center", va="center", bbox=dict(fc="white", ec="none", pad=1))
    ax.text(6.0, 0.2, "The release makes the state visible before the count; whoever reads P with acquire sees all P"
            " states.\nEvery CTA merges them in the same order: the same (M, D) bits everywhere. 8 bytes per element,"
            " as path 3,\nwithout the cluster's limit of 16 CTAs.", ha="center", va="top", fontsize=7)
    fig.suptitle("Lesson 8, path 3g: one row over P CTAs anywhere on the GPU", fontsize=10, y=0.99)
    return save(fig, out, "idea-lesson8-grid.png")


# ---- lesson 9 ------------------------------------------------------------------

def lesson9(out):
    """half_fused.cu / vec.cuh: a 16-byte load holds 8 16-bit elements, each widened
    exactly to float; max, exp, sum and quotient in float32; one rounding (to nearest
    even) per output on the store. Bit layouts from common/f16.h."""
    fig = plt.figure(figsize=(7.5, 4.6))
    ax = fig.add_axes([0.0, 0.0, 0.66, 0.9])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 7.4)
    ax.axis("off")
    # the three formats: sign | exponent | fraction, one unit of width per bit / 3
    fmts = [("float32", 8, 23, "4 B: 24 significant bits"), ("float16", 5, 10, "2 B: 11 bits, max 65504"),
            ("bfloat16", 8, 7, "2 B: 8 bits, float32's range")]
    for i, (name, e, f, note) in enumerate(fmts):
        y0, u = 6.85 - i * 0.42, 0.16
        ax.text(0.3, y0 + 0.15, name, fontsize=7, va="center")
        x0 = 1.45
        box(ax, x0, y0, u, 0.3, fc=st.WARN, lw=0.5)
        box(ax, x0 + u, y0, e * u, 0.3, fc=st.SHARED, lw=0.5, text=f"{e}", fs=6)
        box(ax, x0 + (1 + e) * u, y0, f * u, 0.3, fc=st.REG, lw=0.5, text=f"{f}", fs=6)
        ax.text(x0 + (1 + e + f) * u + 0.15 if i else x0 + 32 * u + 0.15, y0 + 0.15, note, fontsize=6.5,
                va="center")
    ax.text(1.45, 5.75, "sign | exponent bits | fraction bits", fontsize=6.5, ha="left", va="center", color="#555555")
    # the pipeline
    box(ax, 0.3, 4.85, 9.4, 0.55, fc=st.DRAM)
    ax.text(4.0, 5.12, "x in DRAM: 16-bit values (float16 or bfloat16)", fontsize=8, va="center")
    for k in range(8):
        box(ax, 0.5 + k * 0.42, 4.92, 0.38, 0.4, fc="white", lw=0.5, text=f"h{k}", fs=5.5)
    ax.text(4.05, 4.6, "one 16-byte load = 8 elements (4 floats in lesson 8)", fontsize=6.5, va="center")
    arrow(ax, (2.2, 4.85), (2.2, 4.2), lw=1.2)
    ax.text(2.4, 4.5, "widen: exact", fontsize=7, va="center", color=st.OK)
    box(ax, 0.3, 2.75, 9.4, 1.45, fc=st.REG)
    ax.text(5.0, 3.95, "float32 in registers, as lessons 5 and 8", fontsize=7.5, ha="center", va="center")
    steps = ["max", "exp(v - max)", "sum", "/ sum"]
    for i, t in enumerate(steps):
        box(ax, 0.6 + i * 2.3, 3.0, 1.9, 0.6, fc="white", text=t, fs=7.5)
        if i:
            arrow(ax, (0.6 + i * 2.3 - 0.4, 3.3), (0.6 + i * 2.3, 3.3), lw=0.8)
    arrow(ax, (8.6, 2.75), (8.6, 2.1), lw=1.2)
    ax.text(6.0, 2.42, "round ONCE, to nearest even", fontsize=7, va="center", color=st.WARN)
    box(ax, 0.3, 1.5, 9.4, 0.55, fc=st.DRAM, text="y in DRAM: 16-bit values", fs=8)
    ax.text(0.3, 1.05, "Error: half an ulp of the storage type (2^-11 float16, 2^-8 bfloat16) on top of"
            " float32's.", fontsize=6.5, va="center")
    ax.text(0.3, 0.65, "Computing in 16 bits would round at every step; storing the exps in 16 bits would"
            " round twice.", fontsize=6.5, va="center")
    # bytes moved per element
    bx = fig.add_axes([0.74, 0.16, 0.24, 0.66])
    for i, (lab, b) in enumerate([("8\nfloat32", 4), ("9\n16-bit", 2)]):
        bx.bar(i, b, color=st.DRAM, edgecolor=st.INK, linewidth=0.6, label="read" if i == 0 else None)
        bx.bar(i, b, bottom=b, color="#e8a33d", edgecolor=st.INK, linewidth=0.6, label="write" if i == 0 else None)
        bx.text(i, 2 * b + 0.2, f"{2 * b} B", ha="center", va="bottom", fontsize=9, fontweight="bold")
    bytes_axis(bx, ["8\nfloat32", "9\n16-bit"], 11)
    bx.set_title("half the bytes:\nabout half the time", fontsize=8)
    fig.suptitle("Lesson 9: 16-bit storage, 32-bit arithmetic, one rounding per output", fontsize=10, y=0.98)
    return save(fig, out, "idea-lesson9.png")


# ---- lesson 10: the fused classifier (classifier.cuh) -----------------------

def lesson10(out):
    """classifier.cuh: one read of a row of logits gives its (m, d) and x[t];
    the loss is (m - x[t]) + log d, and the gradient (softmax - one_hot(t)) * dloss is
    written over the logits. Example: one row, target 2, reduction sum (dloss 1)."""
    x, t = [1.0, 2.0, 3.0, 0.5], 2
    m = max(x)
    d = sum(math.exp(v - m) for v in x)
    loss = (m - x[t]) + math.log(d)
    grad = [math.exp(v - m) / d - (1.0 if j == t else 0.0) for j, v in enumerate(x)]
    fig = plt.figure(figsize=(7.5, 4.6))
    ax = fig.add_axes([0.0, 0.0, 0.66, 0.9])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 7.4)
    ax.axis("off")
    box(ax, 0.3, 6.2, 9.4, 0.7, fc=st.DRAM)
    ax.text(0.5, 6.55, "logits", fontsize=8, va="center")
    for j, v in enumerate(x):
        box(ax, 1.6 + j * 1.2, 6.3, 1.0, 0.5, fc="#f6c9c4" if j == t else "white", ec=st.WARN if j == t else st.INK,
            lw=0.6, text=f"{v:g}", fs=7.5)
    ax.text(6.6, 6.55, f"target t = {t}", fontsize=7.5, va="center", color=st.WARN)
    arrow(ax, (3.4, 6.2), (3.4, 5.45), lw=1.2)
    ax.text(3.6, 5.82, "read ONCE", fontsize=7, va="center")
    box(ax, 0.3, 3.9, 9.4, 1.5, fc=st.REG)
    ax.text(5.0, 5.15, "on chip: lesson 6's (m, d), and x[t] from the thread that holds it", fontsize=7.5,
            ha="center", va="center")
    box(ax, 0.6, 4.1, 2.6, 0.75, fc="white", text=f"m = {m:g}\nd = {d:.4f}", fs=7)
    box(ax, 3.5, 4.1, 2.8, 0.75, fc="white", text=f"loss = (m - x[t]) + log d\n= {loss:.4f}", fs=7)
    box(ax, 6.6, 4.1, 2.8, 0.75, fc="white", text="never stored:\nsoftmax = exp(x - m) / d", fs=7)
    arrow(ax, (4.9, 4.1), (4.9, 3.4), lw=1.0)
    ax.text(5.1, 3.72, "one float per row", fontsize=6.5, va="center")
    box(ax, 3.5, 2.85, 2.8, 0.5, fc=st.DRAM, text="losses (M floats)", fs=7)
    arrow(ax, (8.0, 3.9), (8.0, 1.9), lw=1.2)
    ax.text(8.2, 2.9, "write ONCE,\nin place", fontsize=7, va="center")
    box(ax, 0.3, 1.2, 9.4, 0.7, fc=st.DRAM)
    ax.text(0.5, 1.55, "gradient", fontsize=8, va="center")
    for j, g in enumerate(grad):
        box(ax, 1.6 + j * 1.2, 1.3, 1.0, 0.5, fc="#f6c9c4" if j == t else "white", ec=st.WARN if j == t else st.INK,
            lw=0.6, text=f"{g:+.3f}", fs=7)
    ax.text(6.5, 1.55, "(softmax - one_hot) x dloss", fontsize=7, va="center")
    ax.text(0.3, 0.7, "The same logits' memory holds the gradient: no M x N tensor of probabilities"
            " is ever written.", fontsize=6.5, va="center")
    # bytes moved per element: a softmax, then the gradient from it, against the fused kernel
    bx = fig.add_axes([0.74, 0.16, 0.24, 0.66])
    for i, (reads, writes) in enumerate([(2, 2), (1, 1)]):
        bx.bar(i, 4 * reads, color=st.DRAM, edgecolor=st.INK, linewidth=0.6, label="4 B reads" if i == 0 else None)
        bx.bar(i, 4 * writes, bottom=4 * reads, color="#e8a33d", edgecolor=st.INK, linewidth=0.6,
               label="4 B writes" if i == 0 else None)
        bx.text(i, 4 * (reads + writes) + 0.3, f"{4 * (reads + writes)} B", ha="center", va="bottom", fontsize=9,
                fontweight="bold")
    bytes_axis(bx, ["softmax,\nthen grad", "fused"], 21)
    bx.set_xlabel("")
    bx.set_title("half the bytes,\nno probabilities stored", fontsize=8)
    fig.suptitle("Lesson 10: the loss and its gradient from one read of the logits", fontsize=10, y=0.98)
    return save(fig, out, "idea-lesson10.png")


def lesson11(out):
    """split_softmax.cu: a row split over two GPUs; each summarises its slice by (m, d),
    the pairs are combined by a collective, each writes its slice of exp(x - M) / D."""
    row = [1.0, 3.0, 2.0, 0.0, 5.0, 4.0, 1.0, 2.0]
    sl = [row[:4], row[4:]]
    stt = [md_of(v) for v in sl]
    M, D = md_merge(stt[0], stt[1])
    fig, ax = canvas(7.5, 5.2, (0, 10), (0, 7.4))
    for k in range(2):
        x0 = 0.4 + k * 5.0
        box(ax, x0, 0.3, 4.4, 6.4, fc="#f4f4f4", ec=st.INK, lw=0.6)
        ax.text(x0 + 2.2, 6.45, f"GPU {k}: columns {4 * k} ... {4 * k + 3}", ha="center", fontsize=8)
        for j, v in enumerate(sl[k]):
            box(ax, x0 + 0.3 + j * 0.95, 5.5, 0.85, 0.55, fc=st.DRAM, text=f"{v:g}", fs=7.5)
        arrow(ax, (x0 + 2.2, 5.5), (x0 + 2.2, 4.95), ms=7)
        box(ax, x0 + 0.9, 4.15, 2.6, 0.8, fc=st.REG, text=f"m{k} = {stt[k][0]:g}\nd{k} = {stt[k][1]:.3f}", fs=7.5)
        arrow(ax, (x0 + 2.2, 4.15), (x0 + 2.2, 3.45), ms=7)
        box(ax, x0 + 0.5, 2.55, 3.4, 0.9, fc=st.SHARED, text=f"M = {M:g}\nD = {D:.4f}", fs=7.5)
        arrow(ax, (x0 + 2.2, 2.55), (x0 + 2.2, 1.95), ms=7)
        for j, v in enumerate(sl[k]):
            box(ax, x0 + 0.3 + j * 0.95, 1.3, 0.85, 0.55, fc=st.DRAM, text=f"{math.exp(v - M) / D:.3f}", fs=6.5)
        ax.text(x0 + 2.2, 0.75, "y = exp(x - M) / D", ha="center", fontsize=7)
    ax.annotate("", xy=(5.4, 3.0), xytext=(4.4, 4.5), arrowprops=dict(arrowstyle="-|>", color=st.WARN, lw=1.0))
    ax.annotate("", xy=(4.4, 3.0), xytext=(5.4, 4.5), arrowprops=dict(arrowstyle="-|>", color=st.WARN, lw=1.0))
    ax.text(5.0, 3.75, "NCCL", ha="center", va="center", fontsize=7, color=st.WARN,
            bbox=dict(boxstyle="round", fc="white", ec=st.WARN, lw=0.6))
    ax.text(5.0, 7.15, "all-gather the pairs and merge them in rank order (one collective), or\n"
            "all-reduce the max, then all-reduce d_k exp(m_k - M) (two collectives)", ha="center", va="center",
            fontsize=7.5)
    ax.set_title("Lesson 11: a row split over GPUs, joined by its (m, d)", fontsize=10, y=1.04)
    return save(fig, out, "idea-lesson11.png")


# ---- the architecture: blocks, engine, lessons' kernels (docs/architecture.md) --

def architecture(out):
    """common/device/: each file's first line says which lesson teaches it; rows_op.cuh
    is what an operation supplies, rows_plan.cu + fastest_typed.cu the dispatcher,
    path*.cu(h) the paths; lessons 8-11 run on the engine (lessons/*/ includes)."""
    def card(ax, x, y, w, h, head, body, hc, fs=6.8, hh=2.0):
        """A box with a header band in colour hc (head) over its text (body)."""
        box(ax, x, y, w, h, fc="white", lw=0.8)
        r, g, b = matplotlib.colors.to_rgb(hc)
        box(ax, x, y + h - hh, w, hh, fc=hc, lw=0.8, text=head, fs=fs + 0.4,
            tc="white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.55 else st.INK)
        ax.text(x + w / 2, y + (h - hh) / 2, body, ha="center", va="center", fontsize=fs, color=st.INK,
                linespacing=1.3)

    def L(n):
        return st.LESSON.get(n, st.VARIANTS[0])  # lesson 10 has no colour of its own in figstyle

    fig, ax = canvas(11, 7.7, (0, 100), (0, 70))
    # top: the lessons' kernels, as instances of the engine (8-11) or of their own (1-7)
    ty, th = 57.5, 11.0
    card(ax, 1, ty, 28, th, "lessons 1-7: kernels of their own",
         "1 naive  ·  2 stable\n3 three-pass (block_reduce.h)\n4 warp (warp_reduce.h)\n"
         "5 fused  ·  6 online  ·  7 attention", "#dddddd", fs=7)
    tops = [(8, 32.0, "the softmax, float32:\nfx_run_typed, all\nseven paths"),
            (9, 48.75, "the softmax, 16-bit:\nT = __half, __nv_bfloat16\n(+ half_fused.cu)"),
            (10, 65.5, "operations:\nop_log_softmax\nop_softmax_backward\nop_cross_entropy"),
            (11, 82.25, "a row split over GPUs:\npath 4's kernels per\nslice, (m, d) over NCCL")]
    for n, x, body in tops:
        card(ax, x, ty, 16.75, th, f"lesson {n}", body, L(n), fs=7)
    # middle: the row engine
    p8 = L(8)
    ey, eh = 24.5, 30.5
    box(ax, 31, ey, 68.5, eh, fc="#f3f3f3", ec="#888888", lw=0.8)
    ax.text(32, ey + eh - 1.3, "the row engine (common/device/), taught in lesson 8", fontsize=8.5,
            fontweight="bold", va="center")
    card(ax, 33, 44.5, 30.5, 7.5, "rows.h: fx_run_typed",
         "the softmax (rows_op_softmax) over rows\nof any length and storage type", p8, fs=7)
    card(ax, 65.5, 44.5, 16.5, 7.5, "rows_run.cuh",
         "fx_run_op<OP>: any\noperation OP (its fields:\nrows_op.cuh)", p8, fs=6.8)
    card(ax, 33, 36.5, 49, 6.5, "the dispatcher: a path from the shape, the pointers and the GPU",
         "rows_plan.cu (float32)  ·  fastest_typed.cu (16-bit)\nfastest_paths.h (tables, launchers)", p8, fs=7)
    for x in (48.25, 73.75):
        arrow(ax, (x, 44.5), (x, 43.0), ms=7)
    paths = [("1", "rows in a\nwarp's lanes", "path1_2_rows"),
             ("2", "a row per\nblock (regs)", "path1_2_rows"),
             ("2s", "a row in\nshared mem.", "path2s_shared\nsoftmax only"),
             ("3", "a row over\na cluster", "path3_cluster\n+cluster_launch"),
             ("3b", "cluster +\nTMA copies", "path3b_bulk\n+bulk_copy"),
             ("3g", "a row over\nthe grid", "path3g_grid\n+grid_sync"),
             ("4", "split: two\nkernels", "path4_split\n+cluster_launch")]
    pw, gap, py, ph = 8.85, 0.7, 25.5, 9.0
    bus = 35.5
    ax.plot([33 + pw / 2, 33 + 6 * (pw + gap) + pw / 2], [bus, bus], color=st.INK, lw=0.9)
    ax.plot([57.5, 57.5], [36.5, bus], color=st.INK, lw=0.9)
    for i, (name, body, files) in enumerate(paths):
        x = 33 + i * (pw + gap)
        box(ax, x, py, pw, ph, fc="white", lw=0.8)
        box(ax, x, py + ph - 1.8, pw, 1.8, fc=p8, lw=0.8, text=f"path {name}", fs=7.2)
        ax.text(x + pw / 2, py + 4.6, body, ha="center", va="center", fontsize=6.8, linespacing=1.25)
        ax.text(x + pw / 2, py + 0.4, files, ha="center", va="bottom", fontsize=5.6, color="#555555",
                family="monospace", linespacing=1.1)
        arrow(ax, (x + pw / 2, bus), (x + pw / 2, py + ph), ms=6, lw=0.8)
    # arrows from the lessons into the engine; lesson 11 straight to path 4
    for x0, x1 in ((40.4, 40.4), (57.1, 54.0), (73.9, 73.75)):
        arrow(ax, (x0, ty), (x1, 52.0), color=st.INK, lw=1.1, ms=8)
    x4 = 33 + 6 * (pw + gap) + pw / 2
    arrow(ax, (x4, ty), (x4, py + ph), color=L(11), lw=1.6, ms=9)
    ax.text(x4 - 1.0, 47, "kernels\n1 and 2\nonly", fontsize=6.5, color=L(11), va="center", ha="right")
    # bottom: the building blocks, each with the lesson that teaches it
    blocks = [(5, "vec.cuh", "128-bit\nloads, stores"),
              (5, "view_cut.cuh", "misaligned\nrows cut"),
              (5, "row_reduce.cuh", "max / sum over\na row's threads"),
              (6, "online_md.cuh", "the (m, d) state\nand its merge"),
              (8, "fastest_device.cuh", "per-thread (m, d),\npieces on chip"),
              (8, "cluster_launch.h", "cluster and\nPDL launches"),
              (8, "bulk_copy.cuh", "TMA copies into\nshared memory"),
              (8, "grid_sync.cuh", "CTAs meet in\nglobal memory")]
    bw, bg, by, bh = 12.0, 0.35, 10.0, 9.0
    for i, (n, name, body) in enumerate(blocks):
        x = 1 + i * (bw + bg)
        card(ax, x, by, bw, bh, f"lesson {n}", "\n" + body, L(n), fs=6.6, hh=1.9)
        ax.text(x + bw / 2, by + 5.25, name, ha="center", va="center", fontsize=6.6, fontweight="bold")
    ax.text(1, by + bh + 0.5, "building blocks (common/device/)", fontsize=8.5, fontweight="bold", va="bottom")
    xf = 1 + 4 * (bw + bg) + bw / 2
    arrow(ax, (xf, ey), (xf, by + bh), ms=8, lw=1.1)
    ax.text(xf + 1.2, 21.6, "every path: fastest_device.cuh (which includes lessons 5 and 6's blocks),\n"
            "and the block at the path's foot", fontsize=6.6, va="center")
    # lessons 5-7 (and lesson 9's half_fused.cu) use the blocks without the engine
    arrow(ax, (6, ty), (6, by + bh + 3.2), lw=1.1, ms=8)
    ax.plot([1, 1 + 4 * bw + 3 * bg], [by + bh + 3.2] * 2, color=st.INK, lw=0.9)
    ax.text(7.2, 45.5, "lessons 5, 6 and 7\n(and lesson 9's half_fused.cu)\ninclude blocks directly,\n"
            "without the engine", fontsize=7, va="center")
    ax.text(7.2, 32, "A coloured band names the lesson\nthat teaches the block or the\npath; the lessons on"
            " top are\nin their own colours.", fontsize=6.5, color="#555555", va="center")
    # underneath: the host side every program shares
    box(ax, 1, 1.0, 98.5, 6.2, fc="#ececec", ec="#888888", lw=0.8)
    ax.text(2, 5.5, "host side (common/), under every lesson's program", fontsize=8, fontweight="bold", va="center")
    ax.text(2, 2.8, "harness (run, verify, time, report)  ·  options  ·  inputs  ·  reference "
            "(float64)  ·  verify  ·  train_check (lesson 10)  ·  npy  ·  f16  ·  timing  ·  emu/ (CPU emulator)",
            fontsize=6.8, va="center")
    ax.set_title("The course's architecture: building blocks, the row engine, and the lessons' kernels on top",
                 fontsize=10.5)
    return save(fig, out, "architecture.png")
