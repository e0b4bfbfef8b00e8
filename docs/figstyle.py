"""Colours and sizes shared by docs/plots*.py (measured) and docs/diagrams*.py
(drawn), so that a lesson, the copy, DRAM or a register has one colour in
every figure of the course."""

DPI = 120  # 7.5 in wide figures come out 900 px: readable at 800 px

# one colour per lesson, light to dark along the course
LESSON = {
    1: "#d62728", 2: "#ff7f0e", 3: "#bcbd22", 4: "#2ca02c",
    5: "#17becf", 6: "#1f77b4", 7: "#9467bd", 8: "#e377c2",
    9: "#393b79", 11: "#637939",
}
COPY = "black"        # the roofline: a device-to-device copy of the same bytes
CUDNN = "#555555"     # the library, for reference
PREV = "#9a9a9a"      # the previous lesson's main kernel
# other kernels of one lesson, after its main one (in the lesson's colour)
VARIANTS = ["#8c564b", "#1f77b4", "#bcbd22", "#17becf", "#ff7f0e", "#6a3d9a", "#2ca02c"]

# diagrams: where data lives and who touches it
DRAM = "#f4d6a0"      # global memory (HBM)
REG = "#a6d8a8"       # registers
SHARED = "#a9c8ec"    # shared memory
THREAD = "#1f77b4"    # a thread / lane
WARN = "#d62728"      # overflow, uncoalesced, a bug
OK = "#2ca02c"        # good: coalesced, in range
INK = "#222222"       # text and outlines
