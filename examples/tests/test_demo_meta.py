"""The example tests themselves under test: each catches its bug, and random vectors hide them.

Both tests run the example suite in subprocesses (see ``measure_random_mock.py``): once with
``FakeEmbedder`` and once with the seed-0 random-vector mock, every bug-catching test on the
correct pipeline (or query engine) and then with each of its bugs switched on. The first
covers every example test, the query engine's included; the second only the tests that use
an embedder.
"""

import pytest
from measure_random_mock import RESULTS, describe, embedding_tests, run_all, table
from ragdemo import BUGS

pytestmark = [pytest.mark.integration, pytest.mark.p1, pytest.mark.meta]


@pytest.fixture(scope="module")
def tables():
    return table(run_all(("fake", "random-0")))


def committed_rows():
    """test -> (bugs, FakeEmbedder cell, seed 0 cell) from RANDOM_MOCK_RESULTS.md."""
    rows = {}
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `test_"):
            test, bugs, fake, seed0, *_ = line.strip("| ").split(" | ")
            rows[test.strip("`")] = (bugs, fake, seed0)
    return rows


def test_every_example_test_fails_when_its_bug_is_put_back(tables):
    fake = tables["fake"]

    not_holding = {test: v.kind for test, v in fake.items() if v.kind != "holds"}
    assert not_holding == {}
    assert sorted({bug for v in fake.values() for bug in v.bugs}) == sorted(BUGS)
    assert sorted(embedding_tests(tables)) == sorted(committed_rows())
    assert len(fake) > len(committed_rows())  # the query engine's tests use no embedder


def test_the_committed_random_vector_measurement_is_still_true(tables):
    measured = {
        test: (", ".join(tables["fake"][test].bugs), "holds", describe(tables["random-0"][test]))
        for test in embedding_tests(tables)
    }

    assert measured == committed_rows()
    failing = [test for test, row in measured.items() if row[2] == "fails"]
    assert len(failing) >= len(measured) // 2, "random vectors should break most tests"
