"""A package that a test under pytester imported first imports again in a later test.

pytester unloads the modules a test imported first; numpy's extension modules cannot be loaded
twice in one process. Run in a fresh process with this suite's conftest, so what the first
test imports is not already loaded by earlier tests of this session.
"""

import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).parent / "conftest.py"
ROOT = Path(__file__).parent.parent


@pytest.mark.slow
def test_scikit_learn_imported_first_under_pytester_imports_again_in_the_next_test(pytester):
    pytest.importorskip("sklearn")
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(
        test_twice="""
        import importlib

        import numpy  # loaded before any test, as test_docs_snippets and test_audit do

        def test_first(pytester):
            importlib.import_module("sklearn.decomposition")

        def test_second(pytester):
            importlib.import_module("sklearn.decomposition")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=2)


@pytest.mark.slow
@pytest.mark.parametrize(
    "first",
    [
        [],  # the explorer is first imported under pytester too
        ["tests/explore/test_export_and_report.py"],  # the explorer is loaded before any test
    ],
    ids=["alone", "after-an-explore-module"],
)
def test_the_docs_explorer_snippets_run_in_either_order_of_collection(first):
    # docs/explorer.md's snippets import the explorer's dependencies first under pytester,
    # which unloads them; docs/migrating.md's app then needs them again.
    pytest.importorskip("sklearn")
    pytest.importorskip("anywidget")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *first,
            "tests/test_docs_snippets.py",
            "-k",
            "explorer.md or migrating.md",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout, result.stdout
