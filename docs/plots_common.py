"""What docs/plots.py's plots share: which rows the CSVs hold (the sweep's
shape, each lesson's main kernel), reading and checking a CSV, the names and
captions drawn from its rows, and the PNG writer."""
import csv
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import figstyle as st  # noqa: E402

SWEEP_ELEMS = 1 << 26
# each lesson's main kernel: the same list as tests/tables.awk's MAIN
MAIN = {1: "naive", 2: "stable", 3: "three-pass", 4: "warp", 5: "fused", 6: "online", 7: "attention-plain",
        8: "fastest"}
HALF_L = 9  # lesson 9 (16-bit storage) has a plot of its own: plot_half
TRAIN_L = 10  # lesson 10 (training kernels, each against its own bound): plot_train


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
