"""Run LangChain's published unit tests twice: as published, then with placeborag swapped in.

    python tests/thirdparty/run_suites.py [--sdists DIR] [--json OUT]

The sdists of the installed ``langchain-core`` and ``langchain-classic`` are fetched from the
package index with ``pip download --no-deps --no-binary :all:`` into a temporary folder (or
taken from ``--sdists DIR`` if it already holds them), and only their ``tests/`` folder and
``pyproject.toml`` are unpacked, so the installed packages are the ones under test. Each
suite runs once as published and once with ``-p placebo_swap`` (``placebo_swap.py`` beside
this script), which rebinds LangChain's fake embedding and in-memory store to placeborag's.
Nothing of LangChain's is edited or kept.

The summary (JSON, on stdout or in ``--json OUT``) gives, per suite and run, every test id
with its outcome: ``passed``, ``failed``, ``error`` or ``skipped``; and, under ``bindings``,
which test modules held the swapped names (``swapped``) or still LangChain's own
(``original``) at the end of the swapped run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# The published test paths each suite runs: langchain-core's in-memory store, fake embeddings
# and the indexing API built on a vector store; langchain-classic's retrievers. (classic's
# tests/unit_tests/indexes tests its legacy copy of the indexing API against its toy dict
# store, which never embeds or searches; the same API is covered by langchain-core's tests.)
SUITES = {
    "langchain-core": [
        "tests/unit_tests/vectorstores",
        "tests/unit_tests/indexing",
        "tests/unit_tests/embeddings",
    ],
    "langchain-classic": ["tests/unit_tests/retrievers"],
}


def sdist_name(package: str) -> str:
    return f"{package.replace('-', '_')}-{importlib.metadata.version(package)}.tar.gz"


def fetch_sdists(folder: Path) -> dict[str, Path]:
    """The sdist of each installed suite package, downloaded into ``folder`` when missing."""
    wanted = {package: folder / sdist_name(package) for package in SUITES}
    missing = [package for package, path in wanted.items() if not path.exists()]
    if missing:
        pins = [f"{package}=={importlib.metadata.version(package)}" for package in missing]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            + ["--no-binary", ":all:", "--dest", str(folder), *pins],
            check=True,
        )
    for package, path in wanted.items():
        if not path.exists():
            raise SystemExit(f"pip download did not produce {path.name} for {package}")
    return wanted


def unpack_tests(sdist: Path, target: Path) -> Path:
    """Only ``tests/`` and ``pyproject.toml`` of the sdist (not its copy of the package)."""
    with tarfile.open(sdist) as archive:
        root = archive.getnames()[0].split("/")[0]
        members = []
        for member in archive.getmembers():
            relative = member.name[len(root) + 1 :]
            if relative == "pyproject.toml" or relative.startswith("tests/"):
                if not (member.isfile() or member.isdir()):
                    continue  # no links or devices from an archive
                member.name = relative
                members.append(member)
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+
            archive.extractall(target, members=members, filter="data")
        else:  # pragma: no cover - older interpreters; members are plain files and folders
            archive.extractall(target, members=members)
    return target


def run_pytest(folder: Path, paths: list[str], swapped: bool, report: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PLACEBO_SWAP_REPORT"] = str(report.with_suffix(".bindings.json"))
    # This checkout's placeborag and the swap plugin come first; LangChain's own packages are
    # the installed ones (the sdist's copy of the package is not unpacked).
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(REPO), *filter(None, [env.get("PYTHONPATH")])]
    )
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    command += ["--junitxml", str(report)]
    if swapped:
        command += ["-p", "placebo_swap"]
    subprocess.run(
        command + paths, cwd=folder, env=env, check=False, capture_output=True, text=True
    )
    return outcomes(report)


def outcomes(report: Path) -> dict[str, str]:
    """``file::Class::test`` -> outcome, from pytest's JUnit XML."""
    results: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        name = case.get("name", "")
        # classname is "tests.unit_tests.x.test_mod" or "...test_mod.TestClass".
        parts = path.split("/")
        if parts[-1][:1].isupper():
            test_id = "/".join(parts[:-1]) + ".py::" + parts[-1] + "::" + name
        else:
            test_id = path + ".py::" + name
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                break
            if child.tag == "skipped":
                outcome = "skipped"
        results[test_id] = outcome
    return results


def run(sdists: Path) -> dict[str, dict[str, dict[str, str]]]:
    summary: dict[str, dict[str, dict[str, str]]] = {}
    with tempfile.TemporaryDirectory(prefix="placeborag-thirdparty-") as work:
        for package, sdist in fetch_sdists(sdists).items():
            folder = unpack_tests(sdist, Path(work) / package)
            summary[package] = {
                run_name: run_pytest(
                    folder, SUITES[package], run_name == "swapped", folder / f"{run_name}.xml"
                )
                for run_name in ("published", "swapped")
            }
            bindings = folder / "swapped.bindings.json"
            summary[package]["bindings"] = (
                json.loads(bindings.read_text(encoding="utf-8")) if bindings.exists() else {}
            )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdists", type=Path, help="a folder holding (or to hold) the sdists")
    parser.add_argument("--json", type=Path, help="write the summary here instead of stdout")
    options = parser.parse_args()
    if options.sdists is not None:
        options.sdists.mkdir(parents=True, exist_ok=True)
        summary = run(options.sdists)
    else:
        with tempfile.TemporaryDirectory(prefix="placeborag-sdists-") as folder:
            summary = run(Path(folder))
    text = json.dumps(summary, indent=1, sort_keys=True)
    if options.json is None:
        print(text)
    else:
        options.json.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
