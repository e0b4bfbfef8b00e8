"""The idea pictures of lessons 1 to 7, the kernels of their own (no row
engine): one thread per row, the max, the block's tree, the warp's butterfly,
the fused row, the online (m, d) state, the attention masks. Drawn by
docs/diagrams.py."""
import math

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import figstyle as st  # noqa: E402
from diagrams_common import arrow, box, bytes_axis, canvas, save, thread_colors  # noqa: E402

FLT_MAX = 3.4028234663852886e38
EXP_LIMIT = math.log(FLT_MAX)  # 88.72: expf overflows to inf above it


# ---- lesson 1: one thread per row (softmax_naive.cu) -----------------------

def lesson1(out):
    """Thread t owns row t and walks it column by column; at step j the warp's
    threads read x[t][j]: N floats apart, one 128-byte line each."""
    T, N, j = 8, 32, 5  # 8 of a warp's 32 threads; N = 32 floats = one 128-byte line per row
    cw, ch = 0.22, 0.5
    fig, ax = canvas(7.5, 4.6, (-2.2, N * cw + 0.3), (-3.2, T * ch + 0.9))
    cols = thread_colors(T)
    for t in range(T):
        y0 = (T - 1 - t) * ch
        for c in range(N):
            hit = c == j
            fc = cols[t] if hit else ("#eeeeee" if c < j else "white")
            box(ax, c * cw, y0, cw, ch, fc=fc, lw=0.3, ec="#999999")
        ax.text(-0.15, y0 + ch / 2, f"thread {t}", ha="right", va="center", fontsize=8, color=cols[t])
        ax.text(N * cw + 0.08, y0 + ch / 2, f"line {t}", ha="left", va="center", fontsize=6.5, color="#666666")
    ax.text(j * cw + cw / 2, T * ch + 0.08, f"step j = {j}", ha="center", va="bottom", fontsize=8)
    arrow(ax, (j * cw + cw / 2 + 0.35, T * ch + 0.5), (j * cw + cw / 2 + 1.6, T * ch + 0.5), lw=1)
    ax.text(j * cw + cw / 2 + 1.7, T * ch + 0.5, "next step: every thread one column right", va="center",
            fontsize=7.5)
    ax.text(-0.15, T * ch + 0.5, "row = thread", ha="right", va="center", fontsize=8, fontweight="bold")
    ax.text(N * cw / 2, -0.25, "columns 0 ... 31 of each row: N = 32 floats = one 128-byte line (grey: already read)",
            ha="center", va="top", fontsize=7.5)
    ax.text(N * cw / 2, -0.85,
            "At each step the warp's 32 threads read 32 floats N floats apart, in 32 different lines:\n"
            "32 separate memory transactions, where one 128-byte transaction could have served the warp.",
            ha="center", va="top", fontsize=8.5, color=st.WARN)
    ax.text(-0.15, T * ch + 0.2, f"({T} of the warp's 32 shown)", ha="right", va="center", fontsize=7,
            color="#555555")
    # for contrast: the same warp reading along one row (lesson 3)
    warp = plt.get_cmap("viridis")
    for c in range(N):
        box(ax, c * cw, -2.35, cw, ch, fc=warp(c / N), lw=0.3, ec="#999999")
    ax.text(-0.15, -2.1, "lesson 3:", ha="right", va="center", fontsize=8, color=st.OK)
    ax.text(N * cw / 2, -2.45, "the warp's 32 threads read 32 consecutive floats of one row: one 128-byte line",
            ha="center", va="top", fontsize=8, color=st.OK)
    ax.set_title("Lesson 1: one thread per row - the warp's reads are uncoalesced", fontsize=10)
    return save(fig, out, "idea-lesson1.png")


# ---- lesson 2: subtract the max (softmax_stable.cu) ------------------------

def f32(v):
    """exp in float32: inf above ln(FLT_MAX), as expf."""
    return math.inf if v > EXP_LIMIT else math.exp(v)


