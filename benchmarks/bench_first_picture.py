"""The first picture: a fresh process's ``import`` + ``app()`` against the import of the
user's own packages, and the 100,000-document build including imports.

Each measure runs in its own fresh Python process (nothing imported, nothing cached), timed
inside it from its first statement; the three kinds run interleaved, round after round, so a
busy spell on a shared machine hits them alike, and the median of the rounds is reported.
The floor is what a user's notebook imports anyway (numpy, pandas, sklearn.decomposition,
plotly.graph_objects, ipywidgets, anywidget): the demo's first picture must cost at most
1.3 times that. ``--root DIR`` measures another checkout (an older commit, for a before/after).
Beside each wall time the process's CPU time (all its threads) is printed: on a shared machine
the wall time of a busy minute can be several times a quiet one's, the CPU time much less so;
the targets are wall-clock ones on a quiet machine, and the verdicts are given on wall time.

Compiled bytecode is cached for every module, ours and the floor's alike, as an installed
package has it (pip compiles on install; an editable checkout writes ``__pycache__`` on its
first import): the processes run with ``PYTHONPYCACHEPREFIX`` set to a directory of this run,
filled by the untimed first round, and without ``PYTHONDONTWRITEBYTECODE`` (which a CI or
sandbox environment may set: then every fresh process compiled our 60 modules from source,
about 0.27 s of the explorer's import, while the floor's site-packages had their ``.pyc``).
``--no-bytecode-cache`` measures that way instead.

Run: ``python benchmarks/bench_first_picture.py [--rounds 5] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import print_table, verdict

HERE = Path(__file__).resolve().parent
RATIO_TARGET = 1.3
LARGE_TARGET_S = 4.0
LARGE = 100_000

_TIMED = (
    "import time; _t0, _c0 = time.perf_counter(), time.process_time()\n{body}\n"
    "print(time.perf_counter() - _t0, time.process_time() - _c0)"
)
FLOOR = "import numpy, pandas, sklearn.decomposition, plotly.graph_objects, ipywidgets, anywidget"
DEMO = "from placeborag.explore import app\nexplorer = app()"
BUILD_LARGE = (
    f"from placeborag.explore import app, demo_scenario\nexplorer = app(demo_scenario({LARGE}))"
)


_ENV: dict[str, str] = {}  # what main() sets for every fresh process (the bytecode cache)


def fresh(body: str, root: Path) -> tuple[float, float]:
    """Seconds ``body`` takes in a fresh interpreter with ``root``'s placeborag first: wall
    clock, and the CPU time of the process (every thread; less hurt by a busy machine)."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0", **_ENV}
    if "PYTHONPYCACHEPREFIX" in _ENV:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, "-c", _TIMED.format(body=body)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=True,
    )
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--no-large", action="store_true", help="skip the 100,000 build")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="leave the environment's bytecode setting as it is (PYTHONDONTWRITEBYTECODE)",
    )
    args = parser.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="first-picture-pycache-") as cache:
        if not args.no_bytecode_cache:
            _ENV["PYTHONPYCACHEPREFIX"] = cache
        run(args, root)


def run(args: argparse.Namespace, root: Path) -> None:
    # One untimed round first: the OS file cache, as a user's second notebook has it.
    fresh(FLOOR, root)
    fresh(DEMO, root)
    floor: list[tuple[float, float]] = []
    demo: list[tuple[float, float]] = []
    large: list[tuple[float, float]] = []
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        floor.append(fresh(FLOOR, root))
        demo.append(fresh(DEMO, root))
        if not args.no_large:
            large.append(fresh(BUILD_LARGE, root))
    f, d = (statistics.median(v[0] for v in runs) for runs in (floor, demo))
    fc, dc = (statistics.median(v[1] for v in runs) for runs in (floor, demo))
    cached = "bytecode cached" if _ENV else "bytecode as the environment has it"
    print(
        f"checkout: {root}; {cached}; {args.rounds} rounds; load average (1 min) at each round: "
        + ", ".join(f"{v:.1f}" for v in loads)
    )
    for name, runs in (("floor (user's imports)", floor), ("import + app() of the demo", demo)):
        print(f"{name}, s wall (cpu): " + ", ".join(f"{w:.2f} ({c:.2f})" for w, c in runs))
    rows = [
        ("user's own imports (median)", f"{f:.2f} s (cpu {fc:.2f} s)", "", ""),
        ("import + app() of the demo (median)", f"{d:.2f} s (cpu {dc:.2f} s)", "", ""),
        ("ratio", f"{d / f:.2f}x", f"<= {RATIO_TARGET}x", verdict(d / f <= RATIO_TARGET)),
    ]
    if large:
        m = statistics.median(v[0] for v in large)
        mc = statistics.median(v[1] for v in large)
        print(
            f"import + app() at {LARGE:,}, s wall (cpu): "
            + ", ".join(f"{w:.2f} ({c:.2f})" for w, c in large)
        )
        rows.append(
            (
                f"import + app() at {LARGE:,} documents (median)",
                f"{m:.2f} s (cpu {mc:.2f} s)",
                f"<= {LARGE_TARGET_S:.0f} s (quiet machine)",
                verdict(m <= LARGE_TARGET_S),
            )
        )
    print_table("First picture, fresh processes", rows)


if __name__ == "__main__":
    main()
