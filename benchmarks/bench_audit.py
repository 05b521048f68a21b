"""The cost of ``pytest --placeborag-audit`` on ``examples/``: a plain run against an audited one.

Both are ``python -m pytest examples -q -p no:cacheprovider`` in a fresh process, from the
repository root, one after the other in alternating rounds on the same machine, so both see the
same load; the cost factor is the median of the per-round ratios of wall times. Two suites: the
whole of ``examples/`` (its meta-tests run the example suite again in subprocesses, which the
audit does not rerun) and ``-m "not meta"`` (the tests themselves).

``python benchmarks/bench_audit.py [rounds]`` (default 3) prints a Markdown table; it is the
source of the cost factor quoted in ``docs/decorative.md``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = {"examples/": (), 'examples/ -m "not meta"': ("-m", "not meta")}
AUDIT = ("--placeborag-audit",)


def run(selection: tuple[str, ...], audit: bool) -> float:
    """Wall seconds of one pytest process (it must pass)."""
    args = [sys.executable, "-m", "pytest", "examples", "-q", "-p", "no:cacheprovider"]
    args += [*selection, *(AUDIT if audit else ())]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def main(rounds: int) -> None:
    print(f"\n## `--placeborag-audit` on examples/ ({rounds} alternating rounds)\n")
    print("| suite | plain run (median s) | audited run (median s) | cost factor (median) |")
    print("|---|---|---|---|")
    for name, selection in SUITES.items():
        plain, audited, ratios = [], [], []
        for _ in range(rounds):
            p = run(selection, audit=False)
            a = run(selection, audit=True)
            plain.append(p)
            audited.append(a)
            ratios.append(a / p)
        print(
            f"| {name} | {statistics.median(plain):.1f} | {statistics.median(audited):.1f} "
            f"| {statistics.median(ratios):.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
