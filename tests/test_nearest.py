"""The one "did you mean" rule (placeborag._validation.nearest), and that every message uses it."""

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag._validation import did_you_mean, nearest

PACKAGE = Path(__file__).parent.parent / "placeborag"


def test_nearest_gives_the_closest_candidates_best_first():
    assert nearest("refnd", ["refund", "fund", "delivery", "refunds"]) == (
        "refund",
        "refunds",
        "fund",
    )
    assert nearest("refnd", ["refund", "refunds"], n=1) == ("refund",)


def test_nearest_compares_each_candidate_once_as_its_str():
    assert nearest(12, [12, 13, "12", 120]) == ("12", "120")


def test_nearest_keeps_only_close_candidates_unless_the_cutoff_is_zero():
    assert nearest("refund", ["zzzz"]) == ()
    assert nearest("refund", ["zzzz"], cutoff=0.0) == ("zzzz",)


def test_nearest_scans_at_most_the_first_hundred_thousand_candidates():
    many = [f"id-{i:06d}" for i in range(100_000)] + ["refund"]
    assert nearest("refund", many) == ()
    assert nearest("refund", many[-5:]) == ("refund",)


def test_did_you_mean_is_the_tail_of_an_unknown_name_message():
    assert did_you_mean("refnd", ["refund", "delivery"]) == "; did you mean 'refund'?"
    assert did_you_mean("refnd", ["delivery"]) == ""


@given(
    value=st.text(max_size=8),
    candidates=st.lists(st.text(max_size=8), max_size=12),
)
def test_nearest_is_a_pure_function_of_the_distinct_candidates_in_order(value, candidates):
    close = nearest(value, candidates)
    assert close == nearest(value, candidates + candidates)  # repeats change nothing
    assert len(close) <= 3 and len(set(close)) == len(close)
    assert set(close) <= set(candidates)


def calls_difflib(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        (isinstance(node, ast.Import) and any(a.name == "difflib" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and node.module == "difflib")
        for node in ast.walk(tree)
    )


MODULES = [
    pytest.param(path, id=str(path.relative_to(PACKAGE)))
    for path in sorted(PACKAGE.rglob("*.py"))
    if path.name != "_validation.py"
]


@pytest.mark.parametrize("path", MODULES)
def test_only_the_validation_module_picks_nearest_names(path):
    assert not calls_difflib(path)


def test_nearest_stops_reading_candidates_at_the_cap():
    def endless():
        i = 0
        while True:
            yield f"id-{i}"
            i += 1

    # Equal ratios (id-97, id-87, id-70 ...) are ordered by the text, the largest first.
    assert nearest("id-7", endless()) == ("id-7", "id-97", "id-87")
