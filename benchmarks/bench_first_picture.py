"""The first picture: a fresh process's ``import`` + ``app()`` against the import of the
user's own packages, and the 100,000-document build including imports.

Each measure runs in its own fresh Python process (nothing imported, nothing cached), timed
inside it from its first statement; the three kinds run interleaved, round after round, so a
busy spell on a shared machine hits them alike, and the median of the rounds is reported.
The floor is what a user's notebook imports anyway (numpy, pandas, sklearn.decomposition,
plotly.graph_objects, ipywidgets, anywidget): the demo's first picture must cost at most
1.3 times that. ``--root DIR`` measures another checkout (an older commit, for a before/after).

Run: ``python benchmarks/bench_first_picture.py [--rounds 5] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import print_table, verdict

HERE = Path(__file__).resolve().parent
RATIO_TARGET = 1.3
LARGE_TARGET_S = 4.0
LARGE = 100_000

_TIMED = "import time; _t0 = time.perf_counter()\n{body}\nprint(time.perf_counter() - _t0)"
FLOOR = "import numpy, pandas, sklearn.decomposition, plotly.graph_objects, ipywidgets, anywidget"
DEMO = "from placeborag.explore import app\nexplorer = app()"
BUILD_LARGE = (
    f"from placeborag.explore import app, demo_scenario\nexplorer = app(demo_scenario({LARGE}))"
)


def fresh(body: str, root: Path) -> float:
    """Seconds ``body`` takes in a fresh interpreter with ``root``'s placeborag first."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", _TIMED.format(body=body)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--no-large", action="store_true", help="skip the 100,000 build")
    args = parser.parse_args()
    root = args.root.resolve()
    # One untimed round first: the OS file cache, as a user's second notebook has it.
    fresh(FLOOR, root)
    fresh(DEMO, root)
    floor, demo, large = [], [], []
    for _ in range(args.rounds):
        floor.append(fresh(FLOOR, root))
        demo.append(fresh(DEMO, root))
        if not args.no_large:
            large.append(fresh(BUILD_LARGE, root))
    f, d = statistics.median(floor), statistics.median(demo)
    print(f"checkout: {root}; {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    print(f"floor (user's imports), s: {', '.join(f'{v:.2f}' for v in floor)}")
    print(f"import + app() of the demo, s: {', '.join(f'{v:.2f}' for v in demo)}")
    rows = [
        ("user's own imports (median)", f"{f:.2f} s", "", ""),
        ("import + app() of the demo (median)", f"{d:.2f} s", "", ""),
        ("ratio", f"{d / f:.2f}x", f"<= {RATIO_TARGET}x", verdict(d / f <= RATIO_TARGET)),
    ]
    if large:
        m = statistics.median(large)
        print(f"import + app() at {LARGE:,}, s: {', '.join(f'{v:.2f}' for v in large)}")
        rows.append(
            (
                f"import + app() at {LARGE:,} documents (median)",
                f"{m:.2f} s",
                f"<= {LARGE_TARGET_S:.0f} s (quiet machine)",
                verdict(m <= LARGE_TARGET_S),
            )
        )
    print_table("First picture, fresh processes", rows)


if __name__ == "__main__":
    main()
