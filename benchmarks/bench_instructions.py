"""Instructions per query, this checkout against another one, counted by valgrind's callgrind.

On a shared machine a timing moves with the load; an instruction count does not (the same
binary, inputs and environment give the same count, whatever else the machine runs). This
counts the instructions of the unit-test-scale queries of ``bench_core.py`` (a store of 100
records built by single upserts, ``query(k=5)`` with and without a filter, every query a text
not seen before; and the single upserts themselves, in new 100-record stores read once each,
as ``bench_core.py``'s build row does) in this checkout and in another one given by path, in the same run, and
prints the per-query (per-upsert) counts and their ratio:

    python benchmarks/bench_instructions.py --against /path/to/other/checkout

Without ``--against`` (as ``make bench`` runs it) it says so and compares nothing.

Each count is the difference between a run of ``--queries`` queries and a run of none, so the
imports and the store's build cancel out. Needs ``valgrind``; about a minute per run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import print_table, verdict

HERE = Path(__file__).resolve().parent

# The workload, run in a fresh interpreter with the checkout under test first on sys.path.
WORKLOAD = """
import itertools, sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_core import corpus
from placeborag import FakeVectorStore
texts = [f"{t[:44]} {i:05d}" for i, t in enumerate(corpus(3000, seed=21))]
store = FakeVectorStore()
for i in range(100):
    meta = {"lang": ("en", "hu", "de")[i % 3], "year": 2015 + i % 12}
    store.upsert(f"doc-{i:03d}", texts[i], meta)
where = {"lang": "hu", "year": {"$gte": 2018}} if sys.argv[3] == "filtered" else None
store.query(texts[0], k=5, where=where)
if sys.argv[3] == "upserts":  # stores of 100 single upserts and a read, new texts each
    fresh = iter(texts[100:])
    for _ in range(int(sys.argv[2]) // 100):
        built = FakeVectorStore()
        for i in range(100):
            meta = {"lang": ("en", "hu", "de")[i % 3], "year": 2015 + i % 12}
            built.upsert(f"doc-{i:03d}", next(fresh), meta)
        built.records()  # the batch a FakeEmbedder's upserts are embedded in
else:
    queries = itertools.cycle(texts[1:])
    for _ in range(int(sys.argv[2])):
        store.query(next(queries), k=5, where=where)
"""


def count(checkout: Path, queries: int, kind: str) -> int:
    """The instructions callgrind counts for the workload with ``queries`` queries."""
    env = dict(
        os.environ,
        PYTHONPATH=str(checkout),
        PYTHONHASHSEED="0",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
    )
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(WORKLOAD, encoding="utf-8")
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/callgrind.out",
                sys.executable,
                str(script),
                str(checkout),
                str(queries),
                kind,
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected\s*:\s*([\d,]+)|I\s+refs:\s+([\d,]+)", out.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{out.stderr[-2000:]}")
    return int((found.group(1) or found.group(2)).replace(",", ""))


def per_query(checkout: Path, queries: int, kind: str) -> float:
    return (count(checkout, queries, kind) - count(checkout, 0, kind)) / queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="the other checkout")
    parser.add_argument(
        "--queries", type=int, default=200, help="queries (and upserts) per count; >= 100"
    )
    args = parser.parse_args()
    if args.against is None:  # run_all.py runs every bench_*.py without arguments
        print("bench_instructions: no other checkout given (--against DIR): nothing to compare")
        return
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is not installed (apt-get install valgrind)")
    ours_path, theirs_path = HERE.parent, args.against.resolve()
    if not (theirs_path / "placeborag" / "__init__.py").is_file():
        sys.exit(f"bench_instructions: --against {theirs_path} holds no placeborag checkout")
    rows = []
    names = {
        "filtered": "filtered query(k=5) over 100 records",
        "unfiltered": "unfiltered query(k=5) over 100 records",
        "upserts": "upsert() into a 100-record store, with its read",
    }
    for kind, name in names.items():
        ours = per_query(ours_path, args.queries, kind)
        theirs = per_query(theirs_path, args.queries, kind)
        ratio = ours / theirs
        rows.append(
            (
                name,
                f"{ours / 1e3:.0f}k vs {theirs / 1e3:.0f}k instructions ({ratio:.3f}x)",
                "<= 1.01x",
                verdict(ratio <= 1.01),
            )
        )
    print_table(f"Instructions per query: this checkout vs {theirs_path}", rows)


if __name__ == "__main__":
    main()
