"""What every idea picture of docs/diagrams.py shares: the small drawing
helpers (data coordinates, axes switched off), the bar chart of DRAM bytes per
element, and the PNG writer."""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

import figstyle as st  # noqa: E402


def canvas(w, h, xlim, ylim):
    fig, ax = plt.subplots(figsize=(w, h))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, fc="white", text=None, ec=st.INK, lw=0.8, fs=8, tc=st.INK, **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, linewidth=lw, **kw))
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=tc)


def arrow(ax, a, b, color=st.INK, lw=1.0, style="-|>", ms=8, **kw):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=ms, color=color, linewidth=lw,
                                 shrinkA=0, shrinkB=0, **kw))


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=st.DPI, bbox_inches="tight", pad_inches=0.12)
    plt.close(fig)
    # a palette of 128 colours: a third of the bytes, no visible difference (Pillow comes with matplotlib)
    from PIL import Image
    Image.open(path).convert("RGB").quantize(128).save(path, optimize=True)
    return path


def thread_colors(n):
    cmap = plt.get_cmap("tab10")
    return [cmap(i % 10) for i in range(n)]


def bytes_axis(bx, labels, ymax):
    """The small bar chart of DRAM bytes per element, one bar per design (lessons 5, 9 and 10)."""
    bx.set_xticks(range(len(labels)))
    bx.set_xticklabels(labels, fontsize=8)
    bx.set_xlabel("lesson", fontsize=8)
    bx.set_ylabel("DRAM bytes per element", fontsize=8)
    bx.set_ylim(0, ymax)
    bx.tick_params(labelsize=7)
    bx.spines[["top", "right"]].set_visible(False)
    bx.legend(fontsize=6.5, loc="upper right", frameon=False)