def lesson2(out):
    x = [1000.0, 1001.0, 1002.0]
    m = max(x)
    e = [f32(v - m) for v in x]
    d = sum(e)
    y = [v / d for v in e]
    fig = plt.figure(figsize=(7.5, 5.2))
    ax = fig.add_axes([0, 0.42, 1, 0.5])
    ax.set_xlim(0, 15)
    ax.set_ylim(0, 4.6)
    ax.axis("off")
    # the three passes over a row
    passes = [("pass 1: read x", "m = max x", st.DRAM), ("pass 2: read x", "d = sum exp(x - m)", st.DRAM),
              ("pass 3: read x, write y", "y = exp(x - m) / d", st.DRAM)]
    for i, (what, res, fc) in enumerate(passes):
        yy = 3.6 - i * 1.25
        for k, v in enumerate(x):
            box(ax, 0.3 + k * 0.9, yy, 0.9, 0.6, fc=fc, text=f"{v:.0f}", fs=8)
        ax.text(0.3, yy + 0.75, what, fontsize=8, va="bottom")
        arrow(ax, (3.2, yy + 0.3), (4.0, yy + 0.3))
        ax.text(4.15, yy + 0.3, res, fontsize=9, va="center", family="monospace")
    # what each pass gives for the example
    ax.text(8.0, 4.35, "x = [1000, 1001, 1002], float32", fontsize=9, fontweight="bold", va="top")
    ax.text(8.0, 3.8, "without the max (lesson 1):", fontsize=8.5, va="top", color=st.WARN)
    ax.text(8.2, 3.35, "exp(1000) = inf  (expf overflows above 88.72)\ninf / inf = NaN in every output",
            fontsize=8.5, va="top", family="monospace", color=st.WARN, linespacing=1.4)
    ax.text(8.0, 2.3, "with the max (lesson 2):", fontsize=8.5, va="top", color=st.OK)
    ax.text(8.2, 1.85,
            f"m = {m:.0f},  x - m = [{', '.join(f'{v - m:.0f}' for v in x)}]\n"
            f"exp(x - m) = [{', '.join(f'{v:.3f}' for v in e)}]\n"
            f"d = {d:.3f}\n"
            f"y = [{', '.join(f'{v:.3f}' for v in y)}]",
            fontsize=8.5, va="top", family="monospace", color=st.OK, linespacing=1.4)
    # exp against its argument: why x - m <= 0 is safe
    bx = fig.add_axes([0.1, 0.1, 0.85, 0.27])
    ts = [v / 10 for v in range(-100, 888)]  # up to ln FLT_MAX; past it expf gives inf
    bx.plot(ts, [math.exp(t) for t in ts], color=st.THREAD, linewidth=1.8)
    bx.plot([EXP_LIMIT, 100], [3e42, 3e42], color=st.WARN, linewidth=2.5)
    bx.text(95, 3e42 * 20, "inf", color=st.WARN, fontsize=8, ha="center", va="bottom")
    bx.set_yscale("log")
    bx.axhline(FLT_MAX, color=st.WARN, linestyle="--", linewidth=1)
    bx.axvline(EXP_LIMIT, color=st.WARN, linestyle=":", linewidth=1)
    bx.axvspan(-10, 0, color=st.OK, alpha=0.15)
    bx.text(1.5, 1e20, "<- x - m <= 0: exp <= 1", fontsize=8, color=st.OK, va="center")
    bx.text(EXP_LIMIT + 1, 1e5, f"x > {EXP_LIMIT:.2f}:\nexp = inf", fontsize=8, color=st.WARN)
    bx.text(0, FLT_MAX * 3, "largest float32, 3.4e38", fontsize=7.5, color=st.WARN, va="bottom")
    bx.set_xlim(-10, 100)
    bx.set_ylim(1e-5, 1e45)
    bx.set_xlabel("argument of exp", fontsize=8)
    bx.set_ylabel("exp (log scale)", fontsize=8)
    bx.tick_params(labelsize=7)
    bx.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Lesson 2: subtract the row's max before exp - three passes, nothing overflows", fontsize=10,
                 y=0.98)
    return save(fig, out, "idea-lesson2.png")


# ---- lesson 3: a block per row, strided loop, shared-memory tree -----------

