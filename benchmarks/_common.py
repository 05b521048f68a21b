"""Shared helpers for the benchmarks: best-of-n timing and a plain table printer.

Benchmarks report ratios against a baseline measured in the same run, because the machines
are shared and noisy; they never fail a build on an absolute time.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """The best wall time of ``repeat`` rounds, each of ``number`` calls, per call (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def print_table(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    header = ("measure", "value", "target", "verdict")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
    print(f"\n## {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"
