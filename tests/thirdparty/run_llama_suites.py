"""Run llama-index-core's own vector-store tests twice: as published, then with the swap.

    python tests/thirdparty/run_llama_suites.py --source DIR [--json OUT]

llama-index-core's sdist ships no tests, so they come from a checkout (or snapshot) of
run-llama/llama_index at the installed version: ``DIR`` is its root, holding
``llama-index-core/tests``. Nothing of it is copied into this project. Each suite path runs
once as published and once with ``-p llama_swap`` (``llama_swap.py`` beside this script), which
rebinds ``SimpleVectorStore`` to ``PlaceboLlamaVectorStore`` in the test modules that name it:
the one-line swap. The installed llama-index-core is the one under test.

The summary (JSON) gives, per run, every test id with its outcome, and under ``bindings``
which test modules held the swapped store at the end of the swapped run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from run_suites import outcomes  # noqa: E402 - the sibling script's JUnit reader

# The published tests of SimpleVectorStore itself, which build it by name.
SUITE = ["tests/vector_stores/test_simple.py"]


def run_pytest(folder: Path, swapped: bool, report: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PLACEBO_SWAP_REPORT"] = str(report.with_suffix(".bindings.json"))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(REPO), *filter(None, [env.get("PYTHONPATH")])]
    )
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    command += ["-o", "addopts=", "--junitxml", str(report)]
    if swapped:
        command += ["-p", "llama_swap"]
    subprocess.run(command + SUITE, cwd=folder, env=env, check=False, capture_output=True)
    return outcomes(report)


def run(source: Path, work: Path) -> dict[str, dict[str, object]]:
    folder = source / "llama-index-core"
    if not (folder / SUITE[0]).is_file():
        raise SystemExit(f"{folder / SUITE[0]} is missing: --source must be a llama_index checkout")
    summary: dict[str, dict[str, object]] = {}
    for name in ("published", "swapped"):
        summary[name] = dict(run_pytest(folder, name == "swapped", work / f"{name}.xml"))
    bindings = work / "swapped.bindings.json"
    summary["bindings"] = json.loads(bindings.read_text("utf-8")) if bindings.exists() else {}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="a llama_index checkout")
    parser.add_argument("--json", type=Path, help="write the summary here instead of stdout")
    options = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="placeborag-llama-") as work:
        summary = run(options.source.resolve(), Path(work))
    text = json.dumps(summary, indent=1, sort_keys=True)
    if options.json is None:
        print(text)
    else:
        options.json.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