def lesson3(out):
    """softmax_three_pass.cu: block r is row r; thread t reads j = t, t + BLOCK, ...;
    block_reduce.h: buf[t] op= buf[t + s], s = BLOCK/2 ... 1, __syncthreads after each."""
    B, N = 8, 24  # BLOCK = 8 threads here (256 in the lesson), a row of 24 floats
    vals = [3, 1, 4, 1, 5, 9, 2, 6]  # each thread's partial max after its loop, for the tree
    fig, ax = canvas(7.5, 5.6, (-1.6, 12.6), (-6.2, 3.5))
    cols = thread_colors(B)
    cw = 0.46
    # the strided loop over one row
    ax.text(-1.5, 3.2, "1. Block r takes row r; its threads read the row in steps of BLOCK (8 here, 256 in the lesson)",
            fontsize=8.5, va="center", fontweight="bold")
    for c in range(N):
        box(ax, c * cw, 2.0, cw, 0.55, fc=cols[c % B], text=str(c % B), fs=7, tc="white", lw=0.4)
    ax.text(-0.1, 2.27, "row r", ha="right", va="center", fontsize=8)
    for k in range(N // B):
        x0 = k * B * cw
        ax.annotate("", xy=(x0, 1.85), xytext=(x0 + B * cw, 1.85),
                    arrowprops=dict(arrowstyle="<->", color="#555555", lw=0.8))
        ax.text(x0 + B * cw / 2, 1.65, f"step {k}: j = {k * B}...{k * B + B - 1}",
                ha="center", va="top", fontsize=7)
    ax.text(N * cw + 0.2, 2.27, "consecutive threads,\nconsecutive floats:\n"
            "a warp's 32 reads are\none 128-byte line", fontsize=7.5, va="center", color=st.OK)
    # the tree
    ax.text(-1.5, 0.7, "2. Each thread's partial result goes to shared memory buf[t]; the tree halves it,"
            " with __syncthreads between levels", fontsize=8.5, va="center", fontweight="bold")
    level = list(vals)
    s = B // 2
    y0 = -0.4
    bw, gap = 1.05, 0.3
    while True:
        for t in range(B):
            active = t < len(level)
            fc = st.SHARED if active else "white"
            box(ax, t * (bw + gap), y0, bw, 0.5, fc=fc, text=str(level[t]) if active else "", fs=8,
                ec=st.INK if active else "#cccccc")
        # the barrier after every level's writes: the next level reads other warps' words
        ax.plot([-0.2, B * (bw + gap) - gap + 0.2], [y0 - 0.15, y0 - 0.15], color=st.WARN, linewidth=1,
                linestyle="--")
        ax.text(-0.3, y0 - 0.15, "__syncthreads", ha="right", va="center", fontsize=6.5, color=st.WARN)
        if s == 0:
            break
        ax.text(B * (bw + gap) + 0.0, y0 - 0.6, f"s = {s}: thread t < {s}:\nbuf[t] = max(buf[t], buf[t+{s}])",
                fontsize=7, va="center")
        for t in range(s):
            arrow(ax, ((t + s) * (bw + gap) + bw / 2, y0 - 0.22), (t * (bw + gap) + bw / 2 + 0.1, y0 - 0.9),
                  color=cols[t], lw=0.9, ms=6)
            arrow(ax, (t * (bw + gap) + bw / 2, y0 - 0.22), (t * (bw + gap) + bw / 2, y0 - 0.9), color=cols[t],
                  lw=0.9, ms=6)
        level = [max(level[t], level[t + s]) for t in range(s)]
        y0 -= 1.4
        s //= 2
    ax.text(1.3, y0 - 0.45, f"buf[0] = {level[0]}: the block's max; all threads read it"
            "  (log2 BLOCK levels; then the same tree for the sum)", fontsize=7.5, va="top")
    ax.set_title("Lesson 3: one block per row, coalesced reads, a reduction tree in shared memory", fontsize=10)
    return save(fig, out, "idea-lesson3.png")


# ---- lesson 4: warp butterfly, two-level block reduction, the attention softmax notes' kernel ---------

def lesson4(out):
    """warp_reduce.h: v op= __shfl_xor_sync(full, v, k), k = 16, 8, 4, 2, 1; block:
    lane 0 of each warp -> partial[warp] -> __syncthreads -> every warp reads
    partial[lane] (identity past the warps) and shuffles again."""
    fig = plt.figure(figsize=(7.5, 6.6))
    ax = fig.add_axes([0.02, 0.43, 0.96, 0.51])
    L = 32
    ax.set_xlim(-3.2, L + 0.3)
    ax.set_ylim(-0.9, 5.8)
    ax.axis("off")
    focus = 5
    reads = {k: focus ^ k for k in (16, 8, 4, 2, 1)}  # whom the highlighted lane reads at each step
    for lvl, k in enumerate((16, 8, 4, 2, 1)):
        ytop, ybot = 5 - lvl, 4 - lvl
        for i in range(L):
            ax.plot([i, i], [ytop, ybot], color="#bbbbbb", linewidth=0.6, zorder=1)
            ax.plot([i ^ k, i], [ytop, ybot], color=plt.get_cmap("viridis")(lvl / 5), linewidth=0.6, alpha=0.7,
                    zorder=1)
        ax.plot([reads[k], focus], [ytop, ybot], color=st.WARN, linewidth=2, zorder=3)
        ax.plot([focus, focus], [ytop, ybot], color=st.WARN, linewidth=2, zorder=3)
        ax.text(-0.8, (ytop + ybot) / 2, f"k = {k}", ha="right", va="center", fontsize=8.5, family="monospace")
    for lvl in range(6):
        ax.scatter(range(L), [5 - lvl] * L, s=9, color=st.THREAD, zorder=2)
        group = 2 ** lvl
        ax.text(-3.1, 5 - lvl, f"sums of {group:>2}" if lvl else "own value", fontsize=7, va="center",
                color="#555555")
    for i in range(0, L, 4):
        ax.text(i, 5.25, str(i), ha="center", fontsize=7)
    ax.text(L / 2 - 0.5, 5.55, "lane", ha="center", fontsize=7.5)
    chain = " -> ".join(str(reads[k]) for k in (16, 8, 4, 2, 1))
    ax.text(L / 2 - 0.5, -0.55, f"v += __shfl_xor_sync(0xffffffff, v, k): lane i reads lane i ^ k.  "
            f"Red: lane {focus} reads lanes {chain}.\nAfter 5 steps every lane holds the sum (or max) of all 32,"
            " bit for bit the same: no shared memory, no __syncthreads.", ha="center", va="top", fontsize=7.5)
    ax.set_title("Lesson 4: the warp butterfly, the two-level block reduction, and the attention softmax notes' bug", fontsize=10)

    # two-level reduction in a block of 256 threads = 8 warps
    bx = fig.add_axes([0.02, 0.02, 0.55, 0.36])
    bx.set_xlim(0, 10)
    bx.set_ylim(0, 6.2)
    bx.axis("off")
    W = 8
    bx.text(0.1, 5.95, "Block of 256 threads = 8 warps (softmax_warp)", fontsize=8.5, fontweight="bold", va="top")
    for w in range(W):
        box(bx, 0.2 + w * 1.2, 4.3, 1.0, 0.8, fc=st.REG, text=f"warp {w}\nshuffles", fs=6.5)
        arrow(bx, (0.7 + w * 1.2, 4.3), (0.7 + w * 1.2, 3.45), ms=6, lw=0.8)
    bx.text(9.9, 3.85, "lane 0", fontsize=6.5, ha="right", va="center", color="#555555")
    for w in range(W):
        box(bx, 0.15 + w * 1.2, 2.95, 1.1, 0.5, fc=st.SHARED, text=f"partial[{w}]", fs=5.8)
    bx.plot([0.1, 9.7], [2.7, 2.7], color=st.WARN, linestyle="--", linewidth=1)
    bx.text(9.7, 2.55, "__syncthreads (one)", fontsize=6.5, color=st.WARN, ha="right", va="top")
    box(bx, 0.2, 0.7, 9.4, 1.3, fc=st.REG,
        text="every warp: lane i < 8 reads partial[i], lanes 8-31 take the identity,\n"
             "shuffles again: every thread of the block holds the row's max (then sum)", fs=7)
    for w in range(W):
        arrow(bx, (0.7 + w * 1.2, 2.95), (0.7 + w * 1.2, 2.0), ms=6, lw=0.8, color="#777777")

    # the attention softmax notes' kernel: only warp 0's result is used
    cx = fig.add_axes([0.6, 0.02, 0.39, 0.36])
    cx.set_xlim(0, 6)
    cx.set_ylim(0, 6.2)
    cx.axis("off")
    cx.text(0.1, 5.95, "The notes' kernel: only warp 0's result", fontsize=8.5, fontweight="bold", va="top", color=st.WARN)
    for w in range(W):
        ok = w == 0
        box(cx, 0.1 + w * 0.72, 4.3, 0.62, 0.8, fc=st.REG if ok else "#f2f2f2", text=f"w{w}", fs=7,
            ec=st.INK if ok else "#aaaaaa", tc=st.INK if ok else "#aaaaaa")
        if not ok:
            cx.plot([0.1 + w * 0.72, 0.72 + w * 0.72], [4.3, 5.1], color=st.WARN, linewidth=0.8)
    box(cx, 0.1, 3.0, 2.0, 0.6, fc=st.SHARED, text="row_max, row_sum", fs=6.5)
    arrow(cx, (0.41, 4.3), (0.6, 3.6), ms=6, lw=0.8)
    # the example the lesson prints: a constant row of 1024, 256 threads
    n, threads = 1024, 256
    seen = n // threads * 32  # warp 0 covers j mod 256 < 32
    cx.text(0.1, 2.55, f"constant row of {n}, {threads} threads:\nwarp 0 sums {seen} of the {n} ones\n"
            f"every y = 1/{seen} instead of 1/{n}\nthe row sums to {n // seen}", fontsize=7.5, va="top",
            linespacing=1.35)
    return save(fig, out, "idea-lesson4.png")


# ---- lesson 5: the row read once, kept on chip -----------------------------

def lesson5(out):
    """softmax_fused.cu, registers path: N = 4096 -> 256 threads x 16 floats (README's
    table), float4 loads; thread t holds the vectors t, t + 256, t + 512, t + 768."""
    N, TPR, FPT, VEC = 4096, 256, 16, 4
    fig = plt.figure(figsize=(7.5, 4.6))
    ax = fig.add_axes([0.0, 0.0, 0.66, 0.9])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 7)
    ax.axis("off")
    box(ax, 0.3, 5.9, 9.4, 0.6, fc=st.DRAM, text=f"x: one row of N = {N} floats in DRAM (global memory)", fs=8)
    # which vector goes to which thread: the first 4 vectors of each quarter
    for q in range(FPT // VEC):
        ax.text(0.3 + q * 2.35 + 1.1, 5.6, f"float4 {q * TPR} ... {(q + 1) * TPR - 1}", fontsize=6.5, ha="center",
                va="center")
    arrow(ax, (5.0, 5.45), (5.0, 4.85), lw=1.2)
    ax.text(5.2, 5.15, "read ONCE, as float4s (vN: the row's N-th float4)", fontsize=7,
            va="center")
    threads = [0, 1, 2, 255]
    for i, t in enumerate(threads):
        x0 = 0.3 + i * 2.25 if i < 3 else 7.6
        box(ax, x0, 3.3, 2.1, 1.5, fc=st.REG)
        ax.text(x0 + 1.05, 4.62, f"thread {t}: {FPT} floats", fontsize=7, ha="center", va="center")
        for k in range(FPT // VEC):
            box(ax, x0 + 0.1 + k * 0.48, 3.45, 0.44, 0.9, fc="white", text=f"v{t + k * TPR}", fs=5.5, lw=0.5)
    ax.text(7.2, 4.05, "...", fontsize=12, ha="center", va="center")
    box(ax, 0.3, 1.95, 9.4, 0.8, fc=st.SHARED,
        text="on chip: max, then sum of exp(v - max) - warp shuffles + a few shared floats", fs=7.5)
    arrow(ax, (8.65, 3.3), (8.65, 2.75), lw=1.0)
    arrow(ax, (5.0, 2.0), (5.0, 1.3), lw=1.2)
    ax.text(5.2, 1.65, "write ONCE: y = exp(v - max) / sum, from the registers", fontsize=7, va="center")
    ax.text(0.3, 3.1, f"registers: {TPR} threads x {FPT} floats; thread t holds t, t+256, t+512, t+768",
            fontsize=7, ha="left", va="center")
    box(ax, 0.3, 0.6, 9.4, 0.6, fc=st.DRAM, text="y: the row's output in DRAM", fs=8)
    ax.text(0.3, 0.25, "Rows too long for registers (> 32768 floats) live in shared memory instead"
            " (up to 57856 on an H100).", fontsize=6.5, va="center")
    # bytes moved per element
    bx = fig.add_axes([0.74, 0.16, 0.24, 0.66])
    labels = ["1", "2-4", "5"]
    reads = [2, 3, 1]
    for i, r in enumerate(reads):
        bx.bar(i, 4 * r, color=st.DRAM, edgecolor=st.INK, linewidth=0.6, label="4 B per read" if i == 0 else None)
        bx.bar(i, 4, bottom=4 * r, color="#e8a33d", edgecolor=st.INK, linewidth=0.6,
               label="4 B write" if i == 0 else None)
        bx.text(i, 2 * r, f"{4 * r + 4} B", ha="center", va="center", fontsize=8, fontweight="bold")
    bx.axhline(8, color=st.COPY, linestyle="--", linewidth=1)
    bx.text(2.45, 8.4, "copy", fontsize=7, ha="right")
    bytes_axis(bx, labels, 21)
    fig.suptitle("Lesson 5: the row is read once into registers, reduced on chip, written once", fontsize=10,
                 y=0.98)
    return save(fig, out, "idea-lesson5.png")


# ---- lesson 6: the online (m, d) state and its merge -----------------------

def md_of(vals):
    m = max(vals)
    return m, sum(math.exp(v - m) for v in vals)


def md_merge(a, b):
    """online_md.cuh's online_md_merge (finite maxima)."""
    m = max(a[0], b[0])
    return m, a[1] * math.exp(a[0] - m) + b[1] * math.exp(b[0] - m)


def lesson6(out):
    row = [1, 3, 2, 0, 5, 4, 1, 2, 0, 1, 7, 3, 2, 2, 1, 0]
    chunks = [row[i:i + 4] for i in range(0, 16, 4)]
    st_ = [md_of(c) for c in chunks]
    ab, cd = md_merge(st_[0], st_[1]), md_merge(st_[2], st_[3])
    whole = md_merge(ab, cd)
    left = md_merge(md_merge(md_merge(st_[0], st_[1]), st_[2]), st_[3])
    direct = md_of(row)
    fig, ax = canvas(7.5, 5.6, (-0.3, 16.3), (-4.6, 8.0))
    names = "ABCD"
    cw = 0.9
    for i, v in enumerate(row):
        c = i // 4
        box(ax, 0.2 + i * cw + c * 0.35, 5.6, cw, 0.7, fc=st.DRAM, text=str(v), fs=8)
    nodes = []
    for c in range(4):
        x0 = 0.2 + c * (4 * cw + 0.35)
        xc = x0 + 2 * cw
        ax.text(xc, 6.5, f"chunk {names[c]}", ha="center", fontsize=8)
        box(ax, xc - 1.55, 3.9, 3.1, 0.9, fc=st.REG, text=f"m = {st_[c][0]:g}\nd = {st_[c][1]:.3f}", fs=7.5)
        arrow(ax, (xc, 5.6), (xc, 4.8), ms=7)
        nodes.append(xc)
    pair = [(nodes[0] + nodes[1]) / 2, (nodes[2] + nodes[3]) / 2]
    for k, (s, (i, j)) in enumerate(zip((ab, cd), ((0, 1), (2, 3)))):
        box(ax, pair[k] - 1.6, 2.0, 3.2, 0.9, fc=st.REG, text=f"{names[i]}{names[j]}: m = {s[0]:g}\nd = {s[1]:.3f}",
            fs=7.5)
        arrow(ax, (nodes[i], 3.9), (pair[k] - 0.4, 2.9), ms=7)
        arrow(ax, (nodes[j], 3.9), (pair[k] + 0.4, 2.9), ms=7)
    mid = (pair[0] + pair[1]) / 2
    box(ax, mid - 2.0, 0.1, 4.0, 0.9, fc=st.SHARED, text=f"ABCD: m = {whole[0]:g}\nd = {whole[1]:.4f}", fs=8)
    arrow(ax, (pair[0], 2.0), (mid - 0.5, 1.0), ms=7)
    arrow(ax, (pair[1], 2.0), (mid + 0.5, 1.0), ms=7)
    ax.text(0.0, 7.6, "state of a set of values:  m = max,  d = sum of exp(v - m)", fontsize=9, va="center")
    a, b = st_[0], st_[1]
    ax.text(8.0, -1.25, "merge of a and b:\n m = max(ma, mb)\n d = da exp(ma - m) + db exp(mb - m)\n"
            f"A.B: m = {ab[0]:g}, d = {a[1]:.3f} exp({a[0]:g} - {ab[0]:g})\n"
            f"               + {b[1]:.3f} exp({b[0]:g} - {ab[0]:g}) = {ab[1]:.3f}",
            fontsize=7.5, ha="center", va="center",
            family="monospace", multialignment="left", bbox=dict(boxstyle="round", fc="white", ec=st.INK, lw=0.8))
    ax.text(8.0, -2.75,
            f"any grouping gives the same state: ((A.B).C).D: m = {left[0]:g}, d = {left[1]:.4f};"
            f"  one pass over all 16: m = {direct[0]:g}, d = {direct[1]:.4f}\n"
            "so threads, warps, blocks or CTAs can each summarise a piece and merge in any order (up to rounding)."
            "\nThen y = exp(x - m) / d.", ha="center", va="top", fontsize=7.5, linespacing=1.4)
    ax.set_title("Lesson 6: the online softmax state (m, d), merged pairwise", fontsize=10)
    return save(fig, out, "idea-lesson6.png")


# ---- lesson 7: scale, masks, causal, the fully masked row ------------------

def lesson7(out):
    """softmax_attention.cu: masked -> -inf before the max; causal: only k <= q
    read, zeros written above; a row of -inf -> shift 0, sum 0, inv 0: zeros."""
    S = 8
    keep = [[(q * 3 + k * 5) % 7 != 0 for k in range(S)] for q in range(S)]  # an arbitrary pattern
    keep[5] = [False] * S  # one fully masked query: a padding row
    fig, axs = plt.subplots(1, 3, figsize=(7.5, 3.3))
    grey, hole = "#d9d9d9", "white"

    def grid(ax, cell, title, note):
        ax.set_xlim(-0.6, S + 0.1)
        ax.set_ylim(S + 0.3, -1.6)
        ax.set_aspect("equal")
        ax.axis("off")
        for q in range(S):
            for k in range(S):
                fc, txt = cell(q, k)
                box(ax, k, q, 1, 1, fc=fc, text=txt, fs=6, lw=0.4, ec="#888888")
        ax.text(S / 2, -0.35, "key k ->", ha="center", fontsize=7)
        ax.text(-0.2, S / 2, "query q", ha="right", va="center", rotation=90, fontsize=7)
        ax.text(S / 2, -1.1, title, ha="center", fontsize=8.5, fontweight="bold")
        ax.text(S / 2, S + 0.2, note, ha="center", va="top", fontsize=7, linespacing=1.35)

    grid(axs[0], lambda q, k: (st.REG, "") if keep[q][k] else (grey, "-inf"), "byte mask",
         "keep[q][k] = 0 -> -inf\n(additive: x*scale + bias)\n[S, S]: row r uses mask row r mod S")
    grid(axs[1], lambda q, k: (st.REG, "") if k <= q else (hole, "0"), "causal: k <= q",
         "only the triangle is read;\nzeros written above it\n(about 6 B per element, not 8)")
    grid(axs[2], lambda q, k: ("white", "0") if not keep[q][k] else (st.REG, "y"), "its output y",
         "removed keys get 0; query 5 has none left:\nmax = -inf, sum = 0 -> a row of zeros,\n"
         "not exp(-inf - (-inf)) = NaN")
    axs[2].add_patch(Rectangle((-0.05, 4.95), S + 0.1, 1.1, fill=False, edgecolor=st.WARN, linewidth=2))
    fig.suptitle("Lesson 7: y = softmax(x * scale) with masks - applied as each value arrives, no extra pass\n"
                 "green: kept, exp((x - max) * scale); grey: removed, -inf before the max", fontsize=9, y=0.99)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.86, bottom=0.02, wspace=0.15)
    return save(fig, out, "idea-lesson7.png")
