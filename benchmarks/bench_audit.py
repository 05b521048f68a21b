"""The cost of ``pytest --placeborag-audit``: a plain run against an audited one, per suite.

Both are ``python -m pytest <suite> -q -p no:cacheprovider`` in a fresh process, from the
repository root, one after the other in alternating rounds on the same machine, so both see the
same load. Each run is measured twice: its wall time, and the CPU time (user + system) of the
process and everything it waited for, which a shared machine's load disturbs much less. The
cost factor is the median of the per-round ratios. Two suites: the
whole of ``examples/`` (its meta-tests run the example suite again in subprocesses, which the
audit does not rerun) and ``-m "not meta"`` (the tests themselves).

``python benchmarks/bench_audit.py [rounds]`` (default 3) prints a Markdown table; it is the
source of the cost factor quoted in ``docs/decorative.md``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Three suites: the worked example whole (its meta-tests run the suite again in subprocesses,
# which the audit does not rerun), its tests alone, and examples/verdicts, where six tests of
# seven touch a double or a retrieval seam.
SUITES = {
    "examples/": ("examples",),
    'examples/ -m "not meta"': ("examples", "-m", "not meta"),
    "examples/verdicts/": ("examples/verdicts",),
}
AUDIT = ("--placeborag-audit",)


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(selection: tuple[str, ...], audit: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one pytest process and its own subprocesses (it must pass)."""
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    args += [*selection, *(AUDIT if audit else ())]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cpu = cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed, cpu_of_children() - cpu


def median(runs: list[tuple[float, float]], i: int) -> float:
    return statistics.median(r[i] for r in runs)


def factor(plain: list[tuple[float, float]], audited: list[tuple[float, float]], i: int) -> float:
    """The median of the per-round ratios (audited over plain) of measure ``i``."""
    return statistics.median(a[i] / p[i] for p, a in zip(plain, audited))


def main(rounds: int) -> None:
    print(
        f"\n## `--placeborag-audit` ({rounds} alternating rounds, load {os.getloadavg()[0]:.1f})\n"
    )
    print(
        "| suite | plain: wall / CPU (median s) | audited: wall / CPU (median s) "
        "| cost factor: wall / CPU (median) |"
    )
    print("|---|---|---|---|")
    for name, selection in SUITES.items():
        plain, audited = [], []
        for _ in range(rounds):
            plain.append(run(selection, audit=False))
            audited.append(run(selection, audit=True))

        print(
            f"| {name} | {median(plain, 0):.1f} / {median(plain, 1):.1f} "
            f"| {median(audited, 0):.1f} / {median(audited, 1):.1f} "
            f"| {factor(plain, audited, 0):.2f}x / {factor(plain, audited, 1):.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
