"""A package that a test under pytester imported first imports again in a later test.

pytester unloads the modules a test imported first; numpy's extension modules cannot be loaded
twice in one process. Run in a fresh process with this suite's conftest, so what the first
test imports is not already loaded by earlier tests of this session.
"""

from pathlib import Path

import pytest

CONFTEST = Path(__file__).parent / "conftest.py"


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
