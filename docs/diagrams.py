"""Draws the course's idea pictures (docs/img/idea-*.png): what each lesson's
kernel does, from small examples computed here. Nothing is measured; every
number shown is computed below from the example, and every rule drawn is
the one in the lesson's code (the comment above each function says where).

    python docs/diagrams.py --out docs/img

The figures live in modules of related lessons: diagrams_lessons1_7.py (the
kernels of their own), diagrams_lessons8_11.py (the row engine's lessons and
the architecture); diagrams_common.py holds the helpers they share.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diagrams_lessons1_7 import lesson1, lesson2, lesson3, lesson4, lesson5, lesson6, lesson7  # noqa: E402
from diagrams_lessons8_11 import (architecture, lesson8, lesson8_cluster, lesson8_grid, lesson9,  # noqa: E402
                                  lesson10, lesson11)


FIGURES = [lesson1, lesson2, lesson3, lesson4, lesson5, lesson6, lesson7, lesson8, lesson8_cluster, lesson8_grid,
           lesson9, lesson10, lesson11, architecture]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print("wrote " + " ".join(f(a.out) for f in FIGURES))


if __name__ == "__main__":
    main()
