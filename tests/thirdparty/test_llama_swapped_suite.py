"""llama-index-core's own SimpleVectorStore tests pass with the one-line swap to placeborag.

``run_llama_suites.py`` runs ``tests/vector_stores/test_simple.py`` of a llama_index checkout
twice: as published, and with ``SimpleVectorStore`` rebound to ``PlaceboLlamaVectorStore`` in the
test module. llama-index-core's sdist ships no tests and CI cannot reach GitHub, so this runs
only where ``PLACEBORAG_LLAMA_INDEX_SOURCE`` names a checkout at the installed version (it is
skipped otherwise). It asserts the published run is green and that the swapped run fails
exactly the tests listed, with a reason, in ``LLAMA_INDEX.md`` here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SOURCE = os.environ.get("PLACEBORAG_LLAMA_INDEX_SOURCE", "")
_LISTED = re.compile(r"^\| `llama-index-core (?P<test>tests/[^`]+)` \| (?P<reason>.+) \|$")


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not SOURCE or not Path(SOURCE, "llama-index-core", "tests").is_dir():
        pytest.skip("PLACEBORAG_LLAMA_INDEX_SOURCE names no llama_index checkout")
    output = tmp_path_factory.mktemp("llama") / "summary.json"
    result = subprocess.run(
        [sys.executable, str(HERE / "run_llama_suites.py"), "--source", SOURCE]
        + ["--json", str(output)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(output.read_text(encoding="utf-8"))


def listed_failures() -> set[str]:
    lines = (HERE / "LLAMA_INDEX.md").read_text(encoding="utf-8").splitlines()
    return {m["test"] for m in map(_LISTED.match, lines) if m}


def test_the_published_tests_pass_as_published(summary: dict) -> None:
    published = summary["published"]
    assert len(published) >= 20
    assert [t for t, outcome in published.items() if outcome != "passed"] == []


def test_the_swap_reached_the_test_module(summary: dict) -> None:
    assert summary["bindings"]["original"] == []
    assert summary["bindings"]["swapped"]


def test_the_swapped_run_fails_exactly_the_listed_tests(summary: dict) -> None:
    assert set(summary["swapped"]) == set(summary["published"])
    failed = {t for t, outcome in summary["swapped"].items() if outcome != "passed"}
    assert failed == listed_failures()
