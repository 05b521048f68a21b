"""Measure what the example tests are worth when the embedder is a random-vector mock.

The example suite runs once per embedder (FakeEmbedder, then random vectors seeded 0, 1 and
2), in pytest subprocesses side by side; each run executes every test that names a bug on the
correct pipeline and once per bug with that bug switched on.

A test *holds* when it passes on the correct pipeline and fails with every bug it names. Under
random vectors a test can instead *fail* on the correct pipeline (it cannot be written at
all) or pass *vacuously* (it passes, but also passes with its bug: it asserts nothing).

    python examples/measure_random_mock.py          # rewrite examples/RANDOM_MOCK_RESULTS.md
    python examples/measure_random_mock.py --check  # exit 1 if the file is out of date
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RANDOM_MOCK_RESULTS.md"
SEEDS = (0, 1, 2)
EMBEDDERS = ("fake", *(f"random-{seed}" for seed in SEEDS))
PASSING = ("passed", "xfailed")


def _command() -> list[str]:
    # Third-party plugins are not loaded: the examples need only placeborag's and asyncio's
    # (the latter for the root pyproject's asyncio options under --strict-config).
    return [
        sys.executable, "-m", "pytest", str(HERE / "tests"), "-q", "-p", "no:cacheprovider",
        "--tb=no", "-p", "placeborag._pytest_plugin", "-p", "pytest_asyncio.plugin",
    ]  # fmt: skip


def run_all(embedders: Iterable[str] = EMBEDDERS) -> dict[str, list[dict]]:
    """The outcome records of one mutation run per embedder, keyed by embedder."""
    with tempfile.TemporaryDirectory() as tmp:
        started = {}
        for embedder in embedders:
            report = Path(tmp) / f"{embedder}.jsonl"
            kind, _, seed = embedder.partition("-")
            env = {
                **os.environ,
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "RAGDEMO_EMBEDDER": kind,
                "RAGDEMO_SEED": seed or "0",
                "RAGDEMO_MUTATE": "1",
                "RAGDEMO_REPORT": str(report),
            }
            process = subprocess.Popen(
                _command(), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            started[embedder] = (process, report)
        records = {}
        for embedder, (process, report) in started.items():
            output = process.communicate()[0].decode(errors="replace")
            if process.returncode not in (0, 1) or not report.exists():
                raise RuntimeError(f"the {embedder} run did not complete:\n{output}")
            records[embedder] = [json.loads(line) for line in report.read_text().splitlines()]
        return records


@dataclass(frozen=True)
class Verdict:
    """One example test in one embedder's runs."""

    test: str
    bugs: tuple[str, ...]
    passes: bool  # every case passes on the correct pipeline
    missed: tuple[str, ...]  # bugs with which every case still passes

    @property
    def kind(self) -> str:
        if not self.passes:
            return "fails"
        return "vacuous" if self.missed else "holds"


def verdicts(records: Iterable[dict]) -> dict[str, Verdict]:
    """Per test that names a bug: does it pass, and which of its bugs does it miss."""
    records = list(records)
    normal = [r for r in records if r["bug"] is None]
    mutated = [r for r in records if r["bug"] is not None]
    out = {}
    for test in sorted({r["test"] for r in normal if r["catches"]}):
        mine = [r for r in normal if r["test"] == test]
        bugs = tuple(mine[0]["catches"])
        caught = {r["bug"] for r in mutated if r["test"] == test and r["outcome"] == "failed"}
        out[test] = Verdict(
            test,
            bugs,
            passes=all(r["outcome"] in PASSING for r in mine),
            missed=tuple(b for b in bugs if b not in caught),
        )
    return out


def table(records: dict[str, list[dict]]) -> dict[str, dict[str, Verdict]]:
    """embedder -> test -> verdict."""
    return {embedder: verdicts(runs) for embedder, runs in records.items()}


def describe(verdict: Verdict | None) -> str:
    if verdict is None:
        return "not run"
    if verdict.kind == "vacuous":
        return f"vacuous (misses {', '.join(verdict.missed)})"
    return verdict.kind


def embedding_tests(tables: dict[str, dict[str, Verdict]]) -> list[str]:
    """The tests a random-vector run executes: those that use an embedder."""
    ran = set().union(*(tables[e] for e in tables if e != "fake"))
    return [test for test in tables["fake"] if test in ran]


def summary(tables: dict[str, dict[str, Verdict]]) -> dict[str, int]:
    """How many tests hold with FakeEmbedder, and what random vectors do to them."""
    randoms = [tables[e] for e in EMBEDDERS if e != "fake"]
    tests = embedding_tests(tables)

    def kinds(test: str) -> set[str]:
        return {t[test].kind if test in t else "fails" for t in randoms}

    return {
        "tests": len(tests),
        "fake_holds": sum(tables["fake"][t].kind == "holds" for t in tests),
        "random_fails_with_some_seed": sum("fails" in kinds(t) for t in tests),
        "random_vacuous_with_some_seed": sum("vacuous" in kinds(t) for t in tests),
        "random_holds_with_every_seed": sum(kinds(t) == {"holds"} for t in tests),
    }


def render(records: dict[str, list[dict]]) -> str:
    tables = table(records)
    counts = summary(tables)
    seeds = ", ".join(map(str, SEEDS))
    lines = [
        "# The example tests under a random-vector mock",
        "",
        "Written by `python examples/measure_random_mock.py`; do not edit by hand. "
        "`examples/tests/test_demo_meta.py` regenerates it and fails when it no longer matches.",
        "",
        "Each example test that names a bug and uses an embedder ran against the correct "
        "pipeline, and once per bug with that bug switched on: first with placeborag's "
        "`FakeEmbedder`, then with an "
        "embedder that returns standard-normal vectors of the same width, fresh on every call "
        f"(numpy generators seeded {seeds}), as generic LLM mocks do. A test *holds* when it "
        "passes on the correct pipeline and fails with each of its bugs; it *fails* when it "
        "fails on the correct pipeline; it is *vacuous* when it passes but also passes with a "
        "bug switched on. The query engine's tests use no embedder (their knowledge store is "
        "scripted), so random vectors cannot change them; they are not listed.",
        "",
        f"- FakeEmbedder: {counts['fake_holds']} of {counts['tests']} tests hold.",
        f"- Random vectors: {counts['random_fails_with_some_seed']} of {counts['tests']} tests "
        "fail on the correct pipeline with at least one seed, "
        f"{counts['random_vacuous_with_some_seed']} pass vacuously with at least one seed, and "
        f"{counts['random_holds_with_every_seed']} hold with every seed.",
        "",
        "| test | bugs it catches | FakeEmbedder | "
        + " | ".join(f"random, seed {s}" for s in SEEDS)
        + " |",
        "|---|---|---|" + "---|" * len(SEEDS),
    ]
    for test in embedding_tests(tables):
        verdict = tables["fake"][test]
        cells = [describe(tables[e].get(test)) for e in EMBEDDERS]
        lines.append(f"| `{test}` | {', '.join(verdict.bugs)} | {' | '.join(cells)} |")
    lines += [
        "",
        "The tests that hold with every seed never depend on which document an embedding "
        "ranks first: the cache key, the keyword leg, the grounding check. Every test whose "
        "claim is about "
        "*which* document comes back fails, or passes only for some seeds.",
        "",
        f"<!-- summary: {json.dumps(counts, sort_keys=True)} -->",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render(run_all())
    if "--check" in argv:
        if RESULTS.read_text(encoding="utf-8") != text:
            print(f"{RESULTS} is out of date; run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
